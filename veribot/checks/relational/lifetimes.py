"""When a version lets go of what it holds: the points where an object may be finalized.

Dropping the last reference to an object runs code outside the function: its ``__del__``,
weak-reference callbacks, a file's flush and close. So *when* a version lets go of an
object is behaviour, like a call: ``f = open(p, "w"); f.write(s); g(p)`` and
``open(p, "w").write(s); g(p)`` make the same calls, but only the second closes the file
before ``g`` reads it.

Each walk keeps what it holds: its locals, its operand stack (``pending``: values computed
and not yet consumed, as CPython's value stack holds them), the exceptions being handled
or propagating, the return value on its way out, and, through them, the items of tuples
and of its own lists and what its closures captured. At each *point* (a store, an
operation consuming its operands, a frame's end) the droppable terms it held before and
holds no more are recorded; between two synchronisation points of the walks (an event, a
loop head or back edge, the end) both versions must let go of the same set. Their order
within that interval is not compared: that finalizers of objects let go of between the
same two operations do not depend on their order among themselves is an assumption the
verdict lists.

Parameters, constants and globals are held by the caller, the code or the module, never
let go of by the function; except a generator's parameters, which the generator alone
holds once it is made.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from veribot.checks.relational.terms import (
    Exc,
    Fn,
    Fresh,
    Item,
    Kw,
    Maybe,
    Obj,
    Pack,
    Param,
    Res,
    Seq,
    Slice,
    Star,
    Sym,
    Term,
    Tup,
    Value,
)

if TYPE_CHECKING:
    from veribot.checks.relational.walkcore import _Frame

Deaths = tuple[frozenset[Term], ...]

_DROPPABLE = (Res, Item, Exc, Sym, Maybe, Seq, Obj, Fn)


def leaves(values: Iterable[Value], out: set[Term], params: bool = False) -> None:
    """Add to ``out`` the droppable terms ``values`` hold, through containers (parameters
    too when ``params``: a generator's frame may hold their only reference)."""
    stack: list[Value] = list(values)
    seen: set[int] = set()
    while stack:
        v = stack.pop()
        if isinstance(v, Fresh):
            if id(v) in seen:
                continue
            seen.add(id(v))
            if v.escaped is not None:
                out.add(Obj(v.escaped.where))
            stack.extend(v.items)
        elif isinstance(v, Pack | Tup):
            stack.extend(v.items)
        elif isinstance(v, Fn):
            out.add(v)
            stack.extend(v.captured)
            stack.extend(v.made_with)
        elif isinstance(v, Slice):
            stack.extend((v.lower, v.upper, v.step))
        elif isinstance(v, Star | Kw):
            stack.append(v.term)
        elif isinstance(v, Obj):
            out.add(Obj(v.where))
            stack.extend(v.items or ())
        elif isinstance(v, _DROPPABLE) or (params and isinstance(v, Param)):
            out.add(v)


class Lifetimes:
    """What one walk holds, and the sets of terms it let go of since the last sync."""

    def __init__(self, frames: Sequence[_Frame], params: bool = False) -> None:
        self.frames = frames
        self.params = params  # a generator: its frame may hold its arguments' only reference
        self.pending: list[Value] = []  # the operand stack
        self.handling: list[Term] = []  # exceptions being handled (sys.exc_info)
        self.inflight: list[Value] = []  # an exception propagating, a value being returned
        self.born: set[Term] = set()  # made since the last point
        self.last: frozenset[Term] = frozenset()
        self.seq: list[frozenset[Term]] = []

    def mark(self) -> int:
        return len(self.pending)

    def cut(self, mark: int) -> None:
        del self.pending[mark:]

    def remove(self, value: Value) -> None:
        """Take one entry of ``value`` off the operand stack (the topmost)."""
        for i in range(len(self.pending) - 1, -1, -1):
            if self.pending[i] is value:
                del self.pending[i]
                return
        raise AssertionError("a value consumed that was not on the operand stack")

    def alive(self, extra: Iterable[Value] = ()) -> frozenset[Term]:
        out: set[Term] = set()
        for frame in self.frames:
            leaves(frame.env.values(), out, self.params)
        for held in (self.pending, self.handling, self.inflight, extra):
            leaves(held, out, self.params)
        return frozenset(out)

    def kept(self) -> frozenset[Term]:
        """What a traceback would keep alive if the function raised here: what its locals
        hold, and the exceptions being handled (the new one's ``__context__``)."""
        out: set[Term] = set()
        for frame in self.frames:
            leaves(frame.env.values(), out, self.params)
        leaves(self.handling, out, self.params)
        return frozenset(out)

    def point(self, extra: Iterable[Value] = ()) -> None:
        """Something may have been let go of here: record what no longer is held."""
        now = self.alive(extra)
        dead = (self.last | self.born) - now
        if dead:
            self.seq.append(frozenset(dead))
        self.last = now
        self.born = set()

    def sync(self, extra: Iterable[Value] = ()) -> Deaths:
        """What was let go of since the last sync (and start a new interval). Objects let go
        of between the same two synchronisation points are compared as one set: their
        finalizers' order among themselves is assumed not to matter (it is listed)."""
        self.point(extra)
        out: set[Term] = set()
        for dead in self.seq:
            out |= dead
        self.seq = []
        return (frozenset(out),) if out else ()

    def reset(self) -> None:
        """After a loop head's generalization: what is held now, silently."""
        self.last = self.alive()
        self.born = set()
