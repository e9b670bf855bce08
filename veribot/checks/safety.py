"""Crash safety of one function: can an input of its declared domain make it raise an
exception its code does not raise on purpose?

An exception is *on purpose* where a ``raise X`` statement of the module raises it (in the
function or in a function of the module it calls), or where the function's docstring
documents it (a ``Raises:`` section, ``:raises X:``, a NumPy ``Raises`` heading), a
subclass of a documented builtin class included. Everything else is a crash:
``ZeroDivisionError`` from ``/``, ``KeyError`` and ``IndexError`` from a subscript,
``TypeError`` and ``AttributeError`` on ``None``, ``ValueError`` from ``int('x')``, an
``assert`` that fails, a ``StopIteration`` leaking from ``next``, a re-raise of one of
those.

Verdicts, as for equivalence:

- **safe**: the symbolic model of the function (``lang.pyexec``; its module's functions
  inlined, nothing taken as arbitrary) has no exit raising a crash for any input of the
  declared domain, every input is accounted for, and every loop ends within the unrolled
  iterations. The model's assumptions are listed.
- **unsafe**: an input the solver found for a crashing exit, called in the sandbox twice
  (fresh children), raised there both times an exception of the model's type that passed
  through the module and started at no ``raise`` statement of it (the child reports the
  innermost line of the module it passed and whether it started there). Never the model's
  word alone.
- **inconclusive**, with the reason: a construct or a type outside the model, a loop that
  can run longer than the bound, a crash the model predicts that the sandbox did not
  reproduce, the budget.

With ``line``, only what is raised at that line counts; with ``exception``, only that
class (or its subclasses).
"""

from __future__ import annotations

import ast
import builtins
import dataclasses
import logging
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import z3

from veribot.checks.lang import pyprobe, pyprove, pysource
from veribot.checks.lang.pyexec import Exit
from veribot.checks.lang.pyexec import Limits as ExecLimits
from veribot.checks.lang.pytypes import from_annotation, is_known
from veribot.checks.lang.pyvalues import OutOfTime, SBool, SIntB, SUnion, Unsupported, V, literal
from veribot.checks.project.package import Package
from veribot.checks.sandbox import Limits as SandboxLimits
from veribot.checks.sandbox import run_calls
from veribot.checks.search import construct, difftest
from veribot.checks.smt import SolverLimits, Status, check
from veribot.checks.verdict import Behaviour, BehaviourKind

__all__ = [
    "INCONCLUSIVE",
    "SAFE",
    "UNSAFE",
    "SafetyBudget",
    "SafetyResult",
    "check_safety",
    "documented_exceptions",
    "subclass",
]

log = logging.getLogger(__name__)

SAFE, UNSAFE, INCONCLUSIVE = "safe", "unsafe", "inconclusive"
# What the environment raises, not the code: never a crash of the function.
_ENVIRONMENT = frozenset({"MemoryError", "KeyboardInterrupt", "SystemExit", "ImportError",
                          "ModuleNotFoundError", "GeneratorExit"})
# Inputs asked of the solver per crashing exit before the model is doubted.
_TRIES = 3


@dataclass(frozen=True)
class SafetyBudget:
    """Limits for one question: wall time, loop unrolling, inlining, the solver."""

    timeout_s: float = 10.0
    loop_bound: int = 6
    inline_depth: int = 4
    solver_timeout_ms: int = 3000
    execute: bool = True  # whether a crashing input may be run (in the sandbox) at all


@dataclass(frozen=True)
class SafetyResult:
    """A verdict on one function (or one line of it)."""

    verdict: str  # SAFE, UNSAFE or INCONCLUSIVE
    reason: str  # "proof", "crash", or why not decided ("unsupported:...", "unknown-type")
    detail: str
    call: str = ""  # unsafe: the arguments, as a call's text
    line: int | None = None  # unsafe: where it raised; otherwise the line asked about
    exception: str = ""  # unsafe: the exception's class
    message: str = ""  # unsafe: the exception as Python printed it
    assumptions: tuple[str, ...] = ()
    method: str = ""
    time_s: float = 0.0
    notes: tuple[str, ...] = field(default=())
    args: tuple[str, ...] = ()  # unsafe: the call's arguments, one text each (as run)

    def as_record(self) -> dict[str, object]:
        return {"verdict": self.verdict, "reason": self.reason, "detail": self.detail,
                "input": self.call or None, "line": self.line,
                "exception": self.exception or None, "assumptions": list(self.assumptions),
                "method": self.method, "notes": list(self.notes), "time": round(self.time_s, 3)}


def check_safety(source: str, entry: str, *, line: int | None = None,
                 exception: str | None = None, budget: SafetyBudget = SafetyBudget(),
                 package: Package | None = None) -> SafetyResult:
    """Whether ``entry`` of the module ``source`` can crash (see the module's docstring).
    ``package``: the module as part of its package, for running an input."""
    start = time.monotonic()
    deadline = start + budget.timeout_s
    result = _check(source, entry, line, exception, budget, package, deadline)
    return _timed(result, time.monotonic() - start)


def _timed(result: SafetyResult, elapsed: float) -> SafetyResult:
    return dataclasses.replace(result, time_s=elapsed)


def _undecided(reason: str, detail: str, line: int | None = None,
               notes: Sequence[str] = ()) -> SafetyResult:
    return SafetyResult(INCONCLUSIVE, reason, detail, line=line, notes=tuple(notes))


def _check(source: str, entry: str, line: int | None, exception: str | None,
           budget: SafetyBudget, package: Package | None, deadline: float) -> SafetyResult:
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as err:
        return _undecided("parse-error", f"the module does not parse ({type(err).__name__})")
    fn = pysource.definition(tree, entry)
    if fn is None:
        return _undecided("entry-not-found", f"no function `{entry}` in the module")
    if isinstance(fn, ast.AsyncFunctionDef):
        return _undecided("unsupported:async-def", "an `async def`: the model runs no "
                          "coroutines", fn.lineno)
    if exception is not None and not _known_exception(exception):
        return _undecided("unknown-exception", f"`{exception}` is not a builtin exception "
                          "class", line)
    documented = documented_exceptions(fn) | _PROTOCOL.get(fn.name, frozenset())
    found = _modelled(tree, source, entry, line, exception, budget, package, deadline,
                      documented)
    if found.verdict != INCONCLUSIVE or found.reason in _NOT_SEARCHED or not budget.execute:
        return found
    return _searched(found, fn, source, entry, line, exception, package, deadline, documented)


# Where random testing cannot add anything: the question itself is off, or nothing may run.
_NOT_SEARCHED = frozenset({"parse-error", "entry-not-found", "unsupported:async-def",
                           "unknown-exception", "not-executed"})


def _searched(found: SafetyResult, fn: ast.FunctionDef, source: str, entry: str,
              line: int | None, exception: str | None, package: Package | None,
              deadline: float, documented: frozenset[str]) -> SafetyResult:
    """Where the model decided nothing: random testing (``difftest.search_crash``: inputs
    of the annotated types, the project's objects built by their constructors), and each
    crash it finds run again twice in fresh children. Unsafe only on such a crash; else
    the model's reason stands, with what the search tried."""
    left = deadline - time.monotonic()
    if left < 1.5:
        return _noted(found, "random testing was not run: the budget is spent")
    undeclared = _undeclared(source, entry, fn)
    if undeclared:
        # No declared domain: any value is a call Python allows, but a crash on a value the
        # code was never meant to get says nothing a reviewer can use.
        return _noted(found, f"random testing was not run: {undeclared} has no annotation "
                      "(its domain is not declared)")
    types = {a.arg: from_annotation(a.annotation)
             for a in (*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs)}
    raise_lines = _raise_lines(source)
    crash = {"raise_lines": sorted(raise_lines), "documented": sorted(documented),
             "environment": sorted(_ENVIRONMENT), "line": line, "exception": exception}
    try:
        candidates, tried, note = difftest.search_crash(
            source, entry, types, crash, deadline_s=left * 0.7, limits=_sandbox(deadline),
            package=package)
    except Exception as err:  # the search's boundary: the model's answer stands
        log.exception("the crash search of %s failed", entry)
        return _noted(found, f"random testing failed ({type(err).__name__})")
    for args in candidates[:3]:
        if time.monotonic() > deadline + 5:
            break
        seen = _run(source, entry, args, package, deadline)
        if len(seen) == 2 and all(_a_crash(b, raise_lines, documented, line, exception)
                                  for b in seen) and (seen[0].value == seen[1].value
                                                      and seen[0].site == seen[1].site):
            b = seen[0]
            where = b.site[0] if b.site else None
            call = ", ".join(args)
            return SafetyResult(
                UNSAFE, "crash", f"`{_shown(entry, call)}` raises {b.text} at line {where}, "
                "found by random testing and run again in the sandbox (twice)",
                call=call, args=tuple(args), line=where, exception=str(b.value),
                message=b.text, method="random testing, then executed",
                notes=(f"the model: {found.detail}",))
    what = (f"random testing tried {tried} inputs without a crash"
            + (f" ({note})" if note and "no crash" not in note else ""))
    if candidates:
        what = (f"random testing found {len(candidates)} input(s) that crashed once but not "
                "alike when run again")
    return _noted(found, what)


def _undeclared(source: str, entry: str, fn: ast.FunctionDef) -> str:
    """The first parameter without an annotation, of the function or (for a method) of
    the constructor that builds its object, as a person reads it; "" if none."""
    args = [*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs]
    if "." in entry and args and not any(
            isinstance(d, ast.Name) and d.id == "staticmethod" for d in fn.decorator_list):
        args = args[1:]  # `self` or `cls`
    for a in args:
        if a.annotation is None:
            return f"`{a.arg}`"
    if "." not in entry or entry.endswith(".__init__"):
        return ""
    member = construct.member(source, entry)
    if member is None or member.why_not:
        return ""  # no object is built: the search says why
    init = _own_init(source, member.cls)
    if init is not None:  # its own constructor: each parameter says its type
        for a in [*init.args.posonlyargs, *init.args.args, *init.args.kwonlyargs][1:]:
            if a.annotation is None:
                return f"`{a.arg}` of `{member.cls}`'s constructor"
        return ""
    for param in member.params:  # a dataclass's fields, an inherited constructor
        if not is_known(param.type):
            return f"`{param.name}` of `{member.cls}`'s constructor"
    return ""


def _own_init(source: str, cls: str) -> ast.FunctionDef | None:
    """The ``__init__`` the class named ``cls`` (``A.B`` for a nested one) defines itself."""
    try:
        body: list[ast.stmt] = ast.parse(source).body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    found: ast.ClassDef | None = None
    for part in cls.split("."):
        found = next((c for c in body if isinstance(c, ast.ClassDef) and c.name == part), None)
        if found is None:
            return None
        body = found.body
    return next((f for f in body if isinstance(f, ast.FunctionDef) and f.name == "__init__"),
                None)


def _noted(found: SafetyResult, note: str) -> SafetyResult:
    return dataclasses.replace(found, notes=(*found.notes, note))


def _modelled(tree: ast.Module, source: str, entry: str, line: int | None,
              exception: str | None, budget: SafetyBudget, package: Package | None,
              deadline: float, documented: frozenset[str]) -> SafetyResult:
    """The symbolic model's answer (see the module's docstring)."""
    limits = ExecLimits(loop_bound=budget.loop_bound, inline_depth=budget.inline_depth,
                        deadline=deadline - budget.timeout_s * 0.4)
    try:
        problem = pyprove.build(tree, tree, entry, None, limits, shared=False)
    except Unsupported as err:
        return _undecided(f"unsupported:{_slug(err.construct)}",
                          f"the model does not cover {err.construct}"
                          + (f" (line {err.line})" if err.line else ""), err.line or line)
    except pyprove.UnknownTypes as err:
        names = ", ".join(f"`{n}`" for n in err.names)
        shown = ", ".join(f"`{t.text()}`" for t in err.types
                          if hasattr(t, "text") and t.text() not in ("?", ""))
        return _undecided("unknown-type", f"no model of the type of {names}"
                          + (f" ({shown})" if shown else "") + ": not checked", line)
    except OutOfTime as err:
        return _undecided("timeout", f"time ran out while the model was built ({err})", line)
    except RecursionError:
        return _undecided("unsupported:deep-nesting", "the code is nested too deeply to model")
    except LookupError:
        return _undecided("entry-not-found", f"no function `{entry}` the model can read "
                          "(a nested or decorated definition?)")
    except Exception as err:  # the prover's boundary: report, never a traceback
        log.exception("safety model failed on %s", entry)
        return _undecided("internal-error", f"the model failed ({type(err).__name__}: {err})")
    crashes = [e for e in problem.exits_a if _asked(e, line, exception)
               and not e.on_purpose and not _intended(e.exc, documented)]
    within = ([z3.Not(z3.Or([e.guard for e in problem.exhausted]))]
              if problem.exhausted else [])
    assumptions = tuple(problem.assumptions)
    try:
        if crashes:
            found = _crash(problem, crashes, within, budget, package, source, entry,
                           deadline, documented)
            if found is not None:
                return found
        proof = _proof(problem, within, line, assumptions, budget, deadline, bool(crashes))
        if proof.verdict == SAFE and budget.execute and not problem.method:
            return _cross_checked(proof, problem, within, source, entry, line, exception,
                                  budget, package, deadline, documented)
        return proof
    except OutOfTime as err:
        return _undecided("timeout", f"time ran out ({err})", line)


def _crash(problem: pyprove.Problem, crashes: list[Exit], within: list[z3.BoolRef],
           budget: SafetyBudget, package: Package | None, source: str, entry: str,
           deadline: float, documented: frozenset[str]) -> SafetyResult | None:
    """An input that crashes, run and seen to crash; an inconclusive result where the
    model finds one that cannot be run or is not seen to crash, or where the solver gave
    up on an exit; None where no crashing exit is reachable within the bound.

    Each crashing exit is asked on its own, the smallest guard first (one hard exit, an
    ``OverflowError`` of a float conversion, must not hide an easy ``ZeroDivisionError``),
    small inputs first (a call a person reads at a glance)."""
    unseen: list[str] = []
    gave_up: list[Exit] = []
    tries = 0
    readable = [*pyprobe.small_inputs(problem.inputs), *_no_bools(problem.inputs)]
    ordered = sorted(crashes, key=lambda e: _size(e.guard))
    share = 1.0 / (1 + len(crashes))
    # The exits a small input reaches first (`f(0.0)` before a float overflow's 1e308).
    first = [e for e in ordered if readable and check(
        [e.guard, *within, *readable], _solver(budget, deadline, share * 0.3)
    ).status is Status.SAT]
    for exit_ in [*first, *(e for e in ordered if e not in first)]:
        small = list(readable)
        blocked: list[z3.BoolRef] = []
        while tries < _TRIES * 2:
            facts = [exit_.guard, *within, *blocked]
            answer = check([*facts, *small], _solver(budget, deadline, share)) if small else None
            if answer is None or answer.status is not Status.SAT:
                small = []
                answer = check(facts, _solver(budget, deadline, share))
            if answer.status is Status.UNKNOWN:
                gave_up.append(exit_)
                break
            if answer.status is not Status.SAT:
                break  # this exit is unreachable (or every input of it was tried)
            tries += 1
            assert answer.model is not None
            model = answer.model
            args = tuple(literal(model, v) for v in problem.inputs)
            call = ", ".join(pyprove.call_texts(problem, args))
            if problem.method:
                return _undecided("object-not-built", f"the model finds a state of the object "
                                  f"({call}) in which the method raises {exit_.exc} at line "
                                  f"{exit_.line}, but no object is built in that state to run "
                                  "it", exit_.line)
            if not budget.execute:
                return _undecided("not-executed", f"the model finds that `{_name(entry)}"
                                  f"({call})` raises {exit_.exc} at line {exit_.line}; running "
                                  "code is off here, so it was not confirmed", exit_.line)
            seen = _run(source, entry, pyprove.call_texts(problem, args), package, deadline)
            confirmed = _confirmed(seen, exit_, source, documented)
            if confirmed is not None:
                behaviour, where = confirmed
                return SafetyResult(
                    UNSAFE, "crash",
                    f"`{_shown(entry, call)}` raises {behaviour.text} at line {where}, "
                    "run in the sandbox (twice)",
                    call=call, args=pyprove.call_texts(problem, args), line=where,
                    exception=str(behaviour.value), message=behaviour.text,
                    method="smt, then executed",
                    notes=(f"the model's exit: {exit_.exc} at line {exit_.line}",))
            unseen.append(f"`{_shown(entry, call)}`: " + _what(seen))
            blocked.append(pyprove.block(model, problem.inputs))
            if len(blocked) >= _TRIES:
                break
    if unseen:
        return _not_reproduced(unseen)
    if gave_up:
        hard = gave_up[0]
        return _undecided("solver-unknown", f"the solver gave up on whether {hard.exc} at "
                          f"line {hard.line} can be raised", hard.line)
    return None


def _no_bools(inputs: Sequence[V]) -> list[z3.BoolRef]:
    """Preferences for a readable call: ``0`` rather than ``False`` where an int (or a
    float) is declared and the typing rules admit a bool too."""
    out: list[z3.BoolRef] = []
    for v in inputs:
        if isinstance(v, SIntB):  # codes 0 and 1 are False and True (``SIntB``)
            out.append(z3.Or(v.e < 0, v.e > 1))
        elif isinstance(v, SUnion):
            out += [z3.Not(guard) for guard, alt in v.alts if isinstance(alt, SBool | SIntB)]
    return out


def _size(term: z3.ExprRef) -> int:
    """The number of nodes of a term (shared ones counted once)."""
    seen: set[int] = set()
    stack = [term]
    while stack and len(seen) < 100_000:
        t = stack.pop()
        if t.get_id() in seen:
            continue
        seen.add(t.get_id())
        stack.extend(t.children())
    return len(seen)


def _not_reproduced(unseen: list[str]) -> SafetyResult:
    return _undecided("not-reproduced", "the model finds inputs that crash, but running "
                      "them did not: " + "; ".join(unseen[:2]) + " (the model may be wrong "
                      "about a construct here: no verdict)")


def _proof(problem: pyprove.Problem, within: list[z3.BoolRef], line: int | None,
           assumptions: tuple[str, ...], budget: SafetyBudget, deadline: float,
           had_crashes: bool) -> SafetyResult:
    gap = pyprove.uncovered(problem.exits_a, within, _solver(budget, deadline, 1.0))
    if gap:
        return _undecided("solver-unknown", f"the model could not account for every input "
                          f"({gap})", line)
    where = f"line {line}" if line is not None else "the function"
    if problem.exhausted:
        beyond = z3.Or([e.guard for e in problem.exhausted])
        answer = check([beyond], _solver(budget, deadline, 1.0))
        if answer.status is not Status.UNSAT:
            first = min(problem.exhausted, key=lambda e: e.line)
            what = "loop" if first.why == "loop-bound" else "recursion"
            return _undecided(f"bounded:{first.why}", f"no crash at {where} for inputs that "
                              f"need at most {budget.loop_bound} iterations, but the {what} "
                              f"at line {first.line} can run longer", first.line)
    detail = (f"no input of the declared domain makes {where} raise an exception it does "
              "not raise on purpose")
    if had_crashes:
        detail += " (the exits that would raise one are unreachable)"
    return SafetyResult(SAFE, "proof", detail, line=line, assumptions=assumptions,
                        method="smt: complete model" if not problem.exhausted else
                        "smt: loops fully unrolled (trip count bounded by the domain)")


# Inputs the proof's cross-check runs: one per exit of the model, small ones first.
_SAMPLES = 8


def _cross_checked(proof: SafetyResult, problem: pyprove.Problem, within: list[z3.BoolRef],
                   source: str, entry: str, line: int | None, exception: str | None,
                   budget: SafetyBudget, package: Package | None, deadline: float,
                   documented: frozenset[str]) -> SafetyResult:
    """The proof, once an input reaching each exit of the model (up to ``_SAMPLES``) ran
    in the sandbox without a crash; where one crashed (twice alike), unsafe: the model
    missed it, and no proof stands against a run."""
    calls: list[tuple[str, ...]] = []
    small = [*pyprobe.small_inputs(problem.inputs), *_no_bools(problem.inputs)]
    for exit_ in problem.exits_a[:_SAMPLES]:
        try:
            limits = _solver(budget, deadline, 0.1)
        except OutOfTime:
            break
        answer = check([exit_.guard, *within, *small], limits)
        if answer.status is not Status.SAT:
            answer = check([exit_.guard, *within], limits)
        if answer.status is Status.SAT and answer.model is not None:
            args = tuple(literal(answer.model, v) for v in problem.inputs)
            calls.append(pyprove.call_texts(problem, args))
    if not calls:
        return proof
    seen = run_calls(source, entry, [list(c) for c in dict.fromkeys(calls)],
                     limits=_sandbox(deadline), package=package)
    raise_lines = _raise_lines(source)
    for args, behaviour in zip(dict.fromkeys(calls), seen, strict=False):
        if not _a_crash(behaviour, raise_lines, documented, line, exception):
            continue
        again = _run(source, entry, args, package, deadline)
        call = ", ".join(args)
        if all(_a_crash(b, raise_lines, documented, line, exception) and b.value ==
               behaviour.value and b.site == behaviour.site for b in again) and again:
            where = behaviour.site[0] if behaviour.site else None
            return SafetyResult(
                UNSAFE, "crash",
                f"`{_shown(entry, call)}` raises {behaviour.text} at line {where}, run in the "
                "sandbox (three times); the model had it safe, and is wrong here",
                call=call, args=tuple(args), line=where, exception=str(behaviour.value),
                message=behaviour.text, method="executed (the proof's cross-check)")
        return _undecided("not-reproduced", f"the model proves it safe, but `{_name(entry)}"
                          f"({call})` raised {behaviour.text} once and not alike again: no "
                          "verdict", line)
    return proof


def _a_crash(b: Behaviour, raise_lines: frozenset[int], documented: frozenset[str],
             line: int | None, exception: str | None) -> bool:
    """Whether a run raised what the question counts as a crash."""
    if b.kind is not BehaviourKind.RAISED or b.refused or b.at_import or b.site is None:
        return False
    name = str(b.value)
    where, started_here, raised = b.site
    if where is None or raised or name in _ENVIRONMENT or _intended(name, documented):
        return False
    if started_here and where in raise_lines:
        return False
    if line is not None and where != line:
        return False
    return exception is None or subclass(name, exception)


def _run(source: str, entry: str, args: Sequence[str], package: Package | None,
         deadline: float) -> list[Behaviour]:
    """The call run twice, each time in a fresh sandbox child."""
    out: list[Behaviour] = []
    for _ in range(2):
        out += run_calls(source, entry, [list(args)], limits=_sandbox(deadline),
                         package=package)
    return out


def _sandbox(deadline: float) -> SandboxLimits:
    left = max(1.0, deadline - time.monotonic())
    return SandboxLimits(wall_s=min(10.0, left + 2.0), call_s=min(2.0, max(0.5, left / 4)))


def _confirmed(seen: list[Behaviour], exit_: Exit, source: str,
               documented: frozenset[str]) -> tuple[Behaviour, int] | None:
    """The behaviour and line of a crash that every run showed alike, or None."""
    if len(seen) != 2 or any(b.kind is not BehaviourKind.RAISED or b.refused or b.at_import
                             for b in seen):
        return None
    first, second = seen
    if first.value != second.value or first.site != second.site or first.site is None:
        return None
    name = str(first.value)
    where, started_here, raised = first.site
    if where is None or raised or name in _ENVIRONMENT or _intended(name, documented):
        return None  # `raised`: a `raise` statement of the project's code, on purpose
    if exit_.exc is not None and not subclass(name, exit_.exc):
        return None  # not what the model predicted: the model is not trusted for it
    if started_here and where in _raise_lines(source):
        return None  # a `raise` statement of the module: on purpose
    return first, where


def _what(seen: list[Behaviour]) -> str:
    if not seen:
        return "it did not run"
    return seen[0].describe()


def _asked(e: Exit, line: int | None, exception: str | None) -> bool:
    if e.exc is None or e.exc in _ENVIRONMENT:
        return False
    if line is not None and e.line != line:
        return False
    return exception is None or subclass(e.exc, exception)


def _intended(name: str | None, documented: frozenset[str]) -> bool:
    return name is not None and any(subclass(name, d) for d in documented)


def subclass(name: str, of: str) -> bool:
    """Whether builtin exception class ``name`` is ``of`` or a subclass of it."""
    if name == of:
        return True
    a, b = getattr(builtins, name, None), getattr(builtins, of, None)
    return (isinstance(a, type) and isinstance(b, type) and issubclass(a, BaseException)
            and issubclass(a, b))


def _known_exception(name: str) -> bool:
    cls = getattr(builtins, name, None)
    return isinstance(cls, type) and issubclass(cls, BaseException)


_SECTION = re.compile(r"^\s*(Raises|Raise|Exceptions)\s*:?\s*$")
_NUMPY_RULE = re.compile(r"^\s*-{3,}\s*$")
_SPHINX = re.compile(r":(?:raises?|except(?:ion)?)\s+([\w.]+(?:\s*,\s*[\w.]+)*)\s*:")
_ITEM = re.compile(r"^\s*([A-Za-z_][\w.]*)\s*(?::|$|\s+(?:if|when)\b)")


# What a special method raises by its protocol, not by accident: `__getitem__` says "no
# such key" with a KeyError, `__next__` "no more" with StopIteration.
_PROTOCOL: dict[str, frozenset[str]] = {
    "__getitem__": frozenset({"LookupError"}),
    "__delitem__": frozenset({"LookupError"}),
    "__missing__": frozenset({"LookupError"}),
    "__getattr__": frozenset({"AttributeError"}),
    "__getattribute__": frozenset({"AttributeError"}),
    "__delattr__": frozenset({"AttributeError"}),
    "__get__": frozenset({"AttributeError"}),
    "__next__": frozenset({"StopIteration"}),
    "__anext__": frozenset({"StopAsyncIteration"}),
    "__exit__": frozenset({"BaseException"}),  # it may re-raise what the block raised
}


def documented_exceptions(fn: ast.AST) -> frozenset[str]:
    """The exception classes the docstring of ``fn`` says it raises (last dotted part)."""
    if not isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
        return frozenset()
    doc = ast.get_docstring(fn) or ""
    found: set[str] = set()
    for m in _SPHINX.finditer(doc):
        found |= {n.strip().rsplit(".", 1)[-1] for n in m.group(1).split(",")}
    lines = doc.splitlines()
    i = 0
    while i < len(lines):
        if not _SECTION.match(lines[i]):
            i += 1
            continue
        i += 1
        if i < len(lines) and _NUMPY_RULE.match(lines[i]):
            i += 1
        indent = None
        while i < len(lines) and (lines[i].strip() or indent is None):
            text = lines[i]
            if not text.strip():
                i += 1
                continue
            depth = len(text) - len(text.lstrip())
            if indent is None:
                indent = depth
            if depth < indent or _SECTION.match(text):
                break
            item = _ITEM.match(text)
            if depth == indent and item:
                found |= {n.strip().rsplit(".", 1)[-1] for n in item.group(1).split(",")}
            i += 1
    return frozenset(found)


def _raise_lines(source: str) -> frozenset[int]:
    """The lines of the module's ``raise`` statements (each line they span)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return frozenset()
    return frozenset(n for r in ast.walk(tree) if isinstance(r, ast.Raise)
                     for n in range(r.lineno, (r.end_lineno or r.lineno) + 1))


def _solver(budget: SafetyBudget, deadline: float, share: float) -> SolverLimits:
    left_ms = int((deadline - time.monotonic()) * 1000 * 0.5 * share)
    if left_ms < 100:
        raise OutOfTime("the solver's share of the budget is spent")
    return SolverLimits(timeout_ms=max(100, min(budget.solver_timeout_ms, left_ms)))


def _name(entry: str) -> str:
    return entry.rsplit(".", 1)[-1]


def _shown(entry: str, call: str) -> str:
    """The call as a person writes it: ``C(0).inv()`` for a method's ``@C(0)`` receiver."""
    if entry.endswith(".__init__"):  # the arguments are the constructor's
        return f"{entry.rsplit('.', 2)[-2]}({call})"
    if call.startswith("@"):
        # The receiver is a constructor call: its own commas are inside parentheses.
        receiver, rest = call[1:], ""
        depth = 0
        for i, ch in enumerate(call[1:]):
            depth += ch in "([{"
            depth -= ch in ")]}"
            if ch == "," and depth == 0:
                receiver, rest = call[1:i + 1], call[i + 3:]
                break
        if receiver.endswith(f").{_name(entry)}") and not rest:
            return receiver  # a property, read: `Box(3).area`
        return f"{receiver}.{_name(entry)}({rest})"
    return f"{_name(entry)}({call})"


def _slug(construct: str) -> str:
    text = re.sub(r"[^a-z0-9]+", "-", construct.lower()).strip("-")
    return text[:60] or "construct"
