"""The command line that starts one sandboxed child under bubblewrap (``bwrap``).

Two modes, chosen by who runs the parent:

- **root** (the App's image, CI): bwrap runs privileged, without a user namespace, so it
  can bind the Python installation wherever it lives; the child then switches to a fresh
  uid, far above any real account (``_child.isolate``), which drops every capability. The
  seccomp filter refuses new user namespaces, so the uid cannot gain any back.
- **not root**: bwrap runs unprivileged in a new user namespace (``--unshare-user``,
  ``--disable-userns``); the child keeps the caller's uid, mapped, without capabilities.
  This needs unprivileged user namespaces (Debian and Ubuntu allow them; Ubuntu 24.04
  through AppArmor's profile for bwrap).

In both: new pid, ipc, network, uts and cgroup namespaces; no-new-privileges; an empty
environment; the child dies with its parent. Its file system is a read-only root holding
only the Python installation (``/usr`` and the interpreter's prefixes), a private
``/proc`` and ``/dev``, and the job's folder: a tmpfs of ``Limits.disk_mb`` (``--size``)
into which the job's files are bound read-only. Nothing else of the host is visible: not
the data directory, not ``/root``, not ``/tmp``, not another job's folder.
"""

from __future__ import annotations

import functools
import os
import secrets
import shutil
import site
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass

from veribot.checks.sandbox import _seccomp

# A privileged child's uid is drawn from this range, far above any real account.
UID_BASE = 0x6000_0000
UID_SPAN = 0x1000_0000
CHILD_PATH = "/.veribot/_child.py"  # where the child's own code is bound, read-only
_TOP_LEVEL = ("bin", "sbin", "lib", "lib32", "lib64", "libx32")
_ETC_FILES = ("/etc/ld.so.cache", "/etc/localtime")


class Unavailable(RuntimeError):
    """bubblewrap cannot isolate a child here (not installed, too old)."""


@dataclass(frozen=True)
class Bwrap:
    """How children are started on this machine."""

    path: str
    version: str
    privileged: bool  # the parent is root: bwrap sets up as root, the child takes a fresh uid
    sized_tmpfs: bool  # bwrap >= 0.9 (and Debian's 0.8.0-2+deb12u1): ``--size`` on a tmpfs
    seccomp: bytes | None  # the compiled filter; None without libseccomp

    def describe(self) -> str:
        """One line for logs and the self-test report."""
        who = "as root, the child on a fresh uid" if self.privileged else (
            "unprivileged, in a user namespace")
        extras = [
            "seccomp filter" if self.seccomp else "no seccomp filter (libseccomp missing)",
            "sized tmpfs" if self.sized_tmpfs else "unsized tmpfs (bwrap has no --size)",
        ]
        return f"bubblewrap {self.version} {who}; {', '.join(extras)}"


@functools.cache
def detect() -> Bwrap:
    """The bubblewrap on this machine; ``Unavailable`` (with the reason) if there is none."""
    path = shutil.which("bwrap") or next(
        (p for p in ("/usr/bin/bwrap", "/usr/local/bin/bwrap") if os.access(p, os.X_OK)), None)
    if path is None:
        raise Unavailable("bubblewrap (bwrap) is not installed")
    try:
        version = subprocess.run([path, "--version"], capture_output=True, text=True,
                                 timeout=10, env={}).stdout.split()[-1]
        usage = subprocess.run([path, "--help"], capture_output=True, text=True,
                               timeout=10, env={}).stdout
    except (OSError, subprocess.SubprocessError, IndexError) as exc:
        raise Unavailable(f"bubblewrap ({path}) does not run: {exc}") from exc
    if "--disable-userns" not in usage:
        raise Unavailable(f"bubblewrap {version} is too old (0.8 or later is needed)")
    found = Bwrap(path, version, os.geteuid() == 0, "--size" in usage, _seccomp.program())
    _try(found)
    return found


def _system_binds() -> list[str]:
    """``/usr`` and the top-level folders (or their symlinks into it), read-only."""
    args = ["--ro-bind", "/usr", "/usr"]
    for name in _TOP_LEVEL:
        top = f"/{name}"
        if os.path.islink(top):
            args += ["--symlink", os.readlink(top), top]
        elif os.path.isdir(top):
            args += ["--ro-bind", top, top]
    return args


def _try(bwrap: Bwrap) -> None:
    """Start an empty sandbox once: a container without user namespaces (or, as root,
    without CAP_SYS_ADMIN) fails here, with bwrap's own words."""
    args = [bwrap.path, "--unshare-pid", "--unshare-ipc", "--unshare-net", "--unshare-uts",
            "--die-with-parent", "--clearenv"]
    if not bwrap.privileged:
        args += ["--unshare-user", "--disable-userns"]
    args += _system_binds()
    args += ["--proc", "/proc", "--dev", "/dev", "--", "true"]
    try:
        done = subprocess.run(args, capture_output=True, text=True, timeout=30, env={},
                              stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError) as exc:
        raise Unavailable(f"bubblewrap does not run: {exc}") from exc
    if done.returncode != 0:
        said = done.stderr.strip().splitlines()[-1:] or [f"status {done.returncode}"]
        raise Unavailable(f"bubblewrap cannot isolate a process here: {said[0][:200]}")


def fresh_uid() -> int:
    return UID_BASE + secrets.randbelow(UID_SPAN)


@functools.cache
def _python_roots() -> tuple[str, ...]:
    """The folders the interpreter needs, outside ``/usr``: prefixes and site-packages."""
    paths = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix,
             os.path.dirname(os.path.realpath(sys.executable)), *site.getsitepackages()}
    real = sorted({os.path.realpath(p) for p in paths if p and os.path.isdir(p)})
    roots: list[str] = []
    for path in real:  # the shortest first: skip what an earlier root already holds
        if path in ("/", "/usr") or path.startswith("/usr/"):
            continue
        if any(path.startswith(r + os.sep) for r in roots):
            continue
        roots.append(path)
    return tuple(roots)


def _ancestors(path: str) -> list[str]:
    """``/a/b/c`` -> ``["/a", "/a/b"]``."""
    parts = path.strip("/").split("/")[:-1]
    return ["/" + "/".join(parts[: i + 1]) for i in range(len(parts))]


def command(
    bwrap: Bwrap,
    workdir: str,
    entries: Sequence[str],
    argv: Sequence[str],
    child_source: str,
    env: dict[str, str],
    *,
    disk_mb: int,
    seccomp_fd: int | None,
    extra: Sequence[str] = (),
    info_fd: int | None = None,
) -> list[str]:
    """The full ``bwrap ... python ...`` command for one child.

    ``entries``: the names in ``workdir`` to bind read-only into the child's tmpfs there;
    ``argv``: the interpreter's command line, seen from inside; ``extra``: more bwrap
    arguments before the root is made read-only (the self-test's weakened configurations).
    """
    args = [bwrap.path, "--unshare-pid", "--unshare-ipc", "--unshare-net", "--unshare-uts",
            "--unshare-cgroup-try", "--die-with-parent", "--new-session", "--clearenv",
            "--hostname", "sandbox"]
    if not bwrap.privileged:
        args += ["--unshare-user", "--disable-userns", "--cap-drop", "ALL"]
    roots = _python_roots()
    # Folders on the way to a bind are made 0755 (bwrap would copy the host's mode: a
    # Python under /root would be out of the fresh uid's reach).
    made: set[str] = set()
    for dest in (*roots, CHILD_PATH, workdir):
        for folder in _ancestors(dest):
            if folder not in made:
                made.add(folder)
                args += ["--perms", "0755", "--dir", folder]
    args += _system_binds()
    for path in _ETC_FILES:
        args += ["--ro-bind-try", path, path]
    for root in roots:
        args += ["--ro-bind", root, root]
    args += ["--ro-bind", child_source, CHILD_PATH]
    args += ["--proc", "/proc", "--dev", "/dev"]
    size = str(disk_mb * 1024 * 1024)
    # /dev/shm: the child's own, small (IPC is unshared too).
    args += ["--perms", "01777", *(["--size", size] if bwrap.sized_tmpfs else []),
             "--tmpfs", "/dev/shm"]
    args += [*(["--perms", "0700"] if not bwrap.privileged else []),
             *(["--size", size] if bwrap.sized_tmpfs else []), "--tmpfs", workdir]
    for name in entries:
        path = os.path.join(workdir, name)
        args += ["--ro-bind", path, path]
    args += [*extra, "--remount-ro", "/", "--chdir", workdir]
    for key, value in env.items():
        args += ["--setenv", key, value]
    if seccomp_fd is not None:
        args += ["--seccomp", str(seccomp_fd)]
    if info_fd is not None:  # bwrap writes the child's pid there (JSON)
        args += ["--info-fd", str(info_fd)]
    return [*args, "--", *argv]
