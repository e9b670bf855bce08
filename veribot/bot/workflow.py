"""What a step may tell the Actions runner: annotations, the job summary and outputs.

Workflow commands (``::error file=...,line=...::message``) are lines on the step's output;
the runner reads them from every line the step prints, so text that comes from the code
under review could forge one (``::add-mask::``, a fake annotation). :class:`Commands`
therefore stops command processing for the length of the review (``::stop-commands::``
with a random token) and resumes it only to write its own commands, whose values are
escaped as the runner expects (``%``, CR, LF; ``:`` and ``,`` in properties) and clipped.

GitHub's limits: at most 10 annotations of each level per step are shown; the job
summary (``GITHUB_STEP_SUMMARY``) holds at most 1 MiB per step; outputs go to the
``GITHUB_OUTPUT`` file as ``name=value`` lines.
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, TextIO

AnnotationLevel = Literal["error", "warning", "notice"]
ANNOTATIONS_PER_LEVEL = 10
MAX_SUMMARY_BYTES = 1024 * 1024
MAX_MESSAGE_CHARS = 2000
MAX_TITLE_CHARS = 200
CUT_NOTE = "\n\n(cut to GitHub's 1 MiB limit for a job summary)\n"


@dataclass(frozen=True)
class WorkflowAnnotation:
    """An annotation on a line of a file of the repository (its path relative to the root)."""

    level: AnnotationLevel
    path: str
    line: int
    end_line: int
    message: str
    title: str = ""


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def escape_data(text: str) -> str:
    """A command's message, as the runner unescapes it (one line, nothing to interpret)."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """A command's property value (``file=``, ``title=``)."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def annotation_command(annotation: WorkflowAnnotation) -> str:
    """The ``::level file=...,line=...,endLine=...,title=...::message`` line."""
    props = [
        f"file={escape_property(annotation.path)}",
        f"line={annotation.line}",
        f"endLine={max(annotation.line, annotation.end_line)}",
    ]
    if annotation.title:
        props.append(f"title={escape_property(_clip(annotation.title, MAX_TITLE_CHARS))}")
    message = escape_data(_clip(annotation.message, MAX_MESSAGE_CHARS))
    return f"::{annotation.level} {','.join(props)}::{message}"


def shown(annotations: Sequence[WorkflowAnnotation]) -> tuple[list[WorkflowAnnotation], int]:
    """The annotations GitHub will show (the first 10 of each level) and how many are left."""
    kept: list[WorkflowAnnotation] = []
    counts: dict[str, int] = {}
    for annotation in annotations:
        counts[annotation.level] = counts.get(annotation.level, 0) + 1
        if counts[annotation.level] <= ANNOTATIONS_PER_LEVEL:
            kept.append(annotation)
    return kept, len(annotations) - len(kept)


class Commands:
    """Workflow commands on ``out``, with command processing stopped in between."""

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self._token: str | None = None

    def stop(self) -> None:
        """From here on, no line the step prints is taken as a command."""
        if self._token is None:
            self._token = secrets.token_hex(16)
            self._write(f"::stop-commands::{self._token}")

    def resume(self) -> None:
        if self._token is not None:
            self._write(f"::{self._token}::")
            self._token = None

    def annotate(self, annotations: Sequence[WorkflowAnnotation]) -> None:
        self.resume()
        for annotation in annotations:
            self._write(annotation_command(annotation))

    def message(self, level: AnnotationLevel, text: str, title: str = "veribot") -> None:
        """An annotation without a file (a configuration error, a note about the run)."""
        self.resume()
        self._write(
            f"::{level} title={escape_property(title)}::"
            f"{escape_data(_clip(text, MAX_MESSAGE_CHARS))}"
        )

    def _write(self, line: str) -> None:
        self.out.write(line + "\n")
        self.out.flush()


def clip_summary(markdown: str, limit: int = MAX_SUMMARY_BYTES) -> str:
    """``markdown`` within ``limit`` UTF-8 bytes, cut on a character boundary, saying so."""
    data = markdown.encode("utf-8")
    if len(data) <= limit:
        return markdown
    room = limit - len(CUT_NOTE.encode("utf-8"))
    return data[:room].decode("utf-8", errors="ignore") + CUT_NOTE


def write_step_summary(path: Path, markdown: str) -> None:
    """Append this step's summary (GitHub takes at most 1 MiB per step)."""
    with path.open("a", encoding="utf-8") as out:
        out.write(clip_summary(markdown))


def write_outputs(path: Path, values: Mapping[str, str | int]) -> None:
    """The step's outputs, as ``name=value`` lines (values are one line each)."""
    with path.open("a", encoding="utf-8") as out:
        for key, value in values.items():
            text = str(value)
            if "\n" in text or "\r" in text:
                raise ValueError(f"output {key} must be one line")
            out.write(f"{key}={text}\n")
