"""How to reach a method from outside, and how to make objects of the project's classes.

A method is searched (``difftest``) by building ``self`` the way callers do: calling the
class with generated arguments of the constructor's parameter types, in each version,
then calling the method on the object. A parameter whose type is one of the project's
classes (``ctx: Context``) gets an object made the same way (``Classes``): the class the
module binds to that name, called with generated arguments of its constructor's types.
This module reads, from the sources without running them, what kind of member the entry
is and the parameters of the constructor that builds a class (``__init__`` of the class
or of a base class in the same module, dataclass and ``NamedTuple`` fields). Which of
those parameters can be given values is for the search to say: one it cannot generate
with a default is left out (the default is used); a required one means the class's
objects are not built, and the reason says which.
"""

from __future__ import annotations

import ast
import contextlib
import posixpath
from collections.abc import Mapping
from dataclasses import dataclass

from veribot.checks.lang import pyclasses, pysource
from veribot.checks.lang.pytypes import PyType, from_annotation
from veribot.checks.lang.pyvalues import Unsupported

# How the member is reached on its class.
METHOD = "method"  # called on an object built by the class
PROPERTY = "property"  # read on an object built by the class
STATIC = "static"  # called on the class (staticmethod, classmethod)
INIT = "init"  # the constructor itself: the class is called, the object is the result

_READ_DECORATORS = frozenset({"property", "cached_property"})
_CLASS_DECORATORS = frozenset({"staticmethod", "classmethod"})
# Bases whose constructor is ``object``'s (no arguments).
_PLAIN_BASES = frozenset({"object", "ABC", "Generic", "Protocol", "Hashable", "Sized",
                          "Iterable", "Container"})


@dataclass(frozen=True)
class Param:
    """One constructor parameter to generate: its type, and how it is passed."""

    name: str
    type: PyType
    required: bool
    keyword: bool  # passed by keyword (keyword-only, or optional: left out at will)


@dataclass(frozen=True)
class Member:
    """The entry as a member of its class: how it is reached, and how to build ``self``.

    ``why_not`` is set when no object can be built for it (a reason for people).
    """

    kind: str
    cls: str  # the class's qualified name within the module, as code writes it
    params: tuple[Param, ...] = ()
    why_not: str = ""


def member(source: str, entry: str) -> Member | None:
    """The entry as a class member, or None if it is not one (a module function)."""
    parts = entry.split(".")
    if len(parts) < 2:
        return None
    try:
        tree = pysource.parse(source)
    except SyntaxError:
        return None
    classes = _class_path(tree, parts[:-1])
    if classes is None:
        return None
    cls = classes[-1]
    fn = None
    for node in cls.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == parts[-1]:
            fn = node
    if fn is None:
        return None
    owner = ".".join(parts[:-1])
    decorators = _decorator_names(fn)
    if decorators & _CLASS_DECORATORS:
        return Member(STATIC, owner)
    if any(isinstance(d, ast.Attribute) and d.attr in ("setter", "deleter")
           for d in fn.decorator_list):
        return Member(METHOD, owner, why_not=f"`{entry}` is a property setter or deleter")
    kind = PROPERTY if decorators & _READ_DECORATORS else METHOD
    if fn.name == "__init__":
        kind = INIT
    if isinstance(fn, ast.AsyncFunctionDef):
        return Member(kind, owner, why_not=f"`{entry}` is a coroutine method")
    params, why = constructor(tree, cls)
    return Member(kind, owner, tuple(params), why)


def _class_path(tree: ast.Module, names: list[str]) -> list[ast.ClassDef] | None:
    body: list[ast.stmt] = tree.body
    found: list[ast.ClassDef] = []
    for name in names:
        cls = _last_class(body, name)
        if cls is None:
            return None
        found.append(cls)
        body = cls.body
    return found


def _last_class(body: list[ast.stmt], name: str) -> ast.ClassDef | None:
    found = None
    for node in body:
        if isinstance(node, ast.ClassDef) and node.name == name:
            found = node
    return found


def _decorator_names(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> set[str]:
    names = set()
    for d in node.decorator_list:
        target = d.func if isinstance(d, ast.Call) else d
        if isinstance(target, ast.Name):
            names.add(target.id)
        elif isinstance(target, ast.Attribute):
            names.add(target.attr)
    return names


def _base_name(node: ast.expr) -> str | None:
    target = node.value if isinstance(node, ast.Subscript) else node
    if isinstance(target, ast.Name):
        return target.id
    if isinstance(target, ast.Attribute):
        return target.attr
    return None


def constructor(tree: ast.Module, cls: ast.ClassDef, depth: int = 0) -> tuple[list[Param], str]:
    """The parameters that calling ``cls`` takes, and "" ; or [] and why it cannot be built."""
    name = cls.name
    if depth > 8:
        return [], f"the class hierarchy above `{name}` is too deep to read"
    if any(k.arg == "metaclass" for k in cls.keywords):
        return [], f"`{name}` has a metaclass, which may build its objects in any way"
    for node in cls.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == "__new__":
            return [], f"`{name}` defines `__new__`"
    init = None
    for node in cls.body:
        if isinstance(node, ast.FunctionDef) and node.name == "__init__":
            init = node
    if depth == 0 and any(_base_name(b) == "Protocol" for b in cls.bases):
        # Calling a Protocol raises; which values conform to it is not modelled yet.
        return [], f"`{name}` is a Protocol, whose objects cannot be made by calling it"
    bases = [b for b in cls.bases if _base_name(b) not in _PLAIN_BASES]
    base_names = [_base_name(b) for b in bases]
    if "dataclass" in _decorator_names(cls):
        if init is not None or bases:
            return [], f"`{name}` is a dataclass with a base class or its own `__init__`"
        return _dataclass_fields(cls)
    if "NamedTuple" in base_names:
        if len(bases) > 1:
            return [], f"`{name}` has several base classes"
        return _dataclass_fields(cls)
    if init is not None:
        return _init_params(init), ""
    if not bases:
        return [], ""
    if len(bases) > 1:
        return _first_constructor(tree, cls, depth)
    base = _last_class(tree.body, base_names[0] or "") if isinstance(bases[0], ast.Name) else None
    if base is None:
        shown = ast.unparse(bases[0])
        return [], f"the constructor of `{name}` is that of `{shown}`, outside this module"
    return constructor(tree, base, depth + 1)


def _first_constructor(tree: ast.Module, cls: ast.ClassDef, depth: int) -> tuple[list[Param], str]:
    """The constructor of a class with several bases: that of the first class of its
    method resolution order defining `__init__` or `__new__` (classes of the module, or
    `object`, `abc.ABC`, `typing.Generic`; none decorated), as calling the class runs it."""
    why = f"`{cls.name}` has several base classes, whose constructors are not read"
    try:
        order = pyclasses.hierarchy(tree, cls).mro[1:]
    except Unsupported:
        return [], why
    for entry in order:
        if isinstance(entry, str):
            continue  # (no constructor of its own)
        if entry.decorator_list:
            return [], why
        if {"__init__", "__new__"} & pyclasses.body_names(entry):
            return constructor(tree, entry, depth + 1)
    return [], ""


def _init_params(init: ast.FunctionDef) -> list[Param]:
    a = init.args
    positional = [*a.posonlyargs, *a.args][1:]  # without self
    first_default = len(positional) - len(a.defaults)
    params: list[Param] = []
    only = max(0, len(a.posonlyargs) - 1)  # positional-only parameters after self
    for n, arg in enumerate(positional):
        # A positional-only parameter is always passed (it cannot be left out by keyword).
        required = n < first_default or n < only
        _add(params, arg, required=required, keyword=False)
    for arg, d in zip(a.kwonlyargs, a.kw_defaults, strict=True):
        _add(params, arg, required=d is None, keyword=True)
    return params


def _add(params: list[Param], arg: ast.arg, *, required: bool, keyword: bool) -> None:
    # Every parameter is listed: the search decides which types it can give values
    # (one of the project's classes, say). An optional parameter goes by keyword, so that
    # it can be left out at will.
    params.append(Param(arg.arg, from_annotation(arg.annotation), required,
                        keyword or not required))


def _dataclass_fields(cls: ast.ClassDef) -> tuple[list[Param], str]:
    params: list[Param] = []
    for node in cls.body:
        if not isinstance(node, ast.AnnAssign) or not isinstance(node.target, ast.Name):
            continue
        text = ast.unparse(node.annotation)
        if "ClassVar" in text or "KW_ONLY" in text or "InitVar" in text:
            if "ClassVar" in text:
                continue
            return [], f"`{cls.name}` has a field the search does not read ({text})"
        value = node.value
        if isinstance(value, ast.Call) and _base_name(value.func) == "field":
            if any(k.arg == "init" for k in value.keywords):
                return [], f"`{cls.name}` has a field left out of its constructor"
            if not any(k.arg in ("default", "default_factory") for k in value.keywords):
                value = None
        arg = ast.arg(node.target.id, node.annotation)
        _add(params, arg, required=value is None, keyword=False)
    return params, ""


# --------------------------------------------------------------------------- the project's classes

_MAX_REEXPORTS = 4


@dataclass(frozen=True)
class Buildable:
    """One of the project's classes, by the name the module under review binds it to, and
    the parameters of its constructor (``why_not`` set when its objects are not built).
    ``module``: the dotted name of the project module defining it, where its annotations
    are read ("" for the module under review itself)."""

    name: str
    params: tuple[Param, ...]
    why_not: str = ""
    module: str = ""


class Classes:
    """The project's classes a module names at its top level, read without running.

    A class defined in the module, or imported into it from the project's own modules
    (``from .formatting import HelpFormatter``, followed through re-exports), whose file
    is among ``files`` (the revision's files, repository-relative, as
    ``Package.files``). ``module`` is the module's dotted name and ``root`` the folder
    on ``sys.path``; a lone module (no package) knows only its own classes.
    """

    def __init__(self, source: str, *, module: str = "", root: str = "",
                 files: Mapping[str, str] | None = None, package: bool = False) -> None:
        self._files = dict(files or {})
        self._module, self._root, self._package = module, root, package
        self._trees: dict[str, tuple[ast.Module, bool] | None] = {}
        self._found: dict[str, Buildable | None] = {}
        try:
            self._tree: ast.Module | None = pysource.parse(source)
        except SyntaxError:
            self._tree = None

    def find(self, name: str) -> Buildable | None:
        """The class the module binds to ``name`` (a bare identifier), if it is one."""
        if name not in self._found:
            self._found[name] = self._lookup(name)
        return self._found[name]

    def _lookup(self, name: str) -> Buildable | None:
        if not name.isidentifier() or self._tree is None:
            return None
        tree, module, package, wanted = self._tree, self._module, self._package, name
        home = ""
        for _ in range(_MAX_REEXPORTS):
            bound = _top_binding(tree, wanted)
            if isinstance(bound, ast.ClassDef):
                params, why = constructor(tree, bound)
                return Buildable(name, tuple(params), why, home)
            if not isinstance(bound, ast.ImportFrom) or not module:
                return None
            target = _imported_module(module, package, bound)
            alias = next(a for a in bound.names if (a.asname or a.name) == wanted)
            found = self._tree_of(target) if target is not None else None
            if target is None or found is None:
                return None
            (tree, package), module, wanted = found, target, alias.name
            home = target
        return None

    def _tree_of(self, module: str) -> tuple[ast.Module, bool] | None:
        """The module's tree, and whether it is a package (an ``__init__.py``)."""
        if module not in self._trees:
            base = posixpath.join(self._root, *module.split("."))
            self._trees[module] = None
            for path, package in ((base + ".py", False), (base + "/__init__.py", True)):
                text = self._files.get(path)
                if text is None:
                    continue
                with contextlib.suppress(SyntaxError):
                    self._trees[module] = (pysource.parse(text), package)
                break
        return self._trees[module]


def _top_binding(tree: ast.Module, name: str) -> ast.ClassDef | ast.ImportFrom | None:
    """The last top-level statement that binds ``name``, if a class or an import-from;
    None when the last binding is anything else (an assignment, a function)."""
    found: ast.ClassDef | ast.ImportFrom | None = None
    for node in tree.body:
        if name in _names_bound(node):
            found = node if isinstance(node, ast.ClassDef | ast.ImportFrom) else None
    return found


def bound_names(node: ast.stmt) -> set[str]:
    """The names a statement binds at the level it is in (a class, a function, an import,
    an assignment's targets)."""
    return _names_bound(node)


def _names_bound(node: ast.stmt) -> set[str]:
    """The names a top-level statement binds (those a class lookup must see)."""
    if isinstance(node, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
        return {node.name}
    if isinstance(node, ast.ImportFrom):
        return {a.asname or a.name for a in node.names}
    if isinstance(node, ast.Import):
        return {a.asname or a.name.split(".")[0] for a in node.names}
    if isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign):
        return {n.id for n in ast.walk(node)
                if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    return set()


def _imported_module(module: str, package: bool, node: ast.ImportFrom) -> str | None:
    """The dotted module an import-from in ``module`` (a package if ``package``) reads,
    if it is of the same project (relative, or absolute under the same top package)."""
    if node.level:
        parts = module.split(".") if package else module.split(".")[:-1]
        parts = parts[: len(parts) - (node.level - 1)]
        if not parts:
            return None
        return ".".join([*parts, node.module]) if node.module else ".".join(parts)
    if node.module and module and node.module.split(".")[0] == module.split(".")[0]:
        return node.module
    return None


def class_names(source: str) -> set[str]:
    """The names a module binds at its top level to a class it defines or imports (an
    import may bind something else: the sandbox makes objects only of the project's
    classes, and of nothing that is not a class)."""
    try:
        tree = pysource.parse(source)
    except SyntaxError:
        return set()
    last: dict[str, ast.stmt] = {}
    for node in tree.body:
        for name in _names_bound(node):
            last[name] = node
    return {n for n, node in last.items() if isinstance(node, ast.ClassDef | ast.ImportFrom)}
