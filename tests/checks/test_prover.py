"""Tests of the prover's pieces (``pyprove``, ``pyvalues``) below ``check_pair``.

Candidates from the solver must be literals that, executed, show what the model found;
a proof must rest only on what the model covers.
"""

from __future__ import annotations

import ast
import math

import z3

from veribot.checks.lang import pyprove
from veribot.checks.lang.pyexec import Limits
from veribot.checks.lang.pytypes import FloatT
from veribot.checks.lang.pyvalues import Fresh, literal
from veribot.checks.sandbox import parse_literal
from veribot.checks.search.differential import confirm
from veribot.checks.smt import SolverLimits

SOLVER = SolverLimits(timeout_ms=2000, rlimit=20_000_000)


def _outcome(before: str, after: str) -> pyprove.Outcome:
    problem = pyprove.build(ast.parse(before), ast.parse(after), "f", None, Limits())
    return pyprove.search_bounded(problem, SOLVER)


def test_nan_in_a_model_becomes_a_nan_literal() -> None:
    x = Fresh().value(FloatT(), "x")
    solver = z3.Solver()
    solver.add(z3.fpIsNaN(x.e))  # type: ignore[attr-defined]
    assert solver.check() == z3.sat
    text = literal(solver.model(), x)
    value = parse_literal(text)
    assert isinstance(value, float) and math.isnan(value), text


def test_nan_candidate_reproduces() -> None:
    before = "def f(x: float):\n    return x == x\n"
    after = "def f(x: float):\n    return True\n"
    outcome = _outcome(before, after)
    assert outcome.kind == "candidates"
    assert any(
        confirm(before, after, "f", list(args), found_by="test") is not None
        for args in outcome.candidates
    ), outcome.candidates


def test_straight_line_proof_has_no_candidates() -> None:
    outcome = _outcome("def f(x: int):\n    return x // 2\n",
                       "def f(x: int):\n    return (x - x % 2) // 2\n")
    assert outcome.kind == "proved"
    assert not outcome.candidates


def test_loop_beyond_the_bound_is_not_a_proof() -> None:
    body = "    s = 0\n    for i in range(n):\n        s += {}\n    return s\n"
    outcome = _outcome("def f(n: int):\n" + body.format("1 if i < 7 else 2"),
                       "def f(n: int):\n" + body.format("1"))
    assert outcome.kind == "bounded"
    assert outcome.line == 3
