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
    # No annotation: values of common kinds are tried (more-itertools 87e5c5b).
    ("renamed-unannotated", _fn("xs, pred=bool", "return sum(map(pred, xs))"),
     _fn("xs, predicate=bool", "return sum(map(predicate, xs))"), "pred="),
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


def test_varargs_are_a_tuple_of_any_length() -> None:
    same = _fn("x: int, *rest: int", "return x")
    result = check_pair(same, same, "f", budget=Budget(timeout_s=6, search=False))
    assert result.verdict is Verdict.VERIFIED, result.detail
    assert any("`*rest`: tuple[int, ...], of any length" in a for a in result.assumptions)


# (name, before, after): differ only through `*args` or what follows it; the model's
# input must reach the code as a real call would (items spread, keyword-only by name).
STARRED: list[tuple[str, str, str]] = [
    ("extra-arguments-ignored", _fn("x: int, *rest: int", "return x"),
     _fn("x: int, *rest: int", "return x + len(rest)")),
    ("only-from-five-items", _fn("*xs: int", "return len(xs)"),
     _fn("*xs: int", "return len(xs) if len(xs) < 5 else 0")),
    ("an-item-read", _fn("*xs: int", "return xs[-1] if xs else 0"),
     _fn("*xs: int", "return xs[0] if xs else 0")),
    ("keyword-only-after-it", _fn("*xs: int, k: int = 1", "return len(xs) * k"),
     _fn("*xs: int, k: int = 1", "return len(xs) * k + (k == 3)")),
    ("a-helper-called-with-extra-arguments",
     "def g(a: int, *v: int) -> int:\n    return a + len(v)\n" + _fn("x: int", "return g(x, x, x)"),
     "def g(a: int, *v: int) -> int:\n    return a + len(v)\n" + _fn("x: int", "return x + 1")),
]


@pytest.mark.parametrize(("before", "after"), [(b, a) for _, b, a in STARRED],
                         ids=[n for n, _, _ in STARRED])
def test_a_difference_through_varargs_is_refuted(before: str, after: str) -> None:
    # Without random search: the solver's own input must reach the code as a call would.
    result = check_pair(before, after, "f", budget=Budget(timeout_s=6, search=False))
    assert result.verdict is Verdict.REFUTED, result.detail


def test_keyword_varargs_and_unannotated_varargs_are_not_proven() -> None:
    for params in ("x: int, **kw: int", "x: int, *rest"):
        same = _fn(params, "return x")
        result = check_pair(same, same, "f", budget=Budget(timeout_s=3, search=False))
        assert result.verdict is Verdict.INCONCLUSIVE, result.detail


def test_asserts_are_an_assumption() -> None:
    before = _fn("x: int", "assert x > 0", "return x")
    after = _fn("x: int", "assert 0 < x", "return x")
    result = check_pair(before, after, "f", budget=BUDGET)
    assert result.verdict is Verdict.VERIFIED
    assert "asserts are enabled (not run with python -O)" in result.assumptions
    plain = check_pair(_fn("x: int", "return x"), _fn("x: int", "return +x"), "f",
                       budget=BUDGET)
    assert not any("assert" in a for a in plain.assumptions)


def test_a_module_that_fails_when_imported_refutes_nothing() -> None:
    # The before module raises while it is imported (toolz 85326bd's parent, a circular
    # import): the function was never called, so no call shows a difference of it.
    before = _fn("xs, pred=bool", "return sum(map(pred, xs))") + "_broken = undefined_name\n"
    after = _fn("xs, pred=bool", "return sum(map(pred, xs))") + "_fine = 1\n"
    result = check_pair(before, after, "f", budget=BUDGET)
    assert result.verdict is not Verdict.REFUTED, result.detail


# A parameter of a declared type the type tree does not model gets values of that type
# only: `[]` is no `dict`, `bytes` or `Path` (issue 24, class 4).
IN_DOMAIN: list[tuple[str, str, str, tuple[str, ...]]] = [
    ("dict", "d: dict, k: int", "d: dict, key: int", ("{}",)),
    ("mapping", "d: 'Mapping[str, int]', k: int", "d: 'Mapping[str, int]', key: int", ("{}",)),
    ("bytes", "b: bytes, k: int", "b: bytes, key: int", ("b''", "b'a'")),
]


@pytest.mark.parametrize(("before", "after", "values"),
                         [(_fn(b, "return 0"), _fn(a, "return 0"), v)
                          for _, b, a, v in IN_DOMAIN],
                         ids=[n for n, *_ in IN_DOMAIN])
def test_a_refutation_passes_only_values_of_the_declared_type(
    before: str, after: str, values: tuple[str, ...]
) -> None:
    result = check_pair(before, after, "f", budget=BUDGET)
    assert result.verdict is Verdict.REFUTED, (result.reason, result.detail)
    assert result.counterexample is not None
    first = result.counterexample.args[0].split("=", 1)[-1]
    assert first in values, result.counterexample.args


def test_a_declared_type_without_samples_makes_no_call_outside_it() -> None:
    before = _fn("p: 'pathlib.Path', k: int", "return k")
    after = _fn("p: 'pathlib.Path', key: int", "return key")
    result = check_pair("import pathlib\n" + before, "import pathlib\n" + after, "f",
                        budget=BUDGET)
    if result.counterexample is not None:
        assert "[]" not in result.counterexample.args[0], result.counterexample.args
