"""The equivalence check: decide whether two versions of a function behave the same.

Two versions are *equivalent* when, for every input in the domain (the parameters' types),
both return equal values (same type, ``==``, NaN equal to NaN) or both raise the same
exception type, and both leave the list and dict arguments equally mutated. Each call
starts from a freshly imported module. A version that never finishes where the other
returns behaves differently.

How a verdict is reached:

1. Both versions are translated to Z3 (``lang.pyexec``) and the solver is asked for an
   input that tells them apart (``lang.pyprove``). ``unsat`` with every loop covered (fully
   unrolled, or proven for all trip counts by ``lang.pyinduct``) is a proof: **verified**.
2. A candidate input from the solver is executed on both versions in the sandbox; only a
   reproduced difference is a refutation: **refuted**.
3. Where the model does not cover the code, or proves nothing, the search goes on beyond
   it: randomised differential testing from the parameter types (``difftest``), each
   found input confirmed in the sandbox. It can refute, never verify.
4. Otherwise **inconclusive**, with the reason: unsupported construct at a line, loop
   bound, unknown parameter type, solver gave up, or time ran out.
"""

from __future__ import annotations

import ast
import dataclasses
import logging
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass

from veribot.checks import difftest
from veribot.checks.differential import confirm
from veribot.checks.lang import pyinduct, pyprove, pysource
from veribot.checks.lang.pyexec import Limits as ExecLimits
from veribot.checks.lang.pytypes import PyType, Unknown, from_annotation, parse_type
from veribot.checks.lang.pyvalues import OutOfTime, Unsupported
from veribot.checks.sandbox import Limits as SandboxLimits
from veribot.checks.sandbox import run_script
from veribot.checks.smt import SolverLimits
from veribot.checks.verdict import Counterexample, Reason, Result, Verdict

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Budget:
    """Limits for one pair: wall time overall, loop unrolling and inlining depth."""

    timeout_s: float = 10.0
    loop_bound: int = 6
    inline_depth: int = 4
    solver_timeout_ms: int = 3000
    solver_rlimit: int = 30_000_000
    search: bool = True  # look for differences beyond the model (random testing)
    # Whether the code may be executed (in the sandbox) at all. Off under
    # `pull_request_target`: then nothing can be refuted, only proven or left open.
    execute: bool = True


def check_pair(
    before: str,
    after: str,
    entry: str,
    param_types: Mapping[str, str] | None = None,
    *,
    budget: Budget = Budget(),
) -> Result:
    """Decide whether ``entry`` behaves the same in two module sources.

    ``entry`` is a qualified name within the module (``func`` or ``Class.method``).
    ``param_types`` (annotation text by parameter name) overrides the annotations.
    """
    start = time.monotonic()
    result = _decide(before, after, entry, param_types, budget, start)
    elapsed = time.monotonic() - start
    return Result(
        result.verdict,
        result.reason,
        result.detail,
        result.counterexample,
        result.assumptions,
        result.method,
        result.line,
        round(elapsed, 4),
        result.notes,
    )


def _decide(
    before: str,
    after: str,
    entry: str,
    param_types: Mapping[str, str] | None,
    budget: Budget,
    start: float,
) -> Result:
    trees = []
    for label, source in (("before", before), ("after", after)):
        try:
            trees.append(pysource.parse(source))
        except SyntaxError as err:
            return Result(
                Verdict.INCONCLUSIVE,
                Reason.PARSE_ERROR,
                f"the {label} version does not parse: {err.msg}"
                + (f" (line {err.lineno})" if err.lineno else ""),
                line=err.lineno,
            )
    tree_a, tree_b = trees
    fn_a = pyprove.find_function(tree_a, entry)
    fn_b = pyprove.find_function(tree_b, entry)
    if fn_a is None or fn_b is None:
        where = "before" if fn_a is None else "after"
        return Result(
            Verdict.INCONCLUSIVE, Reason.NOT_FOUND, f"no function `{entry}` in the {where} version"
        )
    given = {k: parse_type(v) for k, v in (param_types or {}).items()}
    deadline = start + budget.timeout_s
    notes: list[str] = []

    outcome = _prove(tree_a, tree_b, entry, given, budget, deadline)
    if outcome.kind == "proved" and outcome.runs_at_import and budget.execute:
        failed = [
            label
            for label, source in (("before", before), ("after", after))
            if not _imports_cleanly(source, deadline)
        ]
        if failed:
            return Result(
                Verdict.INCONCLUSIVE,
                Reason.IMPORT_FAILED,
                f"the proof holds, but the {' and '.join(failed)} version's module-level code "
                "did not import cleanly in the sandbox, so calls may never reach the function",
                assumptions=outcome.assumptions,
            )
    if outcome.kind == "proved":
        return Result(
            Verdict.VERIFIED,
            Reason.PROOF,
            outcome.detail,
            assumptions=outcome.assumptions,
            method=outcome.method,
        )
    if outcome.kind == "candidates" and not budget.execute:
        first = ", ".join(outcome.candidates[0])
        return Result(
            Verdict.INCONCLUSIVE,
            Reason.NOT_EXECUTED,
            f"the solver found an input that seems to tell the versions apart ({first}), but "
            "running the code was not allowed here, so it was not confirmed",
        )
    if outcome.kind == "candidates":
        found = _first_confirmed(before, after, entry, outcome, deadline)
        if found is None and outcome.shared_helpers:
            # The helpers were arbitrary functions there; with their bodies inlined the
            # solver's inputs follow what they really compute.
            inlined = _prove(tree_a, tree_b, entry, given, budget, deadline, shared=False)
            if inlined.kind == "candidates":
                found = _first_confirmed(before, after, entry, inlined, deadline)
        if found is not None:
            return _refuted(found, "smt: the solver's input, executed on both versions")
        notes.append(
            f"the solver proposed {len(outcome.candidates)} input(s) that did not reproduce a "
            "difference when executed (the model was imprecise there)"
        )
    else:
        notes.append(outcome.detail)

    remaining = deadline - time.monotonic()
    if budget.search and budget.execute and remaining > 0.5:
        types = _search_types(fn_a, fn_b, given)
        searched = difftest.search(
            before, after, entry, types, deadline_s=remaining - 0.2, limits=_sandbox(deadline)
        )
        if searched.counterexample is not None:
            return _refuted(searched.counterexample, "random differential testing", notes)
        notes.append(
            f"random testing tried {searched.inputs_tried} inputs without a difference"
            + (f" ({searched.note})" if searched.note else "")
        )
    return _inconclusive(outcome, notes, timed_out=time.monotonic() > deadline)


def _first_confirmed(
    before: str, after: str, entry: str, outcome: pyprove.Outcome, deadline: float
) -> Counterexample | None:
    for args in outcome.candidates:
        found = confirm(before, after, entry, args, found_by="z3", limits=_sandbox(deadline))
        if found is not None:
            return found
    return None


def _prove(
    tree_a: ast.Module,
    tree_b: ast.Module,
    entry: str,
    given: Mapping[str, PyType],
    budget: Budget,
    deadline: float,
    *,
    shared: bool = True,
) -> pyprove.Outcome:
    limits = ExecLimits(
        loop_bound=budget.loop_bound,
        inline_depth=budget.inline_depth,
        # Leave time for confirming candidates and for the search beyond the model.
        deadline=deadline - budget.timeout_s * 0.6,
    )
    try:
        problem = pyprove.build(tree_a, tree_b, entry, given or None, limits, shared=shared)
        quick = lambda: _solver(budget, deadline, cap_ms=1000)  # noqa: E731
        if problem.exhausted:
            # Lock-step induction first: it is usually quicker than a deep bounded check
            # over sequences, and it needs nothing from it.
            induction = pyinduct.prove(problem, limits, quick, bounded_ok=False)
            if induction is not None:
                return _with_problem(induction, problem)
        outcome = _with_problem(pyprove.search_bounded(problem, _solver(budget, deadline)), problem)
        if outcome.kind == "bounded":
            induction = pyinduct.prove(problem, limits, quick, bounded_ok=True)
            if induction is not None:
                return _with_problem(induction, problem)
        return outcome
    except Unsupported as err:
        return pyprove.Outcome(
            "unsupported",
            f"the model does not cover {err.construct}"
            + (f" (line {err.line})" if err.line else ""),
            line=err.line,
            construct=err.construct,
        )
    except pyprove.UnknownTypes as err:
        names = ", ".join(f"`{n}`" for n in err.names)
        return pyprove.Outcome(
            "unknown-type", f"unknown type of {names}: annotate it to get a proof"
        )
    except OutOfTime as err:
        return pyprove.Outcome("solver-unknown", f"time ran out ({err})", construct="timeout")
    except RecursionError:
        return pyprove.Outcome(
            "unsupported", "the code is nested too deeply to model", construct="deep nesting"
        )
    except Exception as err:  # the prover's boundary: a bug here must not stop the search
        log.exception("prover failed on %s", entry)
        return pyprove.Outcome(
            "internal-error", f"the prover failed ({type(err).__name__}: {err})"
        )


def _with_problem(outcome: pyprove.Outcome, problem: pyprove.Problem) -> pyprove.Outcome:
    return dataclasses.replace(
        outcome,
        shared_helpers=outcome.kind == "candidates" and bool(problem.helpers),
        runs_at_import=problem.runs_at_import,
    )


_IMPORT_SCRIPT = """
import importlib.util, sys
spec = importlib.util.spec_from_file_location("subject", "subject.py")
module = importlib.util.module_from_spec(spec)
sys.modules["subject"] = module
spec.loader.exec_module(module)
print("veribot: imported")
"""


def _imports_cleanly(source: str, deadline: float) -> bool:
    """Whether the module imports without error or hang (run in the sandbox)."""
    run = run_script(_IMPORT_SCRIPT, {"subject.py": source}, limits=_sandbox(deadline))
    return run.returncode == 0 and not run.timed_out and "veribot: imported" in run.stdout


def _solver(budget: Budget, deadline: float, cap_ms: int | None = None) -> SolverLimits:
    """Limits for the next solver query; none are left once the budget is spent."""
    left_ms = int((deadline - time.monotonic()) * 1000 * 0.5)
    if left_ms < 100:
        raise OutOfTime("the solver's share of the budget is spent")
    timeout = min(budget.solver_timeout_ms, left_ms, cap_ms or budget.solver_timeout_ms)
    return SolverLimits(timeout_ms=max(100, timeout), rlimit=budget.solver_rlimit)


def _sandbox(deadline: float) -> SandboxLimits:
    left = max(1.0, deadline - time.monotonic())
    return SandboxLimits(wall_s=min(10.0, left + 2.0), call_s=min(2.0, max(0.5, left / 4)))


def _search_types(
    fn_a: ast.FunctionDef, fn_b: ast.FunctionDef, given: Mapping[str, PyType]
) -> dict[str, PyType]:
    types: dict[str, PyType] = {}
    for pa, pb in zip(fn_a.args.args, fn_b.args.args, strict=False):
        t = given.get(pa.arg) or from_annotation(pa.annotation)
        if isinstance(t, Unknown):
            t = from_annotation(pb.annotation)
        types[pa.arg] = t
    return types


def _refuted(found: Counterexample, method: str, notes: list[str] | None = None) -> Result:
    args = ", ".join(found.args)
    detail = (
        f"on input ({args}) the before version {found.before.describe()} and the after "
        f"version {found.after.describe()}"
    )
    if found.before.describe() == found.after.describe() and found.difference:
        detail += f" ({found.difference})"
    return Result(
        Verdict.REFUTED,
        Reason.COUNTEREXAMPLE,
        detail,
        counterexample=found,
        method=method,
        notes=tuple(notes or ()),
    )


def _slug(construct: str) -> str:
    """A short machine-readable name for a construct: "methods (the type of ...)" -> methods."""
    head = re.split(r" \(|: ", construct, maxsplit=1)[0]
    slug = re.sub(r"[^a-z0-9.]+", "-", head.lower()).strip("-")
    return slug[:48].rstrip("-") or "construct"


def _inconclusive(outcome: pyprove.Outcome, notes: list[str], *, timed_out: bool) -> Result:
    if outcome.kind == "unsupported":
        reason = Reason.unsupported(_slug(outcome.construct))
    elif outcome.kind == "unknown-type":
        reason = Reason.UNKNOWN_TYPE
    elif outcome.kind == "bounded":
        reason = (
            Reason.RECURSION_BOUND if outcome.construct == "recursion-bound" else Reason.LOOP_BOUND
        )
    elif outcome.kind == "solver-unknown":
        reason = (
            Reason.TIMEOUT if outcome.construct == "timeout" or timed_out else Reason.SOLVER_UNKNOWN
        )
    elif outcome.kind == "candidates":
        reason = Reason.NOT_REPRODUCED
    else:
        reason = Reason.INTERNAL_ERROR
    return Result(
        Verdict.INCONCLUSIVE,
        reason,
        outcome.detail,
        assumptions=outcome.assumptions,
        line=outcome.line,
        notes=tuple(notes),
    )
