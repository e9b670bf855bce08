"""Escape probes run through the real sandbox: proof that the isolation holds, or why not.

``run()`` plants secrets outside the child's folder (a 0600 and a 0644 file, another job's
folder, a process whose environment holds a token, a listening socket on 127.0.0.1 and an
abstract unix socket), then runs one script in the sandbox, exactly as the engine runs the
code under review but without the audit hook (it is not a boundary, so the probes test the
kernel's), which tries to reach each of them, to write outside its folder, to leave a
shared-memory segment behind, to signal a process outside, and to gain privileges (setuid,
capabilities, a new user namespace), and to hold kernel memory outside its memory limit
(SysV shared memory, thousands of open sockets). Evidence is taken on both sides: what
the child read must contain the planted token, and the host checks for the file, segment,
connection or signal the child tried to leave. ``SelfTest.ok`` is true only if the
probes ran and none escaped; the App's worker and the Action turn code execution off
otherwise, and ``SelfTest.reason`` says why in every summary. (The audit hook can be
switched off from inside, through ``gc``; nothing relies on it any more, so no probe
tries.)

``at_start()`` runs the probes once per process: the Action calls it, the worker runs
``run((data_dir,))`` when it starts; both hand the result to
``veribot.bot.worker.sandbox_checked``.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import functools
import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import sysconfig
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from veribot.checks.sandbox import Limits, SandboxError, isolation, run_script

_MARKER = "@@veribot-selftest@@"
_LIMITS = Limits(wall_s=30.0, call_s=30.0, cpu_s=20)
_IPC_CREAT = 0o1000
_IPC_RMID = 0


@dataclass(frozen=True)
class Probe:
    """One escape attempt: ``escaped`` with what was reached, or how it was stopped."""

    name: str
    escaped: bool
    detail: str


@dataclass(frozen=True)
class SelfTest:
    """The outcome of the probes (``error``: the sandbox could not run them at all)."""

    isolation: str
    probes: tuple[Probe, ...] = ()
    error: str | None = None

    @property
    def escaped(self) -> list[str]:
        return [p.name for p in self.probes if p.escaped]

    @property
    def ok(self) -> bool:
        return self.error is None and bool(self.probes) and not self.escaped

    def reason(self) -> str:
        """One sentence for the summaries when ``ok`` is false ("" when it is true)."""
        if self.error is not None:
            return f"Code execution is off: {self.error}."
        if self.escaped:
            return ("Code execution is off: the sandbox self-test found that the code under "
                    f"review could {'; '.join(self.escaped)}.")
        return ""

    def report(self) -> str:
        """The probes, one per line, for ``veribot sandbox-check``."""
        lines = [f"isolation: {self.isolation}"]
        if self.error is not None:
            lines.append(f"error: {self.error}")
        for probe in self.probes:
            status = "ESCAPED" if probe.escaped else "held"
            lines.append(f"{status:8} {probe.name}: {probe.detail}")
        lines.append("ok: isolation holds" if self.ok else f"NOT OK: {self.reason()}")
        return "\n".join(lines)


def run(secret_paths: Sequence[Path] = ()) -> SelfTest:
    """Run every probe through the sandbox; ``secret_paths`` are more things the child must
    not reach (the data directory, a key file): reading or listing any is an escape."""
    try:
        how = isolation()
    except SandboxError as exc:
        return SelfTest("none", error=str(exc))
    with _planted() as plant:
        spec = {**plant.spec, "secret_paths": [str(p) for p in secret_paths]}
        try:
            run_ = run_script(_PROBES, {"probe.json": json.dumps(spec)}, limits=_LIMITS,
                              allow_ctypes=True, audit_hook=False)
        except SandboxError as exc:
            return SelfTest(how, error=str(exc))
        found = [line for line in run_.stdout.splitlines() if line.startswith(_MARKER)]
        if run_.timed_out or not found:
            tail = run_.stderr.strip().splitlines()[-1:] or [f"status {run_.returncode}"]
            return SelfTest(how, error=f"the self-test's probes did not run: {tail[0][:200]}")
        raw = json.loads(found[-1][len(_MARKER):])
        probes = [Probe(str(p["name"]), bool(p["escaped"]), str(p["detail"])[:300]) for p in raw]
        probes.extend(plant.host_evidence())
    return SelfTest(how, tuple(_merge(probes)))


@functools.cache
def at_start() -> SelfTest:
    """``run()`` once per process: what the Action and the worker check before any review."""
    return run()


def _merge(probes: list[Probe]) -> list[Probe]:
    """One line per probe name: escaped if either side saw an escape."""
    merged: dict[str, Probe] = {}
    for probe in probes:
        seen = merged.get(probe.name)
        if seen is None or (probe.escaped and not seen.escaped):
            merged[probe.name] = probe
    return list(merged.values())


class _Plant:
    """The secrets and the listeners the probes try to reach, and the host-side evidence."""

    def __init__(self, base: str, other_job: str, token: str) -> None:
        self.token = token
        self.base = base
        self.other_job = other_job
        self.decoy = subprocess.Popen(
            [sys.executable, "-I", "-S", "-c", "import time; time.sleep(300)"],
            env={"VERIBOT_SELFTEST_SECRET": token}, stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(8)
        self.listener.setblocking(False)
        self.abstract = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.abstract_name = f"\0veribot-selftest-{token}"
        self.abstract.bind(self.abstract_name)
        self.abstract.listen(8)
        self.abstract.setblocking(False)
        self.shm_name = f"veribot-selftest-{token}"
        self.shm_key = int(token[:7], 16)
        self.site = sysconfig.get_paths()["purelib"]
        self.spec = {
            "token": token,
            "secret_600": os.path.join(base, "secret-600"),
            "secret_644": os.path.join(base, "secret-644"),
            "other_job": other_job,
            "open_dir": os.path.join(base, "open"),
            "write_paths": [os.path.join(base, "open", f"escape-{token}"),
                            os.path.join(self.site, f"veribot-selftest-{token}.pth"),
                            f"/tmp/veribot-selftest-{token}"],
            "decoy_pid": self.decoy.pid,
            "parent_pid": os.getpid(),
            "port": self.listener.getsockname()[1],
            "abstract": self.abstract_name,
            "shm_name": self.shm_name,
            "shm_key": self.shm_key,
        }

    def host_evidence(self) -> list[Probe]:
        probes: list[Probe] = []
        written = [p for p in self.spec["write_paths"] if os.path.lexists(str(p))]
        probes.append(Probe("write outside its folder", bool(written),
                            f"created {written}" if written else "nothing appeared on the host"))
        connected = _accepted(self.listener) or _accepted(self.abstract)
        probes.append(Probe("connect to 127.0.0.1", connected,
                            "the host's listener accepted a connection" if connected
                            else "no connection reached the host"))
        time.sleep(0.05)
        signalled = self.decoy.poll() is not None
        probes.append(Probe("signal a process outside the sandbox", signalled,
                            f"the decoy process ended ({self.decoy.returncode})" if signalled
                            else "the decoy process is still running"))
        shm_file = os.path.exists(f"/dev/shm/{self.shm_name}")
        sysv = _sysv_segment(self.shm_key)
        leaked = shm_file or sysv
        probes.append(Probe("leave shared memory visible to the host", leaked,
                            f"/dev/shm file: {shm_file}, SysV segment: {sysv}"))
        return probes

    def close(self) -> None:
        self.decoy.kill()
        self.decoy.wait()
        self.listener.close()
        self.abstract.close()
        for path in self.spec["write_paths"]:
            with contextlib.suppress(OSError):
                os.unlink(str(path))
        with contextlib.suppress(OSError):
            os.unlink(f"/dev/shm/{self.shm_name}")
        _sysv_segment(self.shm_key, remove=True)


@contextlib.contextmanager
def _planted() -> Iterator[_Plant]:
    token = secrets.token_hex(16)
    base = tempfile.mkdtemp(prefix="veribot-selftest-")
    other_job = tempfile.mkdtemp(prefix="veribot-sandbox-")
    plant: _Plant | None = None
    try:
        os.chmod(base, 0o755)  # only each file's own mode (or its absence) protects it
        os.chmod(other_job, 0o755)
        for name, mode in (("secret-600", 0o600), ("secret-644", 0o644)):
            path = os.path.join(base, name)
            Path(path).write_text(f"secret {token}\n", encoding="utf-8")
            os.chmod(path, mode)
        os.mkdir(os.path.join(base, "open"))
        os.chmod(os.path.join(base, "open"), 0o777)
        job_file = os.path.join(other_job, "subject.py")
        Path(job_file).write_text(f"TOKEN = {token!r}\n", encoding="utf-8")
        os.chmod(job_file, 0o644)
        plant = _Plant(base, other_job, token)
        yield plant
    finally:
        if plant is not None:
            plant.close()
        shutil.rmtree(base, ignore_errors=True)
        shutil.rmtree(other_job, ignore_errors=True)


def _accepted(listener: socket.socket) -> bool:
    try:
        conn, _ = listener.accept()
    except (BlockingIOError, OSError):
        return False
    conn.close()
    return True


def _sysv_segment(key: int, *, remove: bool = False) -> bool:
    """Whether a SysV shared-memory segment with ``key`` exists on the host (removing it)."""
    libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
    shmid = int(libc.shmget(ctypes.c_int(key), ctypes.c_size_t(0), ctypes.c_int(0)))
    if shmid < 0:
        return False
    if remove:
        libc.shmctl(shmid, _IPC_RMID, None)
    return True


# The probes, run in the sandbox (standard library only). Each reports whether it escaped.
_PROBES = r'''
import ctypes, ctypes.util, json, os, signal, socket
spec = json.load(open("probe.json"))
token = spec["token"]
results = []

def probe(name, fn):
    try:
        escaped, detail = fn()
    except Exception as exc:
        escaped, detail = False, f"{type(exc).__name__}: {exc}"
    results.append({"name": name, "escaped": bool(escaped), "detail": str(detail)[:300]})

def read(path):
    with open(path, errors="replace") as handle:
        return handle.read()

def secret(path):
    def fn():
        text = read(path)
        return token in text, "read the planted token" if token in text else "read, no token"
    return fn

probe("read a 0600 file outside its folder", secret(spec["secret_600"]))
probe("read a 0644 file outside its folder", secret(spec["secret_644"]))

def other_job():
    names = os.listdir(spec["other_job"])
    text = read(os.path.join(spec["other_job"], "subject.py"))
    return token in text, f"listed {names}"
probe("read another job's folder", other_job)

for path in spec["secret_paths"]:
    def reach(path=path):
        if os.path.isdir(path):
            return True, f"listed {len(os.listdir(path))} entries"
        read(path)
        return True, "read it"
    probe(f"reach {path}", reach)

def environ():
    marks = (token, "VERIBOT_", "ANTHROPIC_", "GITHUB_")
    pids = {spec["decoy_pid"], spec["parent_pid"], 1}
    pids |= {int(n) for n in os.listdir("/proc") if n.isdigit()}
    leaked = []
    for pid in sorted(pids):
        try:
            text = read(f"/proc/{pid}/environ")
        except OSError:
            continue
        if any(m in text for m in marks):
            leaked.append(pid)
    return bool(leaked), f"secrets in /proc/{leaked}/environ" if leaked else (
        "no process's environment holds a secret")
probe("read another process's environment (/proc/<pid>/environ)", environ)

def own_env():
    try:  # unreadable after the switch to a fresh uid (the process is not dumpable)
        initial = {v.split("=", 1)[0] for v in read("/proc/self/environ").split("\0") if v}
        initial -= {"PWD", "LC_CTYPE"}  # bwrap's --chdir and Python's UTF-8 mode
    except OSError:
        initial = set()
    plain = {"HOME", "TMPDIR", "PWD", "PATH", "LANG", "TZ", "USER", "LOGNAME", "SHELL"}
    extra = sorted((set(os.environ) | initial) - plain - {"PYTHONHASHSEED"})
    marked = sorted(k for k, v in os.environ.items() if token in v)
    found = extra + marked
    return bool(found), f"variables {found}" if found else (
        "only a plain process's variables (PATH, HOME, LANG, TZ, ...)")
probe("find secrets in its own environment", own_env)

def connect():
    with socket.create_connection(("127.0.0.1", spec["port"]), timeout=3):
        return True, "connected"
probe("connect to 127.0.0.1", connect)

def abstract():
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(3)
        s.connect(spec["abstract"])
        return True, "connected to the host's abstract unix socket"
probe("connect to 127.0.0.1", abstract)

def kill():
    os.kill(spec["decoy_pid"], signal.SIGTERM)
    return False, "kill() returned: the host checks whether the decoy died"
probe("signal a process outside the sandbox", kill)

def write():
    done = []
    for path in spec["write_paths"]:
        try:
            with open(path, "w") as handle:
                handle.write("escaped")
            done.append(path)
        except OSError:
            pass
    return False, f"wrote {done} (the host checks whether they appeared)"
probe("write outside its folder", write)

libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)

def shm():
    fd = os.open("/dev/shm/" + spec["shm_name"], os.O_CREAT | os.O_RDWR, 0o666)
    os.close(fd)
    shmid = libc.shmget(ctypes.c_int(spec["shm_key"]), ctypes.c_size_t(4096),
                        ctypes.c_int(0o1000 | 0o666))
    return False, f"created a /dev/shm file and SysV segment {shmid} (the host checks)"
probe("leave shared memory visible to the host", shm)

def privileges():
    status = dict(line.split(":", 1) for line in read("/proc/self/status").splitlines()
                  if ":" in line)
    nnp = status.get("NoNewPrivs", "").strip()
    caps = int(status.get("CapEff", "0").strip(), 16)
    uid_map = read("/proc/self/uid_map").split()
    host_root = os.getuid() == 0 and len(uid_map) >= 2 and uid_map[1] == "0"
    setuid_files = []
    for folder in ("/usr/bin", "/usr/sbin", "/usr/local/bin"):
        try:
            names = os.listdir(folder)
        except OSError:
            continue
        for name in names:
            try:
                if os.stat(os.path.join(folder, name)).st_mode & 0o6000:
                    setuid_files.append(name)
            except OSError:
                pass
    suid_mounts = [line.split()[4] for line in read("/proc/self/mountinfo").splitlines()
                   if "nosuid" not in line.split()[5].split(",")]
    escaped = nnp != "1" or caps != 0 or host_root
    try:
        os.setuid(0)
        escaped = True
        became = "setuid(0) succeeded"
    except OSError:
        became = "setuid(0) refused"
    return escaped, (f"NoNewPrivs {nnp}, CapEff {caps:#x}, host root {host_root}, {became}; "
                     f"{len(setuid_files)} setuid/setgid files visible, useless without "
                     f"new privileges; mounts without nosuid: {suid_mounts}")
probe("gain privileges (setuid binaries, capabilities, root)", privileges)

def userns():
    if libc.unshare(0x10000000) == 0:
        return True, "unshare(CLONE_NEWUSER) succeeded"
    return False, f"unshare(CLONE_NEWUSER): {os.strerror(ctypes.get_errno())}"
probe("create a nested user namespace", userns)

def memory():
    # Kernel memory RLIMIT_AS does not count: a SysV segment keeps its pages once detached,
    # and every open socket pair or memfd holds some.
    shmid = libc.shmget(ctypes.c_int(0), ctypes.c_size_t(1 << 20), ctypes.c_int(0o1000 | 0o600))
    if shmid >= 0:
        libc.shmctl(shmid, 0, None)
        return True, "created a SysV shared-memory segment"
    import resource
    files = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    if files == resource.RLIM_INFINITY or files > 1024:
        return True, f"may open {files} files (socket and memfd buffers)"
    return False, f"shmget: {os.strerror(ctypes.get_errno())}; at most {files} open files"
probe("hold memory outside the memory limit", memory)

print("@@veribot-selftest@@" + json.dumps(results))
'''


def main() -> int:
    """``python -m veribot.checks.sandbox.selftest``: print the report, exit 1 unless ok."""
    result = run()
    print(result.report())
    return 0 if result.ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
