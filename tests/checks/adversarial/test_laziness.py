"""Laziness: a generator runs only as far as its consumer pulls it, and only once.

CPython (checked by running it): ``any(1 // y for y in (1, 0))`` is True while
``any([1 // y for y in (1, 0)])`` raises ZeroDivisionError; a generator object is always
true and has no ``len``; iterating one a second time yields nothing.
"""

from __future__ import annotations

import pytest

from veribot.checks.equivalence import Budget, check_pair
from veribot.checks.verdict import Verdict


def _ids(pairs: list[tuple[str, str]]) -> list[str]:
    return [f"pair{n}" for n in range(len(pairs))]


FAST = Budget(timeout_s=6)


def _f(ret: str, body: str = "", params: str = "a: int, b: int", result: str = "bool") -> str:
    return f"def f({params}) -> {result}:\n{body}    return {ret}\n"


DIFFERENT_REFUTED = [
    (_f("any(1 // y for y in (a, b))"), _f("any([1 // y for y in (a, b)])")),
    (_f("all(10 // y > 1 for y in (a, b))"), _f("all([10 // y > 1 for y in (a, b)])")),
    (
        _f("any(10 // y for y in ys)", params="ys: list[int]"),
        _f("any([10 // y for y in ys])", params="ys: list[int]"),
    ),
    # The filter decides what is pulled: b is never divided when a is decisive.
    (_f("any(y for y in (a, 10 // b) if y > 0)"), _f("a > 0 or 10 // b > 0")),
]


@pytest.mark.parametrize(("before", "after"), DIFFERENT_REFUTED, ids=_ids(DIFFERENT_REFUTED))
def test_eager_and_lazy_are_told_apart(before: str, after: str) -> None:
    result = check_pair(before, after, "f", budget=FAST)
    assert result.verdict is Verdict.REFUTED, result


NOT_A_LIST = [
    # A generator object is always true.
    (_f("bool(y for y in (a, b) if y)"), _f("bool(a or b)")),
    # Iterating a generator interleaves with the loop body.
    (
        _f("0", "    for v in (10 // y for y in (a, b)):\n        return v\n", result="int"),
        _f("0", "    for v in [10 // y for y in (a, b)]:\n        return v\n", result="int"),
    ),
    # `in` stops at the first match.
    (_f("1 in (10 // y for y in (a, b))"), _f("1 in [10 // y for y in (a, b)]")),
    # A generator is used up by its first consumer.
    (
        _f("sum(g) + sum(g)", "    g = (y for y in (a, b))\n", result="int"),
        _f("2 * (a + b)", result="int"),
    ),
    (_f("len(y for y in (a, b))", result="int"), _f("2", result="int")),
]


@pytest.mark.parametrize(("before", "after"), NOT_A_LIST, ids=_ids(NOT_A_LIST))
def test_a_generator_is_not_a_list(before: str, after: str) -> None:
    model_only = check_pair(before, after, "f", budget=Budget(timeout_s=4, search=False))
    assert model_only.verdict is Verdict.INCONCLUSIVE, model_only
    assert "generator" in model_only.detail
    assert check_pair(before, after, "f", budget=FAST).verdict is Verdict.REFUTED


EQUIVALENT = [
    (_f("any(y > 2 for y in (a, b))"), _f("a > 2 or b > 2")),
    (_f("all(10 // y > 1 for y in (a, b))"), _f("10 // a > 1 and 10 // b > 1")),
    (_f("any(1 // y for y in (a, b))"), _f("bool(1 // a) or bool(1 // b)")),
    (_f("sum(y * 2 for y in (a, b))", result="int"),
     _f("sum([y * 2 for y in (a, b)])", result="int")),
    (_f("max(10 // y for y in (a, b))", result="int"), _f("max(10 // a, 10 // b)", result="int")),
    (_f("list(y for y in (a, b) if y != 0 and 10 // y > 1)", result="list[int]"),
     _f("[y for y in (a, b) if y != 0 if 10 // y > 1]", result="list[int]")),
]  # fmt: skip


@pytest.mark.parametrize(("before", "after"), EQUIVALENT, ids=_ids(EQUIVALENT))
def test_lazy_equivalents_are_verified(before: str, after: str) -> None:
    result = check_pair(before, after, "f", budget=FAST)
    assert result.verdict is Verdict.VERIFIED, result
