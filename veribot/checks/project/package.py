"""The package a module belongs to, so the sandbox can load it as part of that package.

A file under review is imported as ``pkg.sub.module`` with the files of its own revision
beside it (the package directory chain up to the top-level package, that package's
modules, the top-level modules beside the package, or the sibling modules of a file
outside any package), so relative imports and imports of the project's own package work.
The package's other files (its data: ``limit.txt`` read through ``importlib.resources``,
``pkgutil.get_data`` or beside ``__file__``; beside a lone module, the files of its
folder) come after the modules, as bytes. What is copied is bounded (``MAX_FILES``,
``MAX_BYTES`` for modules and data together); only files inside the repository are taken
(no symbolic link), and what was left out is counted, modules and data apart.
"""

from __future__ import annotations

import posixpath
import sys
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

__all__ = [
    "MAX_BYTES",
    "MAX_FILES",
    "MAX_TEST_BYTES",
    "MAX_TEST_FILES",
    "Package",
    "PairContext",
    "SourceFile",
    "collect",
    "module_name",
]

MAX_FILES = 300
MAX_BYTES = 2 * 1024 * 1024
# Test and doc files read per revision for calls of the changed functions.
MAX_TEST_FILES = 4
MAX_TEST_BYTES = 1024 * 1024
# Names the sandbox's own children use: a package of that name is not loaded as one.
_RESERVED = frozenset({"subject", "veribot_canonical", "hypothesis", "veribot"})


@dataclass(frozen=True)
class Package:
    """One version's module with the files of its revision it is imported with.

    ``module`` is the dotted name (``pkg.sub.mod``); ``path`` the module's file relative
    to the repository (``src/pkg/sub/mod.py``); ``root`` the folder, relative to the
    repository, that goes on ``sys.path`` (``src`` here, ``""`` for the top folder);
    ``files`` the other modules, repository-relative path and text; ``left_out`` how many
    candidate modules the caps left out; ``data`` the package's other files (path and
    bytes) and ``data_left_out`` how many of them the caps left out.
    """

    module: str
    path: str
    root: str
    files: tuple[tuple[str, str], ...] = ()
    left_out: int = 0
    data: tuple[tuple[str, bytes], ...] = ()
    data_left_out: int = 0

    def tree(self, source: str) -> dict[str, str | bytes]:
        """The files to write, repository-relative, with ``source`` as the module's file."""
        files: dict[str, str | bytes] = dict(self.data)
        files.update(self.files)
        files[self.path] = source
        return files

    @property
    def note(self) -> str:
        """What was loaded, for a verdict's notes."""
        text = f"loaded as `{self.module}` with {len(self.files)} file(s) of its revision"
        if self.data:
            text += f" and {len(self.data)} data file(s)"
        if self.left_out or self.data_left_out:
            text += f" ({self.left_out + self.data_left_out} more left out by the size caps)"
        return text


@dataclass(frozen=True)
class SourceFile:
    """A file of one revision, repository-relative path and text."""

    path: str
    text: str


@dataclass(frozen=True)
class PairContext:
    """The package of the before version (base revision) and of the after one (head).

    ``before_tests``/``after_tests``: test and doc files of each revision that mention
    the changed functions by name (bounded: ``MAX_TEST_FILES``, ``MAX_TEST_BYTES``); their
    calls of a function are inputs to try (``veribot.checks.search.harvest``).
    """

    before: Package | None = None
    after: Package | None = None
    before_tests: tuple[SourceFile, ...] = ()
    after_tests: tuple[SourceFile, ...] = ()


def _safe(path: str) -> bool:
    parts = path.split("/")
    return bool(path) and not path.startswith("/") and all(p not in ("", ".", "..") for p in parts)


def module_name(path: str, exists: Callable[[str], bool]) -> tuple[str, str] | None:
    """``(dotted name, sys.path root)`` of the module at repository-relative ``path``.

    Folders holding an ``__init__.py`` are packages; the chain stops at the first that
    does not. ``None`` when the path cannot be imported under a name (not ``.py``, a
    part that is not an identifier, or a top-level name the standard library or the
    sandbox uses).
    """
    if not _safe(path) or not path.endswith(".py"):
        return None
    folder, file = posixpath.split(path)
    parts = [] if file == "__init__.py" else [file[:-3]]
    while folder and exists(posixpath.join(folder, "__init__.py")):
        folder, name = posixpath.split(folder)
        parts.insert(0, name)
    if not parts or not all(p.isidentifier() for p in parts):
        return None
    if parts[0] in sys.stdlib_module_names or parts[0] in _RESERVED:
        return None
    return ".".join(parts), folder


def collect(
    path: str,
    exists: Callable[[str], bool],
    listing: Callable[[str, bool], Iterable[str]],
    read: Callable[[str], bytes | None],
    *,
    max_files: int = MAX_FILES,
    max_bytes: int = MAX_BYTES,
) -> Package | None:
    """The package of the module at ``path``, read from one revision.

    ``exists(p)``: whether file ``p`` is in the revision; ``listing(folder, recursive)``:
    the file paths under ``folder``; ``read(p)``: a file's bytes (``None`` if unreadable).
    The package directory chain's own modules come first, then the rest of the top-level
    package, nearest first, then the top-level modules beside it, then the package's data
    files, until a cap is reached.
    """
    named = module_name(path, exists)
    if named is None:
        return None
    module, root = named
    dotted = module.split(".")
    in_package = posixpath.basename(path) == "__init__.py" or len(dotted) > 1
    beside = [p for p in listing(root, False) if _safe(p) and posixpath.dirname(p) == root]
    if in_package:
        top = posixpath.join(root, dotted[0]) if root else dotted[0]
        inside = [p for p in listing(top, True) if _safe(p)]
        chain = {posixpath.dirname(path)}
        folder = posixpath.dirname(path)
        while folder != top and folder:
            folder = posixpath.dirname(folder)
            chain.add(folder)
        candidates = sorted((p for p in inside if p.endswith(".py")), key=lambda p: (
            posixpath.dirname(p) not in chain, p.count("/"), p))
        candidates += sorted(p for p in beside if p.endswith(".py"))
        data = sorted((p for p in inside if not p.endswith(".py")),
                      key=lambda p: (p.count("/"), p))
    else:
        candidates = sorted(p for p in beside if p.endswith(".py"))
        data = sorted(p for p in beside if not p.endswith(".py"))
    files: list[tuple[str, str]] = []
    size = 0
    left_out = 0
    for candidate in candidates:
        if candidate == path:
            continue
        blob = read(candidate) if len(files) < max_files else None
        if blob is None or size + len(blob) > max_bytes:
            left_out += 1
            continue
        try:
            text = blob.decode("utf-8")
        except UnicodeDecodeError:
            left_out += 1
            continue
        files.append((candidate, text))
        size += len(blob)
    kept: list[tuple[str, bytes]] = []
    for candidate in data:
        blob = read(candidate) if len(files) + len(kept) < max_files else None
        if blob is None or size + len(blob) > max_bytes:
            continue
        kept.append((candidate, blob))
        size += len(blob)
    return Package(module, path, root, tuple(files), left_out, tuple(kept),
                   len(data) - len(kept))


def from_mapping(path: str, tree: Mapping[str, bytes], **caps: int) -> Package | None:
    """``collect`` over a mapping of repository-relative paths to contents (for tests)."""

    def listing(folder: str, recursive: bool) -> list[str]:
        prefix = f"{folder}/" if folder else ""
        return [p for p in tree if p.startswith(prefix)
                and (recursive or "/" not in p[len(prefix):])]

    return collect(path, tree.__contains__, listing, tree.get, **caps)
