"""Smoke test of the webhook latency benchmark: a real `veribot serve`, five deliveries."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from veribot.bench.webhook import DEFAULT_PAYLOADS, BenchConfig, run
from veribot.bot.cli import main


def test_five_pull_request_deliveries_are_queued_and_reported(tmp_path: Path) -> None:
    for example in DEFAULT_PAYLOADS.glob("pull_request.opened.*.json"):
        shutil.copy(example, tmp_path)
    result = run(BenchConfig(deliveries=5, rounds=1, threads=2, payloads=tmp_path))
    assert [s.status for s in result.samples] == [202] * 5  # each one enqueued
    assert result.non_2xx == 0
    assert all(0 < s.latency_s < 10 for s in result.samples)


def test_the_command_prints_percentiles_and_the_non_2xx_count(
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = ["bench-webhook", "--deliveries", "5", "--rounds", "1", "--threads", "2"]
    assert main(argv, environ={"CI": "1"}) == 0, capsys.readouterr().err
    text = capsys.readouterr().out
    assert "5 signed deliveries (1 rounds x 5 concurrent)" in text
    (overall,) = re.findall(
        r"^all +n=5 +p50 +([\d.]+) ms +p99 +([\d.]+) ms +max +([\d.]+) ms$", text, re.M
    )
    p50, p99, worst = map(float, overall)
    assert 0 < p50 <= p99 <= worst
    assert "non-2xx: 0" in text.splitlines()
