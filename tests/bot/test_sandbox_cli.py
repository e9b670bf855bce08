"""`veribot sandbox-check`, and `veribot compare` where the code cannot be isolated."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from veribot.bot.cli import EXIT_OK, main
from veribot.checks.sandbox import SandboxError, isolation


def _bwrap_or_skip() -> str:
    try:
        isolation()
    except SandboxError as exc:
        pytest.skip(f"no bubblewrap here ({exc}); CI installs it (.ci/run)")
    return shutil.which("bwrap") or "/usr/bin/bwrap"


def test_sandbox_check_prints_every_probe(capsys: pytest.CaptureFixture[str]) -> None:
    _bwrap_or_skip()
    assert main(["sandbox-check"], environ={}) == EXIT_OK
    out = capsys.readouterr().out
    assert "held     connect to 127.0.0.1" in out
    assert out.rstrip().endswith("ok: isolation holds")


def test_compare_refuses_to_execute_without_isolation(tmp_path: Path) -> None:
    bwrap = _bwrap_or_skip()
    before, after = tmp_path / "a.py", tmp_path / "b.py"
    before.write_text("def f(x):\n    return x + 1\n")
    after.write_text("def f(x):\n    return x + 2\n")
    tmp_path.chmod(0o755)
    path = os.pathsep.join(p for p in sys.path if p)

    def compare(*extra: str) -> subprocess.CompletedProcess[str]:
        # As uid 1000 in a user namespace that allows no more: bwrap cannot work there.
        return subprocess.run(
            [bwrap, "--unshare-user", "--disable-userns", "--uid", "1000", "--gid", "1000",
             "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
             "--", sys.executable, "-m", "veribot.bot.cli", "compare", str(before),
             str(after), *extra],
            capture_output=True, text=True, timeout=300, env={"PYTHONPATH": path},
        )

    refused = compare()
    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert "bubblewrap cannot isolate a process here" in refused.stderr
    assert "--no-execute for a proof-only review" in refused.stderr
    proof_only = compare("--no-execute")
    assert proof_only.returncode in (0, 1), proof_only.stderr
    assert "f" in proof_only.stdout
