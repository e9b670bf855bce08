"""One version's walk through its function body, event by event (for ``relational.opaque``).

The walk is a generator stepped by the driver (the protocol is in ``walkcore``); it is
deterministic given the answers, so the driver replays it to fork a path. Statements and
loops are here, expressions in ``walkexpr``, what the walk holds and lets go of in
``lifetimes``. What it does not model it refuses (``Refused``): nested functions and
classes, ``try*``, ``global``, ``await``, reading a local that may be unbound.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from veribot.checks.lang import pygen
from veribot.checks.relational.terms import (
    NONE,
    UNBOUND,
    Flag,
    Fresh,
    Pack,
    Param,
    Term,
    Value,
    const,
)
from veribot.checks.relational.walkcore import (
    RAISED,
    RAISING,
    Ask,
    Back,
    Decide,
    End,
    Exit,
    Head,
    Refused,
    Request,
    Slot,
    Walk,
    _Break,
    _Continue,
    _Return,
    _Throw,
    params,
)
from veribot.checks.relational.walkexpr import _BINOPS, Expressions

__all__ = ["RAISED", "RAISING", "Ask", "Back", "Decide", "End", "Exit", "Head", "Refused",
           "Request", "Slot", "Walk", "Walker"]


class Walker(Expressions):
    """The walk of one version: ``run()`` is the generator the driver steps."""

    def run(self) -> Walk:
        self.life.params = pygen.is_generator(self.fn)
        env = self.frames[0].env
        for p in params(self.fn.args):
            env[p.arg] = Param(p.arg)
        life = self.life
        life.reset()
        try:
            yield from self.block(_body(self.fn))
            value: Value = NONE
        except _Return as ret:
            value = ret.value
        except _Throw as thrown:
            self._frame_exit(raised=True)
            yield End("raise", thrown.exc, life.sync((thrown.exc,)))
            return
        except (_Break, _Continue):  # pragma: no cover - the compiler rejects these
            raise Refused("`break` or `continue` outside a loop") from None
        term = self.render(value, "end")
        self._frame_exit()
        yield End("return", term, life.sync((value,)))

    def _frame_exit(self, raised: bool = False) -> None:
        """The frame is left: its stack and locals are let go of (the returned value or
        the exception goes to the caller). Where it ``raised``, only its stack is: the
        exception's traceback holds the frame, which holds its locals, and an exception
        being handled is the new one's ``__context__``; both live on as long as the caller
        keeps the exception (so the versions must hold the same objects there)."""
        life = self.life
        life.pending.clear()
        life.inflight.clear()
        if raised:
            return
        life.handling.clear()
        for frame in self.frames:
            frame.env.clear()

    # ------------------------------------------------------------------ statements

    def block(self, body: list[ast.stmt]) -> Walk:
        for stmt in body:
            yield from self.stmt(stmt)

    def stmt(self, node: ast.stmt) -> Walk:
        life = self.life
        if isinstance(node, ast.Expr):
            m = life.mark()
            yield from self.expr(node.value)
            life.cut(m)
            life.point()
        elif isinstance(node, ast.Assign):
            yield from self.expr(node.value)
            value = life.pending[-1]
            life.pending.extend([value] * (len(node.targets) - 1))  # one copy per target
            for target in node.targets:
                yield from self.assign(target, value)
        elif isinstance(node, ast.AnnAssign):
            if not isinstance(node.target, ast.Name):
                raise Refused(f"an annotated assignment to an expression (line {node.lineno})")
            if node.value is not None:
                value = yield from self.expr(node.value)
                yield from self.assign(node.target, value)
        elif isinstance(node, ast.AugAssign):
            yield from self.augassign(node)
        elif isinstance(node, ast.Return):
            m = life.mark()
            value = NONE if node.value is None else (yield from self.expr(node.value))
            life.cut(m)
            life.inflight.append(value)
            raise _Return(value)
        elif isinstance(node, ast.If):
            m = life.mark()
            test = yield from self.expr(node.test)
            yield from self.block(node.body if (yield from self.truth(test, m)) else node.orelse)
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
            m = life.mark()
            test = yield from self.expr(node.test)
            if not (yield from self.truth(test, m)):
                msg = NONE if node.msg is None else (yield from self.expr(node.msg))
                yield from self.event("assert", msg, mark=m)
        elif isinstance(node, ast.Import | ast.ImportFrom) and (
            id(node) in self.canon.scopes.dropped
        ):
            pass  # a local import resolved to its origin (the name reads it)
        elif isinstance(node, ast.Delete):
            for target in node.targets:
                yield from self.delete(target)
        else:
            raise Refused(f"`{type(node).__name__}` (line {node.lineno})")

    def augassign(self, node: ast.AugAssign) -> Walk:
        life = self.life
        op = "i" + _BINOPS[type(node.op)]
        target = node.target
        m = life.mark()
        if isinstance(target, ast.Name):
            current = self.load(target.id)
            life.pending.append(current)
            value = yield from self.expr(node.value)
            result = yield from self.event(op, current, value, mark=m)
            yield from self.assign_value(target, result)
        elif isinstance(target, ast.Attribute):
            obj = yield from self.expr(target.value)
            life.pending.append(obj)  # kept for the store
            current = yield from self.event("getattr", obj, const(target.attr),
                                            mark=life.mark() - 1)
            life.pending.append(current)
            value = yield from self.expr(node.value)
            result = yield from self.event(op, current, value, mark=life.mark() - 2)
            life.pending.append(result)
            yield from self.event("setattr", obj, const(target.attr), result, mark=m)
        elif isinstance(target, ast.Subscript):
            obj = yield from self.expr(target.value)
            key = yield from self.expr(target.slice)
            life.pending.extend([obj, key])  # kept for the store
            current = yield from self.event("getitem", obj, key, mark=life.mark() - 2)
            life.pending.append(current)
            value = yield from self.expr(node.value)
            result = yield from self.event(op, current, value, mark=life.mark() - 2)
            life.pending.append(result)
            yield from self.event("setitem", obj, key, result, mark=m)
        else:
            raise Refused("an augmented assignment to this target")

    def delete(self, target: ast.expr) -> Walk:
        m = self.life.mark()
        if isinstance(target, ast.Attribute):
            obj = yield from self.expr(target.value)
            yield from self.event("delattr", obj, const(target.attr), mark=m)
        elif isinstance(target, ast.Subscript):
            obj = yield from self.expr(target.value)
            key = yield from self.expr(target.slice)
            yield from self.event("delitem", obj, key, mark=m)
        else:
            raise Refused("`del` of a local")

    def raise_(self, node: ast.Raise) -> Walk:
        if node.exc is None:
            if self.handled is None:
                raise Refused(f"a bare `raise` outside a handler (line {node.lineno})")
            self.life.inflight.append(self.handled)
            raise _Throw(self.handled)  # the same exception object, again
        m = self.life.mark()
        exc = yield from self.expr(node.exc)
        cause = NONE if node.cause is None else (yield from self.expr(node.cause))
        # Instantiating a class, checking the type, chaining: one event, which raises.
        yield from self.event("raise" if node.cause is None else "raise-from", exc, cause,
                              mark=m)

    def _unwind(self, depth: int) -> None:
        """An exception reached a handler: what the stack held above it is let go of."""
        self.life.cut(depth)
        self.life.point()

    def _handling(self, exc: Term) -> Term | None:
        outer = self.handled
        self.handled = exc
        self.life.handling.append(exc)
        return outer

    def _handled(self, outer: Term | None) -> None:
        self.handled = outer
        self.life.handling.pop()
        self.life.point()

    def with_(self, node: ast.With, items: list[ast.withitem]) -> Walk:
        """`with a, b:` is `with a:` holding `with b:`. The manager (its bound `__exit__`)
        stays on the stack until `__exit__` has returned."""
        if not items:
            yield from self.block(node.body)
            return
        life = self.life
        first, rest = items[0], items[1:]
        m = life.mark()
        manager = yield from self.expr(first.context_expr)
        entered = yield from self.event("enter", manager)
        depth = life.mark()
        # From here on `__exit__` runs, whatever happens (the `as` target's store too).
        self.protected += 1
        try:
            if first.optional_vars is not None:
                yield from self.assign_value(first.optional_vars, entered)
            yield from self.with_(node, rest)
        except _Throw as thrown:
            self.protected -= 1
            self._unwind(depth)
            life.inflight.remove(thrown.exc)
            outer = self._handling(thrown.exc)
            try:
                result = yield from self.event("exit", manager, thrown.exc)
                life.pending.append(result)
                suppress = yield from self.truth(result, life.mark() - 1)
            except _Throw:
                self._handled(outer)
                life.cut(m)
                life.point()
                raise
            if not suppress:
                life.inflight.append(thrown.exc)
            self._handled(outer)
            life.cut(m)
            life.point()
            if not suppress:
                raise
            return
        except (_Return, _Break, _Continue):
            self.protected -= 1
            self._unwind(depth)
            yield from self._exit(manager, m)
            raise
        self.protected -= 1
        yield from self._exit(manager, m)

    def _exit(self, manager: Value, mark: int) -> Walk:
        result = yield from self.event("exit", manager, NONE)
        self.life.pending.append(result)
        self.life.cut(mark)
        self.life.point()

    def try_(self, node: ast.Try) -> Walk:
        """`try`: its `finally` runs on every way out, seeing the exception if one left."""
        if not node.finalbody:
            yield from self.try_except(node)
            return
        life = self.life
        depth = life.mark()
        self.protected += 1
        try:
            yield from self.try_except(node)
        except _Throw as thrown:
            self.protected -= 1
            self._unwind(depth)
            outer = self._handling(thrown.exc)
            try:
                yield from self.block(node.finalbody)
            except (_Throw, _Return, _Break, _Continue):
                life.inflight.remove(thrown.exc)  # dropped for what leaves the finally
                raise
            finally:
                self._handled(outer)
            raise
        except (_Return, _Break, _Continue) as leaving:
            self.protected -= 1
            self._unwind(depth)
            try:
                yield from self.block(node.finalbody)
            except (_Throw, _Return, _Break, _Continue):
                if isinstance(leaving, _Return):
                    life.inflight.remove(leaving.value)
                raise
            raise
        self.protected -= 1
        yield from self.block(node.finalbody)

    def try_except(self, node: ast.Try) -> Walk:
        depth = self.life.mark()
        self.protected += 1
        try:
            yield from self.block(node.body)
        except _Throw as thrown:
            self.protected -= 1
            self._unwind(depth)
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
        life = self.life
        life.inflight.remove(exc)
        outer = self._handling(exc)
        try:
            for handler in handlers:
                if handler.type is not None:
                    m = life.mark()
                    kind = yield from self.expr(handler.type)
                    flag = yield from self.event("except", exc, kind, bool_result=True, mark=m)
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
            life.inflight.append(exc)
            return False
        finally:
            self._handled(outer)

    # ------------------------------------------------------------------ loops

    def head(self, stored: set[tuple[int, str]],
             dead: tuple[frozenset[tuple[int, str]], ...] = ()) -> Walk:
        """At a loop head: report what the loop carries, take the generalized values."""
        deaths = self.life.sync()
        slots = self._slots(stored)
        groups = tuple(frozenset(("var", d, n) for d, n in group) for group in dead)
        answer = yield Head(slots, deaths, groups)
        for slot, value in answer.items():
            kind, key, name = slot
            if kind == "var":
                self.frames[key].env[name] = value[0]
            else:
                self.made[key].items = list(value)
        self.life.reset()
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
        yield Back(after, self.life.sync())
        raise Refused("the walk went on after a back edge")  # pragma: no cover

    def exit_loop(self) -> Walk:
        yield Exit()

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
        """The fresh lists the walk holds (not escaped), through its locals or its stack."""
        found: dict[int, Fresh] = {}
        stack: list[Value] = [v for f in self.frames for v in f.env.values()]
        stack += self.life.pending
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
                    out.add(self._depth(n.id))
                elif isinstance(n, ast.NamedExpr) and isinstance(n.target, ast.Name):
                    out.add((0, n.target.id))
                elif isinstance(n, ast.ExceptHandler) and n.name is not None:
                    out.add(self._depth(n.name))  # bound, then deleted
            for n in ast.walk(node):  # walrus targets inside comprehensions
                if isinstance(n, ast.NamedExpr) and isinstance(n.target, ast.Name):
                    out.add((0, n.target.id))
        return out

    def _dead(self, loop: ast.For) -> tuple[frozenset[tuple[int, str]], ...]:
        """The groups of locals dead at ``loop``'s head, each rebound all at once before
        any is read: the names of the loop's target (bound when the next item comes), and
        those a first statement of the body assigns from other names. No code after the
        loop reads what they held: every mention of such a name in its scope is in this
        loop's target or body, or (for the target's names) in the target or body of
        another `for` loop, not around this one, whose target rebinds the whole group;
        never inside a nested scope (a closure may run after the loop), and the scope binds
        the name in no other way (`except ... as`, an import, a definition, a parameter)."""
        first = loop.body[0] if loop.body else None
        fresh: set[str] = set()
        if isinstance(first, ast.Assign) and all(
                isinstance(n, ast.Name | ast.Tuple | ast.List | ast.Store)
                for t in first.targets for n in ast.walk(t)):
            fresh = {n.id for t in first.targets for n in ast.walk(t) if isinstance(n, ast.Name)}
            fresh -= {n.id for n in ast.walk(first.value) if isinstance(n, ast.Name)}
        # A target that reads as it binds (`for d[x], x in ...`) may read what a name held.
        targets = ({n.id for n in ast.walk(loop.target) if isinstance(n, ast.Name)}
                   if _plain_target(loop.target) else set())
        groups: list[frozenset[tuple[int, str]]] = []
        for names, others in ((targets, True), (fresh - targets, False)):
            group = frozenset(self._depth(n) for n in names)
            if len({d for d, _ in group}) != 1:
                groups.append(frozenset())
                continue
            scope = self.frames[next(iter(group))[0]].scope.node
            whole = {n for _, n in group}
            ok = all(_dead_in(scope, loop, n, whole if others else None) for n in whole) and (
                others or not whole & {m.id for m in ast.walk(loop.target)
                                       if isinstance(m, ast.Name)})
            groups.append(group if ok else frozenset())
        return tuple(groups)

    def _depth(self, name: str) -> tuple[int, str]:
        for depth in range(len(self.frames) - 1, -1, -1):
            if self.frames[depth].scope.binds(name):
                return depth, name
        return 0, name

    def for_loop(self, node: ast.For) -> Walk:
        """The iterator stays on the stack for the whole loop, and is let go of when the
        loop ends (exhausted, `break`, `return`)."""
        life = self.life
        m = life.mark()
        iterable = yield from self.expr(node.iter)
        iterator = yield from self.event("iter", iterable, mark=m)
        life.pending.append(iterator)
        slots = yield from self.head(self._stored([node.target, *node.body]), self._dead(node))
        item = yield from self.event("next", iterator)
        if (yield from self.decide(Flag(item.event, "stop"))):
            life.cut(m)
            life.point()
            yield Exit()
            yield from self.block(node.orelse)
            return
        yield from self.assign_value(node.target, item)
        try:
            yield from self.block(node.body)
        except _Break:
            life.cut(m)
            life.point()
            yield Exit()
            return
        except _Continue:
            pass
        except _Return:
            life.cut(m)
            life.point()
            raise
        yield from self.back(slots)

    def while_loop(self, node: ast.While) -> Walk:
        slots = yield from self.head(self._stored([node.test, *node.body]))
        m = self.life.mark()
        test = yield from self.expr(node.test)
        if not (yield from self.truth(test, m)):
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


def _body(fn: ast.FunctionDef) -> list[ast.stmt]:
    body = fn.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) and (
        isinstance(body[0].value.value, str)
    ):
        body = body[1:]
    return body


def _dead_in(scope: ast.AST, loop: ast.For, name: str, group: set[str] | None) -> bool:
    """Whether every mention of ``name`` in ``scope`` lies in ``loop`` (its target or
    body), or, with ``group``, in the target or body of another `for` that does not hold
    ``loop`` and whose target binds every name of ``group``; none inside a nested scope;
    and ``scope`` binds the name in no other way than by a name (no ``except ... as``,
    import, definition, parameter or pattern) nor declares it ``global``/``nonlocal``."""
    nested: set[int] = set()
    places: list[set[int]] = []
    around = {id(n) for n in ast.walk(scope) if isinstance(n, ast.For) and any(
        m is loop for m in ast.walk(n))}
    for node in ast.walk(scope):
        if node is not scope and isinstance(
                node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | ast.ClassDef
                | ast.ListComp | ast.SetComp | ast.DictComp | ast.GeneratorExp):
            nested |= {id(m) for m in ast.walk(node)}
        if isinstance(node, ast.Global | ast.Nonlocal) and name in node.names:
            return False
        if not isinstance(node, ast.Name) and name in bound_by(node):
            return False
        if isinstance(node, ast.For) and (node is loop or (
                group is not None and id(node) not in around and _plain_target(node.target)
                and group <= {m.id for m in ast.walk(node.target) if isinstance(m, ast.Name)})):
            places.append({id(m) for part in (node.target, *node.body)
                           for m in ast.walk(part)})
    mentions = [m for m in ast.walk(scope) if isinstance(m, ast.Name) and m.id == name]
    return all(id(m) not in nested and any(id(m) in p for p in places) for m in mentions)


def _plain_target(target: ast.expr) -> bool:
    """Whether a loop's target only binds names (``x``, ``x, (y, *z)``), reading nothing."""
    return all(isinstance(n, ast.Name | ast.Tuple | ast.List | ast.Starred | ast.Store)
               for n in ast.walk(target))


def bound_by(node: ast.AST) -> list[str]:
    """The names a node that is no ``ast.Name`` binds by itself."""
    if isinstance(node, ast.arg):
        return [node.arg]
    if isinstance(node, ast.ExceptHandler | ast.MatchAs | ast.MatchStar):
        return [node.name] if node.name else []
    if isinstance(node, ast.MatchMapping):
        return [node.rest] if node.rest else []
    if isinstance(node, ast.alias):
        return [(node.asname or node.name).split(".")[0]]
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return [node.name]
    return []


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
