"""Python's truthiness, operators, comparisons and indexing over symbolic values.

A mixin of the executor: everything here evaluates an operation on values already
computed, raising Python's exceptions on the paths where Python would.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from typing import TYPE_CHECKING

import z3

from veribot.checks.lang.pytypes import (
    INT_OR_BOOL,
    BoolT,
    FloatT,
    IntT,
    ListT,
    PyType,
    StrT,
    TupleT,
)
from veribot.checks.lang.pyvalues import (
    FLOAT,
    RM,
    Fresh,
    SBool,
    SFloat,
    SInt,
    SIntB,
    SNone,
    SRange,
    SSeq,
    SStr,
    STuple,
    SUnion,
    Unsupported,
    V,
    alternatives,
    as_codes,
    as_int_or_bool,
    code_of_int,
    int_of,
    int_val,
    merge,
    merge_many,
    numbers_of_codes,
    term,
    wrap,
)

if TYPE_CHECKING:
    from veribot.checks.lang.pyexec import State

TRUE = z3.BoolVal(True)
FALSE = z3.BoolVal(False)
MUTATING_METHODS = {"append", "extend", "pop", "insert", "remove", "clear", "sort", "reverse"}
MAXSIZE = 2**63 - 1  # sys.maxsize on 64-bit CPython: the range of an index-sized integer
REPEAT_LIMIT = 16  # sequence repetition is unrolled up to this count
POW_BITS = 1 << 16  # constant powers are computed up to this size


class Operators:
    """Expression semantics of the executor (statements live in ``pyexec``)."""

    line: int
    fresh: Fresh
    # Lists whose value an enclosing expression has read and still holds (Python holds
    # the object, the model its contents then): mutating one of them is not modelled.
    held: list[int]

    def raise_if(
        self, cond: z3.BoolRef, exc: str, state: State, exc_term: z3.ExprRef | None = None
    ) -> None:
        raise NotImplementedError

    def ev(self, node: ast.expr, state: State) -> V:
        raise NotImplementedError

    def assuming(self, state: State, cond: z3.BoolRef) -> AbstractContextManager[None]:
        raise NotImplementedError

    def _new_origin(self) -> frozenset[int]:
        raise NotImplementedError

    @contextmanager
    def holding(self, *values: V) -> Iterator[None]:
        """Evaluate further operands while ``values`` are held by the expression."""
        origins = [o for v in values for o in _list_origins(v)]
        self.held.extend(origins)
        try:
            yield
        finally:
            del self.held[len(self.held) - len(origins):]

    def ev_all(self, nodes: Sequence[ast.expr], state: State, *held: V) -> list[V]:
        """Evaluate ``nodes`` left to right, each while the ones before it are held."""
        values: list[V] = []
        for node in nodes:
            with self.holding(*held, *values):
                values.append(self.ev(node, state))
        return values

    # -- truthiness and operators -----------------------------------------------------------

    def truthy(self, v: V, state: State) -> z3.BoolRef:
        if isinstance(v, SBool):
            return v.e
        if isinstance(v, SInt):
            return v.e != 0
        if isinstance(v, SIntB):
            return v.number() != 0
        if isinstance(v, SFloat):
            return z3.Not(z3.fpIsZero(v.e))
        if isinstance(v, SStr | SSeq):
            return z3.Length(v.e) > 0
        if isinstance(v, SNone):
            return FALSE
        if isinstance(v, STuple):
            return z3.BoolVal(bool(v.items))
        if isinstance(v, SRange):
            return v.length() > 0
        if isinstance(v, SUnion):
            return z3.Or([z3.And(g, self.truthy(a, state)) for g, a in v.alts])
        raise Unsupported(f"truth value of a {type(v).__name__}", self.line)

    def boolop(self, node: ast.BoolOp, state: State) -> V:
        result = self.ev(node.values[0], state)
        for operand in node.values[1:]:
            t = self.truthy(result, state)
            go_on = t if isinstance(node.op, ast.And) else z3.Not(t)
            with self.assuming(state, go_on):
                nxt = self.ev(operand, state)
            result = merge(go_on, nxt, result)
        return result

    def _as_int(self, v: V, state: State) -> z3.ArithRef:
        if isinstance(v, SInt):
            return v.e
        if isinstance(v, SBool):
            return z3.If(v.e, 1, 0)
        if isinstance(v, SIntB):
            return v.number()
        if isinstance(v, SUnion):
            result: z3.ArithRef = z3.IntVal(0)
            bad = []
            for g, a in v.alts:
                if isinstance(a, SInt | SBool | SIntB):
                    result = z3.If(g, self._as_int(a, state), result)
                else:
                    bad.append(g)
            if bad:
                self.raise_if(z3.Or(bad), "TypeError", state)
            return result
        self.raise_if(TRUE, "TypeError", state)
        return z3.IntVal(0)

    def binop(self, op: ast.operator, a: V, b: V, state: State) -> V:
        if isinstance(a, SUnion) or isinstance(b, SUnion):
            parts: list[tuple[z3.BoolRef, V]] = []
            for ga, va in alternatives(a):
                for gb, vb in alternatives(b):
                    g = z3.And(ga, gb)
                    with self.assuming(state, g):
                        parts.append((g, self.binop(op, va, vb, state)))
            return merge_many(parts[:-1], parts[-1][1])
        if isinstance(a, SInt | SBool | SIntB) and isinstance(b, SInt | SBool | SIntB):
            return self.int_op(op, self._as_int(a, state), self._as_int(b, state), state)
        if isinstance(a, NUMERIC) and isinstance(b, NUMERIC):
            return self.float_op(op, self.to_float(a, state), self.to_float(b, state), state)
        if isinstance(op, ast.Add):
            if isinstance(a, SStr) and isinstance(b, SStr):
                return SStr(z3.Concat(a.e, b.e))
            if isinstance(a, SSeq) and isinstance(b, SSeq) and a.kind == b.kind:
                a, b = promote(a, b)
                if a.elem != b.elem:
                    if is_empty_literal(a.e):
                        a = SSeq(a.kind, b.elem, z3.Empty(b.e.sort()), a.origin)
                    elif is_empty_literal(b.e):
                        b = SSeq(b.kind, a.elem, z3.Empty(a.e.sort()), b.origin)
                    else:
                        raise Unsupported("concatenating lists of different types", self.line)
                origin = self._new_origin() if a.kind == "list" else None
                return SSeq(a.kind, a.elem, z3.Concat(a.e, b.e), origin)
            if isinstance(a, STuple) and isinstance(b, STuple):
                return STuple(a.items + b.items)
            if (
                isinstance(a, STuple | SSeq)
                and isinstance(b, STuple | SSeq)
                and _kind(a) == _kind(b) == "tuple"
            ):
                return self.binop(op, self._as_seq(a), self._as_seq(b), state)
        if isinstance(op, ast.Mult) and isinstance(a, SSeq | SStr | STuple):
            return self.repeat(a, b, state)
        if isinstance(op, ast.Mult) and isinstance(b, SSeq | SStr | STuple):
            return self.repeat(b, a, state)
        if isinstance(op, ast.Mod) and isinstance(a, SStr):
            raise Unsupported("string formatting", self.line)
        self.raise_if(TRUE, "TypeError", state)
        return SNone()

    def repeat(self, seq: SSeq | SStr | STuple, count: V, state: State) -> V:
        """``seq * count``: a new sequence, ``count`` copies of ``seq`` (none if negative)."""
        if isinstance(count, SUnion):
            raise Unsupported("sequence repetition by a count of several types", self.line)
        if not isinstance(count, SInt | SBool | SIntB):
            self.raise_if(TRUE, "TypeError", state)  # can't multiply sequence by non-int
            return SNone()
        n_s = z3.simplify(self._as_int(count, state))
        if isinstance(count, SBool) and not z3.is_int_value(n_s):
            once = self.repeat(seq, SInt(z3.IntVal(1)), state)
            return merge(count.e, once, self.repeat(seq, SInt(z3.IntVal(0)), state))
        if isinstance(seq, STuple):
            empty = not seq.items
        else:
            empty = z3.simplify(z3.Length(seq.e) == 0).eq(TRUE)
        # A count that cannot fit an index-sized integer raises, even for an empty sequence.
        self.raise_if(z3.Or(n_s > MAXSIZE, n_s < -MAXSIZE - 1), "OverflowError", state)
        if not z3.is_int_value(n_s) and not empty:
            raise Unsupported("sequence repetition by a symbolic count", self.line)
        n = int_of(n_s) if z3.is_int_value(n_s) else 0
        if not -MAXSIZE - 1 <= n <= MAXSIZE:
            return SNone()
        if n > REPEAT_LIMIT and not empty:
            raise Unsupported("sequence repetition by a large count", self.line)
        copies = max(n, 0) if not empty else 0
        if isinstance(seq, STuple):
            for item in seq.items:
                self._escape(item)
            return STuple(seq.items * copies)
        e: z3.SeqRef = z3.Empty(seq.e.sort()) if copies == 0 else seq.e
        if copies > 1:
            e = z3.Concat(*([seq.e] * copies))
        if isinstance(seq, SStr):
            return SStr(e)
        origin = self._new_origin() if seq.kind == "list" else None
        return SSeq(seq.kind, seq.elem, e, origin)

    def _escape(self, value: V) -> None:
        raise NotImplementedError

    def _as_seq(self, v: STuple | SSeq) -> SSeq:
        if isinstance(v, SSeq):
            return v
        if not v.items:
            return SSeq("tuple", IntT(), z3.Empty(z3.SeqSort(z3.IntSort())))
        elem = common_elem_type(v.items, self.line)
        units = [z3.Unit(term(coerce_number(i, elem))) for i in v.items]
        return SSeq("tuple", elem, units[0] if len(units) == 1 else z3.Concat(*units))

    def int_op(self, op: ast.operator, x: z3.ArithRef, y: z3.ArithRef, state: State) -> V:
        if isinstance(op, ast.Add):
            return SInt(x + y)
        if isinstance(op, ast.Sub):
            return SInt(x - y)
        if isinstance(op, ast.Mult):
            return SInt(x * y)
        if isinstance(op, ast.FloorDiv | ast.Mod):
            self.raise_if(y == 0, "ZeroDivisionError", state)
            q = floor_div(x, y)
            return SInt(q if isinstance(op, ast.FloorDiv) else x - y * q)
        if isinstance(op, ast.Div):
            self.raise_if(y == 0, "ZeroDivisionError", state)
            r = z3.fpRealToFP(RM, z3.ToReal(x) / z3.ToReal(z3.If(y == 0, 1, y)), FLOAT)
            # 0 / -7 is -0.0 in Python; the exact quotient 0 rounds to +0.0.
            r = z3.If(z3.And(x == 0, y < 0), z3.fpMinusZero(FLOAT), r)
            self.raise_if(z3.fpIsInf(r), "OverflowError", state)
            return SFloat(r)
        if isinstance(op, ast.Pow):
            y_s = z3.simplify(y)
            x_s = z3.simplify(x)
            if z3.is_int_value(x_s) and z3.is_int_value(y_s) and int_of(y_s) >= 0:
                base, exponent = int_of(x_s), int_of(y_s)
                if abs(base) <= 1 or base.bit_length() * exponent <= POW_BITS:
                    return SInt(int_val(base**exponent))
            if z3.is_int_value(y_s) and 0 <= int_of(y_s) <= 8:
                result: z3.ArithRef = z3.IntVal(1)
                for _ in range(int_of(y_s)):
                    result = result * x
                return SInt(result)
            raise Unsupported("'**' with a symbolic or large exponent", self.line)
        raise Unsupported(f"the operator {type(op).__name__} on integers", self.line)

    def to_float(self, v: V, state: State) -> z3.FPRef:
        if isinstance(v, SFloat):
            return v.e
        r = z3.fpRealToFP(RM, z3.ToReal(self._as_int(v, state)), FLOAT)
        self.raise_if(z3.fpIsInf(r), "OverflowError", state)
        return r

    def float_op(self, op: ast.operator, x: z3.FPRef, y: z3.FPRef, state: State) -> V:
        if isinstance(op, ast.Add):
            return SFloat(z3.fpAdd(RM, x, y))
        if isinstance(op, ast.Sub):
            return SFloat(z3.fpSub(RM, x, y))
        if isinstance(op, ast.Mult):
            return SFloat(z3.fpMul(RM, x, y))
        if isinstance(op, ast.Div):
            self.raise_if(z3.fpIsZero(y), "ZeroDivisionError", state)
            return SFloat(z3.fpDiv(RM, x, y))
        raise Unsupported(f"the operator {type(op).__name__} on floats", self.line)

    def unaryop(self, op: ast.unaryop, v: V, state: State) -> V:
        if isinstance(op, ast.Not):
            return SBool(z3.Not(self.truthy(v, state)))
        if isinstance(v, SUnion):
            parts = []
            for g, a in v.alts:
                with self.assuming(state, g):
                    parts.append((g, self.unaryop(op, a, state)))
            return merge_many(parts[:-1], parts[-1][1])
        if isinstance(v, SInt | SBool | SIntB):
            x = self._as_int(v, state)
            if isinstance(op, ast.USub):
                return SInt(-x)
            if isinstance(op, ast.UAdd):
                return SInt(x)
        if isinstance(v, SFloat):
            if isinstance(op, ast.USub):
                return SFloat(z3.fpNeg(v.e))
            if isinstance(op, ast.UAdd):
                return v
        if isinstance(op, ast.USub | ast.UAdd):
            self.raise_if(TRUE, "TypeError", state)
            return SNone()
        raise Unsupported(f"the operator {type(op).__name__}", self.line)

    def compare(self, node: ast.Compare, state: State) -> V:
        left = self.ev(node.left, state)
        result: z3.BoolRef = TRUE
        for op, right_node in zip(node.ops, node.comparators, strict=True):
            with self.assuming(state, result), self.holding(left):
                right = self.ev(right_node, state)
                part = self.compare_op(op, left, right, state)
            result = z3.And(result, part)
            left = right
        return SBool(z3.simplify(result))

    def compare_op(self, op: ast.cmpop, a: V, b: V, state: State) -> z3.BoolRef:
        none_test = isinstance(op, ast.Is | ast.IsNot) and SNone in (type(a), type(b))
        if not none_test and (_holds_iterator(a) or _holds_iterator(b)):
            # `x in it` consumes it; `it == it` is True: neither is modelled.
            raise Unsupported("comparing an iterator or testing membership in it", self.line)
        if isinstance(op, ast.In | ast.NotIn):
            inside = self.contains(b, a, state)
            return inside if isinstance(op, ast.In) else z3.Not(inside)
        if isinstance(op, ast.Is | ast.IsNot):
            # Only None is modelled by identity: each pair of alternatives where one side
            # is None is decided (None is None; nothing else is None). A pair where
            # neither side is None (`x is y` with two Optional values that are both set)
            # is not modelled.
            same: list[z3.BoolRef] = []
            for ga, va in alternatives(a):
                for gb, vb in alternatives(b):
                    g = z3.simplify(z3.And(ga, gb))
                    if z3.is_false(g):
                        continue
                    a_none, b_none = isinstance(va, SNone), isinstance(vb, SNone)
                    if not (a_none or b_none):
                        raise Unsupported("'is' between values other than None", self.line)
                    if a_none and b_none:
                        same.append(g)
            is_same = z3.simplify(z3.Or(same)) if same else FALSE
            return is_same if isinstance(op, ast.Is) else z3.Not(is_same)
        if isinstance(a, SUnion) or isinstance(b, SUnion):
            parts = []
            for ga, va in alternatives(a):
                for gb, vb in alternatives(b):
                    g = z3.And(ga, gb)
                    with self.assuming(state, g):
                        parts.append(z3.And(g, self.compare_op(op, va, vb, state)))
            return z3.Or(parts)
        if isinstance(op, ast.Eq):
            return self.py_eq(a, b, state)
        if isinstance(op, ast.NotEq):
            return z3.Not(self.py_eq(a, b, state))
        return self.order(op, a, b, state)

    def py_eq(self, a: V, b: V, state: State) -> z3.BoolRef:
        """Python's ``==`` (not the behaviour equality: here 1 == 1.0 == True)."""
        if isinstance(a, SUnion) or isinstance(b, SUnion):
            return self.compare_op(ast.Eq(), a, b, state)
        if isinstance(a, SInt | SBool | SIntB) and isinstance(b, SInt | SBool | SIntB):
            if isinstance(a, SBool) and isinstance(b, SBool):
                return a.e == b.e
            return self._as_int(a, state) == self._as_int(b, state)
        if isinstance(a, NUMERIC) and isinstance(b, NUMERIC):
            return self._num_cmp(ast.Eq(), a, b, state)
        if isinstance(a, SStr) and isinstance(b, SStr):
            return a.e == b.e
        if isinstance(a, SNone) and isinstance(b, SNone):
            return TRUE
        if isinstance(a, STuple) and isinstance(b, STuple):
            # Item by item, each with ``is`` before ``==`` (so (nan,) == (nan,) may hold).
            if len(a.items) != len(b.items):
                return FALSE
            pairs = zip(a.items, b.items, strict=True)
            return z3.And([self.item_eq(x, y, state) for x, y in pairs] or [TRUE])
        if isinstance(a, SSeq | STuple) and isinstance(b, SSeq | STuple):
            if _kind(a) != _kind(b):
                return FALSE
            sa = self._as_seq(a) if isinstance(a, STuple) else a
            sb = self._as_seq(b) if isinstance(b, STuple) else b
            if is_empty_literal(sa.e) or is_empty_literal(sb.e):
                return z3.And(z3.Length(sa.e) == 0, z3.Length(sb.e) == 0)
            if sa.elem == sb.elem and isinstance(sa.elem, IntT | BoolT | StrT):
                return sa.e == sb.e
            if {sa.elem, sb.elem} <= {IntT(), INT_OR_BOOL}:
                # == compares numbers: [True] == [1].
                return numbers(sa) == numbers(sb)
            raise Unsupported(f"== between sequences of {sa.elem.text()}", self.line)
        if type(a) is type(b) and isinstance(a, SRange):
            raise Unsupported("== between ranges", self.line)
        return FALSE

    def item_eq(self, a: V, b: V, state: State) -> z3.BoolRef:
        """How containers compare items (``in``, ``==`` of tuples): ``a is b or a == b``.

        Identity matters only for a NaN, the one value not equal to itself. Whether two
        floats are the same object is known for the same value read twice, and for the
        parameters (each its own object, which may be another parameter's); elsewhere (an
        item read from a list, a computed float) it is not, and then both answers are
        possible, so a proof must hold for each.
        """
        if isinstance(a, SUnion) or isinstance(b, SUnion):
            parts = []
            for ga, va in alternatives(a):
                for gb, vb in alternatives(b):
                    g = z3.And(ga, gb)
                    with self.assuming(state, g):
                        parts.append(z3.And(g, self.item_eq(va, vb, state)))
            return z3.Or(parts)
        if isinstance(a, SFloat) and isinstance(b, SFloat):
            if a is b:
                same: z3.BoolRef = TRUE
            elif a.obj is not None and b.obj is not None:
                same = a.obj == b.obj
            else:
                same = z3.Bool(self.fresh.name("same_object"))
            both_nan = z3.And(z3.fpIsNaN(a.e), z3.fpIsNaN(b.e))
            return z3.Or(z3.fpEQ(a.e, b.e), z3.And(both_nan, same))
        return self.py_eq(a, b, state)

    def _num_cmp(self, op: ast.cmpop, a: V, b: V, state: State) -> z3.BoolRef:
        if isinstance(a, SFloat) and isinstance(b, SFloat):
            x, y = a.e, b.e
            table = {
                ast.Eq: z3.fpEQ, ast.Lt: z3.fpLT, ast.LtE: z3.fpLEQ,
                ast.Gt: z3.fpGT, ast.GtE: z3.fpGEQ,
            }  # fmt: skip
            return table[type(op)](x, y)
        if isinstance(a, SFloat):
            flipped = {ast.Lt: ast.Gt, ast.LtE: ast.GtE, ast.Gt: ast.Lt, ast.GtE: ast.LtE}
            op2 = flipped.get(type(op), type(op))()
            return self._num_cmp(op2, b, a, state)
        assert isinstance(b, SFloat)
        # Exact comparison of an integer with a float, as Python does it.
        i = z3.ToReal(self._as_int(a, state))
        f = b.e
        finite = z3.And(z3.Not(z3.fpIsNaN(f)), z3.Not(z3.fpIsInf(f)))
        r = z3.fpToReal(f)
        exact = {
            ast.Eq: i == r, ast.Lt: i < r, ast.LtE: i <= r, ast.Gt: i > r, ast.GtE: i >= r,
        }[type(op)]  # fmt: skip
        pos_inf = z3.And(z3.fpIsInf(f), z3.fpIsPositive(f))
        neg_inf = z3.And(z3.fpIsInf(f), z3.fpIsNegative(f))
        if isinstance(op, ast.Eq):
            return z3.And(finite, exact)
        if isinstance(op, ast.Lt | ast.LtE):
            return z3.Or(z3.And(finite, exact), pos_inf)
        return z3.Or(z3.And(finite, exact), neg_inf)

    def order(self, op: ast.cmpop, a: V, b: V, state: State) -> z3.BoolRef:
        if isinstance(a, SInt | SBool | SIntB) and isinstance(b, SInt | SBool | SIntB):
            x, y = self._as_int(a, state), self._as_int(b, state)
            return {ast.Lt: x < y, ast.LtE: x <= y, ast.Gt: x > y, ast.GtE: x >= y}[type(op)]
        if isinstance(a, NUMERIC) and isinstance(b, NUMERIC):
            return self._num_cmp(op, a, b, state)
        if isinstance(a, SStr) and isinstance(b, SStr):
            x_s, y_s = a.e, b.e
            return {
                ast.Lt: x_s < y_s, ast.LtE: x_s <= y_s, ast.Gt: y_s < x_s, ast.GtE: y_s <= x_s,
            }[type(op)]  # fmt: skip
        if isinstance(a, SSeq | STuple) and isinstance(b, SSeq | STuple) and _kind(a) == _kind(b):
            raise Unsupported("ordering comparison of sequences", self.line)
        self.raise_if(TRUE, "TypeError", state)
        return FALSE

    def contains(self, container: V, item: V, state: State) -> z3.BoolRef:
        if isinstance(container, SUnion):
            parts = []
            for g, c in container.alts:
                with self.assuming(state, g):
                    parts.append(z3.And(g, self.contains(c, item, state)))
            return z3.Or(parts)
        if isinstance(item, SUnion) and not isinstance(container, STuple):
            # The container's type decides how `in` goes; each type of the item in turn
            # (a tuple compares items itself, alternative by alternative, in `item_eq`).
            parts = []
            for g, it in item.alts:
                with self.assuming(state, g):
                    parts.append(z3.And(g, self.contains(container, it, state)))
            return z3.Or(parts)
        if isinstance(container, SStr):
            if isinstance(item, SStr):
                return z3.Contains(container.e, item.e)
            self.raise_if(TRUE, "TypeError", state)
            return FALSE
        if isinstance(container, SSeq):
            if is_empty_literal(container.e):
                return FALSE
            elem = container.elem
            if elem in (IntT(), INT_OR_BOOL) and isinstance(item, SInt | SBool | SIntB):
                return has_number(container, self._as_int(item, state))
            if item.ty == elem and isinstance(item, SInt | SStr | SBool):
                return z3.Contains(container.e, z3.Unit(item.e))
            numeric = (IntT, BoolT, FloatT)
            if not (isinstance(item.ty, numeric) and isinstance(elem, numeric)) and isinstance(
                item, SInt | SBool | SFloat | SStr | SNone
            ) and isinstance(elem, IntT | BoolT | FloatT | StrT):
                return FALSE  # == between these types is always False
            raise Unsupported(
                f"'in' for a {item.ty.text()} in a sequence of {elem.text()}", self.line
            )
        if isinstance(container, STuple):
            return z3.Or([self.item_eq(x, item, state) for x in container.items] or [FALSE])
        if isinstance(container, SRange):
            raise Unsupported("'in' on a range", self.line)
        self.raise_if(TRUE, "TypeError", state)
        return FALSE

    # -- indexing ---------------------------------------------------------------------------

    def subscript(self, node: ast.Subscript, state: State) -> V:
        value = self.ev(node.value, state)
        with self.holding(value):
            if isinstance(node.slice, ast.Slice):
                return self.slice(value, node.slice, state)
            index = self.ev(node.slice, state)
        return self.index(value, index, state)

    def index(self, value: V, index: V, state: State) -> V:
        if isinstance(value, SUnion):
            parts = []
            for g, a in value.alts:
                with self.assuming(state, g):
                    parts.append((g, self.index(a, index, state)))
            return merge_many(parts[:-1], parts[-1][1])
        if isinstance(value, STuple):
            i = self._as_int(index, state)
            n = len(value.items)
            idx = z3.If(i < 0, i + n, i)
            self.raise_if(z3.Or(idx < 0, idx >= n), "IndexError", state)
            if not value.items:
                return SNone()
            parts_t = [(idx == k, item) for k, item in enumerate(value.items)]
            return merge_many(parts_t[:-1], parts_t[-1][1])
        if not isinstance(index, SInt | SBool | SIntB | SUnion):
            if isinstance(value, SSeq | SStr):
                self.raise_if(TRUE, "TypeError", state)
                return SNone()
            raise Unsupported(f"indexing a {type(value).__name__}", self.line)
        if isinstance(value, SSeq | SStr):
            i = self._as_int(index, state)
            n = z3.Length(value.e)
            idx = z3.If(i < 0, i + n, i)
            self.raise_if(z3.Or(idx < 0, idx >= n), "IndexError", state)
            if isinstance(value, SStr):
                return SStr(z3.SubString(value.e, idx, 1))
            return wrap(value.elem, value.e[idx])
        if isinstance(value, SRange):
            raise Unsupported("indexing a range", self.line)
        self.raise_if(TRUE, "TypeError", state)
        return SNone()

    def slice(self, value: V, sl: ast.Slice, state: State) -> V:
        # CPython evaluates the bounds and the step first (building the slice object), and
        # only then checks their types while indexing.
        nodes = [node for node in (sl.lower, sl.upper, sl.step) if node is not None]
        values = iter(self.ev_all(nodes, state))
        lower, upper, step = (
            None if node is None else next(values) for node in (sl.lower, sl.upper, sl.step)
        )
        unit_step = (
            step is None
            or isinstance(step, SNone)
            or (isinstance(step, SInt) and z3.is_int_value(z3.simplify(step.e))
                and int_of(z3.simplify(step.e)) == 1)
        )
        if not unit_step:
            raise Unsupported("a slice with a step", self.line)
        if isinstance(value, STuple):
            value = self._as_seq(value)
        if not isinstance(value, SSeq | SStr):
            raise Unsupported(f"slicing a {type(value).__name__}", self.line)
        n = z3.Length(value.e)

        def bound(v: V | None, default: z3.ArithRef) -> z3.ArithRef:
            # None (or a union alternative that is None) is "no bound", as in CPython.
            if v is None:
                return default
            result = default
            bad: list[z3.BoolRef] = []
            for g, alt in alternatives(v):
                if isinstance(alt, SNone):
                    continue
                if not isinstance(alt, SInt | SBool | SIntB):
                    bad.append(g)
                    continue
                i = self._as_int(alt, state)
                i = z3.If(i < 0, i + n, i)
                result = z3.If(g, z3.If(i < 0, 0, z3.If(i > n, n, i)), result)
            if bad:
                self.raise_if(z3.Or(bad), "TypeError", state)
            return result

        lo = bound(lower, z3.IntVal(0))
        hi = bound(upper, n)
        length = z3.If(hi > lo, hi - lo, 0)
        if isinstance(value, SStr):
            return SStr(z3.SubString(value.e, lo, length))
        origin = self._new_origin() if value.kind == "list" else None
        return SSeq(value.kind, value.elem, z3.SubSeq(value.e, lo, length), origin)


def floor_div(x: z3.ArithRef, y: z3.ArithRef) -> z3.ArithRef:
    """Python's ``//`` (rounds toward minus infinity); Z3's ``div`` is Euclidean."""
    return z3.If(y > 0, x / y, z3.If(y < 0, (-x) / (-y), 0))


NUMERIC = (SInt, SBool, SIntB, SFloat)


def numbers(seq: SSeq) -> z3.SeqRef:
    """The numeric values of a sequence of ``int`` or of ``int | bool`` items."""
    return numbers_of_codes(seq.e) if seq.elem == INT_OR_BOOL else seq.e


def has_number(seq: SSeq, x: z3.ArithRef) -> z3.BoolRef:
    """Whether a sequence of ``int`` or ``int | bool`` items has an item ``== x``."""
    if seq.elem == IntT():
        return z3.Contains(seq.e, z3.Unit(x))
    return z3.Or(
        z3.Contains(seq.e, z3.Unit(code_of_int(x))),
        z3.And(x == 1, z3.Contains(seq.e, z3.Unit(z3.IntVal(1)))),
        z3.And(x == 0, z3.Contains(seq.e, z3.Unit(z3.IntVal(0)))),
    )


def first_number(seq: SSeq, x: z3.ArithRef) -> z3.ArithRef:
    """The index of the first item ``== x`` in a sequence of ``int`` or ``int | bool``
    items, or -1."""
    if seq.elem == IntT():
        return z3.IndexOf(seq.e, z3.Unit(x), 0)
    as_int = z3.IndexOf(seq.e, z3.Unit(code_of_int(x)), 0)
    as_bool = z3.If(
        x == 1,
        z3.IndexOf(seq.e, z3.Unit(z3.IntVal(1)), 0),
        z3.If(x == 0, z3.IndexOf(seq.e, z3.Unit(z3.IntVal(0)), 0), z3.IntVal(-1)),
    )
    return z3.If(
        as_int < 0,
        as_bool,
        z3.If(z3.Or(as_bool < 0, as_int < as_bool), as_int, as_bool),
    )


def promote(a: SSeq, b: SSeq) -> tuple[SSeq, SSeq]:
    """Two sequences, one of ``int`` and one of ``int | bool``, both as ``int | bool``."""
    if {a.elem, b.elem} != {IntT(), INT_OR_BOOL}:
        return a, b
    return as_codes(a), as_codes(b)




def coerce_number(v: V, elem: PyType) -> V:
    """``v`` ready to be stored in a sequence of ``elem`` (ints and bools into codes)."""
    if elem == INT_OR_BOOL:
        coded = as_int_or_bool(v)
        if coded is not None:
            return coded
    return v


def common_elem_type(items: Sequence[V], line: int) -> PyType:
    types = {i.ty for i in items}
    if len(types) > 1 and types <= {IntT(), BoolT(), INT_OR_BOOL}:
        return INT_OR_BOOL
    if len(types) != 1:
        raise Unsupported("a list with items of different types", line)
    (t,) = types
    if t == INT_OR_BOOL:
        return t
    if not isinstance(t, IntT | BoolT | FloatT | StrT | ListT | TupleT) or (
        isinstance(t, TupleT) and t.homogeneous is None
    ):
        raise Unsupported(f"a list of {t.text()}", line)
    return t


def search_term(item: V, elem: PyType) -> z3.ExprRef | None:
    """The item term that equals ``item`` (by ``==``) in a sequence of ``elem``, if any."""
    if item.ty == elem and isinstance(item, SInt | SStr | SBool):
        return item.e
    if isinstance(item, SBool) and isinstance(elem, IntT):
        return z3.If(item.e, z3.IntVal(1), z3.IntVal(0))  # True == 1
    return None


def is_empty_literal(e: z3.ExprRef) -> bool:
    return bool(z3.is_app(e) and e.decl().kind() == z3.Z3_OP_SEQ_EMPTY)


def _kind(v: V) -> str:
    if isinstance(v, STuple):
        return "tuple"
    if isinstance(v, SSeq):
        return v.kind
    return type(v).__name__


def _list_origins(v: V) -> list[int]:
    out: list[int] = []
    for _, alt in alternatives(v):
        if isinstance(alt, SSeq) and alt.origin:
            out.extend(alt.origin)
        elif isinstance(alt, STuple):
            for item in alt.items:
                out.extend(_list_origins(item))
    return out


def _holds_iterator(value: V) -> bool:
    from veribot.checks.lang.pygen import SIter

    for _, alt in alternatives(value):
        if isinstance(alt, SIter):
            return True
        if isinstance(alt, STuple) and any(_holds_iterator(item) for item in alt.items):
            return True
    return False
