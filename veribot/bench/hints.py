"""Hints on a benchmark: which units hints complete, and how many hints the solver refuses.

``python -m veribot.bench.hints FILE.jsonl [--timeout S] [--out FILE]`` decides each pair
of a benchmark file (the records of ``shared/bench/README.md``) with the engine alone;
where the engine stops where a hint can help (``hints.check.engine_stopped``), it writes
hints the way a model would, from the code's text alone (``write_hints``: plausible
guesses, many of them wrong), checks them with the engine (``hints.check``), and prints:

- the units the engine stopped on, and those proven only with hints (verified, method
  ``z3+hints``);
- each hint's fate: proven, refuted, unproven, rejected, not reached;
- for pairs labelled ``different``: any verified with hints is a **WRONG** verdict (the
  soundness rule says this must be 0).

The writer is deterministic (no model, no key): a stand-in for recorded model answers,
so the figures can be rerun. It never sees the label.
"""

from __future__ import annotations

import argparse
import ast
import collections
import io
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from veribot.checks.equivalence import Budget, check_pair
from veribot.checks.hints.check import check_hints, engine_stopped
from veribot.checks.hints.format import Parsed, parse_hints
from veribot.checks.lang.pyprove import find_function
from veribot.checks.lang.pysource import parse
from veribot.checks.verdict import Verdict

MAX_WRITTEN = 32


def write_hints(before: str, after: str, entry: str) -> list[dict[str, object]]:
    """Hints as a model might write them from the two versions' text: the same-named
    variables of the loops correspond, a renamed accumulator equals its counterpart (or
    twice it, its negation, one more), two counters moving in opposite directions add up
    to a parameter (or its length), and each helper called returns a non-negative number.
    Many are wrong; the solver decides.
    """
    try:
        fn_a = find_function(parse(before), entry)
        fn_b = find_function(parse(after), entry)
    except SyntaxError:
        return []
    if fn_a is None or fn_b is None:
        return []
    vars_a, vars_b = _loop_variables(fn_a), _loop_variables(fn_b)
    params = [a.arg for a in fn_a.args.args]
    hints: list[dict[str, object]] = []
    same = {v: v for v in vars_a if v in vars_b}
    if same:
        hints.append({"kind": "correspondence", "variables": same})
    for a in vars_a:
        for b in vars_b:
            if a != b:
                hints.append({"kind": "invariant", "expr": f"before.{a} == after.{b}"})
            for scaled in (f"2 * before.{a}", f"-before.{a}", f"before.{a} + 1"):
                hints.append({"kind": "invariant", "expr": f"after.{b} == {scaled}"})
    for a in vars_a:
        for b in vars_b:
            for p in params:
                for whole in (f"before.{p}", f"len(before.{p})"):
                    hints.append({"kind": "invariant",
                                  "expr": f"before.{a} + after.{b} == {whole}"})
    helpers = sorted({n.func.id for fn in (fn_a, fn_b) for n in ast.walk(fn)
                      if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
                      and n.func.id not in ("len", "range", "min", "max", "abs", "enumerate",
                                            "sum", "list", "tuple", "sorted", "print")})
    for h in helpers:
        hints.append({"kind": "lemma", "function": h, "ensures": "result >= 0"})
    return hints[:MAX_WRITTEN]


def _loop_variables(fn: ast.FunctionDef) -> list[str]:
    names: list[str] = []
    for loop in (n for n in ast.walk(fn) if isinstance(n, ast.For | ast.While)):
        for node in ast.walk(loop):
            if (isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store)
                    and node.id not in names):
                names.append(node.id)
    return names


def run(records: Sequence[dict[str, Any]], timeout_s: float, out: Any,
        execute: bool = True) -> dict[str, Any]:
    """Decide each record, with written hints where the engine stopped; the summary.
    ``execute=False``: proof only (nothing is refuted, so more units stop and every
    different pair relies on the hints being checked)."""
    budget = Budget(timeout_s=timeout_s, execute=execute)
    summary: dict[str, Any] = {"pairs": collections.Counter(), "stopped": collections.Counter(),
                               "proven_with_hints": collections.Counter(),
                               "refuted_on_rerun": collections.Counter(),
                               "wrong": 0, "hints": collections.Counter(), "units": []}
    for record in records:
        label = record.get("label", "")
        summary["pairs"][label] += 1
        types = record.get("param_types")
        start = time.monotonic()
        alone = check_pair(record["before"], record["after"], record["entry"], types,
                           budget=budget)
        row: dict[str, Any] = {"id": record["id"], "label": label,
                               "engine": [alone.verdict.value, alone.reason]}
        if engine_stopped(alone):
            summary["stopped"][label] += 1
            written = write_hints(record["before"], record["after"], record["entry"])
            parsed: Parsed = parse_hints(written)
            checked = check_hints(record["before"], record["after"], record["entry"], parsed,
                                  param_types=types, budget=budget)
            for r in checked.hints:
                summary["hints"][r.status.value] += 1
            summary["hints"]["rejected"] += len(checked.rejected)
            row.update(hints=len(written), with_hints=[checked.result.verdict.value,
                                                       checked.result.reason],
                       method=checked.result.method,
                       fates=collections.Counter(r.status.value for r in checked.hints))
            if checked.proven_with_hints:
                summary["proven_with_hints"][label] += 1
                if label == "different":
                    summary["wrong"] += 1
            elif checked.result.verdict is Verdict.REFUTED:
                summary["refuted_on_rerun"][label] += 1
        row["time_s"] = round(time.monotonic() - start, 2)
        out.write(json.dumps(row) + "\n")
        out.flush()
        summary["units"].append(row)
    return summary


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m veribot.bench.hints",
                                description=__doc__.split("\n\n")[0] if __doc__ else None)
    p.add_argument("files", nargs="+", type=Path, metavar="FILE.jsonl")
    p.add_argument("--timeout", type=float, default=10.0, help="seconds per pair (default 10)")
    p.add_argument("--out", type=Path, default=None, help="one JSON line per pair")
    p.add_argument("--only", default=None, help="ids containing this text")
    p.add_argument("--no-execute", action="store_true", help="proof only, never run the code")
    args = p.parse_args(argv)
    records = [json.loads(line) for f in args.files
               for line in f.read_text(encoding="utf-8").splitlines() if line.strip()]
    records = [r for r in records if r.get("language", "python") == "python"
               and (args.only is None or args.only in r["id"])]
    if args.out is not None:
        with args.out.open("w", encoding="utf-8") as sink:
            s = run(records, args.timeout, sink, not args.no_execute)
    else:
        s = run(records, args.timeout, io.StringIO(), not args.no_execute)
    print("| label | pairs | engine stopped | proven only with hints | refuted on the rerun "
          "| WRONG |")
    print("| --- | --- | --- | --- | --- | --- |")
    for label in sorted(s["pairs"]):
        wrong = s["wrong"] if label == "different" else 0
        print(f"| {label} | {s['pairs'][label]} | {s['stopped'][label]} | "
              f"{s['proven_with_hints'][label]} | {s['refuted_on_rerun'][label]} | {wrong} |")
    fates = ", ".join(f"{k} {v}" for k, v in sorted(s["hints"].items()))
    print(f"\nhints written: {sum(s['hints'].values())} ({fates})")
    return 1 if s["wrong"] else 0


if __name__ == "__main__":
    sys.exit(main())
