"""`veribot bench-model`: the conformance run from the command line, and its report."""

from __future__ import annotations

from pathlib import Path

import pytest

from veribot.bot.cli import main


def test_the_command_prints_the_figures_and_writes_the_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "report.txt"
    argv = ["bench-model", "--programs", "4", "--seed", "2", "--inputs-per-program", "5"]
    assert main([*argv, "--out", str(out)], environ={"CI": "1"}) == 0, capsys.readouterr().err
    text = capsys.readouterr().out
    assert "programs generated: 4" in text
    assert "disagreements:      0" in text
    assert "inputs compared:" in text and "time:" in text
    assert out.read_text(encoding="utf-8") == text


def test_a_bad_count_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench-model", "--programs", "0"], environ={"CI": "1"}) == 2
    assert "must be at least 1" in capsys.readouterr().err
