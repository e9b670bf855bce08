"""Expressions in one version's walk (``relational.walker``), in CPython's evaluation order.

Every expression's value is pushed on the walk's operand stack (``Lifetimes.pending``) and
stays there until what consumes it is done, as in CPython's value stack: an operation's
operands until the operation returns, a method's object until the call returns, the
middle of a comparison chain until the next link. That is what tells when a value that
nobody else holds is let go of.
"""

from __future__ import annotations

import ast

from veribot.checks.lang.pysource import _value_text
from veribot.checks.relational.terms import (
    NONE,
    Exc,
    Flag,
    Fn,
    Fresh,
    Glob,
    Item,
    Joined,
    Kw,
    Not,
    Pack,
    Param,
    Seq,
    Slice,
    Star,
    Term,
    Tup,
    Value,
    const,
)
from veribot.checks.relational.walkcore import Core, Refused, Walk, _Frame, _Throw, params

_BINOPS = {
    ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.MatMult: "@", ast.Div: "/",
    ast.FloorDiv: "//", ast.Mod: "%", ast.Pow: "**", ast.LShift: "<<", ast.RShift: ">>",
    ast.BitOr: "|", ast.BitXor: "^", ast.BitAnd: "&",
}  # fmt: skip
_UNOPS = {ast.USub: "-", ast.UAdd: "+", ast.Invert: "~"}
_CMPOPS = {
    ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=",
}  # fmt: skip


class Expressions(Core):
    """Expressions, calls, comprehensions and closures."""

    def expr(self, node: ast.expr) -> Walk:
        """Evaluate ``node``; its value is left on the operand stack (and returned)."""
        value = yield from self._expr(node)
        self.life.pending.append(value)
        return value

    def _expr(self, node: ast.expr) -> Walk:
        life = self.life
        if isinstance(node, ast.Constant):
            return const(node.value)
        if isinstance(node, ast.Name):
            return self.load(node.id)
        if isinstance(node, ast.Attribute):
            chain = self._chain(node)
            if chain is not None:
                return chain
            m = life.mark()
            obj = yield from self.expr(node.value)
            return (yield from self.event("getattr", obj, const(node.attr), mark=m))
        if isinstance(node, ast.Subscript):
            m = life.mark()
            obj = yield from self.expr(node.value)
            key = yield from self.expr(node.slice)
            return (yield from self.event("getitem", obj, key, mark=m))
        if isinstance(node, ast.Slice):
            m = life.mark()
            bounds: list[Value] = []
            for part in (node.lower, node.upper, node.step):
                bounds.append(NONE if part is None else (yield from self.expr(part)))
            life.cut(m)  # held by the slice now
            return Slice(*(self.render(p, self.events) for p in bounds))
        if isinstance(node, ast.Call):
            return (yield from self.call(node))
        if isinstance(node, ast.BinOp):
            m = life.mark()
            left = yield from self.expr(node.left)
            right = yield from self.expr(node.right)
            return (yield from self.event(_BINOPS[type(node.op)], left, right, mark=m))
        if isinstance(node, ast.UnaryOp):
            m = life.mark()
            operand = yield from self.expr(node.operand)
            if isinstance(node.op, ast.Not):
                flag = yield from self.truth_term(operand, m)
                return flag.term if isinstance(flag, Not) else Not(flag)
            return (yield from self.event("unary" + _UNOPS[type(node.op)], operand, mark=m))
        if isinstance(node, ast.BoolOp):
            return (yield from self.boolop(node))
        if isinstance(node, ast.Compare):
            return (yield from self.compare(node))
        if isinstance(node, ast.IfExp):
            m = life.mark()
            test = yield from self.expr(node.test)
            chosen = node.body if (yield from self.truth(test, m)) else node.orelse
            return (yield from self._expr(chosen))
        if isinstance(node, ast.Tuple):
            m = life.mark()
            items = yield from self.items(node.elts)
            life.cut(m)  # held by the tuple now
            if any(isinstance(i, Fresh | Pack) for i in items):
                return Pack(tuple(items))
            return Tup(tuple(i for i in items if isinstance(i, Term)))
        if isinstance(node, ast.List):
            m = life.mark()
            items = yield from self.items(node.elts)
            life.cut(m)
            return self.fresh(items)
        if isinstance(node, ast.Dict):
            if len(node.keys) > 16 or any(k is None for k in node.keys):
                raise Refused("a dict display with `**` or many items")
            m = life.mark()
            parts: list[Value] = []
            for key_node, value_node in zip(node.keys, node.values, strict=True):
                assert key_node is not None
                parts.append((yield from self.expr(key_node)))
                parts.append((yield from self.expr(value_node)))
            return (yield from self.event("dict", *parts, mark=m))
        if isinstance(node, ast.Set):
            if len(node.elts) > 16:
                raise Refused("a set display with many items")
            m = life.mark()
            elts = yield from self.items(node.elts, spread=False)
            return (yield from self.event("set", *elts, mark=m))
        if isinstance(node, ast.JoinedStr):
            m = life.mark()
            pieces: list[Term] = []
            for part in node.values:
                pieces.append(self.render((yield from self.expr(part)), self.events))
            life.cut(m)  # the string is built: the formatted pieces are let go of
            life.point()
            return Joined(tuple(pieces))
        if isinstance(node, ast.FormattedValue):
            return (yield from self.formatted(node))
        if isinstance(node, ast.NamedExpr):
            m = life.mark()
            value = yield from self.expr(node.value)
            assert isinstance(node.target, ast.Name)
            self.store(node.target.id, value, walrus=True)
            life.cut(m)  # the expression's own copy is pushed again by `expr`
            return value
        if isinstance(node, ast.ListComp):
            return (yield from self.list_comp(node))
        if isinstance(node, ast.Lambda):
            return (yield from self.lambda_(node))
        if isinstance(node, ast.GeneratorExp):
            return (yield from self.genexp(node))
        if isinstance(node, ast.Yield | ast.YieldFrom):
            m = life.mark()
            value = NONE if node.value is None else (yield from self.expr(node.value))
            kind = "yield" if isinstance(node, ast.Yield) else "yield from"
            return (yield from self.event(kind, value, mark=m))
        raise Refused(f"`{type(node).__name__}` (line {node.lineno})")

    def items(self, nodes: list[ast.expr], spread: bool = True) -> Walk:
        """The items of a display, each left on the stack; `*x` in a tuple or list display
        is iterated where it stands (an event), and stands for the items it gave."""
        out: list[Value] = []
        for n in nodes:
            if isinstance(n, ast.Starred):
                if not spread:
                    raise Refused(f"a starred item in a set display (line {n.lineno})")
                m = self.life.mark()
                value = yield from self.expr(n.value)
                items = yield from self.event("spread", value, mark=m)
                self.life.pending.append(items)
                out.append(Star(items))
                continue
            out.append((yield from self.expr(n)))
        return out

    def formatted(self, node: ast.FormattedValue) -> Walk:
        m = self.life.mark()
        value = yield from self.expr(node.value)
        if node.conversion != -1:
            value = yield from self.event("convert:" + chr(node.conversion), value, mark=m)
            self.life.pending.append(value)
        spec: Value = const("")
        if node.format_spec is not None:
            spec = yield from self.expr(node.format_spec)
        return (yield from self.event("format", value, spec, mark=m))

    def boolop(self, node: ast.BoolOp) -> Walk:
        """`a or b`: `a` is tested where it stands; it is the value, or let go of."""
        is_or = isinstance(node.op, ast.Or)
        for sub in node.values[:-1]:
            m = self.life.mark()
            value = yield from self.expr(sub)
            if (yield from self.truth(value, None)) == is_or:
                self.life.cut(m)  # pushed again by `expr`
                return value
            self.life.cut(m)
            self.life.point()
        return (yield from self._expr(node.values[-1]))

    def compare(self, node: ast.Compare) -> Walk:
        """Each link is an event; the middle operand stays for the next link, and a false
        link is the chain's value."""
        life = self.life
        m = life.mark()
        left = yield from self.expr(node.left)
        result: Value = NONE
        last = len(node.ops) - 1
        for i, (op, right_node) in enumerate(zip(node.ops, node.comparators, strict=True)):
            right = yield from self.expr(right_node)
            keep = (right,) if i < last else ()
            at = life.mark() - 2
            if isinstance(op, ast.In | ast.NotIn):
                flag = yield from self.event("in", right, left, bool_result=True, mark=at,
                                             keep=keep)
                result = Not(flag) if isinstance(op, ast.NotIn) else flag
            elif isinstance(op, ast.Is | ast.IsNot):
                flag = yield from self.event("is", left, right, bool_result=True, mark=at,
                                             keep=keep)
                result = Not(flag) if isinstance(op, ast.IsNot) else flag
            else:
                result = yield from self.event(_CMPOPS[type(op)], left, right, mark=at,
                                               keep=keep)
            if i < last:
                life.pending.append(result)
                if not (yield from self.truth(result, None)):
                    life.cut(m)  # the kept operand is let go of; the result pushed again
                    life.point((result,))
                    return result
                life.cut(life.mark() - 1)
                life.point()
            left = right
        life.cut(m)
        return result

    # ------------------------------------------------------------------ calls

    def call(self, node: ast.Call) -> Walk:
        func = node.func
        if (isinstance(func, ast.Name) and func.id == "super" and not node.args
                and not node.keywords and self._local_frame("super") is None):
            return (yield from self.super_())
        copied = yield from self.copy_call(node)
        if copied is not None:
            return copied
        life = self.life
        m = life.mark()
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
                life.cut(m)
                life.point()
                return NONE
            # The method is looked up first; the object stays on the stack until the call.
            callee: Value = yield from self.event("getattr", obj, const(func.attr))
            life.pending.append(callee)
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
        return (yield from self.event("call", callee, *args, mark=m))

    def copy_call(self, node: ast.Call) -> Walk:
        """`tuple(x)` or `list(x)` of the builtins, where ``x`` is a list display, a list
        comprehension or a generator expression: the items, taken from a list nobody else
        holds, or collected as the builtin iterates the generator (where its code runs, as
        a comprehension's would; its frame and its iterator are let go of in the other
        order, within the same interval). None if the call is not one of these (nothing
        evaluated)."""
        func = node.func
        arg = node.args[0] if len(node.args) == 1 else None
        if not (isinstance(func, ast.Name) and func.id in ("tuple", "list")
                and not node.keywords
                and isinstance(arg, ast.ListComp | ast.List | ast.GeneratorExp)
                and self._local_frame(func.id) is None):
            return None
        callee = self.load(func.id)
        if not isinstance(callee, Glob) or callee.token != f"B:{func.id}":
            return None
        if isinstance(arg, ast.GeneratorExp):
            made = yield from self._drained(arg)
        else:
            made = yield from self._expr(arg)
        assert isinstance(made, Fresh)
        if func.id == "list":
            return self.fresh(list(made.items))
        if any(isinstance(i, Fresh | Pack) for i in made.items):
            return Pack(tuple(made.items))
        return Tup(tuple(i for i in made.items if isinstance(i, Term)))

    def _drained(self, node: ast.GeneratorExp) -> Walk:
        """A generator expression run to its end by ``list``/``tuple``: as a comprehension,
        except that what its code raises leaves the generator's frame, where a
        StopIteration becomes a RuntimeError (PEP 479). So raising is explored there, and
        the exception leaves marked (unequal to one that left a comprehension)."""
        self.protected += 1
        try:
            made = yield from self.list_comp(node)
        except _Throw as thrown:
            if not isinstance(thrown.exc, Exc):
                raise Refused("an exception of unknown origin leaving a generator "
                              "expression") from None
            leaving = Exc(thrown.exc.event, generator=True)
            if thrown.exc in self.life.inflight:
                self.life.inflight.remove(thrown.exc)
            self.life.inflight.append(leaving)
            self.life.born.add(leaving)
            self.life.point()
            raise _Throw(leaving) from None
        finally:
            self.protected -= 1
        return made

    def super_(self) -> Walk:
        """`super()` in a method is `super(__class__, <first parameter>)`: the class is
        the same in both versions (checked apart from the method), and the parameter must
        never be rebound, so that it still holds what it was called with."""
        token = self._resolve(lambda: self.canon._name("super", self.frames[-1].scope,
                                                       store=False), frame_reader=True)
        first = self.first_param()
        if not self.canon.method or len(self.frames) > 1 or first is None:
            raise Refused("`super()` outside a method's own body")
        if not self._stable(first.name):
            raise Refused(f"`super()` in a method that rebinds `{first.name}`")
        return (yield from self.event("call", Glob(token), Glob("__class__"), first))

    # ------------------------------------------------------------------ comprehensions

    def list_comp(self, node: ast.ListComp | ast.GeneratorExp) -> Walk:
        """A list comprehension: the first iterator is made here, then the comprehension
        runs in its own frame; when it returns, its locals are let go of, then the
        iterator it was given."""
        life = self.life
        scope = self.canon.scopes.by_node[id(node)]
        m = life.mark()
        first = yield from self.expr(node.generators[0].iter)
        iterator = yield from self.event("iter", first, mark=m)
        life.pending.append(iterator)
        out = self.fresh([])
        life.pending.append(out)
        self.frames.append(_Frame(scope, {}))
        try:
            yield from self._generator(node, 0, iterator, out)
        finally:
            self.frames.pop()
        life.point()
        life.cut(m)
        life.point((out,))
        return out

    def _generator(self, node: ast.ListComp | ast.GeneratorExp, k: int, iterator: Value,
                   out: Fresh) -> Walk:
        life = self.life
        gen = node.generators[k]
        if gen.is_async:
            raise Refused("an async comprehension")
        mi = life.mark()
        if k:
            iterable = yield from self.expr(gen.iter)
            iterator = yield from self.event("iter", iterable, mark=mi)
            life.pending.append(iterator)
        rest: list[ast.AST] = [gen.target, *gen.ifs, node.elt]
        rest += [part for g in node.generators[k + 1:] for part in (g.target, g.iter, *g.ifs)]
        slots = yield from self.head(self._stored(rest))
        item = yield from self.event("next", iterator)
        if (yield from self.decide(Flag(item.event, "stop"))):
            if k:
                life.cut(mi)
                life.point()
            yield from self.exit_loop()
            return
        yield from self.assign_value(gen.target, item)
        for cond in gen.ifs:
            mc = life.mark()
            test = yield from self.expr(cond)
            if not (yield from self.truth(test, mc)):
                yield from self.back(slots)
        if k + 1 < len(node.generators):
            yield from self._generator(node, k + 1, NONE, out)
        else:
            me = life.mark()
            out.items.append((yield from self.expr(node.elt)))
            life.cut(me)  # held by the list now
        yield from self.back(slots)

    # ------------------------------------------------------------------ closures

    def lambda_(self, node: ast.Lambda) -> Walk:
        args = node.args
        m = self.life.mark()
        defaults: list[Term] = []
        for d in (*args.defaults, *args.kw_defaults):
            if d is not None:
                defaults.append(self.render((yield from self.expr(d)), self.events))
        self.life.cut(m)  # held by the function now
        own = {p.arg: f"A:{p.arg}" for p in params(args)}
        shape = [[p.arg for p in group] for group in (args.posonlyargs, args.args,
                                                      args.kwonlyargs)]
        star = [p.arg if p is not None else "" for p in (args.vararg, args.kwarg)]
        kw = [d is not None for d in args.kw_defaults]
        head = f"lambda:{shape}:{star}:{len(args.defaults)}:{kw}:"
        return self.closure(head, node.body, own, tuple(defaults))

    def genexp(self, node: ast.GeneratorExp) -> Walk:
        # The first iterable is evaluated, and `iter` called on it, where the expression
        # stands; the rest runs later, as the generator is consumed.
        m = self.life.mark()
        first = yield from self.expr(node.generators[0].iter)
        iterator = yield from self.event("iter", first, mark=m)
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
        made = Fn(self.closures, "\x00".join(parts), tuple(values), made_with)
        self.life.born.add(made)
        return made

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
                chain = self._chain(node, text=True)
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
        sites = sum(p.arg == name for p in params(self.fn.args))
        stack: list[tuple[ast.AST, bool]] = [(s, False) for s in self.fn.body]
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

    # ------------------------------------------------------------------ assignment

    def assign_value(self, target: ast.expr, value: Value) -> Walk:
        """Assign ``value`` (just produced, not on the stack) to ``target``."""
        self.life.pending.append(value)
        yield from self.assign(target, value)

    def assign(self, target: ast.expr, value: Value) -> Walk:
        """Assign ``value`` to ``target``, taking one entry of it off the stack."""
        life = self.life
        if isinstance(target, ast.Name):
            self.store(target.id, value)
            life.remove(value)  # moved into the local
        elif isinstance(target, ast.Tuple | ast.List):
            items = yield from self.unpack(value, target.elts)
            life.pending.extend(items)
            life.point()
            for sub, item in zip(target.elts, items, strict=True):
                yield from self.assign(sub, item)
        elif isinstance(target, ast.Attribute):
            m = life.mark()
            obj = yield from self.expr(target.value)
            yield from self.event("setattr", obj, const(target.attr), value, mark=m,
                                  consume=(value,))
        elif isinstance(target, ast.Subscript):
            m = life.mark()
            obj = yield from self.expr(target.value)
            key = yield from self.expr(target.slice)
            yield from self.event("setitem", obj, key, value, mark=m, consume=(value,))
        else:
            raise Refused(f"an assignment to `{type(target).__name__}`")

    def unpack(self, value: Value, targets: list[ast.expr]) -> Walk:
        if any(isinstance(t, ast.Starred) for t in targets):
            raise Refused("a starred assignment target")
        n = len(targets)
        if isinstance(value, Tup | Pack) or (isinstance(value, Fresh) and value.escaped is None):
            items = list(value.items)
            if any(isinstance(i, Seq | Star) for i in items):
                raise Refused("unpacking a sequence of unknown length")
            if len(items) != n:
                raise Refused("unpacking a sequence of another length")
            self.life.remove(value)  # consumed; its items pushed by the caller
            return items
        result = yield from self.event(f"unpack:{n}", value, consume=(value,))
        made = [Item(result, k) for k in range(n)]
        self.life.born.update(made)
        return made

    # Implemented by the statements' walker (loops).
    def head(self, stored: set[tuple[int, str]]) -> Walk:
        raise NotImplementedError

    def back(self, slots: dict[tuple[str, int, str], tuple[Term, ...]]) -> Walk:
        raise NotImplementedError

    def exit_loop(self) -> Walk:
        raise NotImplementedError

    def _stored(self, nodes: list[ast.AST]) -> set[tuple[int, str]]:
        raise NotImplementedError


def _inert(node: ast.expr) -> bool:
    """An argument whose evaluation runs no code (a local or global name, a constant)."""
    return isinstance(node, ast.Name | ast.Constant)


__all__ = ["Expressions", "Param"]
