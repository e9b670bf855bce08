"""Pairs that a model drifting from CPython would verify: each found by ``bench-model``.

Differing pairs must not be verified (refuted where the difference reproduces); the
equivalent ones show the fixed constructs are still proved.
"""

from __future__ import annotations

import pytest

from veribot.checks.equivalence import Budget, check_pair
from veribot.checks.verdict import Verdict

BUDGET = Budget(timeout_s=8)


def _fn(params: str, *body: str) -> str:
    return f"def f({params}):\n" + "".join(f"    {line}\n" for line in body)


DIFFER = [
    # The pop happens only where x > 0; the model once popped on every path.
    ("conditional-pop", _fn("xs: list[int], x: int", "y = x > 0 and xs.pop()", "return xs"),
     _fn("xs: list[int], x: int", "if xs:", "    xs.pop()", "return xs")),
    # The assert's message raises ZeroDivisionError at x == 0.
    ("assert-message-raises", _fn("x: int", "assert x > 0, 1 // x", "return x"),
     _fn("x: int", "assert x > 0", "return x")),
    # A string constant is taken literally: backslash, "u", "{41}" is not "A".
    ("backslash-u-constant", _fn("s: str", "return s == '\\\\u{41}'"),
     _fn("s: str", "return s == 'A'")),
    # xs + [xs.pop()] concatenates the list as it is after the pop.
    ("held-list-mutated", _fn("xs: list[int]", "return xs + [xs.pop()]"),
     _fn("xs: list[int]", "ys = list(xs)", "v = xs.pop()", "return ys + [v]")),
    # len() of a range longer than sys.maxsize raises OverflowError.
    ("range-len-overflow", _fn("n: int", "return len(range(n))"),
     _fn("n: int", "return max(n, 0)")),
    # insert() with an index beyond a C ssize_t raises OverflowError.
    ("insert-huge-index", _fn("xs: list[int], i: int", "xs.insert(i, 0)", "return xs"),
     _fn("xs: list[int], i: int", "xs.insert(min(max(i, -len(xs)), len(xs)), 0)", "return xs")),
]

EQUIVALENT = [
    ("conditional-pop-same", _fn("xs: list[int], x: int", "y = x > 0 and xs.pop()", "return xs"),
     _fn("xs: list[int], x: int", "if x > 0:", "    xs.pop()", "return xs")),
    ("assert-message-same", _fn("x: int", "assert x > 0, 1 // x", "return x"),
     _fn("x: int", "if x <= 0:", "    1 // x", "    raise AssertionError", "return x")),
    ("backslash-constant-len", _fn("s: str", "return len('\\\\u{41}') + len(s)"),
     _fn("s: str", "return len(s) + 6")),
]


@pytest.mark.parametrize(("before", "after"), [(b, a) for _, b, a in DIFFER],
                         ids=[n for n, _, _ in DIFFER])  # fmt: skip
def test_differing_pair_is_not_verified(before: str, after: str) -> None:
    result = check_pair(before, after, "f", budget=BUDGET)
    assert result.verdict is Verdict.REFUTED, (result.reason, result.detail)


@pytest.mark.parametrize(("before", "after"), [(b, a) for _, b, a in EQUIVALENT],
                         ids=[n for n, _, _ in EQUIVALENT])  # fmt: skip
def test_equivalent_pair_is_verified(before: str, after: str) -> None:
    result = check_pair(before, after, "f", budget=BUDGET)
    assert result.verdict is Verdict.VERIFIED, (result.reason, result.detail)
