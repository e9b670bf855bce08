"""Edges of the Z3 model of Python where it once proved different versions equal.

Each pair below differs in CPython on some input (given in the comment, checked by running
it); the model must not verify it. The trigger ``m * 3 == 51963`` (m = 17321) keeps the
input out of the tripwire's draws, so the verdict is the model's own. Where the model
cannot mirror CPython exactly it says so (inconclusive): verified is never the answer.
Each area also keeps a pair that is equal, which the model still proves.
"""

from __future__ import annotations

from veribot.checks.equivalence import Budget, check_pair
from veribot.checks.verdict import Result, Verdict

FAST = Budget(timeout_s=10)
PROOF_ONLY = Budget(timeout_s=6, search=False)
# A pair that must only not be verified: random testing, which runs only once no proof was
# found and can turn no verdict into "verified", is left out.
NO_SEARCH = Budget(timeout_s=10, search=False)


def _not_verified(before: str, after: str, budget: Budget = NO_SEARCH) -> Result:
    result = check_pair(before, after, "f", budget=budget)
    assert result.verdict is not Verdict.VERIFIED, (result.reason, result.detail)
    return result


def _verified(before: str, after: str) -> None:
    result = check_pair(before, after, "f", budget=FAST)
    assert result.verdict is Verdict.VERIFIED, (result.reason, result.detail)


# -- 01: a slice bound that may be None is no bound -----------------------------------------


def test_a_slice_bound_that_may_be_none_is_no_bound() -> None:
    # f("abc", 17321): before returns 'abc' (s[:None]), after raises TypeError.
    before = (
        "def f(s: str, m: int) -> str:\n"
        "    k = None if m * 3 == 51963 else m\n"
        "    return s[:k]\n"
    )
    after = (
        "def f(s: str, m: int) -> str:\n"
        "    k = None if m * 3 == 51963 else m\n"
        "    if k is None:\n"
        "        raise TypeError\n"
        "    return s[:k]\n"
    )
    _not_verified(before, after)


def test_slice_bounds_keep_their_proofs() -> None:
    _verified(
        "def f(s: str, k: int) -> str:\n    return s[:k]\n",
        "def f(s: str, k: int) -> str:\n    return s[0:k]\n",
    )
    _verified(
        "def f(xs: list[int], m: int) -> list[int]:\n"
        "    k = None if m > 3 else m\n"
        "    return xs[k:]\n",
        "def f(xs: list[int], m: int) -> list[int]:\n"
        "    if m > 3:\n"
        "        return xs[:]\n"
        "    return xs[m:]\n",
    )


# -- 02: PEP 479 in a generator expression --------------------------------------------------


def test_stop_iteration_leaves_a_generator_expression_as_runtime_error() -> None:
    # f([], 17321): before raises RuntimeError (generator raised StopIteration), after
    # raises StopIteration (a list comprehension is no generator).
    before = (
        "def f(xs: list[int], m: int) -> list[int]:\n"
        "    it = iter(xs)\n"
        "    return list(next(it) if m * 3 == 51963 else 0 for _ in range(1))\n"
    )
    after = (
        "def f(xs: list[int], m: int) -> list[int]:\n"
        "    it = iter(xs)\n"
        "    return [next(it) if m * 3 == 51963 else 0 for _ in range(1)]\n"
    )
    _not_verified(before, after)


def test_generator_expressions_keep_their_proofs() -> None:
    _verified(
        "def f(a: int) -> list[int]:\n    return list(10 // (a + x) for x in range(3))\n",
        "def f(a: int) -> list[int]:\n    return [10 // (a + x) for x in range(3)]\n",
    )
    _verified(
        "def f(xs: list[int]) -> list[int]:\n"
        "    it = iter(xs)\n"
        "    return list(next(it) for _ in range(2))\n",
        "def f(xs: list[int]) -> list[int]:\n"
        "    if len(xs) < 2:\n"
        "        raise RuntimeError\n"
        "    return xs[:2]\n",
    )


# -- 03: a shared helper may tell float objects apart ---------------------------------------


def test_a_helper_with_float_parameters_is_not_a_function_of_their_values() -> None:
    # f(float('nan'), 17321): before returns True ((b,) == (b,): the same object), after
    # returns False (-(-b) is another NaN object).
    helper = "def h(x: float, y: float) -> bool:\n    return (x,) == (y,)\n\n\n"
    before = helper + (
        "def f(a: float, m: int) -> bool:\n"
        "    b = a * 1.0\n"
        "    return h(b, b)\n"
    )
    after = helper + (
        "def f(a: float, m: int) -> bool:\n"
        "    b = a * 1.0\n"
        "    return h(b, -(-b) if m - 2 == 17319 else b)\n"
    )
    _not_verified(before, after, PROOF_ONLY)


def test_helpers_keep_their_proofs() -> None:
    helper = "def h(x: int, y: int) -> bool:\n    return (x,) == (y,)\n\n\n"
    _verified(
        helper + "def f(a: int) -> bool:\n    return h(a, a)\n",
        helper + "def f(a: int) -> bool:\n    return h(a, -(-a))\n",
    )
    helper = "def h(x: float) -> float:\n    return x * 2.0\n\n\n"
    _verified(
        helper + "def f(a: float) -> float:\n    return h(a) + 1.0\n",
        helper + "def f(a: float) -> float:\n    return 1.0 + h(a)\n",
    )


# -- 04: `in` with an item of several types --------------------------------------------------


def test_in_a_string_with_an_optional_item_splits_the_item() -> None:
    # f("abc", "b", 17321): before returns True, after returns False.
    before = (
        "def f(s: str, t: str, m: int) -> bool:\n"
        "    k = t if m * 3 == 51963 else None\n"
        "    return k in s\n"
    )
    after = (
        "def f(s: str, t: str, m: int) -> bool:\n"
        "    k = t if m * 3 == 51963 else None\n"
        "    return k not in s\n"
    )
    _not_verified(before, after)


def test_in_with_an_optional_item_keeps_its_proofs() -> None:
    _verified(
        "def f(s: str, t: str, m: int) -> bool:\n"
        "    k = t if m > 0 else None\n"
        "    if k is None:\n"
        "        return False\n"
        "    return k in s\n",
        "def f(s: str, t: str, m: int) -> bool:\n"
        "    if m > 0:\n"
        "        return t in s\n"
        "    return False\n",
    )


# -- 05: `is` between two values that may be None -------------------------------------------


def test_is_between_two_optional_values_reads_both() -> None:
    # f(5, 17321): before returns True (x is x), after returns False.
    before = (
        "from typing import Optional\n\n\n"
        "def f(x: Optional[int], m: int) -> bool:\n"
        "    y = x if m * 3 == 51963 else None\n"
        "    return x is y\n"
    )
    after = (
        "from typing import Optional\n\n\n"
        "def f(x: Optional[int], m: int) -> bool:\n"
        "    return x is None\n"
    )
    _not_verified(before, after)


def test_is_none_keeps_its_proofs() -> None:
    _verified(
        "from typing import Optional\n\n\n"
        "def f(x: Optional[int], m: int) -> bool:\n"
        "    y = None if m > 0 else None\n"
        "    return x is y\n",
        "from typing import Optional\n\n\n"
        "def f(x: Optional[int], m: int) -> bool:\n"
        "    return x is None\n",
    )


# -- 06/07: raising a builtin exception runs its constructor --------------------------------


def test_oserror_with_an_errno_is_a_subclass() -> None:
    # f(17321): before raises FileNotFoundError (errno 2), after raises OSError.
    before = (
        "def f(m: int) -> int:\n"
        "    if m * 3 == 51963:\n"
        "        raise OSError(m - 17319, 'cannot open')\n"
        "    return m\n"
    )
    after = (
        "def f(m: int) -> int:\n"
        "    if m * 3 == 51963:\n"
        "        raise OSError('cannot open')\n"
        "    return m\n"
    )
    _not_verified(before, after)


def test_exception_constructors_that_raise_are_not_modelled() -> None:
    # f(17321): before raises TypeError (ValueError() takes no keyword arguments), after
    # raises ValueError.
    before = (
        "def f(m: int) -> int:\n"
        "    if m * 3 == 51963:\n"
        "        raise ValueError(reason=m)\n"
        "    return 0\n"
    )
    after = (
        "def f(m: int) -> int:\n"
        "    if m * 3 == 51963:\n"
        "        raise ValueError(m)\n"
        "    return 0\n"
    )
    _not_verified(before, after)
    # UnicodeDecodeError('x') raises TypeError (it takes exactly 5 arguments).
    before = (
        "def f(m: int) -> int:\n"
        "    if m * 3 == 51963:\n"
        "        raise UnicodeDecodeError('bad')\n"
        "    return 0\n"
    )
    after = before.replace("UnicodeDecodeError('bad')", "UnicodeDecodeError")
    after = after.replace("UnicodeDecodeError", "UnicodeError")
    _not_verified(before, after)


def test_plain_exception_constructors_keep_their_proofs() -> None:
    _verified(
        "def f(m: int) -> int:\n    if m > 3:\n        raise ValueError('big', m)\n    return m\n",
        "def f(m: int) -> int:\n    if m > 3:\n        raise ValueError(m)\n    return m\n",
    )
    _verified(
        "def f(m: int) -> int:\n    if m > 3:\n        raise OSError('x')\n    return m\n",
        "def f(m: int) -> int:\n    if m > 3:\n        raise OSError\n    return m\n",
    )
