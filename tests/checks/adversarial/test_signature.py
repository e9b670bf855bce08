"""Adversarial pairs: the signature (names, kinds, defaults, default objects) is behaviour.

Each differing pair must be refuted (a call by keyword, without a default, or after an
earlier call shows it) or at least never verified; equal signatures with defaults
inside the domain must still be verified.
"""

from __future__ import annotations

import pytest

from veribot.checks.equivalence import Budget, check_pair
from veribot.checks.verdict import Reason, Verdict

BUDGET = Budget(timeout_s=6)


def _fn(params: str, *body: str) -> str:
    return f"def f({params}):\n" + "".join(f"    {line}\n" for line in body)


# (name, before, after, the call that shows the difference)
REFUTED: list[tuple[str, str, str, str]] = [
    ("default-changed", _fn("x: int, k: int = 2", "return x * k"),
     _fn("x: int, k: int = 3", "return x * k"), "f(1)"),
    ("keyword-only-default-changed", _fn("x: int, *, k: int = 2", "return x * k"),
     _fn("x: int, *, k: int = 3", "return x * k"), "f(1)"),
    ("renamed", _fn("x: int", "return x + 1"), _fn("y: int", "return y + 1"), "f(x=1)"),
    ("made-keyword-only", _fn("x: int, k: int = 2", "return x * k"),
     _fn("x: int, *, k: int = 2", "return x * k"), "f(1, 0)"),
    ("made-positional-only", _fn("x: int", "return x"), _fn("x: int, /", "return x"),
     "f(x=1)"),
    ("parameters-swapped", _fn("a: int, b: int", "return a - b"),
     _fn("b: int, a: int", "return a - b"), "f(1, 0)"),
    ("default-1-became-True", _fn("k: int = 1", "return k"), _fn("k: int = True", "return k"),
     "f()"),
    ("gained-kwargs", _fn("x: int", "return x"), _fn("x: int, **kw: int", "return x"),
     "f(1, extra=0)"),
    ("fresh-list-became-shared", _fn(
        "x: int, acc: list[int] | None = None",
        "if acc is None:", "    acc = []", "acc.append(x)", "return acc"),
     _fn("x: int, acc: list[int] = []", "acc.append(x)", "return acc"), "after f("),
]


@pytest.mark.parametrize(("before", "after", "call"), [(b, a, c) for _, b, a, c in REFUTED],
                         ids=[n for n, _, _, _ in REFUTED])
def test_a_changed_signature_is_refuted(before: str, after: str, call: str) -> None:
    result = check_pair(before, after, "f", budget=BUDGET)
    assert result.verdict is Verdict.REFUTED, result.detail
    assert result.counterexample is not None
    assert call in result.counterexample.call("f")


def test_without_execution_a_changed_default_is_inconclusive_and_named() -> None:
    before = _fn("x: int, k: int = 2", "return x * k")
    after = _fn("x: int, k: int = 3", "return x * k")
    result = check_pair(before, after, "f", budget=Budget(timeout_s=4, execute=False))
    assert result.verdict is Verdict.INCONCLUSIVE
    assert result.reason == Reason.unsupported("signature-change")
    assert "the default of `k` changed from 2 to 3" in result.detail


def test_an_unobservable_signature_change_is_never_verified() -> None:
    # -0.0 and 0.0 are equal results by definition; the change is still not verified.
    before = _fn("x: float, k: float = 0.0", "return x * 0.0 + 1.0")
    after = _fn("x: float, k: float = -0.0", "return x * 0.0 + 1.0")
    result = check_pair(before, after, "f", budget=BUDGET)
    assert result.verdict is Verdict.INCONCLUSIVE
    assert result.reason == Reason.unsupported("signature-change")


def test_a_mutable_default_is_never_verified() -> None:
    same = _fn("x: int, acc: list[int] = []", "return acc + [x]")
    result = check_pair(same, same, "f", budget=Budget(timeout_s=4, search=False))
    assert result.verdict is Verdict.INCONCLUSIVE
    assert "mutable" in result.detail


def test_a_default_outside_the_annotation_widens_the_domain() -> None:
    # k: int = None: a call without k passes None, where the versions differ.
    before = _fn("x: int, k: int = None", "return x + 0 if k is None else x + k")
    after = _fn("x: int, k: int = None", "return x + (k or 0)")
    result = check_pair(before, after, "f", budget=BUDGET)
    assert result.verdict is Verdict.VERIFIED
    assert any("int | None" in a and "default None" in a for a in result.assumptions)
    different = _fn("x: int, k: int = None", "return x + k if k is not None else -x")
    refuted = check_pair(before, different, "f", budget=BUDGET)
    assert refuted.verdict is Verdict.REFUTED


EQUIVALENT: list[tuple[str, str, str]] = [
    ("same-default", _fn("x: int, k: int = 2", "return x * k"),
     _fn("x: int, k: int = 2", "return k * x")),
    ("same-keyword-only", _fn("x: int, *, k: int = 2", "return x * k"),
     _fn("x: int, *, k: int = 2", "return x + x * (k - 1)")),
    ("same-positional-only", _fn("x: int, /, k: int = 2", "return x - k"),
     _fn("x: int, /, k: int = 2", "return -(k - x)")),
    ("default-from-a-constant", "K = 2\n" + _fn("x: int, k: int = K", "return x * k"),
     _fn("x: int, k: int = 2", "return x * k")),
]


@pytest.mark.parametrize(("before", "after"), [(b, a) for _, b, a in EQUIVALENT],
                         ids=[n for n, _, _ in EQUIVALENT])
def test_an_unchanged_signature_is_still_verified(before: str, after: str) -> None:
    result = check_pair(before, after, "f", budget=BUDGET)
    assert result.verdict is Verdict.VERIFIED, result.detail


def test_varargs_are_unsupported_not_ignored() -> None:
    same = _fn("x: int, *rest: int", "return x")
    result = check_pair(same, same, "f", budget=Budget(timeout_s=3, search=False))
    assert result.verdict is Verdict.INCONCLUSIVE
    assert "*args" in result.detail


def test_asserts_are_an_assumption() -> None:
    before = _fn("x: int", "assert x > 0", "return x")
    after = _fn("x: int", "assert 0 < x", "return x")
    result = check_pair(before, after, "f", budget=BUDGET)
    assert result.verdict is Verdict.VERIFIED
    assert "asserts are enabled (not run with python -O)" in result.assumptions
    plain = check_pair(_fn("x: int", "return x"), _fn("x: int", "return +x"), "f",
                       budget=BUDGET)
    assert not any("assert" in a for a in plain.assumptions)
