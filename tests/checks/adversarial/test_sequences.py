"""Adversarial pairs on sequences: extend and += with any iterable, repetition, huge indices.

CPython's edges checked by running it: ``list.extend``/``+=`` take any iterable (a ``str``
by characters); ``seq * n`` is empty for ``n <= 0`` and raises ``OverflowError`` beyond an
index-sized integer; ``pop``/``insert`` raise ``OverflowError`` for an index beyond
``sys.maxsize``; ``len(range(...))`` raises ``OverflowError`` beyond ``sys.maxsize``.
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from veribot.checks.equivalence import Budget, check_pair
from veribot.checks.search.differential import confirm
from veribot.checks.verdict import Result, Verdict

# Slow cases only `python -m pytest -m heavy` runs (tests/conftest.py); the default
# run keeps this module's other cases of each family.
HEAVY_CASES: dict[str, set[str]] = {
    "test_differing_pair_is_refuted": {
        "tuple-times-negative",
        "len-range-beyond-maxsize",
        "pop-beyond-maxsize",
        "imul-is-in-place",
        "iadd-str-is-by-chars",
        "extend-by-str-is-by-chars",
        "item-iadd-mutates-alias",
        "insert-beyond-maxsize",
        "extend-optional",
    },
    "test_equivalent_pair_is_verified": {
        "tuple-times-negative-is-empty",
        "pop-then-return",
        "extend-tuple-vs-list",
    },
}

BUDGET = Budget(timeout_s=8)


def _fn(params: str, *body: str) -> str:
    return f"def f({params}):\n" + "".join(f"    {line}\n" for line in body)


def _differs(before: str, after: str, args: Sequence[str]) -> bool:
    return confirm(before, after, "f", list(args), found_by="test") is not None


def _assert_not_verified(result: Result, before: str, after: str) -> None:
    assert result.verdict is not Verdict.VERIFIED, (result.method, result.detail)
    if result.verdict is Verdict.REFUTED:
        assert result.counterexample is not None
        assert _differs(before, after, result.counterexample.args)
    else:
        assert result.reason


LS = "l: list[str], s: str"
LI = "l: list[int], i: int"
T = "t: tuple[int, ...]"

# (name, before, after, an input on which they differ)
DIFFERENT: list[tuple[str, str, str, tuple[str, ...]]] = [
    ("extend-by-str-is-by-chars", _fn(LS, "l.extend(s)", "return l"),
     _fn(LS, "l.append(s)", "return l"), ("[]", "'ab'")),
    ("iadd-str-is-by-chars", _fn(LS, "l += s", "return l"),
     _fn(LS, "l += [s]", "return l"), ("[]", "'ab'")),
    ("extend-optional", _fn("l: list[int], a: list[int] | None", "if a is not None:",
                            "    l.extend(a)", "return l"),
     _fn("l: list[int], a: list[int] | None", "if a is not None:", "    raise TypeError",
         "return l"), ("[]", "[]")),
    # x[0] += [1] extends the list object x[0] in place: an alias of it sees the change.
    ("item-iadd-mutates-alias", _fn("x: list[list[int]]", "a = x[0]", "x[0] += [1]",
                                    "return a"),
     _fn("x: list[list[int]]", "a = x[0]", "x[0] = x[0] + [1]", "return a"), ("[[]]",)),
    ("imul-is-in-place", _fn("l: list[int]", "m = l", "m *= 2", "return l"),
     _fn("l: list[int]", "m = l", "m = m * 2", "return l"), ("[1]",)),
    ("tuple-times-negative", _fn(T, "return t * -1"), _fn(T, "return t"), ("(1,)",)),
    ("tuple-times-three", _fn(T, "return t * 3"), _fn(T, "return t + t"), ("(1,)",)),
    ("repeat-beyond-index-size", _fn("l: list[int]", "return l * 2**63"),
     _fn("l: list[int]", "return []"), ("[]",)),
    ("pop-beyond-maxsize", _fn(LI, "if -len(l) <= i < len(l):", "    return l.pop(i)",
                               "raise IndexError"),
     _fn(LI, "return l.pop(i)"), ("[]", str(2**63))),
    ("insert-beyond-maxsize", _fn(LI, "l.insert(i, 0)", "return l[0]"),
     _fn(LI, "l.insert(min(i, len(l)), 0)", "return l[0]"), ("[1]", str(2**63))),
    ("len-range-beyond-maxsize", _fn("n: int", "return len(range(n))"),
     _fn("n: int", "return max(n, 0)"), (str(2**63),)),
]


@pytest.mark.parametrize(("before", "after", "witness"), [d[1:] for d in DIFFERENT],
                         ids=[d[0] for d in DIFFERENT])
def test_differing_pair_is_refuted(before: str, after: str, witness: tuple[str, ...]) -> None:
    assert _differs(before, after, witness), "the pair is meant to differ on the witness"
    result = check_pair(before, after, "f", budget=BUDGET)
    _assert_not_verified(result, before, after)
    assert result.verdict is Verdict.REFUTED, (result.reason, result.detail)


EQUIVALENT: list[tuple[str, str, str]] = [
    ("extend-vs-iadd-str", _fn(LS, "l.extend(s)", "return l"), _fn(LS, "l += s", "return l")),
    ("extend-tuple-vs-list", _fn("l: list[int], a: int", "l.extend((a, a))", "return l"),
     _fn("l: list[int], a: int", "l += [a, a]", "return l")),
    ("two-times-tuple", _fn(T, "return 2 * t"), _fn(T, "return t + t")),
    ("tuple-times-negative-is-empty", _fn(T, "return t * -3"), _fn(T, "return ()")),
    ("fixed-tuple-repeat", _fn("a: int", "return (a, 1) * 2"),
     _fn("a: int", "return (a, 1, a, 1)")),
    ("str-times-true", _fn("s: str", "return s * True"), _fn("s: str", "return s")),
    ("bool-of-huge-range", _fn("n: int", "return bool(range(n))"),
     _fn("n: int", "return n > 0")),
    ("pop-then-return", _fn(LI, "x = l.pop(i)", "return x"), _fn(LI, "return l.pop(i)")),
]


@pytest.mark.parametrize(("before", "after"), [e[1:] for e in EQUIVALENT],
                         ids=[e[0] for e in EQUIVALENT])
def test_equivalent_pair_is_verified(before: str, after: str) -> None:
    result = check_pair(before, after, "f", budget=BUDGET)
    assert result.verdict is Verdict.VERIFIED, (result.reason, result.detail)
