"""The ``veribot`` command line: parse arguments, run the review, print the report.

Commands: ``review`` (a git range), ``compare`` (two files), ``bench`` (the benchmark
harness), ``bench-mutants`` (the mutation soundness check), ``bench-model`` (the model
against CPython on generated programs), ``bench-real`` (real commits of git bundles,
reviewed against their parents). Exit codes: 0 the review passed, 1 a result hit
``--fail-on``, 2 a usage or input error (bad revision, not a git repository, unreadable
file, ...). Errors are one plain sentence on stderr; ``--verbose`` adds the debug log with
tracebacks.

This module is the only place that reads the environment (``CI``, ``NO_COLOR``,
``COLUMNS``), once, into :class:`Settings`.

``verify-claims`` checks hints and facts from any source (``veribot.bot.verifyclaims``,
which documents its own exit codes).
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import shutil
import sys
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import NoReturn, TextIO

import veribot
from veribot.bot import verifyclaims
from veribot.bot.agentreview import agent_config
from veribot.bot.config import AgentCeilings, ConfigError
from veribot.bot.gitrepo import GitRepoError
from veribot.bot.llm import DEFAULT_MODEL
from veribot.bot.render import FORMATS, render
from veribot.bot.review import (
    FailOn,
    FilesSource,
    GitSource,
    ProgressCallback,
    ReviewError,
    ReviewRequest,
    review,
)
from veribot.bot.verifyclaims import ClaimsError
from veribot.checks.agent.llm import LLMError
from veribot.checks.equivalence import Budget

logger = logging.getLogger(__name__)

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2

EPILOG = """exit codes:
  0  the review ran and nothing hit --fail-on
  1  a result hit --fail-on (default: a behaviour change no test of the change shows,
     or any in a change declared a refactoring)
  2  usage or input error: bad arguments, unknown revision, not a git repository,
     unreadable file"""


class UsageError(Exception):
    """The arguments are wrong; the message says how."""


@dataclass(frozen=True)
class Settings:
    """What the command line takes from its environment, read once."""

    ci: bool = False
    no_color: bool = False
    stdout_is_terminal: bool = False
    stderr_is_terminal: bool = False
    width: int = 100
    anthropic_api_key: str | None = field(default=None, repr=False)
    # The operator's limits on a live agent (``VERIBOT_AGENT_*``, as for the App's workers),
    # read when a review asks the agent (a bad value is then a usage error).
    agent_env: tuple[tuple[str, str], ...] = ()

    @property
    def show_progress(self) -> bool:
        """A progress bar only for a person watching a terminal, never in CI."""
        return self.stderr_is_terminal and not self.ci


def build_settings(environ: Mapping[str, str], stdout: TextIO, stderr: TextIO) -> Settings:
    """Read the environment and the terminals into :class:`Settings`."""

    def isatty(stream: TextIO) -> bool:
        try:
            return stream.isatty()
        except (AttributeError, ValueError):
            return False

    ci = environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")
    try:
        width = int(environ.get("COLUMNS", "") or 0) or shutil.get_terminal_size((100, 24)).columns
    except ValueError:
        width = 100
    return Settings(
        ci=ci,
        no_color="NO_COLOR" in environ and environ["NO_COLOR"] != "",
        stdout_is_terminal=isatty(stdout),
        stderr_is_terminal=isatty(stderr),
        width=max(60, width),
        anthropic_api_key=environ.get("ANTHROPIC_API_KEY") or None,
        agent_env=tuple((k, v) for k, v in environ.items() if k.startswith("VERIBOT_AGENT_")),
    )


class _Parser(argparse.ArgumentParser):
    """An argument parser that raises instead of exiting, so main() owns the exit code."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{message}\n{self.format_usage().rstrip()}")


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be positive: {text!r}")
    return value


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1: {text!r}")
    return value


def _add_output_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--format", choices=FORMATS, default="text", help="output format")
    p.add_argument("--output", "-o", type=Path, help="write the report to FILE, not stdout")
    p.add_argument(
        "--fail-on",
        choices=[f.value for f in FailOn],
        default=FailOn.UNTESTED.value,
        help="exit 1 on a behaviour change no test of the change shows, or any in a change "
        "declared a refactoring (untested, the default); on any refuted function; also "
        "when a changed function is inconclusive; or never",
    )
    p.add_argument(
        "--timeout",
        type=_positive_float,
        default=Budget().timeout_s,
        metavar="S",
        help=f"time budget per function in seconds (default {Budget().timeout_s:g})",
    )
    p.add_argument(
        "--jobs", "-j", type=_positive_int, default=1, metavar="N", help="functions in parallel"
    )
    p.add_argument(
        "--no-execute",
        action="store_true",
        help="never run the code under review, not even sandboxed: proof-only, so nothing "
        "is refuted and a difference the solver sees stays inconclusive (not-executed)",
    )
    p.add_argument(
        "--llm",
        default=None,
        metavar="SPEC",
        help="ask the agent about each function: live, off, cache:PATH, record:PATH or "
        "replay:PATH (default: live with ANTHROPIC_API_KEY set, else off)",
    )
    p.add_argument(
        "--model", default=DEFAULT_MODEL, metavar="NAME", help=f"model (default {DEFAULT_MODEL})"
    )
    p.add_argument(
        "--hints",
        type=Path,
        default=None,
        metavar="ARCHIVE",
        help="where the engine stops, try checked hints: the proven ones kept in the SQLite "
        "file ARCHIVE, then the agent's (with --llm); proven hints are kept there",
    )
    p.add_argument("--verbose", "-v", action="store_true", help="debug log on stderr")


def build_parser(
    *, with_bench: bool = False, with_bench_model: bool = False
) -> argparse.ArgumentParser:
    """The argument parser; the bench options are loaded only when asked for."""
    parser = _Parser(
        prog="veribot",
        description="Prove or refute that changed Python functions behave as before.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"veribot {veribot.__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True

    rv = sub.add_parser(
        "review",
        help="check every function changed between two revisions of a git repository",
        description="Check every Python function changed between two git revisions.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    rv.add_argument("--repo", type=Path, default=Path("."), help="repository (default: .)")
    rv.add_argument(
        "--base",
        default=None,
        metavar="REV",
        help="base revision (default: merge base of HEAD with the default branch)",
    )
    rv.add_argument("--head", default="HEAD", metavar="REV", help="head revision (default HEAD)")
    rv.add_argument(
        "--skip-tests",
        action="store_true",
        help="list changed test files as skipped instead of reviewing them",
    )
    rv.add_argument(
        "--review-stubs",
        action="store_true",
        help="review changed .pyi stubs too (default: listed as skipped)",
    )
    _add_output_options(rv)

    cp = sub.add_parser(
        "compare",
        help="check the functions of two versions of one Python file",
        description="Check the functions of two versions of a Python file "
        "(without --entry: every function present in both).",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    cp.add_argument("before", type=Path, metavar="BEFORE.py")
    cp.add_argument("after", type=Path, metavar="AFTER.py")
    cp.add_argument(
        "--entry",
        action="append",
        default=[],
        metavar="NAME",
        help="function to check, e.g. total or Cart.total (repeatable)",
    )
    _add_output_options(cp)

    bp = sub.add_parser(
        "bench",
        help="run the equivalence benchmark on labelled pairs (see veribot bench --help)",
        description="Run the equivalence benchmark harness.",
    )
    if with_bench:
        from veribot.bench import equivalence as bench

        bench.add_arguments(bp)
    mp = sub.add_parser(
        "bench-mutants",
        help="the mutation soundness check on the equivalent pairs of benchmark files",
        description="Mutate the after versions of equivalent pairs; every verified mutant "
        "gets a long differential run (see veribot/bench/mutants.py).",
    )
    if with_bench:
        from veribot.bench import mutants as bench_mutants

        bench_mutants.add_arguments(mp)
    mp = sub.add_parser(
        "bench-model",
        help="compare the Z3 model with CPython on generated programs",
        description="Generate random programs in the modelled subset of Python and compare "
        "the Z3 model with CPython on each (exit 1 on any disagreement).",
    )
    if with_bench_model:
        from veribot.bench import model as bench_model

        bench_model.add_arguments(mp)
    rp = sub.add_parser(
        "bench-real",
        help="review real commits of git bundles against their parents (figures by intent)",
        description="Review each commit of COMMITS.jsonl against its first parent, with the "
        "bundles in --repos (see veribot/bench/real.py).",
    )
    if with_bench:
        from veribot.bench import real as bench_real

        bench_real.add_arguments(rp)
    sp = sub.add_parser(
        "bench-soak",
        help="a long differential run over the units a bench-real run verified",
        description="Rebuild each verified unit of RECORDS.jsonl from its commit and run "
        "both versions on the repository's calls and many random inputs; exit 1 if any "
        "difference is reproduced (a wrong verdict; see veribot/bench/soak.py).",
    )
    if with_bench:
        from veribot.bench import soak as bench_soak

        bench_soak.add_arguments(sp)
    bs = sub.add_parser(
        "bench-safety",
        help="decide crash-safety questions of a JSONL file (safe, unsafe, inconclusive)",
        description="Decide each record of FILE.jsonl: can an input make the function (or "
        "the line) raise an exception its code does not raise on purpose? (see "
        "veribot/bench/safety.py)",
    )
    if with_bench:
        from veribot.bench import safety as bench_safety

        bench_safety.add_arguments(bs)
    sf = sub.add_parser(
        "safety",
        help="can an input make a function of a Python file crash? (safe, unsafe, inconclusive)",
        description="Ask whether any input of its declared domain makes a function raise an "
        "exception its code does not raise on purpose (a `raise` statement, or one its "
        "docstring documents): 'safe' is a proof, 'unsafe' an input run in the sandbox.",
    )
    sf.add_argument("file", type=Path, metavar="FILE.py")
    sf.add_argument("--entry", required=True, metavar="NAME",
                    help="the function, e.g. parse or Config.get")
    sf.add_argument("--line", type=int, default=None, metavar="N",
                    help="only what line N raises")
    sf.add_argument("--exception", default=None, metavar="CLASS",
                    help="only this builtin exception class (and its subclasses)")
    sf.add_argument("--timeout", type=float, default=10.0, metavar="S",
                    help="budget in seconds (default 10)")
    sf.add_argument("--format", choices=("text", "json"), default="text")
    vc = sub.add_parser(
        "verify-claims",
        help="check hints and facts (CLAIMS.json, from any model or person) against the code",
        description="Check the hints and facts of CLAIMS.json against two versions of the "
        "code, and print which were proven and the resulting verdict. Exit 0: all proven; "
        "1: some not; 2: usage or input error (see veribot/bot/verifyclaims.py).",
    )
    verifyclaims.add_arguments(vc)
    _add_app_commands(sub)
    return parser


def _logging(verbose: bool, stderr: TextIO) -> logging.Handler:
    handler = logging.StreamHandler(stderr)
    handler.setFormatter(_Formatter(verbose))
    root = logging.getLogger()
    root.addHandler(handler)
    root.setLevel(logging.DEBUG if verbose else logging.WARNING)
    return handler


class _Formatter(logging.Formatter):
    """``veribot: warning: ...``; tracebacks only with --verbose."""

    def __init__(self, verbose: bool) -> None:
        super().__init__("veribot: %(levelname)s: %(message)s")
        self.verbose = verbose

    def format(self, record: logging.LogRecord) -> str:
        record.levelname = record.levelname.lower()
        if self.verbose:
            return super().format(record)
        plain = logging.makeLogRecord(record.__dict__)
        plain.exc_info, plain.exc_text, plain.stack_info = None, None, None
        text = super().format(plain)
        if record.exc_info:
            text += " (--verbose shows the traceback)"
        return text


@contextmanager
def _progress(settings: Settings, stderr: TextIO) -> Iterator[ProgressCallback | None]:
    if not settings.show_progress:
        yield None
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    console = Console(file=stderr, no_color=settings.no_color)
    with Progress(
        TextColumn("checking"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("units"),
        console=console,
        transient=True,
    ) as bar:
        task = bar.add_task("review", total=None)

        def update(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        yield update


def _request(args: argparse.Namespace, settings: Settings) -> ReviewRequest:
    budget = Budget(timeout_s=args.timeout, execute=not args.no_execute)
    if budget.execute:
        from veribot.checks.sandbox import SandboxError, isolation

        try:
            isolation()
        except SandboxError as exc:
            raise ConfigError(
                f"{exc}; install bubblewrap (apt-get install bubblewrap), or pass "
                "--no-execute for a proof-only review"
            ) from exc
    if args.command == "review":
        source: GitSource | FilesSource = GitSource(args.repo, args.base, args.head)
    else:
        source = FilesSource(args.before, args.after, tuple(args.entry))
    try:
        agent = agent_config(args.llm, args.model, settings.anthropic_api_key,
                             ceilings=AgentCeilings.from_env(dict(settings.agent_env)))
    except (ValueError, LLMError) as exc:
        raise UsageError(str(exc)) from None
    return ReviewRequest(
        source=source,
        budget=budget,
        jobs=args.jobs,
        agent=agent,
        review_tests=not getattr(args, "skip_tests", False),
        review_stubs=bool(getattr(args, "review_stubs", False)),
        hints=args.hints is not None,
        hints_archive=args.hints,
    )


def _run(args: argparse.Namespace, settings: Settings, stdout: TextIO, stderr: TextIO) -> int:
    if args.command == "bench":
        from veribot.bench import equivalence as bench

        return int(bench.main(args))
    if args.command == "bench-mutants":
        from veribot.bench import mutants as bench_mutants

        return int(bench_mutants.main(args))
    if args.command == "bench-model":
        from veribot.bench import model as bench_model

        return bench_model.main(args, stdout, stderr)
    if args.command == "bench-real":
        from veribot.bench import real as bench_real

        return int(bench_real.main(args))
    if args.command == "bench-soak":
        from veribot.bench import soak as bench_soak

        return int(bench_soak.main(args))
    if args.command == "bench-safety":
        from veribot.bench import safety as bench_safety

        return bench_safety.main(args, stdout, stderr)
    if args.command == "safety":
        return _safety(args, stdout)
    if args.command == "verify-claims":
        return verifyclaims.run(args, stdout)
    if args.command in _APP_COMMANDS:
        return _APP_COMMANDS[args.command](args)
    request = _request(args, settings)
    with _progress(settings, stderr) as progress:
        report = review(request, progress)
    to_terminal = args.output is None and settings.stdout_is_terminal
    text = render(
        report,
        args.format,
        terminal=to_terminal,
        color=not settings.no_color,
        width=settings.width,
    )
    if args.output is not None:
        args.output.write_text(text, encoding="utf-8")
        logger.info("report written to %s", args.output)
    else:
        stdout.write(text)
        stdout.flush()
    return EXIT_FAILED if report.failed(FailOn(args.fail_on)) else EXIT_OK


def _safety(args: argparse.Namespace, stdout: TextIO) -> int:
    """``veribot safety``: one question, its answer on standard output (exit 1: unsafe)."""
    from veribot.checks.safety import UNSAFE, SafetyBudget, check_safety

    if args.timeout <= 0:
        raise UsageError("--timeout is a positive number of seconds")
    if args.line is not None and args.line < 1:
        raise UsageError("--line is a positive line number")
    try:
        source = args.file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise UsageError(f"cannot read {args.file} ({err})") from None
    result = check_safety(source, args.entry, line=args.line, exception=args.exception,
                          budget=SafetyBudget(timeout_s=args.timeout))
    if args.format == "json":
        stdout.write(json.dumps({"file": str(args.file), "entry": args.entry,
                                 **result.as_record()}, indent=2) + "\n")
    else:
        where = f"{args.file}::{args.entry}" + (f" line {args.line}" if args.line else "")
        stdout.write(f"{where}: {result.verdict} ({result.reason})\n  {result.detail}\n")
        for assumption in result.assumptions:
            stdout.write(f"  assuming {assumption}\n")
    return EXIT_FAILED if result.verdict == UNSAFE else EXIT_OK


# --- the GitHub App: `veribot serve` (the webhook) and `veribot worker` (the jobs) ---------
# Settings come from VERIBOT_* variables (see veribot.bot.config.Settings.from_env).
# `serve` runs the app under waitress, a production WSGI server in pure Python (threaded,
# no C extension, no fork model to configure); Flask's own server is for development only.
# `bench-webhook` measures its acknowledgement latency (veribot.bench.webhook).


def _add_app_commands(sub: argparse._SubParsersAction[_Parser]) -> None:
    sv = sub.add_parser("serve", help="run the GitHub App's webhook (needs a webhook secret)")
    sv.add_argument("--host", default="127.0.0.1", help="address to listen on")
    sv.add_argument("--port", type=_positive_int, default=8000, help="port (default 8000)")
    sv.add_argument("--threads", type=_positive_int, default=8, help="request threads (default 8)")
    sv.add_argument("--verbose", "-v", action="store_true", help="debug log on stderr")
    wk = sub.add_parser("worker", help="run queued review jobs as the GitHub App")
    wk.add_argument("--workers", type=_positive_int, default=1, help="jobs in parallel")
    wk.add_argument("--verbose", "-v", action="store_true", help="debug log on stderr")
    sub.add_parser(
        "sandbox-check",
        help="run the sandbox's escape probes and print which escaped (exit 1 if any did); "
        "VERIBOT_DATA_DIR, if set, is probed too",
    )
    from veribot.bench import webhook as bench_webhook

    bw = sub.add_parser(
        "bench-webhook",
        help="measure the webhook's acknowledgement latency on loopback",
        description=bench_webhook.__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    bench_webhook.add_arguments(bw)


def _serve(args: argparse.Namespace) -> int:
    from veribot.bot.app import create_app
    from veribot.bot.config import Settings as AppSettings
    from veribot.bot.config import secure_data_dir
    from veribot.bot.queue import JobQueue

    settings = AppSettings.from_env(os.environ)
    secure_data_dir(settings.data_dir)
    if not settings.webhook_secret:  # refuse before the queue is created on disk
        raise ConfigError(
            "no webhook secret configured (set VERIBOT_WEBHOOK_SECRET or "
            "VERIBOT_WEBHOOK_SECRET_FILE): refusing to start"
        )
    app = create_app(settings, JobQueue.from_settings(settings))
    logging.getLogger().setLevel(logging.DEBUG if args.verbose else logging.INFO)
    import waitress  # type: ignore[import-untyped]

    waitress.serve(app, host=args.host, port=args.port, threads=args.threads)
    return EXIT_OK


def _worker(args: argparse.Namespace) -> int:
    from veribot.bot.config import Settings as AppSettings
    from veribot.bot.config import secure_data_dir
    from veribot.bot.queue import Job, JobQueue
    from veribot.bot.worker import InstallationTokens, app_deps, run_job

    settings = AppSettings.from_env(os.environ)
    secure_data_dir(settings.data_dir)
    if settings.app_id is None or not settings.private_key:
        raise ConfigError("set VERIBOT_APP_ID and VERIBOT_PRIVATE_KEY(_FILE) to run a worker")
    tokens = InstallationTokens(settings.app_id, settings.private_key, settings.github_api_url)
    from veribot.bot.worker import sandbox_checked
    from veribot.checks.sandbox import selftest

    def runner(job: Job) -> None:
        run_job(job, deps)

    queue = JobQueue.from_settings(settings, runner)
    deps = sandbox_checked(
        app_deps(settings, tokens, queue.state), selftest.run((settings.data_dir.resolve(),))
    )
    logging.getLogger().setLevel(logging.DEBUG if args.verbose else logging.INFO)
    queue.work(args.workers)  # until SIGTERM or SIGINT: see veribot.bot.queue
    return EXIT_OK


def _bench_webhook(args: argparse.Namespace) -> int:
    from veribot.bench import webhook as bench_webhook

    return bench_webhook.main(args)


def _sandbox_check(args: argparse.Namespace) -> int:
    from veribot.checks.sandbox import selftest

    data_dir = os.environ.get("VERIBOT_DATA_DIR")  # the App's: the child must not reach it
    result = selftest.run((Path(data_dir).resolve(),) if data_dir else ())
    print(result.report())
    return EXIT_OK if result.ok else EXIT_FAILED


_APP_COMMANDS = {"serve": _serve, "worker": _worker, "bench-webhook": _bench_webhook,
                 "sandbox-check": _sandbox_check}


# --- end of the GitHub App commands ---------------------------------------------------------


def main(
    argv: Sequence[str] | None = None,
    *,
    environ: Mapping[str, str] | None = None,
    stdout: TextIO | None = None,
    stderr: TextIO | None = None,
) -> int:
    """Run the command line; returns the exit code (see the module docstring)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    out = stdout if stdout is not None else sys.stdout
    err = stderr if stderr is not None else sys.stderr
    settings = build_settings(os.environ if environ is None else environ, out, err)

    def fail(message: str) -> int:
        err.write(f"veribot: error: {message}\n")
        return EXIT_USAGE

    try:
        with_bench = argv[:1] in (["bench"], ["bench-mutants"], ["bench-real"], ["bench-soak"],
                                  ["bench-safety"])
        parser = build_parser(with_bench=with_bench, with_bench_model=argv[:1] == ["bench-model"])
        args = parser.parse_args(argv)
    except UsageError as exc:
        return fail(str(exc))
    except ImportError as exc:  # only the bench harness is imported while parsing
        return fail(f"the benchmark harness cannot be loaded: {exc}.")
    except SystemExit as exc:  # --help and --version print and exit 0
        return int(exc.code or 0) if not isinstance(exc.code, str) else EXIT_USAGE
    handler = _logging(bool(getattr(args, "verbose", False)), err)
    try:
        return _run(args, settings, out, err)
    except (GitRepoError, ReviewError, ConfigError, UsageError, ClaimsError) as exc:
        return fail(str(exc))
    except OSError as exc:
        logger.debug("I/O error", exc_info=True)
        where = f" {exc.filename}" if exc.filename else ""
        return fail(f"cannot access{where}: {exc.strerror or exc}.")
    except KeyboardInterrupt:
        return fail("interrupted.")
    except Exception as exc:  # the CLI boundary: a sentence, never a traceback
        logger.debug("internal error", exc_info=True)
        return fail(f"internal error: {type(exc).__name__}: {exc} (--verbose for details).")
    finally:
        logging.getLogger().removeHandler(handler)


if __name__ == "__main__":
    sys.exit(main())
