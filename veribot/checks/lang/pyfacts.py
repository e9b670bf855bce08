"""Code facts for Python: the equivalence vocabulary extracted from a function's own code.

This is seed 000's ``CodeSemantics`` (which the paper left unchecked). Expressions are
normalised to unary and binary functions with temporaries (``x = a + b + c`` becomes
``$t1 = a + b; x = $t1 + c``); def/use/flow come from reaching definitions over the
structured code; every definition carries its control dependences (the enclosing
conditions with the branch taken, and the conditions of earlier early exits). Constants
and globals are defined at line 0. Each return defines ``$ret``; at the function's last
line (the exit) the watched variables are ``$ret``, ``$raise`` when it raises, and the
parameters it mutates in place. Lines are lines of the version's file; the ``file``
argument of every fact is the version label.

Statements the front end cannot describe get ``opaque(file, line, construct)``; lines it
describes fully get ``stmt(file, line)``, so a claim about such a line can be contradicted.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from veribot.checks.agent.facts import Arg, Fact, FactSet
from veribot.checks.lang.pyprove import find_function

RET = "$ret"
RAISE = "$raise"

# Methods that change their receiver in place.
MUTATORS = frozenset(
    {"append", "extend", "insert", "pop", "remove", "clear", "sort", "reverse", "update",
     "add", "discard", "setdefault", "popitem", "difference_update", "intersection_update",
     "symmetric_difference_update"}
)

_BINOPS = {
    ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//",
    ast.Mod: "%", ast.Pow: "**", ast.LShift: "<<", ast.RShift: ">>", ast.BitOr: "|",
    ast.BitXor: "^", ast.BitAnd: "&", ast.MatMult: "@",
}
_UNOPS = {ast.Not: "not", ast.USub: "-", ast.UAdd: "+", ast.Invert: "~"}
_CMPOPS = {
    ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=",
    ast.Is: "is", ast.IsNot: "is not", ast.In: "in", ast.NotIn: "not in",
}

State = dict[str, frozenset[int]]  # variable -> lines of the definitions reaching here
Path = tuple[tuple[str, str, int], ...]  # (condition variable, "true"/"false", line)


class FunctionNotFound(LookupError):
    """The function is not defined at the top level (or as ``Class.method``)."""


def code_facts(source: str, function: str, version: str) -> FactSet:
    """The facts of ``function`` (``name`` or ``Class.method``) in ``source``.

    Raises ``SyntaxError`` if the source does not parse and ``FunctionNotFound`` if the
    function is not in it.
    """
    tree = ast.parse(source)
    fn = find_function(tree, function)
    if fn is None:
        raise FunctionNotFound(function)
    return _Extractor(fn, version).run()


def correspondences(before: FactSet, after: FactSet) -> FactSet:
    """``entryMap`` and ``exitMap`` between two versions' code facts (their single entry and
    their final exit, where the watched variables are read)."""
    out: list[Fact] = []
    for e1 in before.by_pred("entry"):
        for e2 in after.by_pred("entry"):
            out.append(Fact("entryMap", (e1.args[1], e1.args[2], e2.args[1], e2.args[2])))
    w1 = {(f.args[1], f.args[2]) for f in before.by_pred("watchVar")}
    w2 = {(f.args[1], f.args[2]) for f in after.by_pred("watchVar")}
    for f1, l1 in w1:
        for f2, l2 in w2:
            out.append(Fact("exitMap", (f1, l1, f2, l2)))
    return FactSet(out)


@dataclass
class _Flow:
    """Where control goes out of a statement list besides falling through."""

    returns: list[State] = field(default_factory=list)
    breaks: list[State] = field(default_factory=list)
    continues: list[State] = field(default_factory=list)
    ret_defs: set[int] = field(default_factory=set)
    raise_defs: set[int] = field(default_factory=set)


def _join(*states: State | None) -> State | None:
    live = [s for s in states if s is not None]
    if not live:
        return None
    out: dict[str, frozenset[int]] = {}
    for s in live:
        for k, v in s.items():
            out[k] = out.get(k, frozenset()) | v
    return out


class _Extractor:
    def __init__(self, fn: ast.FunctionDef, version: str) -> None:
        self.fn = fn
        self.v = version
        self.facts: set[Fact] = set()
        self.temps: dict[int, str] = {}
        self.path: Path = ()
        self.precise = True
        self.state: State | None = {}
        self.flow = _Flow()
        self.params: list[str] = []
        self.mutated: set[str] = set()
        self.line = fn.lineno
        self.stmt_opaque = False

    # --- emitting ------------------------------------------------------------------------

    def emit(self, pred: str, *args: Arg) -> None:
        self.facts.add(Fact(pred, args))

    def temp(self, node: ast.AST) -> str:
        return self.temps.setdefault(id(node), f"$t{len(self.temps) + 1}")

    def define(self, x: str, line: int) -> None:
        self.emit("def", x, self.v, line)
        if self.path:
            for cond, choice, cline in self.path:
                self.emit("controldep", x, self.v, line, cond, choice, self.v, cline)
        else:
            self.emit("controldep", x, self.v, line, f"Entry:{self.fn.name}", "true",
                      self.v, self.fn.lineno)
        if self.state is not None:
            self.state = {**self.state, x: frozenset({line})}

    def read(self, name: str, line: int) -> str:
        self.emit("use", name, self.v, line)
        reaching = (self.state or {}).get(name)
        if reaching is None:  # a global or builtin: defined before the function runs
            self.emit("def", name, self.v, 0)
            reaching = frozenset({0})
        for ld in reaching:
            self.emit("flow", name, self.v, ld, name, self.v, line)
        return name

    def constant(self, text: str, line: int) -> str:
        self.emit("def", text, self.v, 0)
        self.emit("isConstantValue", text)
        self.emit("use", text, self.v, line)
        self.emit("flow", text, self.v, 0, text, self.v, line)
        return text

    def opaque(self, node: ast.AST, what: str) -> None:
        """Mark the current statement as not fully described."""
        self.emit("opaque", self.v, getattr(node, "lineno", self.line), what)
        self.stmt_opaque = True

    # --- expressions -----------------------------------------------------------------------

    def op(self, node: ast.AST, op: str, operands: list[str], target: str | None) -> str:
        """``target`` (or a temporary) := op(operands), folding more than two operands."""
        line = self.line
        if not operands:
            operands = [self.constant("()", line)]
        while len(operands) > 2:  # pack the leading operands into a tuple chain
            first, second = operands[0], operands[1]
            key = id(node) * 31 + len(operands)
            packed = self.temps.setdefault(key, f"$t{len(self.temps) + 1}")
            self.emit("binaryFun", ",", first, second, self.v, line)
            self.emit("binaryFunDef", packed, ",", first, second, self.v, line)
            self.emit("defWithExpr", packed, self.v, line)
            self.define(packed, line)
            operands = [self.read(packed, line), *operands[2:]]
        x = target if target is not None else self.temp(node)
        if len(operands) == 1:
            self.emit("unaryFun", op, operands[0], self.v, line)
            self.emit("unaryFunDef", x, op, operands[0], self.v, line)
        else:
            self.emit("binaryFun", op, operands[0], operands[1], self.v, line)
            self.emit("binaryFunDef", x, op, operands[0], operands[1], self.v, line)
        self.emit("defWithExpr", x, self.v, line)
        self.define(x, line)
        return x if target is not None else self.read(x, line)

    def expr(self, node: ast.expr, target: str | None = None) -> str:
        """The variable holding the value of ``node``; with ``target``, define it."""
        line = self.line
        if isinstance(node, ast.Name | ast.Constant) and target is not None:
            source = self.expr(node)
            self.emit("flow", source, self.v, line, target, self.v, line)
            self.define(target, line)
            return target
        if isinstance(node, ast.Name):
            return self.read(node.id, line)
        if isinstance(node, ast.Constant):
            return self.constant(ast.unparse(node), line)
        if isinstance(node, ast.BinOp):
            ops = [self.expr(node.left), self.expr(node.right)]
            return self.op(node, _BINOPS[type(node.op)], ops, target)
        if isinstance(node, ast.UnaryOp):
            return self.op(node, _UNOPS[type(node.op)], [self.expr(node.operand)], target)
        if isinstance(node, ast.BoolOp):
            name = "and" if isinstance(node.op, ast.And) else "or"
            acc = self.expr(node.values[0])
            for i, value in enumerate(node.values[1:], start=1):
                last = i == len(node.values) - 1
                acc = self.op(value, name, [acc, self.expr(value)], target if last else None)
            return acc
        if isinstance(node, ast.Compare):
            left = self.expr(node.left)
            parts: list[str] = []
            for cmp, right_node in zip(node.ops, node.comparators, strict=True):
                right = self.expr(right_node)
                only = len(node.ops) == 1
                parts.append(self.op(right_node, _CMPOPS[type(cmp)], [left, right],
                                     target if only else None))
                left = right
            acc = parts[0]
            for k, part in enumerate(parts[1:], start=1):
                acc = self.op(node.comparators[k], "and", [acc, part],
                              target if k == len(parts) - 1 else None)
            return acc
        if isinstance(node, ast.Call):
            return self.call(node, target)
        if isinstance(node, ast.Attribute):
            return self.op(node, "." + node.attr, [self.expr(node.value)], target)
        if isinstance(node, ast.Subscript):
            return self.op(node, "[]", [self.expr(node.value), self.expr(node.slice)], target)
        if isinstance(node, ast.Slice):
            none = ast.Constant(None)
            parts_ = [self.expr(p if p is not None else none)
                      for p in (node.lower, node.upper, node.step)]
            return self.op(node, "slice", parts_, target)
        if isinstance(node, ast.Tuple | ast.List | ast.Set) and not any(
            isinstance(e, ast.Starred) for e in node.elts
        ):
            kind = type(node).__name__.lower()
            return self.op(node, kind, [self.expr(e) for e in node.elts], target)
        if isinstance(node, ast.IfExp):
            ops = [self.expr(node.test), self.expr(node.body), self.expr(node.orelse)]
            return self.op(node, "ifexp", ops, target)
        self.opaque(node, type(node).__name__)
        x = target if target is not None else self.temp(node)
        self.define(x, line)
        return x if target is not None else self.read(x, line)

    def call(self, node: ast.Call, target: str | None) -> str:
        if any(isinstance(a, ast.Starred) for a in node.args) or any(
            k.arg is None for k in node.keywords
        ):
            self.opaque(node, "call with * or ** arguments")
        args = [a for a in node.args if not isinstance(a, ast.Starred)]
        kws = [k for k in node.keywords if k.arg is not None]
        operands: list[str] = []
        receiver: str | None = None
        if isinstance(node.func, ast.Name):
            name = node.func.id
        elif isinstance(node.func, ast.Attribute):
            name = "." + node.func.attr + "()"  # ".attr" alone is the attribute's value
            operands.append(self.expr(node.func.value))
            if isinstance(node.func.value, ast.Name) and node.func.attr in MUTATORS:
                receiver = node.func.value.id
        else:
            name = "call"
            operands.append(self.expr(node.func))
        operands += [self.expr(a) for a in args] + [self.expr(k.value) for k in kws]
        if kws:
            name += "(" + ",".join(str(k.arg) for k in kws) + ")"
        if receiver is None:
            return self.op(node, name, operands, target)
        result = self.op(node, name, operands, None)
        # The receiver's new value is a function of the call (old receiver and arguments).
        self.emit("unaryFun", name + "!", result, self.v, self.line)
        self.emit("unaryFunDef", receiver, name + "!", result, self.v, self.line)
        self.emit("defWithExpr", receiver, self.v, self.line)
        self.define(receiver, self.line)
        if receiver in self.params:
            self.mutated.add(receiver)
        if target is not None:
            self.emit("flow", result, self.v, self.line, target, self.v, self.line)
            self.define(target, self.line)
            return target
        return result

    # --- statements -------------------------------------------------------------------------

    @contextmanager
    def under(self, cond: str, choice: str, line: int) -> Iterator[None]:
        saved = self.path
        self.path = (*saved, (cond, choice, line))
        try:
            yield
        finally:
            self.path = saved

    def condition(self, test: ast.expr) -> str:
        simple = isinstance(test, ast.Name) or (
            isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not)
            and isinstance(test.operand, ast.Name)
        )
        if not simple:
            self.emit("condWithExpr", self.v, self.line)
        return self.expr(test)

    def block(self, body: list[ast.stmt]) -> Path:
        """Describe ``body``; the path condition at its end (with its early exits')."""
        saved_path, saved_precise = self.path, self.precise
        for stmt in body:
            if self.state is None:
                break  # unreachable
            self.statement(stmt)
        end = self.path
        self.path, self.precise = saved_path, saved_precise
        return end

    def statement(self, stmt: ast.stmt) -> None:
        self.line = line = stmt.lineno
        precise = self.precise
        self.stmt_opaque = False
        self._statement(stmt)
        compound = isinstance(stmt, ast.If | ast.While | ast.For)
        # A compound statement's own line (its condition) is described even when its body
        # is not; a simple statement only when nothing in it was opaque.
        if precise and (compound or not self.stmt_opaque):
            self.emit("stmt", self.v, line)

    def _statement(self, stmt: ast.stmt) -> None:
        line = stmt.lineno
        if isinstance(stmt, ast.Assign | ast.AnnAssign) and stmt.value is not None:
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            if len(targets) == 1 and isinstance(targets[0], ast.Name):
                self.expr(stmt.value, targets[0].id)
                return
            value = self.expr(stmt.value)
            for t in targets:
                self.store(t, value)
        elif isinstance(stmt, ast.AugAssign):
            op = _BINOPS[type(stmt.op)]
            if isinstance(stmt.target, ast.Name):
                self.op(stmt, op + "=", [self.read(stmt.target.id, line), self.expr(stmt.value)],
                        stmt.target.id)
            else:
                load = ast.fix_missing_locations(ast.copy_location(
                    ast.BinOp(_as_load(stmt.target), stmt.op, stmt.value), stmt))
                self.store(stmt.target, self.expr(load))
        elif isinstance(stmt, ast.Expr):
            result = self.expr(stmt.value)
            call = stmt.value
            known = isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and (
                call.func.attr in MUTATORS  # changes its receiver only
            )
            if isinstance(call, ast.Call) and not known:
                self.effects(call, result)
        elif isinstance(stmt, ast.Return):
            if stmt.value is None:
                self.expr(ast.Constant(None), RET)
            else:
                self.expr(stmt.value, RET)
            self.emit("exit", self.v, line)
            self.flow.ret_defs.add(line)
            self.flow.returns.append(self.state or {})
            self.state = None
        elif isinstance(stmt, ast.Raise):
            exc = stmt.exc if stmt.exc is not None else ast.Constant("re-raise")
            self.op(stmt, "raise", [self.expr(exc)], RAISE)
            self.emit("exit", self.v, line)
            self.flow.raise_defs.add(line)
            self.flow.returns.append(self.state or {})
            self.state = None
        elif isinstance(stmt, ast.Assert):
            cond = self.condition(stmt.test)
            with self.under(cond, "false", line):
                self.op(stmt, "raise", [self.constant("AssertionError", line)], RAISE)
            self.flow.raise_defs.add(line)
            self.flow.returns.append(self.state or {})
            self.path = (*self.path, (cond, "true", line))
        elif isinstance(stmt, ast.If):
            self.if_(stmt)
        elif isinstance(stmt, ast.While | ast.For):
            self.loop(stmt)
        elif isinstance(stmt, ast.Pass):
            pass
        elif isinstance(stmt, ast.Break | ast.Continue):
            target = self.flow.breaks if isinstance(stmt, ast.Break) else self.flow.continues
            target.append(self.state or {})
            self.state = None
        else:
            # Not described, and its definitions unknown: nothing after it is precise.
            self.opaque(stmt, type(stmt).__name__)
            self.precise = False

    def effects(self, call: ast.Call, result: str) -> None:
        """A call made for its effect may change the objects passed to it: each one named
        is redefined as a function of the call."""
        names = [a.id for a in [*call.args, *(k.value for k in call.keywords)]
                 if isinstance(a, ast.Name)]
        for name in dict.fromkeys(names):
            if name in (self.state or {}) or name in self.params:
                self.emit("unaryFun", "effect!", result, self.v, self.line)
                self.emit("unaryFunDef", name, "effect!", result, self.v, self.line)
                self.emit("defWithExpr", name, self.v, self.line)
                self.define(name, self.line)
                if name in self.params:
                    self.mutated.add(name)

    def store(self, target: ast.expr, value: str) -> None:
        line = self.line
        if isinstance(target, ast.Name):
            self.emit("flow", value, self.v, line, target.id, self.v, line)
            self.define(target.id, line)
        elif isinstance(target, ast.Tuple | ast.List) and not any(
            isinstance(e, ast.Starred) for e in target.elts
        ):
            for i, elt in enumerate(target.elts):
                index = self.constant(str(i), line)
                self.store(elt, self.op(elt, "[]", [value, index], None))
        elif isinstance(target, ast.Attribute | ast.Subscript) and isinstance(
            target.value, ast.Name
        ):
            obj = target.value.id
            if isinstance(target, ast.Attribute):
                op, operands = "." + target.attr + "=", [self.read(obj, line), value]
            else:
                key = self.expr(target.slice)
                op, operands = "[]=", [self.read(obj, line), key, value]
            self.op(target, op, operands, obj)
            if obj in self.params:
                self.mutated.add(obj)
        else:
            self.opaque(target, "assignment target " + type(target).__name__)
            self.precise = False  # what it defines is unknown

    def if_(self, stmt: ast.If) -> None:
        line = stmt.lineno
        cond = self.condition(stmt.test)
        start = self.state
        ends_before = len(self.flow.returns) + len(self.flow.breaks) + len(self.flow.continues)
        with self.under(cond, "true", line):
            end_true = self.block(stmt.body)
        out_true = self.state
        self.state = start
        self.line = line
        with self.under(cond, "false", line):
            end_false = self.block(stmt.orelse)
        out_false = self.state
        ends_after = len(self.flow.returns) + len(self.flow.breaks) + len(self.flow.continues)
        # One branch always leaves: what follows runs on the other branch's path.
        if out_true is None and out_false is not None:
            self.path = end_false
        elif out_false is None and out_true is not None:
            self.path = end_true
        elif ends_after != ends_before and out_true is not None and out_false is not None:
            # An exit deeper inside: what follows runs on a condition the facts cannot say.
            self.precise = False
        self.state = _join(out_true, out_false)

    def loop(self, stmt: ast.While | ast.For) -> None:
        line = stmt.lineno
        saved_flow = self.flow
        loop_iter = self.expr(stmt.iter) if isinstance(stmt, ast.For) else ""
        entry_state = self.state
        head: State | None = entry_state
        inner = _Flow()
        for _ in range(50):  # reaching definitions grow monotonically: a fixpoint
            self.state = head
            self.line = line
            self.flow = _Flow()
            if isinstance(stmt, ast.While):
                cond = self.condition(stmt.test)
            else:
                cond = self.op(stmt, "hasnext", [self.read(loop_iter, line)], None)
            with self.under(cond, "true", line):
                if isinstance(stmt, ast.For):
                    nxt = self.op(stmt.target, "next", [self.read(loop_iter, line)], None)
                    self.store(stmt.target, nxt)
                self.block(stmt.body)
            inner = self.flow
            new_head = _join(entry_state, self.state, *inner.continues)
            if new_head == head:
                break
            head = new_head
        self.flow = saved_flow
        self.flow.returns += inner.returns
        self.flow.ret_defs |= inner.ret_defs
        self.flow.raise_defs |= inner.raise_defs
        if inner.breaks or inner.continues or stmt.orelse:
            self.precise = False  # the exit condition is not a single branch any more
        self.state = head
        self.line = line
        if stmt.orelse:
            with self.under(cond, "false", line):
                self.block(stmt.orelse)
        self.state = _join(self.state, *inner.breaks)

    # --- the whole function -------------------------------------------------------------------

    def run(self) -> FactSet:
        fn = self.fn
        entry = fn.lineno
        self.emit("entry", fn.name, self.v, entry)
        a = fn.args
        for arg in [*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg]:
            if arg is not None:
                self.params.append(arg.arg)
                self.emit("def", arg.arg, self.v, entry)
                self.state = {**(self.state or {}), arg.arg: frozenset({entry})}
        self.block(fn.body)
        end = fn.end_lineno or entry
        if self.state is not None:  # falls off the end: returns None
            self.line = end
            self.expr(ast.Constant(None), RET)
            self.flow.ret_defs.add(end)
            self.flow.returns.append(self.state)
        self.emit("exit", self.v, end)
        finals = _join(*self.flow.returns) or {}
        for var, defs in ((RET, self.flow.ret_defs), (RAISE, self.flow.raise_defs)):
            if defs:
                self.emit("watchVar", var, self.v, end)
                self.emit("use", var, self.v, end)
                for ld in defs:
                    self.emit("flow", var, self.v, ld, var, self.v, end)
        for p in sorted(self.mutated):
            self.emit("watchVar", p, self.v, end)
            self.emit("use", p, self.v, end)
            for ld in finals.get(p, frozenset({entry})):
                self.emit("flow", p, self.v, ld, p, self.v, end)
        return FactSet(self.facts)


def _as_load(node: ast.expr) -> ast.expr:
    copy = ast.parse(ast.unparse(node), mode="eval").body
    return ast.copy_location(copy, node)
