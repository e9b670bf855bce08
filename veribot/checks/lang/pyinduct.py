"""Loop proofs for every trip count, by induction over lock-step iterations.

Applies when each version is ``prefix; loop; suffix`` with one top-level ``for`` or
``while`` loop and no other loop. The two loops are run side by side, iteration ``k`` of
one against iteration ``k`` of the other, and a relational invariant is found Houdini-
style: start from candidate equalities (a variable of one version equals one of the
other, or equals ``k``), drop every candidate that does not hold on entry or is not
preserved by one iteration, until what is left is inductive. With that invariant the
solver must show, for an arbitrary iteration ``k`` from an arbitrary state satisfying it:

- both loops go on, or both stop (sync);
- whatever one iteration does that ends the function (return, raise, break followed by
  the suffix) it does the same in both versions (step);
- from the states where both loops end, the suffixes behave the same (exit);
- inputs that reach the loop in one version only are covered by the bounded check
  without hitting its bound.

Any failure returns ``None``: induction then simply did not apply, and the caller keeps
its bounded result.
"""

from __future__ import annotations

import ast
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

import z3

from veribot.checks.lang import pygen
from veribot.checks.lang.pyexec import (
    Executor,
    Exit,
    Frame,
    IterSource,
    Limits,
    SharedCall,
    State,
    merge_states,
)
from veribot.checks.lang.pymodule import Module
from veribot.checks.lang.pyops import FALSE, MUTATING_METHODS
from veribot.checks.lang.pyprove import Outcome, Problem, exits_differ, uncovered
from veribot.checks.lang.pytypes import INT_OR_BOOL, IntT
from veribot.checks.lang.pyvalues import (
    UNTRACKED,
    Fresh,
    SBool,
    SFloat,
    SInt,
    SIntB,
    SNone,
    SSeq,
    SStr,
    STuple,
    SUnbound,
    SUnion,
    Unsupported,
    V,
    alternatives,
    as_codes,
    as_int_or_bool,
    same_value,
)
from veribot.checks.smt import SolverLimits, Status, check

log = logging.getLogger(__name__)

Env = dict[str, V]
Candidate = tuple[str, Callable[[Env, Env, z3.ArithRef], z3.BoolRef]]


class InvariantHints(Protocol):
    """Proposed invariants, offered to Houdini beside the engine's own (``checks.hints``):
    they are kept only where the solver proves them, like any candidate."""

    def candidates(self, module_a: Module, module_b: Module, loops: tuple[int, int],
                   ea: Env, eb: Env, helpers: Mapping[str, SharedCall]) -> list[Candidate]: ...

    def prune(self, kept: Sequence[Candidate], stage: str) -> list[Candidate]: ...

    def kept(self, names: Sequence[str]) -> None: ...

    def induction_proved(self) -> None: ...


@dataclass
class Side:
    """One version, split around its loop, with the executor that runs its pieces."""

    fn: ast.FunctionDef
    loop: ast.For | ast.While
    prefix: list[ast.stmt]
    suffix: list[ast.stmt]
    ex: Executor
    entry: State | None = None  # state on reaching the loop
    n: z3.ArithRef | None = None  # trip count of a for loop
    source: IterSource | None = None
    carried: tuple[str, ...] = ()
    # Lists that existed before the loop have identities up to ``mark``; the lists an
    # iteration creates are newer, and are one untracked identity at an arbitrary head.
    mark: int = 0
    mutated: set[int] = field(default_factory=set)  # lists mutated by the code run since


def prove(
    problem: Problem,
    limits: Limits,
    solver: Callable[[], SolverLimits],
    *,
    bounded_ok: bool,
    hints: InvariantHints | None = None,
) -> Outcome | None:
    """A proof for all trip counts, or None when induction does not apply or fails.

    ``bounded_ok`` says the bounded check found no difference on the inputs it covers; when
    it could not tell (solver gave up), induction must also cover the inputs that never
    reach the loops.
    """
    if problem.fn_a is None or problem.fn_b is None:
        return None
    assert problem.module_a is not None and problem.module_b is not None
    fresh = Fresh("ind_")
    a = _split(problem.fn_a, problem.module_a, fresh, limits, problem.helpers)
    b = _split(problem.fn_b, problem.module_b, fresh, limits, problem.helpers)
    if a is None or b is None:
        return None
    try:
        return _prove(problem, a, b, fresh, solver, bounded_ok, hints)
    except Unsupported as err:
        log.debug("induction does not apply: %s", err)
        return None


def _split(
    fn: ast.FunctionDef,
    module: Module,
    fresh: Fresh,
    limits: Limits,
    helpers: Mapping[str, SharedCall],
) -> Side | None:
    if pygen.is_generator(fn) or pygen.uses_iterators(fn):
        return None  # the output and the iterators' cursors are not carried by induction
    body = _flatten(fn.body)
    loops = [i for i, s in enumerate(body) if isinstance(s, ast.For | ast.While)]
    if len(loops) != 1:
        return None
    i = loops[0]
    loop = body[i]
    assert isinstance(loop, ast.For | ast.While)
    others = [
        n
        for s in body
        for n in ast.walk(s)
        if isinstance(n, ast.For | ast.While | ast.ListComp | ast.GeneratorExp) and n is not loop
    ]
    if others:
        return None  # nested or sequential loops, comprehensions: not handled
    ex = Executor(module, fresh, limits, helpers)
    return Side(fn, loop, body[:i], body[i + 1 :], ex)


def _flatten(body: Sequence[ast.stmt]) -> list[ast.stmt]:
    """``if c: A else: B`` where A always leaves the function is ``if c: A`` then B.

    The same with the branches swapped (``if not c: B`` then A). This brings a loop
    nested in such an ``else`` to the top level, where induction can see it; the code
    means the same.
    """
    out: list[ast.stmt] = []
    for stmt in body:
        if isinstance(stmt, ast.If) and stmt.orelse:
            if _always_leaves(stmt.body):
                out.append(ast.copy_location(ast.If(stmt.test, stmt.body, []), stmt))
                out.extend(_flatten(stmt.orelse))
                continue
            if _always_leaves(stmt.orelse):
                negated = ast.copy_location(ast.UnaryOp(ast.Not(), stmt.test), stmt.test)
                out.append(ast.copy_location(ast.If(negated, stmt.orelse, []), stmt))
                out.extend(_flatten(stmt.body))
                continue
        out.append(stmt)
    return out


def _always_leaves(block: Sequence[ast.stmt]) -> bool:
    if not block:
        return False
    last = block[-1]
    if isinstance(last, ast.Return | ast.Raise):
        return True
    return isinstance(last, ast.If) and _always_leaves(last.body) and _always_leaves(last.orelse)


def _prove(
    problem: Problem,
    a: Side,
    b: Side,
    fresh: Fresh,
    solver: Callable[[], SolverLimits],
    bounded_ok: bool,
    hints: InvariantHints | None = None,
) -> Outcome | None:
    # Prefixes, from the very inputs of the bounded problem.
    prefix_exits: list[list[Exit]] = []
    for side in (a, b):
        side.ex.exits = []
        state = side.ex.start(side.fn, problem.inputs)
        side.ex.exec_block(side.prefix, state, Frame())
        if isinstance(side.loop, ast.For):
            side.n, side.source = side.ex.iteration(side.loop.iter, state)
            # A list mutated while it is iterated changes the trip count under us.
            side.ex._escape_if_mutated(side.loop, side.source)
            if side.source.cursor is not None:
                return None  # an iterator's position is not part of the loop's state here
        side.entry = state
        prefix_exits.append(list(side.ex.exits))
        if side.ex.exhausted:
            return None
    assert a.entry is not None and b.entry is not None
    a.mark = b.mark = fresh.origin()
    g_a, g_b = a.entry.live, b.entry.live
    both = z3.And(g_a, g_b)

    if bounded_ok and problem.exhausted:
        # Inputs that reach the loop in one version only must be fully covered by the
        # bounded check (it found no difference on the inputs it covers).
        beyond = z3.Or([e.guard for e in problem.exhausted])
        if not _unsat([beyond, z3.Not(both)], solver()):
            return None

    # Entry: whether each loop is entered at all (deciding may raise), and what the rest
    # of the function does when it is not.
    zero = z3.IntVal(0)
    assert a.entry is not None and b.entry is not None
    cont0_a, raised0_a, head0_a = _head(a, a.entry, zero)
    cont0_b, raised0_b, head0_b = _head(b, b.entry, zero)
    enter_a = z3.And(head0_a.live, cont0_a)
    enter_b = z3.And(head0_b.live, cont0_b)
    skip_a, exh_a = _run_suffix(a, head0_a.fork(z3.And(head0_a.live, z3.Not(cont0_a))), True)
    skip_b, exh_b = _run_suffix(b, head0_b.fork(z3.And(head0_b.live, z3.Not(cont0_b))), True)
    if exh_a or exh_b:
        return None

    if not bounded_ok:
        # Nothing is known from the bounded check, so every input is accounted for here.
        # Where neither loop is reached, the prefixes end the function the same way.
        neither = z3.And(z3.Not(g_a), z3.Not(g_b))
        if not _unsat([neither, exits_differ(*prefix_exits)], solver()):
            return None
        for side, exits in zip((a, b), prefix_exits, strict=True):
            assert side.entry is not None
            if uncovered(exits, [z3.Not(side.entry.live)], solver()):
                return None
        # Where only one version reaches its loop, that loop must not run even once, and
        # skipping it must end the function as the other version's prefix does.
        for region, enter, ends, other in (
            (z3.And(g_a, z3.Not(g_b)), enter_a, raised0_a + skip_a, prefix_exits[1]),
            (z3.And(g_b, z3.Not(g_a)), enter_b, raised0_b + skip_b, prefix_exits[0]),
        ):
            if not _unsat([region, enter], solver()):
                return None
            if not _unsat([region, exits_differ(ends, other)], solver()):
                return None
            if uncovered(ends, [region], solver()):
                return None

    # Types of the loop-carried variables: run one iteration from the entry state. A list
    # mutated there through a name bound in the loop (``zs = ys; zs.append(1)``) changes
    # every name that holds it before the loop: those are carried too.
    havoc_types = {}
    for side, tag in ((a, "a"), (b, "b")):
        side.carried = _carried_names(side, set())
        for _ in range(4):
            probe = _havoc(side, fresh, tag, None)
            if probe is None:
                return None
            k0 = z3.Int(fresh.name("k"))
            side.mutated = set()
            after, _, _ = _iterate(side, probe, k0)
            carried = _carried_names(side, side.mutated)
            if carried == side.carried:
                break
            side.carried = carried
        else:
            return None
        havoc_types[tag] = {n: after.env.get(n, SUnbound()) for n in side.carried}
    ha = _havoc(a, fresh, "a", havoc_types["a"])
    hb = _havoc(b, fresh, "b", havoc_types["b"])
    if ha is None or hb is None:
        return None
    k = z3.Int(fresh.name("k"))

    if not _unsat([both, z3.Xor(enter_a, enter_b)], solver()):
        return None
    if not _unsat([both, exits_differ(raised0_a + skip_a, raised0_b + skip_b)], solver()):
        return None
    for enter, ends in ((enter_a, raised0_a + skip_a), (enter_b, raised0_b + skip_b)):
        if uncovered(ends, [both, z3.Not(enter)], solver()):
            return None

    # Houdini: keep the candidates that hold on entering the loops and that one
    # iteration preserves whenever both loops go on.
    candidates = _candidates(a, b, ha, hb)
    if hints is not None:
        assert problem.module_a is not None and problem.module_b is not None
        candidates += hints.candidates(problem.module_a, problem.module_b,
                                       (a.loop.lineno, b.loop.lineno), ha.env, hb.env,
                                       problem.helpers)
    kept = [
        c for c in candidates
        if _unsat([both, enter_a, enter_b, z3.Not(c[1](head0_a.env, head0_b.env, zero))],
                  solver())
    ]  # fmt: skip
    kept = hints.prune(kept, "entry") if hints is not None else kept
    a.mutated, b.mutated = set(), set()
    cont_a, _, head_a = _head(a, ha, k)
    cont_b, _, head_b = _head(b, hb, k)
    going_a = head_a.fork(z3.And(head_a.live, cont_a))
    going_b = head_b.fork(z3.And(head_b.live, cont_b))
    next_a, ended_a, exh_a = _step(a, going_a, k)
    next_b, ended_b, exh_b = _step(b, going_b, k)
    if exh_a or exh_b:
        return None
    if not (_aliasing_closed(a, ha, next_a) and _aliasing_closed(b, hb, next_b)):
        log.debug("induction does not apply: a list may change through a name not carried")
        return None
    # At head 0 every carried variable still has its value from before the loop: true at
    # every head, so a fact, not a candidate.
    first = [
        z3.Implies(k == 0, _equal(h.env[n], side.entry.env[n]))
        for side, h in ((a, ha), (b, hb))
        if side.entry is not None
        for n in side.carried
    ]
    premise = [both, k >= 0, going_a.live, going_b.live, *first]
    k1 = k + 1
    while True:
        # Every candidate is read at the same point of the head: after its test (the
        # entry check reads head 0 there, and a test may change the state: `xs.pop()`).
        inv = [c[1](head_a.env, head_b.env, k) for c in kept]
        survivors = [
            c for c in kept
            if _unsat([*premise, *inv, next_a.live, next_b.live,
                       z3.Not(c[1](next_a.env, next_b.env, k1))], solver())
        ]  # fmt: skip
        survivors = hints.prune(survivors, "step") if hints is not None else survivors
        if len(survivors) == len(kept):
            break
        kept = survivors
    if hints is not None:
        hints.kept([c[0] for c in kept])
    facts = [*premise, *(c[1](head_a.env, head_b.env, k) for c in kept)]
    if hints is not None and len(hints.prune(kept, "step")) != len(kept):
        return None  # a hint the model could not read as an assumption: no proof rests on it

    # Step: from any iteration both loops run, they go on together, or end the function
    # the same way (inside the body, by break and the rest, or by the loop ending next).
    if not _unsat([*facts, z3.Xor(next_a.live, next_b.live)], solver()):
        return None
    if not _unsat([*facts, exits_differ(ended_a, ended_b)], solver()):
        return None
    for nxt, ended in ((next_a, ended_a), (next_b, ended_b)):
        if uncovered(ended, [*facts, z3.Not(nxt.live)], solver()):
            return None

    if hints is not None:
        hints.induction_proved()
    plain = {c[0] for c in kept}
    names = "; ".join(
        c[0] for c in kept if not (c[0].startswith("k > 0 -> ") and c[0][9:] in plain)
    ) or "true"
    return Outcome(
        "proved",
        "no input tells the versions apart: the loops were proven equivalent for every "
        "number of iterations by induction",
        method=f"smt: induction over lock-step loop iterations (invariant: {names})",
        assumptions=tuple(problem.assumptions),
    )


def _unsat(facts: Sequence[z3.BoolRef], limits: SolverLimits) -> bool:
    return check(list(facts), limits).status is Status.UNSAT


def _carried_names(side: Side, mutated: set[int]) -> tuple[str, ...]:
    """Variables an iteration may change: stored, augmented, or mutated through a method,
    and every name that holds a list in ``mutated`` (mutated through another name)."""
    names: set[str] = set()
    for node in ast.walk(side.loop):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and isinstance(node.func.value, ast.Name)
            and node.func.attr in MUTATING_METHODS
        ):
            names.add(node.func.value.id)
        elif (
            isinstance(node, ast.Subscript)
            and isinstance(node.ctx, ast.Store)
            and isinstance(node.value, ast.Name)
        ):
            names.add(node.value.id)
    assert side.entry is not None
    # Every alias of a list that may change changes with it.
    origins: set[int] = set(mutated)
    for n in names:
        for _, alt in alternatives(side.entry.env.get(n, SUnbound())):
            if isinstance(alt, SSeq) and alt.origin:
                origins |= alt.origin
    for n, v in side.entry.env.items():
        for _, alt in alternatives(v):
            if isinstance(alt, SSeq) and alt.origin and alt.origin & origins:
                names.add(n)
    return tuple(sorted(n for n in names if n in side.entry.env))


def _aliasing_closed(side: Side, head: State, nxt: State) -> bool:
    """Whether the arbitrary head covers every list an iteration can change or rebind.

    A list mutated from the head (one that existed then) must be held only by carried
    names, and by a name that holds nothing else, so every alias sees the change; each
    carried name must hold at the next head only lists it may hold at this one.
    """
    mutated = {o for o in side.mutated if o <= side.mark}
    singles: set[int] = set()
    for name, value in head.env.items():
        held = _origins(value, side.mark)
        if name not in side.carried:
            if held & mutated:
                return False
            continue
        if not _origins(nxt.env.get(name, SUnbound()), side.mark) <= held:
            return False
        for _, alt in alternatives(value):
            if isinstance(alt, SSeq) and alt.origin is not None and len(alt.origin) == 1:
                singles |= alt.origin
    return all(o in singles for o in mutated if o in head.objects)


def _origins(value: V, mark: int) -> set[int]:
    """Every list identity ``value`` may hold, those newer than ``mark`` as untracked."""
    found: set[int] = set()
    for _, alt in alternatives(value):
        if isinstance(alt, SSeq) and alt.kind == "list":
            found |= _canon(alt.origin, mark) or UNTRACKED
        elif isinstance(alt, STuple):
            for item in alt.items:
                found |= _origins(item, mark)
    return found


def _canon(origin: frozenset[int] | None, mark: int) -> frozenset[int] | None:
    if origin is None:
        return None
    if all(o <= mark for o in origin):
        return origin
    return frozenset(o for o in origin if o <= mark) | UNTRACKED


def _head_origin(
    entry: frozenset[int] | None, later: frozenset[int] | None, mark: int
) -> frozenset[int] | None:
    """The lists a carried name may hold at an arbitrary head: before the loop or later."""
    first, then = _canon(entry, mark), _canon(later, mark)
    if first == then:
        return first
    return (first or UNTRACKED) | (then or UNTRACKED)


def _havoc(side: Side, fresh: Fresh, tag: str, types: dict[str, V] | None) -> State | None:
    """The state at the head of an arbitrary iteration: carried variables made arbitrary.

    ``types`` holds each carried variable's value after one iteration (for its type); on
    the first call it is None and unbound variables stay unbound.
    """
    assert side.entry is not None
    state = side.entry.fork(side.entry.live)
    by_origin: dict[frozenset[int], z3.ExprRef] = {}
    for name in side.carried:
        entry = side.entry.env[name]
        later = types.get(name, entry) if types is not None else entry
        value = _arbitrary(entry, later, fresh, f"{tag}_{name}", by_origin, side.mark)
        if value is None:
            return None
        state.env[name] = value
    for origin_set, e in by_origin.items():
        (o,) = origin_set
        if o in state.objects:
            state.objects[o] = e
    return state


def _arbitrary(
    entry: V,
    later: V,
    fresh: Fresh,
    base: str,
    by_origin: dict[frozenset[int], z3.ExprRef],
    mark: int,
) -> V | None:
    if isinstance(later, SUnion) or isinstance(entry, SUnion):
        return None
    if isinstance(entry, SUnbound):
        if isinstance(later, SUnbound):
            return entry
        bound = z3.Bool(fresh.name(f"{base}_bound"))
        value = _arbitrary(later, later, fresh, base, by_origin, mark)
        if value is None:
            return None
        return SUnion(((bound, value), (z3.Not(bound), SUnbound())))
    if isinstance(later, SIntB) and as_int_or_bool(entry) is not None:
        return SIntB(z3.Int(fresh.name(base)))
    if isinstance(entry, SIntB) and isinstance(later, SInt):
        # An int-or-bool on entry (`j = n`), an int once the loop changed it: an arbitrary
        # int-or-bool covers both.
        return SIntB(z3.Int(fresh.name(base)))
    if isinstance(entry, SSeq) and isinstance(later, SSeq) and later.elem == INT_OR_BOOL:
        entry = as_codes(entry)
    if type(entry) is not type(later):
        return None
    if isinstance(entry, SSeq):
        assert isinstance(later, SSeq)
        if entry.kind != later.kind or (entry.elem != later.elem and not _empty(entry)):
            return None
        origin = _head_origin(entry.origin, later.origin, mark)
        # Only a name that is always the same list shares its contents with the others
        # that are; one that may be several lists gets its own (it cannot be mutated).
        single = origin if origin is not None and len(origin) == 1 else None
        if single is not None and single in by_origin:
            e = by_origin[single]
        else:
            e = z3.Const(fresh.name(base), later.e.sort())
            if single is not None:
                by_origin[single] = e
        return SSeq(entry.kind, later.elem, e, origin)
    if isinstance(entry, SInt):
        return SInt(z3.Int(fresh.name(base)))
    if isinstance(entry, SBool):
        return SBool(z3.Bool(fresh.name(base)))
    if isinstance(entry, SFloat):
        return SFloat(z3.FP(fresh.name(base), entry.e.sort()))
    if isinstance(entry, SStr):
        return SStr(z3.String(fresh.name(base)))
    if isinstance(entry, SNone):
        return entry
    if isinstance(entry, STuple):
        assert isinstance(later, STuple)
        if len(entry.items) != len(later.items):
            return None
        items = []
        for n, (x, y) in enumerate(zip(entry.items, later.items, strict=True)):
            item = _arbitrary(x, y, fresh, f"{base}_{n}", by_origin, mark)
            if item is None:
                return None
            items.append(item)
        return STuple(tuple(items))
    return None


def _empty(v: SSeq) -> bool:
    return bool(z3.is_app(v.e) and v.e.decl().kind() == z3.Z3_OP_SEQ_EMPTY)


def _head(side: Side, state: State, k: z3.ArithRef) -> tuple[z3.BoolRef, list[Exit], State]:
    """Whether iteration ``k`` runs, exceptions raised deciding it, and the state after."""
    side.ex.exits = []
    side.ex.mutated = set()
    head = state.fork(state.live)
    if isinstance(side.loop, ast.For):
        assert side.n is not None
        cont = k < side.n
    else:
        cont = side.ex.truthy(side.ex.ev(side.loop.test, head), head)
    side.mutated |= side.ex.mutated
    return cont, list(side.ex.exits), head


def _iterate(side: Side, state: State, k: z3.ArithRef) -> tuple[State, list[Exit], bool]:
    """One iteration from ``state``: the continuing state, what ended the function, and
    whether the model stopped short anywhere."""
    ex = side.ex
    ex.exits = []
    ex.exhausted = []
    frame = Frame()
    frame.breaks.append([])
    frame.continues.append([])
    st = state.fork(state.live)
    if isinstance(side.loop, ast.For):
        assert side.source is not None
        ex.assign(side.loop.target, side.source.at(k), st)
    ex.mutated = set()
    ex.exec_block(side.loop.body, st, frame)
    side.mutated |= ex.mutated
    breaks = frame.breaks.pop()
    continues = frame.continues.pop()
    going = merge_states([st, *continues], st)
    ended = list(ex.exits)
    exhausted = bool(ex.exhausted)
    for br in breaks:
        exits, exh = _run_suffix(side, br, False)
        ended.extend(exits)
        exhausted = exhausted or exh
    return going, ended, exhausted


def _step(side: Side, state: State, k: z3.ArithRef) -> tuple[State, list[Exit], bool]:
    """Iteration ``k`` from a head where the loop goes on, looking one head ahead.

    Returns the state at head ``k + 1`` where the loop goes on again, every exit that
    ends the function meanwhile (in the body, after a break, deciding the next head, or
    after the loop ends there), and whether the model stopped short anywhere.
    """
    going, ended, exhausted = _iterate(side, state, k)
    cont, raised, head = _head(side, going, k + 1)
    done, exh = _run_suffix(side, head.fork(z3.And(head.live, z3.Not(cont))), True)
    again = head.fork(z3.And(head.live, cont))
    return again, [*ended, *raised, *done], exhausted or exh


def _run_suffix(side: Side, state: State, ended: bool) -> tuple[list[Exit], bool]:
    """Run what follows the loop (its ``else`` first if it ``ended`` without a break);
    every exit, and whether the model stopped short."""
    ex = side.ex
    saved_exits, saved_exh = ex.exits, ex.exhausted
    ex.exits, ex.exhausted = [], []
    st = state.fork(state.live)
    rest = [*side.loop.orelse, *side.suffix] if ended else side.suffix
    ex.exec_block(rest, st, Frame())
    if not z3.is_false(st.live):
        ex.exits.append(Exit(st.live, SNone(), None, ex._snapshot(st), side.fn.lineno))
    result = list(ex.exits), bool(ex.exhausted)
    ex.exits, ex.exhausted = saved_exits, saved_exh
    return result


def _candidates(a: Side, b: Side, ha: State, hb: State) -> list[Candidate]:
    """Equalities between carried variables of the two versions, and with ``k``."""
    cands: list[Candidate] = []
    for na in a.carried:
        for nb in b.carried:
            if _comparable(ha.env[na], hb.env[nb]):
                cands.append((f"{na} == {nb}'", _pair(na, nb)))
                cands.append((f"k > 0 -> {na} == {nb}'", _after_first(_pair(na, nb))))
    for side, name_of, tag in ((a, "a", ""), (b, "b", "'")):
        env = ha.env if name_of == "a" else hb.env
        for n in side.carried:
            v = env[n]
            if isinstance(v, SInt):
                cands.append((f"{n}{tag} == k", _counter(name_of, n, 0)))
                cands.append((f"{n}{tag} == k + 1", _counter(name_of, n, 1)))
            if isinstance(v, SUnion):
                cands.append((f"{n}{tag} bound iff k > 0", _bound_after_first(name_of, n)))
    return cands


def _after_first(
    formula: Callable[[Env, Env, z3.ArithRef], z3.BoolRef],
) -> Callable[[Env, Env, z3.ArithRef], z3.BoolRef]:
    """The candidate from the second iteration on (a first iteration may set things up)."""

    def weaker(ea: Env, eb: Env, k: z3.ArithRef) -> z3.BoolRef:
        return z3.Implies(k > 0, formula(ea, eb, k))

    return weaker


def _comparable(x: V, y: V) -> bool:
    xs = [_kind(v) for _, v in alternatives(x) if not isinstance(v, SUnbound)]
    ys = [_kind(v) for _, v in alternatives(y) if not isinstance(v, SUnbound)]
    return bool(xs) and xs == ys


def _kind(v: V) -> type:
    # An int, a bool and an int-or-bool compare by their codes (see SIntB).
    return SIntB if isinstance(v, SInt | SBool) else type(v)


def _pair(na: str, nb: str) -> Callable[[Env, Env, z3.ArithRef], z3.BoolRef]:
    def formula(ea: Env, eb: Env, k: z3.ArithRef) -> z3.BoolRef:
        return _equal(ea.get(na, SUnbound()), eb.get(nb, SUnbound()))

    return formula


def _counter(side: str, name: str, offset: int) -> Callable[[Env, Env, z3.ArithRef], z3.BoolRef]:
    def formula(ea: Env, eb: Env, k: z3.ArithRef) -> z3.BoolRef:
        v = (ea if side == "a" else eb).get(name, SUnbound())
        if isinstance(v, SInt):
            return v.e == k + offset
        return FALSE

    return formula


def _bound_after_first(side: str, name: str) -> Callable[[Env, Env, z3.ArithRef], z3.BoolRef]:
    def formula(ea: Env, eb: Env, k: z3.ArithRef) -> z3.BoolRef:
        v = (ea if side == "a" else eb).get(name, SUnbound())
        unbound = z3.Or([g for g, x in alternatives(v) if isinstance(x, SUnbound)] or [FALSE])
        return unbound == (k == 0)

    return formula


def _equal(x: V, y: V) -> z3.BoolRef:
    """Same value, where an unbound variable equals only an unbound one."""
    parts = []
    for gx, vx in alternatives(x):
        for gy, vy in alternatives(y):
            if isinstance(vx, SUnbound) or isinstance(vy, SUnbound):
                if isinstance(vx, SUnbound) and isinstance(vy, SUnbound):
                    parts.append(z3.And(gx, gy))
                continue
            if isinstance(vx, SIntB) or isinstance(vy, SIntB):
                parts.append(z3.And(gx, gy, same_value(vx, vy)))
                continue
            if type(vx) is not type(vy):
                continue
            if isinstance(vx, SSeq) and isinstance(vy, SSeq) and {vx.elem, vy.elem} == {
                IntT(), INT_OR_BOOL
            }:
                parts.append(z3.And(gx, gy, same_value(vx, vy)))
                continue
            if isinstance(vx, SSeq) and isinstance(vy, SSeq) and vx.elem != vy.elem:
                if _empty(vx) or _empty(vy):
                    parts.append(z3.And(gx, gy, z3.Length(vx.e) == 0, z3.Length(vy.e) == 0))
                continue
            parts.append(z3.And(gx, gy, same_value(vx, vy)))
    return z3.Or(parts) if parts else FALSE
