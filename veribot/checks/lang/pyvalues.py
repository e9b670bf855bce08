"""Symbolic Python values over Z3 terms, and how they merge, compare and concretise.

Each value has a static Python type (a ``PyType``) and a Z3 term of the matching sort:

- ``int`` -> Int (unbounded), ``bool`` -> Bool, ``float`` -> IEEE double (Float64),
  ``str`` -> String, ``None`` -> no term;
- ``int | bool`` (what an ``int`` annotation admits) -> Int holding a code (``SIntB``);
- ``list[T]`` and ``tuple[T, ...]`` -> a Z3 sequence of ``T``'s sort (symbolic length);
- ``tuple[A, B]`` -> a Python tuple of values (fixed length);
- a value whose type differs between paths -> ``SUnion``: disjoint (guard, value) pairs.

Lists carry an ``origin``: the identity of the list object they denote (``None`` when it is
not known, e.g. an element taken out of another list). Mutation is modelled only through a
name whose origin is known and has not escaped into another container, which is how
aliasing stays sound.

Characters. Z3's alphabet stops at U+2FFFF while Python's goes to U+10FFFF (surrogates
included), so strings are exact only through an argument: the model never computes with a
code point (no ``ord``, ``chr``, case mapping or digit tests), it only compares characters
with each other and with the code's literals. Literal characters are kept at or below
U+1FFFF (beyond: unsupported), so any Python input maps, keeping the order, onto one over
Z3's alphabet that behaves the same (the characters above the largest literal squeezed into
the 65,536 code points above U+1FFFF). Literals are built from code points, never parsed,
and read back the same way. Modelling an operation on code points breaks this argument.
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
    INT_OR_BOOL,
    BoolT,
    FloatT,
    IntT,
    ListT,
    NoneT,
    PyType,
    StrT,
    TupleT,
    Unknown,
    is_int_or_bool,
)

FLOAT = z3.Float64()
# Literal characters above this are unsupported (see "Characters" above).
LITERAL_CHAR_LIMIT = 0x1FFFF
_ORIGINS = itertools.count(1)
# Stands for "some list whose identity is not tracked" in an origin set that also holds
# known identities (a merge of a known list with an untracked one). Two ids, so the set is
# never a single identity: mutation through it is refused, and every known list it may be
# stays visible to the alias check.
UNTRACKED = frozenset({-1, -2})
RM = z3.RNE()
MAX_CHAR = 0x2FFFF  # the largest character of Z3's strings
# Constants stop below this, so strings of the domain (whose characters beyond MAX_CHAR
# Z3 cannot hold) map order-preservingly into Z3's characters above every constant.


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
class SIntB(V):
    """An ``int`` or a ``bool``, as one integer code: ``False`` is 0, ``True`` is 1, an int
    ``n >= 0`` is ``n + 2`` and an int ``n < 0`` is ``n``.

    The code is a bijection between all integers and ``int | bool``, so a sequence of codes
    ranges over every list of ints and bools with no side condition, and two values are the
    same (same type and equal) exactly when their codes are equal.
    """

    e: z3.ArithRef

    @property
    def ty(self) -> PyType:
        return INT_OR_BOOL

    def number(self) -> z3.ArithRef:
        """The value as Python arithmetic sees it (``True`` is 1)."""
        return number_of_code(self.e)

    def is_bool(self) -> z3.BoolRef:
        return is_bool_code(self.e)


def number_of_code(c: z3.ArithRef) -> z3.ArithRef:
    return z3.If(c >= 2, c - 2, c)


def is_bool_code(c: z3.ArithRef) -> z3.BoolRef:
    return z3.And(c >= 0, c <= 1)


def code_of_int(n: z3.ArithRef) -> z3.ArithRef:
    return z3.If(n >= 0, n + 2, n)


def code_of_bool(b: z3.BoolRef) -> z3.ArithRef:
    return z3.If(b, z3.IntVal(1), z3.IntVal(0))


def as_int_or_bool(v: V) -> SIntB | None:
    """``v`` as an ``int | bool`` value, if it is an int, a bool or already one."""
    if isinstance(v, SIntB):
        return v
    if isinstance(v, SInt):
        return SIntB(code_of_int(v.e))
    if isinstance(v, SBool):
        return SIntB(code_of_bool(v.e))
    if isinstance(v, SUnion):
        coded: list[tuple[z3.BoolRef, z3.ArithRef]] = []
        for g, alt in v.alts:
            one = as_int_or_bool(alt)
            if one is None:
                return None
            coded.append((g, one.e))
        code = coded[-1][1]
        for g, c in reversed(coded[:-1]):
            code = z3.If(g, c, code)
        return SIntB(code)
    return None


def codes_of_ints(s: z3.SeqRef) -> z3.SeqRef:
    """A sequence of ints as the sequence of their ``int | bool`` codes."""
    n = z3.Int("code_n")
    return z3.SeqMap(z3.Lambda([n], code_of_int(n)), s)


def numbers_of_codes(s: z3.SeqRef) -> z3.SeqRef:
    """A sequence of ``int | bool`` codes as the sequence of their numeric values."""
    c = z3.Int("code_c")
    return z3.SeqMap(z3.Lambda([c], number_of_code(c)), s)


@dataclass(frozen=True)
class SFloat(V):
    """A float. ``obj`` names the float object where that matters and is known (the
    parameters): containers compare items with ``is`` before ``==``, so a NaN equals
    itself inside a tuple. ``None``: which object it is, is not known."""

    e: z3.FPRef
    obj: z3.ArithRef | None = None

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


# -- literals ---------------------------------------------------------------------------


def str_val(text: str, line: int | None = None) -> z3.SeqRef:
    """The Z3 string of ``text``, code point by code point (``z3.StringVal`` parses escapes).

    A character above ``LITERAL_CHAR_LIMIT`` is unsupported: see "Characters" above.
    """
    codes = [ord(c) for c in text]
    if any(c > LITERAL_CHAR_LIMIT for c in codes):
        raise Unsupported("a string literal with a character above U+1FFFF", line)
    ctx = z3.main_ctx()
    buffer = (ctypes.c_uint * max(1, len(codes)))(*codes)
    return z3.SeqRef(z3.Z3_mk_u32string(ctx.ref(), len(codes), buffer), ctx)


def py_str(e: z3.SeqRef) -> str:
    """The Python string of a Z3 string value, code point by code point."""
    if not e.is_string_value():
        raise Unsupported("a string the solver left symbolic")
    n = z3.Z3_get_string_length(e.ctx_ref(), e.as_ast())
    buffer = (ctypes.c_uint * max(1, n))()
    z3.Z3_get_string_contents(e.ctx_ref(), e.as_ast(), n, buffer)
    return "".join(chr(buffer[i]) for i in range(n))


_ITEMS = 100_000  # the longest sequence written out as a literal
_DIGITS = 4000  # below Python's limit on int <-> decimal string conversion (4300)


def int_val(n: int) -> z3.IntNumRef:
    """The Z3 integer ``n``, of any size (``z3.IntVal`` goes through ``str``, which is capped)."""
    return z3.IntVal(_decimal(n))


def int_of(e: z3.ExprRef) -> int:
    """The Python int of a Z3 integer value, of any size."""
    if not z3.is_int_value(e):
        raise Unsupported("an integer the solver left symbolic")
    assert isinstance(e, z3.IntNumRef)
    return _parse_decimal(str(e.as_string()))


def _decimal(n: int) -> str:
    if n < 0:
        return "-" + _decimal(-n)
    if n < 10**_DIGITS:
        return str(n)
    width = len(hex(n)) * 6 // 10  # about half as many decimal digits as n has
    high, low = divmod(n, 10**width)
    return _decimal(high) + _decimal(low).rjust(width, "0")


def _parse_decimal(text: str) -> int:
    if text.startswith("-"):
        return -_parse_decimal(text[1:])
    if len(text) <= _DIGITS:
        return int(text)
    cut = len(text) // 2
    scale: int = 10 ** (len(text) - cut)
    return _parse_decimal(text[:cut]) * scale + _parse_decimal(text[cut:])


# -- sorts and fresh values ---------------------------------------------------------------


def sort_of(t: PyType) -> z3.SortRef:
    """The Z3 sort used for values of ``t`` stored inside a sequence."""
    if isinstance(t, IntT) or is_int_or_bool(t):
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
    if is_int_or_bool(t):
        return SIntB(e)
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
    if isinstance(v, SInt | SIntB | SBool | SFloat | SStr | SSeq):
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
        if is_int_or_bool(t):
            return SIntB(z3.Int(self.name(base)))
        if isinstance(t, UnionT) and IntT() in t.options and BoolT() in t.options:
            # int and bool are one alternative, coded together (see SIntB).
            rest = tuple(o for o in t.options if o not in (IntT(), BoolT()))
            t = UnionT((INT_OR_BOOL, *rest))
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
        if isinstance(t, FloatT):
            return SFloat(z3.FP(self.name(base), FLOAT), z3.Int(self.name(f"{base}_obj")))
        if isinstance(t, ListT | TupleT | IntT | BoolT | FloatT | StrT):
            origin = frozenset({self.origin()}) if isinstance(t, ListT) else None
            return wrap(t, z3.Const(self.name(base), sort_of(t)), origin)
        raise Unsupported(f"parameters of type {t.text()}")


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
    if isinstance(a, SIntB) or isinstance(b, SIntB):
        ca, cb = as_int_or_bool(a), as_int_or_bool(b)
        if ca is not None and cb is not None:
            return SIntB(_ite(c, ca.e, cb.e))
        return None
    if isinstance(a, SFloat) and isinstance(b, SFloat):
        obj = None if a.obj is None or b.obj is None else _ite(c, a.obj, b.obj)
        return SFloat(_ite(c, a.e, b.e), obj)
    if isinstance(a, SStr) and isinstance(b, SStr):
        return SStr(_ite(c, a.e, b.e))
    if isinstance(a, SNone) and isinstance(b, SNone):
        return a
    if isinstance(a, SUnbound) and isinstance(b, SUnbound):
        return a
    if isinstance(a, SSeq) and isinstance(b, SSeq) and {a.elem, b.elem} == {IntT(), INT_OR_BOOL}:
        a, b = as_codes(a), as_codes(b)
    if isinstance(a, SSeq) and isinstance(b, SSeq) and a.kind == b.kind and a.elem == b.elem:
        origin = None
        if a.origin is not None or b.origin is not None:
            origin = (a.origin or UNTRACKED) | (b.origin or UNTRACKED)
        return SSeq(a.kind, a.elem, _ite(c, a.e, b.e), origin)
    if isinstance(a, STuple) and isinstance(b, STuple) and len(a.items) == len(b.items):
        return STuple(tuple(merge(c, x, y) for x, y in zip(a.items, b.items, strict=True)))
    if isinstance(a, SRange) and isinstance(b, SRange):
        return SRange(_ite(c, a.start, b.start), _ite(c, a.stop, b.stop), _ite(c, a.step, b.step))
    return None


def as_codes(s: SSeq) -> SSeq:
    """A sequence of ``int`` items as one of ``int | bool`` codes (others unchanged)."""
    if s.elem != IntT():
        return s
    if z3.is_app(s.e) and s.e.decl().kind() == z3.Z3_OP_SEQ_EMPTY:
        return SSeq(s.kind, INT_OR_BOOL, s.e, s.origin)
    return SSeq(s.kind, INT_OR_BOOL, codes_of_ints(s.e), s.origin)


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
    if isinstance(a, SIntB) or isinstance(b, SIntB):
        ca, cb = as_int_or_bool(a), as_int_or_bool(b)
        if ca is not None and cb is not None:
            return ca.e == cb.e
        return z3.BoolVal(False)
    if isinstance(a, SSeq) and isinstance(b, SSeq):
        if a.kind != b.kind:
            return z3.BoolVal(False)
        if a.elem == b.elem:
            return a.e == b.e
        if {a.elem, b.elem} == {IntT(), INT_OR_BOOL}:
            ea = a.e if a.elem == INT_OR_BOOL else codes_of_ints(a.e)
            eb = b.e if b.elem == INT_OR_BOOL else codes_of_ints(b.e)
            return ea == eb
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
    return py_literal(concrete(model, v))


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
    ev: Callable[[Any], Any] = lambda e: _value_in(model, e)  # noqa: E731
    if isinstance(v, SInt):
        return int_of(ev(v.e))
    if isinstance(v, SBool):
        return z3.is_true(ev(v.e))
    if isinstance(v, SIntB):
        code = int_of(ev(v.e))
        return bool(code) if code in (0, 1) else (code - 2 if code >= 2 else code)
    if isinstance(v, SFloat):
        # The bits of a NaN are unspecified in Z3 (it may say 0): ask for NaN first.
        if z3.is_true(ev(z3.fpIsNaN(v.e))):
            return math.nan
        return float_of(ev(z3.fpToIEEEBV(v.e)).as_long())
    if isinstance(v, SStr):
        return py_str(ev(v.e))
    if isinstance(v, SNone):
        return None
    if isinstance(v, SSeq):
        n = int_of(ev(z3.Length(v.e)))
        if n > _ITEMS:
            raise Unsupported("a solver's input too long to write out", detail=f"{n} items")
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


def _value_in(model: z3.ModelRef, e: z3.ExprRef) -> z3.ExprRef:
    """The value of ``e`` in ``model``, with the ``seq.map`` that Z3 leaves unevaluated
    (a list extended by a string's characters) written out."""
    value: z3.ExprRef = reduce(model.eval(e, model_completion=True))
    if _is_value(value):
        return value
    maps: dict[int, z3.ExprRef] = {}
    stack, seen = [value], set()
    while stack:
        t = stack.pop()
        if t.get_id() in seen or not z3.is_app(t):
            continue
        seen.add(t.get_id())
        if t.decl().kind() == z3.Z3_OP_SEQ_MAP and t.arg(1).is_string_value():
            maps[t.get_id()] = t
        else:
            stack.extend(t.children())
    pairs = []
    for t in maps.values():
        function, text = t.arg(0), py_str(t.arg(1))
        units = [z3.Unit(reduce(function[z3.CharVal(ord(c))])) for c in text]
        pairs.append((t, z3.Concat(*units) if len(units) > 1 else units[0] if units
                      else z3.Empty(t.sort())))
    return reduce(z3.substitute(value, *pairs)) if pairs else value


def _is_value(e: z3.ExprRef) -> bool:
    if isinstance(e, z3.SeqRef):
        return bool(e.is_string_value())
    return bool(
        z3.is_int_value(e) or z3.is_true(e) or z3.is_false(e) or z3.is_bv_value(e)
        or z3.is_fp_value(e)
    )


def float_of(bits: int) -> float:
    value: float = struct.unpack("<d", struct.pack("<Q", bits))[0]
    return value


def py_literal(x: object) -> str:
    """A literal that the sandbox's ``parse_literal`` reads back as ``x``."""
    if isinstance(x, float):
        if math.isnan(x):
            return "float('nan')"
        if math.isinf(x):
            return "float('inf')" if x > 0 else "-float('inf')"
        return repr(x)
    if isinstance(x, int) and not isinstance(x, bool) and abs(x) >= 10**_DIGITS:
        return hex(x)  # repr is capped at 4300 digits
    if isinstance(x, list):
        return "[" + ", ".join(py_literal(i) for i in x) + "]"
    if isinstance(x, tuple):
        inner = ", ".join(py_literal(i) for i in x)
        return f"({inner},)" if len(x) == 1 else f"({inner})"
    if isinstance(x, dict):
        return "{" + ", ".join(f"{py_literal(k)}: {py_literal(v)}" for k, v in x.items()) + "}"
    if isinstance(x, set | frozenset):
        name = "set" if isinstance(x, set) else "frozenset"
        if not x:
            return f"{name}()"
        return f"{name}([" + ", ".join(sorted(py_literal(v) for v in x)) + "])"
    return repr(x)
    if isinstance(x, int) and not isinstance(x, bool) and abs(x) >= 10**_DIGITS:
        return hex(x)  # repr is capped at 4300 digits
    if isinstance(x, list):
        return "[" + ", ".join(py_literal(i) for i in x) + "]"
    if isinstance(x, tuple):
        inner = ", ".join(py_literal(i) for i in x)
        return f"({inner},)" if len(x) == 1 else f"({inner})"
    return repr(x)
