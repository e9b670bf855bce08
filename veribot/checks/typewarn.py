"""A type checker's warnings about possible crashes, as questions for ``checks.safety``.

mypy, where it is installed, reads the head revision's changed modules with the checks
that name crash sites turned on (``possibly-undefined``, strict optional: ``Item "None"
of "str | None" has no attribute "upper"``), and each warning inside a function the review
asks about becomes the question "can this line raise?", answered "false alarm, proven
safe", "real: this input crashes", or not decided, with why.

mypy runs as its own process on copies of the modules in a temporary folder, with no
configuration file of the repository (``--config-file=``: a project's configuration may
name plugins, which are code), imports of other modules skipped, and a time limit. It
never runs the code it reads.
"""

from __future__ import annotations

import importlib.util
import logging
import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import PurePosixPath

__all__ = ["CRASH_CODES", "TypeWarning", "mypy_available", "mypy_warnings"]

log = logging.getLogger(__name__)

# mypy's error codes that name a place an exception may be raised at run time, and the
# builtin class it would be (None: any).
CRASH_CODES: Mapping[str, str | None] = {
    "union-attr": "AttributeError",  # Item "None" of "X | None" has no attribute "y"
    "attr-defined": "AttributeError",
    "index": "TypeError",  # Value of type "X | None" is not indexable
    "operator": "TypeError",  # Unsupported operand types for + ("None" and "int")
    "possibly-undefined": "NameError",  # Name "x" may be undefined (UnboundLocalError)
    "call-arg": "TypeError",
    "arg-type": None,  # Argument 1 to "len" has incompatible type "str | None"
    "call-overload": "TypeError",
    "misc": None,
}
_LINE = re.compile(r"^(?P<path>[^:\n]+):(?P<line>\d+): error: (?P<message>.*?)"
                   r"(?:\s+\[(?P<code>[a-z-]+)\])?$")
# Files mypy reads per review, and its time limit.
MAX_FILES = 40
TIMEOUT_S = 120.0


@dataclass(frozen=True)
class TypeWarning:
    """One warning: where, mypy's error code, and its message."""

    path: str
    line: int
    code: str
    message: str

    @property
    def exception(self) -> str | None:
        return CRASH_CODES.get(self.code)

    def text(self) -> str:
        return f"mypy line {self.line} [{self.code}] {self.message}"


def mypy_available() -> bool:
    return importlib.util.find_spec("mypy") is not None


def mypy_warnings(files: Mapping[str, str], *, timeout_s: float = TIMEOUT_S
                  ) -> tuple[list[TypeWarning], str]:
    """The crash-site warnings mypy gives on ``files`` (repository path -> text), and a
    note where some or all were not read ("" when all were)."""
    if not files:
        return [], ""
    if not mypy_available():
        return [], "mypy is not installed here (`pip install mypy` to get its warnings)"
    wanted = dict(sorted(files.items())[:MAX_FILES])
    note = (f"mypy read {MAX_FILES} of the {len(files)} changed modules"
            if len(files) > MAX_FILES else "")
    with tempfile.TemporaryDirectory(prefix="veribot-mypy-") as tmp:
        names: dict[str, str] = {}
        for path, text in wanted.items():
            target = PurePosixPath(path)
            if target.is_absolute() or ".." in target.parts or target.suffix != ".py":
                continue
            local = os.path.join(tmp, "src", *target.parts)
            os.makedirs(os.path.dirname(local), exist_ok=True)
            with open(local, "w", encoding="utf-8") as handle:
                handle.write(text)
            names[os.path.relpath(local, tmp)] = path
        if not names:
            return [], note
        command = [sys.executable, "-m", "mypy", "--config-file=",
                   "--enable-error-code=possibly-undefined", "--strict-optional",
                   "--ignore-missing-imports", "--follow-imports=skip",
                   "--show-error-codes", "--no-error-summary", "--hide-error-context",
                   "--no-color-output", "--no-pretty", "--soft-error-limit=-1",
                   "--cache-dir", os.path.join(tmp, "cache"), "--explicit-package-bases",
                   *sorted(names)]
        env = {"PATH": os.environ.get("PATH", ""), "MYPYPATH": "",
               "PYTHONPATH": "", "HOME": tmp}
        try:
            done = subprocess.run(command, cwd=tmp, env=env, capture_output=True, text=True,
                                  timeout=timeout_s, check=False)
        except subprocess.TimeoutExpired:
            return [], f"mypy did not finish within {timeout_s:g} s: its warnings are not read"
        except OSError as err:
            return [], f"mypy could not start ({err})"
    if done.returncode not in (0, 1):
        first = (done.stderr or done.stdout).strip().splitlines()[:1]
        return [], f"mypy failed ({first[0][:200] if first else f'exit {done.returncode}'})"
    out = []
    for raw in done.stdout.splitlines():
        m = _LINE.match(raw.strip())
        if m is None or m.group("code") not in CRASH_CODES:
            continue
        found = names.get(os.path.normpath(m.group("path")))
        if found is None:
            continue
        out.append(TypeWarning(found, int(m.group("line")), m.group("code"),
                               m.group("message").strip()))
    return out, note
