"""CrossHair's diff_behavior, run in the sandbox, finds and confirms a difference."""

from __future__ import annotations

from veribot.checks.lang.pytypes import parse_type
from veribot.checks.sandbox import Limits
from veribot.checks.search.crosshair import search


def test_crosshair_finds_a_boundary_difference() -> None:
    before = "def over(x):\n    return x > 5\n"
    after = "def over(x):\n    return x >= 5\n"
    outcome = search(before, after, "over", {"x": parse_type("int")}, deadline_s=8,
                     limits=Limits(call_s=0.5))
    cex = outcome.counterexample
    assert cex is not None, outcome.note
    assert cex.found_by == "crosshair"
    assert cex.args == ("5",)
    assert cex.before.text == "False" and cex.after.text == "True"


def test_crosshair_reports_a_version_that_does_not_load() -> None:
    outcome = search("def f(x):\n    return x\n", "def f(x):\n    return (\n", "f",
                     {"x": parse_type("int")}, deadline_s=6, limits=Limits(call_s=0.5))
    assert outcome.counterexample is None
    assert "could not be loaded" in outcome.note
