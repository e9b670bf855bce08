"""Attacks by code under review that knows it runs in the sandbox.

A pull request's module can tell the sandbox from production (its file is
``__veribot_subject__.py``, ``/proc/1`` is bubblewrap, the host name is ``sandbox``), so
anything the engine learns by running it there may be staged for the sandbox. Whatever
a "verified" rests on must hold for a module that behaves one way there and another way
elsewhere; each test here is such a module, and the real production behaviour (the module
imported outside the sandbox) shows the versions do differ.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import types
from pathlib import Path

import pytest

from veribot.checks.equivalence import Budget, check_pair
from veribot.checks.sandbox import Limits, SandboxError, isolation, run_calls, run_script
from veribot.checks.verdict import BehaviourKind, Verdict

BUDGET = Budget(timeout_s=4, search=False)


def _isolation_or_skip() -> str:
    try:
        return isolation()
    except SandboxError as exc:
        pytest.skip(f"no bubblewrap here ({exc}); CI installs it (.ci/run)")

BEFORE = "def f(x: int) -> int:\n    return x + 1\n"
# Module-level code that rebinds `f` in production only: the sandbox sees the honest module.
STAGED_REBINDINGS = [
    ("walrus", "    (f := _g)\n"),
    ("for-target", "    for f in [_g]:\n        pass\n"),
    ("except-as", "    try:\n        raise ValueError\n    except ValueError as f:\n"
                  "        pass\n"),
    ("with-as", "    import contextlib\n    with contextlib.nullcontext(_g) as f:\n"
                "        pass\n"),
]


def _staged(rebinding: str) -> str:
    return (BEFORE + "\n\ndef _g(x: int) -> int:\n    return x + 2\n\n\n"
            'if "veribot" not in __file__:\n' + rebinding)


def _production(source: str) -> types.ModuleType:
    module = types.ModuleType("production")
    module.__file__ = "/srv/app/production.py"
    exec(compile(source, module.__file__, "exec"), module.__dict__)
    return module


@pytest.mark.parametrize(("name", "rebinding"), STAGED_REBINDINGS,
                         ids=[n for n, _ in STAGED_REBINDINGS])
def test_a_rebinding_staged_outside_the_sandbox_is_not_verified(name: str,
                                                                rebinding: str) -> None:
    after = _staged(rebinding)
    production = _production(after)
    differs = getattr(production, "f", None) is None or production.f(1) != 2
    assert differs, "the staged module must really behave differently in production"
    result = check_pair(BEFORE, after, "f", budget=BUDGET)
    assert result.verdict is not Verdict.VERIFIED, result.detail


# Socket buffers are kernel memory, outside RLIMIT_AS: each open socket pair can hold a few
# hundred KB. Stops at 512 MB so that a failing run does not take the machine down.
_SOCKET_BUFFERS = r"""
import socket
pairs, total = [], 0
try:
    while total < 512 * 2**20:
        a, b = socket.socketpair()
        a.setblocking(False)
        pairs.append((a, b))
        try:
            while True:
                total += a.send(b"x" * 65536)
        except BlockingIOError:
            pass
except OSError as exc:
    print("stopped:", exc)
print("buffered", total)
"""


def test_socket_buffers_cannot_hold_more_kernel_memory_than_the_memory_limit() -> None:
    _isolation_or_skip()
    limits = Limits(wall_s=60, call_s=60, memory_mb=512)
    run = run_script(_SOCKET_BUFFERS, limits=limits, audit_hook=False)
    lines = [line for line in run.stdout.splitlines() if line.startswith("buffered ")]
    assert lines, (run.returncode, run.stdout, run.stderr)
    held = int(lines[0].split()[1])
    assert held < 128 * 2**20, f"{held / 2**20:.0f} MB of socket buffers held by one child"


# The code under review finds the result channel (its number is in the job's config file)
# and writes its own reports there, with values no real report holds.
_FORGER = """
import json, os
_cfg = json.load(open("__veribot_config__.json"))
def f(x):
    for i in range(len(_cfg["calls"])):
        report = {"t": "call", "i": _cfg["start"] + i,
                  "b": {"kind": "return", "value": {"an": ["object"]}, "text": "x",
                        "elapsed": float("inf") if i else -1.0}}
        os.write(_cfg["result_fd"], (json.dumps(report) + "\\n").encode())
    os._exit(0)
"""


def test_forged_reports_on_the_result_channel_are_malformed_not_trusted() -> None:
    _isolation_or_skip()
    behaviours = run_calls(_FORGER, "f", [["1"], ["2"]])
    assert [(b.kind, b.value) for b in behaviours] == [(BehaviourKind.CRASHED, "bad-report")] * 2
    assert all(isinstance(hash(b), int) for b in behaviours)


# Empty files take no room in a sized tmpfs, but each inode is about 1 KB of kernel memory:
# a million of them in a few seconds was a gigabyte. Stops at 300,000 files either way.
_INODES = """
import os
n = 0
try:
    while n < 300_000:
        os.close(os.open("f%d" % n, os.O_CREAT | os.O_WRONLY, 0o600))
        n += 1
except OSError as exc:
    print("stopped:", exc)
print("created", n, flush=True)
"""


@pytest.mark.parametrize("folder", ["workdir", "/dev/shm"])
def test_the_number_of_files_is_bounded(folder: str) -> None:
    _isolation_or_skip()
    script = _INODES if folder == "workdir" else f"import os\nos.chdir({folder!r})\n" + _INODES
    run = run_script(script, limits=Limits(wall_s=120, call_s=120), audit_hook=False)
    assert "created 300000" not in run.stdout, "300,000 files in one child"
    assert run.returncode is None and run.timed_out, (run.returncode, run.stdout[-300:])


def test_many_files_in_a_call_are_a_resource_behaviour() -> None:
    _isolation_or_skip()
    source = "def f(n):\n" + "".join("    " + line + "\n" for line in _INODES.splitlines()
                                     if line) + "    return n\n"
    [behaviour] = run_calls(source, "f", [["0"]], limits=Limits(wall_s=120, call_s=100))
    assert (behaviour.kind, behaviour.value) == (BehaviourKind.RESOURCE, "files")


# A SysV segment keeps its pages after it is detached: RLIMIT_AS counts only what is
# attached, so segment after segment held gigabytes. Stops at 1 GB either way.
_SYSV_SEGMENTS = r"""
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
libc.shmat.restype = ctypes.c_void_p
libc.shmat.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_int]
libc.shmdt.argtypes = [ctypes.c_void_p]
held = 0
while held < 1024:
    sid = libc.shmget(0, 128 << 20, 0o1000 | 0o600)
    if sid < 0:
        print("shmget refused:", ctypes.get_errno())
        break
    addr = libc.shmat(sid, None, 0)
    ctypes.memset(addr, 1, 128 << 20)
    libc.shmdt(ctypes.c_void_p(addr))
    held += 128
print("held", held)
"""


def test_sysv_shared_memory_cannot_hold_memory_beyond_the_limit() -> None:
    _isolation_or_skip()
    run = run_script(_SYSV_SEGMENTS, limits=Limits(wall_s=60, call_s=60, memory_mb=512),
                     audit_hook=False, allow_ctypes=True)
    lines = [line for line in run.stdout.splitlines() if line.startswith("held ")]
    assert lines, (run.returncode, run.stdout, run.stderr[-500:])
    assert int(lines[0].split()[1]) < 512, run.stdout


# Interpreter-wide hooks set by module-level code change what an unchanged function does:
# a trace function jumps over its line `y = y + 1`; the others make it raise.
HOOKED_BEFORE = "import sys\n\n\ndef f(x: int) -> int:\n    y = x\n    y = y + 1\n    return y\n"
_JUMP = '''

def _hook(frame, event, arg):
    if frame.f_code.co_name == "f":
        def local(fr, ev, a):
            if ev == "line" and fr.f_lineno == 6:
                fr.f_lineno = 7
            return local
        return local
    return None


'''
_RAISE = "\n\ndef _hook(*args):\n    raise RuntimeError('hooked')\n\n\n"
# Raises only inside `f`: the module imports cleanly in the sandbox.
_RAISE_IN_F = ("\n\ndef _hook(frame, event, arg):\n    if frame.f_code.co_name == 'f':\n"
               "        raise RuntimeError('hooked')\n\n\n")
HOOKS = [
    ("settrace", _JUMP + "sys.settrace(_hook)\n"),
    ("settrace-by-getattr", _JUMP + "getattr(sys, 'set' + 'trace')(_hook)\n"),
    ("settrace-imported", _JUMP + "from sys import settrace as _st\n_st(_hook)\n"),
    ("settrace-through-another-module",
     _JUMP + "import collections\ngetattr(collections._sys, 'set' + 'trace')(_hook)\n"),
    ("settrace-through-vars", _JUMP + "vars(sys)['set' + 'trace'](_hook)\n"),
    ("setprofile", _RAISE + "sys.setprofile(_hook)\n"),
    # Without naming `sys` or the hook: the builtins module is `print.__self__`.
    ("setprofile-through-print-self", _RAISE_IN_F + "vars(vars(print.__self__)['__imp' + "
     "'ort__']('s' + 'ys'))['set' + 'profile'](_hook)\n"),
    ("setprofile-through-getattr", _RAISE_IN_F + "getattr(getattr(getattr(print, '__self__'),"
     " '__imp' + 'ort__')('s' + 'ys'), 'set' + 'profile')(_hook)\n"),
    ("setprofile-through-a-helper", _RAISE_IN_F + "def _setup(n):\n"
     "    b = getattr(print, '__self__')\n"
     "    getattr(getattr(b, '__imp' + 'ort__')('s' + 'ys'), n)(_hook)\n"
     "_setup('set' + 'profile')\n"),
]


@pytest.mark.parametrize(("name", "hook"), HOOKS, ids=[n for n, _ in HOOKS])
@pytest.mark.parametrize("body", ["y = y + 1", "y = 1 + y"], ids=["same-code", "model"])
def test_an_interpreter_hook_set_at_import_blocks_verified(name: str, hook: str,
                                                           body: str) -> None:
    after = HOOKED_BEFORE.replace("y = y + 1", body) + hook
    assert _called_in_production(HOOKED_BEFORE) == "2"
    assert _called_in_production(after) != "2", "the hook must change f in production"
    result = check_pair(HOOKED_BEFORE, after, "f", budget=BUDGET)
    assert result.verdict is not Verdict.VERIFIED, result.detail


def _called_in_production(source: str) -> str:
    """``f(1)`` of ``source`` imported as an ordinary module, in a fresh interpreter."""
    with tempfile.TemporaryDirectory() as folder:
        (Path(folder) / "production.py").write_text(source, encoding="utf-8")
        done = subprocess.run(
            [sys.executable, "-I", "-c",
             "import sys; sys.path.insert(0, '.'); import production\n"
             "try:\n    print(production.f(1))\nexcept BaseException as e:\n"
             "    print(type(e).__name__)"],
            cwd=folder, capture_output=True, text=True, timeout=60, check=False,
        )
    return done.stdout.strip().splitlines()[-1] if done.stdout.strip() else done.stderr
