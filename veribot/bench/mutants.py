"""The mutation soundness check behind ``veribot bench-mutants``.

For the pairs of benchmark files labelled ``equivalent*``, behaviour-changing mutants of
the after version are made with ``ast`` transformations of the entry function:
operators (``+``/``-``, ``*``/``//``, ``%``, ``and``/``or``), constants (``c ± 1``,
``""``/``"a"``, ``True``/``False``), comparisons (``<``/``<=``, ``==``/``!=``, ``in``,
``is``), defaults, the signature (a renamed parameter, two swapped), exception types
(raised and caught) and string escapes (``"\\u00e9"`` for ``"\\u00e8"``, a non-BMP
character). The engine decides each (before, mutant); every mutant it verifies then gets
a long differential run in the sandbox (the tripwire's generator with thousands of draws,
and the random search of ``difftest``) and, where the parameter names differ, a keyword
call of both versions, since a parameter's name is behaviour for keyword calls. A
verified mutant that a long run shows different is a wrong "verified": there must be
none. A mutant that is truly equivalent (a dead constant changed) may be verified; the
long run is what tells the two apart.
"""

from __future__ import annotations

import argparse
import ast
import copy
import datetime as dt
import json
import random
import statistics
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from veribot.bench.equivalence import (
    BenchFormatError,
    BenchInput,
    Decide,
    LabelledPair,
    Settings,
    _commit,
    decide_with_engine,
    load_pairs,
    run_engine,
)
from veribot.checks.lang import pysource
from veribot.checks.lang.pytypes import PyType, from_annotation, parse_type
from veribot.checks.sandbox import Limits, run_script
from veribot.checks.search import difftest, tripwire
from veribot.checks.verdict import Counterexample, Verdict

_BINOPS: dict[type[ast.operator], type[ast.operator]] = {
    ast.Add: ast.Sub, ast.Sub: ast.Add, ast.Mult: ast.FloorDiv, ast.FloorDiv: ast.Mult,
    ast.Mod: ast.FloorDiv, ast.Div: ast.Mult, ast.Pow: ast.Mult, ast.BitAnd: ast.BitOr,
    ast.BitOr: ast.BitAnd, ast.BitXor: ast.BitOr, ast.LShift: ast.RShift,
    ast.RShift: ast.LShift,
}
_CMPOPS: dict[type[ast.cmpop], type[ast.cmpop]] = {
    ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt, ast.Eq: ast.NotEq,
    ast.NotEq: ast.Eq, ast.In: ast.NotIn, ast.NotIn: ast.In, ast.Is: ast.IsNot,
    ast.IsNot: ast.Is,
}
_EXCEPTIONS = {
    "ValueError": "TypeError", "TypeError": "ValueError", "IndexError": "KeyError",
    "KeyError": "IndexError", "ZeroDivisionError": "ArithmeticError",
    "ArithmeticError": "ValueError", "Exception": "ValueError", "RuntimeError": "ValueError",
    "AssertionError": "ValueError", "StopIteration": "RuntimeError",
    "OverflowError": "ValueError", "AttributeError": "TypeError",
    "NotImplementedError": "RuntimeError", "LookupError": "ValueError",
}


# ----------------------------------------------------------------------------- mutants


@dataclass(frozen=True)
class Mutant:
    """One mutated after version."""

    operator: str  # "operator", "constant", "comparison", "default", "signature", ...
    description: str
    line: int | None
    source: str
    param_types: tuple[tuple[str, str], ...] | None


@dataclass(frozen=True)
class _Site:
    index: int  # position of the node in ast.walk(function)
    operator: str
    variant: int


_Value = str | bytes | int | float | complex | None


def _constant_variants(value: object) -> list[tuple[str, _Value]]:
    if isinstance(value, bool):
        return [("constant", not value)]
    if isinstance(value, int):
        return [("constant", value + 1), ("constant", value - 1)]
    if isinstance(value, float):
        return [("constant", value + 1.0)]
    if isinstance(value, str):
        out: list[tuple[str, _Value]] = [("constant", "a" if value == "" else "")]
        wide = next((ch for ch in value if ord(ch) > 127), None)
        if wide is not None:
            out.append(("string escape", value.replace(wide, chr(ord(wide) - 1), 1)))
        out.append(("string escape", value + "\u00e9"))
        out.append(("string escape", "\U0001f600" + value))
        return out
    if value is None:
        return [("constant", 0)]
    return []


def _sites(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> list[_Site]:
    skip = tripwire.annotation_and_docstring_ids(ast.Module(body=[fn], type_ignores=[]))
    defaults = {id(d) for d in [*fn.args.defaults, *fn.args.kw_defaults] if d is not None}
    # A string standing alone as a statement is dead: changing it changes nothing.
    skip.update(id(n.value) for n in ast.walk(fn) if isinstance(n, ast.Expr))
    sites: list[_Site] = []
    if fn.args.args:
        sites.append(_Site(0, "signature", 0))  # rename a parameter
    if len([*fn.args.posonlyargs, *fn.args.args]) >= 2:
        sites.append(_Site(0, "signature", 1))  # swap the first two positional ones
    for i, node in enumerate(ast.walk(fn)):
        if id(node) in skip:
            continue
        if isinstance(node, ast.BoolOp) or (
            isinstance(node, ast.BinOp | ast.AugAssign) and type(node.op) in _BINOPS
        ):
            sites.append(_Site(i, "operator", 0))
        elif isinstance(node, ast.Compare):
            sites.extend(_Site(i, "comparison", k) for k, op in enumerate(node.ops)
                         if type(op) in _CMPOPS)
        elif isinstance(node, ast.Constant):
            for k, (kind, _) in enumerate(_constant_variants(node.value)):
                sites.append(_Site(i, "default" if id(node) in defaults else kind, k))
        elif isinstance(node, ast.Raise | ast.ExceptHandler):
            target = node.exc if isinstance(node, ast.Raise) else node.type
            if isinstance(target, ast.Call):
                target = target.func
            if isinstance(target, ast.Name) and target.id in _EXCEPTIONS:
                sites.append(_Site(i, "exception type", 0))
    return sites


def _apply(tree: ast.Module, entry: str, site: _Site,
           param_types: Mapping[str, str] | None) -> tuple[str, dict[str, str] | None] | None:
    """Mutate ``tree`` in place at ``site``; the description and the new param_types."""
    fn = pysource.definition(tree, entry)
    if fn is None:
        return None
    types = dict(param_types) if param_types is not None else None
    if site.operator == "signature":
        return _mutate_signature(fn, site.variant, types), types
    node = list(ast.walk(fn))[site.index]
    if isinstance(node, ast.BinOp | ast.AugAssign):
        old = type(node.op)
        node.op = _BINOPS[old]()
        return f"{_op_text(old)} -> {_op_text(type(node.op))}", types
    if isinstance(node, ast.BoolOp):
        was_and = isinstance(node.op, ast.And)
        node.op = ast.Or() if was_and else ast.And()
        return ("and -> or" if was_and else "or -> and"), types
    if isinstance(node, ast.Compare):
        old_cmp = type(node.ops[site.variant])
        node.ops[site.variant] = _CMPOPS[old_cmp]()
        return f"{_op_text(old_cmp)} -> {_op_text(type(node.ops[site.variant]))}", types
    if isinstance(node, ast.Constant):
        _, new = _constant_variants(node.value)[site.variant]
        old_text = _short(node.value)
        node.value = new
        return f"{old_text} -> {_short(new)}", types
    if isinstance(node, ast.Raise | ast.ExceptHandler):
        target = node.exc if isinstance(node, ast.Raise) else node.type
        if isinstance(target, ast.Call):
            target = target.func
        assert isinstance(target, ast.Name)
        old_name, target.id = target.id, _EXCEPTIONS[target.id]
        where = "raise" if isinstance(node, ast.Raise) else "except"
        return f"{where} {old_name} -> {where} {target.id}", types
    return None


def _mutate_signature(fn: ast.FunctionDef | ast.AsyncFunctionDef, variant: int,
                      types: dict[str, str] | None) -> str:
    if variant == 0:
        param = fn.args.args[0]
        old, new = param.arg, param.arg + "_renamed"
        for node in ast.walk(fn):
            if isinstance(node, ast.Name) and node.id == old:
                node.id = new
            elif isinstance(node, ast.arg) and node.arg == old:
                node.arg = new
        if types is not None and old in types:
            types[new] = types[old]  # the before version keeps the old name
        return f"parameter `{old}` renamed `{new}`"
    positional = [*fn.args.posonlyargs, *fn.args.args]
    a, b = positional[0], positional[1]
    a.arg, b.arg = b.arg, a.arg
    a.annotation, b.annotation = b.annotation, a.annotation
    return f"parameters `{b.arg}` and `{a.arg}` swapped"


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _op_text(op: type[ast.AST]) -> str:
    texts = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.FloorDiv: "//", ast.Mod: "%",
             ast.Div: "/", ast.Pow: "**", ast.BitAnd: "&", ast.BitOr: "|", ast.BitXor: "^",
             ast.LShift: "<<", ast.RShift: ">>", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">",
             ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!=", ast.In: "in", ast.NotIn: "not in",
             ast.Is: "is", ast.IsNot: "is not"}
    return texts.get(op, op.__name__)


def mutants(item: BenchInput, count: int, rng: random.Random) -> list[Mutant]:
    """Up to ``count`` distinct mutants of ``item.after``, spread over the operators."""
    try:
        tree = ast.parse(item.after)
    except SyntaxError:
        return []
    fn = pysource.definition(tree, item.entry)
    if fn is None:
        return []
    original = ast.unparse(tree)
    by_operator: dict[str, list[_Site]] = {}
    for site in _sites(fn):
        by_operator.setdefault(site.operator, []).append(site)
    for sites in by_operator.values():
        rng.shuffle(sites)
    order = sorted(by_operator)
    rng.shuffle(order)
    out: list[Mutant] = []
    seen = {original}
    for site in _round_robin([by_operator[k] for k in order]):
        if len(out) >= count:
            break
        copy_tree = copy.deepcopy(tree)
        applied = _apply(copy_tree, item.entry, site, item.param_types_map())
        if applied is None:
            continue
        description, types = applied
        source = ast.unparse(copy_tree) + "\n"
        try:
            compile(source, "<mutant>", "exec")
        except (SyntaxError, ValueError):
            continue
        if source in seen:
            continue
        seen.add(source)
        line = getattr(list(ast.walk(fn))[site.index], "lineno", None)
        out.append(Mutant(site.operator, description, line, source,
                          tuple(types.items()) if types is not None else None))
    return out


def _round_robin(groups: Sequence[Sequence[_Site]]) -> Iterator[_Site]:
    for i in range(max((len(g) for g in groups), default=0)):
        for g in groups:
            if i < len(g):
                yield g[i]


# ----------------------------------------------------------------------------- long run


@dataclass(frozen=True)
class LongRun:
    """The differential run of a verified mutant: inputs tried and a difference, if any."""

    inputs: int
    counterexample: Counterexample | None
    signature: str | None  # a keyword call that differs (parameter names), if one does
    time_s: float


def long_run(before: str, after: str, entry: str, param_types: Mapping[str, str] | None,
             *, inputs: int, seed: int, time_s: float) -> LongRun:
    """Thousands of inputs on both versions, and the signatures compared."""
    start = time.monotonic()
    signature = signature_difference(before, after, entry, param_types)
    confirm = Limits(wall_s=10.0, call_s=2.0)
    wire = tripwire.check(before, after, entry, param_types, time_s=time_s,
                          max_inputs=inputs, confirm_limits=confirm, seed=seed)
    tried = wire.inputs_run
    found = wire.counterexample
    if found is None:
        searched = difftest.search(before, after, entry, search_types(before, param_types, entry),
                                   deadline_s=time_s, limits=confirm)
        tried += searched.inputs_tried
        found = searched.counterexample
    return LongRun(tried, found, signature, time.monotonic() - start)


def search_types(source: str, param_types: Mapping[str, str] | None,
                 entry: str) -> dict[str, PyType]:
    """The parameter types ``difftest`` searches with, as the engine gives them."""
    try:
        fn = pysource.definition(ast.parse(source), entry)
    except SyntaxError:
        fn = None
    given = {k: parse_type(v) for k, v in (param_types or {}).items()}
    if fn is None:
        return given
    types: dict[str, PyType] = {}
    for a in [*fn.args.posonlyargs, *fn.args.args]:
        types[a.arg] = given.get(a.arg) or from_annotation(a.annotation)
    return types


def signature_difference(before: str, after: str, entry: str,
                         param_types: Mapping[str, str] | None = None) -> str | None:
    """A keyword call that tells the versions apart by parameter names, run in the sandbox.

    Each version's parameter names are used in turn to call both versions by keyword
    (ordinary values of the declared types); a sentence if one raises TypeError where
    the other does not.
    """
    calls = []
    for source, other in ((before, after), (after, before)):
        params = tripwire.parameters(source, other, entry, param_types)
        if params is None:
            return None
        consts = tripwire.Constants.of(before, after)
        calls.append({p.name: tripwire.literal(tripwire.base_value(p.domain, consts))
                      for p in params})
    if calls[0].keys() == calls[1].keys():
        return None
    files = {"before.py": before, "after.py": after,
             "spec.json": json.dumps({"entry": entry, "calls": calls})}
    run = run_script(_KEYWORD_SCRIPT, files, limits=Limits(wall_s=10.0, call_s=2.0))
    outcome = _keyword_outcome(run.stdout)
    if outcome is None:
        return None
    for kwargs, a, b in zip(calls, outcome["before"], outcome["after"], strict=False):
        if a != b and "raises TypeError" in (a, b):
            text = ", ".join(f"{k}={v}" for k, v in kwargs.items())
            return (f"keyword call {entry}({text}): the before version {a}, "
                    f"the after version {b}")
    return None


_KEYWORD_SCRIPT = difftest.DRIVER_PRELUDE + r"""
import ast
result = {}
for label in ("before", "after"):
    fn = resolve(load("subject", label + ".py"), spec["entry"])
    outcomes = []
    for kwargs in spec["calls"]:
        try:
            fn(**{k: ast.literal_eval(v) for k, v in kwargs.items()})
            outcomes.append("returns")
        except Exception as exc:
            outcomes.append("raises " + type(exc).__name__)
    result[label] = outcomes
emit(result)
"""


def _keyword_outcome(stdout: str) -> dict[str, list[str]] | None:
    lines = [line for line in stdout.splitlines() if line.startswith(difftest.RESULT_MARKER)]
    if not lines:
        return None
    try:
        data = json.loads(lines[-1][len(difftest.RESULT_MARKER):])
    except json.JSONDecodeError:
        return None
    if not isinstance(data, dict):
        return None
    before, after = data.get("before"), data.get("after")
    if not isinstance(before, list) or not isinstance(after, list):
        return None
    return {"before": [str(x) for x in before], "after": [str(x) for x in after]}


# ----------------------------------------------------------------------------- the run


@dataclass(frozen=True)
class MutantSettings:
    """How one mutation run is done."""

    timeout_s: float = 10.0
    mutants_per_pair: int = 5
    seed: int = 0
    long_inputs: int = 3000
    long_time_s: float = 5.0
    jobs: int = 1


def equivalent_pairs(paths: Sequence[Path]) -> list[LabelledPair]:
    """The Python pairs labelled ``equivalent*`` of the files, in order."""
    pairs: list[LabelledPair] = []
    for path in paths:
        pairs.extend(p for p in load_pairs(path)
                     if p.label.startswith("equivalent") and p.input.language == "python")
    return pairs


def run_mutants(pairs: Sequence[LabelledPair], settings: MutantSettings, out: Path, *,
                progress: TextIO | None = None, decide: Decide = decide_with_engine) -> str:
    """Make the mutants, decide them, run each verified one long; write ``out``, return
    the summary (also written to ``<out>.summary.txt``)."""
    rng = random.Random(settings.seed)
    items: list[BenchInput] = []
    made: dict[str, tuple[LabelledPair, Mutant]] = {}
    for pair in pairs:
        for k, mutant in enumerate(mutants(pair.input, settings.mutants_per_pair, rng)):
            mid = f"{pair.input.id}#m{k}"
            made[mid] = (pair, mutant)
            items.append(BenchInput(mid, "python", pair.input.entry, pair.input.before,
                                    mutant.source, pair.input.changed, mutant.param_types))
    records: dict[str, dict[str, object]] = {}

    def on_done(record: dict[str, object]) -> None:
        mid = str(record["id"])
        pair, mutant = made[mid]
        full = {"id": mid, "pair": pair.input.id, "operator": mutant.operator,
                "mutation": mutant.description, "line": mutant.line, **record,
                "long_run": None, "verified_but_different": False}
        if record["verdict"] == Verdict.VERIFIED.value:
            run = long_run(pair.input.before, mutant.source, pair.input.entry,
                           dict(mutant.param_types) if mutant.param_types else None,
                           inputs=settings.long_inputs, seed=settings.seed + len(records),
                           time_s=settings.long_time_s)
            cex = run.counterexample
            full["long_run"] = {
                "inputs": run.inputs, "time_s": round(run.time_s, 3), "signature": run.signature,
                "counterexample": None if cex is None else {
                    "args": list(cex.args), "before": cex.before.describe(),
                    "after": cex.after.describe(), "difference": cex.difference}}
            full["verified_but_different"] = cex is not None or run.signature is not None
        if full["verified_but_different"]:
            full["source"] = mutant.source
        records[mid] = full
        if progress is not None:
            flag = "  VERIFIED-BUT-DIFFERENT" if full["verified_but_different"] else ""
            progress.write(f"[{len(records)}/{len(items)}] {mid} ({mutant.description}): "
                           f"{record['verdict']} ({record['reason']}){flag}\n")
            progress.flush()

    started = time.monotonic()
    run_engine(items, Settings(timeout_s=settings.timeout_s, jobs=settings.jobs,
                               kill_margin_s=max(5.0, settings.timeout_s / 2)), on_done,
               decide=decide)
    wall = time.monotonic() - started
    ordered = [records[i.id] for i in items if i.id in records]
    with out.open("w", encoding="utf-8") as f:
        for record in ordered:
            f.write(json.dumps(record) + "\n")
    header = (f"veribot bench-mutants: {len(pairs)} equivalent pairs, {len(items)} mutants, "
              f"budget {settings.timeout_s:g}s, seed {settings.seed}, commit {_commit()}, "
              f"wall {wall:.0f}s")
    summary = format_summary(ordered, header)
    out.with_name(out.name + ".summary.txt").write_text(summary + "\n", encoding="utf-8")
    return summary


def format_summary(records: Sequence[Mapping[str, object]], header: str) -> str:
    """Counts overall and by operator, and every verified-but-different mutant in full."""
    lines = [header, "",
             f"{'operator':<16}{'tried':>7}{'verified':>10}{'refuted':>9}{'(model defects)':>17}"
             f"{'inconcl.':>10}{'verified-but-different':>24}"]
    groups: dict[str, list[Mapping[str, object]]] = {}
    for r in records:
        groups.setdefault(str(r["operator"]), []).append(r)
    for name, rs in [*sorted(groups.items()), ("all", list(records))]:
        count = {v.value: sum(1 for r in rs if r["verdict"] == v.value) for v in Verdict}
        defects = sum(1 for r in rs if r.get("model_defect") is True)
        wrong = sum(1 for r in rs if r.get("verified_but_different") is True)
        lines.append(f"{name:<16}{len(rs):>7}{count['verified']:>10}{count['refuted']:>9}"
                     f"{defects:>17}{count['inconclusive']:>10}{wrong:>24}")
    runs = [r["long_run"] for r in records if isinstance(r.get("long_run"), dict)]
    inputs = [int(str(x["inputs"])) for x in runs if isinstance(x, dict)]
    lines.append("")
    if inputs:
        lines.append(f"long differential runs: {len(inputs)}, inputs per run: median "
                     f"{statistics.median(inputs):g}, min {min(inputs)}")
    lines.append("model defects = proven by the model, then refuted by the tripwire.")
    lines.append("verified-but-different = verified, then shown different by the long run "
                 "(must be 0).")
    for r in records:
        if r.get("verified_but_different") is not True:
            continue
        run = r["long_run"]
        lines += ["", f"VERIFIED BUT DIFFERENT: {r['id']} ({r['mutation']}, line {r['line']})"]
        if isinstance(run, dict):
            if run.get("signature"):
                lines.append(f"  {run['signature']}")
            cex = run.get("counterexample")
            if isinstance(cex, dict):
                lines.append(f"  input ({', '.join(str(a) for a in cex['args'])}): "
                             f"{cex['difference']}")
        lines += ["  mutant:", *("    " + line for line in str(r.get("source")).splitlines())]
    return "\n".join(lines)


# ----------------------------------------------------------------------------- the command


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``veribot bench-mutants``."""
    parser.add_argument("files", metavar="FILE.jsonl", type=Path, nargs="+",
                        help="benchmark records; the pairs labelled equivalent* are mutated")
    parser.add_argument("--out", metavar="RESULTS.jsonl", type=Path, default=None,
                        help="where to write result records (default: "
                             "benchmarks/results/mutants-<UTC time>.jsonl)")
    parser.add_argument("--limit", metavar="N", type=int, default=None,
                        help="only the first N equivalent pairs")
    parser.add_argument("--mutants-per-pair", metavar="N", type=int, default=5,
                        help="mutants made of each pair (default 5)")
    parser.add_argument("--timeout", metavar="SECONDS", type=float, default=10.0,
                        help="engine budget per mutant (default 10)")
    parser.add_argument("--seed", metavar="N", type=int, default=0,
                        help="seed for choosing mutants and the long runs' draws (default 0)")
    parser.add_argument("--long-inputs", metavar="N", type=int, default=3000,
                        help="tripwire inputs in each verified mutant's long run (default "
                             "3000; random search adds its own)")
    parser.add_argument("--jobs", metavar="N", type=int, default=1,
                        help="mutants decided at once, each in its own process (default 1)")


def main(args: argparse.Namespace) -> int:
    """Run the mutation check; progress on stderr, the summary on stdout."""
    try:
        pairs = equivalent_pairs(args.files)
    except OSError as exc:
        sys.stderr.write(f"cannot read {exc.filename}: {exc.strerror}\n")
        return 2
    except BenchFormatError as exc:
        sys.stderr.write(f"not a benchmark file: {exc}\n")
        return 2
    if args.limit is not None:
        pairs = pairs[: args.limit]
    if not pairs:
        sys.stderr.write("no pairs labelled equivalent* selected\n")
        return 2
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%SZ")
    out = args.out or Path("benchmarks") / "results" / f"mutants-{stamp}.jsonl"
    out.parent.mkdir(parents=True, exist_ok=True)
    settings = MutantSettings(timeout_s=args.timeout, mutants_per_pair=args.mutants_per_pair,
                              seed=args.seed, long_inputs=args.long_inputs,
                              jobs=max(1, args.jobs))
    summary = run_mutants(pairs, settings, out, progress=sys.stderr)
    sys.stdout.write(summary + "\n")
    sys.stdout.write(f"\nresults: {out}\n")
    return 0
