"""Execute untrusted code in a contained child process, to confirm counterexamples.

``run_calls`` imports one module source in a child and calls one function on many inputs,
returning a ``Behaviour`` per call; ``run_script`` runs a script (a search driver) and
returns its output. Untrusted-code misbehaviour never raises here: it becomes a
behaviour (HUNG, RESOURCE, CRASHED) or a ``SandboxRun`` with ``timed_out``/returncode.
``SandboxError`` is raised only when the sandbox itself cannot work (cannot start
the interpreter, cannot set up isolation).

What is enforced, by whom:

======================  =====================================================  =========
concern                 mechanism                                              as root
======================  =====================================================  =========
wall clock              the parent kills the child's process group (and, as    yes
                        root, every process of the child's uid) at the limit
per call                ``setitimer`` + SIGALRM in the child raises a          yes
                        BaseException (re-fired every 50 ms); a call the timer
                        cannot stop (C code) is killed by the parent a second
                        later and the remaining calls run in a fresh child
CPU                     RLIMIT_CPU (SIGXCPU, then SIGKILL one second later)    yes
memory                  RLIMIT_AS (``MemoryError`` or death by SIGKILL)        yes
file size               RLIMIT_FSIZE, SIGXFSZ ignored (a write raises EFBIG)   yes
processes               a fresh unprivileged uid per child (never 0) with      yes
                        RLIMIT_NPROC = 1 + ``processes``; threads count too
network                 a new, empty network namespace (no interface is up)    yes
filesystem writes       a new mount namespace in which every mount is          yes
                        read-only except the child's temporary directory, plus
                        the uid's own permissions (the directory is its only
                        one)
output                  the parent keeps at most ``OUTPUT_CAP`` bytes of each  yes
                        stream and drains the rest; the result channel is
                        capped too
second layer            a ``sys.addaudithook`` hook refusing writes outside    yes
                        the directory, sockets, new processes and ctypes;
                        each refusal (and a thread start the process limit
                        refused) is recorded in ``Behaviour.refused``
======================  =====================================================  =========

Not enforced: reading files that the unprivileged uid may read (world-readable files:
the repository checkout, the Python installation; directories closed to others such as
``/root`` are hidden behind an empty tmpfs except the Python installation inside them);
CPU shares between concurrent children; the number of files and the total disk space
used in the temporary directory (only each file's size is limited; the directory is
deleted afterwards); the kernel's own resources beyond the above.
Code in the child can forge its own results (it shares the interpreter with the
reporting code); that can only add or hide a difference for that code, never make a
proof. When not running as root the namespaces are attempted through a user namespace;
if unavailable, network, process and filesystem containment rest on the audit hook only,
which is not a security boundary; the child's ``ready`` message records which layers are
in force and the parent logs a warning for each missing one.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import secrets
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

from veribot.checks.package import Package
from veribot.checks.sandbox import _child
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
    "package_files",
    "parse_argument",
    "parse_literal",
    "parse_receiver",
    "run_calls",
    "run_script",
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
# The child's uid is drawn from this range, far above any real account.
_UID_BASE = 0x6000_0000
_UID_SPAN = 0x1000_0000


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

    def __post_init__(self) -> None:
        if self.wall_s <= 0 or self.call_s <= 0 or self.cpu_s <= 0:
            raise ValueError("time limits must be positive")
        if self.memory_mb <= 0 or self.file_size_mb < 0 or self.processes < 0:
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
    path: str
    uid: int | None
    readonly: tuple[str, ...] = ()  # absolute folders the child may read, never write

    def new_uid(self) -> None:
        """Give the directory to a fresh uid (root only), for the next child.

        The read-only folders stay the parent's (mode 0555, files 0444).
        """
        if os.geteuid() != 0:
            return
        self.uid = _UID_BASE + secrets.randbelow(_UID_SPAN)
        for root, dirs, files in os.walk(self.path):
            dirs[:] = [d for d in dirs if os.path.join(root, d) not in self.readonly]
            for name in (root, *(os.path.join(root, n) for n in (*dirs, *files))):
                os.lchown(name, self.uid, self.uid)


@contextlib.contextmanager
def _workspace(files: Mapping[str, str], readonly: Sequence[str] = ()) -> Iterator[_Workspace]:
    """A fresh directory holding ``files``; the top folders named in ``readonly`` (and
    all under them) are made read-only for the child."""
    path = os.path.realpath(tempfile.mkdtemp(prefix="veribot-sandbox-"))
    locked = tuple(os.path.join(path, name) for name in readonly)
    try:
        for name, text in files.items():
            target = os.path.realpath(os.path.join(path, name))
            if not target.startswith(path + os.sep):
                raise ValueError(f"file name outside the sandbox directory: {name!r}")
            os.makedirs(os.path.dirname(target), exist_ok=True)
            Path(target).write_text(text, encoding="utf-8")
        for top in locked:
            for root, _dirs, names in os.walk(top, topdown=False):
                for name in names:
                    os.chmod(os.path.join(root, name), 0o444)
                os.chmod(root, 0o555)
        yield _Workspace(path, None, locked)
    finally:
        for top in locked:  # writable again, so the directory can be removed
            for root, _dirs, _names in os.walk(top):
                with contextlib.suppress(OSError):
                    os.chmod(root, 0o755)
        shutil.rmtree(path, ignore_errors=True)


# ----------------------------------------------------------------------------- one child


@dataclass
class _Outcome:
    messages: list[dict[str, object]] = field(default_factory=list)
    returncode: int | None = None
    stdout: bytes = b""
    stderr: bytes = b""
    killed: str | None = None  # "idle" (a call overran), "wall", "flood"
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
    ws.new_uid()
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
    cfg = {**cfg, "workdir": ws.path, "uid": ws.uid, "result_fd": write_fd,
           "limits": limits.__dict__}
    config_path = os.path.join(ws.path, _CONFIG_NAME)
    Path(config_path).write_text(json.dumps(cfg), encoding="utf-8")
    stdin_file = open(stdin_path, "rb") if stdin_path else subprocess.DEVNULL  # noqa: SIM115
    try:
        proc = subprocess.Popen(
            [sys.executable, *flags, *no_site, "-X", "utf8", "-B", _CHILD, config_path],
            stdin=stdin_file,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=ws.path,
            env=env,
            pass_fds=(write_fd,),
            start_new_session=True,
        )
    except OSError as exc:
        os.close(read_fd)
        raise SandboxError(f"cannot start the sandbox interpreter: {exc}") from exc
    finally:
        os.close(write_fd)
        if not isinstance(stdin_file, int):
            stdin_file.close()
    assert proc.stdout is not None and proc.stderr is not None
    out = _Outcome(last_message_at=time.monotonic())
    try:
        _collect(proc, read_fd, out, deadline, idle_s, cap_results=_result_cap(cfg))
    finally:
        _kill_all(proc, ws.uid, limits.processes > 0)
        os.close(read_fd)
        proc.stdout.close()
        proc.stderr.close()
    out.returncode = proc.returncode
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
) -> None:
    assert proc.stdout is not None and proc.stderr is not None
    sel = selectors.DefaultSelector()
    buffers: dict[int, bytearray] = {}
    for fd in (proc.stdout.fileno(), proc.stderr.fileno(), result_fd):
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
            for key, _ in sel.select(timeout=min(limit - now, 0.1)):
                fd = int(key.fd)
                try:
                    data = os.read(fd, 65536)
                except BlockingIOError:
                    continue
                if not data:
                    sel.unregister(fd)
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


def _decode_message(line: bytes) -> dict[str, object] | None:
    try:
        message = json.loads(line)
    except ValueError:
        log.warning("sandbox: unreadable message from the child: %r", line[:100])
        return None
    return message if isinstance(message, dict) else None


def _kill_all(proc: subprocess.Popen[bytes], uid: int | None, sweep: bool) -> None:
    """Kill the child, its process group and (as root) every process of its uid."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    if uid is not None and sweep:
        for _ in range(100):
            if not _kill_uid(uid):
                break
            time.sleep(0.005)
    proc.wait()


def _kill_uid(uid: int) -> bool:
    """SIGKILL every live process owned by ``uid``; return whether any was found."""
    found = False
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            if os.stat(f"/proc/{name}").st_uid != uid:
                continue
            state = Path(f"/proc/{name}/stat").read_text().rsplit(")", 1)[1].split()[0]
            if state in ("Z", "X"):
                continue
            os.kill(int(name), signal.SIGKILL)
            found = True
        except (FileNotFoundError, ProcessLookupError, IndexError):
            continue
    return found


_warned: set[str] = set()


def _check_ready(out: _Outcome) -> None:
    """Raise SandboxError if isolation failed; warn once per missing layer."""
    for message in out.messages:
        if message.get("t") == "setup-failed":
            raise SandboxError(f"the sandbox could not isolate its child: {message.get('error')}")
        if message.get("t") == "ready":
            isolation = message.get("isolation")
            if isinstance(isolation, dict):
                for layer, how in isolation.items():
                    if "audit hook only" in str(how) and layer not in _warned:
                        _warned.add(layer)
                        log.warning("sandbox: %s containment is weak here: %s", layer, how)
            return
    if out.killed is None:
        stderr = out.stderr.decode("utf-8", "replace").strip()[-500:]
        raise SandboxError(
            f"the sandbox child ended before it was ready (status {out.returncode}): {stderr}"
        )


# ----------------------------------------------------------------------------- run_script


def run_script(
    script: str,
    files: Mapping[str, str] | None = None,
    *,
    limits: Limits = Limits(),
    stdin: str = "",
    allow_ctypes: bool = False,
    readonly: Sequence[str] = (),
) -> SandboxRun:
    """Run ``script`` with ``files`` beside it in a fresh temporary directory.

    The script runs as ``__main__`` under ``python -I`` with the directory as its working
    directory and ``HOME``/``TMPDIR``; stdout and stderr are kept up to ``OUTPUT_CAP``
    bytes each. ``allow_ctypes`` lifts the audit hook's ctypes ban (for drivers that use
    z3, whose Python bindings are ctypes); the other layers are unchanged. ``readonly``
    names top folders of ``files`` the child may read but not write.
    """
    files = dict(files or {})
    files[_SCRIPT_NAME] = script
    files[_STDIN_NAME] = stdin
    start = time.monotonic()
    with _workspace(files, readonly) as ws:
        cfg: dict[str, object] = {
            "mode": "script",
            "script": os.path.join(ws.path, _SCRIPT_NAME),
            "allow_ctypes": allow_ctypes,
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
    (see ``parse_argument``); a bad argument raises ``ValueError`` here. Arguments left out
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
    revision in a read-only folder of the child's workspace (see ``veribot.checks.package``),
    instead of as a lone module named ``subject``.
    """
    literal_calls = [[str(a) for a in call] for call in calls]
    for call in literal_calls:
        # A method call on an object starts with its receiver, ``@Class(3).method``'s
        # ``@Class(3)`` (see ``parse_receiver``).
        receiver = parse_receiver(call[0]) if call else None
        split_arguments(call[1:] if receiver is not None else call)
    results: list[Behaviour | None] = [None] * len(literal_calls)
    if not literal_calls:
        return []
    start = time.monotonic()
    deadline = start + limits.wall_s
    files, subject = {_SUBJECT_NAME: source}, _SUBJECT_NAME
    if package is not None:
        files, subject = package_files(_PACKAGE_DIR, package, source)
    with _workspace(files, (_PACKAGE_DIR,) if package is not None else ()) as ws:
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
                    failed = _behaviour(message.get("b"))
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


def package_files(folder: str, package: Package, source: str) -> tuple[dict[str, str], str]:
    """The workspace files for ``package`` under ``folder``, and the module's file path."""
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


def _behaviour(raw: object) -> Behaviour:
    if not isinstance(raw, dict):
        return Behaviour(BehaviourKind.CRASHED, "bad-report", "the child sent a malformed report")
    try:
        kind = BehaviourKind(raw.get("kind"))
    except ValueError:
        return Behaviour(BehaviourKind.CRASHED, "bad-report", "the child sent a malformed report")
    elapsed = raw.get("elapsed")
    refused = raw.get("refused")
    return Behaviour(
        kind,
        _freeze(raw.get("value")),
        str(raw.get("text", ""))[:300],
        _freeze(raw.get("args_after")),
        float(elapsed) if isinstance(elapsed, int | float) else 0.0,
        tuple(str(r)[:200] for r in refused[:5]) if isinstance(refused, list) else (),
        _freeze(raw.get("built")),
    )


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
