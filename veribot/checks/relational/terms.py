"""Terms and events of the comparison relative to callees (``relational.opaque``).

A *term* names a value without knowing it: a parameter, a constant (by type and value),
a global name resolved to its origin, the result of the i-th event of the trace, a tuple
built from terms. Two versions that compute equal terms hold equal values, given that every
event behaves the same in both (deterministic given its operands and the state).

An *event* is an operation that dispatches to code outside the function (a call, an
attribute read, an operator, a truth test, ``iter``/``next`` ...): its kind, its operand
terms, and the exception being handled when it runs (which the callee can see).

Values the function holds are terms, or two things that are not terms while the function
alone can see them: a fresh list nobody else holds yet (``Fresh``, compared by its items),
and a tuple holding one (``Pack``). The moment such a list reaches an event or the caller
it *escapes*: it is named by where it escaped (``Obj``) and its items at that moment are
part of the operand; from then on it is an object like any other.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from veribot.checks.lang import pysource


class Term:
    """A value named without knowing it (frozen subclasses; equal terms, equal values)."""


@dataclass(frozen=True)
class Param(Term):
    name: str


@dataclass(frozen=True)
class Const(Term):
    kind: str  # the type's name: `1`, `1.0` and `True` are different constants
    text: str  # the value's text (repr, hex for ints): tells -0.0 from 0.0
    true: bool = False  # its truth (a constant of the code is of a builtin type)


@dataclass(frozen=True)
class Glob(Term):
    token: str  # the resolved name, as ``relational.check._Canon`` writes it (G:/B:/M:)


@dataclass(frozen=True)
class Res(Term):
    event: int  # what the event of that position in the trace returned


@dataclass(frozen=True)
class Flag(Term):
    """The outcome of a truth test (or ``in``, ``is``, ``next`` stopping): a real bool."""

    event: int
    what: str = ""  # "" for truth, "stop" for iteration ending


@dataclass(frozen=True)
class Not(Term):
    term: Term


@dataclass(frozen=True)
class Item(Term):
    of: Term  # the k-th item an unpacking event produced
    index: int


@dataclass(frozen=True)
class Tup(Term):
    items: tuple[Term, ...]


@dataclass(frozen=True)
class Joined(Term):
    parts: tuple[Term, ...]  # an f-string's pieces, joined (a str)


@dataclass(frozen=True)
class Slice(Term):
    lower: Term
    upper: Term
    step: Term


@dataclass(frozen=True)
class Exc(Term):
    event: int  # the exception the event of that position raised
    # As it left a generator's frame: there a StopIteration becomes a RuntimeError (PEP
    # 479), where it passes through a comprehension's or the function's own frame.
    generator: bool = False


@dataclass(frozen=True)
class Sym(Term):
    """A loop-carried value at a loop head: the same symbol in both versions means equal."""

    loop: int
    index: int


@dataclass(frozen=True)
class Maybe(Term):
    """A loop-carried local that may be unbound at the head (reading it is refused)."""

    sym: Sym


@dataclass(frozen=True)
class Seq(Term):
    """The items of a fresh list at a loop head, as one symbol (a prefix of its items)."""

    sym: Sym


@dataclass(frozen=True)
class NonEmpty(Term):
    """Whether a fresh list whose items start with ``Seq`` is non-empty: a pure bool."""

    items: tuple[Term, ...]


@dataclass(frozen=True)
class Obj(Term):
    """A fresh list that escaped: where (event position, order within it), and its items
    at that moment (only in the operand where it first escaped)."""

    where: tuple[int, int]
    items: tuple[Term, ...] | None = None


@dataclass(frozen=True)
class Fn(Term):
    """A lambda or generator expression the function made: its code (names resolved, its
    own names by position, the enclosing locals it reads as ``C0``, ``C1`` ...), the values
    of those locals (never rebound in the function), and what was evaluated when it was
    made (a lambda's defaults, a generator expression's first iterator). Named by the
    order it was made in, since each is a distinct object."""

    serial: int
    code: str
    captured: tuple[Term, ...]
    made_with: tuple[Term, ...]


@dataclass(frozen=True)
class Star(Term):
    term: Term  # `*x` in a call


@dataclass(frozen=True)
class Kw(Term):
    name: str | None  # `name=x` in a call; None for `**x`
    term: Term


def const(value: object) -> Const:
    """The term of a constant of the code (a builtin immutable value)."""
    return Const(type(value).__name__, pysource._value_text(value), bool(value))


UNBOUND = Const("unbound", "")
NONE = const(None)
TRUE, FALSE = const(True), const(False)


@dataclass(eq=False)
class Fresh:
    """A list the function made and nobody else holds: its items are the function's."""

    serial: int  # creation order in its version's run: stable when the run is replayed
    items: list[Value] = field(default_factory=list)
    escaped: Obj | None = None


@dataclass(frozen=True, eq=False)
class Pack:
    """A tuple holding a fresh list (tuples of terms only are ``Tup``)."""

    items: tuple[Value, ...]


Value = Term | Fresh | Pack


@dataclass(frozen=True)
class Event:
    kind: str
    args: tuple[Term, ...]
    handled: Term | None  # the exception being handled (``sys.exc_info()`` in a callee)


def is_bool(term: Value) -> bool:
    """Whether the term is a real bool (its truth test calls no code)."""
    return isinstance(term, Flag | Not | NonEmpty) or (
        isinstance(term, Const) and term.kind == "bool")
