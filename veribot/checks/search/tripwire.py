"""The tripwire: run both versions on targeted inputs before a proof is reported.

A proof is only as good as the model of Python it was made in. Before a "verified" is
reported, both versions are executed (in the sandbox, one child per version, all calls in
one batch) on inputs drawn from the domain as Python's typing rules define it, which is
wider than some models assume:

* edge values of each declared type: ``0``, ``1``, ``-1``, powers of two around 32 and 64
  bits, integers beyond a float's range, and ``True``/``False`` for an ``int`` (``bool``
  is an ``int``); ``NaN``, ``inf``, ``-0.0``, subnormals and ints for a ``float``; the
  empty string, non-ASCII, combining, case-changing and non-BMP characters for a ``str``;
  empty, one-element and repeated-element containers; ``None`` for ``Optional``; tuples
  and (for ``Sequence[str]``) a string where ``Sequence`` or ``Iterable`` is declared;
* the constants appearing in either version's code, and each integer constant ``c ± 1``;
* random draws, seeded from the sources so a run can be repeated.

A difference seen in the batch is reproduced in fresh children (``differential.confirm``,
twice); only then is it a counterexample. One found after a proof is a defect of the
model. This is the smoke detector, not a line of defence: it samples, it proves nothing.
"""

from __future__ import annotations

import ast
import math
import random
import time
import zlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from veribot.checks.lang import pysource
from veribot.checks.lang.pytypes import domain
from veribot.checks.lang.pyvalues import py_literal
from veribot.checks.project.package import PairContext
from veribot.checks.sandbox import Limits, SandboxError
from veribot.checks.search import construct, differential, difftest
from veribot.checks.verdict import Behaviour, BehaviourKind, Counterexample

__all__ = [
    "FOUND_BY",
    "METHOD",
    "Domain",
    "Outcome",
    "Param",
    "annotation_and_docstring_ids",
    "check",
    "domain_of",
    "draw_inputs",
    "literal",
    "parameters",
]

FOUND_BY = "tripwire"
METHOD = "tripwire: the model was wrong here (a proof was found, then this input differed)"

# Integers at least this large go last: a loop over range(n) may not finish on them.
_HEAVY_INT = 10**6
_FINISHED = (BehaviourKind.RETURNED, BehaviourKind.RAISED)


# ----------------------------------------------------------------------------- the domain


@dataclass(frozen=True)
class Domain:
    """The values an annotation admits under Python's typing rules.

    ``kind`` is one of: int, bool, float, complex, str, bytes, none, list, tuple (``args``:
    the items; ``homogeneous``: one item type repeated), sequence (list, tuple, and str
    for a sequence of str), set, frozenset, dict (key, value), union (options), any.
    """

    kind: str
    args: tuple[Domain, ...] = ()
    homogeneous: bool = False


ANY = Domain("any")
_SIMPLE = {
    "int": "int", "bool": "bool", "float": "float", "complex": "complex", "str": "str",
    "bytes": "bytes", "None": "none", "NoneType": "none",
}
_LISTS = {"list": "list", "List": "list", "set": "set", "Set": "set", "frozenset": "frozenset",
          "FrozenSet": "frozenset", "AbstractSet": "set", "MutableSet": "set",
          "Sequence": "sequence", "Iterable": "sequence", "Collection": "sequence",
          "Reversible": "sequence", "MutableSequence": "list", "Iterator": "any"}
_DICTS = ("dict", "Dict", "Mapping", "MutableMapping")


def domain_of(annotation: ast.expr | str | None) -> Domain:
    """The domain of an annotation (its AST or its text); ``any`` when unknown."""
    if annotation is None:
        return ANY
    if isinstance(annotation, str):
        try:
            annotation = ast.parse(annotation.strip(), mode="eval").body
        except SyntaxError:
            return ANY
    node = annotation
    if isinstance(node, ast.Constant):
        if node.value is None:
            return Domain("none")
        return domain_of(node.value) if isinstance(node.value, str) else ANY
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return _union([domain_of(node.left), domain_of(node.right)])
    name = _name(node)
    if name is not None:
        if name in _SIMPLE:
            return Domain(_SIMPLE[name])
        if name in _LISTS:
            return Domain(_LISTS[name], (ANY,)) if _LISTS[name] != "any" else ANY
        if name in ("tuple", "Tuple"):
            return Domain("tuple", (ANY,), homogeneous=True)
        if name in _DICTS:
            return Domain("dict", (ANY, ANY))
        return ANY
    if not isinstance(node, ast.Subscript):
        return ANY
    head = _name(node.value) or ""
    items = list(node.slice.elts) if isinstance(node.slice, ast.Tuple) else [node.slice]
    if head in _LISTS and len(items) == 1 and _LISTS[head] != "any":
        return Domain(_LISTS[head], (domain_of(items[0]),))
    if head in _DICTS and len(items) == 2:
        return Domain("dict", (domain_of(items[0]), domain_of(items[1])))
    if head in ("tuple", "Tuple"):
        if len(items) == 2 and isinstance(items[1], ast.Constant) and items[1].value is Ellipsis:
            return Domain("tuple", (domain_of(items[0]),), homogeneous=True)
        if len(items) == 1 and isinstance(items[0], ast.Tuple) and not items[0].elts:
            return Domain("tuple")
        return Domain("tuple", tuple(domain_of(i) for i in items))
    if head == "Optional" and len(items) == 1:
        return _union([domain_of(items[0]), Domain("none")])
    if head == "Union":
        return _union([domain_of(i) for i in items])
    return ANY


def _union(parts: list[Domain]) -> Domain:
    flat: list[Domain] = []
    for p in parts:
        for option in p.args if p.kind == "union" else (p,):
            if option not in flat:
                flat.append(option)
    return flat[0] if len(flat) == 1 else Domain("union", tuple(flat))


def _name(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


@dataclass(frozen=True)
class Param:
    """A positional parameter of the entry point, with its domain."""

    name: str
    domain: Domain
    has_default: bool


def _receiver(source: str, entry: str) -> tuple[str, list[Param], str] | None:
    """How to build the object a method is called on: the class as code names it, its
    constructor's required parameters (all positional, of types the search generates),
    and the property read (or ""); None for a function, a constructor or a static method,
    or when objects of the class cannot be built so."""
    m = construct.member(source, entry)
    if m is None or m.why_not or m.kind not in (construct.METHOD, construct.PROPERTY):
        return None
    built = []
    for p in m.params:
        if not p.required:
            continue  # the default is used
        if p.keyword or difftest.has_unknown(difftest.type_to_json(domain(p.type))):
            return None
        built.append(Param(p.name, domain_of(p.type.text()), False))
    return m.cls, built, entry.rsplit(".", 1)[-1] if m.kind == construct.PROPERTY else ""


def parameters(
    before: str, after: str, entry: str, param_types: Mapping[str, str] | None = None,
    *, method: bool = False,
) -> list[Param] | None:
    """The positional parameters of ``entry`` (from the before version) with their domains.

    A type in ``param_types`` wins over the annotation; a missing annotation is taken from
    the after version. ``None`` when the entry cannot be called with literals alone: not
    found, a method (``self``), or a keyword-only parameter without a default.
    """
    fn_a, fn_b = _find(before, entry), _find(after, entry)
    if fn_a is None:
        return None
    args = fn_a.args
    if any(d is None for d in args.kw_defaults):
        return None
    positional = [*args.posonlyargs, *args.args]
    if "." in entry and positional and positional[0].arg in ("self", "cls"):
        # A method called on an object built first (``method``), or a constructor.
        if not (method or entry.endswith(".__init__")) or positional[0].arg != "self":
            return None
        positional = positional[1:]
    other: dict[str, ast.expr | None] = {}
    if fn_b is not None:
        other = {a.arg: a.annotation for a in [*fn_b.args.posonlyargs, *fn_b.args.args]}
    first_default = len(positional) - len(args.defaults)
    given = param_types or {}
    params = []
    for i, a in enumerate(positional):
        annotation: ast.expr | str | None = given.get(a.arg) or a.annotation or other.get(a.arg)
        params.append(Param(a.arg, domain_of(annotation), i >= first_default))
    return params


def _find(source: str, entry: str) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    """The definition ``entry`` names (the last one, as Python binds it), or None."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    return pysource.definition(tree, entry)


# ----------------------------------------------------------------------------- the values


@dataclass(frozen=True)
class Constants:
    """The constants of the code, good values to try."""

    ints: tuple[int, ...] = ()
    floats: tuple[float, ...] = ()
    strs: tuple[str, ...] = ()

    @staticmethod
    def of(*sources: str) -> Constants:
        ints: set[int] = set()
        floats: set[float] = set()
        strs: set[str] = set()
        for source in sources:
            try:
                tree = ast.parse(source)
            except SyntaxError:
                continue
            skip = annotation_and_docstring_ids(tree)
            for node in ast.walk(tree):
                if not isinstance(node, ast.Constant) or isinstance(node.value, bool):
                    continue
                if id(node) in skip:
                    continue
                v = node.value
                if isinstance(v, int) and abs(v) <= 10**30:
                    ints.update((v - 1, v, v + 1, -v))
                elif isinstance(v, float):
                    floats.update((v, -v))
                elif isinstance(v, str) and len(v) <= 40:
                    strs.add(v)
        return Constants(
            tuple(sorted(ints, key=lambda n: (abs(n), n))[:40]),
            tuple(sorted(floats, key=lambda f: (abs(f), f))[:20]),
            tuple(sorted(strs, key=lambda s: (len(s), s))[:30]),
        )


def annotation_and_docstring_ids(tree: ast.Module) -> set[int]:
    """The ids of the constants that are annotations or docstrings, not values."""
    skip: set[int] = set()
    for node in ast.walk(tree):
        annotations: list[ast.expr | None] = []
        if isinstance(node, ast.arg):
            annotations.append(node.annotation)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            annotations.append(node.returns)
        elif isinstance(node, ast.AnnAssign):
            annotations.append(node.annotation)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                skip.add(id(body[0].value))
        for a in annotations:
            if a is not None:
                skip.update(id(n) for n in ast.walk(a))
    return skip


# A value of each kind to hold a parameter at while another one sweeps its edges.
_BASE: dict[str, object] = {"int": 1, "bool": True, "float": 1.5, "complex": 1j, "str": "a",
                            "bytes": b"a", "none": None, "any": 1}


def base_value(d: Domain, consts: Constants) -> object:
    """An ordinary value of the domain."""
    if d.kind in _BASE:
        return _BASE[d.kind]
    if d.kind == "union":
        return base_value(d.args[0], consts)
    pool = edges(d, consts)
    return pool[min(1, len(pool) - 1)] if pool else None


_INT_EDGES: tuple[object, ...] = (
    0, 1, -1, 2, -2, 3, 7, 10, -10, 100, 255, 256, -256, 1000,
    True, False,
    2**31 - 1, -(2**31), 2**32, 2**53 + 1, 2**63 - 1, -(2**63), 2**64, -(2**64), 10**20,
    10**400, -(10**400),
)
_FLOAT_EDGES: tuple[object, ...] = (
    0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5, 2.5, -2.5, 0.1, 0.3, 3.0, 1e16, 2.0**53,
    1e-300, 5e-324, 1e300, 1.7976931348623157e308, math.nan, math.inf, -math.inf,
    0, 1, -1, 2, True, False, 2**53 + 1, 10**400,
)
_STR_EDGES: tuple[object, ...] = (
    "", "a", "A", "ab", "ba", "aa", "abc", " ", " a ", "0", "1", "-1", "10", "1.5", "a b",
    "\t\n", "\x00", "é", "e\u0301", "É", "ß", "İ", "ǅ", "ﬁ", "²", "١", "\u00e8",
    "😀", "a😀b", "😀😀", "\U0010ffff", "Ω", "中文", "a,b", "a.b", "[]", "'", '"', "\\",
)
_BYTES_EDGES: tuple[object, ...] = (b"", b"a", b"ab", b"\x00", b"\xff", b"A b")
_COMPLEX_EDGES: tuple[object, ...] = (0j, 1j, 1 + 2j, -1.5j, 0, 1, -1, 0.5, True)
_ANY_EDGES: tuple[object, ...] = (0, 1, -1, True, None, 0.5, math.nan, "", "a", [], [1], (),
                                  (1,), {})


def _scalar_edges(d: Domain, consts: Constants) -> list[object]:
    if d.kind == "int":
        return [*_INT_EDGES[:16], *consts.ints, *_INT_EDGES[16:]]
    if d.kind == "bool":
        return [True, False]
    if d.kind == "float":
        return [*_FLOAT_EDGES[:21], *consts.floats, *(float(i) for i in consts.ints[:8]),
                *consts.ints[:8], *_FLOAT_EDGES[21:]]
    if d.kind == "complex":
        return list(_COMPLEX_EDGES)
    if d.kind == "str":
        return [*_STR_EDGES[:8], *consts.strs, *_str_variants(consts.strs), *_STR_EDGES[8:]]
    if d.kind == "bytes":
        return list(_BYTES_EDGES)
    if d.kind == "none":
        return [None]
    return [*_ANY_EDGES, *consts.ints[:6], *consts.strs[:6]]


def _str_variants(strs: Iterable[str]) -> list[str]:
    out: list[str] = []
    for s in strs:
        if s:
            out.extend((s + "x", "x" + s, s[:-1], s * 2, s.upper(), s + "😀"))
    return out[:30]


def edges(d: Domain, consts: Constants) -> list[object]:
    """The targeted values of a domain, most telling first."""
    if d.kind == "union":
        per = [edges(o, consts) for o in d.args]
        merged: list[object] = []
        for i in range(max(len(p) for p in per)):
            merged.extend(p[i] for p in per if i < len(p))
        return _unique(merged)
    if d.kind in ("list", "tuple", "sequence", "set", "frozenset", "dict"):
        return _unique(_container_edges(d, consts))
    return _unique(_scalar_edges(d, consts))


def _container_edges(d: Domain, consts: Constants) -> list[object]:
    if d.kind == "tuple" and not d.homogeneous:
        items = [edges(i, consts) for i in d.args]
        if not items:
            return [()]
        out: list[object] = [tuple(v[0] for v in items)]
        for pos, values in enumerate(items):
            for v in values[1:12]:
                out.append(tuple(v if j == pos else items[j][0] for j in range(len(items))))
        return out
    if d.kind == "dict":
        keys = [k for k in edges(d.args[0], consts) if _hashable(k)][:6] or [0]
        values = edges(d.args[1], consts)[:6] or [None]
        return [{}, {keys[0]: values[0]}, {keys[0]: values[-1]},
                dict(zip(keys, values, strict=False)), {k: values[0] for k in keys}]
    elem = d.args[0] if d.args else ANY
    values = edges(elem, consts)
    if d.kind in ("set", "frozenset"):
        values = [v for v in values if _hashable(v)]
    shapes: list[list[object]] = [[]]
    shapes.extend([v] for v in values[:14])
    if values:
        shapes.append([values[0], values[0]])
    if len(values) >= 2:
        shapes.extend([[values[1], values[0]], [values[0], values[1]], [values[1], values[1]]])
    if len(values) >= 3:
        shapes.append([values[2], values[0], values[1], values[0]])
        shapes.append(values[:8])
    return [s for shape in shapes for s in _shape(d, elem, shape)]


def _shape(d: Domain, elem: Domain, items: list[object]) -> list[object]:
    if d.kind == "list":
        return [items]
    if d.kind == "tuple":
        return [tuple(items)]
    if d.kind == "set":
        return [set(items)]
    if d.kind == "frozenset":
        return [frozenset(items)]
    out: list[object] = [list(items), tuple(items)]  # a sequence: list and tuple, and str
    if elem.kind == "str" and all(isinstance(s, str) and len(s) == 1 for s in items):
        out.append("".join(str(s) for s in items))
    return out


def draw(d: Domain, rng: random.Random, consts: Constants, depth: int = 0) -> object:
    """One random value of the domain."""
    k = d.kind
    if k == "union":
        return draw(rng.choice(d.args), rng, consts, depth)
    if rng.random() < 0.3 and k not in ("list", "tuple", "sequence", "set", "frozenset", "dict"):
        return rng.choice(edges(d, consts))
    if k == "int":
        return rng.choice((rng.randint(-10, 10), rng.randint(-1000, 1000),
                           rng.randint(-(2**40), 2**40)))
    if k == "bool":
        return rng.random() < 0.5
    if k == "float":
        return rng.choice((rng.uniform(-10, 10), round(rng.uniform(-100, 100), 1),
                           float(rng.randint(-100, 100)), rng.randint(-5, 5),
                           math.ldexp(rng.random(), rng.randint(-1074, 1023))))
    if k == "complex":
        return complex(rng.randint(-5, 5), rng.randint(-5, 5))
    if k == "str":
        return _random_str(rng, consts)
    if k == "bytes":
        return bytes(rng.randrange(256) for _ in range(rng.randint(0, 5)))
    if k == "none":
        return None
    if k == "any":
        return draw(rng.choice((Domain("int"), Domain("str"), Domain("list", (Domain("int"),)),
                                Domain("none"), Domain("float"))), rng, consts, depth + 1)
    return _random_container(d, rng, consts, depth)


def _random_container(d: Domain, rng: random.Random, consts: Constants, depth: int) -> object:
    size = 0 if depth > 2 else rng.choice((0, 1, 2, 3, 4, 6, 9))
    if d.kind == "tuple" and not d.homogeneous:
        return tuple(draw(i, rng, consts, depth + 1) for i in d.args)
    if d.kind == "dict":
        pairs = [(draw(d.args[0], rng, consts, depth + 1), draw(d.args[1], rng, consts, depth + 1))
                 for _ in range(size)]
        return {k: v for k, v in pairs if _hashable(k)}
    elem = d.args[0] if d.args else ANY
    items = [draw(elem, rng, consts, depth + 1) for _ in range(size)]
    if d.kind in ("set", "frozenset"):
        items = [v for v in items if _hashable(v)]
    return rng.choice(_shape(d, elem, items))


def _random_str(rng: random.Random, consts: Constants) -> str:
    alphabet = "ab c0-1.,:é😀A\n" + "".join(sorted({ch for s in consts.strs for ch in s}))[:40]
    if consts.strs and rng.random() < 0.3:
        parts = [rng.choice(consts.strs) for _ in range(rng.randint(1, 3))]
        return rng.choice(("", " ", "x")).join(parts)
    return "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 8)))


def _hashable(v: object) -> bool:
    try:
        hash(v)
    except TypeError:
        return False
    return True


def _unique(values: Iterable[object]) -> list[object]:
    seen: set[str] = set()
    out = []
    for v in values:
        key = literal(v)
        if key not in seen:
            seen.add(key)
            out.append(v)
    return out


def literal(value: object) -> str:
    """A literal that the sandbox's ``parse_literal`` reads back as ``value``."""
    return py_literal(value)
    if isinstance(value, list):
        return "[" + ", ".join(literal(v) for v in value) + "]"
    if isinstance(value, tuple):
        inner = ", ".join(literal(v) for v in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{literal(k)}: {literal(v)}" for k, v in value.items()) + "}"
    if isinstance(value, set | frozenset):
        name = "set" if isinstance(value, set) else "frozenset"
        if not value:
            return f"{name}()"
        return f"{name}([" + ", ".join(sorted(literal(v) for v in value)) + "])"
    return repr(value)


# ----------------------------------------------------------------------------- the inputs


def draw_inputs(
    before: str,
    after: str,
    params: Sequence[Param],
    *,
    max_inputs: int,
    seed: int | None = None,
) -> list[tuple[str, ...]]:
    """Up to ``max_inputs`` calls (argument literals), targeted ones first, heavy ones last.

    Each parameter sweeps through its edge values while the others keep a base value;
    then random draws combine them, sometimes leaving defaulted parameters out.
    """
    consts = Constants.of(before, after)
    rng = random.Random(seed if seed is not None else _seed(before, after))
    pools = [edges(p.domain, consts) or [None] for p in params]
    required = sum(1 for p in params if not p.has_default)
    base = [base_value(p.domain, consts) for p in params]
    calls: list[tuple[object, ...]] = [tuple(base[:required])]
    for i, pool in enumerate(pools):
        arity = max(required, i + 1)
        for v in pool:
            calls.append(tuple(v if j == i else base[j] for j in range(arity)))
    sweep = _dedupe(calls)[: max(1, max_inputs * 3 // 4)]
    randoms: list[tuple[object, ...]] = []
    for _ in range(max_inputs * 3):
        if len(sweep) + len(randoms) >= max_inputs * 2:
            break
        arity = rng.randint(required, len(params))
        randoms.append(tuple(
            rng.choice(pools[j]) if rng.random() < 0.4 else draw(params[j].domain, rng, consts)
            for j in range(arity)))
    chosen = _dedupe([*sweep, *randoms])[:max_inputs]
    chosen.sort(key=_heavy)  # stable: the order within each class is kept
    return [tuple(literal(v) for v in call) for call in chosen]


def _seed(*sources: str) -> int:
    return zlib.crc32("\0".join(sources).encode("utf-8", "surrogatepass"))


def _dedupe(calls: Iterable[tuple[object, ...]]) -> list[tuple[object, ...]]:
    seen: set[tuple[str, ...]] = set()
    out = []
    for call in calls:
        key = tuple(literal(v) for v in call)
        if key not in seen:
            seen.add(key)
            out.append(call)
    return out


def _heavy(call: tuple[object, ...]) -> bool:
    def heavy(v: object) -> bool:
        if isinstance(v, int) and not isinstance(v, bool):
            return abs(v) >= _HEAVY_INT
        if isinstance(v, list | tuple | set | frozenset):
            return any(heavy(x) for x in v)
        if isinstance(v, dict):
            return any(heavy(x) for x in (*v.keys(), *v.values()))
        return False

    return any(heavy(v) for v in call)


# ----------------------------------------------------------------------------- the run


@dataclass(frozen=True)
class Outcome:
    """What the tripwire saw.

    ``counterexample``: a difference reproduced in fresh children (twice). ``unstable``:
    an input on which both versions finished differently in the batch, but not again in
    fresh children (state kept between calls, or nondeterminism), with the batch's
    sentence. ``note``: what was run, for people.
    """

    counterexample: Counterexample | None
    inputs_run: int
    elapsed_s: float
    note: str
    unstable: tuple[tuple[str, ...], str] | None = None
    inputs: tuple[tuple[str, ...], ...] = field(default=(), repr=False)


def check(
    before: str,
    after: str,
    entry: str,
    param_types: Mapping[str, str] | None = None,
    *,
    time_s: float = 2.0,
    max_inputs: int = 200,
    confirm_limits: Limits | None = None,
    seed: int | None = None,
    context: PairContext | None = None,
) -> Outcome:
    """Run both versions on the drawn inputs in one batch each; confirm a difference.

    ``time_s`` bounds the batch (both versions run at once); confirming a difference in
    fresh children takes up to twice ``confirm_limits.wall_s`` more.
    """
    start = time.monotonic()
    receiver = _receiver(before, entry)
    params = parameters(before, after, entry, param_types, method=receiver is not None)
    if params is None:
        return Outcome(None, 0, 0.0, "tripwire not run: the entry cannot be called with "
                                     "literal arguments alone (a method whose objects are "
                                     "not built, or a required keyword-only parameter)")
    if receiver is not None:
        shown, built, read = receiver
        params = [*built, *params]
    calls = draw_inputs(before, after, params, max_inputs=max_inputs, seed=seed)
    if receiver is not None:
        # The first values build the object (``@C(3)``), the rest are the method's.
        n = len(built)
        calls = [(f"@{shown}({', '.join(c[:n])})" + (f".{read}" if read else ""), *c[n:])
                 for c in calls if len(c) >= n]
    call_s = min(1.0, max(0.25, time_s / 8))
    batch = Limits(wall_s=max(0.5, time_s), call_s=call_s)
    try:
        pairs = differential.run_both(before, after, entry, calls, limits=batch,
                                      context=context)
    except SandboxError as exc:
        return Outcome(None, 0, time.monotonic() - start, f"tripwire not run: {exc}")
    confirm = confirm_limits or Limits(wall_s=max(2.0, time_s), call_s=2.0)
    run = [i for i, (a, b) in enumerate(pairs) if "not-run" not in (a.value, b.value)]
    unstable: tuple[tuple[str, ...], str] | None = None
    tried = 0
    for i in run:
        a, b = pairs[i]
        sentence = differential.difference(a, b)
        if sentence is None:
            continue
        if tried >= 3:
            break
        tried += 1
        found = _reproduce(before, after, entry, calls[i], confirm, context)
        if found is not None:
            return Outcome(found, len(run), time.monotonic() - start,
                           f"tripwire: {len(run)} inputs run, a difference reproduced",
                           inputs=tuple(calls))
        if unstable is None and a.kind in _FINISHED and b.kind in _FINISHED:
            unstable = (calls[i], sentence)
    elapsed = time.monotonic() - start
    note = (f"tripwire: both versions run on {len(run)} edge, constant and random inputs "
            f"without a difference ({elapsed:.2f} s)")
    if len(run) < len(calls):
        note += f"; {len(calls) - len(run)} inputs not run in time"
    return Outcome(None, len(run), elapsed, note, unstable, tuple(calls))


def _reproduce(
    before: str, after: str, entry: str, args: Sequence[str], limits: Limits,
    context: PairContext | None = None,
) -> Counterexample | None:
    """The counterexample, if two independent confirmations in fresh children agree."""
    first = differential.confirm(before, after, entry, args, found_by=FOUND_BY, limits=limits,
                                 context=context)
    if first is None:
        return None
    second = differential.confirm(before, after, entry, args, found_by=FOUND_BY, limits=limits,
                                  context=context)
    if second is None or _key(first) != _key(second):
        return None
    return first


def _key(found: Counterexample) -> tuple[object, ...]:
    def one(b: Behaviour) -> tuple[object, ...]:
        # A hang's or a resource failure's text holds timings; its kind says enough.
        return (b.kind, b.value if b.kind in _FINISHED else None, b.args_after)

    return (*one(found.before), *one(found.after))

