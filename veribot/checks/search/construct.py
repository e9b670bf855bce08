"""How to reach a method from outside: the object it is called on, built by its class.

A method is searched (``difftest``) by building ``self`` the way callers do: calling the
class with generated arguments of the constructor's parameter types, in each version,
then calling the method on the object. This module reads, from the source without
running it, what kind of member the entry is and the parameters of the constructor that
builds its class (``__init__`` of the class or of a base class in the same module,
dataclass and ``NamedTuple`` fields). A constructor parameter with a default whose type
cannot be generated is left out (the default is used); a required one means no search,
and the reason says which.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from veribot.checks.lang import pysource
from veribot.checks.lang.pytypes import PyType, Unknown, from_annotation

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
        return _init_params(init, name)
    if not bases:
        return [], ""
    if len(bases) > 1:
        return [], f"`{name}` has several base classes, whose constructors are not read"
    base = _last_class(tree.body, base_names[0] or "") if isinstance(bases[0], ast.Name) else None
    if base is None:
        shown = ast.unparse(bases[0])
        return [], f"the constructor of `{name}` is that of `{shown}`, outside this module"
    return constructor(tree, base, depth + 1)


def _init_params(init: ast.FunctionDef, name: str) -> tuple[list[Param], str]:
    a = init.args
    positional = [*a.posonlyargs, *a.args][1:]  # without self
    first_default = len(positional) - len(a.defaults)
    params: list[Param] = []
    missing: list[str] = []
    only = max(0, len(a.posonlyargs) - 1)  # positional-only parameters after self
    for n, arg in enumerate(positional):
        # A positional-only parameter is always passed (it cannot be left out by keyword).
        required = n < first_default or n < only
        _add(params, missing, arg, required=required, keyword=False)
    for arg, d in zip(a.kwonlyargs, a.kw_defaults, strict=True):
        _add(params, missing, arg, required=d is None, keyword=True)
    if missing:
        return [], (f"the constructor of `{name}` needs {', '.join(missing)}, of a type "
                    "random testing cannot generate")
    return params, ""


def _add(params: list[Param], missing: list[str], arg: ast.arg, *, required: bool,
         keyword: bool) -> None:
    t = from_annotation(arg.annotation)
    generatable = not _unknown(t)
    if required and not generatable:
        missing.append(f"`{arg.arg}`")
    elif generatable:
        # An optional parameter goes by keyword, so that it can be left out at will.
        params.append(Param(arg.arg, t, required, keyword or not required))


def _unknown(t: PyType) -> bool:
    # Only the shape matters here; difftest decides what it can generate.
    return isinstance(t, Unknown) and t.source.rsplit(".", 1)[-1] not in ("Any", "object")


def _dataclass_fields(cls: ast.ClassDef) -> tuple[list[Param], str]:
    params: list[Param] = []
    missing: list[str] = []
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
        _add(params, missing, arg, required=value is None, keyword=False)
    if missing:
        return [], (f"the constructor of `{cls.name}` needs {', '.join(missing)}, of a type "
                    "random testing cannot generate")
    return params, ""
