"""The core of one version's walk (``relational.walker``): the protocol with the driver,
events, truth, names, and the values the function holds.

The walk is a generator: it yields a request each time it needs the outside world and is
sent the answer. ``Ask``: run this event (answer: whether it raised); ``Decide``: which way
a real bool goes (answered the same for both versions); ``Head``/``Back``/``Exit``: a loop's
head (answer: the generalized values of what the loop carries), the end of one iteration,
leaving the loop; ``End``: the call returns or raises this term. ``Ask``, ``Head``,
``Back`` and ``End`` carry what the version let go of since the previous one
(``relational.lifetimes``).
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Generator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from veribot.checks.relational.lifetimes import Deaths, Lifetimes
from veribot.checks.relational.terms import (
    UNBOUND,
    Const,
    Event,
    Exc,
    Flag,
    Fresh,
    Glob,
    Maybe,
    NonEmpty,
    Not,
    Obj,
    Pack,
    Param,
    Res,
    Seq,
    Star,
    Term,
    Tup,
    Value,
    const,
    is_bool,
)

if TYPE_CHECKING:
    from veribot.checks.relational.check import _Canon, _Scope


class Refused(Exception):
    """The walk meets something it does not model (the relational check's ``Refused``
    wraps it)."""


@dataclass(frozen=True)
class Ask:
    event: Event
    protected: bool  # inside a `with` or `try`: a raise is handled, so it is explored too
    deaths: Deaths = ()
    # What the locals (and an exception being handled) hold: where the event raises and
    # the exception leaves the function, its traceback keeps them alive with the frame,
    # while what the operand stack alone holds is let go of as it unwinds.
    kept: frozenset[Term] = frozenset()


@dataclass(frozen=True)
class Decide:
    term: Term


Slot = tuple[str, int, str]  # ("var", frame depth, name) or ("list", serial, "")


@dataclass(frozen=True)
class Head:
    slots: dict[Slot, tuple[Term, ...]]  # a local: (its term,); a fresh list: its items
    deaths: Deaths = ()
    # Groups of locals dead at the head, each rebound all at once before any is read
    # (``Walker._dead``): what they hold is let go of together, never read.
    dead: tuple[frozenset[Slot], ...] = ()


@dataclass(frozen=True)
class Back:
    slots: dict[Slot, tuple[Term, ...]]
    deaths: Deaths = ()


@dataclass(frozen=True)
class Exit:
    pass


@dataclass(frozen=True)
class End:
    kind: str  # "return" or "raise"
    term: Term
    deaths: Deaths = ()


Request = Ask | Decide | Head | Back | Exit | End
Walk = Generator[Request, Any, Any]

RAISED = "raised"  # the answer to an `Ask` whose event raised
RAISING = frozenset({"raise", "raise-from", "assert"})  # events that always raise


class _Throw(Exception):
    def __init__(self, exc: Term) -> None:
        self.exc = exc


class _Return(Exception):
    def __init__(self, value: Value) -> None:
        self.value = value


class _Break(Exception):
    pass


class _Continue(Exception):
    pass


@dataclass
class _Frame:
    scope: _Scope
    env: dict[str, Value]


class Core:
    """Events, truth, names and values of one version's walk."""

    def __init__(self, fn: ast.FunctionDef, canon: _Canon) -> None:
        self.fn = fn
        self.canon = canon
        root = canon.scopes.by_node[id(fn)]
        self.frames = [_Frame(root, {})]
        self.life = Lifetimes(self.frames)
        self.events = 0  # position of the next event in the trace (the same in both)
        self.serials = 0
        self.protected = 0
        self.handled: Term | None = None
        self.escapes = 0  # fresh lists escaped so far (names them, as in the other version)
        self.closures = 0  # lambdas and generator expressions made so far (names them)
        self.made: dict[int, Fresh] = {}  # every fresh list, by serial

    # ------------------------------------------------------------------ events and truth

    def event(self, kind: str, *args: Value, bool_result: bool = False, mark: int | None = None,
              keep: tuple[Value, ...] = (), consume: tuple[Value, ...] = ()) -> Walk:
        """Run one event; returns its result term (raises ``_Throw`` if it raised). Its
        operands are let go of when it returns: the operand stack is cut back to ``mark``
        (keeping ``keep`` on it), and one entry of each of ``consume`` is taken off."""
        rendered = tuple(self.render(a, self.events) for a in args)
        index = self.events
        deaths = self.life.sync()
        answer = yield Ask(Event(kind, rendered, self.handled), self.protected > 0, deaths,
                           self.life.kept())
        self.events += 1
        if mark is not None:
            self.life.cut(mark)
            self.life.pending.extend(keep)
        for value in consume:
            self.life.remove(value)
        if answer == RAISED or kind in RAISING:
            exc = Exc(index)
            self.life.born.add(exc)
            self.life.inflight.append(exc)
            self.life.point()
            raise _Throw(exc)
        result: Term = Flag(index) if bool_result else Res(index)
        if not bool_result:
            self.life.born.add(result)
        self.life.point((result,))
        return result

    def decide(self, term: Value) -> Walk:
        """Which way a real bool goes (both versions get the same answer for a term)."""
        if isinstance(term, Const):
            return term.true
        if isinstance(term, Not):
            return not (yield from self.decide(term.term))
        assert isinstance(term, Term)
        answer = yield Decide(term)
        return bool(answer)

    def truth(self, value: Value, mark: int | None) -> Walk:
        """`if value:`: which way it goes (``mark``: consume ``value`` from the stack)."""
        term = yield from self.truth_term(value, mark)
        return (yield from self.decide(term))

    def truth_term(self, value: Value, mark: int | None) -> Walk:
        """The real bool `bool(value)`: a truth-test event unless it needs no code."""
        known: Term | None = None
        if is_bool(value):
            assert isinstance(value, Term)
            known = value
        elif isinstance(value, Const):
            known = const(value.true)
        elif isinstance(value, Tup | Pack) or (
            isinstance(value, Fresh) and value.escaped is None
        ):
            # A tuple or list nobody else holds: its length shows, unless all its items
            # are spread from elsewhere (`*x`) or carried by a loop.
            if any(not isinstance(i, Seq | Star) for i in value.items) or not value.items:
                known = const(bool(value.items))
            else:
                known = NonEmpty(tuple(self.peek(i) for i in value.items))
        if known is not None:
            if mark is not None:
                self.life.cut(mark)
                self.life.point()
            return known
        return (yield from self.event("truth", value, bool_result=True, mark=mark))

    # ------------------------------------------------------------------ values

    def render(self, value: Value, where: int | str) -> Term:
        """The term of ``value`` as an operand: a fresh list in it escapes here."""
        if isinstance(value, Term):
            return value
        if isinstance(value, Pack):
            return Tup(tuple(self.render(i, where) for i in value.items))
        if value.escaped is not None:
            return Obj(value.escaped.where)
        position = where if isinstance(where, int) else -1
        self.escapes += 1
        value.escaped = Obj((position, self.escapes))
        items = tuple(self.render(i, where) for i in value.items)
        return Obj(value.escaped.where, items)

    def peek(self, value: Value) -> Term:
        """The term of ``value`` without escaping it (a loop head's record)."""
        if isinstance(value, Term):
            return value
        if isinstance(value, Pack):
            return Tup(tuple(self.peek(i) for i in value.items))
        if value.escaped is not None:
            return Obj(value.escaped.where)
        raise Refused("a fresh list held by a local the loop rebinds, or by another list")

    def fresh(self, items: list[Value]) -> Fresh:
        self.serials += 1
        made = self.made[self.serials] = Fresh(self.serials, items)
        return made

    # ------------------------------------------------------------------ names

    def _local_frame(self, name: str) -> _Frame | None:
        for frame in reversed(self.frames):
            if frame.scope.binds(name) and name not in frame.scope.imports:
                if name in frame.scope.fixed:
                    raise Refused(f"the nested definition `{name}`")
                return frame
        return None

    def load(self, name: str) -> Value:
        frame = self._local_frame(name)
        if frame is None:
            return Glob(self._resolve(lambda: self.canon._name(name, self.frames[-1].scope,
                                                               store=False)))
        value = frame.env.get(name, UNBOUND)
        if value == UNBOUND or isinstance(value, Maybe):
            raise Refused(f"the local `{name}` may be unbound where it is read")
        return value

    def _resolve(self, how: Callable[[], str], frame_reader: bool = False) -> str:
        # The canonical text recorded every global read already: do not record it twice.
        reads = self.canon.reads
        before = len(reads.chains)
        token = str(how())
        del reads.chains[before:]
        if token[:2] not in ("G:", "B:", "M:"):
            raise Refused(f"a name resolved as {token}")
        if token in ("B:super", "B:__class__") and not frame_reader:
            raise Refused("`super` or `__class__` other than in a call `super()`")
        return token

    def store(self, name: str, value: Value, walrus: bool = False) -> None:
        """Bind a local; what it held before may be let go of here."""
        frame = self.frames[0] if walrus else self._local_frame(name)
        if frame is None:
            raise Refused(f"a store to `{name}` that is not a local")
        frame.env[name] = value
        self.life.point()

    def _chain(self, node: ast.Attribute, text: bool = False) -> Glob | None:
        """The name ``a.b.c`` resolves to, where it is an attribute of a module (``mod.f``,
        ``os.path.join``): the same object all along the call under the listed assumption
        that modules' attributes are not reassigned, read without an event. An attribute
        of any other object (``logging.root.level``, ``ids.next`` where ``from m import
        ids`` imports an instance) is None: a read of it is an event (a property runs
        code, and a call may change it), after the read of the object it is on. ``text``:
        for code compared as text (a closure's), where the whole chain is its name."""
        root: ast.expr = node
        while isinstance(root, ast.Attribute):
            root = root.value
        if not isinstance(root, ast.Name) or self._local_frame(root.id) is not None:
            return None
        reads = self.canon.reads
        before = len(reads.chains)
        token = self.canon._chain(node, self.frames[-1].scope)
        del reads.chains[before:]
        if token is None:
            return None
        if not text and tuple(token[2:].split(".")[:-1]) not in self.canon.module.modules:
            return None
        return Glob(token)

    def first_param(self) -> Param | None:
        params = [*self.fn.args.posonlyargs, *self.fn.args.args]
        return Param(params[0].arg) if params else None


def params(args: ast.arguments) -> list[ast.arg]:
    return [p for p in (*args.posonlyargs, *args.args, args.vararg, *args.kwonlyargs,
                        args.kwarg) if p is not None]
