"""Equivalence relative to callees: the same events, in the same order, on every path.

Every operation that dispatches to code outside the function is an uninterpreted *event*
(``relational.terms``): calls, attribute reads and writes, item access, operators (``x +=
y`` is ``__iadd__``, not ``x = x + y``), each link of a comparison chain, truth tests,
``in``, ``iter`` and ``next``, formatting, ``with`` entry and exit, ``yield``. Each version
is walked (``relational.walker``) and the two walks are run in lockstep: at every step both
must ask for the same event with equal operand terms, and in the end return equal terms or
raise the same exception. Whatever an event returns is a fresh term, the same in both
versions: the proof assumes each event is deterministic given its operands and the state,
and behaves the same in both versions (the state is the same before it, since both made
the same events before).

Paths fork where a real bool is decided (a truth test's outcome, an iteration ending),
answered the same way in both versions; where either version is inside a ``with`` or a
``try``, an event's raising is explored too (elsewhere a raise propagates the same way
from equal traces); matching an ``except`` clause is an event. Too many paths: refused.

Loops are proven by induction, never unrolled: both versions must reach a loop head at
the same step. There, every local the loop may bind (in either version) is generalized to
a symbol, shared between locals whose values are equal, and one iteration of both runs from
that state; at the back edge the equalities must hold again (else they are weakened and
the iteration rerun: the greatest set of equalities that is inductive). A fresh list the
loop appends to is generalized the same way (its items become one symbol). The exits
(exhaustion, a false condition, ``break``) must happen at the same step in both versions.

A list the function made and nobody else holds is compared by its items (so a loop that
appends is a comprehension; ``tuple(g(x) for x in xs)`` is not ``tuple([g(x) for x in
xs])``, since a StopIteration ``g`` raises leaves a generator expression as a RuntimeError).
Lambdas and generator expressions are compared by their code and the locals
they read (bound once, so the value they see later is the one they had when made).
"""

from __future__ import annotations

import ast
import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from veribot.checks.relational import walker as walking
from veribot.checks.relational.terms import (
    UNBOUND,
    Event,
    Glob,
    Maybe,
    Param,
    Res,
    Seq,
    Sym,
    Term,
)
from veribot.checks.relational.walker import (
    RAISED,
    RAISING,
    Ask,
    Back,
    Decide,
    End,
    Exit,
    Head,
    Request,
    Slot,
    Walk,
    Walker,
)

if TYPE_CHECKING:
    from veribot.checks.relational.check import _Canon

__all__ = ["Matched", "Mismatch", "match"]

MAX_PATHS = 400  # paths explored (each loop iteration's paths counted per round)
MAX_EVENTS = 40_000  # events stepped in all
MAX_ROUNDS = 12  # weakenings of one loop's equalities
MAX_SECONDS = 5.0  # wall time for the whole comparison


class Mismatch(Exception):
    """The versions make different events (or end differently): where, for the log."""


@dataclass(frozen=True)
class Matched:
    """The versions make the same events: what the proof assumes of them, by name."""

    operations: tuple[str, ...]
    # Where an operation raises out of the function, the versions' locals hold other
    # objects (its traceback keeps those alive until the caller drops the exception).
    unwinding: bool = False


def match(fn_a: ast.FunctionDef, fn_b: ast.FunctionDef, canon_a: _Canon,
          canon_b: _Canon, seconds: float = MAX_SECONDS) -> Matched:
    """Walk both versions in lockstep; raises ``Mismatch`` where they differ and
    ``walker.Refused`` where the walk does not model the code (or takes too long)."""
    driver = _Driver(lambda: Walker(fn_a, canon_a), lambda: Walker(fn_b, canon_b), seconds)
    driver.explore(_Run(_Side.start(driver.make_a), _Side.start(driver.make_b), {}), [])
    return Matched(tuple(driver.operations()), driver.unwinding)


# ----------------------------------------------------------------------------- replayable walks


@dataclass
class _Side:
    """One version's walk and the answers it was sent (replayed to fork it)."""

    make: Callable[[], Walker]
    walker: Walker
    walk: Walk
    pending: Request
    log: list[Any] = field(default_factory=list)

    @classmethod
    def start(cls, make: Callable[[], Walker]) -> _Side:
        w = make()
        walk = w.run()
        return cls(make, w, walk, next(walk))

    def send(self, answer: object) -> None:
        self.log.append(answer)
        self.pending = self.walk.send(answer)

    def clone(self) -> _Side:
        side = _Side.start(self.make)
        for answer in self.log:
            side.send(answer)
        return side


@dataclass
class _Run:
    a: _Side
    b: _Side
    decisions: dict[Term, bool]

    def fork(self) -> _Run:
        return _Run(self.a.clone(), self.b.clone(), dict(self.decisions))


# ----------------------------------------------------------------------------- loops


@dataclass
class _Loop:
    """A pair of loop heads under induction: their generalization, and the back edges met."""

    uid: int
    slots: dict[tuple[str, Slot], tuple[Term, ...]]  # ("a"/"b", slot): value at entry
    classes: dict[tuple[str, Slot], int] = field(default_factory=dict)  # generalized slots
    backs: list[dict[tuple[str, Slot], tuple[Term, ...]]] = field(default_factory=list)
    unbound: set[tuple[str, Slot]] = field(default_factory=set)  # locals that may be unbound
    # Locals dead at the head in both versions (``Head.dead``), by group, paired by their
    # order in the group: each group compared as a multiset at the loop's entry and each
    # back edge, not one by one (see ``refine``). Values: (group, index).
    dead: dict[tuple[str, Slot], tuple[int, int]] = field(default_factory=dict)

    @classmethod
    def at(cls, uid: int, head_a: Head, head_b: Head) -> _Loop:
        slots = {("a", s): v for s, v in head_a.slots.items()}
        slots.update({("b", s): v for s, v in head_b.slots.items()})
        loop = cls(uid, slots)
        loop.unbound = {k for k, v in slots.items() if _unbound(v)}
        for g, (group_a, group_b) in enumerate(zip(head_a.dead, head_b.dead, strict=False)):
            dead_a = sorted(s for s in group_a if s in head_a.slots)
            dead_b = sorted(s for s in group_b if s in head_b.slots)
            if len(dead_a) == len(group_a) and len(dead_b) == len(group_b) == len(dead_a):
                loop.dead.update({("a", s): (g, i) for i, s in enumerate(dead_a)})
                loop.dead.update({("b", s): (g, i) for i, s in enumerate(dead_b)})
        # Locals the loop binds are generalized from the start; fresh lists only once an
        # iteration changes them (most are only read, or not touched at all).
        loop._regroup({k for k in slots if k[1][0] == "var" and k not in loop.dead})
        return loop

    def _regroup(self, keys: Iterable[tuple[str, Slot]]) -> None:
        """Generalize ``keys`` too; every generalized slot's class is (its class so far,
        its entry value, its values at each back edge of this round). The new classes
        split the old ones, never merge them: the same number of classes is the same
        partition, so a round that splits none has shown its equalities inductive."""
        generalized = set(self.classes) | set(keys)
        signature = {k: (self.classes.get(k, -1), k[1][0], self.slots[k],
                         *(back[k] for back in self.backs))
                     for k in generalized}
        ids: dict[object, int] = {}
        self.classes = {k: ids.setdefault(signature[k], len(ids)) for k in sorted(generalized)}

    def answer(self, side: str) -> dict[Slot, tuple[Term, ...]]:
        out: dict[Slot, tuple[Term, ...]] = {}
        # A dead local holds, at the head, one of the objects the group holds; which one
        # is never read, only when it is let go of (when the next item comes, in both).
        for (which, slot), (group, index) in self.dead.items():
            if which == side:
                out[slot] = (Sym(self.uid, -1 - 1000 * group - index),)
        for (which, slot), cls in self.classes.items():
            if which != side:
                continue
            sym = Sym(self.uid, cls)
            if slot[0] == "list":
                out[slot] = (Seq(sym),)
            elif (which, slot) in self.unbound:
                out[slot] = (Maybe(sym),)
            else:
                out[slot] = (sym,)
        return out

    def refine(self) -> bool:
        """Weaken the equalities the back edges broke; whether anything changed."""
        changed_lists = {k for k in self.slots if k not in self.classes and k not in self.dead
                         and any(back[k] != self.slots[k] for back in self.backs)}
        # A local an iteration may leave unbound (`except ... as e` deletes `e`) may be
        # unbound at the head: reading it there is refused.
        unbound = self.unbound | {k for back in self.backs for k, v in back.items()
                                  if _unbound(v)}
        before = len(set(self.classes.values())), len(self.classes), len(self.unbound)
        self.unbound = unbound
        regroup = set(changed_lists)
        if self.dead and not self._same_dead():
            # The versions hold other objects in their dead locals: compared one by one.
            regroup |= set(self.dead)
            self.dead = {}
            self._regroup(regroup)
            return True
        self._regroup(regroup)
        return (len(set(self.classes.values())), len(self.classes), len(self.unbound)) != before

    def _same_dead(self) -> bool:
        """Whether at the loop's entry and at each back edge the dead locals of both
        versions hold the same objects, counted with their multiplicity: then both let go
        of the same objects when the next item comes, or when the frame ends."""
        for group in {g for g, _ in self.dead.values()}:
            a = [k for k, (g, _) in self.dead.items() if g == group and k[0] == "a"]
            b = [k for k, (g, _) in self.dead.items() if g == group and k[0] == "b"]
            for values in (self.slots, *self.backs):
                if Counter(values[k] for k in a) != Counter(values[k] for k in b):
                    return False
        return True


def _unbound(value: tuple[Term, ...]) -> bool:
    return len(value) == 1 and (value[0] == UNBOUND or isinstance(value[0], Maybe))


# ----------------------------------------------------------------------------- the driver


class _Driver:
    def __init__(self, make_a: Callable[[], Walker], make_b: Callable[[], Walker],
                 seconds: float) -> None:
        self.make_a, self.make_b = make_a, make_b
        self.deadline = time.monotonic() + seconds
        self.paths = 0
        self.steps = 0
        self.uids = 0
        self.seen: list[Event] = []
        self.names: dict[int, str] = {}  # event position: what a getattr read, for the report
        self.unwinding = False  # (``Matched.unwinding``)

    def explore(self, run: _Run, loops: list[_Loop]) -> None:
        """Every path from ``run``'s position on, depth first (a fork waits in ``work``;
        only a loop head recurses, to see all of its iteration's paths)."""
        work = [(run, loops)]
        while work:
            self._path(*work.pop(), work)

    def _path(self, run: _Run, loops: list[_Loop],
              work: list[tuple[_Run, list[_Loop]]]) -> None:
        """One path from ``run``'s position to its end; forks go to ``work``."""
        while True:
            if time.monotonic() > self.deadline:
                raise walking.Refused("the comparison ran out of time")
            ra, rb = run.a.pending, run.b.pending
            if isinstance(ra, Decide):
                self._decide(run, run.a, ra.term, loops, work)
                continue
            if isinstance(rb, Decide):
                self._decide(run, run.b, rb.term, loops, work)
                continue
            if type(ra) is not type(rb):
                raise Mismatch(self._differ(ra, rb))
            if isinstance(ra, Ask):
                assert isinstance(rb, Ask)
                if ra.event != rb.event:
                    raise Mismatch(self._differ(ra, rb))
                _same_deaths(ra.deaths, rb.deaths)
                if not (ra.protected or rb.protected) and ra.kept != rb.kept:
                    # Raising here, the exception leaves the function: its traceback keeps
                    # what the locals hold alive, and lets go of the rest (not explored:
                    # the verdict says what it assumes of it).
                    self.unwinding = True
                self._step(ra.event, run.a.walker.events)
                if (ra.protected or rb.protected) and ra.event.kind not in RAISING:
                    child = run.fork()
                    child.a.send(RAISED)
                    child.b.send(RAISED)
                    work.append((child, loops))
                run.a.send(None)
                run.b.send(None)
            elif isinstance(ra, Head):
                assert isinstance(rb, Head)
                _in_step(run)
                _same_deaths(ra.deaths, rb.deaths)
                self._loop(run, ra, rb, loops)
                return
            elif isinstance(ra, Back):
                assert isinstance(rb, Back)
                _in_step(run)
                _same_deaths(ra.deaths, rb.deaths)
                if not loops:
                    raise walking.Refused("a back edge outside a loop")
                loops[-1].backs.append({**{("a", s): v for s, v in ra.slots.items()},
                                        **{("b", s): v for s, v in rb.slots.items()}})
                self._leaf()
                return
            elif isinstance(ra, Exit):
                loops = loops[:-1]
                run.a.send(None)
                run.b.send(None)
            else:
                assert isinstance(ra, End)
                assert isinstance(rb, End)
                _same_deaths(ra.deaths, rb.deaths)
                if ra != rb:
                    raise Mismatch(self._differ(ra, rb))
                self._leaf()
                return

    def _decide(self, run: _Run, side: _Side, term: Term, loops: list[_Loop],
                work: list[tuple[_Run, list[_Loop]]]) -> None:
        value = run.decisions.get(term)
        if value is None:
            child = run.fork()
            child.decisions[term] = True
            (child.a if side is run.a else child.b).send(True)
            work.append((child, loops))
            run.decisions[term] = value = False
        side.send(value)

    def _loop(self, run: _Run, head_a: Head, head_b: Head, loops: list[_Loop]) -> None:
        self.uids += 1
        loop = _Loop.at(self.uids, head_a, head_b)
        for _ in range(MAX_ROUNDS):
            loop.backs = []
            child = run.fork()
            child.a.send(loop.answer("a"))
            child.b.send(loop.answer("b"))
            self.explore(child, [*loops, loop])
            if not loop.refine():
                return
        raise walking.Refused("no loop invariant found in a few rounds")

    def _leaf(self) -> None:
        self.paths += 1
        if self.paths > MAX_PATHS:
            raise walking.Refused(f"more than {MAX_PATHS} paths")

    def _step(self, event: Event, position: int) -> None:
        self.steps += 1
        if self.steps > MAX_EVENTS:
            raise walking.Refused(f"more than {MAX_EVENTS} events")
        self.seen.append(event)
        if event.kind == "getattr":
            obj, attr = event.args[0], event.args[1]
            self.names[position] = f"{self._name(obj)}.{_text(attr)}"

    def _name(self, term: Term) -> str:
        if isinstance(term, Param):
            return term.name
        if isinstance(term, Glob):
            return term.token[2:]
        if isinstance(term, Res) and term.event in self.names:
            return self.names[term.event]
        return "a value"

    def _differ(self, ra: Request, rb: Request) -> str:
        """Where the walks part, naming the events (``one version reads `self.reset` where
        the other reads `self.run```), or that the same event got other operands."""
        a, b = self._describe(ra), self._describe(rb)
        if a != b:
            return f"one version {a} where the other {b}"
        if isinstance(ra, End):
            return f"both versions {a}, with different values"
        return f"one version {a} with other operands than the other"

    def _describe(self, request: Request) -> str:
        if isinstance(request, Ask):
            event = request.event
            if event.kind == "call" and event.args:
                return f"calls `{self._name(event.args[0])}`"
            if event.kind == "getattr" and len(event.args) > 1:
                return f"reads `{self._name(event.args[0])}.{_text(event.args[1])}`"
            if event.kind in ("setattr", "delattr") and len(event.args) > 1:
                verb = "writes" if event.kind == "setattr" else "deletes"
                return f"{verb} `{self._name(event.args[0])}.{_text(event.args[1])}`"
            if event.kind in ("getitem", "setitem", "delitem") and event.args:
                does = {"getitem": "reads", "setitem": "writes", "delitem": "deletes"}
                return f"{does[event.kind]} an item of `{self._name(event.args[0])}`"
            if event.kind not in _ACTIONS and not event.kind.isalpha():
                return f"applies `{event.kind}`"  # an operator: `+`, `<`, `+=` ...
            return _ACTIONS.get(event.kind, f"makes the event `{event.kind}`")
        if isinstance(request, Head):
            return "reaches a loop head"
        if isinstance(request, Back):
            return "ends a loop iteration"
        if isinstance(request, Exit):
            return "leaves a loop"
        if isinstance(request, End):
            return "returns" if request.kind == "return" else f"ends ({request.kind})"
        return "decides"

    def operations(self) -> list[str]:
        """What the proof assumes deterministic, by name: callees first, then operations."""
        callees: dict[str, None] = {}
        ops: dict[str, None] = {}
        for event in self.seen:
            kind = event.kind
            if kind == "call":
                callees[f"`{self._name(event.args[0])}`"] = None
            elif kind == "getattr":
                ops[f"reading `.{_text(event.args[1])}`"] = None
            else:
                ops[_OPERATIONS.get(kind, f"`{kind}`")] = None
        return [*callees, *ops]


def _same_deaths(a: tuple[frozenset[Term], ...], b: tuple[frozenset[Term], ...]) -> None:
    """Both versions let go of the same objects, in the same order, since the last
    synchronisation point (a finalizer is code that runs then: `__del__`, a file's close)."""
    if a != b:
        raise Mismatch("the versions let go of objects at other points (their finalizers, "
                       "such as closing a file, would run at other times)")


def _in_step(run: _Run) -> None:
    """At a loop head and its back edges, both versions have made as many closures and
    handed out as many fresh lists: their names (by order) denote corresponding objects
    in every iteration, not only in the one walked."""
    a, b = run.a.walker, run.b.walker
    if (a.closures, a.escapes) != (b.closures, b.escapes):
        raise Mismatch("the versions made different numbers of closures or handed out "
                       "different numbers of lists before a loop head")


_OPERATIONS = {
    "truth": "truth tests", "iter": "`iter`", "next": "`next`", "setattr": "attribute writes",
    "delattr": "attribute deletions", "getitem": "item reads", "setitem": "item writes",
    "delitem": "item deletions", "format": "formatting", "enter": "`with` entry",
    "exit": "`with` exit", "yield": "the consumer of what it yields",
    "yield from": "the iterables it delegates to", "in": "`in`", "is": "`is`",
    "dict": "building dicts (hashing keys)", "set": "building sets (hashing items)",
    "raise": "raising (building the exception)", "raise-from": "raising (building the "
    "exception)", "assert": "failed assertions", "except": "matching `except` clauses",
    "spread": "iterating what `*` spreads",
}  # fmt: skip


# One event of a kind, as a mismatch names it (``_Driver._describe``).
_ACTIONS = {
    "truth": "tests a truth value", "iter": "calls `iter`", "next": "calls `next`",
    "format": "formats a value", "enter": "enters a `with`", "exit": "leaves a `with`",
    "yield": "yields", "yield from": "delegates with `yield from`", "in": "tests `in`",
    "is": "tests `is`", "raise": "raises", "raise-from": "raises", "assert": "fails an "
    "assertion", "except": "matches an `except` clause", "dict": "builds a dict",
    "set": "builds a set", "spread": "spreads with `*`",
}  # fmt: skip


def _text(term: Term) -> str:
    from veribot.checks.relational.terms import Const

    if isinstance(term, Const) and term.kind == "str":
        # The constant's text is ``str:'name'`` (``pysource._value_text``).
        return term.text.removeprefix("str:").strip("'\"")
    return term.text.strip("'\"") if isinstance(term, Const) else "?"
