"""The long differential run over verified units: it can find a wrong verdict, and it
says what it exercised."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.bench.test_real import _bundle
from veribot.bot.cli import main


def _records(tmp_path: Path, head: str, units: list[str]) -> Path:
    path = tmp_path / "units.jsonl"
    path.write_text("".join(
        json.dumps({"repo": "demo", "commit": head, "intent": "refactor", "unit": u,
                    "verdict": "verified"}) + "\n" for u in units))
    return path


def test_a_verified_unit_that_differs_is_reported_wrong(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repos, head = _bundle(tmp_path)
    # `dec` really changed (x - 1 became x - 2): a records file claiming it verified is
    # what a wrong verdict would look like; `inc` (x + 1 became 1 + x) is the same.
    records = _records(tmp_path, head, ["mod.py::inc", "mod.py::dec"])
    out = tmp_path / "soak.jsonl"
    code = main(["bench-soak", str(records), "--repos", str(repos), "--rounds", "1",
                 "--inputs", "50", "--seconds", "5", "--out", str(out)])
    assert code == 1
    rows = {r["unit"]: r for r in map(json.loads, out.read_text().splitlines())}
    assert rows["mod.py::dec"]["wrong"] is True
    assert "before version returns" in rows["mod.py::dec"]["difference"]
    assert rows["mod.py::inc"]["wrong"] is False
    assert rows["mod.py::inc"]["random"] > 0
    printed = capsys.readouterr().out
    assert "WRONG (a difference reproduced): 1" in printed
    assert "mod.py::dec" in printed


def test_an_unreadable_records_file_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "units.jsonl"
    bad.write_text("{not json\n")
    code = main(["bench-soak", str(bad), "--repos", str(tmp_path)])
    assert code == 2
    assert "cannot read" in capsys.readouterr().err
