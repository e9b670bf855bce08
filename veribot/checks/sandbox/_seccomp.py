"""The sandbox's seccomp filter, compiled to BPF by libseccomp (through ctypes).

bubblewrap loads the program (``--seccomp FD``) just before it starts the child, after
setting no-new-privileges. The filter allows everything but the system calls that widen the
kernel's attack surface or reach outside the sandbox's namespaces: new namespaces (nested
user namespaces above all), mounts, ``ptrace`` and cross-process memory access, keyrings,
BPF, perf events, ``userfaultfd``, ``io_uring``, kernel modules, SysV IPC (its memory
outlives what RLIMIT_AS counts) and the like. They fail with
``EPERM`` (``clone3`` with ``ENOSYS``, so that the C library falls back to ``clone``, whose
flags the filter can read). System calls of another architecture (i386 on x86-64) kill
the process: that is libseccomp's default.

libseccomp (``libseccomp.so.2``) is part of every Debian and Ubuntu system; without it there
is no filter and the self-test reports the nested user namespace probe accordingly.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import functools
import os

_ACT_ALLOW = 0x7FFF0000
_CMP_MASKED_EQ = 7
# CLONE_NEWNS | NEWCGROUP | NEWUTS | NEWIPC | NEWUSER | NEWPID | NEWNET, and NEWTIME.
_CLONE_NEW_ANY = 0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 \
    | 0x20000000 | 0x40000000 | 0x00000080

DENIED = (
    "unshare", "setns", "mount", "umount2", "pivot_root", "chroot", "move_mount", "open_tree",
    "fsopen", "fsmount", "fsconfig", "fspick", "mount_setattr",
    "ptrace", "process_vm_readv", "process_vm_writev", "process_madvise", "pidfd_getfd",
    "kcmp", "keyctl", "add_key", "request_key", "bpf", "perf_event_open", "userfaultfd",
    "io_uring_setup", "io_uring_enter", "io_uring_register",
    "kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module",
    "iopl", "ioperm", "swapon", "swapoff", "syslog", "acct", "quotactl", "quotactl_fd",
    "lookup_dcookie", "name_to_handle_at", "open_by_handle_at", "vhangup", "reboot",
    "settimeofday", "clock_settime", "clock_adjtime", "adjtimex", "sethostname",
    "setdomainname", "personality", "uselib", "nfsservctl", "fanotify_init",
    # SysV IPC: a detached segment (or a full message queue) keeps its memory, which
    # RLIMIT_AS does not count; POSIX shared memory lives in the child's sized /dev/shm.
    "shmget", "shmat", "shmdt", "shmctl", "msgget", "msgsnd", "msgrcv", "msgctl",
    "semget", "semop", "semtimedop", "semctl",
)


class _ArgCmp(ctypes.Structure):
    _fields_ = [
        ("arg", ctypes.c_uint),
        ("op", ctypes.c_int),
        ("datum_a", ctypes.c_uint64),
        ("datum_b", ctypes.c_uint64),
    ]


def _errno_action(code: int) -> int:
    return 0x00050000 | (code & 0xFFFF)


@functools.cache
def program() -> bytes | None:
    """The filter as a BPF program for ``bwrap --seccomp``, or None without libseccomp."""
    name = ctypes.util.find_library("seccomp") or "libseccomp.so.2"
    try:
        lib = ctypes.CDLL(name, use_errno=True)
    except OSError:
        return None
    lib.seccomp_init.restype = ctypes.c_void_p
    lib.seccomp_init.argtypes = [ctypes.c_uint32]
    lib.seccomp_release.argtypes = [ctypes.c_void_p]
    lib.seccomp_syscall_resolve_name.argtypes = [ctypes.c_char_p]
    lib.seccomp_rule_add_array.argtypes = [
        ctypes.c_void_p, ctypes.c_uint32, ctypes.c_int, ctypes.c_uint, ctypes.POINTER(_ArgCmp)
    ]
    lib.seccomp_export_bpf.argtypes = [ctypes.c_void_p, ctypes.c_int]
    ctx = lib.seccomp_init(_ACT_ALLOW)
    if not ctx:
        return None
    try:
        for syscall in DENIED:
            _add(lib, ctx, _errno_action(errno.EPERM), syscall)
        _add(lib, ctx, _errno_action(errno.ENOSYS), "clone3")
        # One rule per CLONE_NEW* flag: libseccomp compares (flags & mask) == datum.
        for bit in range(64):
            flag = 1 << bit
            if _CLONE_NEW_ANY & flag:
                cmp = _ArgCmp(0, _CMP_MASKED_EQ, flag, flag)
                _add(lib, ctx, _errno_action(errno.EPERM), "clone", cmp)
        read_fd, write_fd = os.pipe()
        try:
            if lib.seccomp_export_bpf(ctx, write_fd) != 0:
                return None
            os.close(write_fd)
            write_fd = -1
            chunks = []
            while chunk := os.read(read_fd, 65536):
                chunks.append(chunk)
            return b"".join(chunks)
        finally:
            os.close(read_fd)
            if write_fd >= 0:
                os.close(write_fd)
    finally:
        lib.seccomp_release(ctx)


def _add(lib: ctypes.CDLL, ctx: int, action: int, syscall: str, *cmps: _ArgCmp) -> None:
    number = lib.seccomp_syscall_resolve_name(syscall.encode())
    if number < 0:  # not a system call of this architecture
        return
    array = (_ArgCmp * max(1, len(cmps)))(*cmps)
    result = lib.seccomp_rule_add_array(ctx, action, number, len(cmps), array)
    if result != 0:
        raise OSError(-result, f"seccomp: cannot add the rule for {syscall}")
