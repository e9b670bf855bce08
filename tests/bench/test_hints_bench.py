"""The hints benchmark: hints written from the code's text, checked by the engine."""

from __future__ import annotations

import io
import json

from tests.checks.test_hints import AFTER, AFTER_FAR, BEFORE
from veribot.bench.hints import run, write_hints


def test_the_writer_guesses_like_a_model_right_and_wrong() -> None:
    written = write_hints(BEFORE, AFTER, "total")
    exprs = [h.get("expr") for h in written]
    assert {"kind": "correspondence", "variables": {"s": "s"}} in written
    assert "before.i + after.j == before.n" in exprs  # right
    assert "before.i == after.j" in exprs  # wrong
    assert write_hints("def total(:", AFTER, "total") == []


def test_hints_complete_the_equivalent_pair_and_never_the_different_one() -> None:
    records = [
        {"id": "eq", "label": "equivalent", "entry": "total", "before": BEFORE, "after": AFTER},
        {"id": "far", "label": "different", "entry": "total", "before": BEFORE,
         "after": AFTER_FAR},
    ]
    out = io.StringIO()
    summary = run(records, timeout_s=10, out=out)
    rows = [json.loads(line) for line in out.getvalue().splitlines()]
    assert rows[0]["engine"] == ["inconclusive", "loop-bound"]
    assert rows[0]["with_hints"] == ["verified", "proof"]
    assert rows[0]["method"].startswith("z3+hints")
    assert summary["proven_with_hints"]["equivalent"] == 1
    assert summary["proven_with_hints"]["different"] == 0 and summary["wrong"] == 0
    assert summary["hints"]["refuted"] > 0
