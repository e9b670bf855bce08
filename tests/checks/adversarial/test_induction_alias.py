"""Loop induction with aliasing: a list changed through another name is still changed.

Each pair has a loop whose trip count is not bounded (so the proof must come from
induction); the versions differ only through a list shared by two names, a name rebound
to another list inside the loop, a list iterated while it grows, or a list nested in
another. CPython's behaviour of each was checked by running it.
"""

from __future__ import annotations

import pytest

from veribot.checks.equivalence import Budget, check_pair
from veribot.checks.verdict import Verdict


def _ids(pairs: list[tuple[str, str]]) -> list[str]:
    return [f"pair{n}" for n in range(len(pairs))]


FAST = Budget(timeout_s=8)

APPEND_VIA_ALIAS = """
def f(n: int) -> list[int]:
    ys: list[int] = []
    for i in range(n):
        zs = ys
        zs.append(i)
    return ys
"""

DIFFERENT_REFUTED = [
    # `zs` is bound in the loop only, and is `ys`: [0, ..., n-1], not [n-1].
    (APPEND_VIA_ALIAS, """
def f(n: int) -> list[int]:
    ys: list[int] = []
    for i in range(n):
        ys = [i]
    return ys
"""),
    # `zs` is `ws` in the first iteration and `ys` after: ys gets 1, ..., n-1.
    ("""
def f(n: int) -> list[int]:
    ws: list[int] = []
    ys: list[int] = []
    zs = ws
    for i in range(n):
        zs.append(i)
        zs = ys
    return ys
""", """
def f(n: int) -> list[int]:
    ws: list[int] = []
    ys: list[int] = []
    zs = ws
    for i in range(n):
        zs.append(i)
    return ys
"""),
    # The argument, mutated through a name bound in the loop.
    ("""
def f(xs: list[int], n: int) -> None:
    for i in range(n):
        ys = xs
        ys.append(i)
""", """
def f(xs: list[int], n: int) -> None:
    for i in range(n):
        ys = xs
        if i == n - 1:
            ys.append(i)
"""),
    # A list that is not carried by the loop, read after it was changed through an alias.
    ("""
def f(xs: list[int], n: int) -> int:
    total = 0
    for i in range(n):
        ys = xs
        ys.append(1)
        total = len(xs)
    return total
""", """
def f(xs: list[int], n: int) -> int:
    total = 0
    for i in range(n):
        total = len(xs) + 1
    return total
"""),
]  # fmt: skip


@pytest.mark.parametrize(("before", "after"), DIFFERENT_REFUTED, ids=_ids(DIFFERENT_REFUTED))
def test_aliased_mutation_in_a_loop_is_refuted(before: str, after: str) -> None:
    result = check_pair(before, after, "f", budget=FAST)
    assert result.verdict is Verdict.REFUTED, result


def test_a_list_iterated_while_it_grows_is_not_proven() -> None:
    # The `for` reads the list as it grows: one more iteration from length 8 on.
    before = """
def f(xs: list[int]) -> int:
    ys = list(xs)
    c = 0
    for i, y in enumerate(ys):
        if i == 7:
            ys.append(0)
        c += 1
    return c
"""
    after = """
def f(xs: list[int]) -> int:
    ys = list(xs)
    c = 0
    for i, y in enumerate(ys):
        c += 1
    return c
"""
    result = check_pair(before, after, "f", budget=Budget(timeout_s=6, search=False))
    assert result.verdict is Verdict.INCONCLUSIVE, result


def test_a_list_that_may_be_nested_in_another_is_not_mutated_blindly() -> None:
    # `row` is `acc` or a list taken from `xss`: appending to `acc` may change `row`.
    before = """
def f(xss: list[list[int]], c: bool) -> int:
    acc: list[int] = []
    if len(xss) == 0:
        return 0
    row = acc if c else xss[0]
    acc.append(1)
    return len(row)
"""
    after = """
def f(xss: list[list[int]], c: bool) -> int:
    if len(xss) == 0:
        return 0
    return 0 if c else len(xss[0])
"""
    result = check_pair(before, after, "f", budget=FAST)
    assert result.verdict is Verdict.REFUTED, result


EQUIVALENT = [
    ("""
def f(xs: list[int], n: int) -> int:
    for i in range(n):
        ys = xs
        ys.append(i)
    return len(xs)
""", """
def f(xs: list[int], n: int) -> int:
    for i in range(n):
        xs.append(i)
    return len(xs)
"""),
    ("""
def f(xs: list[int], n: int) -> None:
    ys = xs
    for i in range(n):
        ys.append(i * 2)
""", """
def f(xs: list[int], n: int) -> None:
    for i in range(n):
        xs.append(i + i)
"""),
    (APPEND_VIA_ALIAS, """
def f(n: int) -> list[int]:
    ys: list[int] = []
    for i in range(n):
        ys.append(i)
    return ys
"""),
]  # fmt: skip


@pytest.mark.parametrize(("before", "after"), EQUIVALENT, ids=_ids(EQUIVALENT))
def test_aliases_the_induction_tracks_are_verified(before: str, after: str) -> None:
    result = check_pair(before, after, "f", budget=FAST)
    assert result.verdict is Verdict.VERIFIED, result
