"""The equivalence benchmark harness behind ``veribot bench``.

Reads the records of ``shared/bench/README.md``, gives the engine only the fields the
README allows (a ``BenchInput`` is built from those fields alone; the label stays with
the harness), decides each pair in its own worker process under a budget, writes one
result record per pair, re-runs every refutation's input through
``differential.confirm`` independently of the engine, and prints a summary by label.
With ``--peer crosshair`` it also runs the ``crosshair diffbehavior`` command line on the
same pairs (in the sandbox, same budget) and prints both side by side.
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import datetime as dt
import fnmatch
import json
import logging
import multiprocessing
import multiprocessing.connection
import os
import signal
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from pathlib import Path
from typing import TextIO

from veribot.checks.equivalence import Budget, check_pair
from veribot.checks.sandbox import Limits, run_script
from veribot.checks.search import differential, tripwire
from veribot.checks.search.crosshair import CHILD_THREADS
from veribot.checks.search.difftest import entry_parameters
from veribot.checks.verdict import Counterexample, Reason, Result, Verdict

log = logging.getLogger(__name__)

# The only input fields the engine may see (shared/bench/README.md).
ENGINE_FIELDS = ("id", "language", "entry", "changed", "before", "after", "param_types")
SUPPORTED_LANGUAGES = frozenset({"python"})
SKIPPED_REASON = "skipped"
SKIP_DETAIL = {"c": "C front end not built"}
RECHECK_FOUND_BY = "bench-recheck"


class BenchFormatError(Exception):
    """An input file that does not follow the benchmark record format."""


@dataclass(frozen=True)
class BenchInput:
    """What the engine is given for one pair: the allowed fields, nothing else."""

    id: str
    language: str
    entry: str
    before: str
    after: str
    changed: str | None = None
    param_types: tuple[tuple[str, str], ...] | None = None

    def param_types_map(self) -> dict[str, str] | None:
        return dict(self.param_types) if self.param_types is not None else None


@dataclass(frozen=True)
class LabelledPair:
    """A pair as the harness holds it: the engine's input and the ground truth label."""

    input: BenchInput
    label: str


@dataclass(frozen=True)
class Settings:
    """How one benchmark run is done."""

    timeout_s: float = 10.0
    jobs: int = 1
    kill_margin_s: float = 5.0


def engine_input(record: Mapping[str, object]) -> BenchInput:
    """Build the engine's input from a raw record's allowed fields only."""
    allowed = {k: record.get(k) for k in ENGINE_FIELDS}
    for key in ("id", "language", "entry", "before", "after"):
        if not isinstance(allowed[key], str):
            raise BenchFormatError(f"field {key!r} missing or not a string")
    raw_types = allowed["param_types"]
    types: tuple[tuple[str, str], ...] | None = None
    if raw_types is not None:
        if not isinstance(raw_types, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in raw_types.items()
        ):
            raise BenchFormatError("field 'param_types' must map names to annotation text")
        types = tuple(raw_types.items())
    changed = allowed["changed"]
    return BenchInput(
        id=str(allowed["id"]),
        language=str(allowed["language"]),
        entry=str(allowed["entry"]),
        before=str(allowed["before"]),
        after=str(allowed["after"]),
        changed=changed if isinstance(changed, str) else None,
        param_types=types,
    )


def load_pairs(path: Path) -> list[LabelledPair]:
    """Read a benchmark JSONL file; a malformed line raises ``BenchFormatError``."""
    pairs: list[LabelledPair] = []
    with path.open(encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
                if not isinstance(record, dict):
                    raise BenchFormatError("not a JSON object")
                pairs.append(LabelledPair(engine_input(record), str(record.get("label", ""))))
            except (json.JSONDecodeError, BenchFormatError) as exc:
                raise BenchFormatError(f"{path}:{number}: {exc}") from exc
    return pairs


def select(pairs: Sequence[LabelledPair], *, ids: str | None, language: str | None,
           limit: int | None) -> list[LabelledPair]:
    """Filter by id pattern (glob; plain text matches a substring) and language, then cap."""
    chosen = [
        p for p in pairs
        if (language is None or p.input.language == language)
        and (ids is None or fnmatch.fnmatchcase(p.input.id, ids) or ids in p.input.id)
    ]
    return chosen[:limit] if limit is not None else chosen


def _counterexample(cex: Counterexample) -> dict[str, object]:
    """``args``, and ``prior`` (calls made first in the same module), the ``receiver`` of a
    method and the ``hash_seed`` of a difference under one seed, when there are any."""
    out: dict[str, object] = {"args": list(cex.args)}
    if cex.prior:
        out["prior"] = [list(c) for c in cex.prior]
    if cex.receiver:
        out["receiver"] = cex.receiver
    if cex.hash_seed is not None:
        out["hash_seed"] = cex.hash_seed
    return out


def result_record(pair_id: str, result: Result, time_s: float) -> dict[str, object]:
    """A result record in the README's format (plus ``method`` and ``detail``)."""
    cex = result.counterexample
    return {
        "id": pair_id,
        "verdict": result.verdict.value,
        "reason": result.reason,
        "counterexample": _counterexample(cex) if cex is not None else None,
        "before": cex.before.describe() if cex is not None else None,
        "after": cex.after.describe() if cex is not None else None,
        "time_s": round(time_s, 3),
        "method": result.method,
        "detail": result.detail,
        # A proof was found, then the tripwire reproduced a difference: the model was wrong.
        "model_defect": cex is not None and cex.found_by == tripwire.FOUND_BY,
    }


def plain_record(pair_id: str, reason: str, detail: str, time_s: float) -> dict[str, object]:
    """An inconclusive result record the harness writes itself (timeout, crash, skip)."""
    return {
        "id": pair_id,
        "verdict": Verdict.INCONCLUSIVE.value,
        "reason": reason,
        "counterexample": None,
        "before": None,
        "after": None,
        "time_s": round(time_s, 3),
        "method": "harness",
        "detail": detail,
        "model_defect": False,
    }


Decide = Callable[[BenchInput, float], Result]


def decide_with_engine(item: BenchInput, timeout_s: float) -> Result:
    """The engine's decision for one pair: only ``item``'s allowed fields are passed."""
    return check_pair(item.before, item.after, item.entry, item.param_types_map(),
                      budget=Budget(timeout_s=timeout_s))


def _engine_worker(item: BenchInput, timeout_s: float, decide: Decide, conn: Connection) -> None:
    """Decide one pair in a worker process and send back its result record."""
    os.setpgid(0, 0)  # the harness kills the whole group, sandbox children included
    start = time.monotonic()
    try:
        result = decide(item, timeout_s)
        record = result_record(item.id, result, time.monotonic() - start)
    except Exception as exc:  # the worker boundary: one pair's crash ends only that pair
        log.exception("engine failed on %s", item.id)
        record = plain_record(item.id, Reason.INTERNAL_ERROR, f"{type(exc).__name__}: {exc}",
                              time.monotonic() - start)
    conn.send(record)
    conn.close()


@dataclass
class _Running:
    item: BenchInput
    process: BaseProcess
    conn: Connection
    start: float


def run_engine(items: Sequence[BenchInput], settings: Settings,
               on_done: Callable[[dict[str, object]], None],
               decide: Decide = decide_with_engine) -> None:
    """Decide every pair with ``decide``, ``settings.jobs`` worker processes at a time.

    A pair still running ``kill_margin_s`` after its budget is killed (with its process
    group) and recorded as inconclusive with reason ``timeout``.
    """
    ctx = multiprocessing.get_context("fork")
    pending = list(reversed(items))
    running: list[_Running] = []
    deadline_after = settings.timeout_s + settings.kill_margin_s
    while pending or running:
        while pending and len(running) < max(1, settings.jobs):
            item = pending.pop()
            receiver, sender = ctx.Pipe(duplex=False)
            proc = ctx.Process(target=_engine_worker, daemon=True,
                               args=(item, settings.timeout_s, decide, sender))
            proc.start()
            sender.close()
            running.append(_Running(item, proc, receiver, time.monotonic()))
        multiprocessing.connection.wait([r.conn for r in running], timeout=0.2)
        still: list[_Running] = []
        for r in running:
            elapsed = time.monotonic() - r.start
            record: dict[str, object] | None = None
            if r.conn.poll():
                try:
                    received = r.conn.recv()
                    record = received if isinstance(received, dict) else None
                except EOFError:
                    record = plain_record(r.item.id, Reason.INTERNAL_ERROR,
                                          "worker died without a result", elapsed)
                if record is None:
                    record = plain_record(r.item.id, Reason.INTERNAL_ERROR,
                                          "worker sent no result record", elapsed)
            elif elapsed > deadline_after:
                _kill_group(r.process)
                record = plain_record(
                    r.item.id, Reason.TIMEOUT,
                    f"killed after {elapsed:.1f}s (budget {settings.timeout_s:g}s)", elapsed)
            elif not r.process.is_alive():
                record = plain_record(
                    r.item.id, Reason.INTERNAL_ERROR,
                    f"worker exited with code {r.process.exitcode} without a result", elapsed)
            if record is None:
                still.append(r)
                continue
            r.process.join(timeout=1.0)
            if r.process.is_alive():
                _kill_group(r.process)
            r.conn.close()
            on_done(record)
        running = still


def _kill_group(proc: BaseProcess) -> None:
    pid = proc.pid
    if pid is None:
        return
    try:
        os.killpg(pid, signal.SIGKILL)
    except ProcessLookupError:
        log.debug("process group %d already gone", pid)
    proc.join(timeout=2.0)


def recheck(item: BenchInput, record: Mapping[str, object], limits: Limits) -> bool:
    """Whether a refuted record's input really shows a difference, run by the harness."""
    cex = record.get("counterexample")
    if not isinstance(cex, dict) or not isinstance(cex.get("args"), list):
        return False
    receiver = cex.get("receiver")
    head = [f"@{receiver}"] if isinstance(receiver, str) and receiver else []
    args = [*head, *(str(a) for a in cex["args"])]
    prior_calls = cex.get("prior")
    prior = (
        [[*head, *(str(a) for a in c)] for c in prior_calls if isinstance(c, list)]
        if isinstance(prior_calls, list) else []
    )
    seed = cex.get("hash_seed")
    return differential.confirm(item.before, item.after, item.entry, args,
                                found_by=RECHECK_FOUND_BY, limits=limits, prior=prior,
                                hash_seed=seed if isinstance(seed, int) else None) is not None


# --- the CrossHair peer ---------------------------------------------------------------

PEER_SCRIPT = r'''
import sys
from crosshair.main import main
sys.argv = ["crosshair"] + sys.argv[1:]
main()
'''


def peer_wrapper(module: str, entry: str, param_types: Mapping[str, str] | None,
                 params: Sequence[str]) -> str:
    """A module whose ``entry`` calls the version's function, annotated with the types.

    CrossHair builds its symbolic inputs from annotations; this gives it the same types
    our engine gets, without rewriting the version's own source.
    """
    types = param_types or {}
    sig = ", ".join(f"{p}: {types[p]}" if p in types else p for p in params)
    call = ", ".join(params)
    return (f"import {module} as _version\n\n"
            f"def {entry.replace('.', '_')}({sig}):\n"
            f"    return _version.{entry}({call})\n")


@dataclass(frozen=True)
class PeerOutcome:
    """What ``crosshair diffbehavior`` said about one pair."""

    id: str
    status: str  # "refuted", "no-difference", "error", "timeout"
    reproduced: bool | None
    args: tuple[str, ...]
    time_s: float
    detail: str

    def record(self) -> dict[str, object]:
        return {"id": self.id, "tool": "crosshair", "status": self.status,
                "reproduced": self.reproduced, "args": list(self.args),
                "time_s": round(self.time_s, 3), "detail": self.detail}


def parse_given(stdout: str, params: Sequence[str]) -> tuple[str, ...] | None:
    """The arguments of the first ``Given: (a=1, b=2),`` line, as literals in order."""
    for line in stdout.splitlines():
        if not line.startswith("Given: ("):
            continue
        inside = line[len("Given: ("):].rstrip().removesuffix(",").removesuffix(")")
        try:
            call = ast.parse(f"f({inside})", mode="eval").body
        except SyntaxError:
            return None
        if not isinstance(call, ast.Call):
            return None
        by_name = {k.arg: ast.unparse(k.value) for k in call.keywords if k.arg}
        if all(p in by_name for p in params):
            return tuple(_spell_floats(by_name[p]) for p in params)
        return None
    return None


def _spell_floats(text: str) -> str:
    tree = ast.parse(text, mode="eval")

    class Spell(ast.NodeTransformer):
        def visit_Name(self, node: ast.Name) -> ast.expr:
            if node.id in ("nan", "inf"):
                return ast.parse(f"float('{node.id}')", mode="eval").body
            return node

    return ast.unparse(Spell().visit(tree))


def run_peer(item: BenchInput, timeout_s: float, limits: Limits) -> PeerOutcome:
    """Run ``crosshair diffbehavior`` on one pair in the sandbox, with the same budget."""
    params = entry_parameters(item.before, item.entry) or []
    types = item.param_types_map()
    name = item.entry.replace(".", "_")
    files = {
        "before.py": item.before,
        "after.py": item.after,
        "peer_before.py": peer_wrapper("before", item.entry, types, params),
        "peer_after.py": peer_wrapper("after", item.entry, types, params),
    }
    per_condition = max(1.0, timeout_s - 1.5)  # start-up of crosshair and z3 counts too
    argv = ["diffbehavior", f"peer_before.{name}", f"peer_after.{name}",
            "--per_condition_timeout", f"{per_condition:g}",
            "--exception_equivalence", "SAME_TYPE"]
    script = f"import sys\nsys.argv[1:] = {argv!r}\n" + PEER_SCRIPT
    peer_limits = Limits(wall_s=timeout_s + 5.0, call_s=limits.call_s,
                         cpu_s=int(timeout_s) + 10, memory_mb=max(limits.memory_mb, 2048),
                         file_size_mb=limits.file_size_mb,
                         processes=max(limits.processes, CHILD_THREADS))
    start = time.monotonic()
    run = run_script(script, files, limits=peer_limits, allow_ctypes=True)
    elapsed = time.monotonic() - start
    if run.timed_out:
        return PeerOutcome(item.id, "timeout", None, (), elapsed, "killed at the wall limit")
    if run.returncode == 1 and "Given: (" in run.stdout:
        args = parse_given(run.stdout, params)
        reproduced = (
            differential.confirm(item.before, item.after, item.entry, args,
                                 found_by=RECHECK_FOUND_BY, limits=limits) is not None
            if args is not None else None
        )
        return PeerOutcome(item.id, "refuted", reproduced, args or (), elapsed,
                           run.stdout.strip().splitlines()[0][:300])
    if run.returncode == 0:
        return PeerOutcome(item.id, "no-difference", None, (), elapsed,
                           " ".join(run.stdout.split())[:300])
    tail = (run.stderr.strip().splitlines() or [""])[-1]
    return PeerOutcome(item.id, "error", None, (), elapsed,
                       f"exit code {run.returncode}: {tail[:300]}")


# --- the summary -------------------------------------------------------------------------


@dataclass(frozen=True)
class LabelStats:
    """Counts and times of one label."""

    label: str
    total: int
    verified: int
    refuted: int
    inconclusive: int
    skipped: int
    wrong: int
    finds: int  # reproduced refutations on pairs labelled equivalent*
    model_defects: int  # refutations by the tripwire after a proof
    median_s: float
    p90_s: float


def percentile(values: Sequence[float], q: float) -> float:
    """The q-th percentile (nearest rank) of ``values``; 0 for none."""
    if not values:
        return 0.0
    ordered = sorted(values)
    rank = max(1, min(len(ordered), round(q / 100 * len(ordered) + 0.4999)))
    return ordered[rank - 1]


def label_stats(label: str, records: Iterable[Mapping[str, object]],
                reproduced: Mapping[str, bool]) -> LabelStats:
    """Count one label's records; ``reproduced`` holds the harness's recheck by id."""
    rs = list(records)
    decided = [r for r in rs if r["reason"] != SKIPPED_REASON]
    verified = [r for r in decided if r["verdict"] == Verdict.VERIFIED.value]
    refuted = [r for r in decided if r["verdict"] == Verdict.REFUTED.value]
    not_reproduced = [r for r in refuted if not reproduced.get(str(r["id"]), False)]
    wrong = len(not_reproduced) + (len(verified) if label == "different" else 0)
    finds = len(refuted) - len(not_reproduced) if label.startswith("equivalent") else 0
    times = [float(str(r["time_s"])) for r in decided]
    return LabelStats(
        label=label, total=len(rs), verified=len(verified), refuted=len(refuted),
        inconclusive=len(decided) - len(verified) - len(refuted),
        skipped=len(rs) - len(decided), wrong=wrong, finds=finds,
        model_defects=sum(1 for r in refuted if r.get("model_defect") is True),
        median_s=statistics.median(times) if times else 0.0,
        p90_s=percentile(times, 90),
    )


def format_summary(stats: Sequence[LabelStats], header: str) -> str:
    """The engine's summary table, one row per label and a total."""
    lines = [header, "",
             f"{'label':<22}{'pairs':>6}{'verified':>10}{'refuted':>9}{'inconcl.':>10}"
             f"{'skipped':>9}{'WRONG':>7}{'finds':>7}{'model defects':>15}{'median s':>10}"
             f"{'p90 s':>8}"]
    for s in stats:
        lines.append(
            f"{s.label:<22}{s.total:>6}{s.verified:>10}{s.refuted:>9}{s.inconclusive:>10}"
            f"{s.skipped:>9}{s.wrong:>7}{s.finds:>7}{s.model_defects:>15}{s.median_s:>10.2f}"
            f"{s.p90_s:>8.2f}")
    lines.append("")
    lines.append("WRONG = verified on a `different` pair, or refuted with an input that does "
                 "not reproduce when the harness re-runs it.")
    lines.append("finds = reproduced refutations on pairs labelled equivalent*.")
    lines.append("model defects = refutations by the tripwire: the model proved the pair, "
                 "then running both versions showed a difference (a bug of the model).")
    return "\n".join(lines)


def format_peer(labels: Mapping[str, str], engine: Mapping[str, Mapping[str, object]],
                peer: Sequence[PeerOutcome]) -> str:
    """Engine and CrossHair side by side, per label."""
    lines = ["", "Side by side with crosshair diffbehavior (same budget per pair):", "",
             f"{'label':<22}{'pairs':>6}{'veribot refuted':>17}{'crosshair refuted':>19}"
             f"{'(reproduced)':>14}{'no diff':>9}{'error':>7}{'timeout':>9}"
             f"{'veribot median s':>18}{'crosshair median s':>20}"]
    by_label: dict[str, list[PeerOutcome]] = {}
    for p in peer:
        by_label.setdefault(labels[p.id], []).append(p)
    for label in sorted(by_label):
        ps = by_label[label]
        ids = {p.id for p in ps}
        ours = [engine[i] for i in ids if i in engine]
        ours_refuted = sum(1 for r in ours if r["verdict"] == Verdict.REFUTED.value)
        ours_median = statistics.median([float(str(r["time_s"])) for r in ours]) if ours else 0.0
        count = {s: sum(1 for p in ps if p.status == s)
                 for s in ("refuted", "no-difference", "error", "timeout")}
        reproduced = sum(1 for p in ps if p.reproduced)
        lines.append(
            f"{label:<22}{len(ps):>6}{ours_refuted:>17}{count['refuted']:>19}{reproduced:>14}"
            f"{count['no-difference']:>9}{count['error']:>7}{count['timeout']:>9}"
            f"{ours_median:>18.2f}{statistics.median(p.time_s for p in ps):>20.2f}")
    return "\n".join(lines)


# --- the command -------------------------------------------------------------------------


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``veribot bench``."""
    parser.add_argument("file", metavar="FILE.jsonl", type=Path,
                        help="benchmark records (shared/bench/README.md format)")
    parser.add_argument("--out", metavar="RESULTS.jsonl", type=Path, default=None,
                        help="where to write result records (default: "
                             "benchmarks/results/<name>-<UTC time>.jsonl)")
    parser.add_argument("--timeout", metavar="SECONDS", type=float, default=10.0,
                        help="budget per pair (default 10)")
    parser.add_argument("--jobs", metavar="N", type=int, default=1,
                        help="pairs decided at once, each in its own process (default 1)")
    parser.add_argument("--peer", choices=["crosshair"], default=None,
                        help="also run this tool on the same pairs and compare")
    parser.add_argument("--language", choices=["python", "c"], default=None,
                        help="only records of this language")
    parser.add_argument("--limit", metavar="N", type=int, default=None,
                        help="only the first N selected records")
    parser.add_argument("--ids", metavar="PATTERN", default=None,
                        help="only ids matching this glob (plain text: substring)")
    parser.add_argument("--without-types", action="store_true",
                        help="drop the records' param_types (for the engine and the peer): "
                             "how far each gets on unannotated code")


def main(args: argparse.Namespace) -> int:
    """Run the benchmark; print progress on stderr and the summary on stdout."""
    try:
        pairs = load_pairs(args.file)
    except OSError as exc:
        sys.stderr.write(f"cannot read {args.file}: {exc.strerror}\n")
        return 2
    except BenchFormatError as exc:
        sys.stderr.write(f"not a benchmark file: {exc}\n")
        return 2
    chosen = select(pairs, ids=args.ids, language=args.language, limit=args.limit)
    if args.without_types:
        chosen = [dataclasses.replace(p, input=dataclasses.replace(p.input, param_types=None))
                  for p in chosen]
    if not chosen:
        sys.stderr.write("no records selected\n")
        return 2
    out = args.out or default_out(args.file)
    out.parent.mkdir(parents=True, exist_ok=True)
    settings = Settings(timeout_s=args.timeout, jobs=max(1, args.jobs),
                        kill_margin_s=max(5.0, args.timeout / 2))
    summary = run_bench(chosen, settings, out, peer=args.peer, progress=sys.stderr)
    sys.stdout.write(summary + "\n")
    sys.stdout.write(f"\nresults: {out}\n")
    return 0


def default_out(input_path: Path) -> Path:
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%SZ")
    return Path("benchmarks") / "results" / f"{input_path.stem}-{stamp}.jsonl"


def run_bench(pairs: Sequence[LabelledPair], settings: Settings, out: Path, *,
              peer: str | None = None, progress: TextIO | None = None) -> str:
    """Run the engine (and a peer) over ``pairs``, write ``out``, return the summary text.

    Writes ``out`` (engine results), ``<out>.summary.txt`` and, with a peer,
    ``<out stem>.crosshair.jsonl``.
    """
    by_id = {p.input.id: p for p in pairs}
    labels = {p.input.id: p.label for p in pairs}
    decidable = [p.input for p in pairs if p.input.language in SUPPORTED_LANGUAGES]
    records: dict[str, dict[str, object]] = {}
    for p in pairs:
        if p.input.language not in SUPPORTED_LANGUAGES:
            detail = SKIP_DETAIL.get(p.input.language,
                                     f"no front end for {p.input.language}")
            records[p.input.id] = plain_record(p.input.id, SKIPPED_REASON, detail, 0.0)
    done = [0]
    total = len(decidable)

    def on_done(record: dict[str, object]) -> None:
        records[str(record["id"])] = record
        done[0] += 1
        if progress is not None:
            progress.write(f"[{done[0]}/{total}] {record['id']}: {record['verdict']} "
                           f"({record['reason']}) {record['time_s']}s\n")
            progress.flush()

    started = time.monotonic()
    run_engine(decidable, settings, on_done)
    engine_wall = time.monotonic() - started
    limits = Limits()
    reproduced: dict[str, bool] = {}
    for pair_id, record in records.items():
        if record["verdict"] == Verdict.REFUTED.value:
            reproduced[pair_id] = recheck(by_id[pair_id].input, record, limits)
            record["reproduced"] = reproduced[pair_id]
    ordered = [records[p.input.id] for p in pairs]
    with out.open("w", encoding="utf-8") as f:
        for record in ordered:
            f.write(json.dumps(record) + "\n")
    label_order = sorted({p.label for p in pairs})
    stats = [label_stats(label, (records[p.input.id] for p in pairs if p.label == label),
                         reproduced) for label in label_order]
    header = (f"veribot bench: {len(pairs)} pairs, budget {settings.timeout_s:g}s, "
              f"jobs {settings.jobs}, commit {_commit()}, engine wall {engine_wall:.0f}s")
    summary = format_summary(stats, header)
    if peer == "crosshair":
        outcomes = run_peers(decidable, settings, limits, progress)
        peer_out = out.with_name(out.stem + ".crosshair.jsonl")
        with peer_out.open("w", encoding="utf-8") as f:
            for o in outcomes:
                f.write(json.dumps(o.record()) + "\n")
        summary += "\n" + format_peer(labels, records, outcomes)
        summary += f"\n\ncrosshair results: {peer_out}"
    out.with_name(out.name + ".summary.txt").write_text(summary + "\n", encoding="utf-8")
    return summary


def run_peers(items: Sequence[BenchInput], settings: Settings, limits: Limits,
              progress: TextIO | None) -> list[PeerOutcome]:
    """Run CrossHair on every pair, ``settings.jobs`` at a time (each is a sandbox child)."""
    def one(item: BenchInput) -> PeerOutcome:
        outcome = run_peer(item, settings.timeout_s, limits)
        if progress is not None:
            progress.write(f"[crosshair] {item.id}: {outcome.status} {outcome.time_s:.2f}s\n")
            progress.flush()
        return outcome

    with ThreadPoolExecutor(max_workers=max(1, settings.jobs)) as pool:
        return list(pool.map(one, items))


def _commit() -> str:
    try:
        done = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True, timeout=5, check=False,
                              cwd=Path(__file__).resolve().parent)
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    return done.stdout.strip() or "unknown"
