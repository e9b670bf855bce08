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
   reproduced, stable difference that is not the sandbox's doing is a refutation
   (``differential.examine``): **refuted**.
3. Where the model does not cover the code, or proves nothing, the search goes on beyond
   it: first the calls of the function found in the repository's doctests and tests
   (``harvest``), then randomised differential testing from the parameter types
   (``difftest``), each found input confirmed in the sandbox. It can refute, never verify.
   Parameters annotated in neither version get types inferred from their defaults and
   those calls (``lang.pyinfer``); a proof that used them lists them as an assumption.
   Before random testing, where nothing differed: the relational check relative to callees
   (``relational.opaque``), which verifies code that makes the same calls and operations
   on every path, and says so (after the model: it never pre-empts the model's proof or
   counterexample).
4. Before a proof is reported (when execution is allowed), the tripwire (``tripwire``)
   runs both versions on edge values, the code's constants and random draws of the
   domain. A difference it reproduces is a defect of the model: the unit is **refuted**
   and a "model defect" warning is logged. It samples; it is not what the proof rests on.
   It runs after the relational check's proofs too (a shorter run): a difference it
   reproduces there refutes as well.
5. Otherwise **inconclusive**, with the reason: unsupported construct at a line, loop
   bound, unknown parameter type, solver gave up, or time ran out; or, when an input
   differed without refuting, why: nondeterministic, the sandbox refused an operation, or
   a limit of the sandbox was hit.
"""

from __future__ import annotations

import ast
import copy
import dataclasses
import logging
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from veribot.checks.lang import pyinduct, pyinfer, pyprove, pysignature, pysource
from veribot.checks.lang.pyexec import Limits as ExecLimits
from veribot.checks.lang.pymodule import Module
from veribot.checks.lang.pysignature import Signature
from veribot.checks.lang.pytypes import (
    PyType,
    StreamT,
    Unknown,
    from_annotation,
    is_known,
    parse_type,
)
from veribot.checks.lang.pyvalues import OutOfTime, Unsupported
from veribot.checks.project import modulecheck, reads
from veribot.checks.project.package import PairContext
from veribot.checks.relational import check as relational
from veribot.checks.sandbox import Limits as SandboxLimits
from veribot.checks.search import difftest, harvest, tripwire
from veribot.checks.search.differential import Confirmation, confirm, difference, examine, run_both
from veribot.checks.smt import SolverLimits
from veribot.checks.verdict import Counterexample, Reason, Result, Verdict

if TYPE_CHECKING:
    from veribot.checks.hints.model import Session

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
    context: PairContext | None = None,
    hints: Session | None = None,
) -> Result:
    """Decide whether ``entry`` behaves the same in two module sources.

    ``entry`` is a qualified name within the module (``func`` or ``Class.method``).
    ``param_types`` (annotation text by parameter name) overrides the annotations.
    ``context``: the package of each version, from its own revision; the sandbox then
    imports each version as part of its package (relative imports and imports of the
    project's own package work) instead of as a lone module.
    ``hints``: proposed invariants and lemmas (``checks.hints``), used only where the
    solver proves them; the session records what became of each.
    """
    start = time.monotonic()
    result = _decide(before, after, entry, param_types, budget, start, context, hints)
    # A data file or the source text, which no check sees, may be what differs.
    result = reads.withheld(result, before, after, context)
    elapsed = time.monotonic() - start
    notes = result.notes
    if context is not None and budget.execute:
        notes += tuple(f"the {label} version was {p.note}"
                       for label, p in (("before", context.before), ("after", context.after))
                       if p is not None and p.left_out)
    return Result(
        result.verdict,
        result.reason,
        result.detail,
        result.counterexample,
        result.assumptions,
        result.method,
        result.line,
        round(elapsed, 4),
        notes,
    )


def _decide(
    before: str,
    after: str,
    entry: str,
    param_types: Mapping[str, str] | None,
    budget: Budget,
    start: float,
    context: PairContext | None = None,
    hints: Session | None = None,
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
    # The definition the name is bound to, `def` or `async def` (the last one, as Python
    # binds it).
    fn_a = pysource.definition(tree_a, entry)
    fn_b = pysource.definition(tree_b, entry)
    if fn_a is None or fn_b is None:
        where = "before" if fn_a is None else "after"
        return Result(
            Verdict.INCONCLUSIVE, Reason.NOT_FOUND, f"no function `{entry}` in the {where} version"
        )
    given = {k: parse_type(v) for k, v in (param_types or {}).items()}
    deadline = start + budget.timeout_s
    notes: list[str] = []
    harvested, guesses = _repository_inputs(before, after, entry, fn_a, fn_b, given, context)
    # What a proof may assume (types the model knows), and what random testing draws.
    inferred = {k: t for k, i in guesses.items() if (t := i.type) is not None}
    searched_types = {**{k: i.search for k, i in guesses.items()}, **given}
    given = {**inferred, **given}
    module_a, module_b = Module.of(tree_a), Module.of(tree_b)
    sig_a, sig_b = Signature.of(fn_a, module_a), Signature.of(fn_b, module_b)
    if pysignature.changes(sig_a, sig_b) or _mutable_default(sig_a, sig_b):
        found = None
        if budget.execute:
            types = _call_types(fn_a, fn_b, given)
            calls = pysignature.calls_showing(sig_a, sig_b, types)
            found = _first_shown(before, after, entry, calls, deadline, context)
        if found is not None:
            return _refuted(found, "calls that exercise the signature, executed on both versions")
        found = _first_harvested(before, after, entry, harvested, budget, deadline, context)[0]
        if found is not None:
            return _refuted(found, HARVESTED)
        if pysignature.changes(sig_a, sig_b):
            tried = " (calls by position, by keyword and without the defaults showed no "
            tried += "difference)"
            return Result(
                Verdict.INCONCLUSIVE,
                Reason.unsupported("signature-change"),
                pysignature.describe(sig_a, sig_b)
                + "; callers may pass arguments by keyword and leave defaults out, so this "
                "is a change of behaviour that the proof does not cover"
                + (tried if budget.execute else ""),
                line=fn_b.lineno,
            )

    if budget.execute and before != after:  # same code, same environment; loads both
        same = relational.check(
            before, after, tree_a, tree_b, entry, _sandbox(deadline), context,
            callee=lambda name: _decide(before, after, name, None, budget, start, context),
        )
        if same is None and hints is not None:
            same = hints.relational(lambda moves, why: relational.check(
                before, after, tree_a, tree_b, entry, _sandbox(deadline), context,
                callee=lambda name: _decide(before, after, name, None, budget, start, context),
                statements=moves, refusal=why))
        if same is not None:
            return _wired(same, before, after, entry, {
                **{k: t.text() for k, t in inferred.items()}, **(param_types or {})},
                budget, deadline, context)

    # An `async def` function: the model runs its body as a plain function's only where
    # awaiting its coroutine is exactly that (``_coroutines``); the trees it reads then
    # hold it as one.
    coroutines = _coroutines(tree_a, tree_b, fn_a, fn_b)
    if isinstance(coroutines, pyprove.Outcome):
        model_a, model_b = tree_a, tree_b
        outcome = coroutines
    else:
        model_a, model_b = coroutines.trees if coroutines is not None else (tree_a, tree_b)
        outcome = _prove(model_a, model_b, entry, given, budget, deadline, hints=hints)
        if coroutines is not None:
            outcome = dataclasses.replace(
                outcome, detail=f"{outcome.detail} (what awaiting the coroutines gives)"
                if outcome.kind == "proved" else outcome.detail,
                assumptions=(*outcome.assumptions, coroutines.assumption))
    if model_a is not tree_a:
        module_a, module_b = Module.of(model_a), Module.of(model_b)
    if inferred:  # the proof, if any, holds only for these types
        # pyprove names a type it was handed "given": these were guessed, not given.
        guessed = {f"`{k}`: {t.text()} (given)": f"`{k}`: {t.text()} (inferred)"
                   for k, t in inferred.items() if k not in (param_types or {})}
        outcome = dataclasses.replace(
            outcome, assumptions=(*(guessed.get(a, a) for a in outcome.assumptions),
                                  pyinfer.assumption(guesses)))
    if outcome.kind == "proved":
        unchecked = _module_unchecked(
            (before, model_a, module_a), (after, model_b, module_b), budget, deadline, context
        )
        if unchecked is not None and not budget.execute:
            return dataclasses.replace(unchecked, assumptions=outcome.assumptions)
        if unchecked is not None:
            # Search on: the loaded module may well behave differently on some input.
            outcome = pyprove.Outcome(
                "module-check", unchecked.detail, construct=unchecked.reason,
                assumptions=outcome.assumptions,
            )
    if outcome.kind == "proved":
        if budget.execute and inferred:  # the repository's calls may lie outside the types
            found = _first_harvested(before, after, entry, harvested, budget, deadline,
                                     context)[0]
            if found is not None:
                return _refuted(found, HARVESTED, [outcome.detail])
        if budget.execute:
            param_types = {**{k: t.text() for k, t in inferred.items()},
                           **(param_types or {})}
            wire = _tripwire(before, after, entry, param_types, budget, deadline, context)
            if wire.counterexample is not None:
                log.warning("model defect: %s was proven equivalent, but on input (%s) %s",
                            entry, ", ".join(wire.counterexample.args),
                            wire.counterexample.difference)
                return _refuted(wire.counterexample, tripwire.METHOD, [outcome.detail])
            if wire.unstable is not None:
                args, sentence = wire.unstable
                log.warning("tripwire: %s was proven equivalent, but on input (%s) %s when "
                            "called after other inputs; not reproduced in fresh children",
                            entry, ", ".join(args), sentence)
                return Result(
                    Verdict.INCONCLUSIVE,
                    Reason.NOT_REPRODUCED,
                    f"the proof holds for a call on a freshly imported module, but on input "
                    f"({', '.join(args)}) {sentence} when the versions were called after "
                    "other inputs in one process; it did not happen again in fresh processes "
                    "(state kept between calls, or nondeterminism), so verified is withheld",
                    assumptions=outcome.assumptions,
                )
            notes.append(wire.note)
        detail = outcome.detail
        if inferred:  # shown with the verdict, not only among the assumptions
            detail += (" (only for the inferred parameter types "
                       + ", ".join(f"`{k}: {t.text()}`" for k, t in inferred.items())
                       + "; the parameters are not annotated)")
        return Result(
            Verdict.VERIFIED,
            Reason.PROOF,
            detail,
            assumptions=outcome.assumptions,
            method=outcome.method,
            notes=tuple(notes),
        )
    if outcome.kind == "candidates" and not budget.execute:
        first = ", ".join(outcome.candidates[0])
        return Result(
            Verdict.INCONCLUSIVE,
            Reason.NOT_EXECUTED,
            f"the solver found an input that seems to tell the versions apart ({first}), but "
            "running the code was not allowed here, so it was not confirmed",
        )
    # The first input that differed without refuting, for a reason the verdict must name.
    undecided: Confirmation | None = None
    if outcome.kind == "candidates":
        # The repository's own calls before the solver's: an input a reader recognises,
        # and one a test of the change makes says the change is meant (``bot.intent``).
        found, undecided = _first_harvested(before, after, entry, harvested, budget,
                                            deadline, context)
        if found is not None:
            return _refuted(found, HARVESTED, notes)
        found, confirmed = _first_confirmed(before, after, entry, outcome, deadline, context)
        undecided = undecided or confirmed
        if found is None and outcome.shared_helpers:
            # The helpers were arbitrary functions there; with their bodies inlined the
            # solver's inputs follow what they really compute.
            inlined = _prove(model_a, model_b, entry, given, budget, deadline, shared=False)
            if inlined.kind == "candidates":
                found, again = _first_confirmed(before, after, entry, inlined, deadline,
                                                context)
                undecided = undecided or again
        if found is not None:
            return _refuted(found, "smt: the solver's input, executed on both versions")
        notes.append(
            f"the solver proposed {len(outcome.candidates)} input(s) that did not reproduce a "
            "difference when executed (the model was imprecise there)"
        )
    else:
        notes.append(outcome.detail)

    found, seen = _first_harvested(before, after, entry, harvested, budget, deadline, context)
    if found is not None:  # (not tried yet: the solver found no candidate)
        return _refuted(found, HARVESTED, notes)
    undecided = undecided or seen
    if budget.execute and before != after and undecided is None:
        # Where the model stopped without a proof or a refutation: the same calls and
        # operations on every path, relative to what they do (run after the model, so
        # that it never pre-empts the model's absolute proof or its counterexample).
        same = relational.check(
            before, after, tree_a, tree_b, entry, _sandbox(deadline), context,
            callee=lambda name: _decide(before, after, name, None, budget, start, context),
            relative=True,
        )
        if same is not None:
            same = _wired(same, before, after, entry, {
                **{k: t.text() for k, t in inferred.items()}, **(param_types or {})},
                budget, deadline, context)
            return dataclasses.replace(same, notes=(*same.notes, *notes))
    if budget.execute and any(p.default is not None for p in (*sig_a.params, *sig_b.params)):
        # Calls that leave defaults out: what the model read as the defaults may not be
        # what the loaded module has.
        calls = pysignature.calls_showing(sig_a, sig_b, _call_types(fn_a, fn_b, given))
        found = _first_shown(before, after, entry, calls, deadline, context)
        if found is not None:
            return _refuted(found, "calls that exercise the signature", notes)
    remaining = deadline - time.monotonic()
    if budget.search and budget.execute and remaining > 0.5:
        types = _search_types(fn_a, fn_b, searched_types)
        if guesses:
            notes.append(pyinfer.search_note(guesses))
        if streams := difftest.stream_note(types):
            notes.append(streams)
        searched = difftest.search(
            before, after, entry, types, deadline_s=remaining - 0.2, limits=_sandbox(deadline),
            context=context,
        )
        if searched.counterexample is not None:
            return _refuted(searched.counterexample, "random differential testing", notes)
        undecided = undecided or searched.undecided
        notes.append(
            f"random testing tried {searched.inputs_tried} inputs without a difference"
            + (f" ({searched.note})" if searched.note else "")
        )
    if undecided is not None:
        # An input on which the versions differed, but not in a way that counts: say so,
        # rather than the model's reason, which is kept in the notes.
        notes.insert(0, outcome.detail)
        return Result(
            Verdict.INCONCLUSIVE,
            undecided.reason,
            f"the versions differed, but not reproducibly as a difference of the code: "
            f"{undecided.detail}",
            assumptions=outcome.assumptions,
            notes=tuple(notes),
        )
    return _inconclusive(outcome, notes, timed_out=time.monotonic() > deadline)


HARVESTED = "calls from the repository's doctests and tests, executed on both versions"

_Def = ast.FunctionDef | ast.AsyncFunctionDef


@dataclass(frozen=True)
class _Coroutines:
    """Both versions of an `async def` function that never suspends, as the model reads
    them: module trees in which each is a plain `def`, and what that rests on."""

    trees: tuple[ast.Module, ast.Module]
    assumption: str


# What makes a coroutine suspend, or an `async def` an asynchronous generator.
_SUSPENDS = (ast.Await, ast.AsyncFor, ast.AsyncWith, ast.Yield, ast.YieldFrom)


def _coroutines(tree_a: ast.Module, tree_b: ast.Module, fn_a: _Def,
                fn_b: _Def) -> _Coroutines | pyprove.Outcome | None:
    """How the model reads a pair of which at least one is an `async def` function: the
    trees in which both are plain functions, or why it does not (None: neither is one).

    Calling an `async def` function runs none of its body: it returns a coroutine, and
    awaiting that runs the body. Where the body never suspends (no `await`, `async for`
    or `async with`, and no `yield`, which makes it an asynchronous generator), awaiting
    runs it to its end at once, as a call of the same body as a plain function would,
    except that a `StopIteration` it raises becomes a `RuntimeError` (PEP 479), the same
    in both versions. So the two coroutines behave the same, awaited, wherever the two
    bodies do as plain functions. That holds only where nothing runs the function in
    the model's place: no code of the module names it (a call of it gives a coroutine,
    which the model has no values for), and it is no special method (Python calls those
    on its own).
    """
    if not isinstance(fn_a, ast.AsyncFunctionDef) and not isinstance(fn_b, ast.AsyncFunctionDef):
        return None
    if not isinstance(fn_a, ast.AsyncFunctionDef) or not isinstance(fn_b, ast.AsyncFunctionDef):
        which = "after" if isinstance(fn_b, ast.AsyncFunctionDef) else "before"
        return pyprove.Outcome(
            "unsupported",
            f"only the {which} version is an `async def` function: calling it gives a "
            "coroutine where the other version's call runs the code, which the model does "
            "not compare",
            construct="a change between def and async def", line=fn_b.lineno)
    for fn in (fn_a, fn_b):
        for node in ast.walk(fn):
            if isinstance(node, _SUSPENDS) or (
                    isinstance(node, ast.comprehension) and node.is_async):
                what = ("`yield` (an asynchronous generator)" if isinstance(
                    node, ast.Yield | ast.YieldFrom) else "`await`" if isinstance(
                    node, ast.Await) else "`async for`" if isinstance(
                    node, ast.AsyncFor | ast.comprehension) else "`async with`")
                line = node.target.lineno if isinstance(node, ast.comprehension) else (
                    node.lineno)
                return pyprove.Outcome(
                    "unsupported",
                    f"the model does not cover async functions that suspend: {what} at "
                    f"line {line} (an `async def` function is modelled only where its body "
                    "never suspends)",
                    construct="async function", line=line)
    name = fn_b.name
    if name.startswith("__") and name.endswith("__"):
        return pyprove.Outcome(
            "unsupported", f"the model does not cover `async def {name}`, a special method "
            "Python calls on its own", construct="async function", line=fn_b.lineno)
    for tree, fn in ((tree_a, fn_a), (tree_b, fn_b)):
        named = _named_elsewhere(tree, fn)
        if named is not None:
            return pyprove.Outcome(
                "unsupported",
                f"the model does not cover an async function whose module names it (line "
                f"{named}): a call of `{name}` there gives a coroutine, not what its body "
                "computes", construct="async function", line=named)
    return _Coroutines(
        (_with_plain_def(tree_a, fn_a), _with_plain_def(tree_b, fn_b)),
        f"`{name}` is an `async def` function whose body never suspends (no `await`, `async "
        "for` or `async with`): what is compared is what awaiting its coroutine gives, its "
        "body run to the end when it is awaited, not when it is called")


def _named_elsewhere(tree: ast.Module, fn: ast.AsyncFunctionDef) -> int | None:
    """The first line where the module may name ``fn`` (its name read, written, defined
    again, imported, passed as text or as an attribute of anything), other than its own
    definition; None where it does not."""
    name = fn.name
    # `__all__` names it only for `from m import *` elsewhere, which binds it, no more.
    listed = {id(n) for stmt in tree.body
              if isinstance(stmt, ast.Assign | ast.AugAssign | ast.AnnAssign)
              and any(isinstance(t, ast.Name) and t.id == "__all__" for t in (
                  stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]))
              and isinstance(stmt.value, ast.List | ast.Tuple)
              for n in stmt.value.elts}
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Name):
            names = [node.id]
        elif isinstance(node, ast.Attribute):
            names = [node.attr]
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and (
                id(node) not in listed):
            names = [node.value]
        elif isinstance(node, ast.alias):
            names = [node.name, node.name.split(".")[0], node.asname or ""]
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names = [node.name] if node is not fn else []
        elif isinstance(node, ast.arg):
            names = [node.arg]
        elif isinstance(node, ast.Global | ast.Nonlocal):
            names = list(node.names)
        elif isinstance(node, ast.MatchAs | ast.MatchStar):
            names = [node.name or ""]
        elif isinstance(node, ast.MatchMapping):
            names = [node.rest or ""]
        if name in names:
            return getattr(node, "lineno", None) or fn.lineno
    return None


def _with_plain_def(tree: ast.Module, fn: ast.AsyncFunctionDef) -> ast.Module:
    """A copy of ``tree`` in which ``fn`` (a module function or a method) is a plain `def`
    with the same body, at the same place; ``tree`` itself is left as it is."""
    plain = ast.FunctionDef(**{f: getattr(fn, f) for f in fn._fields})
    ast.copy_location(plain, fn)

    def swapped(body: list[ast.stmt]) -> list[ast.stmt]:
        out: list[ast.stmt] = []
        for stmt in body:
            if stmt is fn:
                out.append(plain)
            elif isinstance(stmt, ast.ClassDef) and any(n is fn for n in ast.walk(stmt)):
                cls = copy.copy(stmt)
                cls.body = swapped(stmt.body)
                out.append(cls)
            else:
                out.append(stmt)
        return out

    return ast.Module(body=swapped(tree.body), type_ignores=tree.type_ignores)


def _repository_inputs(
    before: str, after: str, entry: str, fn_a: _Def, fn_b: _Def,
    given: Mapping[str, PyType], context: PairContext | None,
) -> tuple[list[harvest.Call], dict[str, pyinfer.Inferred]]:
    """Calls of ``entry`` found in the repository, and the parameter types inferred from
    them and the defaults (for parameters annotated in neither version nor ``given``)."""
    try:
        calls = harvest.calls_for(before, after, entry, context)
        callers = pyinfer.Callers(
            [pysource.parse(after), pysource.parse(before)], entry,
            lambda name: harvest.calls_for(before, after, name, context))
        inferred = pyinfer.infer(fn_a, fn_b, calls, callers=callers,
                                 bound=difftest.bound_parameter(before, entry))
    except Exception:  # reading the repository's tests must never stop the check
        log.exception("harvesting calls of %s failed", entry)
        return [], {}
    return calls, {k: v for k, v in inferred.items() if k not in given}


def _first_harvested(
    before: str, after: str, entry: str, calls: list[harvest.Call], budget: Budget,
    deadline: float, context: PairContext | None,
) -> tuple[Counterexample | None, Confirmation | None]:
    """The repository's calls of ``entry`` executed on both versions (once per check)."""
    if not budget.execute or not calls:
        return None, None
    found = harvest.first_difference(before, after, entry, calls, limits=_sandbox(deadline),
                                     until=deadline, context=context)
    calls.clear()  # tried: later steps need not run them again
    return found


def _tripwire(
    before: str,
    after: str,
    entry: str,
    param_types: Mapping[str, str] | None,
    budget: Budget,
    deadline: float,
    context: PairContext | None = None,
    cap_s: float | None = None,
) -> tripwire.Outcome:
    """Both versions on targeted inputs, after a proof; bounded by the pair's budget (and
    by ``cap_s``, with fewer inputs)."""
    left = deadline - time.monotonic()
    time_s = max(1.0, min(budget.timeout_s * 0.3, left))
    max_inputs = max(50, min(300, int(budget.timeout_s * 20)))
    if cap_s is not None:
        time_s, max_inputs = min(time_s, cap_s), min(max_inputs, 100)
    return tripwire.check(before, after, entry, param_types, time_s=time_s,
                          max_inputs=max_inputs, confirm_limits=_sandbox(deadline),
                          context=context)


def _wired(
    same: Result,
    before: str,
    after: str,
    entry: str,
    param_types: Mapping[str, str],
    budget: Budget,
    deadline: float,
    context: PairContext | None,
) -> Result:
    """The relational check's result, once the tripwire ran after its proof (defence in
    depth: the proof does not rest on it). A difference it reproduces refutes; a shorter
    run than after a model's proof (at most 2 s), and a difference it does not reproduce
    in fresh children withholds nothing: the relational proof compares the calls the code
    makes, and nondeterministic ones may differ from run to run."""
    if same.verdict is not Verdict.VERIFIED or not budget.execute:
        return same
    wire = _tripwire(before, after, entry, param_types, budget, deadline, context,
                     cap_s=2.0)
    if wire.counterexample is not None:
        log.warning("relational defect: %s was proven equivalent, but on input (%s) %s",
                    entry, ", ".join(wire.counterexample.args),
                    wire.counterexample.difference)
        return _refuted(wire.counterexample, tripwire.METHOD, [same.detail])
    return dataclasses.replace(same, notes=(*same.notes, wire.note))


def _first_confirmed(
    before: str, after: str, entry: str, outcome: pyprove.Outcome, deadline: float,
    context: PairContext | None = None,
) -> tuple[Counterexample | None, Confirmation | None]:
    """The first candidate that refutes, and the first undecided one with a reason."""
    undecided: Confirmation | None = None
    for args in outcome.candidates:
        seen = examine(before, after, entry, args, found_by="z3", limits=_sandbox(deadline),
                       context=context)
        if seen.counterexample is not None:
            return seen.counterexample, undecided
        if seen.reason and undecided is None:
            undecided = seen
    return None, undecided


def _prove(
    tree_a: ast.Module,
    tree_b: ast.Module,
    entry: str,
    given: Mapping[str, PyType],
    budget: Budget,
    deadline: float,
    *,
    shared: bool = True,
    hints: Session | None = None,
) -> pyprove.Outcome:
    if hints is not None:
        return hints.label(_prove_with(tree_a, tree_b, entry, given, budget, deadline, shared,
                                       hints))
    return _prove_with(tree_a, tree_b, entry, given, budget, deadline, shared, None)


def _prove_with(
    tree_a: ast.Module,
    tree_b: ast.Module,
    entry: str,
    given: Mapping[str, PyType],
    budget: Budget,
    deadline: float,
    shared: bool,
    hints: Session | None,
) -> pyprove.Outcome:
    limits = ExecLimits(
        loop_bound=budget.loop_bound,
        inline_depth=budget.inline_depth,
        # Leave time for confirming candidates and for the search beyond the model.
        deadline=deadline - budget.timeout_s * 0.6,
    )
    try:
        problem = pyprove.build(tree_a, tree_b, entry, given or None, limits, shared=shared,
                                wrap_helper=hints.wrap_helper if hints is not None else None)
        quick = lambda: _solver(budget, deadline, cap_ms=1000)  # noqa: E731
        if problem.exhausted:
            # Lock-step induction first: it is usually quicker than a deep bounded check
            # over sequences, and it needs nothing from it.
            induction = pyinduct.prove(problem, limits, quick, bounded_ok=False, hints=hints)
            if induction is not None:
                return _with_problem(induction, problem)
        outcome = _with_problem(pyprove.search_bounded(problem, _solver(budget, deadline)), problem)
        if outcome.kind == "bounded":
            induction = pyinduct.prove(problem, limits, quick, bounded_ok=True, hints=hints)
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
        if err.types and all(isinstance(t, StreamT) for t in err.types):
            kinds = ", ".join(dict.fromkeys(f"`{t.text()}`" for t in err.types))
            return pyprove.Outcome(
                "unknown-type", f"no proof with {names} ({kinds}): the model has no "
                "streams, so only executing the versions compares them"
            )
        return pyprove.Outcome("unknown-type", _unknown_types_detail(err))
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


def _unknown_types_detail(err: pyprove.UnknownTypes) -> str:
    """What the model met: annotated types it has not modelled yet (``Iterable[str] |
    None``), said as such, and parameters with no annotation, which one would give it."""
    annotated: list[str] = []
    bare: list[str] = []
    for name, t in zip(err.names, err.types or [None] * len(err.names), strict=False):
        if t is None or (isinstance(t, Unknown) and not t.source):
            bare.append(f"`{name}`")
        else:
            annotated.append(f"`{name}: {t.text()}`")
    parts = []
    if annotated:
        verb = "is" if len(annotated) == 1 else "are"
        parts.append(f"{', '.join(annotated)} {verb} not modelled yet")
    if bare:
        parts.append(f"no annotation or inferred type for {', '.join(bare)}: annotate "
                     f"{'it' if len(bare) == 1 else 'them'} to get a proof")
    return "; ".join(parts) or "unknown parameter types"


def _with_problem(outcome: pyprove.Outcome, problem: pyprove.Problem) -> pyprove.Outcome:
    if problem.method and outcome.kind == "candidates":
        # Attribute values of `self`, not a call: the search looks for a real one.
        shown = ", ".join(f"{n.removeprefix('_vb_self_')}={v}" for n, v in
                          zip(problem.names, outcome.candidates[0], strict=False))
        return pyprove.Outcome(
            "unsupported",
            f"the model found a state of `self` and arguments ({shown}) on which the "
            "versions differ, but an object in that state is not built by calling its "
            "class, so it was not executed",
            construct="method state", assumptions=outcome.assumptions,
        )
    return dataclasses.replace(
        outcome,
        shared_helpers=outcome.kind == "candidates" and bool(problem.helpers),
        runs_at_import=problem.runs_at_import,
    )


def _module_unchecked(
    before: tuple[str, ast.Module, Module],
    after: tuple[str, ast.Module, Module],
    budget: Budget,
    deadline: float,
    context: PairContext | None = None,
) -> Result | None:
    """Why a proof cannot stand for the modules as Python loads them, or None if it can.

    With execution allowed, both modules are loaded in the sandbox and compared with
    what the model assumed (``modulecheck``). Without it, module-level code that runs
    this module's own functions or classes at import cannot be judged statically.
    """
    if not budget.execute:
        lines = [m.runs_own_code for _, _, m in (before, after) if m.runs_own_code is not None]
        if not lines:
            return None
        return Result(
            Verdict.INCONCLUSIVE,
            Reason.NOT_EXECUTED,
            f"the proof holds for the code as written, but the module-level code at line "
            f"{min(lines)} runs this module's own code at import, and running the code was not "
            "allowed here to check that it leaves the function and its names as written",
            line=min(lines),
        )
    loaded = modulecheck.check_both(before[:2], after[:2], _sandbox(deadline), context)
    labels = ("before", "after")
    failed = [(label, r) for label, r in zip(labels, loaded, strict=True) if not r.imported]
    if failed:
        why = "; ".join(f"the {label} version: {r.problems[0]}" for label, r in failed)
        return Result(
            Verdict.INCONCLUSIVE,
            Reason.IMPORT_FAILED,
            f"the proof holds, but the module does not import cleanly in the sandbox ({why}), "
            "so calls may never reach the function",
        )
    changed = [(label, r) for label, r in zip(labels, loaded, strict=True) if r.problems]
    if changed:
        why = "; ".join(f"in the {label} version, {', '.join(r.problems[:3])}"
                        for label, r in changed)
        return Result(
            Verdict.INCONCLUSIVE,
            Reason.unsupported("module-level-code"),
            "the proof holds for the code as written, but the module as Python loads it "
            f"differs from what the model read: {why}",
        )
    return None


def _mutable_default(*sigs: Signature) -> bool:
    """Whether a default may be an object kept between calls (mutable, or not a literal)."""
    return any(
        p.default is not None and (p.default.mutable or not p.default.known)
        for s in sigs
        for p in s.params
    )


def _call_types(
    fn_a: _Def, fn_b: _Def, given: Mapping[str, PyType]
) -> dict[str, PyType]:
    """Each parameter's type by name (either version's annotation), for sample calls."""
    types: dict[str, PyType] = {}
    for fn in (fn_b, fn_a):
        a = fn.args
        for p in (*a.posonlyargs, *a.args, a.vararg, *a.kwonlyargs, a.kwarg):
            if p is None:
                continue
            t = given.get(p.arg) or from_annotation(p.annotation)
            if is_known(t) or p.arg not in types:
                types[p.arg] = t
    return types


def _first_shown(
    before: str, after: str, entry: str, calls: list[list[str]], deadline: float,
    context: PairContext | None = None,
) -> Counterexample | None:
    """Run ``calls`` on both versions; confirm the first that differs, alone or in sequence.

    The calls run one after another in one module per version, so a default object kept
    between calls shows; a difference is then confirmed in fresh modules, first as a
    single call, else after the calls that came before it.
    """
    if not calls or deadline - time.monotonic() < 0.5:
        return None
    limits = _sandbox(deadline)
    pairs = run_both(before, after, entry, calls, limits=limits, context=context)
    for i, (a, b) in enumerate(pairs):
        if difference(a, b) is None:
            continue
        found = confirm(before, after, entry, calls[i], found_by="signature", limits=limits,
                        context=context)
        for prior in ([calls[i]], calls[:i]) if i else ():
            if found is None:
                found = confirm(before, after, entry, calls[i], found_by="signature",
                                limits=limits, prior=prior, context=context)
        if found is not None or deadline - time.monotonic() < 0.5:
            return found
    return None


# The share of the budget kept from the solver for running the code: random testing finds
# many differences with its first inputs (an empty list), where a solver that is stuck would
# otherwise spend the whole budget.
SEARCH_RESERVE = 0.25


def _solver(budget: Budget, deadline: float, cap_ms: int | None = None) -> SolverLimits:
    """Limits for the next solver query; none are left once the solver's share of the
    budget is spent (all but ``SEARCH_RESERVE`` of it where random testing follows)."""
    reserve = budget.timeout_s * SEARCH_RESERVE if budget.search and budget.execute else 0.0
    left_ms = int((deadline - reserve - time.monotonic()) * 1000 * 0.5)
    if left_ms < 100:
        raise OutOfTime("the solver's share of the budget is spent")
    timeout = min(budget.solver_timeout_ms, left_ms, cap_ms or budget.solver_timeout_ms)
    return SolverLimits(timeout_ms=max(100, timeout), rlimit=budget.solver_rlimit)


def _sandbox(deadline: float) -> SandboxLimits:
    left = max(1.0, deadline - time.monotonic())
    return SandboxLimits(wall_s=min(10.0, left + 2.0), call_s=min(2.0, max(0.5, left / 4)))


def _search_types(
    fn_a: _Def, fn_b: _Def, given: Mapping[str, PyType]
) -> dict[str, PyType]:
    types: dict[str, PyType] = {}
    params_a = [*fn_a.args.posonlyargs, *fn_a.args.args]
    params_b = [*fn_b.args.posonlyargs, *fn_b.args.args]
    for pa, pb in zip(params_a, params_b, strict=False):
        t = given.get(pa.arg)
        if t is None:
            t = from_annotation(pa.annotation)
            if isinstance(t, Unknown):
                t = from_annotation(pb.annotation)
        types[pa.arg] = t
    return types


def _refuted(found: Counterexample, method: str, notes: list[str] | None = None) -> Result:
    args = ", ".join(found.args)
    if found.prior:
        args += "), called after the call(s) (" + "), (".join(", ".join(c) for c in found.prior)
    shown = f"input ({args})"
    if found.receiver:
        shown = (f"{shown} on the object {found.receiver}" if found.receiver.endswith(")")
                 else f"reading {found.receiver}")
    detail = (
        f"on {shown} the before version {found.before.describe()} and the after "
        f"version {found.after.describe()}"
    )
    if found.before.describe() == found.after.describe() and found.difference:
        detail += f" ({found.difference})"
    if found.hash_seed is not None:
        detail += (f", both run with PYTHONHASHSEED={found.hash_seed} (the result follows "
                   "the hash seed, as the order of a set of strings does; under this one each "
                   "version behaves the same every time)")
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
    elif outcome.kind == "module-check":
        reason = outcome.construct  # the loaded module differs from the model's reading
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
