"""Symbolic Python values over Z3 terms, and how they merge, compare and concretise.

Each value has a static Python type (a ``PyType``) and a Z3 term of the matching sort:

- ``int`` -> Int (unbounded), ``bool`` -> Bool, ``float`` -> IEEE double (Float64),
  ``str`` -> String, ``None`` -> no term;
- ``list[T]`` and ``tuple[T, ...]`` -> a Z3 sequence of ``T``'s sort (symbolic length);
- ``tuple[A, B]`` -> a Python tuple of values (fixed length);
- a value whose type differs between paths -> ``SUnion``: disjoint (guard, value) pairs.

Lists carry an ``origin``: the identity of the list object they denote (``None`` when it is
not known, e.g. an element taken out of another list). Mutation is modelled only through a
name whose origin is known and has not escaped into another container, which is how
aliasing stays sound.
"""

from __future__ import annotations

import ctypes
import itertools
import math
import struct
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import z3

from veribot.checks.lang.pytypes import (
    BoolT,
    FloatT,
    IntT,
    ListT,
    NoneT,
    PyType,
    StrT,
    TupleT,
    Unknown,
)

FLOAT = z3.Float64()
_ORIGINS = itertools.count(1)
RM = z3.RNE()
MAX_CHAR = 0x2FFFF  # the largest character of Z3's strings
# Constants stop below this, so strings of the domain (whose characters beyond MAX_CHAR
# Z3 cannot hold) map order-preservingly into Z3's characters above every constant.
MAX_CONSTANT_CHAR = 0x1FFFF


class Unsupported(Exception):
    """The code uses something the model does not cover; the check cannot use the solver."""

    def __init__(self, construct: str, line: int | None = None, detail: str = "") -> None:
        self.construct = construct
        self.line = line
        self.detail = detail
        where = f" at line {line}" if line else ""
        super().__init__(f"unsupported: {construct}{where}{': ' + detail if detail else ''}")


class OutOfTime(Exception):
    """The time budget ran out while the model was being built."""


# -- values -------------------------------------------------------------------------------


@dataclass(frozen=True)
class V:
    """A symbolic value of a single static type."""

    @property
    def ty(self) -> PyType:
        raise NotImplementedError


@dataclass(frozen=True)
class SInt(V):
    e: z3.ArithRef

    @property
    def ty(self) -> PyType:
        return IntT()


@dataclass(frozen=True)
class SBool(V):
    e: z3.BoolRef

    @property
    def ty(self) -> PyType:
        return BoolT()


@dataclass(frozen=True)
class SFloat(V):
    e: z3.FPRef

    @property
    def ty(self) -> PyType:
        return FloatT()


@dataclass(frozen=True)
class SStr(V):
    e: z3.SeqRef

    @property
    def ty(self) -> PyType:
        return StrT()


@dataclass(frozen=True)
class SNone(V):
    @property
    def ty(self) -> PyType:
        return NoneT()


@dataclass(frozen=True)
class SUnbound(V):
    """A local variable that has no value on this path (reading it raises)."""

    @property
    def ty(self) -> PyType:
        return Unknown("unbound")


@dataclass(frozen=True)
class SSeq(V):
    """A list or a homogeneous tuple: a Z3 sequence of the element sort."""

    kind: str  # "list" or "tuple"
    elem: PyType
    e: z3.SeqRef
    origin: frozenset[int] | None = None  # the list objects it may be; None: not known

    @property
    def ty(self) -> PyType:
        if self.kind == "list":
            return ListT(self.elem)
        return TupleT(homogeneous=self.elem)


@dataclass(frozen=True)
class STuple(V):
    """A tuple of fixed length whose items may have different types."""

    items: tuple[V, ...]

    @property
    def ty(self) -> PyType:
        return TupleT(items=tuple(i.ty for i in self.items))


@dataclass(frozen=True)
class SRange(V):
    """``range(start, stop, step)`` with a non-zero step."""

    start: z3.ArithRef
    stop: z3.ArithRef
    step: z3.ArithRef

    @property
    def ty(self) -> PyType:
        return Unknown("range")

    def length(self) -> z3.ArithRef:
        up = z3.If(self.stop > self.start, (self.stop - self.start + self.step - 1) / self.step, 0)
        down = z3.If(
            self.start > self.stop, (self.start - self.stop - self.step - 1) / (-self.step), 0
        )
        return z3.If(self.step > 0, up, down)

    def at(self, k: z3.ArithRef) -> z3.ArithRef:
        return self.start + k * self.step


@dataclass(frozen=True)
class SUnion(V):
    """Disjoint alternatives of different types, each under its guard."""

    alts: tuple[tuple[z3.BoolRef, V], ...]

    @property
    def ty(self) -> PyType:
        return Unknown("union")


# -- sorts and fresh values ---------------------------------------------------------------


def sort_of(t: PyType) -> z3.SortRef:
    """The Z3 sort used for values of ``t`` stored inside a sequence."""
    if isinstance(t, IntT):
        return z3.IntSort()
    if isinstance(t, BoolT):
        return z3.BoolSort()
    if isinstance(t, FloatT):
        return FLOAT
    if isinstance(t, StrT):
        return z3.StringSort()
    if isinstance(t, ListT):
        return z3.SeqSort(sort_of(t.elem))
    if isinstance(t, TupleT) and t.homogeneous is not None:
        return z3.SeqSort(sort_of(t.homogeneous))
    raise Unsupported(f"elements of type {t.text()}")


def wrap(t: PyType, e: z3.ExprRef, origin: frozenset[int] | None = None) -> V:
    """Make a value of type ``t`` from a term of ``sort_of(t)``."""
    if isinstance(t, IntT):
        return SInt(e)
    if isinstance(t, BoolT):
        return SBool(e)
    if isinstance(t, FloatT):
        return SFloat(e)
    if isinstance(t, StrT):
        return SStr(e)
    if isinstance(t, ListT):
        return SSeq("list", t.elem, e, origin)
    if isinstance(t, TupleT) and t.homogeneous is not None:
        return SSeq("tuple", t.homogeneous, e, None)
    raise Unsupported(f"elements of type {t.text()}")


def term(v: V) -> z3.ExprRef:
    """The Z3 term of a value that has one (to store it in a sequence)."""
    if isinstance(v, SInt | SBool | SFloat | SStr | SSeq):
        return v.e
    raise Unsupported(f"a {type(v).__name__} stored in a sequence")


class Fresh:
    """Creates uniquely named symbols and list identities for one query."""

    def __init__(self, prefix: str = "") -> None:
        self.prefix = prefix
        self.count = 0

    def name(self, base: str) -> str:
        self.count += 1
        return f"{self.prefix}{base}!{self.count}"

    def origin(self) -> int:
        # Identities are unique in the process, so values from different runs never alias.
        return next(_ORIGINS)

    def value(self, t: PyType, base: str) -> V:
        """A fresh symbolic value ranging over every value of type ``t``."""
        from veribot.checks.lang.pytypes import UnionT

        if isinstance(t, NoneT):
            return SNone()
        if isinstance(t, TupleT) and t.homogeneous is None:
            return STuple(tuple(self.value(i, f"{base}_{n}") for n, i in enumerate(t.items)))
        if isinstance(t, UnionT):
            alts: list[tuple[z3.BoolRef, V]] = []
            tag = z3.Int(self.name(f"{base}_tag"))
            last = len(t.options) - 1
            for n, option in enumerate(t.options):
                if n == 0:
                    guard = tag <= 0
                elif n == last:
                    guard = tag >= last
                else:
                    guard = tag == n
                alts.append((guard, self.value(option, f"{base}_{n}")))
            return SUnion(tuple(alts))
        if isinstance(t, ListT | TupleT | IntT | BoolT | FloatT | StrT):
            origin = frozenset({self.origin()}) if isinstance(t, ListT) else None
            return wrap(t, z3.Const(self.name(base), sort_of(t)), origin)
        raise Unsupported(f"parameters of type {t.text()}")


def str_val(text: str) -> z3.SeqRef:
    """The Z3 string of ``text``, character for character.

    ``z3.StringVal`` would read ``\\u{41}`` in the text as an escape (one character "A").
    """
    codes = (ctypes.c_uint * len(text))(*(ord(c) for c in text))
    ctx = z3.main_ctx()
    return z3.SeqRef(z3.Z3_mk_u32string(ctx.ref(), len(text), codes), ctx)


def str_of(e: z3.SeqRef) -> str:
    """The Python text of a Z3 string value (``as_string`` escapes non-ASCII characters)."""
    n = z3.Z3_get_string_length(e.ctx_ref(), e.as_ast())
    codes = (ctypes.c_uint * n)()
    z3.Z3_get_string_contents(e.ctx_ref(), e.as_ast(), n, codes)
    return "".join(chr(c) for c in codes)


# -- merging ------------------------------------------------------------------------------


def alternatives(v: V) -> tuple[tuple[z3.BoolRef, V], ...]:
    if isinstance(v, SUnion):
        return v.alts
    return ((z3.BoolVal(True), v),)


def merge(c: z3.BoolRef, a: V, b: V) -> V:
    """The value that is ``a`` where ``c`` holds and ``b`` elsewhere."""
    if a is b:
        return a
    if z3.is_true(c):
        return a
    if z3.is_false(c):
        return b
    same = _merge_same(c, a, b)
    if same is not None:
        return same
    alts: list[tuple[z3.BoolRef, V]] = []
    for g, v in alternatives(a):
        alts.append((z3.And(c, g), v))
    for g, v in alternatives(b):
        alts.append((z3.And(z3.Not(c), g), v))
    # Combine alternatives of the same type so the union stays small.
    combined: list[tuple[z3.BoolRef, V]] = []
    for g, v in alts:
        for n, (g2, v2) in enumerate(combined):
            m = _merge_same(g, v, v2)
            if m is not None:
                combined[n] = (z3.Or(g, g2), m)
                break
        else:
            combined.append((g, v))
    if len(combined) == 1:
        return combined[0][1]
    return SUnion(tuple(combined))


def _merge_same(c: z3.BoolRef, a: V, b: V) -> V | None:
    if isinstance(a, SInt) and isinstance(b, SInt):
        return SInt(_ite(c, a.e, b.e))
    if isinstance(a, SBool) and isinstance(b, SBool):
        return SBool(_ite(c, a.e, b.e))
    if isinstance(a, SFloat) and isinstance(b, SFloat):
        return SFloat(_ite(c, a.e, b.e))
    if isinstance(a, SStr) and isinstance(b, SStr):
        return SStr(_ite(c, a.e, b.e))
    if isinstance(a, SNone) and isinstance(b, SNone):
        return a
    if isinstance(a, SUnbound) and isinstance(b, SUnbound):
        return a
    if isinstance(a, SSeq) and isinstance(b, SSeq) and a.kind == b.kind and a.elem == b.elem:
        origin = a.origin | b.origin if a.origin is not None and b.origin is not None else None
        return SSeq(a.kind, a.elem, _ite(c, a.e, b.e), origin)
    if isinstance(a, STuple) and isinstance(b, STuple) and len(a.items) == len(b.items):
        return STuple(tuple(merge(c, x, y) for x, y in zip(a.items, b.items, strict=True)))
    if isinstance(a, SRange) and isinstance(b, SRange):
        return SRange(_ite(c, a.start, b.start), _ite(c, a.stop, b.stop), _ite(c, a.step, b.step))
    return None


def _ite(c: z3.BoolRef, a: Any, b: Any) -> Any:
    if a.eq(b):
        return a
    return z3.If(c, a, b)


def merge_many(parts: Sequence[tuple[z3.BoolRef, V]], default: V) -> V:
    """Fold (guard, value) pairs with disjoint guards into one value."""
    result = default
    for g, v in parts:
        result = merge(g, v, result)
    return result


# -- equality of behaviour ----------------------------------------------------------------


def same_value(a: V, b: V) -> z3.BoolRef:
    """Whether two values are the same return value: same type and equal (NaN equals NaN).

    This is the engine's side of the behaviour definition in ``differential.py``; it may be
    stricter than that definition (never looser), so a proof under it is a proof.
    """
    if isinstance(a, SUnion) or isinstance(b, SUnion):
        options = []
        for ga, va in alternatives(a):
            for gb, vb in alternatives(b):
                options.append(z3.And(ga, gb, same_value(va, vb)))
        return z3.Or(options) if options else z3.BoolVal(False)
    if isinstance(a, SFloat) and isinstance(b, SFloat):
        return z3.Or(z3.fpEQ(a.e, b.e), z3.And(z3.fpIsNaN(a.e), z3.fpIsNaN(b.e)))
    if isinstance(a, SInt | SBool | SStr) and type(a) is type(b):
        return a.e == b.e
    if isinstance(a, SSeq) and isinstance(b, SSeq):
        if a.kind != b.kind:
            return z3.BoolVal(False)
        if a.elem == b.elem:
            return a.e == b.e
        return z3.And(z3.Length(a.e) == 0, z3.Length(b.e) == 0)
    if isinstance(a, STuple) and isinstance(b, STuple):
        if len(a.items) != len(b.items):
            return z3.BoolVal(False)
        return z3.And([same_value(x, y) for x, y in zip(a.items, b.items, strict=True)] or [True])
    if isinstance(a, STuple) and isinstance(b, SSeq) and b.kind == "tuple":
        return _tuple_vs_seq(a, b)
    if isinstance(b, STuple) and isinstance(a, SSeq) and a.kind == "tuple":
        return _tuple_vs_seq(b, a)
    if isinstance(a, SNone) and isinstance(b, SNone):
        return z3.BoolVal(True)
    if isinstance(a, SRange) or isinstance(b, SRange):
        raise Unsupported("a range object as a result")
    if isinstance(a, SUnbound) or isinstance(b, SUnbound):
        raise Unsupported("an unbound variable as a result")
    return z3.BoolVal(False)


def _tuple_vs_seq(a: STuple, b: SSeq) -> z3.BoolRef:
    parts = [z3.Length(b.e) == len(a.items)]
    for n, item in enumerate(a.items):
        parts.append(same_value(item, wrap(b.elem, b.e[n])))
    return z3.And(parts)


# -- concrete values ----------------------------------------------------------------------


def literal(model: z3.ModelRef, v: V) -> str:
    """The Python literal (``repr``) that value ``v`` takes in ``model``."""
    return _py_repr(concrete(model, v))


def reduce(e: Any) -> Any:
    """Simplify to a fixpoint: one pass can leave work for the next (e.g. ``IndexOf``)."""
    for _ in range(4):
        simpler = z3.simplify(e)
        if simpler.eq(e):
            break
        e = simpler
    return e


def concrete(model: z3.ModelRef, v: V) -> object:
    """The Python value that ``v`` takes in ``model``."""
    ev: Callable[[Any], Any] = lambda e: reduce(model.eval(e, model_completion=True))  # noqa: E731
    if isinstance(v, SInt):
        return ev(v.e).as_long()
    if isinstance(v, SBool):
        return z3.is_true(ev(v.e))
    if isinstance(v, SFloat):
        # The bits of a NaN are unspecified in Z3 (it may say 0): ask for NaN first.
        if z3.is_true(ev(z3.fpIsNaN(v.e))):
            return math.nan
        return float_of(ev(z3.fpToIEEEBV(v.e)).as_long())
    if isinstance(v, SStr):
        return str_of(ev(v.e))
    if isinstance(v, SNone):
        return None
    if isinstance(v, SSeq):
        n = ev(z3.Length(v.e)).as_long()
        items = [concrete(model, wrap(v.elem, ev(v.e[i]))) for i in range(n)]
        return items if v.kind == "list" else tuple(items)
    if isinstance(v, STuple):
        return tuple(concrete(model, i) for i in v.items)
    if isinstance(v, SUnion):
        for g, alt in v.alts:
            if z3.is_true(ev(g)):
                return concrete(model, alt)
        return concrete(model, v.alts[-1][1])
    raise Unsupported(f"concretising a {type(v).__name__}")


def float_of(bits: int) -> float:
    value: float = struct.unpack("<d", struct.pack("<Q", bits))[0]
    return value


def _py_repr(x: object) -> str:
    if isinstance(x, float):
        if math.isnan(x):
            return "float('nan')"
        if math.isinf(x):
            return "float('inf')" if x > 0 else "-float('inf')"
        return repr(x)
    if isinstance(x, list):
        return "[" + ", ".join(_py_repr(i) for i in x) + "]"
    if isinstance(x, tuple):
        inner = ", ".join(_py_repr(i) for i in x)
        return f"({inner},)" if len(x) == 1 else f"({inner})"
    return repr(x)
