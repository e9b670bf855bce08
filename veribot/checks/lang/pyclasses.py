"""A class of the module with its bases, as an attribute lookup on its objects walks them.

``hierarchy`` reads the bases of a class defined at module level: each must be a class
of the same module (defined once at module level, found by its name, ``Base[...]`` too:
subclassing a generic alias subclasses the class) or one of the *neutral* bases that add
no member a method reads: ``object``, ``abc.ABC`` and ``typing.Generic[...]`` (named
through the module's imports). The method resolution order is Python's C3
linearisation, computed here; bases it cannot order (``class C(A, B)`` with ``B``
deriving from ``A``) make the import fail and are refused. A base from another module,
a metaclass or any other class keyword, on the class or on one of its bases, is refused.

The lookup of a name on an object of the class finds the first class of that order whose
body binds it (``binder``); a neutral base binds what it binds in the running
interpreter (``ABC`` binds ``_abc_impl`` on every class deriving from it).
"""

from __future__ import annotations

import abc
import ast
import builtins
import typing
from dataclasses import dataclass

from veribot.checks.lang.pyvalues import Unsupported

# The neutral bases, by the dotted name they are imported under, and what they bind.
NEUTRAL: dict[str, frozenset[str]] = {
    "object": frozenset(vars(object)),
    "abc.ABC": frozenset(vars(abc.ABC)),
    "typing.Generic": frozenset(vars(typing.Generic)),
}
# What ABCMeta binds on every class it makes (each class of the order has its own).
_ABC_BINDS = frozenset({"_abc_impl", "__abstractmethods__"})

Entry = ast.ClassDef | str  # a class of the module, or a neutral base by its dotted name


@dataclass(frozen=True)
class Hierarchy:
    """A class's method resolution order: classes of the module and neutral bases."""

    mro: tuple[Entry, ...]

    @property
    def classes(self) -> list[ast.ClassDef]:
        """The classes of the module in the order, the class itself first."""
        return [c for c in self.mro if isinstance(c, ast.ClassDef)]

    @property
    def names(self) -> str:
        """The order, for a verdict's assumptions."""
        return ", ".join(c.name if isinstance(c, ast.ClassDef) else c for c in self.mro)

    def binder(self, name: str) -> Entry | None:
        """The first class of the order whose body binds ``name`` (what a lookup on an
        object of the class, without an attribute of its own of that name, finds)."""
        abc_based = "abc.ABC" in self.mro
        for entry in self.mro:
            if isinstance(entry, str):
                if name in NEUTRAL[entry] or (entry == "abc.ABC" and name in _ABC_BINDS):
                    return entry
            elif name in body_names(entry) or (abc_based and name in _ABC_BINDS):
                return entry
        return None

    def after(self, owner: ast.ClassDef) -> tuple[Entry, ...]:
        """The part of the order after ``owner``: where ``super()`` in its methods looks."""
        at = next(i for i, c in enumerate(self.mro) if c is owner)
        return self.mro[at + 1:]


def body_names(cls: ast.ClassDef) -> set[str]:
    """The names a class body binds (definitions, assignments, annotations with a value
    or without: an annotation alone binds nothing, but declares an instance attribute)."""
    names: set[str] = set()
    for stmt in cls.body:
        if isinstance(stmt, ast.AnnAssign):
            if stmt.value is not None and isinstance(stmt.target, ast.Name):
                names.add(stmt.target.id)
        else:
            names.update(bound_names(stmt))
    return names


def bound_names(stmt: ast.stmt) -> list[str]:
    """The names a statement of a class body binds in that body, once per binding, in
    every form (assignments, definitions, imports, ``except ... as``, ``match`` captures,
    ``del``), inside ``if``/``try``/``for``/``with`` too; the bodies of the functions and
    classes it defines are their own scopes. A ``global`` or ``nonlocal`` declaration,
    which makes a name of the body bind another scope's, is refused."""
    names: list[str] = []
    todo: list[ast.AST] = [stmt]
    while todo:
        n = todo.pop()
        if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.append(n.name)
            # Decorators, defaults, bases and annotations run in the class body.
            todo.extend(n.decorator_list)
            if isinstance(n, ast.ClassDef):
                todo.extend([*n.bases, *n.keywords])
            else:
                todo.extend([*n.args.defaults, *(d for d in n.args.kw_defaults if d)])
            continue
        if isinstance(n, ast.Lambda):
            todo.extend([*n.args.defaults, *(d for d in n.args.kw_defaults if d)])
            continue
        if isinstance(n, ast.Global | ast.Nonlocal):
            raise Unsupported("`global` or `nonlocal` in a class body", n.lineno)
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store | ast.Del):
            names.append(n.id)
        elif isinstance(n, ast.alias):
            names.append((n.asname or n.name).split(".")[0])
        elif isinstance(n, ast.ExceptHandler | ast.MatchAs | ast.MatchStar) and n.name:
            names.append(n.name)
        elif isinstance(n, ast.MatchMapping) and n.rest:
            names.append(n.rest)
        todo.extend(ast.iter_child_nodes(n))
    return names


def dotted_name(tree: ast.Module, node: ast.expr) -> str:
    """The dotted name ``node`` (a name or an attribute of one) names through the module's
    imports, each bound once at module level (``dataclasses.dataclass`` for ``dataclass``
    after ``from dataclasses import dataclass``), or ""."""
    return _dotted(node, _imported(tree), {})


def hierarchy(tree: ast.Module, cls: ast.ClassDef) -> Hierarchy:
    """The method resolution order of ``cls`` (a class at module level), or
    ``Unsupported`` saying which base cannot be read."""
    local = _classes(tree)
    origins = _imported(tree)
    orders: dict[int, tuple[Entry, ...]] = {}

    def order(node: ast.ClassDef, depth: int) -> tuple[Entry, ...]:
        if id(node) in orders:
            return orders[id(node)]
        if depth > 50:
            raise Unsupported("a class hierarchy deeper than 50 classes", node.lineno)
        if node.keywords:
            raise Unsupported(f"a class with a metaclass or class keywords (`{node.name}`)",
                              node.lineno)
        bases = [_base(b, local, origins, node) for b in node.bases]
        lines = [order(b, depth + 1) if isinstance(b, ast.ClassDef) else _neutral(b)
                 for b in bases]
        if not bases:
            lines, bases = [_neutral("object")], ["object"]
        merged = _merge([*[list(x) for x in lines], list(bases)], node)
        orders[id(node)] = (node, *merged)
        return orders[id(node)]

    return Hierarchy(order(cls, 0))


def outside_members(tree: ast.Module, cls: ast.ClassDef) -> frozenset[str] | None:
    """The members that the bases of ``cls`` from outside the module define, through its
    bases of the module too; None where that is not known (any name).

    Code outside the module that is handed an object of the class may call any of them,
    by name: `html.escape` calls `replace` of a `str` subclass, `ExceptionGroup.split`
    its `derive`. So an override of one is reached wherever the object can go. A builtin
    class answers with what its type defines (its own bases' too), a neutral base with
    what it binds; a base imported or computed, or any base of a nested class, may define
    any name. The bases of the module's subclasses of ``cls`` count too.
    """
    local = _classes(tree)
    origins = _imported(tree)
    top = {id(n) for n in tree.body if isinstance(n, ast.ClassDef)}
    bound = _bound_counts(tree)
    found: set[str] = set()
    seen: set[int] = set()
    # Its subclasses' objects run its members too (`class S(Mixin, str)` runs the
    # mixin's `replace`): a class of the module naming it among its bases, and theirs.
    todo = [cls]
    for node in _subclasses(tree, cls):
        if node.bases and id(node) not in top:
            return None
        todo.append(node)
    while todo:
        node = todo.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if node.bases and id(node) not in top:
            return None
        for base in node.bases:
            head = base.value if isinstance(base, ast.Subscript) else base
            if isinstance(head, ast.Name) and head.id in local and head.id not in origins:
                todo.append(local[head.id])
                continue
            if isinstance(head, ast.Name) and head.id not in origins and head.id in bound:
                return None  # (a name the module binds otherwise: `object = Base`)
            dotted = _dotted(head, origins, local)
            dotted = _NEUTRAL_ALIASES.get(dotted, dotted)
            if dotted in NEUTRAL:
                found |= NEUTRAL[dotted]
                continue
            if not isinstance(head, ast.Name) or head.id in origins:
                return None
            kind = getattr(builtins, head.id, None)
            if not isinstance(kind, type):
                return None
            found |= set(dir(kind))
    return frozenset(found)


def _subclasses(tree: ast.Module, cls: ast.ClassDef) -> list[ast.ClassDef]:
    """The classes of the module (any, nested too) that derive from ``cls`` by a base
    naming it or one of them (``Name`` or ``Name[...]``)."""
    every = [n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)]
    names, found = {cls.name}, [cls]
    grew = True
    while grew:
        grew = False
        for node in every:
            if node not in found and any(isinstance(h, ast.Name) and h.id in names for h in (
                    b.value if isinstance(b, ast.Subscript) else b for b in node.bases)):
                found.append(node)
                names.add(node.name)
                grew = True
    return found[1:]


def _neutral(name: str) -> tuple[Entry, ...]:
    return ("object",) if name == "object" else (name, "object")


def _merge(seqs: list[list[Entry]], node: ast.ClassDef) -> list[Entry]:
    """C3's merge: repeatedly take the first head that is in no other list's tail."""
    out: list[Entry] = []
    seqs = [s for s in seqs if s]
    while seqs:
        for seq in seqs:
            head = seq[0]
            if not any(any(_same(x, head) for x in s[1:]) for s in seqs):
                break
        else:
            raise Unsupported(f"bases of `{node.name}` that no method resolution order "
                              "can follow (the import fails)", node.lineno)
        out.append(head)
        seqs = [s[1:] if _same(s[0], head) else s for s in seqs]
        seqs = [s for s in seqs if s]
    return out


def _same(a: Entry, b: Entry) -> bool:
    return a is b if isinstance(a, ast.ClassDef) or isinstance(b, ast.ClassDef) else a == b


def _classes(tree: ast.Module) -> dict[str, ast.ClassDef]:
    """Classes defined at module level whose name nothing else in the module binds."""
    counts = _bound_counts(tree)
    return {n.name: n for n in tree.body
            if isinstance(n, ast.ClassDef) and counts.get(n.name) == 1}


def _bound_counts(tree: ast.Module) -> dict[str, int]:
    """How many times the module binds each name, anywhere (a `global` counts twice)."""
    counts: dict[str, int] = {}
    for n in ast.walk(tree):
        name = None
        if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load):
            name = n.id
        elif isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            name = n.name
        elif isinstance(n, ast.alias):
            name = (n.asname or n.name).split(".")[0]
        elif isinstance(n, ast.Global | ast.Nonlocal):
            for g in n.names:
                counts[g] = counts.get(g, 0) + 2
        if name is not None:
            counts[name] = counts.get(name, 0) + 1
    return counts


def _imported(tree: ast.Module) -> dict[str, str]:
    """Names bound once, by an import at module level, to the dotted name they import
    (``t`` for ``import typing as t``: ``typing``; ``ABC``: ``abc.ABC``)."""
    found: dict[str, str] = {}
    seen: dict[str, int] = {}
    for n in ast.walk(tree):
        if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load):
            seen[n.id] = seen.get(n.id, 0) + 1
        elif isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            seen[n.name] = seen.get(n.name, 0) + 1
        elif isinstance(n, ast.alias):
            bound = (n.asname or n.name).split(".")[0]
            seen[bound] = seen.get(bound, 0) + 1
    for stmt in tree.body:
        if isinstance(stmt, ast.Import):
            for a in stmt.names:
                if a.asname is not None:
                    found[a.asname] = a.name
                elif "." not in a.name:
                    found[a.name] = a.name
        elif isinstance(stmt, ast.ImportFrom) and stmt.module and not stmt.level:
            for a in stmt.names:
                found[a.asname or a.name] = f"{stmt.module}.{a.name}"
    return {k: v for k, v in found.items() if seen.get(k) == 1}


def _dotted(node: ast.expr, origins: dict[str, str], local: dict[str, ast.ClassDef]) -> str:
    """The dotted name an expression names through the module's imports, or ""."""
    if isinstance(node, ast.Name):
        if node.id in origins:
            return origins[node.id]
        if node.id == "object" and node.id not in local and node.id not in origins:
            return "object"
        return ""
    if isinstance(node, ast.Attribute):
        head = _dotted(node.value, origins, local)
        return f"{head}.{node.attr}" if head else ""
    return ""


_NEUTRAL_ALIASES = {"typing_extensions.Generic": "typing.Generic", "builtins.object": "object"}


def _base(node: ast.expr, local: dict[str, ast.ClassDef], origins: dict[str, str],
          owner: ast.ClassDef) -> Entry:
    """A base expression as a class of the module or a neutral base."""
    generic = isinstance(node, ast.Subscript)
    head = node.value if isinstance(node, ast.Subscript) else node
    if isinstance(head, ast.Name) and head.id in local and head.id not in origins:
        if local[head.id] is owner:
            raise Unsupported(f"a class that derives from itself (`{owner.name}`)",
                              owner.lineno)
        return local[head.id]
    dotted = _dotted(head, origins, local)
    dotted = _NEUTRAL_ALIASES.get(dotted, dotted)
    if dotted in NEUTRAL and generic == (dotted == "typing.Generic"):
        return dotted
    raise Unsupported(f"a base class outside the module or not read here "
                      f"(`{ast.unparse(node)}`; inherited members are not read)",
                      owner.lineno)
