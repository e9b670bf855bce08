"""Python parameter types, parsed from annotation text into a small closed tree.

The domain of a check is built from these: ``int``, ``bool``, ``float``, ``str``,
``None``, ``list[T]``, ``tuple[T, ...]``, ``tuple[A, B]``, ``dict[K, V]``, ``set[T]``,
``Optional[T]`` / ``T | None``, ``Union`` and ``Sequence[T]`` (read as ``list[T] |
tuple[T, ...]``, and ``| str`` for ``Sequence[str]``). Anything else (``Iterable``,
``Collection``, ``MutableSequence``, ...) is ``Unknown`` with the text kept, so a verdict
can say which type it could not use. ``domain`` widens an annotation by the typing rules
(``bool`` where ``int`` is declared, ``int`` and ``bool`` where ``float`` is).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass


@dataclass(frozen=True)
class PyType:
    """Base of the type tree."""

    def text(self) -> str:
        raise NotImplementedError


@dataclass(frozen=True)
class IntT(PyType):
    def text(self) -> str:
        return "int"


@dataclass(frozen=True)
class BoolT(PyType):
    def text(self) -> str:
        return "bool"


@dataclass(frozen=True)
class FloatT(PyType):
    def text(self) -> str:
        return "float"


@dataclass(frozen=True)
class StrT(PyType):
    def text(self) -> str:
        return "str"


@dataclass(frozen=True)
class NoneT(PyType):
    def text(self) -> str:
        return "None"


@dataclass(frozen=True)
class ListT(PyType):
    elem: PyType

    def text(self) -> str:
        return f"list[{self.elem.text()}]"


@dataclass(frozen=True)
class SetT(PyType):
    elem: PyType
    frozen: bool = False  # frozenset[T]

    def text(self) -> str:
        return f"{'frozenset' if self.frozen else 'set'}[{self.elem.text()}]"


@dataclass(frozen=True)
class TupleT(PyType):
    """``tuple[A, B]`` (``items``) or ``tuple[T, ...]`` (``homogeneous``)."""

    items: tuple[PyType, ...] = ()
    homogeneous: PyType | None = None

    def text(self) -> str:
        if self.homogeneous is not None:
            return f"tuple[{self.homogeneous.text()}, ...]"
        if not self.items:
            return "tuple[()]"
        return "tuple[" + ", ".join(t.text() for t in self.items) + "]"


@dataclass(frozen=True)
class DictT(PyType):
    key: PyType
    value: PyType

    def text(self) -> str:
        return f"dict[{self.key.text()}, {self.value.text()}]"


@dataclass(frozen=True)
class IteratorT(PyType):
    """An iterator of ``elem`` values (``iter([1, 2])``). Only random testing uses it, for
    a parameter seen to take one; the model does not (``is_known`` is False)."""

    elem: PyType

    def text(self) -> str:
        return f"Iterator[{self.elem.text()}]"


@dataclass(frozen=True)
class StreamT(PyType):
    """A text (or ``binary``) stream, as annotated (``source``). Only random testing uses
    it, with a fresh ``io.StringIO`` (``io.BytesIO``) per call; the model does not
    (``is_known`` is False)."""

    binary: bool
    source: str

    def text(self) -> str:
        return self.source

    def searched_as(self) -> str:
        return "io.BytesIO" if self.binary else "io.StringIO"


@dataclass(frozen=True)
class UnionT(PyType):
    options: tuple[PyType, ...]

    def text(self) -> str:
        return " | ".join(t.text() for t in self.options)


@dataclass(frozen=True)
class Unknown(PyType):
    """A type we cannot use; ``source`` is the annotation text, or "" if there was none."""

    source: str = ""

    def text(self) -> str:
        return self.source or "?"


def is_known(t: PyType) -> bool:
    """Whether every part of ``t`` is a type the engine can build a domain for."""
    if isinstance(t, Unknown | IteratorT | StreamT):
        return False
    if isinstance(t, ListT | SetT):
        return is_known(t.elem)
    if isinstance(t, TupleT):
        parts = (t.homogeneous,) if t.homogeneous is not None else t.items
        return all(p is not None and is_known(p) for p in parts)
    if isinstance(t, DictT):
        return is_known(t.key) and is_known(t.value)
    if isinstance(t, UnionT):
        return all(is_known(o) for o in t.options)
    return True


# Stream annotations, by their last name part: whether the stream is binary. An
# ``io.StringIO`` is each of the text ones (typeshed), an ``io.BytesIO`` each binary one.
_STREAMS = {"TextIO": False, "TextIOBase": False, "StringIO": False,
            "BinaryIO": True, "BytesIO": True}

_SIMPLE: dict[str, PyType] = {
    "int": IntT(),
    "bool": BoolT(),
    "float": FloatT(),
    "str": StrT(),
    "None": NoneT(),
    "NoneType": NoneT(),
}


def parse_type(text: str) -> PyType:
    """Parse annotation text such as ``"list[int]"`` or ``"Optional[str]"``."""
    try:
        node = ast.parse(text.strip(), mode="eval").body
    except SyntaxError:
        return Unknown(text)
    return from_annotation(node)


def from_annotation(node: ast.expr | None) -> PyType:
    """Turn an annotation's AST into a type; ``None`` (no annotation) is ``Unknown("")``."""
    if node is None:
        return Unknown("")
    source = ast.unparse(node)
    if isinstance(node, ast.Constant) and node.value is None:
        return NoneT()
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return parse_type(node.value)
    name = _dotted_name(node)
    if name is not None:
        short = name.rsplit(".", 1)[-1]
        if short in _SIMPLE:
            return _SIMPLE[short]
        # A bare container means "of unknown elements".
        if short in ("list", "List"):
            return ListT(Unknown(""))
        if short in ("set", "Set"):
            return SetT(Unknown(""))
        if short in _STREAMS:
            return StreamT(_STREAMS[short], source)
        return Unknown(source)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return _union([from_annotation(node.left), from_annotation(node.right)])
    if isinstance(node, ast.Subscript):
        head = _dotted_name(node.value)
        short = head.rsplit(".", 1)[-1] if head else ""
        args = list(node.slice.elts) if isinstance(node.slice, ast.Tuple) else [node.slice]
        if short in ("list", "List") and len(args) == 1:
            return ListT(from_annotation(args[0]))
        if short == "Sequence" and len(args) == 1:
            return _sequence(from_annotation(args[0]))
        if short in ("set", "Set", "frozenset", "FrozenSet") and len(args) == 1:
            return SetT(from_annotation(args[0]), frozen=short in ("frozenset", "FrozenSet"))
        if short in ("dict", "Dict", "Mapping") and len(args) == 2:
            return DictT(from_annotation(args[0]), from_annotation(args[1]))
        if short in ("tuple", "Tuple"):
            if len(args) == 2 and isinstance(args[1], ast.Constant) and args[1].value is Ellipsis:
                return TupleT(homogeneous=from_annotation(args[0]))
            if len(args) == 1 and isinstance(args[0], ast.Tuple) and not args[0].elts:
                return TupleT(items=())
            return TupleT(items=tuple(from_annotation(a) for a in args))
        if short == "IO" and len(args) == 1 and _dotted_name(args[0]) in ("str", "bytes"):
            return StreamT(_dotted_name(args[0]) == "bytes", source)
        if short == "Optional" and len(args) == 1:
            return _union([from_annotation(args[0]), NoneT()])
        if short == "Union":
            return _union([from_annotation(a) for a in args])
    return Unknown(source)


def _sequence(elem: PyType) -> PyType:
    """``Sequence[T]``: the builtin sequences of ``T`` (``str`` too when ``T`` is ``str``)."""
    if isinstance(elem, Unknown):
        return Unknown(f"Sequence[{elem.text()}]")
    options: list[PyType] = [ListT(elem), TupleT(homogeneous=elem)]
    if isinstance(elem, StrT):
        options.append(StrT())
    return UnionT(tuple(options))


INT_OR_BOOL = UnionT((IntT(), BoolT()))
NUMBER = UnionT((FloatT(), IntT(), BoolT()))


def domain(t: PyType) -> PyType:
    """The values Python's typing rules admit for annotation ``t``.

    ``bool`` is a subtype of ``int``, and ``int`` (so ``bool`` too) is accepted where
    ``float`` is declared; this holds inside containers as well. The result is what the
    engine must cover: ``int`` becomes ``int | bool``, ``float`` becomes
    ``float | int | bool``.
    """
    if isinstance(t, IntT):
        return INT_OR_BOOL
    if isinstance(t, FloatT):
        return NUMBER
    if isinstance(t, ListT):
        return ListT(domain(t.elem))
    if isinstance(t, IteratorT):
        return IteratorT(domain(t.elem))
    if isinstance(t, SetT):
        return SetT(domain(t.elem), t.frozen)
    if isinstance(t, DictT):
        return DictT(domain(t.key), domain(t.value))
    if isinstance(t, TupleT):
        if t.homogeneous is not None:
            return TupleT(homogeneous=domain(t.homogeneous))
        return TupleT(items=tuple(domain(i) for i in t.items))
    if isinstance(t, UnionT):
        return _union([domain(o) for o in t.options])
    return t


def is_int_or_bool(t: PyType) -> bool:
    """Whether ``t`` is exactly ``int | bool`` (in either order)."""
    return isinstance(t, UnionT) and set(t.options) == {IntT(), BoolT()}


def _union(parts: list[PyType]) -> PyType:
    flat: list[PyType] = []
    for p in parts:
        for o in p.options if isinstance(p, UnionT) else (p,):
            if o not in flat:
                flat.append(o)
    return flat[0] if len(flat) == 1 else UnionT(tuple(flat))


def _dotted_name(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _dotted_name(node.value)
        return f"{base}.{node.attr}" if base else None
    return None
