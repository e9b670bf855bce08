"""Random programs in the subset of Python that the Z3 model covers, with inputs to run.

``generate(seed, index)`` writes one function ``f`` with annotated parameters: straight-line
code, ``if``/``elif``/``else``, early returns, ``for`` over ranges, lists, strings and
``enumerate``, ``while`` with a bounded counter, ``break``/``continue``, comprehensions,
list methods, indexing and slicing, ``raise`` and ``assert``. Expressions are built by
type, so most programs stay inside the model, with a few ill-typed operations mixed in on
purpose (Python raises ``TypeError`` there, and the model must say so too).
``inputs(program, seed, k)`` draws argument tuples: the edge values of each declared type
(including ``True`` where ``int`` is declared and ``int`` where ``float`` is), then random
draws. The same seed and index always give the same program and inputs.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from dataclasses import dataclass, field

# The parameter types drawn, with their weights.
PARAM_TYPES = (
    ("int", 6),
    ("bool", 1),
    ("float", 2),
    ("str", 3),
    ("list[int]", 4),
    ("list[str]", 1),
    ("tuple[int, ...]", 1),
    ("tuple[int, int]", 1),
    ("list[float]", 1),
    ("int | None", 1),
)
LIST_TYPES = ("list[int]", "list[str]", "list[float]")
SEQ_TYPES = (*LIST_TYPES, "tuple[int, ...]", "str")
INT_SEQS = ("list[int]", "tuple[int, ...]")
SCALARS = ("int", "str", "float", "bool")
NUMS = ("float", "int")
IN = ("in", "not in")
IS = ("None", "not None")
EQ = ("==", "!=")
STEPS = ("-1", "-2", "2")
LIST_STR = "['q']"
EXCEPTIONS = ("ValueError", "TypeError", "IndexError", "ZeroDivisionError", "KeyError")
INT_LITERALS = ("0", "1", "-1", "2", "3", "5", "7", "10", "-3", "100", "100000000000000000000")
FLOAT_LITERALS = ("0.5", "-0.0", "0.0", "1.5", "-2.25", "0.1", "1e308", "1e-300", "3.0")
STR_LITERALS = (
    "''", "'a'", "'b'", "'ab'", "'ba'", "'abc'", "'é'", "'\\U0001f600'", "'a\\U0001f600'",
    "'\\\\u{41}'", "'\\\\'", "'A'", "' '", "'\\x00'",
)  # fmt: skip


@dataclass(frozen=True)
class Program:
    """One generated function: its source, name and parameter annotations."""

    source: str
    name: str
    params: tuple[tuple[str, str], ...]  # (name, annotation text)


@dataclass
class _Scope:
    """What the generator knows while writing a body: names and their types."""

    vars: dict[str, str]
    helpers: dict[str, tuple[tuple[str, ...], int, str]] = field(default_factory=dict)
    loop_depth: int = 0
    in_loop: bool = False
    counter: list[int] = field(default_factory=lambda: [0])
    frozen: frozenset[str] = frozenset()  # lists being iterated: mutating them is unmodelled

    def fresh(self, base: str) -> str:
        self.counter[0] += 1
        return f"{base}{self.counter[0]}"

    def of(self, *types: str) -> list[str]:
        return [n for n, t in self.vars.items() if t in types]

    def mutable(self, *types: str) -> list[str]:
        """Names that may be rebound or mutated: not constants, not lists being iterated."""
        return [n for n in self.of(*types) if n not in self.frozen and not n.startswith("K")]


class _Writer:
    """Writes one program; every choice comes from ``rng``."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.lines: list[str] = []
        self.statements = 0
        self.yields: str | None = None  # the item type, when the function is a generator

    # -- choices ------------------------------------------------------------------------

    def chance(self, p: float) -> bool:
        return self.rng.random() < p

    def pick(self, options: tuple[str, ...] | list[str]) -> str:
        return self.rng.choice(list(options))

    def weighted(self, options: list[tuple[Callable[[], str], float]]) -> str:
        fns = [f for f, _ in options]
        weights = [w for _, w in options]
        return self.rng.choices(fns, weights)[0]()

    # -- expressions, by type -----------------------------------------------------------

    def expr(self, t: str, s: _Scope, depth: int = 0) -> str:
        text = self._expr(t, s, depth)
        if depth > 0 and " " in text and not text.startswith(("(", "[")):
            return f"({text})"
        return text

    def _expr(self, t: str, s: _Scope, depth: int) -> str:
        if depth >= 3:
            return self.atom(t, s)
        d = depth + 1
        calls = [n for n, (_, _, rt) in s.helpers.items() if rt == t]
        if calls and self.chance(0.12):
            name = self.pick(calls)
            params, required, _ = s.helpers[name]
            n_args = self.rng.randint(required, len(params))
            return f"{name}(" + ", ".join(self.expr(p, s, d) for p in params[:n_args]) + ")"
        if t == "int":
            return self.int_expr(s, d)
        if t == "bool":
            return self.bool_expr(s, d)
        if t == "float":
            return self.float_expr(s, d)
        if t == "str":
            return self.str_expr(s, d)
        if t in LIST_TYPES:
            return self.list_expr(t, s, d)
        if t == "tuple[int, ...]":
            return self.weighted([
                (lambda: self.atom(t, s), 3),
                (lambda: f"tuple({self.expr('list[int]', s, d)})", 1),
                (lambda: f"({self.expr('int', s, d)}, {self.expr('int', s, d)})", 1),
            ])  # fmt: skip
        if t == "tuple[int, int]":
            return f"({self.expr('int', s, d)}, {self.expr('int', s, d)})"
        if t == "int | None":
            return self.weighted([
                (lambda: self.atom(t, s), 3),
                (lambda: "None", 1),
                (lambda: self.expr("int", s, d), 1),
            ])  # fmt: skip
        return self.atom(t, s)

    def atom(self, t: str, s: _Scope) -> str:
        names = s.of(t)
        if names and self.chance(0.75):
            return self.pick(names)
        if t == "int":
            return self.pick(INT_LITERALS)
        if t == "bool":
            return self.pick(("True", "False"))
        if t == "float":
            return self.pick(FLOAT_LITERALS)
        if t == "str":
            return self.pick(STR_LITERALS)
        if t == "list[int]":
            return self.literal_list(INT_LITERALS[:8])
        if t == "list[str]":
            return self.literal_list(STR_LITERALS[:6])
        if t == "list[float]":
            return self.literal_list(FLOAT_LITERALS)
        if t == "tuple[int, ...]":
            return self.pick(("()", "(1,)", "(0, 2)", "(3, -1, 3)"))
        if t == "tuple[int, int]":
            return f"({self.pick(INT_LITERALS[:8])}, {self.pick(INT_LITERALS[:8])})"
        if t == "int | None":
            return self.pick(("None", "0", "4"))
        raise AssertionError(t)

    def literal_list(self, items: tuple[str, ...]) -> str:
        return "[" + ", ".join(self.pick(items) for _ in range(self.rng.randint(0, 3))) + "]"

    def name_of(self, s: _Scope, types: tuple[str, ...], default: str) -> str:
        """A variable of one of ``types``, or ``default`` when there is none."""
        return self.pick(s.of(*types) or [default])

    def seq_of(self, elem: str, s: _Scope) -> str | None:
        """A name or literal of a sequence whose items are ``elem``, for iteration."""
        choices = [n for n, t in s.vars.items() if _elem(t) == elem]
        if choices and self.chance(0.8):
            return self.pick(choices)
        return None

    def int_expr(self, s: _Scope, d: int) -> str:
        popable = s.mutable("list[int]")
        def e(t: str = "int") -> str:
            return self.expr(t, s, d)
        def seq() -> str:
            return self.pick([n for n, t in s.vars.items() if t in SEQ_TYPES] or ["'ab'"])
        def ints() -> str:
            return self.pick(s.of("list[int]", "tuple[int, ...]") or ["[1, 2]"])
        def lists() -> str:
            return self.pick(s.of("list[int]") or ["[0, 1]"])
        return self.weighted([
            (lambda: self.atom("int", s), 6),
            (lambda: f"{e()} {self.pick(('+', '-', '*'))} {e()}", 5),
            (lambda: f"{e()} {self.pick(('//', '%'))} {e()}", 2),
            (lambda: f"-{self.atom('int', s)}", 1),
            (lambda: f"abs({e()})", 1),
            (lambda: f"len({seq()})", 3),
            (lambda: f"{self.pick(('min', 'max'))}({e()}, {e()})", 2),
            (lambda: f"sum({ints()})", 1),
            (lambda: f"{self.pick(('min', 'max'))}({ints()})", 1),
            (lambda: f"{ints()}[{e()}]", 2),
            (lambda: f"{lists()}.{self.pick(('index', 'count'))}({e()})", 1),
            (lambda: f"({e()} if {e('bool')} else {e()})", 2),
            (lambda: f"{e()} ** {self.pick(('0', '1', '2', '3'))}", 1),
            (lambda: f"{self.atom('bool', s)} + {e()}", 1),
            (lambda: f"({e()} or {e()})", 1),
            (lambda: f"sum([{self.comp_body('int', s, d)}])", 1),
            (lambda: f"int({e('bool')})", 0.5),
            (lambda: f"len(range({e()}, {e()}, {self.pick(('1', '2', '-1', '-3'))}))", 0.5),
            (lambda: f"{self.pick(s.of('tuple[int, int]') or ['(4, 5)'])}[{e()}]", 1),
            (lambda: self.optional_int(s, d), 1 if s.of("int | None") else 0),
            # An expression with an effect: evaluated once, in Python's order.
            (lambda: f"{self.pick(s.mutable('list[int]'))}.pop()", 0.7 * bool(popable)),
        ])  # fmt: skip

    def optional_int(self, s: _Scope, d: int) -> str:
        opt = self.pick(s.of("int | None"))
        return self.pick((
            f"({opt} or {self.expr('int', s, d)})",
            f"({opt} if {opt} is not None else {self.expr('int', s, d)})",
            f"{opt} + {self.expr('int', s, d)}",
        ))  # fmt: skip

    def bool_expr(self, s: _Scope, d: int) -> str:
        def e(t: str) -> str:
            return self.expr(t, s, d)
        def num() -> str:
            return self.pick(("int", "int", "float", "bool"))
        def cmp() -> str:
            return self.pick(("<", "<=", ">", ">=", "==", "!="))
        return self.weighted([
            (lambda: self.atom("bool", s), 3),
            (lambda: f"{e(num())} {cmp()} {e(num())}", 6),
            (lambda: f"{e('int')} {cmp()} {e('int')} {cmp()} {e('int')}", 2),
            (lambda: f"{e('str')} {cmp()} {e('str')}", 2),
            (lambda: f"{e('bool')} {self.pick(('and', 'or'))} {e('bool')}", 3),
            (lambda: f"not {e('bool')}", 2),
            (lambda: f"{e('int')} in {self.name_of(s, INT_SEQS, '[1, 3]')}", 2),
            (lambda: f"{e('str')} {self.pick(IN)} {e(self.pick(('str', 'list[str]')))}", 2),
            (lambda: f"{self.pick(('any', 'all'))}({self.name_of(s, ('list[int]',), '[0]')})", 1),
            (lambda: f"{self.name_of(s, ('int | None',), 'None')} is {self.pick(IS)}", 1),
            (lambda: f"bool({e(self.pick(('int', 'str', 'list[int]', 'float')))})", 1),
            (lambda: f"{e('tuple[int, int]')} {self.pick(('==', '!='))} {e('tuple[int, int]')}", 1),
            (lambda: f"{e('int')} in {e('tuple[int, int]')}", 0.5),
            (lambda: f"{e('list[int]')} {self.pick(('==', '!='))} {e('list[int]')}", 1),
            (lambda: f"{self.mixed(s, d)} {self.pick(EQ)} {e(self.pick(('int', 'str')))}", 1),
            (lambda: f"bool({self.mixed(s, d)})", 0.5),
        ])  # fmt: skip

    def mixed(self, s: _Scope, d: int) -> str:
        """A value whose type depends on the path (the model merges it into a union)."""
        names = s.of("mixed")
        if names and self.chance(0.6):
            return self.pick(names)
        a = self.expr(self.pick(("int", "bool", "float")), s, d)
        b = self.expr(self.pick(("str", "int", "float", "list[int]")), s, d)
        return self.pick((
            f"({a} or {b})", f"({a} and {b})", f"({a} if {self.expr('bool', s, d)} else {b})",
            f"max({a}, {self.expr('int', s, d)})",
        ))  # fmt: skip

    def float_expr(self, s: _Scope, d: int) -> str:
        def e(t: str = "float") -> str:
            return self.expr(t, s, d)
        return self.weighted([
            (lambda: self.atom("float", s), 5),
            (lambda: f"{e()} {self.pick(('+', '-', '*', '/'))} {e(self.pick(NUMS))}", 5),
            (lambda: f"{e('int')} / {e('int')}", 2),
            (lambda: f"-{self.atom('float', s)}", 1),
            (lambda: f"abs({e()})", 1),
            (lambda: f"float({e('int')})", 1),
            (lambda: f"{self.pick(('min', 'max'))}({e()}, {e(self.pick(('float', 'int')))})", 2),
            (lambda: f"({e()} if {e('bool')} else {e()})", 1),
        ])  # fmt: skip

    def str_expr(self, s: _Scope, d: int) -> str:
        def e(t: str = "str") -> str:
            return self.expr(t, s, d)
        def strs() -> str:
            return self.pick(s.of("str") or ["'xyz'"])
        def bound() -> str:
            return self.pick(("", self.expr("int", s, d)))
        return self.weighted([
            (lambda: self.atom("str", s), 5),
            (lambda: f"{e()} + {e()}", 3),
            (lambda: f"{strs()}[{e('int')}]", 2),
            (lambda: f"{strs()}[{bound()}:{bound()}]", 2),
            (lambda: f"({e()} if {e('bool')} else {e()})", 1),
            (lambda: f"{self.pick(('min', 'max'))}({e()}, {e()})", 1),
            (lambda: f"{self.pick(s.of('list[str]') or [LIST_STR])}[{e('int')}]", 1),
            (lambda: f"({e()} or {e()})", 1),
        ])  # fmt: skip

    def list_expr(self, t: str, s: _Scope, d: int) -> str:
        elem = _elem(t)
        assert elem is not None
        def e() -> str:
            return self.expr(t, s, d)
        def same() -> str:
            return self.pick(s.of(t) or [self.atom(t, s)])
        def bound() -> str:
            return self.pick(("", self.expr("int", s, d)))
        return self.weighted([
            (lambda: self.atom(t, s), 5),
            (lambda: f"{e()} + {e()}", 2),
            (lambda: f"{same()}[{bound()}:{bound()}]", 2),
            (lambda: f"[{self.comp_body(elem, s, d)}]", 2),
            (lambda: f"list({same()})", 1),
            (lambda: f"[{self.expr(elem, s, d)}, {self.expr(elem, s, d)}]", 1),
            (lambda: f"({e()} if {self.expr('bool', s, d)} else {e()})", 1),
        ])  # fmt: skip

    def comp_body(self, elem: str, s: _Scope, d: int) -> str:
        """``expr for x in source [if cond]``: a comprehension yielding ``elem`` items."""
        source_t = self.pick(("int", "int", "str", elem))
        var = s.fresh("c")
        if source_t == "int" and self.chance(0.5):
            source = f"range({self.pick(('3', '5', '0'))})"
        else:
            source = self.seq_of(source_t, s) or {
                "int": "[1, 0, 2]", "str": "'abc'", "float": "[0.5, -1.5]"
            }.get(source_t, "[1, 2]")  # fmt: skip
        inner = _Scope(dict(s.vars), s.helpers, s.loop_depth, s.in_loop, s.counter, s.frozen)
        inner.vars[var] = source_t
        body = self.expr(elem, inner, d + 1)
        cond = f" if {self.expr('bool', inner, d + 1)}" if self.chance(0.4) else ""
        return f"{body} for {var} in {source}{cond}"

    # -- statements ---------------------------------------------------------------------

    def emit(self, indent: int, text: str) -> None:
        self.lines.append("    " * indent + text)

    def block(self, s: _Scope, indent: int, n: int) -> None:
        for _ in range(n):
            self.statement(s, indent)

    def statement(self, s: _Scope, indent: int) -> None:
        self.statements += 1
        nested = indent < 3 and self.statements < 18
        lists = s.mutable(*LIST_TYPES)
        options: list[tuple[Callable[[], None], float]] = [
            (lambda: self.assign(s, indent), 6),
            (lambda: self.aug_assign(s, indent), 2),
            (lambda: self.guarded_raise(s, indent), 1),
            (lambda: self.emit(indent, f"assert {self.expr('bool', s)}"), 0.5),
            # The message is evaluated only when the assertion fails, and may raise itself.
            (lambda: self.emit(indent, f"assert {self.expr('bool', s)}, {self.message(s)}"), 0.3),
        ]
        if lists:
            options.append((lambda: self.list_method(s, indent), 4))
            options.append((lambda: self.item_store(s, indent), 1))
        if nested:
            options.append((lambda: self.if_stmt(s, indent), 3))
            options.append((lambda: self.try_stmt(s, indent), 1))
            if s.loop_depth < 2:
                options.append((lambda: self.for_stmt(s, indent), 2))
                options.append((lambda: self.while_stmt(s, indent), 1))
        if s.in_loop:
            options.append((lambda: self.loop_jump(s, indent), 1.5))
        if self.yields is not None:
            options.append((lambda: self.yield_stmt(s, indent), 3))
        options.append((lambda: self.early_return(s, indent), 0.7))
        fns = [f for f, _ in options]
        self.rng.choices(fns, [w for _, w in options])[0]()

    def assign(self, s: _Scope, indent: int) -> None:
        t = self.pick([t for t, w in PARAM_TYPES for _ in range(w)])
        existing = s.mutable(t) if not s.in_loop else []  # no growth from one turn to the next
        name = self.pick(existing) if existing and self.chance(0.4) else s.fresh("v")
        if t in LIST_TYPES and self.chance(0.15):
            same = s.of(t)
            if same:  # an alias: mutations through either name must show in both
                self.emit(indent, f"{name} = {self.pick(same)}")
                s.vars[name] = t
                return
        if t == "int" and s.mutable("list[int]") and self.chance(0.2):
            self.emit(indent, f"{name} = {self.pick(s.mutable('list[int]'))}.pop()")
            s.vars[name] = t
            return
        if self.chance(0.08):
            name = s.fresh("m")
            self.emit(indent, f"{name} = {self.mixed(s, 0)}")
            s.vars[name] = "mixed"
            return
        if self.chance(0.05):
            a, b = s.fresh("u"), s.fresh("u")
            source = self.expr(self.pick(("tuple[int, int]", "list[int]")), s)
            self.emit(indent, f"{a}, {b} = {source}")
            s.vars[a], s.vars[b] = "int", "int"
            return
        if len(s.of("int", "str")) >= 2 and self.chance(0.1):
            a, b = s.fresh("u"), s.fresh("u")
            self.emit(indent, f"{a}, {b} = {self.expr('int', s)}, {self.expr('str', s)}")
            s.vars[a], s.vars[b] = "int", "str"
            return
        self.emit(indent, f"{name} = {self.expr(t, s)}")
        s.vars[name] = t

    def aug_assign(self, s: _Scope, indent: int) -> None:
        names = s.mutable("int", "float", "str", *LIST_TYPES)
        if not names:
            self.assign(s, indent)
            return
        name = self.pick(names)
        t = s.vars[name]
        # In a loop the operand is a literal, so values grow linearly, not exponentially.
        operand = s if not s.in_loop else _Scope({})
        if t == "int":
            op = self.pick(("+=", "-=", "*=", "//=", "%="))
            self.emit(indent, f"{name} {op} {self.expr('int', operand)}")
        elif t == "float":
            op = self.pick(("+=", "-=", "*=", "/="))
            self.emit(indent, f"{name} {op} {self.expr(self.pick(('float', 'int')), operand)}")
        elif t == "str":
            self.emit(indent, f"{name} += {self.expr('str', operand)}")
        else:
            other = self.pick((t, t, "tuple[int, ...]" if t == "list[int]" else "str"))
            self.emit(indent, f"{name} += {self.expr(other, operand)}")

    def list_method(self, s: _Scope, indent: int) -> None:
        name = self.pick(s.mutable(*LIST_TYPES))
        t = s.vars[name]
        elem = _elem(t)
        assert elem is not None
        operand = s if not s.in_loop else _Scope({})

        def item() -> str:
            return self.expr(elem, s)
        def i() -> str:
            return self.expr("int", s)
        call = self.weighted([
            (lambda: f"{name}.append({item()})", 4),
            (lambda: f"{name}.extend({self.expr(self.pick((t, t, 'str')), operand)})", 2),
            (lambda: f"{name}.pop()", 1),
            (lambda: f"{name}.pop({i()})", 1),
            (lambda: f"{name}.insert({i()}, {item()})", 2),
            (lambda: f"{name}.remove({item()})", 1),
            (lambda: f"{name}.clear()", 0.3),
        ])  # fmt: skip
        if self.chance(0.2):
            guard = self.expr("bool", s)
            self.emit(indent, f"if {guard}:")
            self.emit(indent + 1, call)
        else:
            self.emit(indent, call)

    def item_store(self, s: _Scope, indent: int) -> None:
        name = self.pick(s.mutable(*LIST_TYPES))
        elem = _elem(s.vars[name])
        assert elem is not None
        op = "+=" if self.chance(0.3) else "="
        self.emit(indent, f"{name}[{self.expr('int', s)}] {op} {self.expr(elem, s)}")

    def message(self, s: _Scope) -> str:
        return self.pick((f"1 // {self.expr('int', s)}", self.expr("str", s), "'x'"))

    def guarded_raise(self, s: _Scope, indent: int) -> None:
        self.emit(indent, f"if {self.expr('bool', s)}:")
        exc = self.pick(EXCEPTIONS)
        self.emit(indent + 1, f"raise {exc}" + ("('x')" if self.chance(0.5) else ""))

    def early_return(self, s: _Scope, indent: int) -> None:
        self.emit(indent, f"if {self.expr('bool', s)}:")
        self.emit(indent + 1, f"return {self.return_expr(s)}")

    def loop_jump(self, s: _Scope, indent: int) -> None:
        self.emit(indent, f"if {self.expr('bool', s)}:")
        self.emit(indent + 1, self.pick(("break", "continue")))

    def if_stmt(self, s: _Scope, indent: int) -> None:
        before = dict(s.vars)
        self.emit(indent, f"if {self.expr('bool', s)}:")
        self.block(s, indent + 1, self.rng.randint(1, 3))
        branches = [dict(s.vars)]
        for _ in range(self.rng.choice((0, 0, 1, 2))):
            s.vars = dict(before)
            self.emit(indent, f"elif {self.expr('bool', s)}:")
            self.block(s, indent + 1, self.rng.randint(1, 2))
            branches.append(dict(s.vars))
        if self.chance(0.5):
            s.vars = dict(before)
            self.emit(indent, "else:")
            self.block(s, indent + 1, self.rng.randint(1, 2))
            branches.append(dict(s.vars))
        else:
            branches.append(before)
        # Names bound on every branch with one type; now and then also one that may
        # be unbound, so reading it can raise UnboundLocalError.
        merged = {n: t for n, t in branches[0].items() if all(b.get(n) == t for b in branches)}
        if self.chance(0.1):
            extra = [n for n in branches[0] if n not in merged and n not in before]
            if extra:
                n = self.pick(extra)
                merged[n] = branches[0][n]
        s.vars = merged  # a name rebound with another type on some branch is forgotten

    def yield_stmt(self, s: _Scope, indent: int) -> None:
        t = self.yields
        assert t is not None
        sources = s.of(f"list[{t}]", "str") if t == "str" else s.of("list[int]", "tuple[int, ...]")
        if sources and self.chance(0.3):
            self.emit(indent, f"yield from {self.pick(sources)}")
        elif t == "str" and self.chance(0.2):
            self.emit(indent, f"yield from {self.expr('str', s)}")
        else:
            self.emit(indent, f"yield {self.expr(t, s)}")

    def try_stmt(self, s: _Scope, indent: int) -> None:
        """try/except/else/finally; handlers by class, a tuple, a base class or bare."""
        before = dict(s.vars)
        self.emit(indent, "try:")
        self.block(s, indent + 1, self.rng.randint(1, 3))
        branches = [dict(s.vars)]
        handlers = self.rng.choice((0, 1, 1, 2, 2, 3))
        for k in range(handlers):
            s.vars = dict(before)
            clause = self.weighted([
                (lambda: self.pick(EXCEPTIONS), 4),
                (lambda: self.pick(("LookupError", "ArithmeticError", "Exception")), 2),
                (lambda: f"({self.pick(EXCEPTIONS)}, {self.pick(EXCEPTIONS)})", 1),
                (lambda: "", 0.5),
            ])  # fmt: skip
            if not clause and k < handlers - 1:
                clause = "Exception"  # a bare except must be last
            self.emit(indent, f"except {clause}:" if clause else "except:")
            if self.chance(0.15):
                self.emit(indent + 1, "raise")
            else:
                self.block(s, indent + 1, self.rng.randint(1, 2))
            branches.append(dict(s.vars))
        if handlers and self.chance(0.3):
            s.vars = dict(branches[0])
            self.emit(indent, "else:")
            self.block(s, indent + 1, 1)
            branches[0] = dict(s.vars)
        if not handlers or self.chance(0.3):
            s.vars = {n: t for n, t in before.items() if all(b.get(n) == t for b in branches)}
            self.emit(indent, "finally:")
            self.block(s, indent + 1, self.rng.randint(1, 2))
            branches = [{**b, **s.vars} for b in branches]
        s.vars = {n: t for n, t in branches[0].items() if all(b.get(n) == t for b in branches)}

    def for_stmt(self, s: _Scope, indent: int) -> None:
        var = s.fresh("x")
        kind = self.pick(("range", "range", "seq", "seq", "str", "enumerate"))
        inner_vars = dict(s.vars)
        if kind == "range":
            args = self.weighted([
                (lambda: self.pick(("3", "5")), 2),
                (lambda: f"min({self.expr('int', s)}, 4)", 2),
                (lambda: self.expr("int", s), 1),
                (lambda: f"{self.expr('int', s)}, {self.pick(('3', '5', '-2'))}", 1),
                (lambda: f"{self.pick(('4', '0'))}, {self.expr('int', s)}, {self.pick(STEPS)}", 1),
            ])  # fmt: skip
            head = f"for {var} in range({args}):"
            inner_vars[var] = "int"
        elif kind in ("seq", "enumerate"):
            seqs = s.of(*LIST_TYPES, "tuple[int, ...]", "tuple[int, int]", "str")
            seq = self.pick(seqs) if seqs else "[2, 0, -1]"
            elem = _elem(s.vars.get(seq, "list[int]")) or "int"
            if kind == "enumerate":
                idx = s.fresh("i")
                head = f"for {idx}, {var} in enumerate({seq}):"
                inner_vars[idx] = "int"
            else:
                head = f"for {var} in {seq}:"
            inner_vars[var] = elem
        else:
            head = f"for {var} in {self.expr('str', s)}:"
            inner_vars[var] = "str"
        self.emit(indent, head)
        before = dict(s.vars)
        inner = _Scope(inner_vars, s.helpers, s.loop_depth + 1, True, s.counter, s.frozen)
        if kind in ("seq", "enumerate") and seq in s.vars:
            inner.frozen = s.frozen | {seq}
        self.block(inner, indent + 1, self.rng.randint(1, 3))
        self.loop_else(s, before, indent)
        s.vars = {n: t for n, t in before.items() if inner.vars.get(n) == t}

    def loop_else(self, s: _Scope, before: dict[str, str], indent: int) -> None:
        if self.chance(0.15):
            self.emit(indent, "else:")
            after = _Scope(dict(before), s.helpers, s.loop_depth, s.in_loop, s.counter, s.frozen)
            self.block(after, indent + 1, 1)

    def while_stmt(self, s: _Scope, indent: int) -> None:
        k = s.fresh("k")
        self.emit(indent, f"{k} = 0")
        limit = self.pick(("3", "4", "5"))
        cond = f" and {self.expr('bool', s)}" if self.chance(0.5) else ""
        self.emit(indent, f"while {k} < {limit}{cond}:")
        self.emit(indent + 1, f"{k} += 1")
        before = dict(s.vars)
        inner = _Scope(dict(s.vars), s.helpers, s.loop_depth + 1, True, s.counter, s.frozen)
        self.block(inner, indent + 1, self.rng.randint(1, 3))
        self.loop_else(s, before, indent)
        s.vars = {n: t for n, t in before.items() if inner.vars.get(n) == t}
        s.vars[k] = "int"

    def return_expr(self, s: _Scope) -> str:
        def other() -> str:
            return self.expr(self.pick(("str", "float", "list[int]")), s)
        def scalar() -> str:
            return self.expr(self.pick(SCALARS), s)
        return self.weighted([
            (lambda: self.expr(self.pick([t for t, _ in PARAM_TYPES]), s), 4),
            (lambda: f"({scalar()}, {scalar()})", 1),
            (lambda: f"{self.expr('int', s)} {self.pick(('and', 'or'))} {other()}", 1),
            (lambda: "None", 0.3),
            (lambda: self.mixed(s, 0), 1),
        ])  # fmt: skip


def _elem(t: str) -> str | None:
    return {
        "list[int]": "int", "list[str]": "str", "tuple[int, ...]": "int", "str": "str",
        "list[float]": "float", "tuple[int, int]": "int",
    }.get(t)  # fmt: skip


def generate(seed: int, index: int) -> Program:
    """Program number ``index`` of the run with ``seed`` (the same every time)."""
    rng = random.Random(f"program:{seed}:{index}")
    w = _Writer(rng)
    lines: list[str] = []
    constants: dict[str, str] = {}
    for n in range(rng.choice((0, 0, 1, 2))):
        t = rng.choice(("int", "str", "float", "tuple[int, int]"))
        name = f"K{n}"
        lines.append(f"{name} = {w.atom(t, _Scope({}))}")
        constants[name] = t
    helpers: dict[str, tuple[tuple[str, ...], int, str]] = {}
    if rng.random() < 0.3:
        # A helper of the same module: the model inlines it at each call.
        types = tuple(rng.choice(("int", "int", "str", "float")) for _ in range(rng.randint(1, 2)))
        ret = rng.choice(("int", "int", "str", "bool"))
        hp = [(f"p{k}", t) for k, t in enumerate(types)]
        required = len(hp) - (1 if len(hp) == 2 and rng.random() < 0.5 else 0)
        sig = ", ".join(
            f"{n}: {t}" + (f" = {w.atom(t, _Scope({}))}" if k >= required else "")
            for k, (n, t) in enumerate(hp)
        )
        lines.append(f"def g({sig}) -> {ret}:")
        hs = _Scope({**constants, **dict(hp)}, counter=[100])
        w.block(hs, 1, rng.randint(1, 3))
        w.emit(1, f"return {w.expr(ret, hs)}")
        lines += w.lines
        w.lines = []
        helpers["g"] = (types, required, ret)
    n_params = rng.choice((1, 2, 2, 3))
    types = tuple(
        rng.choices([t for t, _ in PARAM_TYPES], [wt for _, wt in PARAM_TYPES], k=n_params)
    )
    names = ["a", "b", "c"][:n_params]
    params = tuple(zip(names, types, strict=True))
    s = _Scope({**constants, **dict(params)}, helpers)
    w.statements = 0
    if rng.random() < 0.2:
        # A generator: what it yields is its behaviour (the value of `return` is not).
        w.yields = rng.choice(("int", "str"))
    w.block(s, 1, rng.randint(2, 6))
    w.emit(1, f"return {w.return_expr(s)}")
    header = "def f(" + ", ".join(f"{n}: {t}" for n, t in params) + "):"
    return Program("\n".join([*lines, header, *w.lines]) + "\n", "f", params)


# -- inputs -------------------------------------------------------------------------------

EDGE: dict[str, tuple[object, ...]] = {
    "int": (0, True, -1, 10**20, 1, 2**63, -3, False, 7, -(10**20), 2, 10**400),
    "bool": (True, False),
    "float": (
        0.0, 3, -0.0, math.nan, 1.0, True, math.inf, -1.5, 0.1, -math.inf, 2.5, 1e308,
        -1e308, 5e-324, 0,
    ),
    "str": (
        "", "\U0001f600", "a", "\\u{41}", "ab", "é", "ba", "abc", "a\U0001f600", "\\", "A",
        " ", "\x00", "\U000e0041",
    ),
    "list[int]": ([], [1, -1], [0], [3, 3], [2, 0, 5], [-1, 10**20]),
    "list[str]": ([], ["a"], ["", "b"], ["ab", "a", "ab"]),
    "list[float]": ([], [math.nan], [0.5, -0.0], [1e308, 1e308], [math.inf, -1.5, 0.0]),
    "tuple[int, ...]": ((), (1,), (0, 2, 2), (-3, 5)),
    "tuple[int, int]": ((0, 0), (1, -1), (3, 10**20)),
    "int | None": (None, 1, 0, True, -2),
}  # fmt: skip
_RANDOM_CHARS = "ab Aé\U0001f600\\z0"


def _draw(t: str, rng: random.Random) -> object:
    if rng.random() < 0.5:
        return rng.choice(EDGE[t])
    if t == "int":
        return rng.choice((rng.randint(-10, 10), rng.randint(-(10**30), 10**30)))
    if t == "bool":
        return rng.random() < 0.5
    if t == "float":
        wide = rng.uniform(-1e300, 1e300)
        return rng.choice((rng.uniform(-10, 10), float(rng.randint(-5, 5)), wide))
    if t == "str":
        return "".join(rng.choice(_RANDOM_CHARS) for _ in range(rng.randint(0, 4)))
    if t == "list[int]":
        return [rng.randint(-3, 5) for _ in range(rng.randint(0, 5))]
    if t == "list[str]":
        return [_draw("str", rng) for _ in range(rng.randint(0, 3))]
    if t == "list[float]":
        return [_draw("float", rng) for _ in range(rng.randint(0, 3))]
    if t == "tuple[int, ...]":
        return tuple(rng.randint(-3, 5) for _ in range(rng.randint(0, 4)))
    if t == "tuple[int, int]":
        return (rng.randint(-5, 5), rng.randint(-5, 5))
    if t == "int | None":
        return None if rng.random() < 0.3 else rng.randint(-5, 5)
    raise AssertionError(t)


def inputs(program: Program, seed: int, index: int, k: int) -> list[tuple[object, ...]]:
    """``k`` argument tuples: edge values first (one parameter at a time), then random."""
    rng = random.Random(f"inputs:{seed}:{index}")
    types = [t for _, t in program.params]
    out: list[tuple[object, ...]] = []
    base = tuple(EDGE[t][1 % len(EDGE[t])] for t in types)
    # Edge values one parameter at a time, the others at a plain value, round robin.
    for r in range(max(len(EDGE[t]) for t in types)):
        for n, t in enumerate(types):
            if r < len(EDGE[t]) and len(out) < (k + 1) // 2:
                out.append((*base[:n], EDGE[t][r], *base[n + 1:]))
    while len(out) < k:
        out.append(tuple(_draw(t, rng) for t in types))
    rng.shuffle(out)
    return out[:k]
