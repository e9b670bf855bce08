"""The real-commits harness behind ``veribot bench-real``.

Reads commit records (``repo``, ``commit``, ``subject`` and, where labelled, ``intent``;
see ``shared/bench/real/README.md``; the records ``sample_commits.py`` draws carry no
intent and count as ``unlabelled``), clones each repository once into a temporary folder
(from the bundle ``DIR/<repo>.bundle`` or the git repository ``DIR/<repo>``), reviews every
commit against its first parent with the same pipeline as ``veribot review`` (no agent),
writes one JSON record per unit and prints, per intent and per project: the commits, how
many were flagged (at least one changed non-test function refuted), the changed non-test
functions, how many were verified, refuted and inconclusive, the time per commit (median,
p90), and the inconclusive reasons by count.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from veribot.bot.intent import intents
from veribot.bot.review import GitSource, ReviewRequest, UnitResult, review
from veribot.checks.equivalence import Budget
from veribot.checks.project.units import UnitKind, is_test_path
from veribot.checks.verdict import Verdict

RECORD_FIELDS = ("repo", "commit", "intent", "subject")
REQUIRED_FIELDS = ("repo", "commit", "subject")
UNLABELLED = "unlabelled"


class RealFormatError(Exception):
    """A commits file that does not follow the record format; the message says where."""


@dataclass(frozen=True)
class CommitRecord:
    """One commit to review against its first parent."""

    repo: str
    commit: str
    intent: str
    subject: str


@dataclass
class IntentSummary:
    """The figures of one intent (or of all commits)."""

    commits: int = 0
    units: int = 0  # changed non-test functions and methods compared
    verdicts: Counter[str] = field(default_factory=Counter)
    inconclusive: Counter[str] = field(default_factory=Counter)
    seconds: list[float] = field(default_factory=list)  # per commit
    errors: int = 0  # commits that could not be reviewed
    flagged: int = 0  # commits with at least one refuted counted unit


def read_records(path: Path) -> list[CommitRecord]:
    """The commit records of ``path``; raises :class:`RealFormatError` on a bad line."""
    records = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
        except json.JSONDecodeError as exc:
            raise RealFormatError(f"{path}:{n}: not JSON: {exc.msg}") from None
        if not isinstance(data, dict) or not all(
            isinstance(data.get(k), str) for k in REQUIRED_FIELDS
        ):
            raise RealFormatError(
                f"{path}:{n}: needs string fields {', '.join(REQUIRED_FIELDS)}")
        intent = data.get("intent", UNLABELLED)
        if not isinstance(intent, str) or not intent:
            raise RealFormatError(f"{path}:{n}: 'intent', where given, is a non-empty string")
        records.append(CommitRecord(data["repo"], data["commit"], intent, data["subject"]))
    return records


def is_counted(item: UnitResult) -> bool:
    """Whether a unit counts as a changed non-test function (the harness's denominator)."""
    unit = item.unit
    return unit.kind is UnitKind.CHANGED and unit.is_function and not is_test_path(unit.path)


def repo_source(repos: Path, name: str) -> Path | None:
    """Where ``repos`` holds the repository ``name``: its bundle, or a git directory."""
    bundle = repos / f"{name}.bundle"
    if bundle.is_file():
        return bundle
    folder = repos / name
    if (folder / ".git").exists() or (folder / "HEAD").is_file():
        return folder
    return None


def clone_bundle(bundle: Path, into: Path) -> Path:
    """Clone ``bundle`` (or a git repository) into the folder ``into`` and return it;
    raises OSError on failure."""
    done = subprocess.run(
        ["git", "clone", "--quiet", str(bundle), str(into)],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise OSError(f"cannot clone {bundle}: {done.stderr.strip()}")
    return into


def run(
    records: Sequence[CommitRecord],
    repos: Path,
    out: TextIO,
    *,
    timeout_s: float,
    progress: TextIO | None = None,
    jobs: int = 1,
    by_project: dict[str, IntentSummary] | None = None,
) -> dict[str, IntentSummary]:
    """Review each commit, write unit records to ``out``; the summaries by intent (and, in
    ``by_project`` where given, by repository)."""
    summaries: dict[str, IntentSummary] = {}
    projects = by_project if by_project is not None else {}
    clones: dict[str, Path] = {}
    with tempfile.TemporaryDirectory(prefix="veribot-real-") as tmp:
        for i, rec in enumerate(records, start=1):
            tallies = (summaries.setdefault(rec.intent, IntentSummary()),
                       projects.setdefault(rec.repo, IntentSummary()))
            for summary in tallies:
                summary.commits += 1
            started = time.monotonic()
            try:
                if rec.repo not in clones:
                    source = repo_source(repos, rec.repo)
                    if source is None:
                        raise OSError(f"no bundle or repository for {rec.repo} in {repos}")
                    clones[rec.repo] = clone_bundle(source, Path(tmp) / rec.repo)
                report = review(
                    ReviewRequest(
                        source=GitSource(clones[rec.repo], f"{rec.commit}^", rec.commit),
                        budget=Budget(timeout_s=timeout_s),
                        jobs=jobs,
                    )
                )
            except Exception as exc:  # one bad commit is reported, the rest run
                for summary in tallies:
                    summary.errors += 1
                _write(out, rec, "", "error", "internal-error", f"{type(exc).__name__}: {exc}", 0.0)
                if progress:
                    progress.write(f"[{i}/{len(records)}] {rec.repo} {rec.commit[:10]}: {exc}\n")
                continue
            elapsed = time.monotonic() - started
            for summary in tallies:
                summary.seconds.append(elapsed)
            if any(is_counted(it) and it.result.verdict is Verdict.REFUTED
                   for it in report.items):
                for summary in tallies:
                    summary.flagged += 1
            meant = intents(report, report.declared)
            for n, item in enumerate(report.items):
                res = item.result
                _write(
                    out,
                    rec,
                    item.unit.qualname,
                    res.verdict.value,
                    str(res.reason or ""),
                    res.detail,
                    res.time_s,
                    kind=item.unit.kind.value,
                    counted=is_counted(item),
                    method=res.method,
                    assumptions=res.assumptions,
                    counterexample=(res.counterexample.args
                                    if res.counterexample is not None else None),
                    notes=res.notes,
                    meaning=meant[n].intent.value if n in meant else None,
                )
                if is_counted(item):
                    for summary in tallies:
                        summary.units += 1
                        summary.verdicts[res.verdict.value] += 1
                        if res.verdict is Verdict.INCONCLUSIVE:
                            summary.inconclusive[str(res.reason)] += 1
            for unit in (*report.skipped, *report.filtered_out):
                _write(out, rec, unit.qualname, "skipped", "skipped", unit.detail, 0.0,
                       kind=unit.kind.value, counted=False)
            out.flush()
            if progress:
                progress.write(
                    f"[{i}/{len(records)}] {rec.repo} {rec.commit[:10]} {rec.intent}: "
                    f"{sum(1 for it in report.items if is_counted(it))} unit(s), "
                    f"{elapsed:.1f}s\n"
                )
                progress.flush()
    return summaries


def _write(
    out: TextIO,
    rec: CommitRecord,
    unit: str,
    verdict: str,
    reason: str,
    detail: str,
    seconds: float,
    *,
    kind: str = "",
    counted: bool = False,
    method: str = "",
    assumptions: Sequence[str] = (),
    counterexample: Sequence[str] | None = None,
    notes: Sequence[str] = (),
    meaning: str | None = None,
) -> None:
    record = {
        "repo": rec.repo,
        "commit": rec.commit,
        "intent": rec.intent,
        "unit": unit,
        "kind": kind,
        "counted": counted,
        "verdict": verdict,
        "reason": reason,
        "detail": detail,
        "method": method,
        "assumptions": list(assumptions),
        "counterexample": None if counterexample is None else list(counterexample),
        "notes": list(notes),  # what else was tried: random testing's inputs, or why none
        # A refutation's meaning for the change (``bot.intent``): tested, internal,
        # untested behaviour change, a refactoring that changes behaviour.
        "meaning": meaning,
        "time": round(seconds, 3),
    }
    out.write(json.dumps(record) + "\n")


def _percentile(values: Sequence[float], q: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))
    return ordered[index]


def _total(summaries: Iterable[IntentSummary]) -> IntentSummary:
    total = IntentSummary()
    for s in summaries:
        total.commits += s.commits
        total.units += s.units
        total.verdicts.update(s.verdicts)
        total.inconclusive.update(s.inconclusive)
        total.seconds.extend(s.seconds)
        total.errors += s.errors
        total.flagged += s.flagged
    return total


def _percent(part: int, whole: int) -> str:
    return f"{100 * part / whole:.0f}%" if whole else "-"


def format_summary(summaries: dict[str, IntentSummary], heading: str = "intent",
                   *, reasons: bool = True) -> str:
    """A table: one line per intent (or project, by ``heading``) and a total; the
    inconclusive reasons by count in a last column where ``reasons``."""
    total = _total(summaries.values())
    lines = [
        f"{heading:<18}{'commits':>8}{'flagged':>8}{'units':>7}{'verified':>9}{'refuted':>8}"
        f"{'inconcl.':>9}{'decided':>8}{'median s':>9}{'p90 s':>7}"
        + ("  inconclusive by reason" if reasons else "")
    ]
    for name, s in [*sorted(summaries.items()), ("all", total)]:
        why = ", ".join(f"{r} {n}" for r, n in s.inconclusive.most_common())
        errors = f" ({s.errors} commit(s) not reviewed)" if s.errors else ""
        decided = s.verdicts["verified"] + s.verdicts["refuted"]
        lines.append(
            f"{name:<18}{s.commits:>8}{s.flagged:>8}{s.units:>7}{s.verdicts['verified']:>9}"
            f"{s.verdicts['refuted']:>8}{s.verdicts['inconclusive']:>9}"
            f"{_percent(decided, s.units):>8}"
            f"{statistics.median(s.seconds) if s.seconds else 0.0:>9.1f}"
            f"{_percentile(s.seconds, 0.9):>7.1f}" + (f"  {why}" if reasons else "") + errors
        )
    return "\n".join(lines)


def format_reasons(summaries: dict[str, IntentSummary], top: int = 10) -> str:
    """The ``top`` most frequent inconclusive reasons over all commits, with counts."""
    total = _total(summaries.values())
    lines = [f"most frequent inconclusive reasons ({total.verdicts['inconclusive']} units):"]
    lines += [f"{n:>6}  {r}" for r, n in total.inconclusive.most_common(top)]
    return "\n".join(lines)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``veribot bench-real``."""
    parser.add_argument("commits", metavar="COMMITS.jsonl", type=Path,
                        help="commit records: repo, commit, subject, and an optional intent")
    parser.add_argument("--repos", metavar="DIR", type=Path, required=True,
                        help="folder holding, for each record's repo, <repo>.bundle or a git "
                             "repository <repo>/")
    parser.add_argument("--out", metavar="FILE", type=Path, default=None,
                        help="where to write one JSON record per unit (default: "
                             "benchmarks/results/real-<UTC time>.jsonl)")
    parser.add_argument("--limit", metavar="N", type=int, default=None,
                        help="only the first N commits")
    parser.add_argument("--timeout", metavar="S", type=float, default=Budget().timeout_s,
                        help=f"budget per function in seconds (default {Budget().timeout_s:g})")
    parser.add_argument("--jobs", metavar="N", type=int, default=1,
                        help="functions of one commit checked in parallel (default 1), as "
                             "`veribot review --jobs`")


def main(args: argparse.Namespace) -> int:
    """Run the harness; progress on stderr, the summary on stdout."""
    try:
        records = read_records(args.commits)
    except OSError as exc:
        sys.stderr.write(f"cannot read {exc.filename}: {exc.strerror}\n")
        return 2
    except RealFormatError as exc:
        sys.stderr.write(f"not a commits file: {exc}\n")
        return 2
    if args.limit is not None:
        records = records[: args.limit]
    missing = sorted({r.repo for r in records if repo_source(args.repos, r.repo) is None})
    if missing:
        sys.stderr.write(f"no bundle or repository in {args.repos} for: {', '.join(missing)}\n")
        return 2
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%SZ")
    out_path: Path = args.out or Path("benchmarks") / "results" / f"real-{stamp}.jsonl"
    out_path.parent.mkdir(parents=True, exist_ok=True)
    projects: dict[str, IntentSummary] = {}
    with out_path.open("w", encoding="utf-8") as out:
        summaries = run(records, args.repos, out, timeout_s=args.timeout, progress=sys.stderr,
                        jobs=max(1, args.jobs), by_project=projects)
    sys.stdout.write(format_summary(summaries) + "\n\n")
    sys.stdout.write(format_summary(projects, "project", reasons=False) + "\n\n")
    sys.stdout.write(format_reasons(summaries) + "\n")
    sys.stdout.write(f"\nunits: {out_path}\n")
    return 0


def summarise_file(lines: Iterable[str]) -> dict[str, Counter[str]]:
    """Verdict counts of counted units by intent, from a unit-records file (for tests)."""
    counts: dict[str, Counter[str]] = {}
    for line in lines:
        rec = json.loads(line)
        if rec.get("counted"):
            counts.setdefault(rec["intent"], Counter())[rec["verdict"]] += 1
    return counts
