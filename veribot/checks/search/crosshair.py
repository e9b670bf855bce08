"""Symbolic search for a difference with CrossHair's ``diff_behavior``, in the sandbox.

CrossHair (crosshair-tool) executes the code it explores, so it runs inside a sandboxed
child (``sandbox.run_script``) that imports the two versions as separate modules, gives
the entry function the parameter types we know, and prints the distinguishing inputs it
found as argument literals. The parent confirms each with ``differential.confirm``
(``found_by="crosshair"``); only a confirmed difference is returned. Like random testing
this can refute, never verify.
"""

from __future__ import annotations

import json
import logging
import math
import time
from collections.abc import Mapping

from veribot.checks.lang.pytypes import PyType
from veribot.checks.sandbox import DEFAULT_LIMITS, Limits, run_script
from veribot.checks.search.difftest import (
    DRIVER_PRELUDE,
    SearchOutcome,
    build_spec,
    confirm_candidates,
    parse_report,
)

log = logging.getLogger(__name__)

FOUND_BY = "crosshair"

_STARTUP_S = 1.5  # importing crosshair and z3 in the child
_CONFIRM_RESERVE_S = 1.0
# CrossHair and Z3 reserve much address space; their child gets at least this much.
CHILD_MEMORY_MB = 2048
# Z3 starts threads (for its timeouts), and the sandbox counts threads as processes.
CHILD_THREADS = 8


def search(
    before_src: str,
    after_src: str,
    entry: str,
    param_types: Mapping[str, PyType],
    *,
    deadline_s: float,
    limits: Limits = DEFAULT_LIMITS,
) -> SearchOutcome:
    """Ask CrossHair for an input on which ``entry`` differs; confirm it in the sandbox."""
    start = time.monotonic()
    time_cap = max(0.5, deadline_s - _STARTUP_S - _CONFIRM_RESERVE_S)
    spec, _names, why_not = build_spec(
        before_src, after_src, entry, param_types, time_cap_s=time_cap, call_s=limits.call_s
    )
    if why_not:
        return SearchOutcome(None, 0, why_not.replace("random testing", "crosshair"))
    child_limits = Limits(
        wall_s=time_cap + _STARTUP_S + 3.0,
        call_s=limits.call_s,
        cpu_s=max(limits.cpu_s, math.ceil(time_cap) + 10),
        memory_mb=max(limits.memory_mb, CHILD_MEMORY_MB),
        file_size_mb=limits.file_size_mb,
        processes=max(limits.processes, CHILD_THREADS),
    )
    files = {"before.py": before_src, "after.py": after_src, "spec.json": json.dumps(spec)}
    run = run_script(DRIVER, files, limits=child_limits, allow_ctypes=True)
    report = parse_report(run.stdout)
    if report is None:
        why = "timed out" if run.timed_out else f"exit code {run.returncode}"
        tail = run.stderr.strip().splitlines()[-1:] or [""]
        note = f"crosshair gave no result ({why}) {tail[0]}".strip()
        log.info("crosshair child failed: %s", note)
        return SearchOutcome(None, 0, note)
    if report.status != "found" or not report.candidates:
        return SearchOutcome(None, report.tried, report.message or "no difference found")
    cex, tried, undecided = confirm_candidates(
        before_src,
        after_src,
        entry,
        report.candidates,
        found_by=FOUND_BY,
        limits=limits,
        until=start + deadline_s,
    )
    if cex is None:
        note = f"{tried} input(s) found by crosshair did not reproduce"
        if undecided is not None:
            note += f" ({undecided.detail})"
        return SearchOutcome(None, report.tried, note, undecided)
    return SearchOutcome(cex, report.tried, report.message)


# The child: the shared prelude (difftest.DRIVER_PRELUDE), then CrossHair. It imports
# crosshair, never veribot.
DRIVER = DRIVER_PRELUDE + r'''
import ast, collections, io, typing

def pytype(tj, top=False):
    k = tj["k"]
    simple = {"int": int, "bool": bool, "float": float, "str": str, "none": type(None)}
    if k in simple:
        return simple[k]
    if k == "list":
        return list[pytype(tj["elem"])]
    if k == "set":
        return set[pytype(tj["elem"])]
    if k == "frozenset":
        return frozenset[pytype(tj["elem"])]
    if k == "any":
        return typing.Any
    if k == "tuple":
        if "homog" in tj:
            return tuple[pytype(tj["homog"]), ...]
        return tuple[tuple(pytype(i) for i in tj["items"])] if tj["items"] else tuple[()]
    if k == "dict":
        return dict[pytype(tj["key"]), pytype(tj["value"])]
    if k == "union":
        return typing.Union[tuple(pytype(o) for o in tj["options"])]
    return None if top else int


class _SpellFloats(ast.NodeTransformer):
    def visit_Name(self, node):
        if node.id in ("nan", "inf"):
            return ast.parse("float('" + node.id + "')", mode="eval").body
        return node


def literal(text):
    """CrossHair's repr of a value, with nan/inf spelt as expressions."""
    return ast.unparse(_SpellFloats().visit(ast.parse(text, mode="eval")))


sys.stdout = io.StringIO()
fns = []
for label in ("before", "after"):
    try:
        fns.append(resolve(load("before" if label == "before" else "after", label + ".py"),
                           spec["entry"]))
    except BaseException as exc:
        emit({"status": "error", "tried": 0,
              "message": label + " version could not be loaded: "
                         + type(exc).__name__ + ": " + str(exc)[:200]})
        sys.exit(0)

for fn in fns:
    annotations = {}
    for name, tj in spec["params"]:
        t = pytype(tj, top=True)
        if t is not None:
            annotations[name] = t
    try:
        fn.__annotations__ = annotations
    except (AttributeError, TypeError):
        pass

import crosshair.core_and_libs  # installs CrossHair's opcode patches and library models
from crosshair.diff_behavior import ExceptionEquivalenceType, diff_behavior
from crosshair.fnutil import FunctionInfo
from crosshair.options import DEFAULT_OPTIONS, AnalysisOptionSet
from crosshair.util import set_debug
import crosshair.diff_behavior as _db

set_debug(False)

# Stop exploring at the first difference: one confirmed input is all we need.
_found = [False]
_OriginalDiff = _db.BehaviorDiff


def _record_diff(*args, **kwargs):
    _found[0] = True
    return _OriginalDiff(*args, **kwargs)


_explore_paths = _db.explore_paths


def _explore_until_found(fn, sig, options, root, on_path_complete, **kwargs):
    def complete(*args):
        return bool(on_path_complete(*args)) or _found[0]
    return _explore_paths(fn, sig, options, root, complete, **kwargs)


_db.BehaviorDiff = _record_diff
_db.explore_paths = _explore_until_found
cap = float(spec["time_cap_s"])
options = DEFAULT_OPTIONS.overlay(AnalysisOptionSet(
    per_condition_timeout=cap,
    per_path_timeout=max(0.5, min(cap / 4, 3.0)),
    max_uninteresting_iterations=10**9,
))
options.stats = collections.Counter()
try:
    diffs = diff_behavior(FunctionInfo.from_fn(fns[0]), FunctionInfo.from_fn(fns[1]), options,
                          ExceptionEquivalenceType.SAME_TYPE)
except BaseException as exc:
    emit({"status": "error", "tried": 0,
          "message": "crosshair failed: " + type(exc).__name__ + ": " + str(exc)[:200]})
    sys.exit(0)
tried = int(options.stats.get("num_paths", 0))
if isinstance(diffs, str):
    emit({"status": "error", "tried": tried, "message": "crosshair: " + diffs[:200]})
    sys.exit(0)
names = [name for name, _ in spec["params"]]
candidates = []
for d in sorted(diffs, key=lambda d: len(str(d.args))):
    try:
        args = [literal(d.args[n]) for n in names]
    except (KeyError, SyntaxError, ValueError):
        continue
    r1, r2 = d.result1, d.result2
    candidates.append({
        "args": args,
        "before": ("raises " + r1.error) if r1.error else "returns " + r1.return_repr,
        "after": ("raises " + r2.error) if r2.error else "returns " + r2.return_repr,
    })
    if len(candidates) >= int(spec["max_candidates"]):
        break
exhausted = options.stats.get("exhaustion", 0) > 0
message = ("crosshair found a difference in %d paths" % tried if candidates else
           "crosshair: no difference in %d paths%s" % (
               tried, " (all paths exhausted)" if exhausted else ""))
emit({"status": "found" if candidates else "none", "tried": tried,
      "candidates": candidates, "message": message})
'''
