"""Generators and iterators in the symbolic executor: ``yield``, ``yield from``, ``iter``, ``next``.

What the comparison sees of a generator (``drain`` in ``sandbox/_child.py``): the call
returns it, and it is run to its end at once, inside the call: the behaviour is the list of
items it yielded (up to 1000, and whether it ended), or the exception it raised while
running (the items yielded before are then not part of the behaviour), and the list
arguments as they are after that. Neither the value of ``return`` in a generator nor the
kind of iterator (a generator, ``iter(list)``) is compared. So a generator is modelled as
its body run to the end with an output list: ``yield v`` appends ``v``, ``yield from s``
appends the items of ``s``, and each way the body ends returns the items so far as a value
of kind "generator" (or raises). When its code runs relative to the caller (laziness) is
not observed, with one exception: a raise while it is consumed is not a raise at the call.
Where only one version is a generator function, its raises are marked as another outcome
than the other's (``consumed_raises``); between two generator functions the model's
"raises" is the comparison's "raises while running". ``send``, ``throw`` and ``close`` are
not modelled: it is driven by iteration.

An iterator made by ``iter(s)`` over a modelled sequence is the sequence and a cursor; the
cursor lives in the path's locals under a name no Python identifier can have, so paths
merge it like any local. ``next(it)`` takes the item at the cursor or raises
StopIteration; ``for x in it`` consumes from the cursor on.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import z3

from veribot.checks.lang.pyops import TRUE
from veribot.checks.lang.pytypes import INT_OR_BOOL, IntT, PyType, Unknown
from veribot.checks.lang.pyvalues import (
    SInt,
    SNone,
    SSeq,
    SStr,
    STuple,
    SUnbound,
    SUnion,
    Unsupported,
    V,
    alternatives,
    as_codes,
    merge_many,
    term,
    wrap,
)
from veribot.checks.sandbox._child import MAX_YIELDS

if TYPE_CHECKING:
    from veribot.checks.lang.pyexec import Executor, Exit, Frame, IterSource, State

DRIVEN = (
    "a returned generator or iterator is driven by iteration (next), not by send, throw or "
    "close, and is run to its end at once: the items it yields (or the exception it raises) "
    "are compared, not when its code runs (an exception the call raises is told apart from "
    "one raised while it is consumed)"
)

# The generator's output so far, in the locals (not a Python identifier).
OUTPUT = "$yielded"


@dataclass(frozen=True, eq=False)
class SIter(V):
    """An iterator over a modelled sequence; its cursor is the local ``cursor``."""

    items: SSeq  # what it yields, from the start
    cursor: str

    @property
    def ty(self) -> PyType:
        return Unknown("iterator")


def consumed_raises(fn: ast.FunctionDef, exits: Sequence[Exit]) -> list[Exit]:
    """The exits of ``fn`` with its raises marked as raised when consumed, if it is a
    generator function (so they never equal a raise at the call of a plain function)."""
    if not is_generator(fn):
        return list(exits)
    return [replace(e, exc=f"{e.exc} (when consumed)") if e.value is None else e
            for e in exits]


def is_generator(fn: ast.FunctionDef) -> bool:
    from veribot.checks.lang.pyexec import _walk_own

    return any(isinstance(n, ast.Yield | ast.YieldFrom) for n in _walk_own(fn.body))


def uses_iterators(fn: ast.FunctionDef) -> bool:
    """Whether ``fn`` calls ``iter`` or ``next`` (whatever the names are bound to)."""
    return any(
        isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in ("iter", "next")
        for n in ast.walk(fn)
    )


def start(ex: Executor, state: State) -> None:
    """The output of a generator entry, empty."""
    state.env[OUTPUT] = SSeq("list", IntT(), z3.Empty(z3.SeqSort(z3.IntSort())))


def returned(ex: Executor, value: V, state: State) -> V:
    """What the entry's caller sees when it returns ``value``: a generator is drained (the
    value of its ``return`` is not seen), an iterator gives the rest of its items."""
    if ex.generator:
        out = state.env[OUTPUT]
        parts = [(g, _as_generated(alt)) for g, alt in alternatives(out)]
        return merge_many(parts[:-1], parts[-1][1])
    for _, alt in alternatives(value):
        if isinstance(alt, SIter):
            if isinstance(value, SUnion):
                raise Unsupported("returning what may be an iterator", ex.line)
            return _as_generated(_rest(ex, alt, state)[0])
        if isinstance(alt, STuple):
            check_argument(alt, ex.line)  # an iterator inside a returned tuple
    return value


def bounded(ex: Executor, guard: z3.BoolRef, state: State, raising: bool = False) -> z3.BoolRef:
    """Where a generator entry ends having yielded at most ``MAX_YIELDS`` items.

    The comparison stops a generator at its next yield after that many items, so neither
    its end nor the list arguments at its end are seen. Where the generator has mutated a
    list argument, the arguments it was stopped with may not be the ones at its end: those
    inputs are left aside (like a loop beyond the bound). Where it has not, what is seen
    (the first items, whether there were more, the arguments as given) follows from the
    model's full run. An exception (``raising``) after that many items is never seen: the
    comparison has stopped the generator before it.
    """
    if not ex.generator or not (raising or ex.mutated & set(ex.param_origins)):
        return guard
    # Raised in an inlined call: the output is the generator's, at the call.
    out = (state.env if ex.depth == 0 else ex.callers[0].env).get(OUTPUT)
    if out is None:
        return guard
    lengths = [(g, SInt(z3.Length(alt.e))) for g, alt in alternatives(out) if isinstance(alt, SSeq)]
    n = merge_many(lengths[:-1], lengths[-1][1])
    assert isinstance(n, SInt)
    from veribot.checks.lang.pyexec import Exhausted

    over = z3.simplify(z3.And(guard, n.e > MAX_YIELDS))
    if not z3.is_false(over):
        ex.exhausted.append(Exhausted(over, "loop-bound", ex.line))
    return z3.And(guard, n.e <= MAX_YIELDS)


def _as_generated(seq: V) -> V:
    if not isinstance(seq, SSeq):
        raise Unsupported("a generator's output of mixed types")
    return SSeq("generator", seq.elem, seq.e)


def exec_yield(ex: Executor, node: ast.Yield | ast.YieldFrom, state: State) -> None:
    """``yield v`` or ``yield from s`` as a statement of the entry generator."""
    if not ex.generator or ex.depth != 0:
        raise Unsupported("yield outside the generator under review", node.lineno)
    if any(c.sees_close for c in ex.catchers):
        # The consumer may stop after 1000 items and close the generator: GeneratorExit
        # would then be raised at this yield, inside the try, and seen by it.
        raise Unsupported("yield inside try ... finally or a bare except", node.lineno)
    if node.value is None:
        items: list[V] = [SNone()]
        _append(ex, state, items)
        return
    value = ex.ev(node.value, state)
    if isinstance(node, ast.Yield):
        ex._escape(value)  # a yielded list is read after the generator ends
        _append(ex, state, [value])
        return
    seq = _items_of(ex, value, state, node.lineno)
    _extend(ex, state, seq)


def exec_for_yield(ex: Executor, stmt: ast.For, state: State, frame: Frame) -> bool:
    """``for x in s: yield x`` is ``yield from s`` (then ``x`` is the last item, if any),
    with no loop bound; False where the loop is not of that shape."""
    body = stmt.body
    if not (
        ex.generator
        and ex.depth == 0
        and not any(c.sees_close for c in ex.catchers)
        and isinstance(stmt.target, ast.Name)
        and len(body) == 1
        and isinstance(body[0], ast.Expr)
        and isinstance(body[0].value, ast.Yield)
        and isinstance(body[0].value.value, ast.Name)
        and body[0].value.value.id == stmt.target.id
        and not (isinstance(stmt.iter, ast.Call) and isinstance(stmt.iter.func, ast.Name))
    ):
        return False
    value = ex.ev(stmt.iter, state)
    seq = _items_of(ex, value, state, stmt.lineno)
    _extend(ex, state, seq)
    n = z3.Length(seq.e)
    last = wrap(seq.elem, seq.e[n - 1])
    before = state.env.get(stmt.target.id, SUnbound())
    state.env[stmt.target.id] = merge_many([(n > 0, last)], before)
    ex.exec_block(stmt.orelse, state, frame)
    return True


def _items_of(ex: Executor, value: V, state: State, line: int) -> SSeq:
    """The items iterating ``value`` gives (an iterator's from its cursor, which it ends)."""
    if isinstance(value, SIter):
        rest, n = _rest(ex, value, state)
        state.env[value.cursor] = SInt(z3.Length(value.items.e))
        del n
        return rest
    if isinstance(value, SUnion):
        raise Unsupported("yield from a value of several types", line)
    if isinstance(value, SSeq | SStr | STuple):
        listed = ex.builtin("list", [value], state, line)
        assert isinstance(listed, SSeq)
        return listed
    raise Unsupported(f"yield from a {type(value).__name__}", line)


def _append(ex: Executor, state: State, items: Sequence[V]) -> None:
    for item in items:
        out = state.env[OUTPUT]
        parts: list[tuple[z3.BoolRef, V]] = []
        for g, alt in alternatives(out):
            assert isinstance(alt, SSeq)
            seq = ex._adopt(alt, item)
            t = term(ex._coerce_elem(item, seq.elem))
            parts.append((g, SSeq("list", seq.elem, z3.Concat(seq.e, z3.Unit(t)))))
        state.env[OUTPUT] = merge_many(parts[:-1], parts[-1][1])


def _extend(ex: Executor, state: State, other: SSeq) -> None:
    out = state.env[OUTPUT]
    parts: list[tuple[z3.BoolRef, V]] = []
    for g, alt in alternatives(out):
        assert isinstance(alt, SSeq)
        a, b = alt, other
        if a.elem != b.elem and _empty(a):
            a = SSeq("list", b.elem, z3.Empty(b.e.sort()))
        elif a.elem != b.elem and _empty(b):
            b = SSeq("list", a.elem, z3.Empty(a.e.sort()))
        elif {a.elem, b.elem} == {IntT(), INT_OR_BOOL}:
            a, b = as_codes(a), as_codes(b)
        if a.elem != b.elem:
            raise Unsupported(
                f"a generator yielding {b.elem.text()} after {a.elem.text()}", ex.line
            )
        parts.append((g, SSeq("list", a.elem, z3.Concat(a.e, b.e))))
    state.env[OUTPUT] = merge_many(parts[:-1], parts[-1][1])


def _empty(s: SSeq) -> bool:
    return bool(z3.is_app(s.e) and s.e.decl().kind() == z3.Z3_OP_SEQ_EMPTY)


# -- iterators ----------------------------------------------------------------------------


def call(ex: Executor, name: str, node: ast.Call, state: State) -> V:
    """``iter(s)``, ``next(it)`` and ``next(it, default)``."""
    if node.keywords or any(isinstance(a, ast.Starred) for a in node.args):
        raise Unsupported(f"keyword or * arguments to {name}()", node.lineno)
    if name == "iter":
        if len(node.args) != 1:
            raise Unsupported("iter() with a sentinel", node.lineno)
        value = ex.ev(node.args[0], state)
        if isinstance(value, SIter):
            return value  # iter(it) is it
        if isinstance(value, SUnion):
            raise Unsupported("iter() of a value of several types", node.lineno)
        if isinstance(value, SSeq | SStr | STuple):
            if isinstance(value, SSeq):
                # The iterator reads the list as it is when it is advanced: a mutation
                # meanwhile is not modelled.
                ex._escape(value)
                items = SSeq("list", value.elem, value.e)
            else:
                listed = ex.builtin("list", [value], state, node.lineno)
                assert isinstance(listed, SSeq)
                items = SSeq("list", listed.elem, listed.e)
            cursor = f"$iter{ex.fresh.origin()}"
            state.env[cursor] = SInt(z3.IntVal(0))
            return SIter(items, cursor)
        if isinstance(value, SInt | SNone):
            ex.raise_if(TRUE, "TypeError", state)
            return SNone()
        raise Unsupported(f"iter() of a {type(value).__name__}", node.lineno)
    if not 1 <= len(node.args) <= 2:
        raise Unsupported("next() with these arguments", node.lineno)
    it = ex.ev(node.args[0], state)
    default = ex.ev(node.args[1], state) if len(node.args) == 2 else None
    if not isinstance(it, SIter):
        if isinstance(it, SSeq | SStr | STuple | SInt | SNone):
            ex.raise_if(TRUE, "TypeError", state)  # not an iterator
            return SNone()
        raise Unsupported(f"next() of a {type(it).__name__}", node.lineno)
    pos = _cursor(ex, it, state)
    n = z3.Length(it.items.e)
    done = pos >= n
    item = wrap(it.items.elem, it.items.e[pos])
    if default is None:
        ex.raise_if(done, "StopIteration", state)
        state.env[it.cursor] = SInt(pos + 1)
        return item
    state.env[it.cursor] = SInt(z3.If(done, pos, pos + 1))
    return merge_many([(done, default)], item)


def _cursor(ex: Executor, it: SIter, state: State) -> z3.ArithRef:
    value = state.env.get(it.cursor)
    bound = [(g, v) for g, v in alternatives(value or SUnbound()) if isinstance(v, SInt)]
    if not bound:
        raise Unsupported("an iterator whose position is not known", ex.line)
    if len(bound) == 1:
        return bound[0][1].e
    merged = merge_many(bound[:-1], bound[-1][1])
    assert isinstance(merged, SInt)
    return merged.e


def _rest(ex: Executor, it: SIter, state: State) -> tuple[SSeq, z3.ArithRef]:
    pos = _cursor(ex, it, state)
    n = z3.Length(it.items.e)
    left = z3.If(pos < n, n - pos, 0)
    return SSeq("list", it.items.elem, z3.SubSeq(it.items.e, pos, left)), left


def iteration(ex: Executor, value: V, state: State) -> tuple[z3.ArithRef, IterSource]:
    """``for x in it``: the items from the cursor on; the loop moves the cursor."""
    from veribot.checks.lang.pyexec import IterSource

    if not isinstance(value, SIter):
        raise Unsupported("iterating a value that may be an iterator", ex.line)
    start_at = _cursor(ex, value, state)
    rest, n = _rest(ex, value, state)
    return n, IterSource(rest, cursor=value.cursor, start=start_at)


def check_argument(value: V, line: int) -> None:
    """An iterator passed to an inlined call (its cursor would not come back), or in a
    returned tuple."""
    for _, alt in alternatives(value):
        if isinstance(alt, SIter):
            raise Unsupported("an iterator passed to a function or in a tuple", line)
        if isinstance(alt, STuple):
            for item in alt.items:
                check_argument(item, line)
