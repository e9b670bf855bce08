"""The analyzer's read-only view of the two revisions, and its tools ``cat`` and ``code_search``.

The agent sees two trees, ``original/`` (before the change) and ``modified/`` (after it),
through a :class:`SourceView` over two :class:`Revision` readers the caller injects (the
bot reads git trees, tests pass dictionaries). Nothing here touches the file system: a
path is only ever a key into the revision, so nothing outside the repository is reachable.
Paths are still normalised and checked (no absolute paths, no ``..``) so that the error
messages are honest. Every answer is capped in size; the caps are in :class:`ViewLimits`.

``code_search`` matches a literal string, not a regular expression: a pattern written by
the model must not be able to make the search backtrack for minutes.
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from veribot.checks.agent.llm import ToolSpec

ORIGINAL = "original"
MODIFIED = "modified"


class ToolError(Exception):
    """A tool call the view refuses (bad path, bad range); the message goes to the model."""


class Revision(Protocol):
    """Read-only access to the text files of one revision."""

    def paths(self) -> Sequence[str]:
        """Every file path, relative to the repository root, ``/``-separated."""
        ...

    def read(self, path: str) -> str | None:
        """The text of ``path``, or ``None`` when it does not exist or is not text."""
        ...


@dataclass(frozen=True)
class MemoryRevision:
    """A revision held in memory: path to text."""

    files: Mapping[str, str] = field(hash=False)

    def paths(self) -> Sequence[str]:
        return sorted(self.files)

    def read(self, path: str) -> str | None:
        return self.files.get(path)


@dataclass(frozen=True)
class ViewLimits:
    """Caps on what one tool call may return."""

    max_file_chars: int = 400_000  # larger files are refused
    max_cat_lines: int = 300  # lines per cat call
    max_result_chars: int = 16_000  # characters per tool result
    max_matches: int = 40  # code_search hits
    max_search_files: int = 2_000  # files scanned per code_search
    min_pattern: int = 2
    max_pattern: int = 200


CAT_TOOL = ToolSpec(
    name="cat",
    description=(
        "Print lines start..end (1-based, inclusive) of a file, with line numbers. Paths "
        "start with original/ (before the change) or modified/ (after it), e.g. "
        "original/pkg/mod.py. Without start/end, the first lines of the file."
    ),
    input_schema={
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "original/... or modified/..."},
            "start": {"type": "integer", "minimum": 1},
            "end": {"type": "integer", "minimum": 1},
        },
        "required": ["path"],
    },
)
SEARCH_TOOL = ToolSpec(
    name="code_search",
    description=(
        "Search both revisions for a literal string (not a regular expression), e.g. "
        "'def is_empty'. Returns path:line: text for each matching line."
    ),
    input_schema={
        "type": "object",
        "properties": {"pattern": {"type": "string"}},
        "required": ["pattern"],
    },
)
TOOLS = (CAT_TOOL, SEARCH_TOOL)


@dataclass(frozen=True)
class SourceView:
    """The two revisions as the agent's tools see them."""

    original: Revision
    modified: Revision
    limits: ViewLimits = ViewLimits()

    def call(self, name: str, tool_input: Mapping[str, object]) -> str:
        """Run tool ``name``; raises ``ToolError`` with a message for the model."""
        if name == CAT_TOOL.name:
            path = tool_input.get("path")
            if not isinstance(path, str):
                raise ToolError("cat needs a string 'path'")
            return self.cat(path, _opt_int(tool_input, "start"), _opt_int(tool_input, "end"))
        if name == SEARCH_TOOL.name:
            pattern = tool_input.get("pattern")
            if not isinstance(pattern, str):
                raise ToolError("code_search needs a string 'pattern'")
            return self.code_search(pattern)
        raise ToolError(f"no tool named {name!r}; the tools are cat and code_search")

    def cat(self, path: str, start: int | None = None, end: int | None = None) -> str:
        """Lines ``start..end`` of ``path`` (``original/...`` or ``modified/...``)."""
        revision, rel = self._resolve(path)
        text = revision.read(rel)
        if text is None:
            raise ToolError(f"{path}: no such file (use code_search to find files)")
        if len(text) > self.limits.max_file_chars:
            raise ToolError(f"{path}: file too large to read ({len(text)} characters)")
        lines = text.splitlines()
        first = 1 if start is None else start
        last = first + self.limits.max_cat_lines - 1 if end is None else end
        if first < 1 or last < first:
            raise ToolError(f"{path}: bad line range {first}..{last}")
        if first > len(lines):
            raise ToolError(f"{path}: has only {len(lines)} lines")
        last = min(last, len(lines), first + self.limits.max_cat_lines - 1)
        body = "\n".join(f"{n}: {lines[n - 1]}" for n in range(first, last + 1))
        more = f"\n[lines {last + 1}..{len(lines)} not shown]" if last < len(lines) else ""
        return self._cap(f"# file: {path} (lines {first}..{last} of {len(lines)})\n{body}{more}")

    def code_search(self, pattern: str) -> str:
        """Every line of either revision containing ``pattern`` (literally)."""
        lim = self.limits
        if not lim.min_pattern <= len(pattern) <= lim.max_pattern or "\n" in pattern:
            raise ToolError(
                f"the pattern must be one line of {lim.min_pattern} to {lim.max_pattern} characters"
            )
        hits: list[str] = []
        scanned = 0
        truncated = False
        for prefix, revision in ((ORIGINAL, self.original), (MODIFIED, self.modified)):
            for rel in revision.paths():
                scanned += 1
                if scanned > lim.max_search_files:
                    truncated = True
                    break
                text = revision.read(rel)
                if text is None or len(text) > lim.max_file_chars or pattern not in text:
                    continue
                for n, line in enumerate(text.splitlines(), start=1):
                    if pattern in line:
                        hits.append(f"{prefix}/{rel}:{n}: {line.strip()[:200]}")
                        if len(hits) >= lim.max_matches:
                            truncated = True
                            break
                if truncated:
                    break
            if truncated:
                break
        if not hits:
            return f"no line contains {pattern!r}"
        note = "\n[more matches not shown; search for something more specific]" if truncated else ""
        return self._cap("\n".join(hits) + note)

    def _resolve(self, path: str) -> tuple[Revision, str]:
        raw = path.strip().replace("\\", "/")
        if raw.startswith("/"):
            raise ToolError(
                f"{path}: absolute paths are not allowed; use original/... or modified/..."
            )
        norm = posixpath.normpath(raw)
        if norm == ".." or norm.startswith("../") or "/../" in f"/{norm}/":
            raise ToolError(f"{path}: paths must stay inside the repository")
        top, _, rel = norm.partition("/")
        if top not in (ORIGINAL, MODIFIED) or not rel:
            raise ToolError(f"{path}: paths start with original/ or modified/")
        return (self.original if top == ORIGINAL else self.modified), rel

    def _cap(self, text: str) -> str:
        limit = self.limits.max_result_chars
        if len(text) <= limit:
            return text
        return text[:limit] + f"\n[output cut at {limit} characters]"


def _opt_int(tool_input: Mapping[str, object], key: str) -> int | None:
    value = tool_input.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise ToolError(f"{key!r} must be a whole number")
    return value
