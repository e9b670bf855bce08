"""Identity before equality: containers compare items with ``is`` before ``==``.

CPython (checked by running it): with ``x = float('nan')``, ``x == x`` is False but
``x in (x,)``, ``(x,) == (x,)`` and ``[x] == [x]`` are True, and ``float(x) is x``. A
model with value semantics for floats would call the two sides of each pair below equal.
"""

from __future__ import annotations

import pytest

from veribot.checks.equivalence import Budget, check_pair
from veribot.checks.verdict import Verdict


def _ids(pairs: list[tuple[str, str]]) -> list[str]:
    return [f"pair{n}" for n in range(len(pairs))]


# Generous: a refutation here may need the search after the solver, and CI machines are
# shared; a decided pair returns as soon as it is decided.
FAST = Budget(timeout_s=20)


def _f(params: str, ret: str, body: str = "", result: str = "bool") -> str:
    return f"def f({params}) -> {result}:\n{body}    return {ret}\n"


DIFFERENT_REFUTED = [
    # The same object inside the tuple: found by identity, never by ==.
    (_f("x: float", "x in (x, 0.0)"), _f("x: float", "x == x or x == 0.0")),
    (_f("x: float, y: float", "y in t", "    t = (x, y)\n"), _f("x: float, y: float",
                                                                "y == x or y == y")),
    (_f("x: float, n: int", "(x, n) == (x, n)"), _f("x: float, n: int", "x == x")),
    (_f("x: float", "((x,),) != ((x,),)"), _f("x: float", "x != x")),
    # float(x) is x itself.
    (_f("x: float", "float(x) in (x,)"), _f("x: float", "x == x")),
    # The same item read twice from a list is the same object.
    (
        _f("xs: list[float]", "xs[0] in (xs[0],)", "    if not xs:\n        return False\n"),
        _f("xs: list[float]", "xs[0] == xs[0]", "    if not xs:\n        return False\n"),
    ),
    # An Optional item: `in` compares each alternative.
    (_f("x: int | None", "x in (1, 2)"), _f("x: int | None", "False")),
]


@pytest.mark.parametrize(("before", "after"), DIFFERENT_REFUTED, ids=_ids(DIFFERENT_REFUTED))
def test_identity_differences_are_refuted(before: str, after: str) -> None:
    result = check_pair(before, after, "f", budget=FAST)
    assert result.verdict is Verdict.REFUTED, result


def test_two_parameters_may_be_one_object() -> None:
    # f(v, v) with v a NaN tells them apart; no literal input can, so: not verified.
    before = _f("x: float, y: float", "x in (y,)")
    after = _f("x: float, y: float", "x == y")
    result = check_pair(before, after, "f", budget=Budget(timeout_s=4, search=False))
    assert result.verdict is Verdict.INCONCLUSIVE, result


EQUIVALENT = [
    (_f("x: float, a: float, b: float", "x in (a, b)"),
     _f("x: float, a: float, b: float", "x in (b, a)")),
    (_f("x: float", "x in (x,)"), _f("x: float", "True")),
    (_f("x: float, y: float", "(x, y) == (x, y)"), _f("x: float, y: float", "True")),
    (_f("x: float", "((x, 1),) == ((x, 1),)"), _f("x: float", "True")),
    (_f("x: float", "x in (0.5, 1.5)"), _f("x: float", "x == 0.5 or x == 1.5")),
]  # fmt: skip


@pytest.mark.parametrize(("before", "after"), EQUIVALENT, ids=_ids(EQUIVALENT))
def test_identity_equivalents_are_verified(before: str, after: str) -> None:
    result = check_pair(before, after, "f", budget=FAST)
    assert result.verdict is Verdict.VERIFIED, result
