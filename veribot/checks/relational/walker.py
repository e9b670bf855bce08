"""One version's walk through its function body, event by event (for ``relational.opaque``).

The walk is a generator: it yields a request each time it needs the outside world and is
sent the answer. ``Ask``: run this event (answer: whether it raised); ``Decide``: which way
a real bool goes (answered the same for both versions); ``Head``/``Back``/``Exit``: a loop's
head (answer: the generalized values of what the loop carries), the end of one iteration,
leaving the loop; ``End``: the call returns or raises this term.

The walk is deterministic given the answers, so the driver replays it to fork a path.
What it does not model it refuses (``Refused``): nested functions and classes, lambdas,
generator expressions, ``try*``, ``global``, ``await``, reading a local that may be
unbound.
"""

from __future__ import annotations

import ast
from collections.abc import Generator, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from veribot.checks.lang.pysource import _value_text
from veribot.checks.relational.terms import (
    NONE,
    UNBOUND,
    Const,
    Event,
    Exc,
    Flag,
    Fn,
    Fresh,
    Glob,
    Item,
    Joined,
    Kw,
    Maybe,
    NonEmpty,
    Not,
    Obj,
    Pack,
    Param,
    Res,
    Seq,
    Slice,
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


# ----------------------------------------------------------------------------- the protocol


@dataclass(frozen=True)
class Ask:
    event: Event
    protected: bool  # inside a `with` or `try`: a raise is handled, so it is explored too


@dataclass(frozen=True)
class Decide:
    term: Term


Slot = tuple[str, int, str]  # ("var", frame depth, name) or ("list", serial, "")


@dataclass(frozen=True)
class Head:
    slots: dict[Slot, tuple[Term, ...]]  # a local: (its term,); a fresh list: its items


@dataclass(frozen=True)
class Back:
    slots: dict[Slot, tuple[Term, ...]]


@dataclass(frozen=True)
class Exit:
    pass


@dataclass(frozen=True)
class End:
    kind: str  # "return" or "raise"
    term: Term


Request = Ask | Decide | Head | Back | Exit | End
Walk = Generator[Request, Any, Any]

RAISED = "raised"  # the answer to an `Ask` whose event raised
RAISING = frozenset({"raise", "raise-from", "assert"})  # events that always raise

_BINOPS = {
    ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.MatMult: "@", ast.Div: "/",
    ast.FloorDiv: "//", ast.Mod: "%", ast.Pow: "**", ast.LShift: "<<", ast.RShift: ">>",
    ast.BitOr: "|", ast.BitXor: "^", ast.BitAnd: "&",
}  # fmt: skip
_UNOPS = {ast.USub: "-", ast.UAdd: "+", ast.Invert: "~"}
_CMPOPS = {
    ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=",
}  # fmt: skip


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


class Walker:
    """The walk of one version: ``run()`` is the generator the driver steps."""

    def __init__(self, fn: ast.FunctionDef, canon: _Canon) -> None:
        self.fn = fn
        self.canon = canon
        root = canon.scopes.by_node[id(fn)]
        self.frames = [_Frame(root, {})]
        self.events = 0  # position of the next event in the trace (the same in both)
        self.serials = 0
        self.protected = 0
        self.handled: Term | None = None
        self.escapes = 0  # fresh lists escaped so far (names them, as in the other version)
        self.closures = 0  # lambdas and generator expressions made so far (names them)
        self.made: dict[int, Fresh] = {}  # every fresh list, by serial
        self.building: list[Fresh] = []  # the lists of the comprehensions being run

    # ------------------------------------------------------------------ running

    def run(self) -> Walk:
        env = self.frames[0].env
        for p in _params(self.fn.args):
            env[p.arg] = Param(p.arg)
        try:
            yield from self.block(_body(self.fn))
            value: Value = NONE
        except _Return as ret:
            value = ret.value
        except _Throw as thrown:
            yield End("raise", thrown.exc)
            return
        except (_Break, _Continue):  # pragma: no cover - the compiler rejects these
            raise Refused("`break` or `continue` outside a loop") from None
        yield End("return", self.render(value, "end"))

    def event(self, kind: str, *args: Value, bool_result: bool = False) -> Walk:
        """Run one event; returns its result term (raises ``_Throw`` if it raised)."""
        rendered = tuple(self.render(a, self.events) for a in args)
        index = self.events
        answer = yield Ask(Event(kind, rendered, self.handled), self.protected > 0)
        self.events += 1
        if answer == RAISED or kind in RAISING:
            raise _Throw(Exc(index))
        return Flag(index) if bool_result else Res(index)

    def decide(self, term: Value) -> Walk:
        """Which way a real bool goes (both versions get the same answer for a term)."""
        if isinstance(term, Const):
            return term.true
        if isinstance(term, Not):
            return not (yield from self.decide(term.term))
        assert isinstance(term, Term)
        answer = yield Decide(term)
        return bool(answer)

    def truth(self, value: Value) -> Walk:
        """`if value:`: which way it goes."""
        term = yield from self.truth_term(value)
        return (yield from self.decide(term))

    def truth_term(self, value: Value) -> Walk:
        """The real bool `bool(value)`: a truth-test event unless it needs no code."""
        if is_bool(value):
            return value
        known: bool | None = None
        if isinstance(value, Const):
            known = value.true
        elif isinstance(value, Tup | Pack) or (
            isinstance(value, Fresh) and value.escaped is None
        ):
            # A tuple or list nobody else holds: its length shows, unless all its items
            # are spread from elsewhere (`*x`) or carried by a loop.
            if any(not isinstance(i, Seq | Star) for i in value.items) or not value.items:
                known = bool(value.items)
            else:
                return NonEmpty(tuple(self.peek(i) for i in value.items))
        if known is not None:
            return const(known)
        return (yield from self.event("truth", value, bool_result=True))

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

    def _resolve(self, how: Any, frame_reader: bool = False) -> str:
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
        frame = self.frames[0] if walrus else self._local_frame(name)
        if frame is None:
            raise Refused(f"a store to `{name}` that is not a local")
        frame.env[name] = value

    # ------------------------------------------------------------------ statements

    def block(self, body: list[ast.stmt]) -> Walk:
        for stmt in body:
            yield from self.stmt(stmt)

    def stmt(self, node: ast.stmt) -> Walk:
        if isinstance(node, ast.Expr):
            yield from self.expr(node.value)
        elif isinstance(node, ast.Assign):
            value = yield from self.expr(node.value)
            for target in node.targets:
                yield from self.assign(target, value)
        elif isinstance(node, ast.AnnAssign):
            if not isinstance(node.target, ast.Name):
                raise Refused(f"an annotated assignment to an expression (line {node.lineno})")
            if node.value is not None:
                value = yield from self.expr(node.value)
                self.store(node.target.id, value)
        elif isinstance(node, ast.AugAssign):
            yield from self.augassign(node)
        elif isinstance(node, ast.Return):
            value = NONE if node.value is None else (yield from self.expr(node.value))
            raise _Return(value)
        elif isinstance(node, ast.If):
            test = yield from self.expr(node.test)
            yield from self.block(node.body if (yield from self.truth(test)) else node.orelse)
        elif isinstance(node, ast.For):
            yield from self.for_loop(node)
        elif isinstance(node, ast.While):
            yield from self.while_loop(node)
        elif isinstance(node, ast.Break):
            raise _Break()
        elif isinstance(node, ast.Continue):
            raise _Continue()
        elif isinstance(node, ast.Pass):
            pass
        elif isinstance(node, ast.Raise):
            yield from self.raise_(node)
        elif isinstance(node, ast.With):
            yield from self.with_(node, node.items)
        elif isinstance(node, ast.Try):
            yield from self.try_(node)
        elif isinstance(node, ast.Assert):
            test = yield from self.expr(node.test)
            if not (yield from self.truth(test)):
                msg = NONE if node.msg is None else (yield from self.expr(node.msg))
                yield from self.event("assert", msg)
        elif isinstance(node, ast.Import | ast.ImportFrom) and (
            id(node) in self.canon.scopes.dropped
        ):
            pass  # a local import resolved to its origin (the name reads it)
        elif isinstance(node, ast.Delete):
            for target in node.targets:
                yield from self.delete(target)
        else:
            raise Refused(f"`{type(node).__name__}` (line {node.lineno})")

    def assign(self, target: ast.expr, value: Value) -> Walk:
        if isinstance(target, ast.Name):
            self.store(target.id, value)
        elif isinstance(target, ast.Tuple | ast.List):
            items = yield from self.unpack(value, target.elts)
            for sub, item in zip(target.elts, items, strict=True):
                yield from self.assign(sub, item)
        elif isinstance(target, ast.Attribute):
            obj = yield from self.expr(target.value)
            yield from self.event("setattr", obj, const(target.attr), value)
        elif isinstance(target, ast.Subscript):
            obj = yield from self.expr(target.value)
            key = yield from self.expr(target.slice)
            yield from self.event("setitem", obj, key, value)
        else:
            raise Refused(f"an assignment to `{type(target).__name__}`")

    def unpack(self, value: Value, targets: list[ast.expr]) -> Walk:
        if any(isinstance(t, ast.Starred) for t in targets):
            raise Refused("a starred assignment target")
        n = len(targets)
        items: list[Value] | None = None
        if isinstance(value, Tup | Pack) or (isinstance(value, Fresh) and value.escaped is None):
            items = list(value.items)
            if any(isinstance(i, Seq | Star) for i in items):
                raise Refused("unpacking a sequence of unknown length")
        if items is not None:
            if len(items) != n:
                raise Refused("unpacking a sequence of another length")
            return items
        result = yield from self.event(f"unpack:{n}", value)
        return [Item(result, k) for k in range(n)]

    def augassign(self, node: ast.AugAssign) -> Walk:
        op = "i" + _BINOPS[type(node.op)]
        target = node.target
        if isinstance(target, ast.Name):
            current = self.load(target.id)
            value = yield from self.expr(node.value)
            self.store(target.id, (yield from self.event(op, current, value)))
        elif isinstance(target, ast.Attribute):
            obj = yield from self.expr(target.value)
            current = yield from self.event("getattr", obj, const(target.attr))
            value = yield from self.expr(node.value)
            result = yield from self.event(op, current, value)
            yield from self.event("setattr", obj, const(target.attr), result)
        elif isinstance(target, ast.Subscript):
            obj = yield from self.expr(target.value)
            key = yield from self.expr(target.slice)
            current = yield from self.event("getitem", obj, key)
            value = yield from self.expr(node.value)
            result = yield from self.event(op, current, value)
            yield from self.event("setitem", obj, key, result)
        else:
            raise Refused("an augmented assignment to this target")

    def delete(self, target: ast.expr) -> Walk:
        if isinstance(target, ast.Attribute):
            obj = yield from self.expr(target.value)
            yield from self.event("delattr", obj, const(target.attr))
        elif isinstance(target, ast.Subscript):
            obj = yield from self.expr(target.value)
            key = yield from self.expr(target.slice)
            yield from self.event("delitem", obj, key)
        else:
            raise Refused("`del` of a local")

    def raise_(self, node: ast.Raise) -> Walk:
        if node.exc is None:
            if self.handled is None:
                raise Refused(f"a bare `raise` outside a handler (line {node.lineno})")
            raise _Throw(self.handled)  # the same exception object, again
        exc = yield from self.expr(node.exc)
        cause = NONE if node.cause is None else (yield from self.expr(node.cause))
        # Instantiating a class, checking the type, chaining: one event, which raises.
        yield from self.event("raise" if node.cause is None else "raise-from", exc, cause)

    def with_(self, node: ast.With, items: list[ast.withitem]) -> Walk:
        """`with a, b:` is `with a:` holding `with b:`."""
        if not items:
            yield from self.block(node.body)
            return
        first, rest = items[0], items[1:]
        manager = yield from self.expr(first.context_expr)
        entered = yield from self.event("enter", manager)
        # From here on `__exit__` runs, whatever happens (the `as` target's store too).
        self.protected += 1
        try:
            if first.optional_vars is not None:
                yield from self.assign(first.optional_vars, entered)
            yield from self.with_(node, rest)
        except _Throw as thrown:
            self.protected -= 1
            outer = self.handled
            self.handled = thrown.exc
            try:
                result = yield from self.event("exit", manager, thrown.exc)
                suppress = yield from self.truth(result)
            finally:
                self.handled = outer
            if not suppress:
                raise
            return
        except (_Return, _Break, _Continue):
            self.protected -= 1
            yield from self.event("exit", manager, NONE)
            raise
        self.protected -= 1
        yield from self.event("exit", manager, NONE)

    def try_(self, node: ast.Try) -> Walk:
        """`try`: its `finally` runs on every way out, seeing the exception if one left."""
        if not node.finalbody:
            yield from self.try_except(node)
            return
        self.protected += 1
        try:
            yield from self.try_except(node)
        except _Throw as thrown:
            self.protected -= 1
            outer = self.handled
            self.handled = thrown.exc
            try:
                yield from self.block(node.finalbody)
            finally:
                self.handled = outer
            raise
        except (_Return, _Break, _Continue):
            self.protected -= 1
            yield from self.block(node.finalbody)
            raise
        self.protected -= 1
        yield from self.block(node.finalbody)

    def try_except(self, node: ast.Try) -> Walk:
        self.protected += 1
        try:
            yield from self.block(node.body)
        except _Throw as thrown:
            self.protected -= 1
            if not (yield from self.handle(node.handlers, thrown.exc)):
                raise
            return
        except (_Return, _Break, _Continue):
            self.protected -= 1
            raise
        self.protected -= 1
        yield from self.block(node.orelse)

    def handle(self, handlers: list[ast.ExceptHandler], exc: Term) -> Walk:
        """Run the first handler that matches ``exc``; whether one did. The exception is
        being handled while the clauses' types are evaluated and the handler runs."""
        outer = self.handled
        self.handled = exc
        try:
            for handler in handlers:
                if handler.type is not None:
                    kind = yield from self.expr(handler.type)
                    flag = yield from self.event("except", exc, kind, bool_result=True)
                    if not (yield from self.decide(flag)):
                        continue
                if handler.name is not None:
                    self.store(handler.name, exc)
                try:
                    yield from self.block(handler.body)
                finally:
                    if handler.name is not None:  # `except E as e` deletes `e` at its end
                        self.store(handler.name, UNBOUND)
                return True
            return False
        finally:
            self.handled = outer

    # ------------------------------------------------------------------ loops

    def head(self, stored: set[tuple[int, str]]) -> Walk:
        """At a loop head: report what the loop carries, take the generalized values."""
        slots = self._slots(stored)
        answer = yield Head(slots)
        for slot, value in answer.items():
            kind, key, name = slot
            if kind == "var":
                self.frames[key].env[name] = value[0]
            else:
                self.made[key].items = list(value)
        return slots

    def back(self, slots: dict[Slot, tuple[Term, ...]]) -> Walk:
        after: dict[Slot, tuple[Term, ...]] = {}
        for slot in slots:
            kind, key, name = slot
            if kind == "var":
                after[slot] = (self.peek(self.frames[key].env.get(name, UNBOUND)),)
            elif self.made[key].escaped is not None:
                raise Refused("a fresh list escaped inside a loop")
            else:
                after[slot] = tuple(self.peek(i) for i in self.made[key].items)
        yield Back(after)
        raise Refused("the walk went on after a back edge")  # pragma: no cover

    def _slots(self, stored: set[tuple[int, str]]) -> dict[Slot, tuple[Term, ...]]:
        slots: dict[Slot, tuple[Term, ...]] = {}
        for depth, name in sorted(stored):
            value = self.frames[depth].env.get(name, UNBOUND)
            if isinstance(value, Fresh | Pack):
                raise Refused(f"the loop rebinds `{name}`, which holds a fresh list")
            slots[("var", depth, name)] = (self.peek(value),)
        for serial, fresh in sorted(self._lists().items()):
            slots[("list", serial, "")] = tuple(self.peek(i) for i in fresh.items)
        return slots

    def _lists(self) -> dict[int, Fresh]:
        """The fresh lists the locals reach (not escaped)."""
        found: dict[int, Fresh] = {}
        stack: list[Value] = [v for f in self.frames for v in f.env.values()]
        stack += self.building
        while stack:
            value = stack.pop()
            if isinstance(value, Pack):
                stack.extend(value.items)
            elif isinstance(value, Fresh) and value.escaped is None:
                found[value.serial] = value
                if any(isinstance(i, Fresh | Pack) for i in value.items):
                    raise Refused("a fresh list holding another at a loop head")
        return found

    def _stored(self, nodes: list[ast.AST]) -> set[tuple[int, str]]:
        """The locals (frame depth, name) that code in ``nodes`` may bind."""
        out: set[tuple[int, str]] = set()
        for node in nodes:
            for n in _own_nodes(node):
                if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load):
                    out.add(self._depth(n.id, walrus=False))
                elif isinstance(n, ast.NamedExpr) and isinstance(n.target, ast.Name):
                    out.add((0, n.target.id))
                elif isinstance(n, ast.ExceptHandler) and n.name is not None:
                    out.add(self._depth(n.name, walrus=False))  # bound, then deleted
            for n in ast.walk(node):  # walrus targets inside comprehensions
                if isinstance(n, ast.NamedExpr) and isinstance(n.target, ast.Name):
                    out.add((0, n.target.id))
        return out

    def _depth(self, name: str, walrus: bool) -> tuple[int, str]:
        if not walrus:
            for depth in range(len(self.frames) - 1, -1, -1):
                if self.frames[depth].scope.binds(name):
                    return depth, name
        return 0, name

    def for_loop(self, node: ast.For) -> Walk:
        iterable = yield from self.expr(node.iter)
        iterator = yield from self.event("iter", iterable)
        stored = self._stored([node.target, *node.body])
        slots = yield from self.head(stored)
        item = yield from self.event("next", iterator)
        if (yield from self.decide(Flag(item.event, "stop"))):
            yield Exit()
            yield from self.block(node.orelse)
            return
        yield from self.assign(node.target, item)
        try:
            yield from self.block(node.body)
        except _Break:
            yield Exit()
            return
        except _Continue:
            pass
        yield from self.back(slots)

    def while_loop(self, node: ast.While) -> Walk:
        stored = self._stored([node.test, *node.body])
        slots = yield from self.head(stored)
        test = yield from self.expr(node.test)
        if not (yield from self.truth(test)):
            yield Exit()
            yield from self.block(node.orelse)
            return
        try:
            yield from self.block(node.body)
        except _Break:
            yield Exit()
            return
        except _Continue:
            pass
        yield from self.back(slots)

    def list_comp(self, node: ast.ListComp | ast.GeneratorExp) -> Walk:
        scope = self.canon.scopes.by_node[id(node)]
        first = yield from self.expr(node.generators[0].iter)
        out = self.fresh([])
        self.frames.append(_Frame(scope, {}))
        self.building.append(out)
        try:
            yield from self._generator(node, 0, first, out)
        finally:
            self.frames.pop()
            self.building.pop()
        return out

    def _generator(self, node: ast.ListComp | ast.GeneratorExp, k: int, iterable: Value,
                   out: Fresh) -> Walk:
        gen = node.generators[k]
        if gen.is_async:
            raise Refused("an async comprehension")
        if k:
            iterable = yield from self.expr(gen.iter)
        iterator = yield from self.event("iter", iterable)
        rest: list[ast.AST] = [gen.target, *gen.ifs, node.elt]
        rest += [part for g in node.generators[k + 1:] for part in (g.target, g.iter, *g.ifs)]
        slots = yield from self.head(self._stored(rest))
        item = yield from self.event("next", iterator)
        if (yield from self.decide(Flag(item.event, "stop"))):
            yield Exit()
            return
        yield from self.assign(gen.target, item)
        for cond in gen.ifs:
            test = yield from self.expr(cond)
            if not (yield from self.truth(test)):
                yield from self.back(slots)
        if k + 1 < len(node.generators):
            yield from self._generator(node, k + 1, NONE, out)
        else:
            out.items.append((yield from self.expr(node.elt)))
        yield from self.back(slots)

    # ------------------------------------------------------------------ expressions

    def expr(self, node: ast.expr) -> Walk:
        if isinstance(node, ast.Constant):
            return const(node.value)
        if isinstance(node, ast.Name):
            return self.load(node.id)
        if isinstance(node, ast.Attribute):
            chain = self._chain(node)
            if chain is not None:
                return chain
            obj = yield from self.expr(node.value)
            return (yield from self.event("getattr", obj, const(node.attr)))
        if isinstance(node, ast.Subscript):
            obj = yield from self.expr(node.value)
            key = yield from self.expr(node.slice)
            return (yield from self.event("getitem", obj, key))
        if isinstance(node, ast.Slice):
            bounds: list[Value] = []
            for part in (node.lower, node.upper, node.step):
                bounds.append(NONE if part is None else (yield from self.expr(part)))
            return Slice(*(self.render(p, self.events) for p in bounds))
        if isinstance(node, ast.Call):
            return (yield from self.call(node))
        if isinstance(node, ast.BinOp):
            left = yield from self.expr(node.left)
            right = yield from self.expr(node.right)
            return (yield from self.event(_BINOPS[type(node.op)], left, right))
        if isinstance(node, ast.UnaryOp):
            operand = yield from self.expr(node.operand)
            if isinstance(node.op, ast.Not):
                if is_bool(operand):
                    return operand.term if isinstance(operand, Not) else Not(operand)
                flag = yield from self.truth_term(operand)
                return flag.term if isinstance(flag, Not) else Not(flag)
            return (yield from self.event("unary" + _UNOPS[type(node.op)], operand))
        if isinstance(node, ast.BoolOp):
            return (yield from self.boolop(node))
        if isinstance(node, ast.Compare):
            return (yield from self.compare(node))
        if isinstance(node, ast.IfExp):
            test = yield from self.expr(node.test)
            return (yield from self.expr(node.body if (yield from self.truth(test))
                                         else node.orelse))
        if isinstance(node, ast.Tuple):
            items = yield from self.items(node.elts)
            if any(isinstance(i, Fresh | Pack) for i in items):
                return Pack(tuple(items))
            return Tup(tuple(i for i in items if isinstance(i, Term)))
        if isinstance(node, ast.List):
            return self.fresh((yield from self.items(node.elts)))
        if isinstance(node, ast.Dict):
            if len(node.keys) > 16 or any(k is None for k in node.keys):
                raise Refused("a dict display with `**` or many items")
            parts: list[Value] = []
            for key_node, value_node in zip(node.keys, node.values, strict=True):
                assert key_node is not None
                parts.append((yield from self.expr(key_node)))
                parts.append((yield from self.expr(value_node)))
            return (yield from self.event("dict", *parts))
        if isinstance(node, ast.Set):
            if len(node.elts) > 16:
                raise Refused("a set display with many items")
            return (yield from self.event("set", *(yield from self.items(node.elts, False))))
        if isinstance(node, ast.JoinedStr):
            return (yield from self.joined(node))
        if isinstance(node, ast.FormattedValue):
            return (yield from self.formatted(node))
        if isinstance(node, ast.NamedExpr):
            value = yield from self.expr(node.value)
            assert isinstance(node.target, ast.Name)
            self.store(node.target.id, value, walrus=True)
            return value
        if isinstance(node, ast.ListComp):
            return (yield from self.list_comp(node))
        if isinstance(node, ast.Lambda):
            return (yield from self.lambda_(node))
        if isinstance(node, ast.GeneratorExp):
            return (yield from self.genexp(node))
        if isinstance(node, ast.Yield):
            value = NONE if node.value is None else (yield from self.expr(node.value))
            return (yield from self.event("yield", value))
        if isinstance(node, ast.YieldFrom):
            value = yield from self.expr(node.value)
            return (yield from self.event("yield from", value))
        raise Refused(f"`{type(node).__name__}` (line {node.lineno})")

    # ------------------------------------------------------------------ closures

    def lambda_(self, node: ast.Lambda) -> Walk:
        args = node.args
        defaults: list[Term] = []
        for d in (*args.defaults, *args.kw_defaults):
            if d is not None:
                defaults.append(self.render((yield from self.expr(d)), self.events))
        own = {p.arg: f"A:{p.arg}" for p in _params(args)}
        shape = [[p.arg for p in group] for group in (args.posonlyargs, args.args,
                                                      args.kwonlyargs)]
        star = [p.arg if p is not None else "" for p in (args.vararg, args.kwarg)]
        kw = [d is not None for d in args.kw_defaults]
        head = f"lambda:{shape}:{star}:{len(args.defaults)}:{kw}:"
        return self.closure(head, node.body, own, tuple(defaults))

    def genexp(self, node: ast.GeneratorExp) -> Walk:
        # The first iterable is evaluated, and `iter` called on it, where the expression
        # stands; the rest runs later, as the generator is consumed.
        first = yield from self.expr(node.generators[0].iter)
        iterator = yield from self.event("iter", first)
        own: dict[str, str] = {}
        for gen in node.generators:
            if gen.is_async:
                raise Refused("an async generator expression")
            for n in ast.walk(gen.target):
                if isinstance(n, ast.Name):
                    own.setdefault(n.id, f"T{len(own)}")
        rest: list[ast.AST] = [g.target for g in node.generators]
        rest += [g.iter for g in node.generators[1:]]
        rest += [c for g in node.generators for c in g.ifs]
        rest.append(node.elt)
        return self.closure("genexp:", rest, own, (iterator,))

    def closure(self, head: str, body: ast.AST | list[ast.AST], own: dict[str, str],
                made_with: tuple[Term, ...]) -> Fn:
        """The term of a closure: its code as text, and the enclosing locals it reads,
        each bound once in the function (outside loops) and bound here already, so that
        the value it reads later is the one it has now."""
        captured: list[str] = []
        parts: list[str] = [head]
        nodes = body if isinstance(body, list) else [body]
        for n in nodes:
            self._code(n, own, captured, parts)
        values: list[Term] = []
        for name in captured:
            if not self._stable(name):
                raise Refused(f"a closure reads `{name}`, which the function rebinds")
            values.append(self.render(self.load(name), self.events))
        self.closures += 1
        return Fn(self.closures, "\x00".join(parts), tuple(values), made_with)

    def _code(self, node: ast.AST, own: dict[str, str], captured: list[str],
              out: list[str]) -> None:
        if isinstance(node, ast.Lambda | ast.GeneratorExp | ast.ListComp | ast.SetComp
                      | ast.DictComp | ast.NamedExpr | ast.Yield | ast.YieldFrom | ast.Await):
            raise Refused(f"`{type(node).__name__}` inside a closure")
        if isinstance(node, ast.Name):
            if node.id in own:
                out.append(own[node.id])
            elif self._local_frame(node.id) is not None:
                if node.id not in captured:
                    captured.append(node.id)
                out.append(f"C{captured.index(node.id)}")
            else:
                out.append(self._resolve(lambda: self.canon._name(
                    node.id, self.frames[-1].scope, store=False)))
            return
        if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load):
            root: ast.expr = node
            while isinstance(root, ast.Attribute):
                root = root.value
            if not (isinstance(root, ast.Name) and root.id in own):
                chain = self._chain(node)
                if chain is not None:
                    out.append(chain.token)
                    return
        if isinstance(node, ast.Constant):
            out.append(_value_text(node.value))
            return
        out.append(type(node).__name__ + "(")
        for name, value in ast.iter_fields(node):
            if name in ("ctx", "type_comment"):
                continue
            out.append(name + "=")
            for item in value if isinstance(value, list) else [value]:
                if isinstance(item, ast.AST):
                    self._code(item, own, captured, out)
                else:
                    out.append(repr(item))
        out.append(")")

    def _stable(self, name: str) -> bool:
        """Whether the local ``name`` of the function is bound at one place only, outside
        any loop, handler or comprehension (so once bound, it keeps its value)."""
        sites = 0
        stack: list[tuple[ast.AST, bool]] = [(s, False) for s in self.fn.body]
        sites += sum(p.arg == name for p in _params(self.fn.args))
        while stack:
            node, looped = stack.pop()
            if isinstance(node, ast.Name) and node.id == name and not isinstance(
                node.ctx, ast.Load
            ):
                sites += 2 if looped else 1
            elif isinstance(node, ast.ExceptHandler) and node.name == name:
                sites += 2
            inner = looped or isinstance(node, ast.For | ast.While | ast.ListComp
                                         | ast.SetComp | ast.DictComp | ast.GeneratorExp)
            stack.extend((c, inner) for c in ast.iter_child_nodes(node))
        return sites == 1

    def items(self, nodes: list[ast.expr], spread: bool = True) -> Walk:
        """The items of a display; `*x` in a tuple or list display is iterated where it
        stands (an event), and stands for the items it gave."""
        out: list[Value] = []
        for n in nodes:
            if isinstance(n, ast.Starred):
                if not spread:
                    raise Refused(f"a starred item in a set display (line {n.lineno})")
                value = yield from self.expr(n.value)
                out.append(Star((yield from self.event("spread", value))))
                continue
            out.append((yield from self.expr(n)))
        return out

    def _chain(self, node: ast.Attribute) -> Glob | None:
        root: ast.expr = node
        while isinstance(root, ast.Attribute):
            root = root.value
        if not isinstance(root, ast.Name) or self._local_frame(root.id) is not None:
            return None
        reads = self.canon.reads
        before = len(reads.chains)
        token = self.canon._chain(node, self.frames[-1].scope)
        del reads.chains[before:]
        return Glob(token) if token is not None else None

    def call(self, node: ast.Call) -> Walk:
        func = node.func
        if (isinstance(func, ast.Name) and func.id == "super" and not node.args
                and not node.keywords and self._local_frame("super") is None):
            return (yield from self.super_())
        copied = yield from self.copy_call(node)
        if copied is not None:
            return copied
        if isinstance(func, ast.Attribute) and self._chain(func) is None:
            obj = yield from self.expr(func.value)
            if (isinstance(obj, Fresh) and obj.escaped is None and func.attr == "append"
                    and len(node.args) == 1 and not node.keywords
                    and not isinstance(node.args[0], ast.Starred)):
                # `list.append` of a list nobody else holds: the function's own business.
                item = yield from self.expr(node.args[0])
                if obj.escaped is not None:  # the argument handed the list out meanwhile
                    raise Refused(f"a list appended to after its argument handed it out "
                                  f"(line {node.lineno})")
                obj.items.append(item)
                return NONE
            callee: Value = yield from self.event("getattr", obj, const(func.attr))
        else:
            callee = yield from self.expr(func)
        # Positional arguments are evaluated first, then keywords. Where `*x` or `**x` is
        # unpacked depends on what follows it; after one, only arguments that run no code.
        args: list[Value] = []
        starred = False
        for arg in node.args:
            if starred and not _inert(arg.value if isinstance(arg, ast.Starred) else arg):
                raise Refused(f"an argument evaluated after a starred one (line {arg.lineno})")
            if isinstance(arg, ast.Starred):
                starred = True
                args.append(Star(self.render((yield from self.expr(arg.value)), self.events)))
            else:
                args.append((yield from self.expr(arg)))
        for kw in node.keywords:
            if starred and not _inert(kw.value):
                raise Refused(f"an argument evaluated after a starred one (line {node.lineno})")
            value = yield from self.expr(kw.value)
            starred = starred or kw.arg is None
            args.append(Kw(kw.arg, self.render(value, self.events)))
        return (yield from self.event("call", callee, *args))

    def copy_call(self, node: ast.Call) -> Walk:
        """`tuple(x)` or `list(x)` of the builtins, where ``x`` is a list nobody else holds
        or a generator expression: the items, collected the way a list comprehension
        does (the builtin only iterates it; a generator expression's iteration is where
        its code runs). None if the call is not one of these (nothing evaluated)."""
        func = node.func
        if not (isinstance(func, ast.Name) and func.id in ("tuple", "list")
                and len(node.args) == 1 and not node.keywords
                and not isinstance(node.args[0], ast.Starred)
                and self._local_frame(func.id) is None):
            return None
        arg = node.args[0]
        if not isinstance(arg, ast.GeneratorExp | ast.ListComp | ast.List):
            return None
        callee = self.load(func.id)
        if callee != Glob(f"B:{func.id}"):
            return None
        made = yield from (self.list_comp(arg) if not isinstance(arg, ast.List)
                           else self.expr(arg))
        assert isinstance(made, Fresh)
        if func.id == "list":
            return self.fresh(list(made.items))
        if any(isinstance(i, Fresh | Pack) for i in made.items):
            return Pack(tuple(made.items))
        return Tup(tuple(i for i in made.items if isinstance(i, Term)))

    def super_(self) -> Walk:
        """`super()` in a method is `super(__class__, <first parameter>)`: the class is
        the same in both versions (checked apart from the method), and the parameter must
        never be rebound, so that it still holds what it was called with."""
        token = self._resolve(lambda: self.canon._name("super", self.frames[-1].scope,
                                                       store=False), frame_reader=True)
        params = [*self.fn.args.posonlyargs, *self.fn.args.args]
        if not self.canon.method or len(self.frames) > 1 or not params:
            raise Refused("`super()` outside a method's own body")
        first = params[0].arg
        if not self._stable(first):
            raise Refused(f"`super()` in a method that rebinds `{first}`")
        return (yield from self.event("call", Glob(token), Glob("__class__"), Param(first)))

    def boolop(self, node: ast.BoolOp) -> Walk:
        is_or = isinstance(node.op, ast.Or)
        for sub in node.values[:-1]:
            value = yield from self.expr(sub)
            if (yield from self.truth(value)) == is_or:
                return value
        return (yield from self.expr(node.values[-1]))

    def compare(self, node: ast.Compare) -> Walk:
        left = yield from self.expr(node.left)
        result: Value = NONE
        for i, (op, right_node) in enumerate(zip(node.ops, node.comparators, strict=True)):
            right = yield from self.expr(right_node)
            if isinstance(op, ast.In | ast.NotIn):
                flag = yield from self.event("in", right, left, bool_result=True)
                result = Not(flag) if isinstance(op, ast.NotIn) else flag
            elif isinstance(op, ast.Is | ast.IsNot):
                flag = yield from self.event("is", left, right, bool_result=True)
                result = Not(flag) if isinstance(op, ast.IsNot) else flag
            else:
                result = yield from self.event(_CMPOPS[type(op)], left, right)
            if i + 1 < len(node.ops) and not (yield from self.truth(result)):
                return result
            left = right
        return result

    def joined(self, node: ast.JoinedStr) -> Walk:
        parts: list[Term] = []
        for part in node.values:
            value = yield from self.expr(part)
            parts.append(self.render(value, self.events))
        return Joined(tuple(parts))

    def formatted(self, node: ast.FormattedValue) -> Walk:
        value = yield from self.expr(node.value)
        if node.conversion != -1:
            value = yield from self.event("convert:" + chr(node.conversion), value)
        spec: Value = const("")
        if node.format_spec is not None:
            spec = yield from self.expr(node.format_spec)
        return (yield from self.event("format", value, spec))


def _inert(node: ast.expr) -> bool:
    """An argument whose evaluation runs no code (a local or global name, a constant)."""
    return isinstance(node, ast.Name | ast.Constant)


def _params(args: ast.arguments) -> list[ast.arg]:
    return [p for p in (*args.posonlyargs, *args.args, args.vararg, *args.kwonlyargs,
                        args.kwarg) if p is not None]


def _body(fn: ast.FunctionDef) -> list[ast.stmt]:
    body = fn.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) and (
        isinstance(body[0].value.value, str)
    ):
        body = body[1:]
    return body


def _own_nodes(node: ast.AST) -> Iterator[ast.AST]:
    """The nodes of ``node`` in its own scope (not inside comprehensions, which have theirs,
    except their first iterable)."""
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        if isinstance(n, ast.ListComp | ast.SetComp | ast.DictComp | ast.GeneratorExp):
            stack.append(n.generators[0].iter)
            continue
        stack.extend(ast.iter_child_nodes(n))
