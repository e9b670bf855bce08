"""Execute untrusted code in a contained child process, to confirm counterexamples.

``run_calls`` imports one module source in a child and calls one function on many inputs,
returning a ``Behaviour`` per call; ``run_script`` runs a script (a search driver) and
returns its output. Untrusted-code misbehaviour never raises here: it becomes a
behaviour (HUNG, RESOURCE, CRASHED) or a ``SandboxRun`` with ``timed_out``/returncode.
``SandboxError`` is raised only when the sandbox itself cannot work (cannot start
the interpreter, cannot set up isolation).

What is enforced, by whom (see ``_bwrap`` for the two modes, root and not root):

======================  =====================================================
concern                 mechanism
======================  =====================================================
isolation               bubblewrap: new user (not root) or a fresh uid (root),
                        pid, ipc, network, uts and cgroup namespaces;
                        no-new-privileges; a seccomp filter (no new namespaces,
                        mounts, ptrace, keyrings, BPF, io_uring, SysV
                        IPC...); an empty
                        environment; the child dies with its parent
files                   a read-only root with only the Python installation, a
                        private ``/proc`` and ``/dev``; the job's files bound
                        read-only into a tmpfs of ``disk_mb`` (total disk),
                        the only writable place; nothing else of the host
wall clock              the parent kills bwrap at the limit; the pid namespace
                        ends with it, every descendant included
per call                ``setitimer`` + SIGALRM in the child raises a
                        BaseException (re-fired every 50 ms); a call the timer
                        cannot stop (C code) is killed by the parent a second
                        later and the remaining calls run in a fresh child
CPU                     RLIMIT_CPU (SIGXCPU, then SIGKILL one second later)
memory                  RLIMIT_AS (``MemoryError`` or death by SIGKILL)
file size               RLIMIT_FSIZE, SIGXFSZ ignored (a write raises EFBIG)
files                   at most ``MAX_FILES`` inodes in each tmpfs (the job's
                        folder, ``/dev/shm``): the parent watches them through
                        ``/proc/<child>/root`` and kills the child beyond that
                        (an empty file takes no room, but a KB of kernel memory)
processes               RLIMIT_NPROC = 1 + ``processes``; threads count too
open files              RLIMIT_NOFILE = 64 (socket and pipe buffers, memfds are
                        kernel memory that RLIMIT_AS does not count)
output                  the parent keeps at most ``OUTPUT_CAP`` bytes of each
                        stream and drains the rest; the result channel is
                        capped too
second layer            a ``sys.addaudithook`` hook refusing writes outside
                        the directory, sockets, new processes and ctypes;
                        each refusal (and a thread start the process limit
                        refused) is recorded in ``Behaviour.refused``; it is
                        not a security boundary (code can get around it)
======================  =====================================================

Without bubblewrap (or where it cannot create its namespaces, e.g. a container without
user namespaces) nothing runs: ``SandboxError``. ``selftest`` proves the isolation with
escape probes; the App and the Action turn code execution off when it fails.
Code in the child can forge its own results (it shares the interpreter with the
reporting code, and can write on the result channel, whose number is in its config file;
the parent only insists that a report is well formed), and it can tell that it runs here
(its file name, ``/proc/1`` is bwrap, the host name). So what a child reports can only
add or hide a difference for that code: a proof may use a loaded module's report only
for what the static reading already rules out being staged (``lang.pyinterfere``,
``relational``). CPU shares between concurrent children are not limited.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import logging
import os
import selectors
import shutil
import signal
import site
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from veribot.checks.project.package import Package
from veribot.checks.sandbox import _bwrap, _child
from veribot.checks.sandbox._child import (
    parse_argument,
    parse_literal,
    parse_receiver,
    split_arguments,
)
from veribot.checks.verdict import Behaviour, BehaviourKind

__all__ = [
    "DEFAULT_LIMITS",
    "OUTPUT_CAP",
    "Limits",
    "SandboxError",
    "SandboxRun",
    "canonical",
    "isolation",
    "package_files",
    "parse_argument",
    "parse_literal",
    "parse_receiver",
    "run_calls",
    "run_script",
    "weakened",
]

log = logging.getLogger(__name__)

OUTPUT_CAP = 256 * 1024  # bytes kept of each of stdout and stderr
_CHILD = str(Path(__file__).with_name("_child.py"))
_SCRIPT_NAME = "__veribot_main__.py"
_SUBJECT_NAME = "__veribot_subject__.py"
_CONFIG_NAME = "__veribot_config__.json"
_STDIN_NAME = "__veribot_stdin__.txt"
_PACKAGE_DIR = "__veribot_package__"
# Seconds a child may take to start and isolate itself before the first message.
_STARTUP_S = 5.0
# Seconds after the per-call timer during which the child must report, before it is killed.
_GRACE_S = 1.0
# Files (inodes) a child may have in each of its tmpfs; bwrap cannot set ``nr_inodes``.
MAX_FILES = 20_000
# How often the parent counts them.
_FILES_EVERY_S = 0.05
# Test-only: more bwrap arguments for every child (see ``weakened``).
_extra_bwrap_args: tuple[str, ...] = ()


class SandboxError(RuntimeError):
    """The sandbox itself failed (not the code it ran)."""


@dataclass(frozen=True)
class Limits:
    """Resource limits for one sandboxed child."""

    wall_s: float = 10.0  # the whole child (run_calls: all its children), wall clock
    call_s: float = 2.0  # per call inside the child
    cpu_s: int = 20  # RLIMIT_CPU
    memory_mb: int = 512  # RLIMIT_AS
    file_size_mb: int = 1  # RLIMIT_FSIZE
    processes: int = 0  # extra processes (and threads) allowed
    disk_mb: int = 32  # the whole writable folder (a tmpfs)

    def __post_init__(self) -> None:
        if self.wall_s <= 0 or self.call_s <= 0 or self.cpu_s <= 0:
            raise ValueError("time limits must be positive")
        if (self.memory_mb <= 0 or self.file_size_mb < 0 or self.processes < 0
                or self.disk_mb <= 0):
            raise ValueError("resource limits must not be negative")


DEFAULT_LIMITS = Limits()


@dataclass(frozen=True)
class SandboxRun:
    """The result of ``run_script``."""

    returncode: int | None  # negative: killed by that signal; None: never finished
    stdout: str
    stderr: str
    timed_out: bool
    elapsed_s: float


# ----------------------------------------------------------------------------- workspace


@dataclass
class _Workspace:
    path: str  # the job's files, bound read-only into the child's tmpfs at the same path


@contextlib.contextmanager
def _workspace(files: Mapping[str, str | bytes]) -> Iterator[_Workspace]:
    """A fresh directory (mode 0700) holding ``files`` (readable, for a fresh uid): text
    as UTF-8, bytes as they are (a package's data files)."""
    path = os.path.realpath(tempfile.mkdtemp(prefix="veribot-sandbox-"))
    try:
        for name, text in files.items():
            target = os.path.realpath(os.path.join(path, name))
            if not target.startswith(path + os.sep):
                raise ValueError(f"file name outside the sandbox directory: {name!r}")
            folder = os.path.dirname(target)
            os.makedirs(folder, exist_ok=True)
            while folder != path:
                os.chmod(folder, 0o755)
                folder = os.path.dirname(folder)
            if isinstance(text, bytes):
                Path(target).write_bytes(text)
            else:
                Path(target).write_text(text, encoding="utf-8")
            os.chmod(target, 0o644)
        yield _Workspace(path)
    finally:
        shutil.rmtree(path, ignore_errors=True)


@contextlib.contextmanager
def weakened(*bwrap_args: str) -> Iterator[None]:
    """Test-only: add ``bwrap_args`` to every child's command (e.g. bind a secret in), so
    the tests can show that the self-test's probes notice a weaker sandbox."""
    global _extra_bwrap_args
    saved = _extra_bwrap_args
    _extra_bwrap_args = (*saved, *bwrap_args)
    try:
        yield
    finally:
        _extra_bwrap_args = saved


def isolation() -> str:
    """How children are isolated here (one line); ``SandboxError`` if they cannot be."""
    return _backend().describe()


def _backend() -> _bwrap.Bwrap:
    try:
        return _bwrap.detect()
    except _bwrap.Unavailable as exc:
        raise SandboxError(f"no isolation for the code under review: {exc}") from exc


# ----------------------------------------------------------------------------- one child


@dataclass
class _Outcome:
    messages: list[dict[str, object]] = field(default_factory=list)
    returncode: int | None = None
    stdout: bytes = b""
    stderr: bytes = b""
    killed: str | None = None  # "idle" (a call overran), "wall", "flood", "files"
    last_message_at: float = 0.0
    ended_at: float = 0.0


def _run_child(
    ws: _Workspace,
    cfg: dict[str, object],
    limits: Limits,
    deadline: float,
    *,
    idle_s: float | None,
    stdin_path: str | None = None,
) -> _Outcome:
    """Start one child on ``cfg``, collect its output until it ends or must be killed.

    ``idle_s``: the longest silence allowed on the result channel once the child is
    ready (``None``: no such limit, only the deadline).
    """
    bwrap = _backend()
    uid = _bwrap.fresh_uid() if bwrap.privileged else None
    # Calls skip the site module (a third of the start-up time) and get the
    # site-packages directories on sys.path instead; scripts keep the full start-up.
    no_site = ["-S"] if cfg.get("mode") == "calls" else []
    if no_site:
        cfg = {**cfg, "site_packages": site.getsitepackages()}
    # `-I` would ignore PYTHONHASHSEED; `-E -P -s` is `-I` without that, and the
    # environment is empty but for the seed.
    seed = cfg.get("hash_seed")
    flags, env = (["-I"], {}) if seed is None else (["-s", "-P"], {"PYTHONHASHSEED": str(seed)})
    read_fd, write_fd = os.pipe()
    info_read, info_write = os.pipe()
    cfg = {**cfg, "workdir": ws.path, "uid": uid, "result_fd": write_fd,
           "limits": limits.__dict__}
    config_path = os.path.join(ws.path, _CONFIG_NAME)
    Path(config_path).write_text(json.dumps(cfg), encoding="utf-8")
    os.chmod(config_path, 0o644)
    seccomp_fd = _seccomp_fd(bwrap.seccomp)
    argv = [sys.executable, *flags, *no_site, "-X", "utf8", "-B", _bwrap.CHILD_PATH, config_path]
    command = _bwrap.command(
        bwrap, ws.path, sorted(os.listdir(ws.path)), argv, _CHILD, env,
        disk_mb=limits.disk_mb, seccomp_fd=seccomp_fd, extra=_extra_bwrap_args,
        info_fd=info_write,
    )
    stdin_file = open(stdin_path, "rb") if stdin_path else subprocess.DEVNULL  # noqa: SIM115
    try:
        proc = subprocess.Popen(
            command,
            stdin=stdin_file,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd="/",
            env={},  # bwrap's own environment is readable as /proc/1/environ inside
            pass_fds=(write_fd, info_write, *([] if seccomp_fd is None else [seccomp_fd])),
            start_new_session=True,
        )
    except OSError as exc:
        os.close(read_fd)
        os.close(info_read)
        raise SandboxError(f"cannot start the sandbox (bubblewrap): {exc}") from exc
    finally:
        os.close(write_fd)
        os.close(info_write)
        if seccomp_fd is not None:
            os.close(seccomp_fd)
        if not isinstance(stdin_file, int):
            stdin_file.close()
    assert proc.stdout is not None and proc.stderr is not None
    out = _Outcome(last_message_at=time.monotonic())
    try:
        _collect(proc, read_fd, out, deadline, idle_s, cap_results=_result_cap(cfg),
                 info_fd=info_read, tmpfs=(ws.path, "/dev/shm"))
    finally:
        _kill_all(proc)
        os.close(read_fd)
        os.close(info_read)
        proc.stdout.close()
        proc.stderr.close()
    out.returncode = _status(proc.returncode)
    out.ended_at = time.monotonic()
    return out


def _result_cap(cfg: Mapping[str, object]) -> int:
    calls = cfg.get("calls")
    n = len(calls) if isinstance(calls, list) else 0
    return 1024 * 1024 + n * 80 * 1024


def _collect(
    proc: subprocess.Popen[bytes],
    result_fd: int,
    out: _Outcome,
    deadline: float,
    idle_s: float | None,
    cap_results: int,
    info_fd: int,
    tmpfs: Sequence[str],
) -> None:
    assert proc.stdout is not None and proc.stderr is not None
    sel = selectors.DefaultSelector()
    buffers: dict[int, bytearray] = {}
    child_pid: int | None = None
    counted_at = 0.0
    for fd in (proc.stdout.fileno(), proc.stderr.fileno(), result_fd, info_fd):
        os.set_blocking(fd, False)
        sel.register(fd, selectors.EVENT_READ)
        buffers[fd] = bytearray()
    ready = False
    received = 0
    exited_at: float | None = None
    try:
        while sel.get_map():
            now = time.monotonic()
            limit = deadline
            if idle_s is not None:
                limit = min(limit, out.last_message_at + (idle_s if ready else _STARTUP_S))
            if exited_at is None and proc.poll() is not None:
                exited_at = now  # descendants may hold the pipes open: drain briefly
            if exited_at is not None:
                limit = min(limit, exited_at + 0.2)
            if now >= limit:
                if exited_at is None:
                    out.killed = "wall" if limit == deadline else "idle"
                break
            if child_pid is not None and exited_at is None and now >= counted_at + _FILES_EVERY_S:
                counted_at = now
                if _files(child_pid, tmpfs) > MAX_FILES:
                    out.killed = "files"
                    return
            for key, _ in sel.select(timeout=min(limit - now, 0.1)):
                fd = int(key.fd)
                try:
                    data = os.read(fd, 65536)
                except BlockingIOError:
                    continue
                if not data:
                    sel.unregister(fd)
                    continue
                if fd == info_fd:
                    buffers[fd] += data
                    child_pid = _child_pid(bytes(buffers[fd])) or child_pid
                    continue
                if fd != result_fd:
                    room = OUTPUT_CAP - len(buffers[fd])
                    if room > 0:
                        buffers[fd] += data[:room]
                    continue
                received += len(data)
                if received > cap_results:
                    out.killed = "flood"
                    return
                buffers[fd] += data
                *lines, rest = bytes(buffers[fd]).split(b"\n")
                buffers[fd] = bytearray(rest)
                for line in lines:
                    message = _decode_message(line)
                    if message is not None:
                        out.messages.append(message)
                        out.last_message_at = time.monotonic()
                        ready = True
    finally:
        sel.close()
        out.stdout = bytes(buffers[proc.stdout.fileno()])
        out.stderr = bytes(buffers[proc.stderr.fileno()])


def _child_pid(info: bytes) -> int | None:
    """The sandboxed process's pid (seen from here) in bwrap's ``--info-fd`` JSON."""
    try:
        pid = json.loads(info).get("child-pid")
    except (ValueError, AttributeError):
        return None  # not all of it yet
    return pid if isinstance(pid, int) and pid > 0 else None


def _files(pid: int, tmpfs: Sequence[str]) -> int:
    """The most inodes in use in one of the child's tmpfs (0 once it is gone)."""
    most = 0
    for path in tmpfs:
        inside = f"/proc/{pid}/root{path}"
        try:
            if os.stat(inside).st_dev == _device(path):
                continue  # bwrap has not mounted the child's own yet: this is the host's
            st = os.statvfs(inside)
        except OSError:
            continue
        most = max(most, st.f_files - st.f_ffree)
    return most


def _device(path: str) -> int | None:
    try:
        return os.stat(path).st_dev
    except OSError:
        return None


def _decode_message(line: bytes) -> dict[str, object] | None:
    try:
        message = json.loads(line)
    except ValueError:
        log.warning("sandbox: unreadable message from the child: %r", line[:100])
        return None
    return message if isinstance(message, dict) else None


def _seccomp_fd(program: bytes | None) -> int | None:
    """A pipe's read end holding the seccomp program, for ``bwrap --seccomp``."""
    if program is None:
        return None
    read_fd, write_fd = os.pipe()
    try:
        os.write(write_fd, program)  # a few hundred bytes: within the pipe's buffer
    finally:
        os.close(write_fd)
    return read_fd


def _kill_all(proc: subprocess.Popen[bytes]) -> None:
    """Kill bwrap; its pid namespace, every process of the child included, ends with it."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(ProcessLookupError):
        proc.kill()
    proc.wait()


def _status(code: int | None) -> int | None:
    """The child's status as ``Popen`` gives it: bwrap reports a death by signal N as
    128 + N, which becomes -N (a child exiting with 129..159 itself reads the same)."""
    if code is not None and code > 128 and (code - 128) in signal.Signals._value2member_map_:
        return -(code - 128)
    return code


def _check_ready(out: _Outcome) -> None:
    """Raise SandboxError if isolation failed."""
    for message in out.messages:
        if message.get("t") == "setup-failed":
            raise SandboxError(f"the sandbox could not isolate its child: {message.get('error')}")
        if message.get("t") == "ready":
            return
    if out.killed is None:
        stderr = out.stderr.decode("utf-8", "replace").strip()[-500:]
        raise SandboxError(
            f"the sandbox child ended before it was ready (status {out.returncode}): {stderr}"
        )


# ----------------------------------------------------------------------------- run_script


def run_script(
    script: str,
    files: Mapping[str, str | bytes] | None = None,
    *,
    limits: Limits = Limits(),
    stdin: str = "",
    allow_ctypes: bool = False,
    readonly: Sequence[str] = (),
    audit_hook: bool = True,
) -> SandboxRun:
    """Run ``script`` with ``files`` beside it in a fresh temporary directory.

    The script runs as ``__main__`` under ``python -I`` with the directory as its working
    directory and ``HOME``/``TMPDIR``; stdout and stderr are kept up to ``OUTPUT_CAP``
    bytes each. ``allow_ctypes`` lifts the audit hook's ctypes ban (for drivers that use
    z3, whose Python bindings are ctypes); the other layers are unchanged. ``files`` are
    all read-only for the child (``readonly``, naming folders that must be, is kept for
    the callers that say so); new files may be written beside them. ``audit_hook=False``
    leaves the hook out, so that the self-test probes the kernel's boundary alone.
    """
    del readonly  # every file of the job is read-only now
    files = {**(files or {}), _SCRIPT_NAME: script}
    files[_STDIN_NAME] = stdin
    start = time.monotonic()
    with _workspace(files) as ws:
        cfg: dict[str, object] = {
            "mode": "script",
            "script": os.path.join(ws.path, _SCRIPT_NAME),
            "allow_ctypes": allow_ctypes,
            "audit_hook": audit_hook,
        }
        out = _run_child(ws, cfg, limits, start + limits.wall_s, idle_s=None,
                         stdin_path=os.path.join(ws.path, _STDIN_NAME))
    _check_ready(out)
    timed_out = out.killed is not None
    return SandboxRun(
        returncode=None if timed_out else out.returncode,
        stdout=out.stdout.decode("utf-8", "replace"),
        stderr=out.stderr.decode("utf-8", "replace"),
        timed_out=timed_out,
        elapsed_s=out.ended_at - start,
    )


# ----------------------------------------------------------------------------- run_calls


def run_calls(
    source: str,
    entry: str,
    calls: Sequence[Sequence[str]],
    *,
    limits: Limits = Limits(),
    hash_seed: int | None = None,
    watch: bool = False,
    package: Package | None = None,
) -> list[Behaviour]:
    """Import ``source`` in a sandboxed child and call ``entry`` once per argument list.

    ``entry`` is ``func`` or ``Class.method``; each call is a sequence of arguments,
    for a method first its receiver ``@Class(3, 'a')`` (the object is built by calling the
    class; ``@Class(3).prop`` reads a property; see ``parse_receiver``); for
    ``Class.__init__`` the arguments are the constructor's, and the built object is returned
    as its state; then
    a literal (see ``parse_literal``) is positional, ``name=literal`` is a keyword argument
    (see ``parse_argument``); a bad argument raises ``ValueError`` here. An argument may
    be an object of one of the project's classes, ``Point(1, 2)`` (built in the child by
    the class the module binds to that name, before the call and under its timer; if it
    cannot be built the call is no input, ``NO_INSTANCE``; what was built is the
    behaviour's ``built``), or a builtin class by name (``int``). Arguments left out
    take their defaults. Returns
    one ``Behaviour`` per call, in order. Calls share one child (module state persists
    between them); if the child dies during a call, that call gets the death as its
    behaviour and the rest run in a fresh child. Calls not started when ``wall_s`` runs
    out are HUNG with ``value == "not-run"``.

    ``Behaviour.value`` by kind: RETURNED, the canonical encoding (``canonical``);
    RAISED, the exception type's name (``MemoryError`` and ``RecursionError`` included);
    HUNG, ``"timeout"`` or ``"not-run"``; RESOURCE, ``"file-size"``, ``"cpu"``,
    ``"killed"`` or ``"output"``; CRASHED, ``"signal:SIGSEGV"``, ``"exit:3"`` and so on.
    With ``watch``, a call stopped in a ``while`` loop that provably repeats a state is
    HUNG with ``value == "endless-loop"`` (tracing makes the calls slower).
    ``Behaviour.refused`` lists what the sandbox refused during the call (or the import).

    ``hash_seed`` fixes ``PYTHONHASHSEED`` (the order of sets of strings, ``hash(str)``);
    by default every child draws its own.

    ``package``: import ``source`` as ``package.module``, with the package's files of its
    revision in a read-only folder of the child's workspace (see
    ``veribot.checks.project.package``), instead of as a lone module named ``subject``.
    """
    literal_calls = [[str(a) for a in call] for call in calls]
    for call in literal_calls:
        # A method call on an object starts with its receiver, ``@Class(3).method``'s
        # ``@Class(3)`` (see ``parse_receiver``).
        receiver = parse_receiver(call[0], objects=True) if call else None
        split_arguments(call[1:] if receiver is not None else call, objects=True)
    results: list[Behaviour | None] = [None] * len(literal_calls)
    if not literal_calls:
        return []
    start = time.monotonic()
    deadline = start + limits.wall_s
    files: dict[str, str | bytes] = {_SUBJECT_NAME: source}
    subject = _SUBJECT_NAME
    if package is not None:
        files, subject = package_files(_PACKAGE_DIR, package, source)
    with _workspace(files) as ws:
        next_index = 0
        while next_index < len(literal_calls) and time.monotonic() < deadline:
            cfg: dict[str, object] = {
                "mode": "calls",
                "subject": os.path.join(ws.path, subject),
                "package": None if package is None else {
                    "root": os.path.join(ws.path, _PACKAGE_DIR, package.root),
                    "module": package.module,
                },
                "entry": entry,
                "calls": literal_calls[next_index:],
                "start": next_index,
                "hash_seed": hash_seed,
                "watch": watch,
            }
            out = _run_child(ws, cfg, limits, deadline, idle_s=limits.call_s + _GRACE_S)
            _check_ready(out)
            imported = False
            for message in out.messages:
                kind = message.get("t")
                if kind == "import-failed":
                    failed = dataclasses.replace(_behaviour(message.get("b")), at_import=True)
                    for i in range(next_index, len(results)):
                        results[i] = failed
                    return [r for r in results if r is not None]
                if kind == "imported":
                    imported = True
                elif kind == "call":
                    index = message.get("i")
                    if isinstance(index, int) and 0 <= index < len(results):
                        results[index] = _behaviour(message.get("b"))
            pending = [i for i in range(next_index, len(results)) if results[i] is None]
            if not pending:
                break
            death = _death(out, limits)
            if not imported:  # module-level code killed the child: every call shares it
                for i in pending:
                    results[i] = death
                break
            results[pending[0]] = death
            next_index = pending[0] + 1
    not_run = Behaviour(
        BehaviourKind.HUNG,
        "not-run",
        f"not run: the sandbox's wall-clock limit of {limits.wall_s:g} s was spent",
    )
    return [r if r is not None else not_run for r in results]


def package_files(folder: str, package: Package,
                  source: str) -> tuple[dict[str, str | bytes], str]:
    """The workspace files for ``package`` under ``folder`` (its modules as text, its data
    files as bytes), and the module's file path."""
    files = {f"{folder}/{rel}": text for rel, text in package.tree(source).items()}
    return files, f"{folder}/{package.path}"


def canonical(value: object) -> object:
    """The canonical encoding of ``value``, as found in ``Behaviour.value``.

    JSON-compatible (arrays are tuples, so behaviours stay hashable); equal for two
    values iff they are the same behaviour: type matters (``1``, ``1.0`` and ``True``
    differ), floats compare with ``==`` except that NaN equals NaN, dicts and sets
    are in a canonical order, other objects are encoded by type name and attributes.
    """
    return _freeze(_child.canonical(value))


def _freeze(value: object) -> object:
    """JSON arrays to tuples, so behaviours are hashable."""
    if isinstance(value, list):
        return tuple(_freeze(v) for v in value)
    return value


def _encoding(value: object, depth: int = 0) -> bool:
    """Whether ``value`` can be a canonical encoding (what ``canonical`` makes: JSON arrays,
    strings, numbers, booleans, null; never an object). The code under review can write on
    the result channel itself; what it writes must at least be comparable and hashable."""
    if value is None or isinstance(value, bool | int | str):
        return True
    if isinstance(value, float):
        return value == value and abs(value) != float("inf")
    if isinstance(value, list) and depth < 2 * _child._MAX_DEPTH + 10:
        return all(_encoding(v, depth + 1) for v in value)
    return False


def _behaviour(raw: object) -> Behaviour:
    malformed = Behaviour(BehaviourKind.CRASHED, "bad-report", "the child sent a malformed report")
    if not isinstance(raw, dict):
        return malformed
    try:
        kind = BehaviourKind(raw.get("kind"))
    except ValueError:
        return malformed
    if not all(_encoding(raw.get(key)) for key in ("value", "args_after", "built")):
        return malformed
    elapsed = raw.get("elapsed")
    refused = raw.get("refused")
    return Behaviour(
        kind,
        _freeze(raw.get("value")),
        str(raw.get("text", ""))[:300],
        _freeze(raw.get("args_after")),
        float(elapsed) if isinstance(elapsed, int | float) and 0 <= elapsed < 1e9 else 0.0,
        tuple(str(r)[:200] for r in refused[:5]) if isinstance(refused, list) else (),
        _freeze(raw.get("built")),
        site=_site(raw.get("site")),
    )


def _site(raw: object) -> tuple[int | None, bool, bool] | None:
    """A raise site as the child reports it (``[line or None, started there, at a raise
    statement of the project]``)."""
    if not (isinstance(raw, list) and len(raw) == 3 and isinstance(raw[1], bool)
            and isinstance(raw[2], bool)):
        return None
    line = raw[0]
    if line is None or (isinstance(line, int) and not isinstance(line, bool) and line > 0):
        return (line, raw[1], raw[2])
    return None


def _death(out: _Outcome, limits: Limits) -> Behaviour:
    """The behaviour of the call that was running when the child ended or was killed."""
    elapsed = max(0.0, out.ended_at - out.last_message_at)
    tail = out.stderr.decode("utf-8", "replace").strip().splitlines()
    detail = f": {tail[-1][:150]}" if tail else ""
    if out.killed == "idle":
        return Behaviour(BehaviourKind.HUNG, "timeout",
                         f"still running after {elapsed:.1f} s; the sandbox stopped it",
                         elapsed_s=elapsed)
    if out.killed == "wall":
        return Behaviour(BehaviourKind.HUNG, "timeout",
                         f"still running when the sandbox's wall-clock limit of "
                         f"{limits.wall_s:g} s ran out", elapsed_s=elapsed)
    if out.killed == "flood":
        return Behaviour(BehaviourKind.RESOURCE, "output",
                         "flooded the sandbox's result channel", elapsed_s=elapsed)
    if out.killed == "files":
        return Behaviour(BehaviourKind.RESOURCE, "files",
                         f"made more than {MAX_FILES} files", elapsed_s=elapsed)
    code = out.returncode
    if code is not None and code < 0:
        sig = -code
        name = signal.Signals(sig).name if sig in signal.Signals._value2member_map_ else str(sig)
        if sig == signal.SIGXCPU:
            return Behaviour(BehaviourKind.RESOURCE, "cpu",
                             f"CPU time limit of {limits.cpu_s} s", elapsed_s=elapsed)
        if sig == signal.SIGKILL:
            return Behaviour(BehaviourKind.RESOURCE, "killed",
                             f"killed by SIGKILL (memory limit {limits.memory_mb} MB or CPU "
                             f"limit {limits.cpu_s} s){detail}", elapsed_s=elapsed)
        return Behaviour(BehaviourKind.CRASHED, f"signal:{name}",
                         f"the interpreter died with {name}{detail}", elapsed_s=elapsed)
    return Behaviour(BehaviourKind.CRASHED, f"exit:{code}",
                     f"the interpreter exited with status {code} during the call{detail}",
                     elapsed_s=elapsed)
