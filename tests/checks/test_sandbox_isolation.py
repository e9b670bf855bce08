"""The sandbox's escape probes (``veribot.checks.sandbox.selftest``) as tests.

Every probe must fail in the mode this machine runs (root: bwrap privileged and a fresh
uid; not root: a user namespace), and a deliberately weakened sandbox must be caught, so
the probes can fail.
"""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from veribot.checks.sandbox import SandboxError, isolation, run_calls, selftest, weakened
from veribot.checks.verdict import BehaviourKind


def _isolation_or_skip() -> str:
    try:
        return isolation()
    except SandboxError as exc:
        pytest.skip(f"no bubblewrap here ({exc}); CI installs it (.ci/run)")


@pytest.fixture
def data_dir() -> Iterator[Path]:
    """A stand-in for the App's data directory: readable by anyone if it were reachable.

    Directly under /tmp, so that a weakened sandbox can bind it where the probe looks
    (bwrap makes /tmp 0755 in the child; deeper folders it would make 0700).
    """
    folder = Path(tempfile.mkdtemp(prefix="veribot-test-data-", dir="/tmp"))
    (folder / "key.pem").write_text("-----BEGIN PRIVATE KEY-----\n", encoding="utf-8")
    folder.chmod(0o755)
    (folder / "key.pem").chmod(0o644)
    yield folder
    shutil.rmtree(folder)


def test_every_probe_fails(data_dir: Path) -> None:
    _isolation_or_skip()
    result = selftest.run(secret_paths=(data_dir, data_dir / "key.pem"))
    assert result.ok, result.report()
    names = {p.name for p in result.probes}
    assert {
        "read a 0600 file outside its folder",
        "read a 0644 file outside its folder",
        "read another job's folder",
        "read another process's environment (/proc/<pid>/environ)",
        "find secrets in its own environment",
        "connect to 127.0.0.1",
        "signal a process outside the sandbox",
        "write outside its folder",
        "leave shared memory visible to the host",
        "gain privileges (setuid binaries, capabilities, root)",
        "create a nested user namespace",
        "hold memory outside the memory limit",
        f"reach {data_dir}",
        f"reach {data_dir / 'key.pem'}",
    } <= names
    assert result.reason() == ""


def test_a_bound_data_directory_is_caught(data_dir: Path) -> None:
    _isolation_or_skip()
    with weakened("--ro-bind", str(data_dir), str(data_dir)):
        result = selftest.run(secret_paths=(data_dir,))
    assert not result.ok
    assert result.escaped == [f"reach {data_dir}"]
    assert "could reach" in result.reason() and str(data_dir) in result.reason()


def test_a_shared_network_is_caught() -> None:
    _isolation_or_skip()
    with weakened("--share-net"):
        result = selftest.run()
    assert "connect to 127.0.0.1" in result.escaped, result.report()


def test_a_leaked_variable_is_caught() -> None:
    _isolation_or_skip()
    with weakened("--setenv", "GITHUB_TOKEN", "ghs_fake"):
        result = selftest.run()
    assert "find secrets in its own environment" in result.escaped, result.report()


def test_an_unusable_sandbox_turns_execution_off_with_the_reason() -> None:
    result = selftest.SelfTest("none", error="no isolation: bubblewrap (bwrap) is not installed")
    assert not result.ok
    assert result.reason() == (
        "Code execution is off: no isolation: bubblewrap (bwrap) is not installed."
    )


def test_without_user_namespaces_the_check_fails_and_says_why(tmp_path: Path) -> None:
    # A machine where an unprivileged user cannot create user namespaces (a container run
    # without them): the self-test runs as uid 1000 in a namespace that forbids more. Only
    # its own temporary folder is writable (not a tmpfs over /tmp, which would hide an
    # interpreter or checkout that lives there).
    _isolation_or_skip()
    bwrap = shutil.which("bwrap") or "/usr/bin/bwrap"
    path = os.pathsep.join(p for p in sys.path if p)
    done = subprocess.run(
        [bwrap, "--unshare-user", "--disable-userns", "--uid", "1000", "--gid", "1000",
         "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
         "--bind", str(tmp_path), str(tmp_path),
         "--", sys.executable, "-m", "veribot.checks.sandbox.selftest"],
        capture_output=True, text=True, timeout=120,
        env={"PYTHONPATH": path, "TMPDIR": str(tmp_path)},
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert "isolation: none" in done.stdout
    assert "NOT OK: Code execution is off: no isolation for the code under review: " \
        "bubblewrap cannot isolate a process here: bwrap: " in done.stdout


def test_the_job_files_are_read_only_and_the_folder_is_bounded() -> None:
    _isolation_or_skip()
    source = (
        "import os\n"
        "def f(n):\n"
        "    try:\n"
        "        open(__file__, 'a').write('#')\n"
        "        wrote = 'subject written'\n"
        "    except OSError as exc:\n"
        "        wrote = type(exc).__name__\n"
        "    total = 0\n"
        "    try:\n"
        "        for i in range(n):\n"
        "            with open(f'fill{i}', 'wb') as out:\n"
        "                out.write(b'x' * 1_000_000)\n"
        "            total += 1\n"
        "    except OSError as exc:\n"
        "        return wrote, total, exc.errno\n"
        "    return wrote, total, None\n"
    )
    from veribot.checks.sandbox import Limits

    [b] = run_calls(source, "f", [["100"]], limits=Limits(disk_mb=8, wall_s=20, call_s=10))
    assert b.kind is BehaviourKind.RETURNED, b
    wrote, total, err = ast.literal_eval(b.text)
    assert wrote in ("OSError", "PermissionError")  # bound read-only (EROFS), not its own
    assert total < 9 and err == 28  # ENOSPC once the 8 MB tmpfs is full


def test_the_parent_environment_is_not_inherited(monkeypatch: pytest.MonkeyPatch) -> None:
    _isolation_or_skip()
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-fake")
    [b] = run_calls("import os\ndef f():\n    return dict(os.environ)\n", "f", [[]])
    # A plain process's variables (a login shell's), none of the parent's.
    assert "ANTHROPIC_API_KEY" not in b.text and "sk-ant-fake" not in b.text
    for name in ("'PATH': '/usr/local/bin:/usr/bin:/bin'", "'LANG': 'C.UTF-8'", "'TZ': 'UTC'",
                 "'HOME'", "'TMPDIR'"):
        assert name in b.text
    assert os.environ["ANTHROPIC_API_KEY"] == "sk-ant-fake"
