"""Every process the test's interpreter starts, observed at the operating-system boundary.

A Python audit hook (``sys.addaudithook``) sees each process this interpreter starts, with
its arguments and environment, without replacing any of our code. Audit hooks cannot be
removed, so the hook records only inside :func:`started_processes`.

Proof-only reviews may start git, and nothing else (the agent's judgement and the relative
check read the code in this process); a sandbox child, whatever it is built on
(bubblewrap or a bare interpreter), is some other process: :func:`could_run_code` says
which.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True)
class Started:
    """One process start: its argument vector and the environment it was given."""

    argv: list[str]
    env: dict[str, str] = field(default_factory=dict)


_RECORD: list[Started] | None = None
_HOOKED = False


def _environment(env: object) -> dict[str, str]:
    if isinstance(env, Mapping):
        return {str(k): str(v) for k, v in env.items()}
    return dict(os.environ)  # None: the child inherits this process's environment


def _argv(argv: object) -> list[str]:
    if isinstance(argv, (list, tuple)):
        return [os.fsdecode(a) if isinstance(a, bytes) else str(a) for a in argv]
    return [str(argv)]


def _audit(event: str, args: tuple[object, ...]) -> None:
    if _RECORD is None:
        return
    if event == "subprocess.Popen":
        _RECORD.append(Started(_argv(args[1]), _environment(args[3])))
    elif event in ("os.posix_spawn", "os.exec"):
        _RECORD.append(Started(_argv(args[1]), _environment(args[2])))
    elif event in ("os.fork", "os.forkpty", "os.system"):
        _RECORD.append(Started([event], dict(os.environ)))


@contextmanager
def started_processes() -> Iterator[list[Started]]:
    """The processes started in the ``with`` block."""
    global _RECORD, _HOOKED
    if not _HOOKED:
        sys.addaudithook(_audit)
        _HOOKED = True
    found: list[Started] = []
    _RECORD = found
    try:
        yield found
    finally:
        _RECORD = None


def could_run_code(started: Started) -> bool:
    """Whether a started process is anything but git."""
    argv = started.argv
    return not (argv and Path(argv[0]).name == "git")
