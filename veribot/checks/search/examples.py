"""Run a function's docstring examples (``>>>`` lines) on both revisions, in the sandbox.

A docstring example is a promise to its reader: ``>>> ordinal(11)`` then ``'11th'``. The
head revision's examples of a function run twice, with the stdlib's ``doctest`` (the
``ELLIPSIS`` and ``NORMALIZE_WHITESPACE`` options on, as most projects run them): once in
the head revision's module and once in the base revision's, each in its own sandboxed
child (no network, no processes, a wall-clock limit), the module imported as part of its
package. An example that fails on the head revision is a docstring the change leaves
wrong (or a code change the docstring caught); passing on the base tells which.

Each example's outcome is one of ``passed``, ``failed`` (with what it printed),
``error`` (the exception, where the example expects none) or ``not-run`` (with why). The
outcomes come from the child, so the code under test could forge them: they are shown as
what its examples say, never as a verdict.
"""

from __future__ import annotations

import ast
import doctest
import json
import secrets
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from veribot.checks import sandbox
from veribot.checks.lang import pysource
from veribot.checks.project.package import Package

__all__ = ["MAX_EXAMPLES", "ExampleRun", "docstring_of", "has_examples", "run_examples"]

MAX_EXAMPLES = 40  # examples run per function
LIMITS = sandbox.Limits(wall_s=20.0, call_s=20.0, cpu_s=20, memory_mb=512)
_TEXT_CHARS = 300
_SUBJECT = "veribot_subject.py"
_KINDS = ("passed", "failed", "error", "not-run")


@dataclass(frozen=True)
class ExampleRun:
    """One example, and what it did beside each revision's code (``before`` is None where
    the function is new)."""

    source: str  # the example's code, as written after `>>>`
    want: str  # what it expects to print
    after: tuple[str, str]  # (kind, what it printed or why)
    before: tuple[str, str] | None = None

    @property
    def fails(self) -> bool:
        return self.after[0] in ("failed", "error")

    def text(self) -> str:
        kind, got = self.after
        shown = f">>> {self.source.strip()}"
        if kind == "passed":
            out = f"`{shown}` passes"
        elif kind == "not-run":
            return f"`{shown}` did not run ({got})"
        else:
            expected = self.want.strip() or "(nothing)"
            out = (f"`{shown}` fails on the head revision: expected `{expected}`, got "
                   f"`{got.strip() or '(nothing)'}`")
        if self.before is not None:
            out += f" (on the base revision: {self.before[0]})"
        return out


def docstring_of(source: str, entry: str) -> str | None:
    """The docstring of ``entry`` (``f`` or ``Class.method``) in ``source``, or None."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    found = pysource.definition(tree, entry)
    if found is None:
        return None
    return ast.get_docstring(found, clean=False)


def has_examples(docstring: str | None) -> bool:
    if not docstring or ">>>" not in docstring:
        return False
    try:
        return bool(doctest.DocTestParser().get_examples(docstring))
    except ValueError:  # a malformed example (bad indentation): doctest refuses it
        return False


def run_examples(entry: str, docstring: str, after_source: str,
                 after: Package | None, before_source: str | None = None,
                 before: Package | None = None,
                 limits: sandbox.Limits = LIMITS) -> list[ExampleRun]:
    """The examples of ``docstring`` run beside the head version (and the base version,
    where ``before_source`` is given), each revision in its own child, at once."""
    try:
        parsed = doctest.DocTestParser().get_examples(docstring)[:MAX_EXAMPLES]
    except ValueError as err:
        return [ExampleRun("", "", ("not-run", f"doctest cannot read the docstring: {err}"))]
    if not parsed:
        return []
    sides: list[tuple[str, Package | None]] = [(after_source, after)]
    if before_source is not None:
        sides.append((before_source, before))
    with ThreadPoolExecutor(len(sides)) as pool:
        outcomes = list(pool.map(
            lambda side: _run_side(entry, docstring, side[0], side[1], len(parsed), limits),
            sides))
    return [ExampleRun(ex.source, ex.want, outcomes[0][n],
                       outcomes[1][n] if len(outcomes) > 1 else None)
            for n, ex in enumerate(parsed)]


def _run_side(entry: str, docstring: str, source: str, package: Package | None, count: int,
              limits: sandbox.Limits) -> list[tuple[str, str]]:
    mark = f"veribot-examples-{secrets.token_hex(8)}:"
    files: dict[str, str | bytes]
    config: dict[str, object]
    if package is not None:
        files = package.tree(source)
        config = {"root": package.root, "module": package.module, "file": package.path}
    else:
        files = {_SUBJECT: source}
        config = {"root": "", "module": _SUBJECT[:-3], "file": _SUBJECT}
    config.update({"entry": entry, "doc": docstring, "mark": mark, "max": MAX_EXAMPLES})
    script = f"CONFIG_TEXT = {json.dumps(json.dumps(config))}\n{_DRIVER}"

    def every(kind: str, why: str) -> list[tuple[str, str]]:
        return [(kind, why)] * count

    try:
        run = sandbox.run_script(script, files, limits=limits)
    except sandbox.SandboxError as err:
        return every("not-run", f"the sandbox cannot run: {err}")
    if run.timed_out:
        return every("not-run", f"the examples ran past the sandbox's {limits.wall_s:g} s")
    lines = [line for line in run.stdout.splitlines() if line.startswith(mark)]
    try:
        raw = json.loads(lines[-1][len(mark):]) if lines else None
    except ValueError:
        raw = None
    if not isinstance(raw, list):
        tail = (run.stderr.strip().splitlines() or [""])[-1][:_TEXT_CHARS]
        return every("not-run", f"the examples ended without a report (status "
                     f"{run.returncode}){': ' + tail if tail else ''}")
    out = [(str(r[0]), str(r[1])[:_TEXT_CHARS]) if isinstance(r, list) and len(r) == 2
           and r[0] in _KINDS else ("not-run", "a malformed report") for r in raw[:count]]
    return out + every("not-run", "an earlier example stopped the run")[len(out):]


# Runs in the sandbox child: import the module, run the examples with its globals.
_DRIVER = r'''
import doctest, importlib, json, os, sys
CONFIG = json.loads(CONFIG_TEXT)
root = os.path.join(os.getcwd(), CONFIG["root"]) if CONFIG["root"] else os.getcwd()
sys.path.insert(0, root)
results = []
try:
    module = importlib.import_module(CONFIG["module"])
except BaseException as exc:
    why = "the module did not import: %s: %s" % (type(exc).__name__, exc)
    print(CONFIG["mark"] + json.dumps([["not-run", why[:300]]] * CONFIG["max"]))
    sys.exit(0)


class Runner(doctest.DocTestRunner):
    def report_start(self, out, test, example):
        pass

    def report_success(self, out, test, example, got):
        results.append(["passed", got])

    def report_failure(self, out, test, example, got):
        results.append(["failed", got])

    def report_unexpected_exception(self, out, test, example, exc_info):
        results.append(["error", "%s: %s" % (exc_info[0].__name__, exc_info[1])])


test = doctest.DocTestParser().get_doctest(
    CONFIG["doc"], dict(vars(module)), CONFIG["entry"], CONFIG["file"], 0)
test.examples = test.examples[:CONFIG["max"]]
Runner(verbose=False,
       optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE).run(
    test, out=lambda text: None, clear_globs=True)
print(CONFIG["mark"] + json.dumps(results))
'''

