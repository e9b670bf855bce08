"""Candidate types for unannotated parameters, from defaults, calls and how they are used.

A parameter without an annotation in either version gets the union of what is seen:

- the type of a literal default (``n=3`` is ``int``, ``strict=False`` is ``bool``,
  ``x=None`` adds ``None``);
- the types of the arguments it is given in calls harvested from the repository
  (``veribot.checks.search.harvest``): ``'ABC'`` and ``[1, 2]`` make ``str | list[int]``,
  ``iter([1])`` an iterator of ints, ``io.StringIO('a')`` a text stream (``StreamT``);
- the types of what the module's own functions pass it (``Callers``), for a helper no
  test calls: ``_window(iter(items), n)`` inside ``window(items, n)`` gives ``_window``'s
  first parameter an iterator over the items ``window`` is called with.

Random testing draws the ``int`` items of a container seen as ``int | float``
(``widened``): the numbers of an example are samples of data, not a declaration.

Nothing is inferred from ``None`` alone, where an argument's type is not one the engine
knows (``range(...)``, an empty ``[]`` adds nothing), or from a call the test expects to
raise ``TypeError`` (``assertRaises(TypeError, lambda: f(1))``: a type it rejects).

A parameter that both versions use only in ways every object allows (``hasattr(x,
...)``, ``isinstance``, ``x is y``, or inside a ``try`` that catches ``TypeError``: a
predicate such as ``isiterable(x)``) takes any object (``takes_anything``).

An inferred type is a guess about the domain, never a fact. Random testing generates
``Inferred.search``; a proof may use ``Inferred.type`` (the part the model knows), holds
only for inputs of that type, and the verdict lists each as an assumption
(``assumption``).
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from veribot.checks.lang.pytypes import (
    BoolT,
    DictT,
    FloatT,
    IntT,
    IteratorT,
    ListT,
    NoneT,
    PyType,
    SetT,
    StreamT,
    StrT,
    TupleT,
    UnionT,
    Unknown,
    from_annotation,
    is_known,
)
from veribot.checks.search.harvest import Call

__all__ = ["ANYTHING", "Callers", "Inferred", "assumption", "infer", "literal_type",
           "search_note", "takes_anything", "widened"]

_Function = ast.FunctionDef | ast.AsyncFunctionDef
# The type of a parameter that takes any object (random testing draws anything).
ANYTHING = Unknown("object")


@dataclass(frozen=True)
class Inferred:
    """A parameter's inferred types and what they were inferred from (phrases for people).

    ``type``: what a proof may assume (a type the model knows), or None; ``search``: what
    random testing generates (``type`` and more: iterators, any object).
    """

    type: PyType | None
    search: PyType
    sources: tuple[str, ...]


def infer(fn_a: _Function, fn_b: _Function, calls: Sequence[Call], *,
          bound: str | None = None, callers: Callers | None = None) -> dict[str, Inferred]:
    """Inferred types of the parameters annotated in neither version, by name.

    Only parameters whose name, kind and position are the same in both versions are
    considered (the calls bind alike in both); ``bound``, the parameter Python binds
    itself (``self``/``cls`` of a method, or of a constructor), never is: a method's call
    starts with its receiver (``@C(...)``), which is not an argument. ``callers``: what
    the module's own calls of the function pass it.
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
        if _wrong_type_expected(call):
            continue  # a test that the unit rejects what it is given: no type of it
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
    if callers is not None:
        for name, (t, phrase) in callers.types(positional, set(found)).items():
            types, sources = found[name]
            if t not in types:
                types.append(t)
            sources.append(phrase)
    anything = takes_anything(fn_a) & takes_anything(fn_b)
    out: dict[str, Inferred] = {}
    for name, (types, sources) in found.items():
        places = [f"{n} call(s) in {p}" if n > 1 else f"a call in {p}"
                  for p, n in counted.get(name, {}).items()]
        said = [*sources, *places]
        if name in anything:
            said.append(f"every use of `{name}` in both versions accepts any object")
        inferred = _inferred(types, name in anything, said)
        if inferred is not None:
            out[name] = inferred
    return out


# Exceptions a test expects when it passes a value of a type the function does not take.
_WRONG_TYPE = frozenset({"TypeError", "AttributeError", "Exception", "BaseException", "?"})


def _wrong_type_expected(call: Call) -> bool:
    return any(name in _WRONG_TYPE for name in call.raises)


def _inferred(types: list[PyType], anything: bool, sources: list[str]) -> Inferred | None:
    seen = [t for t in types if not isinstance(t, NoneT)]
    if not seen and not anything:
        return None  # None alone says nothing
    known = [t for t in types if is_known(t)]
    model = _union(known) if known and any(not isinstance(t, NoneT) for t in known) else None
    search = ANYTHING if anything else widened(_union(types))
    return Inferred(model, search, tuple(dict.fromkeys(s for s in sources if s)))


def widened(t: PyType, inside: bool = False) -> PyType:
    """What random testing draws for a type seen in examples: ``t`` with every ``int``
    item of a container or iterator an ``int | float``. Integers in a doctest's list are
    samples of data, not a declaration: an unannotated function given ``[4, 3, 7]`` is as
    much a function of floats, NaN and the infinities included (where ``not a <= b`` and
    ``b < a`` part). An ``int`` argument itself stays one: it is most often a count, a
    size or an index. A proof still assumes only what was seen (``Inferred.type``)."""
    if isinstance(t, IntT):
        return UnionT((IntT(), FloatT())) if inside else t
    if isinstance(t, ListT):
        return ListT(widened(t.elem, True))
    if isinstance(t, IteratorT):
        return IteratorT(widened(t.elem, True))
    if isinstance(t, SetT):
        return SetT(widened(t.elem, True), t.frozen)
    if isinstance(t, TupleT):
        return TupleT(tuple(widened(i, True) for i in t.items),
                      None if t.homogeneous is None else widened(t.homogeneous, True))
    if isinstance(t, DictT):
        return DictT(widened(t.key, True), widened(t.value, True))
    if isinstance(t, UnionT):
        return _union([widened(o, inside) for o in t.options])
    return t


def search_note(inferred: Mapping[str, Inferred]) -> str:
    """The note saying which inferred types random testing drew from ("" if none)."""
    parts = [f"`{name}: {'any object' if i.search == ANYTHING else i.search.text()}` "
             f"(from {', '.join(i.sources)})" for name, i in inferred.items()]
    return ("random testing drew unannotated parameters from inferred types: " + "; ".join(parts)
            if parts else "")


def assumption(inferred: Mapping[str, Inferred]) -> str:
    """The sentence a verdict lists for a proof that used inferred types."""
    parts = [f"`{name}: {i.type.text()}` (inferred from {', '.join(i.sources)})"
             for name, i in inferred.items() if i.type is not None]
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
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
            and node.func.id == "iter" and len(node.args) == 1 and not node.keywords):
        return _iterator_of(literal_type(node.args[0]))
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and isinstance(node.func.value, ast.Name) and node.func.value.id == "io"
            and node.func.attr in ("StringIO", "BytesIO")):
        # A harvested call's stream (``testcode`` writes every one as ``io.X(...)``).
        return StreamT(node.func.attr == "BytesIO", f"io.{node.func.attr}")
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


def _iterator_of(t: PyType | None) -> PyType | None:
    """The type of ``iter(x)`` for ``x`` of type ``t``: an iterator of its items."""
    if isinstance(t, ListT | SetT | IteratorT):
        return IteratorT(t.elem)
    if isinstance(t, TupleT) and t.homogeneous is not None:
        return IteratorT(t.homogeneous)
    if isinstance(t, StrT):
        return IteratorT(StrT())
    if isinstance(t, UnionT):
        options = [_iterator_of(o) for o in t.options]
        if options and all(isinstance(o, IteratorT) for o in options):
            return IteratorT(_union([o.elem for o in options if isinstance(o, IteratorT)]))
    return None


# --------------------------------------------------------------------------- the module's calls

_MAX_CALLERS = 8  # calling functions whose parameters' types are inferred, at most


class Callers:
    """What the module's own functions pass a function: the types of its arguments at
    each call by its bare name in another top-level function of either version.

    An argument's type is that of a literal, of the calling function's parameter
    (annotated, or inferred from that function's own harvested calls, ``calls_of``), of
    a name bound once there to such an expression, or ``iter()`` of one of these.
    """

    def __init__(self, trees: Sequence[ast.Module], entry: str,
                 calls_of: Callable[[str], Sequence[Call]]) -> None:
        self._trees, self._entry, self._calls_of = trees, entry, calls_of
        self._params: dict[tuple[int, str], dict[str, Inferred]] = {}

    def types(self, positional: list[str], wanted: set[str]) -> dict[str, tuple[PyType, str]]:
        """For each wanted parameter, the union of the types passed, and a phrase."""
        seen: dict[str, tuple[list[PyType], list[str]]] = {}
        if "." in self._entry or not wanted:
            return {}
        for tree in self._trees:
            for fn in tree.body:
                if not isinstance(fn, ast.FunctionDef) or fn.name == self._entry:
                    continue
                for node in ast.walk(fn):
                    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                            and node.func.id == self._entry):
                        continue
                    for name, expr in _site_arguments(node, positional, wanted).items():
                        t = self._type(expr, fn, 0)
                        if t is None:
                            continue
                        types, places = seen.setdefault(name, ([], []))
                        if t not in types:
                            types.append(t)
                        place = f"the call in `{fn.name}`"
                        if place not in places:
                            places.append(place)
        return {k: (_union(ts), ", ".join(ps)) for k, (ts, ps) in seen.items() if ts}

    def _type(self, expr: ast.expr, fn: ast.FunctionDef, depth: int) -> PyType | None:
        if depth > 4:
            return None
        t = literal_type(expr)
        if t is not None:
            return t
        if (isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name)
                and expr.func.id == "iter" and len(expr.args) == 1 and not expr.keywords):
            return _iterator_of(self._type(expr.args[0], fn, depth + 1))
        if not isinstance(expr, ast.Name):
            return None
        for p, _kind, _default, annotation in _parameters(fn):
            if p == expr.id:
                if annotation is not None:
                    given = from_annotation(annotation)
                    return given if is_known(given) else None
                inferred = self._inferred(fn).get(p)
                return inferred.search if inferred is not None and inferred.search != \
                    ANYTHING else None
        value = _bound_once(fn, expr.id)
        return self._type(value, fn, depth + 1) if value is not None else None

    def _inferred(self, fn: ast.FunctionDef) -> dict[str, Inferred]:
        key = (id(fn), fn.name)
        if key not in self._params:
            # Each calling function's calls are harvested from the tests: a helper called
            # from everywhere reads only the first few.
            known = len(self._params) < _MAX_CALLERS
            self._params[key] = infer(fn, fn, self._calls_of(fn.name)) if known else {}
        return self._params[key]


def _site_arguments(call: ast.Call, positional: list[str],
                    wanted: set[str]) -> dict[str, ast.expr]:
    if any(isinstance(a, ast.Starred) for a in call.args) or len(call.args) > len(positional):
        return {}
    bound = dict(zip(positional, call.args, strict=False))
    for kw in call.keywords:
        if kw.arg is None or kw.arg in bound:
            return {}
        bound[kw.arg] = kw.value
    return {k: v for k, v in bound.items() if k in wanted}


def _bound_once(fn: ast.FunctionDef, name: str) -> ast.expr | None:
    """The expression ``name`` is bound to in ``fn``, if bound by one plain assignment."""
    values: list[ast.expr | None] = []
    for node in ast.walk(fn):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(
                node.targets[0], ast.Name) and node.targets[0].id == name:
            values.append(node.value)
        elif (isinstance(node, ast.Name) and node.id == name
              and isinstance(node.ctx, ast.Store | ast.Del)) or (
                isinstance(node, ast.arg) and node.arg == name):
            values.append(None)
    exprs = [v for v in values if v is not None]
    return exprs[0] if len(exprs) == 1 and len(values) == 2 else None


# --------------------------------------------------------------------------- any object

# Builtins defined for every object, and the argument they take it as.
_TOTAL_CALLS = {"hasattr": 0, "isinstance": 0, "id": 0, "callable": 0, "repr": 0, "type": 0}
# Exceptions whose handler catches the TypeError an operation raises on a value it does
# not take.
_CATCHES_TYPE_ERROR = frozenset({"TypeError", "Exception", "BaseException"})


def takes_anything(fn: _Function) -> set[str]:
    """The parameters ``fn`` uses only in ways every object allows: as the object of
    ``hasattr``, ``isinstance``, ``id``, ``callable``, ``repr``, ``type(x)``,
    ``getattr(x, name, default)``, in ``is`` tests, or anywhere inside a ``try`` whose
    handlers catch ``TypeError``. A parameter rebound in the body, or never used, is not.
    """
    params = {p[0] for p in _parameters(fn) if p[3] is None}
    uses: dict[str, bool] = {}
    _visit(fn.body, params, uses, guarded=False)
    return {p for p, total in uses.items() if total}


def _visit(body: Sequence[ast.AST], params: set[str], uses: dict[str, bool], *,
           guarded: bool) -> None:
    for node in body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Lambda):
            _mark(node, params, uses)  # a closure over the parameter: not understood
            continue
        if isinstance(node, ast.Try):
            safe = guarded or any(_catches_type_error(h) for h in node.handlers)
            _visit(node.body, params, uses, guarded=safe)
            for part in (*node.handlers, *node.orelse, *node.finalbody):
                _visit([part], params, uses, guarded=guarded)
            continue
        if isinstance(node, ast.Name) and node.id in params:
            total = guarded and isinstance(node.ctx, ast.Load)
            uses[node.id] = uses.get(node.id, True) and total
            continue
        if not guarded and _total_use(node, params, uses):
            continue
        _visit(list(ast.iter_child_nodes(node)), params, uses, guarded=guarded)


def _total_use(node: ast.AST, params: set[str], uses: dict[str, bool]) -> bool:
    """Whether ``node`` uses a parameter in a way every object allows (and note it)."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        name, args = node.func.id, node.args
        position = _TOTAL_CALLS.get(name)
        if name == "getattr" and len(args) == 3:
            position = 0
        if name == "type" and len(args) != 1:
            position = None
        target = args[position] if position is not None and len(args) > position else None
        if isinstance(target, ast.Name) and target.id in params:
            uses.setdefault(target.id, True)
            rest = [a for i, a in enumerate(args) if i != position]
            _visit([*rest, *(k.value for k in node.keywords)], params, uses, guarded=False)
            return True
    if isinstance(node, ast.Compare) and all(isinstance(op, ast.Is | ast.IsNot)
                                             for op in node.ops):
        for side in (node.left, *node.comparators):
            if isinstance(side, ast.Name) and side.id in params:
                uses.setdefault(side.id, True)
            else:
                _visit([side], params, uses, guarded=False)
        return True
    return False


def _mark(node: ast.AST, params: set[str], uses: dict[str, bool]) -> None:
    for n in ast.walk(node):
        if isinstance(n, ast.Name) and n.id in params:
            uses[n.id] = False


def _catches_type_error(handler: ast.ExceptHandler) -> bool:
    if handler.type is None:
        return True
    names = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    return any(isinstance(n, ast.Name) and n.id in _CATCHES_TYPE_ERROR for n in names)
