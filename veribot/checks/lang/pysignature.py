"""A function's signature as part of its behaviour: names, kinds, defaults.

Callers pass arguments by position and by keyword and leave defaulted ones out, so two
versions with equal bodies but a renamed parameter, a parameter made keyword-only or a
changed default behave differently. Defaults are read as Python evaluates them: once,
when the ``def`` runs, from literals or module constants bound before it; a default
that is a mutable object (a list, dict or set display, or a module constant holding
one) is state kept between calls. ``calls_showing`` proposes calls, as sandbox argument
texts (``1``, ``k=2``), on which a change of signature shows.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from veribot.checks.lang.pymodule import Module
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
    Unknown,
)

POSITIONAL_ONLY = "positional-only"
POSITIONAL_OR_KEYWORD = "positional-or-keyword"
VAR_POSITIONAL = "*args"
KEYWORD_ONLY = "keyword-only"
VAR_KEYWORD = "**kwargs"

_PLAIN = (type(None), bool, int, float, str, bytes, complex)


@dataclass(frozen=True)
class Default:
    """A parameter's default, as the ``def`` evaluates it.

    ``known`` says whether ``value`` is the evaluated object (an immutable literal);
    otherwise ``why`` says what the reader could not take as a value.
    """

    text: str  # the default as written
    known: bool
    value: object = None
    why: str = ""
    mutable: bool = False  # one object kept between calls, which a call may change

    def same_as(self, other: Default) -> bool:
        if self.known and other.known:
            return _same_value(self.value, other.value)
        return not self.known and not other.known and self.text == other.text


@dataclass(frozen=True)
class Param:
    name: str
    kind: str
    default: Default | None
    annotation: ast.expr | None


@dataclass(frozen=True)
class Signature:
    params: tuple[Param, ...]
    # Whether the first parameter takes the object a method is called on (a `def` inside
    # a class, not a `staticmethod`): only objects its class builds are inputs there.
    receiver: bool = False

    @staticmethod
    def of(fn: ast.FunctionDef | ast.AsyncFunctionDef, module: Module) -> Signature:
        a = fn.args
        positional = [*a.posonlyargs, *a.args]
        first_default = len(positional) - len(a.defaults)
        params: list[Param] = []
        for n, arg in enumerate(positional):
            kind = POSITIONAL_ONLY if n < len(a.posonlyargs) else POSITIONAL_OR_KEYWORD
            node = a.defaults[n - first_default] if n >= first_default else None
            params.append(Param(arg.arg, kind, _default(node, module, fn), arg.annotation))
        if a.vararg is not None:
            params.append(Param(a.vararg.arg, VAR_POSITIONAL, None, a.vararg.annotation))
        for arg, d in zip(a.kwonlyargs, a.kw_defaults, strict=True):
            params.append(Param(arg.arg, KEYWORD_ONLY, _default(d, module, fn), arg.annotation))
        if a.kwarg is not None:
            params.append(Param(a.kwarg.arg, VAR_KEYWORD, None, a.kwarg.annotation))
        # A `def` at module level starts a line; one indented is a method (or a nested
        # function, for which keeping calls away is only more cautious).
        static = any(isinstance(d, ast.Name) and d.id == "staticmethod"
                     for d in fn.decorator_list)
        receiver = fn.col_offset > 0 and bool(positional) and not static
        return Signature(tuple(params), receiver)

    def text(self) -> str:
        """The parameter list as Python writes it (without annotations)."""
        parts: list[str] = []
        for n, p in enumerate(self.params):
            if p.kind == KEYWORD_ONLY and not any(
                q.kind in (KEYWORD_ONLY, VAR_POSITIONAL) for q in self.params[:n]
            ):
                parts.append("*")
            prefix = {VAR_POSITIONAL: "*", VAR_KEYWORD: "**"}.get(p.kind, "")
            parts.append(prefix + p.name + (f"={p.default.text}" if p.default else ""))
            if p.kind == POSITIONAL_ONLY and (
                n + 1 == len(self.params) or self.params[n + 1].kind != POSITIONAL_ONLY
            ):
                parts.append("/")
        return "(" + ", ".join(parts) + ")"


def _default(node: ast.expr | None, module: Module,
             fn: ast.FunctionDef | ast.AsyncFunctionDef) -> Default | None:
    if node is None:
        return None
    text = ast.unparse(node)
    if isinstance(node, ast.Name):
        bound_at = module.lines.get(node.id)
        if node.id in module.constants and bound_at is not None and bound_at < fn.lineno:
            return _value_default(text, module.constants[node.id])
        return Default(text, False, why=f"the module-level name `{node.id}`, not a constant "
                       "bound once before the `def`")
    try:
        value = ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return Default(text, False, why="an expression evaluated when the `def` runs")
    return _value_default(text, value)


def _value_default(text: str, value: object) -> Default:
    if _immutable(value):
        return Default(text, True, value)
    return Default(
        text, False, value, why="a mutable object, created once and shared by every call",
        mutable=True,
    )


def _immutable(value: object) -> bool:
    if type(value) in _PLAIN:
        return True
    if type(value) in (tuple, frozenset):
        return all(_immutable(v) for v in value)  # type: ignore[attr-defined]
    return False


def _same_value(a: object, b: object) -> bool:
    """Equal as objects a call can tell apart: same types throughout, same ``repr``."""
    return type(a) is type(b) and repr(a) == repr(b)


def changes(a: Signature, b: Signature) -> list[str]:
    """What changed between two signatures, as sentences; empty if they are the same."""
    found: list[str] = []
    by_name_a = {p.name: p for p in a.params}
    by_name_b = {p.name: p for p in b.params}
    order_a = [p.name for p in a.params if p.kind in (POSITIONAL_ONLY, POSITIONAL_OR_KEYWORD)]
    order_b = [p.name for p in b.params if p.kind in (POSITIONAL_ONLY, POSITIONAL_OR_KEYWORD)]
    for name in by_name_a.keys() - by_name_b.keys():
        found.append(f"parameter `{name}` was removed or renamed")
    for name in by_name_b.keys() - by_name_a.keys():
        found.append(f"parameter `{name}` was added or renamed")
    if not found and order_a != order_b:
        found.append(
            f"the positional parameters are in another order ({', '.join(order_a)} before, "
            f"{', '.join(order_b)} after)"
        )
    for pa in a.params:
        pb = by_name_b.get(pa.name)
        if pb is None:
            continue
        if pa.kind != pb.kind:
            found.append(f"`{pa.name}` is now {pb.kind} (was {pa.kind})")
        if pa.default is None and pb.default is not None:
            found.append(f"`{pa.name}` now has a default ({pb.default.text})")
        elif pa.default is not None and pb.default is None:
            found.append(f"`{pa.name}` no longer has a default (was {pa.default.text})")
        elif (
            pa.default is not None
            and pb.default is not None
            and not pa.default.same_as(pb.default)
        ):
            found.append(
                f"the default of `{pa.name}` changed from {pa.default.text} to "
                f"{pb.default.text}"
            )
    return found


def describe(a: Signature, b: Signature) -> str:
    """One sentence for a changed signature, naming what changed."""
    return (
        f"the signature changed from {a.text()} to {b.text()}: " + "; ".join(changes(a, b))
    )


def type_of_default(default: Default) -> PyType | None:
    """The type of a known default's value, or None when it is outside the modelled types."""
    return _type_of(default.value) if default.known else None


def _type_of(value: object) -> PyType | None:
    if value is None:
        return NoneT()
    simple = {bool: BoolT(), int: IntT(), float: FloatT(), str: StrT()}.get(type(value))
    if simple is not None:
        return simple
    if type(value) is tuple:
        items = [_type_of(v) for v in value]
        if any(t is None for t in items):
            return None
        return TupleT(items=tuple(t for t in items if t is not None))
    return None


def fits(value: object, t: PyType) -> bool:
    """Whether ``value`` lies in the domain the prover builds for ``t``."""
    if isinstance(t, UnionT):
        return any(fits(value, o) for o in t.options)
    if value is None:
        return isinstance(t, NoneT)
    if type(value) is bool:
        return isinstance(t, BoolT)
    if type(value) is int:
        return isinstance(t, IntT)
    if type(value) is float:
        return isinstance(t, FloatT)
    if type(value) is str:
        return isinstance(t, StrT)
    if type(value) is tuple and isinstance(t, TupleT):
        if t.homogeneous is not None:
            return all(fits(v, t.homogeneous) for v in value)
        return len(value) == len(t.items) and all(
            fits(v, i) for v, i in zip(value, t.items, strict=True)
        )
    return False


def widen(t: PyType, extra: PyType) -> PyType:
    """``t | extra``, flattened (``int`` widened by ``None`` is ``int | None``)."""
    options: list[PyType] = []
    for part in (t, extra):
        for o in part.options if isinstance(part, UnionT) else (part,):
            if o not in options:
                options.append(o)
    return options[0] if len(options) == 1 else UnionT(tuple(options))


# -- calls that show a change -------------------------------------------------------------

_SAMPLES: dict[type, tuple[str, ...]] = {
    IntT: ("1", "0", "2", "-3", "7"),
    BoolT: ("True", "False"),
    FloatT: ("1.5", "0.0", "-2.0"),
    StrT: ("'a'", "''", "'xy'"),
    NoneT: ("None",),
}


def samples(t: PyType) -> tuple[str, ...]:
    """A few literals of type ``t`` (empty when the type is not known well enough)."""
    if isinstance(t, UnionT):
        out: list[str] = []
        for option in t.options:
            out.extend(s for s in samples(option) if s not in out)
        return tuple(out)
    if isinstance(t, ListT):
        inner = samples(t.elem)
        if not inner:
            return ("[]",)  # a list of any element type
        return ("[]", f"[{inner[0]}]", f"[{', '.join(inner[:3])}]")
    if isinstance(t, TupleT):
        if t.homogeneous is not None:
            inner = samples(t.homogeneous)
            return ("()", f"({inner[0]},)") if inner else ("()",)
        parts = [samples(i) for i in t.items]
        if not all(parts):
            return ()
        return ("(" + "".join(p[0] + ", " for p in parts) + ")",)
    if isinstance(t, DictT):
        return ("{}",)
    if isinstance(t, SetT):
        return ("frozenset()",) if t.frozen else ("set()",)
    if isinstance(t, Unknown):
        return _DECLARED_SAMPLES.get(t.source.split("[", 1)[0].rsplit(".", 1)[-1].strip(), ())
    return _SAMPLES.get(type(t), ())


# Empty values of declared types the type tree does not model, by the annotation's last
# name (without its parameters): each is a value of the type whatever its parameters.
_DECLARED_SAMPLES: dict[str, tuple[str, ...]] = {
    **dict.fromkeys(("dict", "Dict", "Mapping", "MutableMapping"), ("{}",)),
    **dict.fromkeys(("Iterable", "Collection", "Container", "Sized", "Reversible",
                     "Sequence"), ("[]", "()")),
    **dict.fromkeys(("MutableSequence", "list", "List"), ("[]",)),
    "bytes": ("b''", "b'a'"),
    **dict.fromkeys(("Any", "object"), ("[]", "[1, 0]", "0", "'a'", "None")),
}


# Values for a parameter of no known type: an empty and a short iterable, a number, a
# string and None.
_ANY_SAMPLES = ("[]", "[1, 0]", "0", "'a'", "None")


def calls_showing(
    a: Signature, b: Signature, types: Mapping[str, PyType], limit: int = 48
) -> list[list[str]]:
    """Calls (argument texts) that exercise each way of calling either version.

    For each version's signature: every parameter by position where it may be, every one
    by keyword, only the required ones, and each defaulted one left out in turn; values
    are drawn from the parameter types' samples (values of the declared type only) and from
    the other version's defaults. A parameter of no type at all (not annotated, nothing
    inferred) and no default takes values of common kinds
    (``_ANY_SAMPLES``): a call that passes it by a name only one version has shows the
    rename whatever the value (`quantify(xs, pred=bool)` after `pred` became `predicate`).

    No calls for a method: each would pass a sample value (``[]``) as the object it is
    called on, which no input of the method is.
    """
    if a.receiver or b.receiver:
        return []
    values: dict[str, list[str]] = {}
    for sig in (a, b):
        for p in sig.params:
            pool = values.setdefault(p.name, [])
            for text in samples(types.get(p.name, Unknown())):
                if text not in pool:
                    pool.append(text)
            if p.default is not None and p.default.known and p.default.text not in pool:
                pool.append(repr(p.default.value))
    for name, pool in values.items():
        # Only where nothing is declared (a value outside a declared type shows nothing:
        # `[]` for a `t.TextIO`, a `dict` or a `Path`).
        declared = types.get(name, Unknown())
        if not pool and isinstance(declared, Unknown) and not declared.source:
            pool.extend(_ANY_SAMPLES)
    calls: list[list[str]] = []
    for round_ in range(4):
        for sig in (a, b):
            for shape in _shapes(sig):
                call = _call(sig, shape, values, round_)
                if call is not None and call not in calls:
                    calls.append(call)
    return calls[:limit]


def _shapes(sig: Signature) -> list[tuple[str, frozenset[str]]]:
    """(how to pass, which parameters to leave out) for each way of calling ``sig``."""
    defaulted = [p.name for p in sig.params if p.default is not None]
    shapes = [("positional", frozenset[str]()), ("keyword", frozenset[str]())]
    shapes += [("positional", frozenset(defaulted)), ("keyword", frozenset(defaulted))]
    shapes += [("positional", frozenset({name})) for name in defaulted]
    if any(p.kind in (VAR_POSITIONAL, VAR_KEYWORD) for p in sig.params):
        shapes.append(("extra", frozenset()))  # one more argument, for *args or **kwargs
    return shapes


def _call(
    sig: Signature,
    shape: tuple[str, frozenset[str]],
    values: Mapping[str, Sequence[str]],
    round_: int,
) -> list[str] | None:
    how, omit = shape
    positional: list[str] = []
    keyword: list[str] = []
    by_keyword = how == "keyword"
    for n, p in enumerate(sig.params):
        if p.kind in (VAR_POSITIONAL, VAR_KEYWORD):
            pool = values.get(p.name, ())
            if how == "extra" and pool:
                value = pool[(round_ + n) % len(pool)]
                if p.kind == VAR_POSITIONAL and not keyword:
                    positional.append(value)
                elif p.kind == VAR_KEYWORD:
                    keyword.append(f"{_unused_name(sig)}={value}")
            continue
        if p.name in omit:
            by_keyword = True  # what follows a left-out positional goes by keyword
            continue
        pool = values.get(p.name, ())
        if not pool:
            return None
        value = pool[(round_ + n) % len(pool)]
        if p.kind == POSITIONAL_ONLY:
            if by_keyword and keyword:
                return None
            if by_keyword and how == "positional":
                return None  # a positional-only parameter after a left-out one
            positional.append(value)
        elif p.kind == KEYWORD_ONLY or by_keyword:
            keyword.append(f"{p.name}={value}")
        else:
            positional.append(value)
    return positional + keyword


def _unused_name(sig: Signature) -> str:
    names = {p.name for p in sig.params}
    return next(f"extra{n}" if n else "extra" for n in range(len(names) + 1)
                if (f"extra{n}" if n else "extra") not in names)
