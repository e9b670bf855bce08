"""The crash-safety harness behind ``veribot bench-safety``.

Reads records ``{"id", "module": source text, "entry": function name, "line": optional
int, "exception": optional class name}`` (one JSON object per line) and writes, per
record, ``{"id", "verdict": "safe" | "unsafe" | "inconclusive", "reason", "detail",
"input": the call's arguments (unsafe), "line": where it raised (unsafe) or the line
asked about, "exception": its class (unsafe), "assumptions", "time"}``. A record may carry
a ``label`` (``"safe"`` or ``"unsafe"``, what a person confirmed): the engine never sees
it; the summary counts agreements and wrong verdicts by it (a "safe" on an unsafe
question, an "unsafe" on a safe one).

Each record is decided in a worker process (``--jobs``), under ``--timeout`` seconds. With
``--repos DIR``, a record that says where its module lives (``project``: a git repository
``DIR/<project>``, ``revision``, ``path``) has it imported as part of its package at that
revision (its sibling modules and data files beside it in the sandbox), as in a review.
"""

from __future__ import annotations

import argparse
import collections
import datetime as dt
import json
import statistics
import sys
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

import git

from veribot.bot import gitrepo
from veribot.checks.project.package import Package
from veribot.checks.safety import INCONCLUSIVE, SAFE, UNSAFE, SafetyBudget, check_safety

LABELS = (SAFE, UNSAFE)


class SafetyFormatError(Exception):
    """An input file that does not follow the record format."""


@dataclass(frozen=True)
class Question:
    """One record: what the engine is given (the label stays with the harness)."""

    id: str
    module: str
    entry: str
    line: int | None = None
    exception: str | None = None
    label: str | None = None
    # Where the module lives (``--repos``): its repository, revision and path, so that it
    # is imported as part of its package, as in a review.
    project: str | None = None
    revision: str | None = None
    path: str | None = None


def read_questions(path: Path) -> list[Question]:
    """The records of ``path``; raises ``SafetyFormatError`` naming the first bad line."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise SafetyFormatError(f"{path}: cannot read it ({err})") from None
    out: list[Question] = []
    seen: set[str] = set()
    for n, raw in enumerate(text.splitlines(), 1):
        if not raw.strip():
            continue
        try:
            data = json.loads(raw)
        except json.JSONDecodeError as err:
            raise SafetyFormatError(f"{path}:{n}: not JSON ({err.msg})") from None
        if not isinstance(data, dict):
            raise SafetyFormatError(f"{path}:{n}: a record is a JSON object")
        for key in ("id", "module", "entry"):
            if not isinstance(data.get(key), str) or not data[key]:
                raise SafetyFormatError(f"{path}:{n}: `{key}` is a non-empty string")
        line = data.get("line")
        if line is not None and (not isinstance(line, int) or isinstance(line, bool)
                                 or line < 1):
            raise SafetyFormatError(f"{path}:{n}: `line`, where given, is a positive integer")
        exception = data.get("exception")
        if exception is not None and (not isinstance(exception, str) or not exception):
            raise SafetyFormatError(f"{path}:{n}: `exception`, where given, is a class name")
        label = data.get("label")
        if label is not None and label not in LABELS:
            raise SafetyFormatError(f"{path}:{n}: `label`, where given, is one of "
                                    f"{', '.join(LABELS)}")
        if data["id"] in seen:
            raise SafetyFormatError(f"{path}:{n}: the id {data['id']!r} is used twice")
        seen.add(data["id"])
        place = [data.get(k) for k in ("project", "revision", "path")]
        if data.get("project") is None and isinstance(data.get("repo"), str):
            place[0] = data["repo"]
        if any(p is not None and not isinstance(p, str) for p in place):
            raise SafetyFormatError(f"{path}:{n}: `project`, `revision` and `path`, where "
                                    "given, are strings")
        out.append(Question(data["id"], data["module"], data["entry"], line, exception, label,
                            *place))
    return out


def decide(question: Question, timeout_s: float,
           repos: Path | None = None) -> dict[str, object]:
    """One question's result record (run in a worker process)."""
    result = check_safety(question.module, question.entry, line=question.line,
                          exception=question.exception,
                          budget=SafetyBudget(timeout_s=timeout_s),
                          package=_package(question, repos))
    return {"id": question.id, **result.as_record()}


def _package(question: Question, repos: Path | None) -> Package | None:
    """The module's package at its revision, from ``repos/<project>`` (a git repository);
    None where the record does not say where it lives or the repository is not there."""
    if repos is None or not (question.project and question.revision and question.path):
        return None
    root = repos / question.project
    if not (root / ".git").exists() and not (root / "HEAD").is_file():
        return None
    try:
        return gitrepo.package_context(root, question.revision, question.revision, None,
                                       question.path).after
    except (gitrepo.GitRepoError, git.GitCommandError, OSError, ValueError):
        return None


def _decide_all(questions: Sequence[Question], timeout_s: float,
                jobs: int, repos: Path | None = None) -> list[dict[str, object]]:
    if jobs <= 1:
        return [decide(q, timeout_s, repos) for q in questions]
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        futures = [pool.submit(decide, q, timeout_s, repos) for q in questions]
        out = []
        for q, future in zip(questions, futures, strict=True):
            try:
                out.append(future.result())
            except Exception as err:  # a worker that died: the record says so
                out.append({"id": q.id, "verdict": INCONCLUSIVE, "reason": "internal-error",
                            "detail": f"the worker failed ({type(err).__name__}: {err})",
                            "input": None, "line": q.line, "exception": None,
                            "assumptions": [], "method": "", "time": 0.0})
        return out


def summary(questions: Sequence[Question], results: Sequence[dict[str, object]]) -> str:
    """Counts by verdict, by label where labels are given, and the reasons left open."""
    by_id = {q.id: q for q in questions}
    counts = collections.Counter(str(r["verdict"]) for r in results)
    total = len(results)
    decided = counts[SAFE] + counts[UNSAFE]
    lines = [f"questions {total}: safe {counts[SAFE]}, unsafe {counts[UNSAFE]}, "
             f"inconclusive {counts[INCONCLUSIVE]}; decided {decided}/{total}"
             + (f" ({100 * decided / total:.0f}%)" if total else "")]
    labelled = [(by_id[str(r["id"])].label, r["verdict"]) for r in results
                if by_id[str(r["id"])].label is not None]
    if labelled:
        agree = sum(1 for label, verdict in labelled if label == verdict)
        wrong = sum(1 for label, verdict in labelled
                    if verdict in LABELS and label != verdict)
        per = collections.Counter((label, verdict) for label, verdict in labelled)
        lines.append(f"labelled {len(labelled)}: agree {agree}, WRONG {wrong}; "
                     + ", ".join(f"{label}->{verdict} {n}"
                                 for (label, verdict), n in sorted(per.items())))
    times = [float(str(r["time"])) for r in results]
    if times:
        lines.append(f"time per question: median {statistics.median(times):.2f}s, "
                     f"max {max(times):.2f}s")
    reasons = collections.Counter(str(r["reason"]) for r in results
                                  if r["verdict"] == INCONCLUSIVE)
    if reasons:
        lines.append("inconclusive by reason: " + ", ".join(
            f"{reason} {n}" for reason, n in reasons.most_common(10)))
    return "\n".join(lines) + "\n"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("questions", type=Path, metavar="FILE.jsonl",
                        help="records: id, module (source text), entry, optional line, "
                        "exception and label")
    parser.add_argument("--out", type=Path, default=None, metavar="RESULTS.jsonl",
                        help="where to write one result per record (default: "
                        "benchmarks/results/safety-<UTC time>.jsonl)")
    parser.add_argument("--timeout", type=float, default=10.0, metavar="S",
                        help="budget per question in seconds (default 10)")
    parser.add_argument("--jobs", type=int, default=1, metavar="N",
                        help="questions decided at once, each in its own process (default 1)")
    parser.add_argument("--repos", type=Path, default=None, metavar="DIR",
                        help="where a record's `project` (a git repository DIR/<project>) "
                        "is: its module is then imported as part of its package at the "
                        "record's `revision` and `path`, as in a review")


def main(args: argparse.Namespace, stdout: TextIO = sys.stdout,
         stderr: TextIO = sys.stderr) -> int:
    if args.timeout <= 0 or args.jobs < 1:
        stderr.write("veribot bench-safety: --timeout is positive and --jobs at least 1\n")
        return 2
    try:
        questions = read_questions(args.questions)
    except SafetyFormatError as err:
        stderr.write(f"veribot bench-safety: {err}\n")
        return 2
    out = args.out or Path("benchmarks/results") / (
        "safety-" + dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%SZ") + ".jsonl")
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        with out.open("w", encoding="utf-8") as handle:
            results = _decide_all(questions, args.timeout, args.jobs, args.repos)
            for record in results:
                handle.write(json.dumps(record) + "\n")
    except OSError as err:
        stderr.write(f"veribot bench-safety: cannot write {out} ({err})\n")
        return 2
    stdout.write(summary(questions, results))
    stdout.write(f"results: {out}\n")
    return 0
