"""Candidate types for unannotated parameters, from defaults and the repository's calls.

A parameter without an annotation in either version gets the union of what is seen:
the type of a literal default (``n=3`` is ``int``, ``strict=False`` is ``bool``, ``x=None``
adds ``None``) and the types of the arguments it is given in calls harvested from the
repository (``veribot.checks.search.harvest``): ``'ABC'`` and ``[1, 2]`` make ``str | list[int]``.
Nothing is inferred from ``None`` alone, or where an argument's type is not one the
engine knows (``iter(...)``, ``range(...)``, an empty ``[]`` adds nothing).

An inferred type is a guess about the domain, never a fact: the random search uses it,
and a proof that used it holds only for inputs of those types, so the verdict lists
each one as an assumption (``assumption``).
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from veribot.checks.lang.pytypes import (
    BoolT,
    DictT,
    FloatT,
    IntT,
    ListT,
    NoneT,
    PyType,
    SetT,
    StrT,
    TupleT,
    UnionT,
    is_known,
)
from veribot.checks.search.harvest import Call

__all__ = ["Inferred", "assumption", "infer", "literal_type"]

_Function = ast.FunctionDef | ast.AsyncFunctionDef


@dataclass(frozen=True)
class Inferred:
    """A parameter's inferred type and what it was inferred from (phrases for people)."""

    type: PyType
    sources: tuple[str, ...]


def infer(fn_a: _Function, fn_b: _Function, calls: Sequence[Call], *,
          bound: str | None = None) -> dict[str, Inferred]:
    """Inferred types of the parameters annotated in neither version, by name.

    Only parameters whose name, kind and position are the same in both versions are
    considered (the calls bind alike in both); ``bound``, the parameter Python binds
    itself (``self``/``cls`` of a method, or of a constructor), never is: a method's call
    starts with its receiver (``@C(...)``), which is not an argument.
    """
    params_a, params_b = _parameters(fn_a), _parameters(fn_b)
    if [p[:2] for p in params_a] != [p[:2] for p in params_b]:
        return {}
    if bound is not None and params_a and params_a[0][0] == bound:
        params_a, params_b = params_a[1:], params_b[1:]
        calls = [Call(c.args[1:] if c.args and c.args[0].startswith("@") else c.args,
                      c.origin) for c in calls]
    found: dict[str, tuple[list[PyType], list[str]]] = {}
    for (name, _kind, default_a, ann_a), (_, _, default_b, ann_b) in zip(
        params_a, params_b, strict=True
    ):
        if ann_a is not None or ann_b is not None:
            continue
        types: list[PyType] = []
        sources: list[str] = []
        for default in (default_a, default_b):
            t = literal_type(default) if default is not None else None
            if default is not None and t is not None and t not in types:
                types.append(t)
                sources.append(f"the default {ast.unparse(default)}")
        found[name] = (types, sources)
    positional = [p[0] for p in params_a if p[1] == "positional"]
    counted: dict[str, dict[str, int]] = {}
    for call in calls:
        given = _bind(call, positional, set(found))
        if given is None:
            continue
        for name, node in given.items():
            t = literal_type(node)
            if t is None:
                continue
            types, _ = found[name]
            if t not in types:
                types.append(t)
            where = counted.setdefault(name, {})
            where[_place(call.origin)] = where.get(_place(call.origin), 0) + 1
    out: dict[str, Inferred] = {}
    for name, (types, sources) in found.items():
        if not types or all(isinstance(t, NoneT) for t in types):
            continue
        merged = _union(types)
        if not is_known(merged):
            continue
        places = [f"{n} call(s) in {p}" if n > 1 else f"a call in {p}"
                  for p, n in counted.get(name, {}).items()]
        out[name] = Inferred(merged, tuple(dict.fromkeys(s for s in [*sources, *places] if s)))
    return out


def assumption(inferred: Mapping[str, Inferred]) -> str:
    """The sentence a verdict lists for a proof that used inferred types."""
    parts = [f"`{name}: {i.type.text()}` (inferred from {', '.join(i.sources)})"
             for name, i in inferred.items()]
    return ("inferred parameter types (unannotated in both versions; a proof holds only "
            "for inputs of these types): " + "; ".join(parts))


def literal_type(node: ast.expr) -> PyType | None:
    """The type of a literal expression, or None if not a literal of a known type."""
    if isinstance(node, ast.Constant):
        v = node.value
        for kind, t in ((bool, BoolT()), (int, IntT()), (float, FloatT()), (str, StrT())):
            if isinstance(v, kind):
                return t
        return NoneT() if v is None else None
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        inner = literal_type(node.operand)
        return inner if isinstance(inner, IntT | FloatT) else None
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "float":
        return FloatT()
    if isinstance(node, ast.List | ast.Set):
        elem = _elements(node.elts)
        if elem is None:
            return None
        return ListT(elem) if isinstance(node, ast.List) else SetT(elem)
    if isinstance(node, ast.Tuple):
        items = [literal_type(e) for e in node.elts]
        if any(i is None for i in items) or not items:
            return None
        kinds = [i for i in items if i is not None]
        if all(k == kinds[0] for k in kinds):
            return TupleT(homogeneous=kinds[0])
        return TupleT(items=tuple(kinds))
    if isinstance(node, ast.Dict):
        keys = _elements([k for k in node.keys if k is not None])
        values = _elements(node.values)
        if keys is None or values is None or None in node.keys:
            return None
        return DictT(keys, values)
    return None


def _elements(nodes: Iterable[ast.expr]) -> PyType | None:
    types: list[PyType] = []
    for n in nodes:
        t = literal_type(n)
        if t is None:
            return None
        if t not in types:
            types.append(t)
    return _union(types) if types else None  # an empty container says nothing


def _union(types: Sequence[PyType]) -> PyType:
    flat: list[PyType] = []
    for t in types:
        for o in t.options if isinstance(t, UnionT) else (t,):
            if o not in flat:
                flat.append(o)
    return flat[0] if len(flat) == 1 else UnionT(tuple(flat))


def _parameters(fn: _Function) -> list[tuple[str, str, ast.expr | None, ast.expr | None]]:
    """``(name, kind, default, annotation)`` of the parameters that take one value."""
    a = fn.args
    positional = [*a.posonlyargs, *a.args]
    defaults: list[ast.expr | None] = [None] * (len(positional) - len(a.defaults))
    defaults += a.defaults
    out = [(p.arg, "positional", d, p.annotation)
           for p, d in zip(positional, defaults, strict=True)]
    out += [(p.arg, "keyword", d, p.annotation)
            for p, d in zip(a.kwonlyargs, a.kw_defaults, strict=True)]
    return out


def _bind(call: Call, positional: list[str], wanted: set[str]) -> dict[str, ast.expr] | None:
    """The argument expression of each wanted parameter in ``call``; None if it cannot
    be bound (too many positional arguments, an unknown keyword)."""
    try:
        node = ast.parse(f"f({', '.join(call.args)})", mode="eval").body
    except SyntaxError:
        return None
    if not isinstance(node, ast.Call) or len(node.args) > len(positional):
        return None
    bound: dict[str, ast.expr] = {}
    for name, arg in zip(positional, node.args, strict=False):
        bound[name] = arg
    for kw in node.keywords:
        if kw.arg is None or kw.arg not in wanted or kw.arg in bound:
            return None
        bound[kw.arg] = kw.value
    return {k: v for k, v in bound.items() if k in wanted}


def _place(origin: str) -> str:
    """"a call in tests/x.py line 3 (after revision)" -> "tests/x.py"; doctests stay whole."""
    if origin.startswith("a call in "):
        return origin[len("a call in "):].split(" line ", 1)[0]
    return "doctests" if "doctest" in origin else origin
