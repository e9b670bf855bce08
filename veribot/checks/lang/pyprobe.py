"""Cheap concrete probing of the model before the solver is asked.

Some differences are hard for the solver and obvious on a handful of values: floating-
point reassociation is the classic case. Here sample inputs (edge values of each sort)
are substituted into the difference formula and simplified; a sample on which it
simplifies to ``True`` is a candidate, executed in the sandbox like any other. Nothing is
ever proven here.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Sequence

import z3
from z3 import z3util

from veribot.checks.lang.pyvalues import FLOAT, SUnion, V, alternatives, literal, reduce

_INTS = [0, 1, -1, 2, -2, 3, -3, 5, 7, 10, -10, 100, -100, 2**31, -(2**31)]
_FLOATS = [
    0.0, -0.0, 1.0, -1.0, 0.1, 0.2, 0.3, 0.5, 2.0, 3.0, 1e16, 1e308, -1e308, 5e-324,
    math.inf, -math.inf, math.nan,
]  # fmt: skip
_STRINGS = ["", "a", "b", "ab", "ba", "aa", "abc", " ", "A", "0"]


def probe(
    formula: z3.BoolRef,
    inputs: Sequence[V],
    *,
    constants: Sequence[int] = (),
    samples: int = 64,
    seconds: float = 0.3,
) -> tuple[str, ...] | None:
    """Argument literals of a sample on which ``formula`` holds, or None.

    ``constants`` are integers worth trying besides the usual edge values (the code's own
    literals and their neighbours).
    """
    consts = _inputs_consts(inputs)
    if not consts:
        return None
    rng = random.Random(0)
    # An int parameter is coded (see SIntB): n >= 0 is n + 2, so try the shifted constants.
    ints = [*_INTS, *constants, *(c + 2 for c in constants if c >= 0)]
    deadline = time.monotonic() + seconds
    for n in range(samples):
        if time.monotonic() > deadline:
            return None
        pairs = []
        for c in consts:
            value = _sample(c.sort(), rng, ints, small=n < samples // 2)
            if value is None:
                return None
            pairs.append((c, value))
        if z3.is_true(reduce(z3.substitute(formula, *pairs))):
            return _literals(pairs, inputs)
    return None


def small_inputs(inputs: Sequence[V], *, bound: int = 100, length: int = 4) -> list[z3.BoolRef]:
    """Constraints that keep the integers and lengths of the inputs small."""
    facts: list[z3.BoolRef] = []
    for c in _inputs_consts(inputs):
        if c.sort() == z3.IntSort():
            facts.append(z3.And(c >= -bound, c <= bound))
        elif isinstance(c.sort(), z3.SeqSortRef):
            facts.append(z3.Length(c) <= length)
    return facts


def _inputs_consts(inputs: Sequence[V]) -> list[z3.ExprRef]:
    terms: list[z3.ExprRef] = []
    for v in inputs:
        terms.extend(_terms(v))
    seen: dict[str, z3.ExprRef] = {}
    for t in terms:
        for c in z3util.get_vars(t):
            seen.setdefault(str(c), c)
    return list(seen.values())


def _terms(v: V) -> list[z3.ExprRef]:
    from veribot.checks.lang.pyvalues import SBool, SFloat, SInt, SIntB, SSeq, SStr, STuple

    if isinstance(v, SInt | SIntB | SBool | SFloat | SStr | SSeq):
        return [v.e]
    if isinstance(v, STuple):
        return [t for item in v.items for t in _terms(item)]
    if isinstance(v, SUnion):
        return [t for g, alt in alternatives(v) for t in (g, *_terms(alt))]
    return []


def _sample(
    sort: z3.SortRef, rng: random.Random, ints: Sequence[int], *, small: bool
) -> z3.ExprRef | None:
    if sort == z3.IntSort():
        pool = ints[:7] if small else ints
        return z3.IntVal(rng.choice(pool))
    if sort == z3.BoolSort():
        return z3.BoolVal(rng.random() < 0.5)
    if sort == FLOAT:
        pool_f = _FLOATS[:8] if small else _FLOATS
        return z3.FPVal(rng.choice(pool_f), FLOAT)
    if sort == z3.StringSort():
        return z3.StringVal(rng.choice(_STRINGS[:5] if small else _STRINGS))
    if isinstance(sort, z3.SeqSortRef):
        elem = sort.basis()
        length = rng.randint(0, 3 if small else 5)
        items = [_sample(elem, rng, ints, small=small) for _ in range(length)]
        if any(i is None for i in items):
            return None
        if not items:
            return z3.Empty(sort)
        units = [z3.Unit(i) for i in items]
        return units[0] if len(units) == 1 else z3.Concat(*units)
    return None


def _literals(pairs: list[tuple[z3.ExprRef, z3.ExprRef]], inputs: Sequence[V]) -> tuple[str, ...]:
    solver = z3.Solver()
    solver.set("timeout", 1000)
    for c, value in pairs:
        solver.add(c == value)
    if solver.check() != z3.sat:
        raise AssertionError("a concrete assignment is always satisfiable")
    model = solver.model()
    return tuple(literal(model, v) for v in inputs)
