"""Adversarial pairs that used to crash the engine: long ``elif`` chains, huge literals.

A long ``elif`` chain is a deep AST (each ``elif`` nests in the ``else`` of the one before)
and ``ast.dump`` recursed through it; integers beyond 4,300 decimal digits cannot go
through ``str`` (``z3.IntVal``, ``as_long``, ``repr``). Every pair must end in a verdict:
a proof, a refutation, or inconclusive with a reason; the command line must not fail.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from pathlib import Path

import pytest

from veribot.bot.cli import EXIT_USAGE, main
from veribot.checks.equivalence import Budget, check_pair
from veribot.checks.search.differential import confirm
from veribot.checks.verdict import Reason, Result, Verdict

# Slow cases only `python -m pytest -m heavy` runs (tests/conftest.py); the default
# run keeps this module's other cases of each family.
HEAVY_CASES: dict[str, set[str]] = {
    "test_differing_pair_is_refuted": {
        "deep-expression",
        "long-elif-chain",
    },
    "test_equivalent_pair_is_verified": {
        "many-parameters",
    },
}

BUDGET = Budget(timeout_s=10)


def _fn(params: str, *body: str) -> str:
    return f"def f({params}):\n" + "".join(f"    {line}\n" for line in body)


def _elif_chain(n: int, changed: int | None = None, *, symbolic: bool = False) -> str:
    lines = []
    for i in range(n):
        value = -7 if i == changed else "x + x + x" if symbolic else i * 3
        lines += [f"{'if' if i == 0 else 'elif'} x == {i}:", f"    return {value}"]
    return _fn("x: int", *lines, "return -1")


BIG = "0x" + "f" * 5000  # 20,000 bits: beyond 4,300 decimal digits
DEEP_SUM = "x" + " + 1" * 1500


def _differs(before: str, after: str, args: Sequence[str]) -> bool:
    return confirm(before, after, "f", list(args), found_by="test") is not None


def _assert_refuted(result: Result, before: str, after: str) -> None:
    assert result.verdict is Verdict.REFUTED, (result.reason, result.detail)
    assert result.counterexample is not None
    assert _differs(before, after, result.counterexample.args)


DIFFERENT: list[tuple[str, str, str]] = [
    ("long-elif-chain", _elif_chain(300), _elif_chain(300, changed=299)),
    ("huge-hex-constant", f"BIG = {BIG}\n" + _fn("x: int", "return x + BIG"),
     f"BIG = {BIG}\n" + _fn("x: int", "return x + BIG + 1")),
    ("huge-literal-as-input", _fn("x: int", f"return x == {BIG}"),
     _fn("x: int", "return False")),
    ("huge-product", _fn("x: int", f"return x * {'9' * 3000} * {'9' * 3000}"),
     _fn("x: int", f"return x * {'9' * 3000} * {'9' * 2999}8")),
    ("huge-power", _fn("x: int", "return x + 10**5000"),
     _fn("x: int", "return x + 10**5000 + 1")),
    ("float-literal-overflows", _fn("x: float", "return x - 1e400"),
     _fn("x: float", "return x + 1e400")),
    ("deep-expression", _fn("x: int", f"return {DEEP_SUM}"), _fn("x: int", "return x + 1499")),
]


@pytest.mark.parametrize(("before", "after"), [d[1:] for d in DIFFERENT],
                         ids=[d[0] for d in DIFFERENT])
def test_differing_pair_is_refuted(before: str, after: str) -> None:
    _assert_refuted(check_pair(before, after, "f", budget=BUDGET), before, after)


EQUIVALENT: list[tuple[str, str, str]] = [
    ("long-elif-chain", _elif_chain(300), _elif_chain(300, symbolic=True)),
    ("constant-power", _fn("x: int", "return x + 10**50"),
     _fn("x: int", f"return x + {10**50}")),
    ("huge-hex-constant", f"BIG = {BIG}\n" + _fn("x: int", "return x - BIG"),
     _fn("x: int", f"return x - {BIG}")),
    ("float-literal-overflows", _fn("x: float", "return x + 1e400"),
     _fn("x: float", "return x + 1e300 * 1e300")),
    ("many-parameters", _fn(", ".join(f"a{i}: int" for i in range(200)), "return a0 + a199"),
     _fn(", ".join(f"a{i}: int" for i in range(200)), "return a199 + a0")),
    # The same with fewer parameters, for the default run (200 take over a minute).
    ("many-parameters-40", _fn(", ".join(f"a{i}: int" for i in range(40)), "return a0 + a39"),
     _fn(", ".join(f"a{i}: int" for i in range(40)), "return a39 + a0")),
]


@pytest.mark.parametrize(("before", "after"), [e[1:] for e in EQUIVALENT],
                         ids=[e[0] for e in EQUIVALENT])
def test_equivalent_pair_is_verified(before: str, after: str) -> None:
    result = check_pair(before, after, "f", budget=BUDGET)
    assert result.verdict is Verdict.VERIFIED, (result.reason, result.detail)


def test_too_deep_to_model_is_inconclusive_with_a_reason() -> None:
    source = _fn("x: int", f"return {DEEP_SUM}")
    result = check_pair(source, _fn("x: int", "return x + 1500"), "f",
                        budget=Budget(timeout_s=30, search=False))
    assert result.verdict is Verdict.INCONCLUSIVE
    assert "deeply" in result.detail


def test_too_deep_for_python_is_a_parse_error() -> None:
    source = _elif_chain(3000)  # CPython's own parser gives up on this
    result = check_pair(source, source, "f", budget=Budget(timeout_s=3))
    assert result.verdict is Verdict.INCONCLUSIVE
    assert result.reason == Reason.PARSE_ERROR


@pytest.mark.parametrize(("before", "after"), [
    (_elif_chain(300), _elif_chain(300, changed=299)),
    (f"BIG = {BIG}\n" + _fn("x: int", "return x + BIG"),
     f"BIG = {BIG}\n" + _fn("x: int", "return x + BIG + 1")),
], ids=["long-elif-chain", "huge-hex-constant"])
def test_compare_command_gives_a_verdict(tmp_path: Path, before: str, after: str) -> None:
    a, b = tmp_path / "before.py", tmp_path / "after.py"
    a.write_text(before)
    b.write_text(after)
    out, err = io.StringIO(), io.StringIO()
    code = main(["compare", str(a), str(b), "--timeout", "10"], environ={}, stdout=out,
                stderr=err)
    assert code != EXIT_USAGE, err.getvalue()
    assert "internal error" not in out.getvalue() + err.getvalue()
    assert "refuted" in out.getvalue()
