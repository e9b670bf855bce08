"""Changed units: pair the functions of two versions of one file by qualified name.

A *unit* is what a review reports one line about: a function or method (paired by its
qualified name, ``path/to/mod.py::Class.method``), a change outside functions (module-level
code, imports, class attributes and bases), a file that could not be read (binary, not
Python, does not parse). Nothing in a changed file is silently dropped: every function that
was added, deleted or renamed, and every change outside functions, becomes a unit.

Two versions of a function count as the same when their syntax trees are equal without
line information: formatting and comments are ignored, docstrings and decorators are not.
Functions nested inside functions belong to their enclosing function. Two refinements:

- *noise*: when the two modules are the same code once docstrings are removed (and the code
  names nothing that reads docstrings, source or line numbers), a function whose docstring
  or layout changed is a changed unit marked ``noise`` ("docstring" / "formatting"), which
  the review verifies at once under stated assumptions;
- a function whose code is unchanged but which reads a module-level name (a constant, an
  import) whose binding changed, directly or through a function or class of the same
  module, is a changed unit too, with a detail saying which names.

Pure: no git, no files, no environment. The caller passes the bytes of both versions.
"""

from __future__ import annotations

import ast
import builtins
import dataclasses
import enum
import functools
import importlib.util
import posixpath
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from veribot.checks.lang import pyinterfere, pysource
from veribot.checks.project import noise, reads
from veribot.checks.project.package import PairContext

MODULE_ENTRY = "<module>"
# ``ChangedUnit.noise`` of a class whose docstring alone changed where the module changed
# otherwise too (``_class_doc_only``).
CLASS_DOCSTRING = "class-docstring"
# ``ChangedUnit.noise`` of a function whose last definition is the same but an earlier
# one of the same name, which a later one replaces, changed: not compared.
REPLACED = "replaced"
# ``ChangedUnit.noise`` of a function whose layout alone changed in a module that may read
# line numbers or source text: not compared (its code is the same; what differs is what
# no model of the code sees).
LAYOUT_READ = "layout-read"

# git's own heuristic: a NUL byte in the first 8000 bytes means binary.
_BINARY_SNIFF = 8000

_FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef


# The detail of an unchanged function of a moved module with relative imports (which the
# review drops where the module keeps its dotted name: ``review._same_module_moves``).
MOVED_UNCHANGED = ("its code is unchanged, but its module moved, and imports relative to it "
                   "may reach other modules")


class UnitKind(enum.Enum):
    """What happened to one unit between the two versions."""

    CHANGED = "changed"  # a function present in both versions, with different code
    UNCHANGED = "unchanged"  # a function present in both versions, same code
    ADDED = "added"  # a function (or class) only in the after version
    DELETED = "deleted"  # a function (or class) only in the before version
    RENAMED = "renamed"  # a function whose code is identical apart from its name; a file move
    OUTSIDE_FUNCTIONS = "outside-functions"  # module-level or class-level code changed
    PARSE_ERROR = "parse-error"  # a version does not parse or decode
    BINARY = "binary"  # a Python file whose content is binary
    NOT_PYTHON = "not-python"  # a file that is not Python source: not checked
    SKIPPED = "skipped"  # a test file or stub the configuration leaves out: listed, not checked


class UnitLevel(enum.Enum):
    """What a unit is: a function or method, a class (its own code), or a whole file."""

    FUNCTION = "function"
    CLASS = "class"
    FILE = "file"


@dataclass(frozen=True)
class FileChange:
    """Both versions of one file; ``None`` content means the file does not exist there."""

    before_path: str | None
    after_path: str | None
    before: bytes | None
    after: bytes | None
    binary: bool = False  # the caller already knows the file is binary (e.g. from git)

    @property
    def path(self) -> str:
        """The path a person knows the file by: the after path, else the before path."""
        path = self.after_path or self.before_path
        if path is None:
            raise ValueError("a file change needs at least one path")
        return path


@dataclass(frozen=True)
class ChangedUnit:
    """One unit of a change, with what a check needs to decide it.

    ``entry`` is the qualified name inside the module (``Class.method``), or
    ``"<module>"`` for a file-level unit. ``before_source`` / ``after_source`` are the whole
    module texts (a check needs the module context), ``None`` where that version is absent
    or unreadable. Line ranges are 1-based and inclusive. ``line`` is where a reader should
    look: in the after version if the unit exists there, else in the before version.
    """

    kind: UnitKind
    path: str
    entry: str
    before_path: str | None = None
    after_path: str | None = None
    before_source: str | None = None
    after_source: str | None = None
    before_lines: tuple[int, int] | None = None
    after_lines: tuple[int, int] | None = None
    before_entry: str | None = None  # the name before, for a renamed function
    detail: str = ""
    level: UnitLevel = UnitLevel.FUNCTION
    # Each version's package from its own revision, for loading it in the sandbox.
    context: PairContext | None = None
    # "docstring" / "annotations" / "formatting": the only change is the docstring, the
    # annotations (and perhaps the docstring), or the layout and comments, and the rest of
    # the module is the same code (see ``noise``); ``LAYOUT_READ``; "" otherwise.
    noise: str = ""

    @property
    def qualname(self) -> str:
        """``path/to/mod.py::Class.method`` (``path::<module>`` for file-level units)."""
        return f"{self.path}::{self.entry}"

    @property
    def line(self) -> int | None:
        """The first line to show: in the after version if present there, else before."""
        if self.after_lines is not None:
            return self.after_lines[0]
        if self.before_lines is not None:
            return self.before_lines[0]
        return None

    @property
    def in_after(self) -> bool:
        """Whether the unit's line refers to the after version of the file."""
        return self.after_lines is not None or (
            self.before_lines is None and self.after_path is not None
        )

    @property
    def is_function(self) -> bool:
        """Whether this unit is a function or method (not a file or a class)."""
        return self.level is UnitLevel.FUNCTION


def is_python_path(path: str) -> bool:
    """Whether ``path`` names Python source by its extension."""
    return path.endswith((".py", ".pyi"))


def is_test_path(path: str) -> bool:
    """Whether ``path`` is a test file: under a ``test``/``tests``/``testing`` folder, or named
    ``test_*.py``, ``*_test.py`` or ``conftest.py`` (pytest's and unittest's conventions)."""
    parts = path.replace("\\", "/").split("/")
    name = parts[-1]
    if any(p in ("test", "tests", "testing") for p in parts[:-1]):
        return True
    stem = name.rsplit(".", 1)[0]
    return stem.startswith("test_") or stem.endswith("_test") or stem == "conftest"


def is_stub_path(path: str) -> bool:
    """Whether ``path`` is a type stub (``.pyi``): declarations, no code that runs."""
    return path.endswith(".pyi")


def is_binary(data: bytes) -> bool:
    """git's heuristic: binary when a NUL byte occurs in the first 8000 bytes."""
    return b"\0" in data[:_BINARY_SNIFF]


@dataclass(frozen=True)
class _Def:
    """One function or class found in a module, keyed by its qualified name."""

    entry: str
    node: _FunctionNode | ast.ClassDef
    lines: tuple[int, int]

    @property
    def is_class(self) -> bool:
        return isinstance(self.node, ast.ClassDef)


@dataclass(frozen=True)
class _Module:
    """A parsed version of a file, or why it could not be parsed."""

    source: str | None
    tree: ast.Module | None
    error: str = ""
    error_line: int | None = None


def changed_units(
    change: FileChange, *, include_unchanged: bool = False
) -> tuple[ChangedUnit, ...]:
    """Every unit of one file's change, in the order of the after version.

    Unchanged functions are left out unless ``include_unchanged`` is set.
    """
    path = change.path
    if not is_python_path(path):
        return (_file_unit(change, UnitKind.NOT_PYTHON, "not a Python file: not checked"),)
    if change.binary or any(d is not None and is_binary(d) for d in (change.before, change.after)):
        return (_file_unit(change, UnitKind.BINARY, "binary content in a .py file: not checked"),)

    before = _parse(change.before)
    after = _parse(change.after)
    units: list[ChangedUnit] = []
    if (
        change.before_path is not None
        and change.after_path is not None
        and change.before_path != change.after_path
    ):
        units.append(
            _file_unit(
                change,
                UnitKind.RENAMED,
                f"file renamed from {change.before_path}",
                before,
                after,
                after_lines=(1, 1),
            )
        )
    if before.error or after.error:
        units.extend(_parse_error_units(change, before, after))
        return tuple(units)
    units.extend(_pair(change, before, after, include_unchanged))
    return tuple(units)


def _parse(data: bytes | None) -> _Module:
    if data is None:
        return _Module(None, None)
    try:
        source = importlib.util.decode_source(data)
    except (UnicodeDecodeError, SyntaxError, LookupError) as exc:
        return _Module(None, None, f"cannot decode the file: {exc}", 1)
    try:
        tree = pysource.parse(source)
    except SyntaxError as exc:
        message = exc.msg or "invalid syntax"
        where = f" (line {exc.lineno})" if exc.lineno else ""
        return _Module(source, None, f"SyntaxError: {message}{where}", exc.lineno)
    except ValueError as exc:  # e.g. "source code string cannot contain null bytes"
        return _Module(source, None, f"cannot parse: {exc}", 1)
    return _Module(source, tree)


def _file_unit(
    change: FileChange,
    kind: UnitKind,
    detail: str,
    before: _Module | None = None,
    after: _Module | None = None,
    *,
    before_lines: tuple[int, int] | None = None,
    after_lines: tuple[int, int] | None = None,
    noise: str = "",
) -> ChangedUnit:
    return ChangedUnit(
        kind=kind,
        path=change.path,
        entry=MODULE_ENTRY,
        noise=noise,
        before_path=change.before_path,
        after_path=change.after_path,
        before_source=before.source if before else None,
        after_source=after.source if after else None,
        before_lines=before_lines,
        after_lines=after_lines,
        detail=detail,
        level=UnitLevel.FILE,
    )


def _parse_error_units(change: FileChange, before: _Module, after: _Module) -> list[ChangedUnit]:
    """One unit for the file, and one for each function of the readable side that changed.

    Without a tree on one side functions cannot be paired; a function whose exact text is
    not found in the other version is listed, so a reader sees what could not be checked.
    """
    side, broken = ("after", after) if after.error else ("before", before)
    line = broken.error_line or 1
    detail = f"the {side} version does not parse: {broken.error}"
    lines = (line, line)
    units = [
        _file_unit(
            change,
            UnitKind.PARSE_ERROR,
            detail,
            before,
            after,
            before_lines=lines if side == "before" else None,
            after_lines=lines if side == "after" else None,
        )
    ]
    readable = before if side == "after" else after
    other_text = broken.source or ""
    if readable.tree is None or readable.source is None:
        return units
    for d in _definitions(readable.tree):
        if d.is_class:
            continue
        segment = ast.get_source_segment(readable.source, d.node) or ""
        if segment and segment in other_text:
            continue
        units.append(
            ChangedUnit(
                kind=UnitKind.PARSE_ERROR,
                path=change.path,
                entry=d.entry,
                before_path=change.before_path,
                after_path=change.after_path,
                before_source=before.source,
                after_source=after.source,
                before_lines=d.lines if side == "after" else None,
                after_lines=d.lines if side == "before" else None,
                detail=detail,
            )
        )
    return units


def _definitions(tree: ast.Module) -> Iterator[_Def]:
    """Functions, methods and classes (nested classes too), not functions inside functions."""

    def walk(body: list[ast.stmt], prefix: str) -> Iterator[_Def]:
        for node in body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                entry = f"{prefix}{node.name}"
                start = min([node.lineno, *(d.lineno for d in node.decorator_list)])
                yield _Def(entry, node, (start, node.end_lineno or node.lineno))
                if isinstance(node, ast.ClassDef):
                    yield from walk(node.body, f"{entry}.")

    yield from walk(tree.body, "")


def _overload_stub(node: ast.AST, tree: ast.Module | None) -> bool:
    """Whether ``node`` is a definition decorated ``@overload`` of ``typing`` (or
    ``typing_extensions``), as the module's imports bind it: an ``overload`` of another
    library (``multimethod``, ``plum``) or of the module registers the definition."""
    return tree is not None and isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and any(
        noise.typing_name(d, tree) == "overload" for d in node.decorator_list)


def _accessor(node: ast.AST) -> bool:
    """Whether ``node`` is a property's setter, getter or deleter (``@x.setter``)."""
    return isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and any(
        isinstance(d, ast.Attribute) and d.attr in ("setter", "getter", "deleter")
        for d in node.decorator_list)


def _earlier_keys(tree: ast.Module | None) -> dict[str, list[str]]:
    """The code of each definition (by entry) that a later one of the same entry
    replaces, in order."""
    seen: dict[str, list[str]] = {}
    for d in _definitions(tree) if tree is not None else ():
        if not _overload_stub(d.node, tree):  # typing's, for type checkers: the next replaces it
            seen.setdefault(d.entry, []).append(_code_key(d.node))
    return {entry: keys[:-1] for entry, keys in seen.items() if len(keys) > 1}


def _code_key(node: ast.AST) -> str:
    return pysource.code_key(node)


def _body_key(node: _FunctionNode) -> str:
    """The function's code with its name blanked, to recognise a rename."""
    parts: list[ast.AST] = [node.args, *node.body, *node.decorator_list]
    if node.returns is not None:
        parts.append(node.returns)
    return type(node).__name__ + "|".join(_code_key(p) for p in parts)


def _outside_key(body: list[ast.stmt]) -> list[str]:
    return [
        _code_key(s)
        for s in body
        if not isinstance(s, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
    ]


def _class_header_key(node: ast.ClassDef) -> list[str]:
    header = [_code_key(n) for n in (*node.bases, *node.keywords, *node.decorator_list)]
    return ["header:" + "|".join(header), *_outside_key(node.body)]


def _first_outside_difference(
    before_body: list[ast.stmt], after_body: list[ast.stmt]
) -> tuple[int | None, int | None]:
    """Lines of the first statement outside functions that differs, in each version."""

    def outside(body: list[ast.stmt]) -> list[ast.stmt]:
        return [
            s
            for s in body
            if not isinstance(s, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
        ]

    b, a = outside(before_body), outside(after_body)
    for i in range(max(len(b), len(a))):
        bs = b[i] if i < len(b) else None
        as_ = a[i] if i < len(a) else None
        if bs is None or as_ is None or _code_key(bs) != _code_key(as_):
            return (bs.lineno if bs else None, as_.lineno if as_ else None)
    return (None, None)


def _pair(
    change: FileChange, before: _Module, after: _Module, include_unchanged: bool
) -> list[ChangedUnit]:
    b_defs = {d.entry: d for d in _definitions(before.tree)} if before.tree else {}
    a_defs = {d.entry: d for d in _definitions(after.tree)} if after.tree else {}
    # Definitions a later one of the same name replaces: a property's getter before its
    # setter, overloads, a function defined again (code may hold the first one).
    earlier = _earlier_keys(before.tree), _earlier_keys(after.tree)
    moved_relative = change.before_path != change.after_path and any(
        isinstance(n, ast.ImportFrom) and n.level for t in (before.tree, after.tree)
        if t is not None for n in ast.walk(t))

    def unit(
        kind: UnitKind,
        entry: str,
        detail: str = "",
        before_entry: str | None = None,
        noise: str = "",
    ) -> ChangedUnit:
        b, a = b_defs.get(before_entry or entry), a_defs.get(entry)
        found = a or b
        is_class = found is not None and found.is_class
        return ChangedUnit(
            kind=kind,
            path=change.path,
            entry=entry,
            before_path=change.before_path,
            after_path=change.after_path,
            before_source=before.source,
            after_source=after.source,
            before_lines=b.lines if b else None,
            after_lines=a.lines if a else None,
            before_entry=before_entry,
            detail=detail,
            level=UnitLevel.CLASS if is_class else UnitLevel.FUNCTION,
            noise=noise,
        )

    mode = ""  # what the whole module may differ in and stay the same code (`noise`)
    layout_read = False  # whether code of the module may read line numbers or source text
    by_constant: dict[str, str] = {}
    if before.tree is not None and after.tree is not None:
        layout_read = not noise.reads_no_source(before.tree, after.tree)
        # A moved file is another module (its name, its relative imports): no shortcut.
        if change.before_path == change.after_path:
            mode = noise.module_noise(before.tree, after.tree)
        if not mode:
            by_constant = _constant_dependents(before.tree, after.tree)

    @functools.cache
    def line_readers() -> frozenset[str]:
        """``_source_readers`` of the module, read once (it walks every function)."""
        return _source_readers((before.tree, after.tree), a_defs, b_defs)

    units: list[ChangedUnit] = []
    # Changes outside functions: the module itself (only when both versions exist: an
    # added or deleted file is already said by its functions and the file unit).
    if before.tree is not None and after.tree is not None:
        if _outside_key(before.tree.body) != _outside_key(after.tree.body):
            b_line, a_line = _first_outside_difference(before.tree.body, after.tree.body)
            units.append(
                _file_unit(
                    change,
                    UnitKind.OUTSIDE_FUNCTIONS,
                    _OUTSIDE_NOISE.get(
                        mode, "module-level code changed (imports, constants, statements)")
                    + (
                        f"; the {len(by_constant)} function(s) that read a changed name are "
                        "checked as changed units"
                        if by_constant
                        else ""
                    ),
                    before,
                    after,
                    before_lines=(b_line, b_line) if b_line else None,
                    after_lines=(a_line, a_line) if a_line else (1, 1),
                    noise=mode,
                )
            )
    elif before.tree is None and after.tree is not None and _outside_key(after.tree.body):
        units.append(
            _file_unit(change, UnitKind.ADDED, "new file", before, after, after_lines=(1, 1))
        )
    elif after.tree is None and before.tree is not None:
        units.append(
            _file_unit(change, UnitKind.DELETED, "file deleted", before, after, before_lines=(1, 1))
        )

    # Renames: a deleted and an added function with identical code apart from the name.
    deleted = [e for e, d in b_defs.items() if e not in a_defs and not d.is_class]
    added = [e for e, d in a_defs.items() if e not in b_defs and not d.is_class]
    renamed_to: dict[str, str] = {}
    by_body: dict[str, list[str]] = {}
    for e in deleted:
        node = b_defs[e].node
        assert not isinstance(node, ast.ClassDef)
        by_body.setdefault(_body_key(node), []).append(e)
    for e in added:
        node = a_defs[e].node
        assert not isinstance(node, ast.ClassDef)
        candidates = by_body.get(_body_key(node))
        if candidates:
            renamed_to[e] = candidates.pop(0)
    renamed_from = set(renamed_to.values())

    for entry, a in a_defs.items():
        b = b_defs.get(entry)
        if a.is_class:
            if b is None:
                units.append(unit(UnitKind.ADDED, entry, "class added"))
            elif not isinstance(b.node, ast.ClassDef):
                units.append(unit(UnitKind.CHANGED, entry, "a function became a class"))
            elif isinstance(a.node, ast.ClassDef) and _class_header_key(
                b.node
            ) != _class_header_key(a.node):
                # Where the module is the same code but for noise, so is the class body; a
                # base from elsewhere may read the class's own docstring or annotations.
                assert after.tree is not None and before.tree is not None
                quiet = mode if mode in _OUTSIDE_NOISE and isinstance(
                    b.node, ast.ClassDef) and noise.plain_class(
                        b.node, before.tree) and noise.plain_class(a.node, after.tree) else ""
                detail = _OUTSIDE_NOISE[quiet] if quiet else (
                    "class-level code changed (bases, decorators, attributes)")
                if not quiet and not mode and _class_doc_only(
                        b.node, a.node, before.tree, after.tree, b_defs, a_defs):
                    quiet, detail = CLASS_DOCSTRING, (
                        "only the class's docstring changed; its other class-level code is "
                        "the same and reads nothing that changed")
                units.append(
                    unit(
                        UnitKind.OUTSIDE_FUNCTIONS,
                        entry,
                        detail,
                        noise=quiet,
                    )
                )
            continue
        if entry in renamed_to:
            old = renamed_to[entry]
            units.append(
                unit(
                    UnitKind.RENAMED, entry, f"renamed from {old}, code unchanged", before_entry=old
                )
            )
        elif b is None:
            units.append(unit(UnitKind.ADDED, entry, "function added"))
        elif b.is_class:
            units.append(unit(UnitKind.CHANGED, entry, "a class became a function"))
        elif earlier[0].get(entry, []) != earlier[1].get(entry, []):
            # A property holds its getter, whose change is checked with the property; code
            # may hold another replaced definition (`g = f` before `def f` again), which
            # checking the name's last definition says nothing of.
            units.append(unit(UnitKind.CHANGED, entry, "an earlier definition of the same "
                              "name changed", noise="" if _accessor(a.node) else REPLACED))
        elif _code_key(b.node) != _code_key(a.node):
            assert after.tree is not None and before.tree is not None
            kind = noise.function_noise(
                mode, _chain(entry, b_defs), _chain(entry, a_defs), before.tree, after.tree
            )
            if kind:
                units.append(unit(UnitKind.CHANGED, entry, _noise_detail(kind, b, a), noise=kind))
            elif entry in by_constant:
                units.append(
                    unit(
                        UnitKind.CHANGED,
                        entry,
                        f"it also reads {by_constant[entry]}, which changed too",
                    )
                )
            else:
                units.append(unit(UnitKind.CHANGED, entry))
        elif mode and _text(before, b) != _text(after, a):
            units.append(
                unit(
                    UnitKind.CHANGED,
                    entry,
                    "only formatting and comments changed",
                    noise="formatting",
                )
            )
        elif layout_read and _text(before, b) != _text(after, a):
            # A warning repeated from one line is shown once, from two lines twice.
            units.append(unit(UnitKind.CHANGED, entry, "only formatting and comments changed, "
                              "and the module may read line numbers or source text",
                              noise=LAYOUT_READ))
        elif entry in by_constant:
            units.append(
                unit(
                    UnitKind.CHANGED,
                    entry,
                    f"its code is unchanged, but it reads {by_constant[entry]}, which changed",
                )
            )
        elif moved_relative:
            units.append(unit(UnitKind.CHANGED, entry, MOVED_UNCHANGED))
        elif layout_read and before.source != after.source and entry in line_readers():
            # Its lines may have moved, or it may show another line (a traceback through a
            # function that changed, `linecache.getline(__file__, 9)`).
            units.append(unit(UnitKind.CHANGED, entry, "its code and text are unchanged, but "
                              "lines of its module changed, and the module may read line "
                              "numbers or source text", noise=LAYOUT_READ))
        elif include_unchanged:
            units.append(unit(UnitKind.UNCHANGED, entry))

    for entry, b in b_defs.items():
        if entry in a_defs or entry in renamed_from:
            continue
        units.append(
            unit(UnitKind.DELETED, entry, "class deleted" if b.is_class else "function deleted")
        )
    return units


# Outside functions, what a noise mode of the module means (`noise.module_noise`).
_OUTSIDE_NOISE = {
    noise.DOCSTRING: "only docstrings changed outside functions",
    noise.ANNOTATIONS: "only annotations and docstrings changed outside functions (or an "
                       "`if TYPE_CHECKING:` block, which never runs)",
}


def _class_doc_only(before: ast.ClassDef, after: ast.ClassDef, tree_before: ast.Module,
                    tree: ast.Module, b_defs: dict[str, _Def], a_defs: dict[str, _Def]) -> bool:
    """Whether a class's docstring is all its class-level code changed while the rest of
    the module changed too, and making the class runs nothing that may have changed: an
    undecorated class of plain bases in modules that read no docstring, whose header and
    class-level statements are the same but for the docstring, whose local bases changed
    in nothing and define no ``__init_subclass__``, and whose class-level code (its
    statements, its methods' decorators and defaults, and annotations that are evaluated)
    calls nothing and reads only literals and names that surely hold the same immutable
    value (``_inert``)."""
    if not (noise.plain_class(before, tree_before) and noise.plain_class(after, tree)
            and noise.reads_no_docstring(tree_before, tree)):
        return False

    def bare(node: ast.ClassDef) -> list[str]:
        body = node.body[1:] if ast.get_docstring(node, clean=False) is not None else node.body
        return _class_header_key(ast.ClassDef(
            name=node.name, bases=node.bases, keywords=node.keywords, body=body,
            decorator_list=node.decorator_list))

    if bare(before) != bare(after):
        return False
    entries = (set(b_defs) ^ set(a_defs)) | {
        e for e in set(b_defs) & set(a_defs)
        if _code_key(b_defs[e].node) != _code_key(a_defs[e].node)}
    changed = {part for e in entries for part in e.split(".")} - {after.name}
    for cls, module in ((before, tree_before), (after, tree)):
        if noise.may_rebind_globals(module):
            return False
        constants = _constants(module) - changed - _changed_module_names(tree_before, tree)
        if not _inert_class(cls, module, constants, changed, 0):
            return False
    return True


def _constants(tree: ast.Module) -> set[str]:
    """Module-level names bound once, by an assignment of an immutable literal (a string,
    a number, ``None``, a tuple of such), and declared ``global`` nowhere."""
    bound: dict[str, int] = {}
    literal: set[str] = set()
    for stmt in tree.body:
        for name in _bound_names(stmt):
            bound[name] = bound.get(name, 0) + 1
        target = stmt.targets[0] if isinstance(stmt, ast.Assign) and len(
            stmt.targets) == 1 else stmt.target if isinstance(stmt, ast.AnnAssign) else None
        value = stmt.value if isinstance(stmt, ast.Assign | ast.AnnAssign) else None
        if isinstance(target, ast.Name) and value is not None and _literal(value):
            literal.add(target.id)
    declared = {g for n in ast.walk(tree) if isinstance(n, ast.Global | ast.Nonlocal)
                for g in n.names}
    return {n for n in literal if bound.get(n) == 1} - declared


def _literal(node: ast.expr) -> bool:
    if isinstance(node, ast.Constant):
        return True
    if isinstance(node, ast.Tuple):
        return all(_literal(e) for e in node.elts)
    return isinstance(node, ast.UnaryOp) and isinstance(node.operand, ast.Constant)


# Builtins a class body may name: decorators of its methods.
_CLASS_BUILTINS = {"staticmethod", "classmethod", "property"}


def _inert_class(cls: ast.ClassDef, tree: ast.Module, constants: set[str],
                 changed: set[str], depth: int) -> bool:
    """Whether making ``cls`` runs no code that may differ (``_class_doc_only``): bases
    that are builtins or unchanged local classes without ``__init_subclass__`` (the same
    for theirs), and class-level code of literals, containers of them, ``constants``,
    the names the class body binds, the builtin decorators and ``abc``'s and ``typing``'s
    own (``abstractmethod``, ``overload``, ``final``, ``override``)."""
    if depth > 20 or cls.decorator_list or cls.keywords:
        return False
    local = {s.name: s for s in tree.body if isinstance(s, ast.ClassDef)}
    rebound = pyinterfere.bound_names(tree)
    for base in cls.bases:
        if isinstance(base, ast.Name) and base.id not in rebound and base.id in dir(builtins):
            continue
        if not (isinstance(base, ast.Name) and base.id in local and base.id not in changed):
            return False
        parent = local[base.id]
        if any(isinstance(s, ast.FunctionDef | ast.AsyncFunctionDef)
               and s.name == "__init_subclass__" for s in parent.body):
            return False
        if not _inert_class(parent, tree, constants, changed, depth + 1):
            return False
    own = {n for s in cls.body for n in _bound_names(s)}
    once = pyinterfere.bound_once(tree)
    stdlib: set[str] = set()  # names bound (once) by an import from the standard library
    for stmt in tree.body:
        if isinstance(stmt, ast.Import | ast.ImportFrom) and not getattr(stmt, "level", 0):
            for alias in stmt.names:
                source = stmt.module if isinstance(stmt, ast.ImportFrom) else alias.name
                if (source or "").split(".")[0] in sys.stdlib_module_names:
                    stdlib.add((alias.asname or alias.name).split(".")[0])
    stdlib &= once
    postponed = any(isinstance(s, ast.ImportFrom) and s.module == "__future__" and any(
        a.name == "annotations" for a in s.names) for s in tree.body)

    def inert(node: ast.expr) -> bool:
        if isinstance(node, ast.Constant):
            return True
        if isinstance(node, ast.Tuple | ast.List | ast.Set):
            return all(inert(e) for e in node.elts)
        if isinstance(node, ast.Dict):
            return all(k is None or inert(k) for k in node.keys) and all(
                inert(v) for v in node.values)
        if isinstance(node, ast.UnaryOp):
            return inert(node.operand)
        if isinstance(node, ast.Name):
            return node.id in constants or node.id in own
        return False

    def decorator(node: ast.expr) -> bool:
        if isinstance(node, ast.Name) and node.id in _CLASS_BUILTINS and node.id not in rebound:
            return True
        if isinstance(node, ast.Attribute) and node.attr in ("setter", "getter", "deleter") and (
                isinstance(node.value, ast.Name) and node.value.id in own):
            return True
        return noise.typing_name(node, tree, ("abc", "typing", "typing_extensions")) in (
            "abstractmethod", "overload", "final", "override")

    def notes(node: ast.expr | None) -> bool:
        """An annotation: never evaluated, or one of builtins, literals, the class's
        names and names imported from the standard library (``t.ClassVar[str]``)."""
        if node is None or postponed or (
                isinstance(node, ast.Constant) and isinstance(node.value, str)):
            return True
        return all(
            isinstance(n, ast.Name | ast.Attribute | ast.Subscript | ast.Tuple | ast.List
                       | ast.Constant | ast.BinOp | ast.BitOr | ast.Load | ast.expr_context)
            and (not isinstance(n, ast.Name) or n.id in constants or n.id in own
                 or n.id in stdlib or (n.id not in rebound and n.id in dir(builtins)))
            for n in ast.walk(node))

    for stmt in cls.body:
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
            a = stmt.args
            if not all(decorator(d) for d in stmt.decorator_list) or not all(
                    inert(d) for d in (*a.defaults, *(k for k in a.kw_defaults if k))) or not (
                    all(notes(p.annotation) for p in (*a.posonlyargs, *a.args, *a.kwonlyargs,
                                                      *(v for v in (a.vararg, a.kwarg) if v)))
                    and notes(stmt.returns)):
                return False
        elif isinstance(stmt, ast.Assign):
            if not (all(isinstance(t, ast.Name) for t in stmt.targets) and inert(stmt.value)):
                return False
        elif isinstance(stmt, ast.AnnAssign):
            if not (isinstance(stmt.target, ast.Name) and notes(stmt.annotation)
                    and (stmt.value is None or inert(stmt.value))):
                return False
        elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
            continue  # the docstring
        elif not isinstance(stmt, ast.Pass):
            return False
    return True


def _chain(entry: str, defs: dict[str, _Def]) -> list[_FunctionNode | ast.ClassDef]:
    """The enclosing classes of ``entry``, outermost first, then its own definition."""
    parts = entry.split(".")
    return [defs[".".join(parts[:i])].node for i in range(1, len(parts) + 1)]


def _noise_detail(kind: str, before: _Def, after: _Def) -> str:
    if kind == noise.DOCSTRING:
        return "only the docstring changed"
    docstrings = (ast.get_docstring(d.node, clean=False) for d in (before, after))
    if len(set(docstrings)) > 1:
        return "only the annotations and the docstring changed"
    return "only the annotations changed"


def _text(module: _Module, d: _Def) -> str:
    """The source lines of a definition, decorators included."""
    lines = (module.source or "").splitlines()
    return "\n".join(lines[d.lines[0] - 1 : d.lines[1]])


def _bound_names(stmt: ast.stmt) -> set[str]:
    """Module-level names a statement (outside functions) binds, imports or deletes: not
    the names a function or class it defines binds in its own body."""
    names: set[str] = set()
    todo: list[ast.AST] = [stmt]
    while todo:
        node = todo.pop()
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store | ast.Del):
            names.add(node.id)
        elif isinstance(node, ast.alias):
            names.add((node.asname or node.name).split(".")[0])
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
            # What the definition evaluates where it stands (a `:=` there binds here), and
            # the names its code declares `global`; a body's other names are its own.
            names.update(g for n in ast.walk(node) if isinstance(n, ast.Global)
                         for g in n.names)
            todo.extend(n for n in ast.iter_child_nodes(node)
                        if not isinstance(n, ast.stmt))
            continue
        todo.extend(ast.iter_child_nodes(node))
    return names


def _changed_module_names(before: ast.Module, after: ast.Module) -> set[str]:
    """Names bound by module-level statements (not function or class definitions) whose
    binding statements differ between the versions."""

    def statements(tree: ast.Module) -> Iterator[tuple[ast.stmt, bool]]:
        """The module's statements, each with whether it is a unit's own (a definition of
        the module's body), with ``if TYPE_CHECKING:`` as the ``else`` that runs: a name
        the block alone binds is unbound when the program runs, in either version."""
        for stmt in tree.body:
            if noise.type_checking_only(stmt, tree):
                assert isinstance(stmt, ast.If)
                yield from ((s, False) for s in stmt.orelse)
            else:
                yield stmt, isinstance(
                    stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)

    def bindings(tree: ast.Module) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        for stmt, own in statements(tree):
            if own:
                continue
            if isinstance(stmt, ast.Import | ast.ImportFrom):
                # One key per imported name: adding `perm` to `from math import ...` does
                # not change what `floor` is.
                where = f"{stmt.module}:{stmt.level}" if isinstance(stmt, ast.ImportFrom) else ""
                for alias in stmt.names:
                    name = (alias.asname or alias.name).split(".")[0]
                    out.setdefault(name, []).append(f"{where}:{alias.name}:{alias.asname}")
                continue
            key = _code_key(stmt)
            for name in _bound_names(stmt):
                out.setdefault(name, []).append(key)
        return out

    b, a = bindings(before), bindings(after)
    return {n for n in b.keys() | a.keys() if b.get(n) != a.get(n)}


def _reads(node: ast.AST, signatures: bool = True) -> set[str]:
    """The names ``node`` loads: not those of the annotations of a function's assignments
    (never evaluated), nor, without ``signatures``, those of its parameters and return."""
    found: set[str] = set()
    skip: set[int] = set()  # annotations left out (a parameter's is a grandchild of its def)
    todo: list[tuple[ast.AST, bool]] = [(node, False)]
    while todo:
        n, in_function = todo.pop()
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load):
            found.add(n.id)
        if isinstance(n, ast.AnnAssign) and in_function:
            skip.add(id(n.annotation))
        elif isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef) and not signatures:
            skip |= {id(n.returns)} | {id(a.annotation) for a in (
                *n.args.posonlyargs, *n.args.args, *n.args.kwonlyargs,
                *(x for x in (n.args.vararg, n.args.kwarg) if x is not None))}
        inner = in_function or isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda)
        if isinstance(n, ast.ClassDef):
            inner = False  # a class body evaluates its annotations
        todo.extend((c, inner) for c in ast.iter_child_nodes(n) if id(c) not in skip)
    return found


def _constant_dependents(before: ast.Module, after: ast.Module) -> dict[str, str]:
    """Functions and methods (by entry) that read a changed module-level name, directly or
    through a module-level function or class of the same module, with the names reached."""
    changed = _changed_module_names(before, after)
    if not changed:
        return {}
    signatures = not noise.signatures_unread(before, after)
    top: dict[str, set[str]] = {}  # top-level defs of the after version: names they read
    for tree in (before, after):
        for stmt in tree.body:
            if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                top.setdefault(stmt.name, set()).update(_reads(stmt, signatures))

    def via(names: set[str]) -> list[str]:
        """The changed names reached from ``names`` through top-level definitions."""
        seen: set[str] = set()
        todo = list(names)
        while todo:
            name = todo.pop()
            if name in seen:
                continue
            seen.add(name)
            if name in top and name not in changed:
                todo.extend(top[name])
        return sorted(seen & changed)

    out: dict[str, str] = {}
    for d in _definitions(after):
        if d.is_class:
            continue
        reached = via(_reads(d.node, signatures))
        if reached:
            shown = ", ".join(f"`{n}`" for n in reached[:5])
            more = f" and {len(reached) - 5} more" if len(reached) > 5 else ""
            out[d.entry] = f"the module-level {shown}{more}"
    return out


def _source_readers(trees: Sequence[ast.Module | None], *defs: dict[str, _Def]
                    ) -> frozenset[str]:
    """The functions whose own code may read line numbers or source text (``reads``), or
    names a name imported from what reads them (``from traceback import format_exc as
    fe``), and the functions that name such a module-level function, followed to a fixed
    point: what a change of the module's lines may change (see ``_readers``)."""
    quiet = reads.module_inert(trees)
    imported = {alias.asname or alias.name.partition(".")[0] for tree in trees if tree
                for node in ast.walk(tree) if isinstance(node, ast.Import | ast.ImportFrom)
                and reads.reads_source(node, quiet=quiet) for alias in node.names}
    return _readers(lambda node: reads.reads_source(node, quiet=quiet), imported,
                    list(defs), quiet)


def _readers(direct: Callable[[ast.AST], bool], imported: set[str],
             defs: Sequence[dict[str, _Def]], quiet: frozenset[int]) -> frozenset[str]:
    """The functions and methods of ``defs`` whose own code ``direct`` holds of, or that
    name one of ``imported``, then those naming a module-level function among them, to a
    fixed point. Only a module-level function is followed by its name: a method's name
    (``parse``, ``__init__``) is shared by every class that defines one, and following it
    would take in most of the module. A caller of a reader method is not listed; the
    verdicts stay sound without it (no proof stands on code that reads them). ``quiet``:
    ``reads.inert`` of the modules ``defs`` are of (a frame or a string whose use reads
    nothing)."""
    nodes = [(entry, d.node) for found in defs for entry, d in found.items() if not d.is_class]
    said = [(entry, reads.words(node, quiet)) for entry, node in nodes]
    readers = {entry for entry, node in nodes if direct(node)}
    readers |= {entry for entry, words in said if words & imported}
    while True:
        names = {r for r in readers if "." not in r} | imported
        more = {entry for entry, words in said if entry not in readers and words & names}
        if not more:
            return frozenset(readers)
        readers |= more


def data_readers(
    units: Sequence[ChangedUnit], package_of: Callable[[str], PairContext],
    folders: frozenset[str],
) -> list[ChangedUnit]:
    """The functions that may read a data file that changed (a file that is not Python,
    ``units`` listing it as such), as changed units, where ``units`` does not list them yet.

    A data file belongs to the top-level package of the folder it is in (``folders``: the
    folders holding an ``__init__.py``); ``package_of(path)`` is the context of the module
    at ``path`` in both revisions. In each module of that package, a function is listed
    when its own code may read a file or names the data file (``reads``), names what the
    module imported to read files or bound at its top level from a read, or names such a
    module-level function (``_readers``): its code is the same, what it reads is not.
    Callers in other modules are not listed (no verdict of the package stands on data it
    may read: ``reads.withheld``). A data file outside any package is not followed.
    """
    listed = {u.qualname for u in units}
    tops: dict[str, set[str]] = {}
    for u in units:
        if u.kind is not UnitKind.NOT_PYTHON:
            continue
        folder, top = posixpath.dirname(u.path), ""
        while folder:
            if folder in folders:
                top = folder
            elif top:
                break
            folder = posixpath.dirname(folder)
        if top:
            tops.setdefault(top, set()).update(
                p for p in (u.before_path, u.after_path) if p is not None)
    out: list[ChangedUnit] = []
    for top, changed in tops.items():
        texts = _package_texts(top, package_of)
        if texts is None:
            continue
        shown = ", ".join(f"`{p}`" for p in sorted(changed)[:3])

        parsed = {path: [ast.parse(before), ast.parse(after)]
                  for path, (before, after) in sorted(texts.items())
                  if _parses(before) and _parses(after)}
        quiet = reads.module_inert(t for trees in parsed.values() for t in trees)

        def direct(node: ast.AST, changed: set[str] = changed,
                   quiet: frozenset[int] = quiet) -> bool:
            return reads.reads_files(node, quiet) or reads.names_a_file(node, changed)

        modules: dict[str, tuple[set[str], list[dict[str, _Def]], frozenset[str]]] = {}
        for path, trees in parsed.items():
            carried = {name for tree in trees for node in tree.body
                       if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef
                                         | ast.ClassDef) and direct(node)
                       for name in _bound(node)}
            modules[path] = (carried, [{d.entry: d for d in _definitions(tree)}
                                       for tree in trees],
                             frozenset().union(*(reads.words(t) for t in trees)))
        # A module's reader functions, followed into the modules that name that module and
        # the function (`config.limit()`, `from pkg.config import limit`), to a fixed point.
        found: dict[str, frozenset[str]] = {}
        for _ in range(len(modules) + 1):
            exported = {path: {e for e in entries if "." not in e}
                        for path, entries in found.items()}
            again = {path: _readers(direct, carried | {
                name for other, names in exported.items() if other != path
                and _module_word(other) in said for name in names}, defs, quiet)
                for path, (carried, defs, said) in modules.items()}
            if again == found:
                break
            found = again
        for path in sorted(found):
            if not found[path]:
                continue
            before, after = texts[path]
            change = FileChange(path, path, before.encode(), after.encode())
            for u in changed_units(change, include_unchanged=True):
                if (u.kind is UnitKind.UNCHANGED and u.entry in found[path]
                        and u.qualname not in listed):
                    out.append(dataclasses.replace(
                        u, kind=UnitKind.CHANGED, detail=f"its code is unchanged, but its "
                        f"package's data changed ({shown}) and it may read it"))
    return out


def _module_word(path: str) -> str:
    """The name code uses for the module at ``path`` (``pkg/config.py``: ``config``; a
    package's ``__init__.py``: the package's)."""
    name = posixpath.basename(path).removesuffix(".py")
    return posixpath.basename(posixpath.dirname(path)) if name == "__init__" else name


def _bound(node: ast.AST) -> set[str]:
    """The names a module-level statement binds (assigned, imported)."""
    found: set[str] = set()
    for n in ast.walk(node):
        if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load):
            found.add(n.id)
        elif isinstance(n, ast.alias):
            found.add((n.asname or n.name).partition(".")[0])
    return found


def _parses(text: str) -> bool:
    try:
        ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


def _package_texts(top: str, package_of: Callable[[str], PairContext]
                   ) -> dict[str, tuple[str, str]] | None:
    """The modules of the package at folder ``top`` in both revisions (before and after
    text), or None where the package is not in both or the caps left modules out."""
    found: list[dict[str, str]] = [{}, {}]
    first = package_of(f"{top}/__init__.py")
    for context in (first, *(package_of(p) for p, _ in (
            first.after.files if first.after is not None else ())[:1])):
        for i, package in enumerate((context.before, context.after)):
            if package is None or package.left_out:
                return None
            found[i].update((p, t) for p, t in package.files if p.startswith(f"{top}/"))
    return {p: (found[0][p], found[1][p]) for p in found[0].keys() & found[1].keys()}


def function_entries(source: str) -> tuple[str, ...]:
    """Qualified names of every function and method in ``source`` (raises SyntaxError)."""
    return tuple(entry for entry, _ in function_definitions(pysource.parse(source)))


def function_definitions(tree: ast.Module) -> list[tuple[str, _FunctionNode]]:
    """Every function and method of ``tree`` (those of nested classes too) by qualified
    name; a function defined inside a function is part of it."""
    return [(d.entry, d.node) for d in _definitions(tree)
            if isinstance(d.node, ast.FunctionDef | ast.AsyncFunctionDef)]
