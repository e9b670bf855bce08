"""Hints read into the engine's own symbolic model, and what the solver made of each.

A ``Session`` holds the hints of one unit while the engine runs, and is consulted at two
places, so that nothing a hint says is ever taken on trust:

- **Loop induction** (``lang.pyinduct``): each relational invariant (and each pair of a
  correspondence) becomes one more Houdini candidate beside the engine's own. Houdini keeps
  a candidate only if the solver shows it holds on entering both loops and that one
  lock-step iteration preserves it; a hint with any part dropped is dropped whole (an
  unproven hint changes nothing). What survives is a proven invariant, whoever wrote it.
- **Shared helpers** (``lang.pyprove`` builds them as uninterpreted functions): a lemma is
  first proven on the helper's own body, for every input of its parameters' types (the
  body fully modelled, every input reaching an exit). Only then is the helper's arbitrary
  model narrowed to the functions satisfying the lemma: where it returns normally and the
  ``requires`` holds, the ``ensures`` holds. The real helper is one of those functions, so
  a proof over all of them holds for it.

Expressions are evaluated by the engine's executor (``pyexec``) over the symbolic values,
with Python's own semantics (an expression that would raise counts as false); the text is
never run.
"""

from __future__ import annotations

import ast
import copy
import enum
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace

import z3

from veribot.checks.hints.format import Expr, Hint, called
from veribot.checks.lang import pyprove, pysource
from veribot.checks.lang.pyexec import Executor, Limits, SharedCall, State
from veribot.checks.lang.pymodule import Module
from veribot.checks.lang.pyprove import Outcome, uncovered
from veribot.checks.lang.pyshared import Helper
from veribot.checks.lang.pytypes import PyType
from veribot.checks.lang.pyvalues import (
    Fresh,
    SInt,
    SUnbound,
    Unsupported,
    V,
)
from veribot.checks.smt import SolverLimits, check
from veribot.checks.smt import Status as Sat
from veribot.checks.verdict import Result, Verdict

log = logging.getLogger(__name__)

Env = dict[str, V]
Formula = Callable[[Env, Env, z3.ArithRef], z3.BoolRef]
Candidate = tuple[str, Formula]

_A, _B, _K, _RESULT = "_vbh_a_", "_vbh_b_", "_vbh_k", "result"
EVAL_LIMITS = Limits(loop_bound=4, inline_depth=2, max_inlines=8)
LEMMA_SOLVER = SolverLimits(timeout_ms=3000, rlimit=30_000_000)
FALSE = z3.BoolVal(False)


class Status(enum.Enum):
    """What became of a hint."""

    PROVEN = "proven"  # the solver proved it (an inductive invariant, a lemma)
    REFUTED = "refuted"  # the solver showed it does not hold (or is not inductive)
    UNPROVEN = "unproven"  # neither: the solver gave up, or the model does not cover it
    REJECTED = "rejected"  # it cannot be read, or names what does not exist
    NOT_REACHED = "not reached"  # the engine never came to the point it is about


@dataclass
class HintResult:
    """A hint, its status, why, and whether the proof of the unit used it."""

    hint: Hint
    status: Status = Status.NOT_REACHED
    reason: str = "the engine did not reach the point this hint is about"
    used: bool = False

    def line(self) -> str:
        """One line for a report: ``proven, used: invariant `...` ``."""
        state = self.status.value + (", used by the proof" if self.used else "")
        return f"{state}: {self.hint.text}" + (f" ({self.reason})" if self.reason else "")


@dataclass
class Session:
    """The hints of one unit, consulted by the engine, and their results."""

    hints: Sequence[Hint]
    results: list[HintResult] = field(init=False)
    _offered: dict[int, set[str]] = field(init=False, default_factory=dict)
    _formulas: dict[int, list[_Invariant]] = field(init=False, default_factory=dict)
    _kept: set[str] = field(init=False, default_factory=set)
    _lemmas_applied: set[int] = field(init=False, default_factory=set)

    def __post_init__(self) -> None:
        self.results = [HintResult(h) for h in self.hints]
        for r in self.results:
            if r.hint.kind == "precondition":
                r.reason = ("not checked: the model of the function was not built; a "
                            "precondition is shown, never assumed for a proof")
            elif r.hint.kind == "lemma":
                r.reason = (f"`{r.hint.function}` was not modelled as an arbitrary shared "
                            "function here (inlined, changed, or not called), so the lemma "
                            "was not needed")
            elif r.hint.statements and not r.hint.variables:
                r.reason = ("the relational check did not try it (it runs only where the "
                            "code may be executed, and not when the versions are identical)")
            else:
                r.reason = ("loop induction did not apply to these versions (it needs one "
                            "top-level loop in each, run in lock step)")

    # -- loop induction (pyinduct) ---------------------------------------------------------

    def candidates(
        self, module_a: Module, module_b: Module, loops: tuple[int, int], ea: Env, eb: Env,
        helpers: Mapping[str, SharedCall],
    ) -> list[Candidate]:
        """The invariant hints as Houdini candidates over the two loop heads' variables.

        Called once per induction attempt; a hint that cannot be read at the loop heads
        (an unknown variable, a construct the model does not cover) is rejected here.
        """
        self._offered = {}
        self._formulas = {}
        self._kept = set()
        out: list[Candidate] = []
        for i, r in enumerate(self.results):
            parts = r.hint.invariants()
            if not parts:
                continue
            if r.hint.loops is not None and r.hint.loops != loops:
                self._set(i, Status.REJECTED, f"the engine pairs the loops at lines {loops[0]} "
                          f"and {loops[1]}, not {r.hint.loops[0]} and {r.hint.loops[1]}")
                continue
            problem = _call_problem(parts, module_a, module_b)
            if problem:
                self._set(i, Status.REJECTED, problem)
                continue
            names: set[str] = set()
            formulas: list[_Invariant] = []
            try:
                for part in parts:
                    formula = _invariant(part, module_a, helpers)
                    formula(ea, eb, z3.Int("_vbh_probe_k"), strict=True)
                    formulas.append(formula)
                    name = f"hint {i + 1}: {part.text}"
                    names.add(name)
                    out.append((name, formula))
            except Exception as err:  # the hint boundary: a hint never stops the engine
                self._set(i, Status.REJECTED, f"the model cannot read it at the loop heads: "
                          f"{_why(err)}")
                out = [c for c in out if c[0] not in names]
                continue
            self._offered[i] = names
            self._formulas[i] = formulas
            self._set(i, Status.UNPROVEN, "offered as a loop invariant, but the induction "
                      "stopped before checking it")
        return out

    def prune(self, kept: Sequence[Candidate], stage: str) -> list[Candidate]:
        """Drop every part of a hint any part of which Houdini dropped at ``stage``
        ("entry": it does not hold on entering the loops; "step": an iteration does not
        preserve it)."""
        names = {c[0] for c in kept}
        dropped: set[str] = set()
        for i, offered in self._offered.items():
            if any(f.failed for f in self._formulas.get(i, ())):
                # Read as false where the model could not read it: harmless as a goal,
                # but as an assumption it would make every step vacuous. Never kept.
                dropped |= offered
                if self.results[i].status is not Status.REJECTED:
                    self._set(i, Status.REJECTED, "the model cannot read it at every loop "
                              "head (it was read at the first one only)")
                continue
            if offered <= names or self.results[i].status is Status.REFUTED:
                if not offered <= names:
                    dropped |= offered
                continue
            dropped |= offered
            missing = sorted(offered - names)[0].split(": ", 1)[1]
            why = ("it does not hold on entering the loops" if stage == "entry" else
                   "one lock-step iteration does not preserve it (together with the other "
                   "invariants kept)")
            self._set(i, Status.REFUTED, f"`{missing}`: {why}")
        return [c for c in kept if c[0] not in dropped]

    def kept(self, names: Sequence[str]) -> None:
        """The invariants Houdini ended with: the hints among them are proven inductive."""
        self._kept = set(names)
        for i, offered in self._offered.items():
            if offered <= self._kept:
                self._set(i, Status.PROVEN, "Z3: holds on entering the loops and is "
                          "preserved by every lock-step iteration")

    def induction_proved(self) -> None:
        """The induction that kept the proven invariants went through: they were used."""
        for i, offered in self._offered.items():
            if offered <= self._kept:
                self.results[i].used = True

    # -- shared helpers (pyprove) ---------------------------------------------------------

    def wrap_helper(self, helper: Helper, module: Module, call: SharedCall) -> SharedCall:
        """``call`` narrowed by the proven lemmas about ``helper`` (unchanged if none)."""
        mine = [i for i, r in enumerate(self.results)
                if r.hint.kind == "lemma" and r.hint.function == helper.name]
        proven = [i for i in mine if self._prove_lemma(i, helper, module)]
        if not proven:
            return call
        fn = module.functions[helper.name]
        params = [a.arg for a in fn.args.args]

        def narrowed(args: Sequence[V]) -> tuple[V, z3.BoolRef, z3.ArithRef] | None:
            applied = call(args)
            if applied is None:
                return None
            value, returns, outcome = applied
            conds = []
            for i in proven:
                hint = self.results[i].hint
                env = dict(zip(params, args, strict=True))
                assert hint.ensures is not None
                try:
                    holds = _lemma_condition(hint, module, env, value)
                except Exception:  # the hint boundary: not applied, the arbitrary model kept
                    log.debug("lemma %s not applied", hint.text, exc_info=True)
                    continue
                conds.append(holds)
                self._lemmas_applied.add(i)
            return value, z3.And(returns, *conds), outcome

        return narrowed

    def _prove_lemma(self, i: int, helper: Helper, module: Module) -> bool:
        r = self.results[i]
        if r.status in (Status.PROVEN, Status.REFUTED, Status.REJECTED):
            return r.status is Status.PROVEN
        hint = r.hint
        fn = module.functions.get(hint.function)
        if fn is None:
            self._set(i, Status.REJECTED, f"no function `{hint.function}` in the module")
            return False
        for cond in (hint.requires, hint.ensures):
            for name in called(cond) if cond is not None else ():
                if name not in module.functions and name not in ("len", "abs", "min", "max"):
                    self._set(i, Status.REJECTED, f"it calls `{name}`, which is not a function "
                              "of the module")
                    return False
        fresh = Fresh(f"lemma_{hint.function}_")
        args = [fresh.value(t, a.arg) for t, a in zip(helper.params, fn.args.args, strict=True)]
        env = {a.arg: v for a, v in zip(fn.args.args, args, strict=True)}
        try:
            run = Executor(module, fresh, EVAL_LIMITS).run(fn, args)
            if run.exhausted:
                self._set(i, Status.UNPROVEN, f"the body of `{hint.function}` runs beyond the "
                          "model's unrolling bound")
                return False
            gap = uncovered(run.exits, [], LEMMA_SOLVER)
            if gap:
                self._set(i, Status.UNPROVEN, f"the model of `{hint.function}` does not account "
                          f"for every input ({gap})")
                return False
            bad = []
            for e in run.exits:
                if e.value is None:
                    continue
                bad.append(z3.And(e.guard, z3.Not(_lemma_condition(hint, module, env, e.value))))
        except Exception as err:  # the hint boundary: a hint never stops the engine
            self._set(i, Status.UNPROVEN, f"the model does not cover it: {_why(err)}")
            return False
        answer = check([z3.Or(bad)] if bad else [FALSE], LEMMA_SOLVER)
        if answer.status is Sat.UNSAT:
            self._set(i, Status.PROVEN, f"Z3: proven on the body of `{hint.function}` for "
                      "every input of its parameters' types")
            return True
        if answer.status is Sat.SAT:
            self._set(i, Status.REFUTED, f"Z3 found an input of `{hint.function}` where it "
                      "returns and the lemma does not hold")
        else:
            self._set(i, Status.UNPROVEN, f"the solver gave up ({answer.why})")
        return False

    # -- statement correspondences (the relational check) ----------------------------------

    def relational(
        self, attempt: Callable[[Mapping[int, int], list[str]], Result | None]
    ) -> Result | None:
        """The relational check tried with each statement correspondence, in turn: the
        first verified result (saying which hint it used), or None.

        ``attempt(moves, why)`` is the check itself (``relational.check``): the hint only
        proposes the matching; the check shows the reordering harmless and the reordered
        code the same, or appends why not to ``why``.
        """
        for i, r in enumerate(self.results):
            if not r.hint.statements:
                continue
            why: list[str] = []
            try:
                result = attempt(dict(r.hint.statements), why)
            except Exception as err:  # the hint boundary: a hint never stops the engine
                result, why = None, [_why(err)]
            if result is None or result.verdict is not Verdict.VERIFIED:
                self._set(i, Status.UNPROVEN, "the relational check did not accept it: "
                          + (why[0] if why else "it was not confirmed"))
                continue
            self._set(i, Status.PROVEN, "the relational check: every pair of statements "
                      "reordered commutes, and the reordered before version is the same code "
                      "as the after version")
            r.used = True
            return replace(result, detail=f"{result.detail}, with the statement order of the "
                           f"hint {r.hint.text} (checked by the relational check)")
        return None

    # -- preconditions (shown, never assumed) ------------------------------------------------

    def check_preconditions(self, tree_a: ast.Module, tree_b: ast.Module, entry: str,
                            given: Mapping[str, PyType] | None, limits: Limits) -> None:
        """Whether the versions agree on every input where each precondition holds.

        Only shown: a verdict never rests on a precondition. Proven only by a complete
        model (no loop beyond the unrolling bound on those inputs); a precondition no input
        of the domain satisfies is refuted.
        """
        mine = [i for i, r in enumerate(self.results) if r.hint.kind == "precondition"]
        if not mine:
            return
        try:
            problem = pyprove.build(tree_a, tree_b, entry, given, limits)
        except Exception as err:  # the hint boundary: a hint never stops the engine
            for i in mine:
                self._set(i, Status.UNPROVEN, f"the model does not cover the function: "
                          f"{_why(err)}")
            return
        assert problem.module_a is not None
        env = dict(zip(problem.names, problem.inputs, strict=True))
        for i in mine:
            expr = self.results[i].hint.expr
            assert expr is not None
            try:
                pre = _truth(expr.tree, problem.module_a, dict(env), problem.helpers)
            except Exception as err:  # the hint boundary
                self._set(i, Status.REJECTED, f"the model cannot read it over the parameters: "
                          f"{_why(err)}")
                continue
            self._set(i, *_under(problem, pre))

    # -- the verdict ----------------------------------------------------------------------

    def label(self, outcome: Outcome) -> Outcome:
        """A proof that rests on hints says so: which, and that each was proven."""
        if outcome.kind != "proved":
            return outcome  # nothing was used: there is no proof
        for i in self._lemmas_applied:
            self.results[i].used = True
        if not any(r.used for r in self.results):
            return outcome
        used = [r for r in self.results if r.used]
        shown = "; ".join(f"{r.hint.text} ({r.reason})" for r in used)
        return replace(
            outcome,
            detail=f"{outcome.detail}, with {len(used)} hint(s), each proven by Z3 first: "
                   f"{shown}",
            method=f"z3+hints: {outcome.method}",
        )

    def used(self) -> list[Hint]:
        """The hints the unit's proof rests on (each proven)."""
        return [r.hint for r in self.results if r.used]

    def _set(self, i: int, status: Status, reason: str) -> None:
        self.results[i].status = status
        self.results[i].reason = reason


def _under(problem: pyprove.Problem, pre: z3.BoolRef) -> tuple[Status, str]:
    """What a precondition shows: the versions agree wherever it holds, or not."""
    shown = "; shown only: a verdict never assumes a precondition"
    if check([pre], LEMMA_SOLVER).status is not Sat.SAT:
        return Status.REFUTED, "no input of the parameters' types satisfies it" + shown
    differ = pyprove.exits_differ(problem.exits_a, problem.exits_b)
    answer = check([pre, differ], LEMMA_SOLVER)
    if answer.status is Sat.SAT:
        return Status.REFUTED, ("Z3 found an input satisfying it on which the models of the "
                                "versions differ" + shown)
    if answer.status is Sat.UNKNOWN:
        return Status.UNPROVEN, f"the solver gave up ({answer.why})" + shown
    beyond = [e.guard for e in problem.exhausted]
    if beyond and check([pre, z3.Or(beyond)], LEMMA_SOLVER).status is not Sat.UNSAT:
        return Status.UNPROVEN, ("no difference within the unrolling bound where it holds, "
                                 "but loops can run longer there" + shown)
    gap = (uncovered(problem.exits_a, [pre], LEMMA_SOLVER)
           or uncovered(problem.exits_b, [pre], LEMMA_SOLVER))
    if gap:
        return Status.UNPROVEN, f"the model does not account for every input ({gap})" + shown
    return Status.PROVEN, ("Z3: the versions agree on every input where it holds (the "
                           "verdict still covers every input of the domain)")


def _call_problem(parts: Sequence[Expr], module_a: Module, module_b: Module) -> str:
    """Why the calls in an invariant cannot be read the same in both versions, or ""."""
    for part in parts:
        for name in called(part):
            if name in ("len", "abs", "min", "max") and name not in module_a.functions:
                continue
            fa, fb = module_a.functions.get(name), module_b.functions.get(name)
            if fa is None or fb is None:
                return f"it calls `{name}`, which is not a function of both versions"
            if pysource.code_key(fa) != pysource.code_key(fb):
                return f"it calls `{name}`, which differs between the versions"
    return ""


class _Sides(ast.NodeTransformer):
    """``before.x`` -> ``_vbh_a_x``, ``after.x`` -> ``_vbh_b_x``, ``k`` -> ``_vbh_k``."""

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        assert isinstance(node.value, ast.Name)
        prefix = _A if node.value.id == "before" else _B
        return ast.copy_location(ast.Name(prefix + node.attr, ast.Load()), node)

    def visit_Name(self, node: ast.Name) -> ast.AST:
        if node.id == "k":
            return ast.copy_location(ast.Name(_K, ast.Load()), node)
        return node

    def visit_Call(self, node: ast.Call) -> ast.AST:
        node.args = [self.visit(a) for a in node.args]  # the function's name is kept
        return node


def _invariant(part: Expr, module: Module, helpers: Mapping[str, SharedCall]) -> _Invariant:
    tree = _Sides().visit(copy.deepcopy(part.tree))
    ast.fix_missing_locations(tree)
    return _Invariant(tree, module, helpers)


@dataclass
class _Invariant:
    """A relational invariant as a formula over the two loop heads and ``k``."""

    tree: ast.expr
    module: Module
    helpers: Mapping[str, SharedCall]
    failed: bool = False  # some reading raised: the hint must not be kept

    def __call__(self, ea: Env, eb: Env, k: z3.ArithRef, strict: bool = False) -> z3.BoolRef:
        env: Env = {_A + n: v for n, v in ea.items()}
        env.update({_B + n: v for n, v in eb.items()})
        env[_K] = SInt(k)
        for node in ast.walk(self.tree) if strict else ():
            if (isinstance(node, ast.Name) and node.id.startswith((_A, _B))
                    and (node.id not in env or isinstance(env[node.id], SUnbound))):
                side = "before" if node.id.startswith(_A) else "after"
                raise Unsupported(f"no variable `{side}.{node.id[7:]}` at the loop head")
        try:
            return _truth(self.tree, self.module, env, self.helpers)
        except Exception:  # the hint boundary: a hint never stops the engine
            if strict:
                raise
            self.failed = True
            return FALSE  # an unreadable candidate is false, and never kept (``prune``)


def _lemma_condition(hint: Hint, module: Module, env: Env, value: V) -> z3.BoolRef:
    """``requires`` implies ``ensures`` on ``env`` with ``result`` bound to ``value``."""
    assert hint.ensures is not None
    post = _truth(hint.ensures.tree, module, {**env, _RESULT: value}, {})
    if hint.requires is None:
        return post
    pre = _truth(hint.requires.tree, module, dict(env), {})
    return z3.Or(z3.Not(pre), post)


def _truth(tree: ast.expr, module: Module, env: Env, helpers: Mapping[str, SharedCall]
           ) -> z3.BoolRef:
    """Where ``tree`` evaluates, without raising, to a true value (Python's semantics).
    Raises ``Unsupported`` where reading it reaches the unrolling bound: what it is then is
    unknown, and read as false it would be a false assumption (an invariant assumed in
    the induction step, a lemma at its call sites), under which anything is proven."""
    ex = Executor(module, Fresh("hint_"), EVAL_LIMITS, helpers)
    state = State(z3.BoolVal(True), dict(env), {})
    value = ex.ev(tree, state)
    truth = ex.truthy(value, state)
    if ex.exhausted:
        raise Unsupported("a hint whose reading reaches the model's unrolling bound")
    return z3.And(state.live, truth)


def _why(err: BaseException) -> str:
    if isinstance(err, Unsupported):
        return err.construct
    return f"{type(err).__name__}: {err}"
