"""Adversarial pairs on strings: escapes, characters beyond the BMP, surrogates.

Z3's ``StringVal`` parses backslash escapes in the text it is given and its alphabet stops
at U+2FFFF; Python's strings hold any code point up to U+10FFFF, lone surrogates too. Each
differing pair is checked to differ by executing it, then must not be verified.
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
    "test_differing_pair_is_not_verified": {
        "named-escape-vs-text",
        "backslash-u-is-six-chars",
        "astral-order",
        "literal-beyond-plane-1",
        "input-above-z3-alphabet",
        "ord-beyond-z3-alphabet",
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


# (name, before, after, an input on which they differ, refuted expected)
DIFFERENT: list[tuple[str, str, str, tuple[str, ...], bool]] = [
    # The six characters \u0041 are not the one character A.
    ("backslash-u-is-six-chars", _fn("x: int", "return len('\\\\u0041') + x"),
     _fn("x: int", "return 1 + x"), ("0",), True),
    # Z3 reads \u{...} in a StringVal as an escape: the Python text is not the emoji.
    ("escaped-text-vs-emoji", _fn("s: str", "return s == '\\U0001F600'"),
     _fn("s: str", "return s == '\\\\u{1f600}'"), ("'\\U0001F600'",), True),
    ("astral-order", _fn("s: str", "return s < '\\U0001F600'"),
     _fn("s: str", "return s < '\\uffff'"), ("'\\U00010000'",), True),
    ("lone-surrogate", _fn("s: str", "return s[:1] == '\\ud800'"),
     _fn("s: str", "return False"), ("'\\ud800'",), True),
    ("named-escape-vs-text", _fn("s: str", "return '\\N{BLACK STAR}' in s"),
     _fn("s: str", "return '\\\\N{BLACK STAR}' in s"), ("'\\u2605'",), True),
    # An input character above every literal, and above U+1FFFF: still in the domain.
    ("input-above-plane-1", _fn("s: str", "return len(s) == 1 and s > '\\U0001FFFF'"),
     _fn("s: str", "return False"), ("'\\U00020000'",), True),
    # Z3 has no one-character string above U+2FFFF; Python has.
    ("input-above-z3-alphabet", _fn("s: str", "return len(s) == 1 and s > '\\U0002FFFF'"),
     _fn("s: str", "return False"), ("'\\U00100000'",), False),
    # A literal beyond U+1FFFF cannot be modelled exactly: never verified.
    ("literal-beyond-plane-1", _fn("s: str", "return s == '\\U00030000'"),
     _fn("s: str", "return False"), ("'\\U00030000'",), False),
    # Code points are not modelled: the argument for characters beyond Z3's alphabet
    # rests on that. If ord() is ever modelled, this pair must still not be verified.
    ("ord-beyond-z3-alphabet", _fn("s: str", "return len(s) == 1 and ord(s) > 0x2FFFF"),
     _fn("s: str", "return False"), ("'\\U00030000'",), False),
]


@pytest.mark.parametrize(("before", "after", "witness", "refuted"),
                         [d[1:] for d in DIFFERENT], ids=[d[0] for d in DIFFERENT])
def test_differing_pair_is_not_verified(
    before: str, after: str, witness: tuple[str, ...], refuted: bool
) -> None:
    assert _differs(before, after, witness), "the pair is meant to differ on the witness"
    result = check_pair(before, after, "f", budget=BUDGET)
    _assert_not_verified(result, before, after)
    if refuted:
        assert result.verdict is Verdict.REFUTED, (result.reason, result.detail)


EQUIVALENT: list[tuple[str, str, str]] = [
    ("emoji-is-one-char", _fn("s: str", "return len('\\U0001F600' + s)"),
     _fn("s: str", "return len(s) + 1")),
    ("backslash-stays-backslash", _fn("s: str", "return s + '\\\\u0041'"),
     _fn("s: str", "return s + '\\\\' + 'u' + '0041'")),
    ("named-escape", _fn("s: str", "return '\\N{GRINNING FACE}' + s"),
     _fn("s: str", "return '\\U0001F600' + s")),
    ("surrogate-prefix", _fn("s: str", "return s[:1] == '\\ud800'"),
     _fn("s: str", "return len(s) > 0 and s[0] == '\\ud800'")),
]


@pytest.mark.parametrize(("before", "after"), [e[1:] for e in EQUIVALENT],
                         ids=[e[0] for e in EQUIVALENT])
def test_equivalent_pair_is_verified(before: str, after: str) -> None:
    result = check_pair(before, after, "f", budget=BUDGET)
    assert result.verdict is Verdict.VERIFIED, (result.reason, result.detail)
