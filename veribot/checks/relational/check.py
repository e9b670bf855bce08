"""The relational check: the same code in the same environment, proven without a model.

Two versions of a function (or ``Class.method``) behave the same when their code is the
same modulo the docstring, formatting, a consistent renaming of local variables (a
bijection per scope, consistent across closures; parameters, nested definitions' names
and anything a string names keep their names), and global names that resolve to the same
origin (``itertools.filterfalse`` read as an attribute, through ``from itertools import
filterfalse`` at module level, or through a local import of a standard-library module at
the top of a block), and when every other global name it reads is bound the same way in
both modules: an unchanged plain constant, function or class (recursively, through the
names they read), or another function of the module that changed, in which case the
equivalence is *relative* to it, and stands only if that function, decided on its own in
the same pair, is verified by this check too (a model's proof holds for its parameter
types, distinct lists and exception types only, which the caller's calls need not meet),
and nothing the function reads catches exceptions. A renamed local is refused where an
exception its read raises (whose message names it) can reach code that reads it (a
handler's name, a `with`). ``with a, b:`` is compared as ``with a: with b:``, and
``@typing.overload`` stubs before a definition as the bindings it replaces.

A method's class must be the same apart from the method, and every class it reads the
same, or differ only in members it cannot reach (``_class_delta``, ``_unreached``): plain
methods, static or
class methods and property getters (changed, added or removed; no dunder, nothing the
class body reads), and bare annotations under postponed evaluation (only
``__annotations__`` changes; no code of the module reads annotations). Reached means
named anywhere in the code it runs of this module (its class, the helpers and classes it
reads): as an attribute of any object, in a string, or as a name the builtins call by
themselves; code that reads attributes by a computed name refuses. A reached method both
versions define makes the result relative to it (decided on its own, it must be verified
by this check too). The sandbox then compares the class without those members.

The static reading decides nothing alone. Both modules are then imported in the sandbox,
and each version's child reports what a static reading cannot see: that the entry is the
function defined at its line, that every resolved global is the object its origin names
(for the standard library, the object it had before the module was loaded), that the
builtins read are not shadowed or replaced, and fingerprints of defaults, constants,
helper functions and classes (their dictionaries, deeply) that must be equal in both
versions. Names are observable through ``locals()``, frames, ``inspect`` and the like:
code that can look at them (in the function, its changed callees, or a class it reads)
is refused, as are ``global``, ``nonlocal``, ``del`` of a local, ``match`` and classes
nested in the function. It runs only when the code may be executed.

Asked with ``relative``, code that differs beyond that may still match: ``opaque`` walks
both versions and requires, on every path, the same calls and operations with equal
arguments in the same order (each one an uninterpreted event), and the same result. The
rest of the check (the environment, changed callees, the sandbox) is the same; the verdict
names the method and lists the calls it assumes deterministic.
"""

from __future__ import annotations

import ast
import builtins
import copy
import functools
import logging
import posixpath
import re
import secrets
import sys
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from contextvars import ContextVar
from dataclasses import dataclass, field

from veribot.checks.hints import reorder
from veribot.checks.lang import pyclasses, pygen, pyinterfere, pylookups, pysource
from veribot.checks.lang.pymodule import overload_stubs
from veribot.checks.project import modulecheck, noise
from veribot.checks.project.package import Package, PairContext
from veribot.checks.relational import opaque, walker
from veribot.checks.sandbox import Limits, package_files, run_script
from veribot.checks.verdict import Reason, Result, Verdict

__all__ = ["METHOD", "METHOD_RELATIVE", "Plan", "Refused", "check", "plan"]

log = logging.getLogger(__name__)

METHOD = "relational: the same code in the same environment"
# The code differs, but both versions make the same calls and operations on every path
# (``relational.opaque``): equivalent relative to what those calls do.
METHOD_RELATIVE = ("relational, relative to callees: the same calls and operations, with "
                   "equal arguments, in the same order, in the same environment")
# The same, once the statements of `before` were reordered as a hint proposed (each pair
# moved past each other shown to commute by ``hints.reorder``).
METHOD_REORDERED = ("relational+hints: the same code in the same environment, with the "
                    "statement order a hint proposed")

# Names and attributes through which code can see local names or frames.
_OBSERVING_NAMES = {
    "locals", "vars", "eval", "exec", "globals", "dir", "breakpoint", "__import__",
    "compile", "__builtins__", "super", "__class__",
}  # fmt: skip
_OBSERVING_ATTRS = {
    "_getframe", "currentframe", "stack", "trace", "getouterframes", "getinnerframes",
    "f_locals", "f_globals", "f_back", "f_code", "tb_frame", "gi_frame", "cr_frame",
    "ag_frame", "__code__", "__globals__", "__closure__", "co_varnames", "__builtins__",
    "_getframemodulename", "settrace", "setprofile", "__traceback__", "exc_info",
    "_current_frames", "modules", "import_module", "reload", "getclosurevars",
    "getsource", "f_lineno", "extract_stack", "walk_stack", "format_stack", "print_stack",
}  # fmt: skip
# Modules whose use can see source text, frames or what refers to what...
_OBSERVING_MODULES = {"inspect", "dis", "traceback", "gc", "pdb", "bdb", "code", "linecache"}
# ... except these parts of `inspect`, which show parameters (never renamed) and types, or
# (`cleandoc`) only work on the string they are given.
_SAFE_INSPECT = {
    "signature", "Signature", "Parameter", "BoundArguments", "getfullargspec", "getargspec",
    "isclass", "isfunction", "ismethod", "isbuiltin", "isroutine", "ismodule",
    "iscoroutinefunction", "isgeneratorfunction", "isasyncgenfunction", "isawaitable",
    "isabstract", "getmro", "unwrap", "cleandoc",
}  # fmt: skip
# Names every module binds (the import system sets them), not the builtins of that name.
_MODULE_DUNDERS = {
    "__name__", "__doc__", "__file__", "__package__", "__loader__", "__spec__",
    "__builtins__", "__cached__", "__annotations__", "__path__", "__dict__",
}  # fmt: skip
_STDLIB = frozenset(sys.stdlib_module_names)
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


class Refused(Exception):
    """The relational check does not apply; the message says why (for the log)."""


class Unmatched(Refused):
    """The code differs beyond renaming: a hint's statement correspondence may match it."""


def unmatched(
    tree_a: ast.Module, tree_b: ast.Module, entry: str, context: PairContext | None = None
) -> bool:
    """Whether the relational check stops only at matching the two versions' code (all it
    checks before that holds), so a statement correspondence is worth asking for."""
    try:
        plan(tree_a, tree_b, entry, context)
    except Unmatched:
        return True
    except Exception:  # refused for another reason, or an error: no hint helps
        return False
    return False


# ----------------------------------------------------------------------------- the plan


@dataclass(frozen=True)
class Chain:
    """A global read that resolves to an origin: ``parts`` of the dotted path.

    ``name`` is the module-level name read (None for a function-local import), ``own``
    how many parts that name stands for (the rest are attribute reads on it).
    """

    name: str | None
    parts: tuple[str, ...]
    own: int
    external: bool  # outside the project: the same object in both environments
    stdlib: bool


@dataclass
class _Side:
    """What one version's child must confirm."""

    entry: tuple[str, int] = ("", 0)  # qualname and line of the entry's definition
    method: tuple[str, str] | None = None  # the entry's class and name, for a method
    functions: dict[str, tuple[str, int]] = field(default_factory=dict)  # name: (qual, line)
    # Those of ``functions`` bound to what `contextlib.contextmanager` makes of them.
    wrapped: set[str] = field(default_factory=set)
    relative: dict[str, tuple[str, int]] = field(default_factory=dict)
    constants: set[str] = field(default_factory=set)
    classes: dict[str, int] = field(default_factory=dict)  # name: line of its definition
    chains: list[Chain] = field(default_factory=list)
    builtins: set[str] = field(default_factory=set)
    excluded: set[tuple[str, str]] = field(default_factory=set)  # (class, member)

    def request(self) -> dict[str, object]:
        return {
            "excluded": sorted(self.excluded),
            "entry": self.entry,
            "method": self.method,
            "functions": sorted(self.functions.items()),
            "wrapped": sorted(self.wrapped),
            "relative": sorted(self.relative.items()),
            "constants": sorted(self.constants),
            "classes": sorted(self.classes.items()),
            "chains": [(c.name, c.parts, c.own, c.external, c.stdlib)
                       for c in self.chains],
            "builtins": sorted(self.builtins),
        }


@dataclass(frozen=True)
class Plan:
    """The static half of a proof: what the sandbox must confirm, and the assumptions."""

    before: dict[str, object]
    after: dict[str, object]
    relative_to: tuple[str, ...]
    assumptions: tuple[str, ...]
    reordered: bool = False  # `before` was compared with its statements reordered
    relative: bool = False  # the code differs: the same events, relative to callees


# ----------------------------------------------------------------------------- scopes


@dataclass
class _Scope:
    node: ast.AST
    parent: _Scope | None
    comprehension: bool = False
    params: set[str] = field(default_factory=set)
    fixed: set[str] = field(default_factory=set)  # locals whose names show (def names)
    bound: set[str] = field(default_factory=set)
    imports: dict[str, tuple[str, ...]] = field(default_factory=dict)  # local imports
    number: int = -1
    order: dict[str, int] = field(default_factory=dict)

    def binds(self, name: str) -> bool:
        return name in self.params or name in self.bound or name in self.imports

    def function_scope(self) -> _Scope:
        scope: _Scope = self
        while scope.comprehension and scope.parent is not None:
            scope = scope.parent
        return scope


def _params(args: ast.arguments) -> list[ast.arg]:
    return [p for p in (*args.posonlyargs, *args.args, args.vararg, *args.kwonlyargs,
                        args.kwarg) if p is not None]


def _outer_parts(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> list[ast.AST]:
    """What a definition evaluates in the enclosing scope: defaults, decorators, annotations."""
    a = node.args
    out: list[ast.AST] = [*a.defaults, *(d for d in a.kw_defaults if d is not None)]
    if not isinstance(node, ast.Lambda):
        out += node.decorator_list
        out += [p.annotation for p in _params(a) if p.annotation is not None]
        if node.returns is not None:
            out.append(node.returns)
    return out


class _Scopes:
    """Every scope inside the function under review, with the names each binds."""

    def __init__(self, fn: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        self.by_node: dict[int, _Scope] = {}
        self.dropped: set[int] = set()  # local import statements resolved away
        for part in _outer_parts(fn):
            if any(isinstance(n, (ast.Lambda, ast.NamedExpr, *_COMPREHENSIONS))
                   for n in ast.walk(part)):
                raise Refused("a lambda or comprehension in a default or decorator")
        root = self._new(fn, None)
        root.params = {p.arg for p in _params(fn.args)}
        body = _body(fn)
        self._local_imports(root, body)
        self._collect(root, body)
        for stmt in body:
            self._bodies(root, stmt)

    def _new(self, node: ast.AST, parent: _Scope | None, comprehension: bool = False) -> _Scope:
        scope = _Scope(node, parent, comprehension)
        self.by_node[id(node)] = scope
        return scope

    def _local_imports(self, scope: _Scope, body: list[ast.stmt]) -> None:
        """``import m`` / ``from m import x`` at the top of a block of the function itself,
        bound nowhere else in it and read only after it in that block."""
        for block in _blocks(body):
            i = 0
            while i < len(block) and isinstance(block[i], ast.Import | ast.ImportFrom):
                stmt = block[i]
                assert isinstance(stmt, ast.Import | ast.ImportFrom)
                if isinstance(stmt, ast.Import) and any("." in a.name for a in stmt.names):
                    raise Refused(f"a local import of a submodule (line {stmt.lineno})")
                for name, origin in _import_origins(stmt, None):
                    if origin[0] not in _STDLIB:
                        raise Refused(f"a local import of {'.'.join(origin)} (line {stmt.lineno})")
                    if name in scope.imports:
                        raise Refused(f"`{name}` is imported twice in the function")
                    uses = [n for n in _walk(body) if isinstance(n, ast.Name) and n.id == name]
                    after = {id(n) for s in block[i + 1:] for n in ast.walk(s)}
                    if any(id(n) not in after for n in uses):
                        raise Refused(f"the local import of `{name}` does not precede its uses")
                    scope.imports[name] = origin
                self.dropped.add(id(stmt))
                i += 1

    def _collect(self, scope: _Scope, nodes: list[ast.stmt] | list[ast.AST]) -> None:
        """The names ``nodes`` bind in ``scope`` (not inside nested scopes)."""
        stack: list[ast.AST] = list(nodes)
        while stack:
            n = stack.pop()
            if id(n) in self.dropped:
                continue
            if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef):
                scope.fixed.add(n.name)
                scope.bound.add(n.name)
                stack += _outer_parts(n)
                continue
            if isinstance(n, ast.Lambda):
                stack += _outer_parts(n)
                continue
            if isinstance(n, _COMPREHENSIONS):
                stack.append(n.generators[0].iter)
                # Walrus targets inside bind here, in the enclosing function's scope.
                for sub in ast.walk(n):
                    if isinstance(sub, ast.NamedExpr) and isinstance(sub.target, ast.Name):
                        scope.function_scope().bound.add(sub.target.id)
                continue
            if isinstance(n, ast.ClassDef):
                raise Refused(f"a class defined in the function (line {n.lineno})")
            if isinstance(n, ast.Global | ast.Nonlocal):
                raise Refused(f"`{type(n).__name__.lower()}` (line {n.lineno})")
            if isinstance(n, ast.Match):
                raise Refused(f"`match` (line {n.lineno})")
            if isinstance(n, ast.Import | ast.ImportFrom):
                raise Refused(f"an import that is not at the top of a block (line {n.lineno})")
            if isinstance(n, ast.Delete) and any(isinstance(t, ast.Name) for t in n.targets):
                raise Refused(f"`del` of a local (line {n.lineno})")
            if isinstance(n, ast.NamedExpr) and isinstance(n.target, ast.Name):
                scope.function_scope().bound.add(n.target.id)
                stack.append(n.value)
                continue
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store | ast.Del):
                scope.bound.add(n.id)
            elif isinstance(n, ast.ExceptHandler) and n.name:
                scope.bound.add(n.name)
            stack.extend(ast.iter_child_nodes(n))
        if scope.imports.keys() & (scope.bound | scope.params):
            raise Refused("a locally imported name is also bound otherwise")

    def _bodies(self, scope: _Scope, node: ast.AST) -> None:
        """Create the nested scopes under ``node`` (which belongs to ``scope``)."""
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            for part in _outer_parts(node):
                self._bodies(scope, part)
            inner = self._new(node, scope)
            inner.params = {p.arg for p in _params(node.args)}
            body: list[ast.AST] = [node.body] if isinstance(node, ast.Lambda) else list(node.body)
            self._collect(inner, body)
            for stmt in body:
                self._bodies(inner, stmt)
            return
        if isinstance(node, _COMPREHENSIONS):
            self._bodies(scope, node.generators[0].iter)
            inner = self._new(node, scope, comprehension=True)
            for gen in node.generators:
                inner.bound |= {n.id for n in ast.walk(gen.target) if isinstance(n, ast.Name)}
            rest: list[ast.AST] = [g.target for g in node.generators]
            rest += [g.iter for g in node.generators[1:]]
            rest += [c for g in node.generators for c in g.ifs]
            rest += [node.key, node.value] if isinstance(node, ast.DictComp) else [node.elt]
            for sub in rest:
                self._collect(inner, [sub])
            for sub in rest:
                self._bodies(inner, sub)
            return
        for child in ast.iter_child_nodes(node):
            self._bodies(scope, child)


def _body(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.stmt]:
    """The body without its docstring."""
    body = fn.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) and (
        isinstance(body[0].value.value, str)
    ):
        body = body[1:]
    return body


def _blocks(body: list[ast.stmt]) -> Iterator[list[ast.stmt]]:
    """Every statement list of the function itself (not of nested definitions)."""
    stack = [body]
    while stack:
        block = stack.pop()
        yield block
        for stmt in block:
            if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                continue
            for name in ("body", "orelse", "finalbody"):
                sub = getattr(stmt, name, None)
                if isinstance(sub, list) and sub and isinstance(sub[0], ast.stmt):
                    stack.append(sub)
            if isinstance(stmt, ast.Try | ast.TryStar):
                stack.extend(h.body for h in stmt.handlers)


def _walk(nodes: list[ast.stmt]) -> Iterator[ast.AST]:
    for stmt in nodes:
        yield from ast.walk(stmt)


def _import_origins(
    stmt: ast.Import | ast.ImportFrom, package: str | None
) -> list[tuple[str, tuple[str, ...]]]:
    """(name bound, dotted origin) for each alias; relative imports need ``package``."""
    out: list[tuple[str, tuple[str, ...]]] = []
    if isinstance(stmt, ast.Import):
        for a in stmt.names:
            if a.asname:
                out.append((a.asname, tuple(a.name.split("."))))
            else:
                top = a.name.split(".")[0]
                out.append((top, (top,)))
        return out
    if stmt.level:
        if package is None:
            raise Refused(f"a relative import outside a known package (line {stmt.lineno})")
        base = package.split(".")
        if stmt.level - 1 >= len(base):
            raise Refused(f"a relative import beyond the top package (line {stmt.lineno})")
        base = base[: len(base) - (stmt.level - 1)]
        module = tuple(base) + tuple(stmt.module.split(".") if stmt.module else ())
    else:
        module = tuple((stmt.module or "").split("."))
    for a in stmt.names:
        if a.name == "*":
            raise Refused("a star import")
        out.append((a.asname or a.name, (*module, a.name)))
    return out


# ----------------------------------------------------------------------------- the canonical text


@dataclass
class _Reads:
    """The global names one version's code reads, by how they must be confirmed."""

    same: set[str] = field(default_factory=set)  # must be bound the same in both modules
    chains: list[tuple[str | None, tuple[str, ...], int]] = field(default_factory=list)
    builtins: set[str] = field(default_factory=set)


class _Module:
    """One version's module-level bindings, as the relational check reads them."""

    def __init__(self, tree: ast.Module, package: Package | None) -> None:
        self.tree = tree
        self.bindings = _module_level(tree)
        if any(isinstance(n, ast.ImportFrom) and any(a.name == "*" for a in n.names)
               for n in ast.walk(tree)):
            raise Refused("a star import in the module")
        self.package = package
        # What is known to be a module: what `import a.b.c` imports anywhere in the module
        # (`a`, `a.b`, `a.b.c`), and `os.path`. (`from m import x` may import any object.)
        self.modules: set[tuple[str, ...]] = {("os", "path")} | {
            tuple(parts[:i]) for n in ast.walk(tree) if isinstance(n, ast.Import)
            for a in n.names for parts in [a.name.split(".")]
            for i in range(1, len(parts) + 1)}
        pkg: str | None = None
        if package is not None:
            pkg = package.module if package.path.endswith("__init__.py") else (
                package.module.rpartition(".")[0])
        self.imports: dict[str, tuple[str, ...]] = {}
        for stmt in tree.body:
            if isinstance(stmt, ast.Import | ast.ImportFrom):
                try:
                    origins = _import_origins(stmt, pkg or None)
                except Refused:
                    continue
                for name, origin in origins:
                    if self.bindings[name] == 1:
                        self.imports[name] = origin
        # Names bound only in `if TYPE_CHECKING:` blocks: unbound when the code runs.
        checking = Counter(name for stmt in tree.body if isinstance(stmt, ast.If)
                           and "TYPE_CHECKING" in {w.id if isinstance(w, ast.Name) else
                                                   w.attr if isinstance(w, ast.Attribute)
                                                   else "" for w in ast.walk(stmt.test)}
                           for name in _module_level(ast.Module(body=stmt.body,
                                                                type_ignores=[])).elements())
        self.typing_only = {name for name, n in checking.items() if self.bindings[name] == n}
        self.defs: dict[str, ast.stmt] = {}
        stubs = overload_stubs(tree)
        for stmt in tree.body:
            if id(stmt) in stubs:
                continue
            for name in _defined(stmt):
                if self.bindings[name] == 1:
                    self.defs[name] = stmt

    def internal(self, origin: tuple[str, ...]) -> bool:
        if self.package is None:
            return False
        top = origin[0]
        if top == self.package.module.split(".")[0]:
            return True
        root = self.package.root
        paths = {posixpath.relpath(p, root or ".") for p, _ in self.package.files}
        return f"{top}.py" in paths or any(p.startswith(top + "/") for p in paths)


def _unannotated(args: ast.arguments) -> ast.arguments:
    """A copy of ``args`` without annotations (defaults kept)."""
    def bare(p: ast.arg) -> ast.arg:
        return ast.arg(arg=p.arg, annotation=None, type_comment=None)

    return ast.arguments(
        posonlyargs=[bare(p) for p in args.posonlyargs], args=[bare(p) for p in args.args],
        vararg=bare(args.vararg) if args.vararg else None,
        kwonlyargs=[bare(p) for p in args.kwonlyargs], kw_defaults=args.kw_defaults,
        kwarg=bare(args.kwarg) if args.kwarg else None, defaults=args.defaults)


def _without_body(node: ast.ClassDef, method: str, tree: ast.Module,
                  bare: bool = False) -> ast.ClassDef:
    """The class with the body of ``method`` left out (with ``bare``, its annotations
    too); it must be bound once in the class.

    ``@typing.overload`` stubs before it (``pymodule.overload_stubs``: typing's decorator
    alone, followed by a real definition of the name) are bindings the real definition
    replaces; they stay in the class's text, compared like the rest of it. A stub after
    the real definition is what the name holds: it counts as a second binding.
    """
    stubs = overload_stubs(tree, node.body)
    defs = [s for s in node.body if isinstance(s, ast.FunctionDef | ast.AsyncFunctionDef)
            and s.name == method and id(s) not in stubs]
    binds = sum(method in _node_bindings(n) or (
        isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) and n.name == method
        and id(n) not in stubs)
        for n in _class_level(node))
    if len(defs) != 1 or binds != 1:
        raise Refused(f"`{method}` is bound more than once in its class")
    if any(isinstance(n, ast.ClassDef) for s in node.body for n in ast.walk(s)):
        raise Refused("a class nested in a class")
    fn = defs[0]
    args = _unannotated(fn.args) if bare else fn.args
    stub = type(fn)(name=fn.name, args=args, body=[ast.Pass()], decorator_list=fn.decorator_list,
                    returns=None if bare else fn.returns, type_comment=None)
    body = [stub if s is fn else s for s in node.body]
    return ast.ClassDef(name=node.name, bases=node.bases, keywords=node.keywords, body=body,
                        decorator_list=node.decorator_list)


def _observing_origin(parts: tuple[str, ...]) -> bool:
    """Whether an imported object (or module) can see names, frames or sources."""
    if parts[:2] == ("sys", "exception"):
        return True  # the exception being handled, whose message may name a local
    if parts[0] != "inspect":
        return parts[0] in _OBSERVING_MODULES
    return len(parts) < 2 or parts[1] not in _SAFE_INSPECT


def _observes(node: ast.AST, allowed: frozenset[str] = frozenset()) -> str | None:
    """A name or attribute in ``node`` through which code can see names, frames or sources
    (a callee can read its caller's local variables by name), or None."""
    safe = {id(n.value) for n in ast.walk(node)
            if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name)
            and n.value.id == "inspect" and n.attr in _SAFE_INSPECT}
    for n in ast.walk(node):
        if isinstance(n, ast.Name) and n.id not in allowed and id(n) not in safe and (
            n.id in _OBSERVING_NAMES or n.id in _OBSERVING_ATTRS or n.id in _OBSERVING_MODULES
        ):
            return n.id
        by_name = _observing_call(n)
        if by_name is not None:
            return by_name
        if isinstance(n, ast.Attribute) and n.attr in _OBSERVING_ATTRS:
            return n.attr
        if isinstance(n, ast.alias) and n.name.split(".")[0] in _OBSERVING_MODULES and not (
            n.name == "inspect" and n.asname is None
        ):
            return n.name
        if isinstance(n, ast.ImportFrom) and n.module in _OBSERVING_MODULES and not (
            n.module == "inspect" and all(a.name in _SAFE_INSPECT for a in n.names)
        ):
            return n.module
    return None


def _observing_call(node: ast.AST) -> str | None:
    """What ``node`` may observe names, frames or sources by, if it is a lookup by name
    (``getattr(getattr(f, "__co" + "de__"), "co_varnames")``: a name not written out may
    be any) or a format string that is not written out (``"{0.__code__}"``), or None."""
    if not isinstance(node, ast.Call):
        return None
    for key in pylookups.lookup_keys(node) or ():
        if not (isinstance(key, ast.Constant) and isinstance(key.value, str)):
            return "an attribute looked up by a computed name"
        if key.value in _OBSERVING_ATTRS:
            return key.value
    if isinstance(node.func, ast.Attribute) and node.func.attr in ("format", "format_map") and (
            not _written_out(node.func.value)):
        return "a format string that may read attributes by name"
    return None


def _written_out(text: ast.expr) -> bool:
    """Whether a format string is written out (or is a message written out that a
    translation function such as gettext's ``_("...")`` is given) and names no attribute
    that sees names, frames or sources (``"{0.__code__.co_varnames}"``)."""
    if isinstance(text, ast.Call) and isinstance(text.func, ast.Name) and text.args and all(
            isinstance(a, ast.Constant) for a in text.args) and not text.keywords:
        return all(_written_out(a) for a in text.args
                   if isinstance(a, ast.Constant) and isinstance(a.value, str))
    return isinstance(text, ast.Constant) and isinstance(text.value, str) and not any(
        a in text.value for a in _OBSERVING_ATTRS)


def _class_level(node: ast.ClassDef) -> Iterator[ast.AST]:
    """The nodes of a class that run in its own namespace: not inside methods, lambdas or
    comprehensions (whose first iterable does)."""
    stack: list[ast.AST] = [*node.body, *node.decorator_list, *node.bases, *node.keywords]
    while stack:
        n = stack.pop()
        yield n
        if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            stack += _outer_parts(n)
        elif isinstance(n, _COMPREHENSIONS):
            stack.append(n.generators[0].iter)
        elif isinstance(n, ast.ClassDef):
            raise Refused("a class nested in a class")
        else:
            stack.extend(ast.iter_child_nodes(n))


def _module_level(tree: ast.Module) -> Counter[str]:
    """How often each module-level name is bound: by module-level code in any binding form
    (``pymodule._bindings``; an ``@overload`` stub is not a binding of the name the next
    definition rebinds), and by a ``global`` declaration in any function. A local of a
    function or an attribute of a class of the same name is not a binding of it."""
    count: Counter[str] = Counter()
    stubs = overload_stubs(tree)  # replaced by the definition that follows them
    stack: list[ast.AST] = list(tree.body)
    while stack:
        n = stack.pop()
        if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Lambda):
            if not isinstance(n, ast.Lambda) and id(n) not in stubs:
                count[n.name] += 1
            # Only what runs at the definition is module-level code; walrus targets in
            # there and `global` declarations anywhere inside bind module names.
            if isinstance(n, ast.ClassDef):
                stack += [*n.decorator_list, *n.bases, *n.keywords]
            else:
                stack += _outer_parts(n)
            for sub in ast.walk(n):
                if isinstance(sub, ast.Global):
                    count.update(sub.names)
            continue
        if isinstance(n, _COMPREHENSIONS):
            stack.append(n.generators[0].iter)
            count.update(sub.target.id for sub in ast.walk(n)
                         if isinstance(sub, ast.NamedExpr) and isinstance(sub.target, ast.Name))
            continue
        count.update(_node_bindings(n))
        stack.extend(ast.iter_child_nodes(n))
    return count


def _node_bindings(n: ast.AST) -> list[str]:
    """The names one node binds, in the forms ``pymodule._bindings`` knows."""
    if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store | ast.Del):
        return [n.id]
    if isinstance(n, ast.alias):
        return [(n.asname or n.name).split(".")[0]]
    if isinstance(n, ast.ExceptHandler | ast.MatchAs | ast.MatchStar) and n.name:
        return [n.name]
    if isinstance(n, ast.MatchMapping) and n.rest:
        return [n.rest]
    if isinstance(n, ast.Global):
        return list(n.names)
    return []


def _defined(stmt: ast.stmt) -> list[str]:
    if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return [stmt.name]
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(
        stmt.targets[0], ast.Name
    ):
        return [stmt.targets[0].id]
    return []


class _Canon:
    """The canonical text of a function: structure, with names by what they denote."""

    def __init__(
        self, fn: ast.FunctionDef | ast.AsyncFunctionDef, module: _Module, method: bool = False,
        bare: bool = False,
    ) -> None:
        self.module = module
        self.method = method
        self.scopes = _Scopes(fn)
        self.reads = _Reads()
        self.count = 0
        self.out: list[str] = []
        root = self.scopes.by_node[id(fn)]
        # The definition: decorators and defaults are module-level code. Annotations only
        # show through introspection, so they count only where a decorator may read them
        # (`bare`: its decorators are known not to, and no annotation is evaluated).
        self.out.append(type(fn).__name__ + ":" + fn.name)
        a = fn.args
        outer: list[object] = [*fn.decorator_list, *a.defaults, *a.kw_defaults]
        if fn.decorator_list and not bare:
            outer = list(_outer_parts(fn))
        if method:
            outer = []  # class-level code: compared with the rest of the class
        for part in outer:
            self._dump(part, None)
        self._enter(root)
        self.out.append(_shape(a))
        for stmt in _body(fn):
            self._dump(stmt, root)

    def text(self) -> str:
        return "\x00".join(self.out)

    def slots(self) -> dict[tuple[int, int], str]:
        """Each renameable local by (scope, order of first use): its name."""
        return {(scope.number, index): name
                for scope in self.scopes.by_node.values()
                for name, index in scope.order.items()}

    def _enter(self, scope: _Scope) -> None:
        scope.number = self.count
        self.count += 1

    def _name(self, name: str, scope: _Scope | None, store: bool) -> str:
        """The token for ``name`` read or bound in ``scope`` (None: module level)."""
        if self.method and name in ("super", "__class__") and not store:
            pass  # the class, through the `__class__` cell: the same apart from this method
        elif name in _OBSERVING_NAMES or name in _OBSERVING_ATTRS:
            raise Refused(f"`{name}` can observe names")
        if self.method and name.startswith("__") and not name.endswith("__"):
            raise Refused(f"`{name}` is mangled in a method")
        s = scope
        while s is not None:
            if s.binds(name):
                if name in s.params:
                    return f"P{s.number}:{name}"
                if name in s.imports:
                    self.reads.chains.append((None, s.imports[name], len(s.imports[name])))
                    return "G:" + ".".join(s.imports[name])
                if name in s.fixed:
                    return f"N{s.number}:{name}"
                index = s.order.setdefault(name, len(s.order))
                return f"L{s.number}:{index}"
            s = s.parent
        if store:
            raise Refused(f"a store to the global `{name}`")
        if self.module.bindings[name] == 0:
            if name in _MODULE_DUNDERS:
                raise Refused(f"`{name}` is a name every module binds")
            if not hasattr(builtins, name):
                raise Refused(f"`{name}` is bound nowhere")
            self.reads.builtins.add(name)
            return "B:" + name
        if name in self.module.imports:
            origin = self.module.imports[name]
            self.reads.chains.append((name, origin, len(origin)))
            return "G:" + ".".join(origin)
        self.reads.same.add(name)
        return "M:" + name

    def _chain(self, node: ast.Attribute, scope: _Scope | None) -> str | None:
        """The token of a load ``a.b.c`` whose root resolves to an origin, else None."""
        attrs: list[str] = []
        n: ast.expr = node
        while isinstance(n, ast.Attribute):
            attrs.append(n.attr)
            n = n.value
        if not isinstance(n, ast.Name):
            return None
        before = len(self.reads.chains)
        token = self._name(n.id, scope, store=False)
        if not token.startswith("G:"):
            del self.reads.chains[before:]
            return None
        name, origin, own = self.reads.chains.pop()
        full = (*origin, *reversed(attrs))
        self.reads.chains.append((name, full, own))
        return "G:" + ".".join(full)

    def _dump(self, node: object, scope: _Scope | None) -> None:
        out = self.out
        if isinstance(node, list):
            out.append("[")
            for item in node:
                self._dump(item, scope)
            out.append("]")
            return
        if not isinstance(node, ast.AST):
            out.append(pysource._value_text(node))
            return
        if id(node) in self.scopes.dropped:
            return
        if isinstance(node, ast.Name):
            out.append(self._name(node.id, scope, not isinstance(node.ctx, ast.Load)))
            out.append(type(node.ctx).__name__)
            return
        by_name = _observing_call(node)
        if by_name is not None:
            raise Refused(f"{by_name} can observe names or frames")
        if isinstance(node, ast.Attribute):
            if node.attr in _OBSERVING_ATTRS:
                raise Refused(f"`.{node.attr}` can observe names or frames")
            if isinstance(node.ctx, ast.Load):
                token = self._chain(node, scope)
                if token is not None:
                    out += [token, "Load"]
                    return
            elif self._resolves_to_origin(node, scope):
                raise Refused("a store to an attribute of a module")
        if isinstance(node, ast.ExceptHandler) and node.name and scope is not None:
            out.append("except:" + self._name(node.name, scope, store=True))
            self._dump(node.type, scope)
            self._dump(node.body, scope)
            return
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            for part in _outer_parts(node):
                self._dump(part, scope)
            inner = self.scopes.by_node[id(node)]
            if not isinstance(node, ast.Lambda):
                out.append(type(node).__name__ + ":" + self._name(node.name, scope, True))
            self._enter(inner)
            out.append(_shape(node.args))
            self._dump(node.body, inner)
            return
        if isinstance(node, _COMPREHENSIONS):
            out.append(type(node).__name__)
            self._dump(node.generators[0].iter, scope)
            inner = self.scopes.by_node[id(node)]
            self._enter(inner)
            for i, gen in enumerate(node.generators):
                self._dump(gen.target, inner)
                if i:
                    self._dump(gen.iter, inner)
                self._dump(gen.ifs, inner)
                out.append(f"async:{gen.is_async}")
            if isinstance(node, ast.DictComp):
                self._dump(node.key, inner)
                self._dump(node.value, inner)
            else:
                self._dump(node.elt, inner)
            return
        if isinstance(node, ast.arguments):
            out.append(_shape(node))
            return
        if isinstance(node, ast.AnnAssign) and scope is not None and isinstance(
            node.target, ast.Name
        ) and not _shaping(node.annotation):
            # A local's annotation is never evaluated: `x: T = v` compiles as `x = v`
            # (but what makes a generator or binds a local shapes the function all the same).
            if node.value is not None:
                self._dump(ast.Assign(targets=[node.target], value=node.value), scope)
            else:
                out.append("Declare:" + self._name(node.target.id, scope, store=True))
            return
        out.append(type(node).__name__ + "(")
        for name in node._fields:
            if name == "type_comment":
                continue
            out.append(name + "=")
            self._dump(getattr(node, name, None), scope)
        out.append(")")

    def _resolves_to_origin(self, node: ast.Attribute, scope: _Scope | None) -> bool:
        n: ast.expr = node.value
        while isinstance(n, ast.Attribute):
            n = n.value
        if not isinstance(n, ast.Name):
            return False
        s = scope
        while s is not None:
            if s.binds(n.id):
                return n.id in s.imports
            s = s.parent
        return n.id in self.module.imports


def _nested_with(
    fn: ast.FunctionDef | ast.AsyncFunctionDef,
) -> ast.FunctionDef | ast.AsyncFunctionDef:
    """``fn`` with every ``with a, b:`` written ``with a: with b:`` (a copy, if any).

    The language reference defines the form with several items as the nested statements:
    ``b`` is evaluated after ``a.__enter__``, inside it, and the exits run in reverse.
    """
    if not any(isinstance(n, ast.With | ast.AsyncWith) and len(n.items) > 1
               for n in ast.walk(fn)):
        return fn
    copied = copy.deepcopy(fn)
    split = True
    while split:  # `ast.walk` lists a node's children before it yields the node
        split = False
        for n in ast.walk(copied):
            if isinstance(n, ast.With | ast.AsyncWith) and len(n.items) > 1:
                inner = type(n)(items=n.items[1:], body=n.body, type_comment=None)
                ast.copy_location(inner, n.items[1].context_expr)
                n.items, n.body = n.items[:1], [inner]
                split = True
    return copied


def _plain_annotated(
    fn: ast.FunctionDef | ast.AsyncFunctionDef,
) -> ast.FunctionDef | ast.AsyncFunctionDef:
    """``fn`` with every ``x: T = v`` of a function scope written ``x = v`` (a copy, if any).

    In a function, the annotation of an assignment is neither evaluated nor kept, whatever
    the target (a local, ``self.x``, ``d[k]``), and an annotated name is local as an
    assigned one is; a bare ``p.a: T`` of a parameter ``p`` of ``fn`` that nothing deletes
    only loads ``p``, which cannot fail: it is left out. A class's body evaluates them:
    nested classes are left as written.
    """
    def blocks(node: ast.AST) -> Iterator[list[ast.stmt]]:
        for name in ("body", "orelse", "finalbody"):
            value = getattr(node, name, None)
            if isinstance(value, list) and value and isinstance(value[0], ast.stmt):
                yield value
        for part in (*getattr(node, "handlers", ()), *getattr(node, "cases", ())):
            yield part.body

    # A bare `p.a: T` of a parameter `p` of `fn` nothing deletes only loads `p` (`except
    # E as p` deletes `p` after the handler).
    deleted = {n.id for n in ast.walk(fn) if isinstance(n, ast.Name) and isinstance(
        n.ctx, ast.Del)} | {n.name for n in ast.walk(fn)
                            if isinstance(n, ast.ExceptHandler) and n.name}
    kept = {p.arg for p in _params(fn.args)} - deleted

    def plain(stmt: ast.stmt, own: bool) -> bool:
        return isinstance(stmt, ast.AnnAssign) and not _shaping(stmt.annotation) and (
            stmt.value is not None or (
                own and isinstance(stmt.target, ast.Attribute) and isinstance(
                    stmt.target.value, ast.Name) and stmt.target.value.id in kept))

    def annotated(node: ast.AST, own: bool) -> bool:
        return any(plain(s, own) or (not isinstance(s, ast.ClassDef) and annotated(
            s, own and not isinstance(s, ast.FunctionDef | ast.AsyncFunctionDef)))
            for block in blocks(node) for s in block)

    if not annotated(fn, True):
        return fn
    copied = copy.deepcopy(fn)
    todo: list[tuple[ast.AST, bool]] = [(copied, True)]
    while todo:
        node, own = todo.pop()
        for block in blocks(node):
            out: list[ast.stmt] = []
            for stmt in block:
                if isinstance(stmt, ast.AnnAssign) and stmt.value is not None and not (
                        _shaping(stmt.annotation)):
                    out.append(ast.copy_location(ast.Assign(
                        targets=[stmt.target], value=stmt.value, type_comment=None), stmt))
                elif plain(stmt, own):
                    continue
                else:
                    out.append(stmt)
                    if not isinstance(stmt, ast.ClassDef):
                        todo.append((stmt, own and not isinstance(
                            stmt, ast.FunctionDef | ast.AsyncFunctionDef)))
            block[:] = out or [ast.copy_location(ast.Pass(), block[0])]
    return copied


def _yield_from_loops(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> ast.FunctionDef | None:
    """A copy of ``fn`` with each ``for x in it: yield x`` whose ``x`` is dead after the
    loop written ``yield from it``; None if there is none (``x`` is read by no nested
    scope, which could run later, and declared neither ``global`` nor ``nonlocal``).

    Both call ``iter(it)`` once and its ``__next__`` (a generator's ``send(None)``) until
    it stops, yielding each item; they differ only in what ``send``, ``throw`` and
    ``close`` on the outer generator reach, and in the last item left in ``x``. So the
    loop must be followed by a ``return`` of no value (or a constant) or end the
    function's body, outside any ``try`` with a ``finally``, and ``x`` must stay a local
    (bound elsewhere in the function) or be named nowhere else."""
    if not isinstance(fn, ast.FunctionDef) or not pygen.is_generator(fn):
        return None
    copied = copy.deepcopy(fn)
    bound = Counter(n.id for n in ast.walk(copied)
                    if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load))
    named = Counter(n.id for n in ast.walk(copied) if isinstance(n, ast.Name))
    bound.update(a.arg for a in ast.walk(copied.args) if isinstance(a, ast.arg))
    shared = _shared(copied)
    changed = False

    def rewrite(body: list[ast.stmt], top: bool, in_finally: bool) -> None:
        nonlocal changed
        for i, stmt in enumerate(body):
            after = body[i + 1] if i + 1 < len(body) else None
            dead = (after is None and top) or (
                isinstance(after, ast.Return)
                and (after.value is None or isinstance(after.value, ast.Constant)))
            if isinstance(stmt, ast.For) and not in_finally and dead and not stmt.orelse \
                    and isinstance(stmt.target, ast.Name) and len(stmt.body) == 1:
                x = stmt.target.id
                only = stmt.body[0]
                yields = isinstance(only, ast.Expr) and isinstance(only.value, ast.Yield) \
                    and isinstance(only.value.value, ast.Name) and only.value.value.id == x
                if yields and x not in shared and (bound[x] > 1 or named[x] == 2):
                    body[i] = ast.copy_location(
                        ast.Expr(ast.copy_location(ast.YieldFrom(stmt.iter), stmt)), stmt)
                    changed = True
                    continue
            guarded = in_finally or (isinstance(stmt, ast.Try | ast.TryStar)
                                     and bool(stmt.finalbody))
            for sub in _nested_blocks(stmt):
                rewrite(sub, False, guarded)

    rewrite(copied.body, True, False)
    return copied if changed else None


def _extend_loops(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> ast.FunctionDef | None:
    """A copy of ``fn`` with each ``for x in it: out.append(x)`` written ``out.extend(it)``
    where that is the same; None if there is none.

    ``list.extend`` of an iterable that is not a list or tuple calls ``iter(it)`` once and
    its ``__next__`` until it stops, appending each item as it comes (the items before an
    exception stay). So the two agree when ``out`` is a list no other code can see while
    the loop runs and ``x`` is dead after it:

    - ``out`` is a local bound once, by ``out = [...]`` in a statement that runs before the
      loop (a statement before it in the same body or an enclosing one), named by no
      nested scope, and read nowhere before the loop ends (after, at a later line, outside
      any loop around it), so nothing holds the list yet: ``it`` cannot be ``out`` itself;
    - ``x`` is named only by the loop (``for x`` and ``out.append(x)``);
    - the loop has no ``else``, and ``it`` does not name ``out``.

    What ``extend`` does besides: it asks ``it`` for its length (``__len__`` or
    ``__length_hint__``) first, which the verdict lists as an assumption
    (``EXTEND_PROBE``).
    """
    if isinstance(fn, ast.AsyncFunctionDef):
        return None
    copied = copy.deepcopy(fn)
    named = Counter(n.id for n in ast.walk(copied) if isinstance(n, ast.Name))
    bound = Counter(name for n in ast.walk(copied) for name in _binds(n))
    shared = _shared(copied)
    loads: dict[str, list[ast.Name]] = {}
    for n in ast.walk(copied):
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load):
            loads.setdefault(n.id, []).append(n)
    changed = False

    def fresh_list(stmt: ast.stmt) -> str | None:
        """The name ``stmt`` binds to a new list (``out = []``), if that is all it does."""
        if (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1
                and isinstance(stmt.targets[0], ast.Name) and isinstance(stmt.value, ast.List)
                and not any(isinstance(e, ast.Starred) for e in stmt.value.elts)):
            return stmt.targets[0].id
        return None

    def rewrite(body: list[ast.stmt], ready: frozenset[str], loops: tuple[ast.stmt, ...]
                ) -> None:
        nonlocal changed
        for i, stmt in enumerate(body):
            if isinstance(stmt, ast.For) and not stmt.orelse and isinstance(
                    stmt.target, ast.Name) and len(stmt.body) == 1:
                x, only = stmt.target.id, stmt.body[0]
                call = only.value if isinstance(only, ast.Expr) else None
                receiver = (call.func.value if isinstance(call, ast.Call)
                            and isinstance(call.func, ast.Attribute)
                            and call.func.attr == "append" and not call.keywords
                            and len(call.args) == 1 and isinstance(call.args[0], ast.Name)
                            and call.args[0].id == x else None)
                out = receiver.id if isinstance(receiver, ast.Name) else None
                if out is not None and out != x and out in ready and out not in shared \
                        and bound[out] == 1 and x not in shared and named[x] == 2 \
                        and x not in {n.id for n in ast.walk(stmt.iter)
                                      if isinstance(n, ast.Name)} \
                        and out not in {n.id for n in ast.walk(stmt.iter)
                                        if isinstance(n, ast.Name)} \
                        and _unseen_until(loads.get(out, []), receiver, stmt, loops):
                    extend = ast.Attribute(value=ast.Name(out, ast.Load()), attr="extend",
                                           ctx=ast.Load())
                    body[i] = ast.copy_location(ast.Expr(ast.copy_location(ast.Call(
                        ast.copy_location(extend, stmt), [stmt.iter], []), stmt)), stmt)
                    changed = True
                    continue
            inner = (*loops, stmt) if isinstance(stmt, ast.For | ast.While) else loops
            for sub in _nested_blocks(stmt):
                rewrite(sub, ready, inner)
            made = fresh_list(stmt)
            if made is not None:
                ready = ready | {made}

    rewrite(copied.body, frozenset(), ())
    return copied if changed else None


def _shared(fn: ast.FunctionDef) -> set[str]:
    """The names a nested scope of ``fn`` mentions (a closure may run later) and those it
    declares ``global`` or ``nonlocal`` (not locals)."""
    shared = {n.id for inner in ast.walk(fn) if inner is not fn and isinstance(
        inner, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | ast.ClassDef
        | ast.GeneratorExp | ast.ListComp | ast.SetComp | ast.DictComp)
        for n in ast.walk(inner) if isinstance(n, ast.Name)}
    return shared | {g for n in ast.walk(fn) if isinstance(n, ast.Global | ast.Nonlocal)
                     for g in n.names}


def _binds(node: ast.AST) -> list[str]:
    """The names ``node`` binds by itself, in any form (``except E as e``, an import, a
    definition, a pattern capture, a parameter, a store or ``del``)."""
    if isinstance(node, ast.Name):
        return [] if isinstance(node.ctx, ast.Load) else [node.id]
    return walker.bound_by(node)


def _nested_blocks(stmt: ast.stmt) -> list[list[ast.stmt]]:
    """The statement lists nested directly in ``stmt``: its body, ``else``, ``finally``,
    handlers' bodies and ``match`` cases' bodies."""
    out = [sub for name in ("body", "orelse", "finalbody")
           if isinstance(sub := getattr(stmt, name, None), list) and sub
           and isinstance(sub[0], ast.stmt)]
    out += [handler.body for handler in getattr(stmt, "handlers", [])]
    if isinstance(stmt, ast.Match):
        out += [case.body for case in stmt.cases]
    return out


def _loops(fn: ast.FunctionDef | ast.AsyncFunctionDef
           ) -> tuple[ast.FunctionDef | None, bool, bool]:
    """``fn`` with its loops written as what they are the same as (``_yield_from_loops``,
    then ``_extend_loops``), or None if none was; and whether each rewrite applied."""
    yields = _yield_from_loops(fn)
    extends = _extend_loops(yields or fn)
    return extends or yields, yields is not None, extends is not None


def _unseen_until(reads: list[ast.Name], own: ast.expr | None, loop: ast.For,
                  around: tuple[ast.stmt, ...]) -> bool:
    """Whether every read of a name but ``own`` comes after ``loop`` ends, and none lies
    in a loop around it (which would run it before the loop's next run)."""
    end = loop.end_lineno or loop.lineno
    for read in reads:
        if read is own:
            continue
        if read.lineno <= end:
            return False
        for outer in around:
            if outer.lineno <= read.lineno <= (outer.end_lineno or outer.lineno):
                return False
    return True


# What the verdict says when a loop of appends was compared as `extend`.
EXTEND_PROBE = ("`list.extend(it)` asks `it` for its length (`__len__` or `__length_hint__`) "
                "before iterating, where a loop of appends does not: that has no effect and "
                "raises nothing")


def _shape(args: ast.arguments) -> str:
    """The parameters' names and kinds, and which have defaults (dumped where evaluated)."""
    names = [[p.arg for p in group] for group in (args.posonlyargs, args.args, args.kwonlyargs)]
    star = [p.arg if p is not None else "" for p in (args.vararg, args.kwarg)]
    kw = [d is not None for d in args.kw_defaults]
    return f"params:{names}:{star}:{len(args.defaults)}:{kw}"


def _shaping(annotation: ast.expr) -> bool:
    """Whether an annotation that is never evaluated still shapes its function as Python
    compiles it: a ``yield`` or ``await`` (a generator, a coroutine), a ``:=`` (a local)."""
    return any(isinstance(n, ast.Yield | ast.YieldFrom | ast.Await | ast.NamedExpr
                          | ast.Lambda) for n in ast.walk(annotation))


# ----------------------------------------------------------------------------- the static proof


@dataclass
class _Pair:
    a: _Module
    b: _Module
    entry: str = ""  # the top-level name under review: the function, or a method's class
    side_a: _Side = field(default_factory=_Side)
    side_b: _Side = field(default_factory=_Side)
    relative: set[str] = field(default_factory=set)
    same: set[str] = field(default_factory=set)  # names already shown bound the same
    chains: bool = False
    local_imports: bool = False
    internal: bool = False
    # A class the entry reads (or its own) may differ in these members (methods changed,
    # added or removed, and `__annotations__`), which the entry must not reach, or only
    # as changed units (``_unreached``); `kept`: those both versions define.
    members: dict[str, frozenset[str]] = field(default_factory=dict)
    kept: dict[str, frozenset[str]] = field(default_factory=dict)
    # Classes the entry does not name whose members differ (``_other_classes``), and the
    # construction methods that differ in them.
    unread: set[str] = field(default_factory=set)
    made: set[str] = field(default_factory=set)
    constructed: set[str] = field(default_factory=set)  # classes whose constructor changed
    # The method under review differs in its docstring or annotations, shown unread
    # (``noise.header_unread``): its class is compared without them.
    bare_header: bool = False
    # The module function under review differs in its docstring or annotations, shown
    # unread, and no annotation is evaluated: it is compared without them.
    bare_function: bool = False


def plan(
    tree_a: ast.Module, tree_b: ast.Module, entry: str, context: PairContext | None = None,
    statements: Mapping[int, int] | None = None, relative: bool = False,
    seconds: float = opaque.MAX_SECONDS,
) -> Plan:
    """The static half: the canonical texts agree and the environment is bound the same.

    ``statements`` (a hint: a line of ``before`` -> the line of ``after`` where that
    statement is) lets ``before`` be compared with its statements reordered, where
    ``hints.reorder`` shows the reordering harmless. With ``relative``, code that differs
    may still match when both versions make the same calls and operations on every path
    (``opaque``, within ``seconds``). Raises ``Refused`` when the check does not apply.
    """
    pa, pb = (context.before, context.after) if context is not None else (None, None)
    pair = _Pair(_Module(tree_a, pa), _Module(tree_b, pb))
    *classes, name = entry.split(".")
    if len(classes) > 1:
        raise Refused("a method of a nested class")
    fn_a, fn_b = pysource.definition(tree_a, entry), pysource.definition(tree_b, entry)
    if fn_a is None or fn_b is None:
        raise Refused("the entry is not found")
    # The name must denote this definition for good: a second binding (`(f := g)`, a `for`
    # target, `except ... as f`, `global f` in a function) may run only outside the sandbox,
    # which the module can tell from production, so the loaded module cannot vouch for it.
    if not classes and (pair.a.defs.get(name) is not fn_a or pair.b.defs.get(name) is not fn_b):
        raise Refused(f"`{name}` is not bound once at module level by its definition")
    # What only the function object shows: its docstring and annotations. Code that can
    # reach the object (by its name, or through `self` for a method) may read them.
    same_doc = _header_key(fn_a) == _header_key(fn_b)
    written_a = fn_a  # as written: a hint's statement lines refer to it
    if classes and not same_doc:
        # Through `self`, any code may reach the method: only where none reads docstrings
        # or annotations, and none is evaluated, may they differ (the class is then
        # compared without them).
        chains = [[module.defs.get(classes[0]), fn]
                  for module, fn in ((pair.a, fn_a), (pair.b, fn_b))]
        if not all(isinstance(c, ast.ClassDef) for c, _ in chains) or not noise.header_unread(
                tree_a, tree_b, *chains):  # type: ignore[arg-type]
            raise Refused("a method whose docstring or annotations changed")
        pair.bare_header = True
    elif not same_doc and not noise.header_unread(tree_a, tree_b, [fn_a], [fn_b]):
        # A module's function: code of the module may read its docstring or annotations
        # by name (`f.__doc__`), a decorator may (`@click.command` makes help of it), and
        # an annotation may be evaluated when the definition runs.
        raise Refused("a function whose docstring or annotations changed, which code of "
                      "the module or a decorator may read, or an annotation that is evaluated")
    elif not same_doc:
        pair.bare_function = _future_annotations(tree_a) and _future_annotations(tree_b)
    fn_a, fn_b = _plain_annotated(_nested_with(fn_a)), _plain_annotated(_nested_with(fn_b))
    # Code of the module that can change, after import, what the function reads (a
    # `global` write elsewhere, `math.pi = 3` in a helper, a mutated module-level list):
    # then the same code in the same environment at import is not the same later on.
    # For a method, everything its class reads counts.
    trusted: list[str] = []
    for tree in (tree_a, tree_b):
        meddling = pyinterfere.interference(tree, None,
                                            classes[0] if classes else name, trusted)
        if meddling is not None:
            raise Refused(f"code of the module may change what it reads: {meddling.what} "
                          f"(line {meddling.line})")
    pair.entry = classes[0] if classes else name
    if same_doc and not classes:
        pair.same.add(name)  # it may call itself: the same, as far as it is the same code
    if classes:
        _same_class(pair, classes[0], depth=0, method=name)
        pair.side_a.method = pair.side_b.method = (classes[0], name)
    method = bool(classes)
    # A module function `contextlib.contextmanager` wraps: the child finds the definition
    # inside the wrapper.
    wrapped_entry = not classes and isinstance(fn_a, ast.FunctionDef) and isinstance(
        fn_b, ast.FunctionDef) and _context_manager(fn_a, pair.a) and _context_manager(
        fn_b, pair.b)
    if wrapped_entry:
        pair.side_a.wrapped.add(name)
        pair.side_b.wrapped.add(name)
    # `for x in it: yield x` is `yield from it` for a generator driven by next alone.
    # `for x in it: out.append(x)` is `out.extend(it)` for a list no one else holds yet.
    loops_a, driven_a, extended_a = _loops(fn_a)
    loops_b, driven_b, extended_b = _loops(fn_b)
    if wrapped_entry and (driven_a or driven_b):
        raise Refused("a `@contextmanager` function whose loops re-yield: the context "
                      "manager may throw into it")
    canon_a = _Canon(loops_a or fn_a, pair.a, method, pair.bare_function)
    canon_b = _Canon(loops_b or fn_b, pair.b, method, pair.bare_function)
    reordered = False
    if canon_a.text() != canon_b.text() and statements:
        try:
            moved = _nested_with(reorder.reorder(written_a, tree_a, statements))
        except reorder.NotShown as why:
            raise Refused(f"the statement correspondence: {why}") from None
        loops_a, driven_a, extended_a = _loops(moved)
        canon_a = _Canon(loops_a or moved, pair.a, method, pair.bare_function)
        reordered = True
    matched: opaque.Matched | None = None
    if canon_a.text() != canon_b.text():
        if wrapped_entry:
            # `contextmanager` drives it by `next`, `throw` and `close`: only the same code
            # is known to answer all three alike.
            raise Unmatched("a `@contextmanager` function whose code differs beyond renaming "
                            "and resolved names")
        if not relative or reordered:
            raise Unmatched("the code differs beyond renaming and resolved names"
                            + (", with the statements reordered as proposed" if reordered
                               else ""))
        matched = _relative_match(loops_a or fn_a, loops_b or fn_b, canon_a, canon_b, pair,
                                  method, seconds)
    if matched is None:
        slots_a, slots_b = canon_a.slots(), canon_b.slots()
        renamed = {n for k in slots_a.keys() | slots_b.keys()
                   for n in (slots_a.get(k), slots_b.get(k))
                   if n is not None and slots_a.get(k) != slots_b.get(k)}
    else:
        # Locals that are not the same in both: every local the versions do not share.
        renamed = _locals(canon_a) ^ _locals(canon_b)
    if renamed:
        # A string that names a local may be looked up in the caller's frame by name
        # (`df.query("a > @limit")`): renaming it is then a change.
        texts = [n.value for fn in (fn_a, fn_b) for stmt in _body(fn) for n in ast.walk(stmt)
                 if isinstance(n, ast.Constant) and isinstance(n.value, str)]
        for local in sorted(renamed):
            if any(re.search(r"\b" + re.escape(local) + r"\b", t) for t in texts):
                raise Refused(f"a string names the renamed local `{local}`")
    # An exception's message names what raised it: an UnboundLocalError names the local,
    # and a changed callee's exceptions were compared by type only. Code that reads a
    # caught exception (a handler's name, a context manager's `__exit__`) sees the text.
    seen = _sees_exceptions(fn_a) or _sees_exceptions(fn_b)
    # (Relative to callees, no path reads a local that may be unbound: the walk refuses.)
    if renamed and seen is not None and matched is None:
        guarded = _guarded_read(fn_a, renamed) or _guarded_read(fn_b, renamed)
        if guarded is not None:
            raise Refused(f"a renamed local's name may show in an exception it reads "
                          f"({seen}; {guarded})")
    qual = entry
    line_a = fn_a.decorator_list[0].lineno if fn_a.decorator_list else fn_a.lineno
    line_b = fn_b.decorator_list[0].lineno if fn_b.decorator_list else fn_b.lineno
    pair.side_a.entry, pair.side_b.entry = (qual, line_a), (qual, line_b)
    _confirm_reads(pair, canon_a.reads, canon_b.reads)
    _same_effects(pair)
    trusted += _other_classes(pair)
    trusted += _unreached(pair, (fn_a, fn_b))
    if pair.relative:
        # The function, or a helper or class it reads, may catch what a changed callee raises.
        for module, side in ((pair.a, pair.side_a), (pair.b, pair.side_b)):
            for read in (pair.entry, *side.functions, *side.classes):
                node = module.defs.get(read)
                if seen is None and node is not None:
                    seen = _sees_exceptions(node)
        if seen is not None:
            raise Refused(f"it reads exceptions ({seen}), which a changed callee's proof "
                          "compared by type only")
    _no_attribute_writes(tree_a, tree_b, (*pair.side_a.chains, *pair.side_b.chains))
    assumptions = [
        "the code is the same up to its docstring, formatting, a consistent renaming of "
        "local variables and names that resolve to the same imported object"
    ] if matched is None else _relative_assumptions(matched)
    if reordered:
        assumptions.append("statements were reordered as a hint proposed: only assignments "
                           "of locals from values that call no code, each pair moved past "
                           "each other shown to commute; code outside the function does not "
                           "read its local variables through frames (a traceback's, a "
                           "tracer's)")
    if not same_doc:
        assumptions.append("code outside this module does not read the function's docstring "
                           "or annotations")
    if renamed or matched is not None:
        assumptions.append("code outside this module does not read local variables' names "
                           "(through callers' frames, or the code objects of functions it "
                           "is given)")
    assumptions += trusted
    if driven_a or driven_b:
        assumptions.append(pygen.DRIVEN)
    if extended_a or extended_b:
        assumptions.append(EXTEND_PROBE)
    if pair.chains:
        assumptions.append("modules' attributes are not reassigned after import")
    if pair.local_imports:
        assumptions.append("a local import of a standard-library module imports the same "
                           "object as the module-level import it replaces")
    if any(c.external and not c.stdlib for c in (*pair.side_a.chains, *pair.side_b.chains)):
        assumptions.append("modules imported from outside the project are the same in both "
                           "versions")
    if pair.internal:
        assumptions.append("the project's other modules, identical in both revisions, load "
                           "the same objects")
    return Plan(pair.side_a.request(), pair.side_b.request(), tuple(sorted(pair.relative)),
                tuple(assumptions), reordered, matched is not None)


def _relative_match(fn_a: ast.FunctionDef | ast.AsyncFunctionDef,
                    fn_b: ast.FunctionDef | ast.AsyncFunctionDef, canon_a: _Canon,
                    canon_b: _Canon, pair: _Pair, method: bool,
                    seconds: float = opaque.MAX_SECONDS) -> opaque.Matched:
    """The versions make the same events on every path (``opaque``), with the same
    definition around the body (decorators, defaults, parameters)."""
    if not isinstance(fn_a, ast.FunctionDef) or not isinstance(fn_b, ast.FunctionDef):
        raise Refused("an async function")
    if pygen.is_generator(fn_a) != pygen.is_generator(fn_b):
        raise Unmatched("one version is a generator function, the other is not")
    heads = []
    for fn, module in ((fn_a, pair.a), (fn_b, pair.b)):
        stub = ast.FunctionDef(name=fn.name, args=fn.args, body=[ast.Pass()],
                               decorator_list=fn.decorator_list, returns=fn.returns,
                               type_comment=None)
        heads.append(_Canon(stub, module, method, pair.bare_function).text())
    if heads[0] != heads[1]:
        raise Unmatched("the definitions differ (decorators, defaults or parameters)")
    try:
        return opaque.match(fn_a, fn_b, canon_a, canon_b, seconds)
    except walker.Refused as why:
        raise Refused(f"relative to callees: {why}") from None
    except opaque.Mismatch as why:
        raise Unmatched(f"the versions make different calls or operations: {why}") from None


def _locals(canon: _Canon) -> set[str]:
    """The function's local variables (not its parameters), in every scope it has."""
    return {name for scope in canon.scopes.by_node.values() for name in scope.bound}


def _relative_assumptions(matched: opaque.Matched) -> list[str]:
    listed = ", ".join(matched.operations) or "nothing"
    return [
        f"{listed}: each is deterministic given its arguments and the state, and behaves "
        "the same in both versions (the code differs, but on every path both versions make "
        "these calls and operations with equal arguments in the same order)",
        "the identity of equal immutable values the code builds (tuples, strings) is not "
        "relied upon (the language lets them be shared or not)",
        "module-level names, modules' attributes and the builtins it reads are not "
        "reassigned while it runs (a name read before a call is the same as after it; code "
        "of this module that rebinds them is refused)",
        "objects both versions let go of between the same two operations may be finalized "
        "in either order among themselves (`__del__`, weak-reference callbacks); when "
        "they are let go of, relative to the operations, was compared",
    ] + ([
        "where an operation raises out of the function, the caller does not depend on "
        "when the objects the versions' local variables held then are finalized (the "
        "exception's traceback keeps them alive in one version, not in the other, until "
        "the caller drops it)",
    ] if matched.unwinding else [])


def _sees_exceptions(fn: ast.AST) -> str | None:
    """Where ``fn`` may read an exception object it caught, or None: a `with` (whose
    ``__exit__`` gets it), or a handler's name used other than to raise it again."""
    for n in ast.walk(fn):
        if isinstance(n, ast.With | ast.AsyncWith):
            return f"`with` at line {n.lineno}"
        if isinstance(n, ast.ExceptHandler) and n.name:
            raised = {id(r.exc) for r in ast.walk(n) if isinstance(r, ast.Raise)}
            raised |= {id(r.cause) for r in ast.walk(n) if isinstance(r, ast.Raise)}
            if any(isinstance(u, ast.Name) and u.id == n.name and id(u) not in raised
                   for u in ast.walk(n)):
                return f"`except ... as {n.name}` at line {n.lineno}"
    return None


def _guarded_read(fn: ast.FunctionDef | ast.AsyncFunctionDef, names: set[str]) -> str | None:
    """Where a read of one of ``names`` (which may raise an exception naming it) happens
    inside the body of a `try` or `with` that may hand the exception to code, or None.
    A nested function, lambda or generator expression reading one of them may run from
    any call there."""
    def reads(node: ast.AST) -> bool:
        return any(isinstance(n, ast.Name) and n.id in names for n in ast.walk(node))

    lazy = any(isinstance(n, ast.Lambda | ast.FunctionDef | ast.AsyncFunctionDef
                          | ast.GeneratorExp) and n is not fn and reads(n) for n in ast.walk(fn))
    for n in ast.walk(fn):
        if isinstance(n, ast.Try | ast.TryStar | ast.With | ast.AsyncWith):
            for stmt in n.body:
                for m in ast.walk(stmt):
                    if isinstance(m, ast.Name) and m.id in names:
                        return f"`{m.id}` read at line {m.lineno}"
                    if lazy and isinstance(m, ast.Call):
                        return f"a call at line {m.lineno} may run a nested scope reading it"
    return None


def _no_attribute_writes(
    tree_a: ast.Module, tree_b: ast.Module, chains: tuple[Chain, ...]
) -> None:
    """Refuse when code of either module may reassign an attribute a resolved name stands for.

    ``itertools.zip_longest`` read at call time and ``zip_longest`` bound at import are the
    same object only while nobody assigns ``itertools.zip_longest``; the assumption that
    nobody does is listed, but code of the module under review that does it (or may, by
    ``setattr`` or a namespace dictionary) is seen here and refuses.
    """
    attrs = {part for c in chains for part in c.parts[1:]}
    if not attrs:
        return
    for tree in (tree_a, tree_b):
        chosen = pylookups.caller_dicts(tree)  # a pickling helper's, on the caller's object
        parents = {id(c): n for n in ast.walk(tree) for c in ast.iter_child_nodes(n)}
        for node in ast.walk(tree):
            if id(node) in chosen or _dict_read(node, parents):
                continue
            if (isinstance(node, ast.Attribute) and not isinstance(node.ctx, ast.Load)
                    and node.attr in attrs):
                raise Refused(f"code of the module assigns an attribute `{node.attr}` "
                              f"(line {node.lineno})")
            if ((isinstance(node, ast.Name) and node.id in ("setattr", "delattr", "vars"))
                    or (isinstance(node, ast.Attribute)
                        and node.attr in ("__dict__", "__setattr__", "__delattr__"))):
                raise Refused(f"code of the module may assign attributes by name "
                              f"(line {node.lineno})")


def _dict_read(node: ast.AST, parents: dict[int, ast.AST]) -> bool:
    """``x.__dict__`` only read: the receiver of a method that reads a mapping, indexed
    for a read, or the right operand of ``in``."""
    if not (isinstance(node, ast.Attribute) and node.attr == "__dict__"
            and isinstance(node.ctx, ast.Load)):
        return False
    up = parents.get(id(node))
    if isinstance(up, ast.Attribute) and up.attr in pyinterfere.READ_METHODS:
        call = parents.get(id(up))
        return isinstance(call, ast.Call) and call.func is up
    if isinstance(up, ast.Subscript):
        return up.value is node and isinstance(up.ctx, ast.Load)
    return isinstance(up, ast.Compare) and all(
        isinstance(op, ast.In | ast.NotIn) for op in up.ops) and up.left is not node


def _confirm_reads(pair: _Pair, reads_a: _Reads, reads_b: _Reads) -> None:
    """Record what each side must confirm for the names the entry reads."""
    pair.side_a.builtins |= reads_a.builtins
    pair.side_b.builtins |= reads_b.builtins
    for side, module, reads, chains in (
        (pair.side_a, pair.a, reads_a, reads_a.chains),
        (pair.side_b, pair.b, reads_b, reads_b.chains),
    ):
        del reads
        for name, parts, own in chains:
            internal = module.internal(parts)
            pair.internal |= internal
            pair.chains |= len(parts) > own or name is None
            pair.local_imports |= name is None
            if _observing_origin(parts) or set(parts) & _OBSERVING_ATTRS:
                raise Refused(f"`{'.'.join(parts)}` can observe names, frames or sources")
            side.chains.append(Chain(name, parts, own, not internal, parts[0] in _STDLIB))
    if reads_a.same != reads_b.same:
        raise Refused("the versions read different module-level names")
    for name in sorted(reads_a.same):
        _same_binding(pair, name, depth=0)


def _same_binding(pair: _Pair, name: str, depth: int) -> None:
    """``name`` is bound to the same thing in both modules, or is a changed function."""
    if name in pair.same or name in pair.relative:
        return
    if name == pair.entry:
        raise Refused(f"`{name}` is read by name, and its docstring or annotations changed")
    if depth > 50:
        raise Refused("module-level definitions nested too deeply")
    da, db = pair.a.defs.get(name), pair.b.defs.get(name)
    if da is None or db is None:
        raise Refused(f"`{name}` is not bound once at module level by a definition or constant")
    if isinstance(da, ast.Assign) and isinstance(db, ast.Assign):
        if _type_variable(da, pair.a) and pysource.code_key(da) == pysource.code_key(db):
            pair.same.add(name)  # the same statement, bound once: the same kind of object
            return
        va, vb = _literal(da.value), _literal(db.value)
        if va is None or vb is None or modulecheck._shown(va[0]) != modulecheck._shown(vb[0]):
            raise Refused(f"the constant `{name}` differs or is not a plain literal")
        pair.same.add(name)
        pair.side_a.constants.add(name)
        pair.side_b.constants.add(name)
        return
    if isinstance(da, ast.FunctionDef) and isinstance(db, ast.FunctionDef):
        line_a = da.decorator_list[0].lineno if da.decorator_list else da.lineno
        line_b = db.decorator_list[0].lineno if db.decorator_list else db.lineno
        wrapped = bool(da.decorator_list or db.decorator_list)
        if wrapped and not (_context_manager(da, pair.a) and _context_manager(db, pair.b)):
            raise Refused(f"the function `{name}` is decorated")
        # Annotations that differ, never evaluated and read by no code, leave the same code
        # (a decorated one's own are left out of its text only where none is evaluated).
        differs = pysource.code_key(da) != pysource.code_key(db)
        notes_only = differs and _same_but_notes(pair, None, None, da, db)
        bare = notes_only and _future_annotations(pair.a.tree) and _future_annotations(
            pair.b.tree)
        if wrapped and differs and not notes_only:
            raise Refused(f"the `@contextmanager` function `{name}` changed")
        if differs and not notes_only:
            # A changed unit of this review: the result is relative to it, unless it can
            # see its caller's names.
            for d in (da, db):
                seen = _observes(d)
                if seen is not None:
                    raise Refused(f"the changed `{name}` uses `{seen}`")
            pair.relative.add(name)
            pair.side_a.relative[name] = (name, line_a)
            pair.side_b.relative[name] = (name, line_b)
            return
        pair.same.add(name)  # assumed while its own reads are checked (a fixpoint)
        ca = _Canon(_plain_annotated(_nested_with(da)), pair.a, bare=bare)
        cb = _Canon(_plain_annotated(_nested_with(db)), pair.b, bare=bare)
        if ca.text() != cb.text():
            raise Refused(f"`{name}` reads names that resolve differently")
        pair.side_a.functions[name] = (name, line_a)
        pair.side_b.functions[name] = (name, line_b)
        if wrapped:
            pair.side_a.wrapped.add(name)
            pair.side_b.wrapped.add(name)
        sa, sb = _Side(), _Side()
        sub = _Pair(pair.a, pair.b, pair.entry, sa, sb, pair.relative, pair.same,
                    members=pair.members, kept=pair.kept)
        _confirm_reads(sub, ca.reads, cb.reads)
        _merge(pair, sub)
        return
    if isinstance(da, ast.ClassDef) and isinstance(db, ast.ClassDef):
        _same_class(pair, name, depth)
        return
    raise Refused(f"`{name}` is bound to another object than a constant, function or class")


def _context_manager(fn: ast.FunctionDef, module: _Module) -> bool:
    """Whether ``fn``'s one decorator is `contextlib.contextmanager`, by a name the module
    imports from there (the child confirms the name is that function once loaded, and that
    the module binds what it made of the definition)."""
    if len(fn.decorator_list) != 1:
        return False
    d = fn.decorator_list[0]
    if isinstance(d, ast.Name):
        return module.imports.get(d.id) == ("contextlib", "contextmanager")
    return (isinstance(d, ast.Attribute) and d.attr == "contextmanager"
            and isinstance(d.value, ast.Name)
            and module.imports.get(d.value.id) == ("contextlib",))


# What `typing` makes that only annotations and `isinstance` errors use.
_TYPE_MAKERS = {"TypeVar", "ParamSpec", "TypeVarTuple"}


def _type_variable(stmt: ast.Assign, module: _Module) -> bool:
    """Whether ``stmt`` is ``F = TypeVar("F", ...)`` (``ParamSpec``, ``TypeVarTuple``) from
    ``typing``, whose arguments read nothing but ``typing`` and unshadowed builtins: the
    same statement in both versions then makes the same kind of object."""
    call = stmt.value
    if not (isinstance(call, ast.Call) and len(stmt.targets) == 1):
        return False
    f = call.func
    if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name):
        origin = module.imports.get(f.value.id)
        maker = origin == ("typing",) and f.attr in _TYPE_MAKERS
    else:
        maker = isinstance(f, ast.Name) and module.imports.get(f.id) in {
            ("typing", m) for m in _TYPE_MAKERS}
    if not maker or not call.args or not isinstance(call.args[0], ast.Constant):
        return False
    for arg in [*call.args[1:], *(k.value for k in call.keywords)]:
        for n in ast.walk(arg):
            if isinstance(n, ast.Name) and not (
                module.imports.get(n.id, ("",))[0] == "typing"
                or (module.bindings[n.id] == 0 and hasattr(builtins, n.id))
            ):
                return False
            if isinstance(n, (ast.Call, ast.Lambda, ast.NamedExpr, *_COMPREHENSIONS)):
                return False
    return True


def _inert(node: ast.AST | None) -> bool:
    """Whether evaluating ``node`` calls nothing by name: no call, comprehension, lambda,
    ``await``, ``yield`` or walrus (operators and subscripts on names are let through:
    `Optional[Foo]`, `A | B`)."""
    return node is None or not any(
        isinstance(n, (ast.Call, ast.Lambda, ast.NamedExpr, ast.Await, ast.Yield,
                       ast.YieldFrom, *_COMPREHENSIONS)) for n in ast.walk(node))


def _effects(module: _Module, postponed: bool) -> list[tuple[int, str]]:
    """The module-level statements that may do more than bind names (line, text): all but
    definitions (compared where the function reads them), imports, the docstring, `if
    TYPE_CHECKING:` blocks, `TypeVar`s and assignments of inert values to names. A class
    statement's own header and body are compared with the class; a statement here, such as
    `P.k = 2` or `P.register(int)`, changes a class of the module after it is made."""
    found: list[tuple[int, str]] = []
    for k, stmt in enumerate(module.tree.body):
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Import
                      | ast.ImportFrom | ast.Pass):
            continue
        if k == 0 and isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
            continue
        if isinstance(stmt, ast.If) and "TYPE_CHECKING" in {
                _word(w) for w in ast.walk(stmt.test)}:
            continue
        names = all(isinstance(n, ast.Name) for t in getattr(stmt, "targets", [])
                    for n in ([*t.elts] if isinstance(t, ast.Tuple) else [t]))
        if isinstance(stmt, ast.Assign) and names and (
                _inert(stmt.value) or _type_variable(stmt, module)
                or _outside_reach(stmt.value, module)):
            continue
        if isinstance(stmt, ast.AnnAssign | ast.AugAssign) and isinstance(
                stmt.target, ast.Name) and (
                _inert(stmt.value) or _outside_reach(stmt.value, module)) and (
                postponed or not isinstance(stmt, ast.AnnAssign) or _inert(stmt.annotation)):
            continue
        if isinstance(stmt, ast.Expr) and _outside_reach(stmt.value, module):
            continue
        found.append((stmt.lineno, pysource.code_key(stmt)))
    return found


# Words through which code can reach the module's own objects without naming them.
_REACHES_MODULE = frozenset({"__name__", "__spec__", "__loader__", "__file__", "setattr",
                             "delattr", "getattr"})


# Builtins that change no state when called on the standard library's objects (they make
# a new object at most): the only calls module-level code let through may make.
_PURE_BUILTINS = frozenset({
    "hasattr", "isinstance", "issubclass", "callable", "len", "bool", "int", "float",
    "complex", "str", "bytes", "tuple", "frozenset", "object", "repr", "abs", "min", "max",
})  # fmt: skip


def _outside_reach(node: ast.AST | None, module: _Module) -> bool:
    """Whether code can reach no object of the module, and changes no state the function
    may read: it reads only builtins the module never binds and standard-library modules
    it imports (`PYPY = hasattr(sys, "pypy")`), calls only builtins that change nothing
    (``_PURE_BUILTINS``: not `logging.getLogger("x").setLevel(...)`, `random.seed(2)`,
    which change the standard library's state), makes no function, and has no word that
    reaches objects by name (`sys.modules`, `globals`, `__name__`, `getattr`,
    `setattr`)."""
    if node is None or any(isinstance(n, (ast.Lambda, ast.NamedExpr, ast.Await, ast.Yield,
                                           ast.YieldFrom, *_COMPREHENSIONS))
                           for n in ast.walk(node)):
        return False
    if any(isinstance(n, ast.Call) and not (
            isinstance(n.func, ast.Name) and n.func.id in _PURE_BUILTINS)
           for n in ast.walk(node)):
        return False
    stdlib = _stdlib_names(module.tree)
    for n in ast.walk(node):
        word = _word(n)
        # (`hasattr` answers a bool: it hands out no object it finds)
        if word in _REACHES_BUILTINS or word in _REACHES_MODULE or word in (
                _BY_NAME - {"hasattr"}) or word in _ALL_ATTRIBUTES:
            return False
        if isinstance(n, ast.Name):
            if module.bindings[n.id] == 0 and hasattr(builtins, n.id):
                continue
            if module.bindings[n.id] != stdlib[n.id]:
                return False
    return True


def _stdlib_names(tree: ast.Module) -> Counter[str]:
    """How many times the module's own code binds each name by an absolute import from the
    standard library (`import sys`, twice over in toolz's `functoolz.py`)."""
    found: Counter[str] = Counter()
    for stmt in tree.body:
        if isinstance(stmt, ast.Import) or (isinstance(stmt, ast.ImportFrom)
                                            and not stmt.level):
            try:
                origins = _import_origins(stmt, None)
            except Refused:
                continue
            found.update(name for name, origin in origins if origin[0] in _STDLIB)
    return found


def _same_effects(pair: _Pair) -> None:
    """Refuse where the module-level statements that may do more than bind names
    (``_effects``) differ: one may change a class of the module, any object the function is
    handed may be an instance of it, and the class's own code is the same."""
    postponed = _future_annotations(pair.a.tree) and _future_annotations(pair.b.tree)
    effects = [_effects(module, postponed) for module in (pair.a, pair.b)]
    texts = [[t for _, t in e] for e in effects]
    if texts[0] != texts[1]:
        k = next((i for i, (x, y) in enumerate(zip(texts[0], texts[1], strict=False))
                  if x != y), min(map(len, texts)))
        which = 1 if k < len(effects[1]) else 0
        raise Refused(f"module-level code that may do more than bind names changed (line "
                      f"{effects[which][k][0]} of the {('before', 'after')[which]} version): "
                      "it may change a class of the module whose objects the function handles, "
                      "or state of the standard library the function reads")


def _header_key(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> str:
    """The docstring, annotations and decorators of a definition, as comparable text."""
    a = fn.args
    notes = [p.annotation for p in _params(a)]
    return "|".join([repr(ast.get_docstring(fn, clean=False)),
                     *(pysource.code_key(n) if n is not None else "-" for n in notes),
                     pysource.code_key(fn.returns) if fn.returns is not None else "-",
                     *(pysource.code_key(d) for d in fn.decorator_list)])


def _same_class(pair: _Pair, name: str, depth: int, method: str | None = None) -> None:
    """A class of identical text whose every module-level name is bound the same way.

    With ``method``, the class of the method under review: the same apart from that
    method's body (its decorators and parameters are class-level code, compared here).
    Either may differ in members (``_class_delta``) that ``_unreached`` later shows the
    entry cannot reach, or reaches only as changed units decided on their own.
    The names are all those the class loads anywhere (its body, its methods): a method's
    local of the same name as a module-level one is checked too, which only refuses more.
    The loaded class itself is compared in the sandbox (``_deep`` in the child).
    """
    nodes = []
    for module in (pair.a, pair.b):
        node = module.defs.get(name)
        if not isinstance(node, ast.ClassDef):
            raise Refused(f"`{name}` is not a class bound once at module level")
        if method is not None:
            node = _without_body(node, method, module.tree, bare=pair.bare_header)
        nodes.append(node)
    da, db = nodes
    changed: frozenset[str] = frozenset()
    if pysource.code_key(da) != pysource.code_key(db):
        changed, pair.kept[name] = _class_delta(pair, da, db)
        pair.members[name] = changed
        if changed & _CONSTRUCTION:
            # Run when an object of it is made: by code that names the class, or makes
            # one from an object (``_unreached`` refuses both).
            pair.made |= changed & _CONSTRUCTION
            pair.constructed.add(name)
        for side in (pair.side_a, pair.side_b):
            side.excluded |= {(name, _mangled(name, m)) for m in changed}
    # A module's name read by a method (`traceback`, `code`) is checked below where it
    # resolves (an import of an observing module refuses); a parameter `code` is no module.
    # Not `inspect`, whose import passes there: only its safe attributes may be read.
    seen = _observes(da, frozenset({"super", "__class__", *_OBSERVING_MODULES} - {"inspect"}))
    if seen is not None:
        raise Refused(f"the class `{name}` uses `{seen}`")
    pair.same.add(name)  # a method may read its own class: the same apart from itself
    if method is None:
        line_a = da.decorator_list[0].lineno if da.decorator_list else da.lineno
        line_b = db.decorator_list[0].lineno if db.decorator_list else db.lineno
        pair.side_a.classes[name] = line_a
        pair.side_b.classes[name] = line_b
    implicit = {"__module__", "__qualname__"}
    if ast.get_docstring(da, clean=False) is not None:
        implicit.add("__doc__")  # set in the class namespace before the body runs
    # Both versions' reads, but for the members that differ: the entry reaches none of them.
    future = _future_annotations(pair.a.tree) and _future_annotations(pair.b.tree)
    loaded = sorted(_class_reads(da, changed, future, pair.a)
                    | _class_reads(db, changed, future, pair.b))
    for read, class_level, note in loaded:
        if note and all(read in m.typing_only or m.bindings[read] == 0
                        for m in (pair.a, pair.b)):
            # Read by whoever evaluates the annotation (`get_type_hints`): unbound in both
            # versions alike (bound by `if TYPE_CHECKING:` alone, or not at all), as for a
            # builtin the module does not bind (the child checks).
            pair.side_a.builtins.add(read)
            pair.side_b.builtins.add(read)
            continue
        if class_level and read in implicit:
            continue
        if read in _OBSERVING_NAMES and read not in ("super", "__class__"):
            raise Refused(f"the class `{name}` uses `{read}`")
        if read in _MODULE_DUNDERS and pair.a.bindings[read] == 0:
            raise Refused(f"the class `{name}` reads `{read}`, which every module binds")
        count_a, count_b = pair.a.bindings[read], pair.b.bindings[read]
        if count_a == 0 and count_b == 0:
            # A builtin, a local of a method, or a NameError: either way the loaded module
            # must not bind it (the child checks builtins and absent names alike).
            pair.side_a.builtins.add(read)
            pair.side_b.builtins.add(read)
            continue
        origin_a, origin_b = pair.a.imports.get(read), pair.b.imports.get(read)
        # `inspect` itself passes: `_observes` let through only its safe attributes.
        if origin_a is not None and _observing_origin(origin_a) and origin_a != ("inspect",):
            raise Refused(f"the class `{name}` uses `{'.'.join(origin_a)}`")
        if origin_a is not None and origin_a == origin_b:
            for side, module in ((pair.side_a, pair.a), (pair.side_b, pair.b)):
                internal = module.internal(origin_a)
                pair.internal |= internal
                side.chains.append(Chain(read, origin_a, len(origin_a), not internal,
                                         origin_a[0] in _STDLIB))
            continue
        if read in pair.relative:
            raise Refused(f"the class `{name}` reads `{read}`, which changed")
        _same_binding(pair, read, depth + 1)
        if read in pair.relative:
            raise Refused(f"the class `{name}` reads `{read}`, which changed")


# Names the interpreter, the builtins and the standard library look up on an object they
# are handed by themselves, which are no dunders (a changed dunder refuses anyway):
# `dict(x)`, `{**x}` and `f(**x)` call `x.keys()`; `yield from x` calls `send`, `throw`
# and `close`; `print(file=x)`, `json.dump`, `pickle.dump` call `write` and `flush`; file
# wrappers, `pickle.load`, `shutil.copyfileobj` and `contextlib.closing` call the file
# methods (`gzip`, `tarfile` read `name` and `mode`); `bisect.insort` calls `insert`;
# unpickling calls `append`, `extend`; `datetime` calls a `tzinfo`'s methods;
# `statistics` and `fractions` read `as_integer_ratio`, `numerator`, `denominator`,
# `real`, `imag`; `logging` calls a handler's, filter's and formatter's methods;
# `threading.Condition` a lock's; `sqlite3` an aggregate's; `xml.sax` and `xml.etree` a
# handler's, target's or element's; `asyncio` a future's. A changed
# member of such a name refuses, whether or not this module names it.
_PROTOCOL_NAMES = {
    # mappings, generators, coroutines, sequences
    "keys", "items", "get", "send", "throw", "close", "asend", "athrow", "aclose", "insert",
    "append", "extend",
    # files, streams and sockets
    "write", "writelines", "flush", "read", "read1", "readline", "readlines", "readinto",
    "readinto1", "readall", "peek", "fileno", "seek", "tell", "truncate", "readable",
    "writable", "seekable", "isatty", "closed", "name", "mode", "sendall", "makefile",
    # numbers and time zones
    "as_integer_ratio", "numerator", "denominator", "real", "imag", "utcoffset", "dst",
    "tzname", "fromutc",
    # logging handlers, filters and formatters
    "handle", "emit", "filter", "format", "level", "formatTime", "formatException",
    "formatStack", "formatMessage", "usesTime", "handleError",
    # locks (`threading.Condition`)
    "acquire", "release", "locked", "_is_owned", "_release_save", "_acquire_restore",
    # sqlite3 aggregates and window functions
    "step", "finalize", "value", "inverse",
    # xml.sax handlers, xml.etree parser targets and elements (`SubElement`, `tostring`)
    "startDocument", "endDocument", "startElement", "endElement", "startElementNS",
    "endElementNS", "startPrefixMapping", "endPrefixMapping", "characters",
    "ignorableWhitespace", "processingInstruction", "skippedEntity", "setDocumentLocator",
    "notationDecl", "unparsedEntityDecl", "resolveEntity", "error", "fatalError", "warning",
    "start", "end", "data", "comment", "pi", "doctype", "start_ns", "end_ns", "tag",
    "attrib", "text", "tail", "iter", "makeelement",
    # asyncio futures (`await`, `ensure_future`, `wrap_future`)
    "_asyncio_future_blocking", "add_done_callback", "remove_done_callback", "result",
    "exception", "cancel", "cancelled", "done", "get_loop",
    # named tuples (`dataclasses.asdict`)
    "_fields",
    # what the dispatchers below call by a fixed name on the object they are handed
    "generic_visit", "default", "emptyline", "precmd", "postcmd", "preloop", "postloop",
    "parseline", "completedefault", "completenames", "repr1",
}  # fmt: skip
# Prefixes of the names standard-library dispatchers compute and look up on the object
# they are handed (called unbound on any object: `ast.NodeVisitor.visit(self, node)` looks
# up `visit_` + the node's class name; `cmd.Cmd.onecmd` `do_`, `help_`, `complete_`;
# `http.server`'s handlers `do_`; `reprlib.Repr.repr1` `repr_`). A changed member of such
# a name refuses, whether or not this module names it.
_PROTOCOL_PREFIXES = ("visit_", "do_", "help_", "complete_", "repr_")
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# Reflection that reads attributes by a name the code computes, or all of them.
_BY_NAME = {"getattr", "hasattr", "setattr", "delattr", "attrgetter", "methodcaller"}
_ALL_ATTRIBUTES = {"vars", "dir", "__dict__", "getmembers", "__getattribute__",
                   "getmembers_static", "getattr_static"}
# Code that reads a class's annotations (which a bare `x: int` in its body changes).
_READS_ANNOTATIONS = {"__annotations__", "get_type_hints", "get_annotations", "dataclass",
                      "dataclasses", "fields", "NamedTuple", "TypedDict"}


_MEMBER_DECORATORS = ("staticmethod", "classmethod", "property")
# Words of code that can fetch a builtin by a name it computes: the module `builtins`, the
# namespace of a module or function, evaluated text, the import system.
_REACHES_BUILTINS = frozenset({
    "builtins", "__builtins__", "eval", "exec", "compile", "__import__", "import_module",
    "modules", "__self__", "__globals__", "globals", "__subclasses__", "load_module",
    "exec_module", "__dict__", "__getattribute__",
})  # fmt: skip


def _member(stmt: ast.stmt) -> str | None:
    """The name a statement of a class body defines as a member that may differ: a plain
    method, undecorated or decorated by one builtin `staticmethod`, `classmethod` or
    `property` (a getter alone: `@x.setter` reads the name at class level)."""
    if not isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
        return None
    if len(stmt.decorator_list) > 1 or any(
        not (isinstance(d, ast.Name) and d.id in _MEMBER_DECORATORS)
        for d in stmt.decorator_list
    ):
        return None
    return stmt.name


def _bare_annotation(stmt: ast.stmt) -> str | None:
    """The name a bare class-level annotation (``x: int``, no value) annotates."""
    if isinstance(stmt, ast.AnnAssign) and stmt.value is None and stmt.simple and isinstance(
        stmt.target, ast.Name
    ):
        return stmt.target.id
    return None


def _members_left(node: ast.ClassDef, members: frozenset[str]) -> list[ast.AST]:
    """The parts of a class other than the bodies of ``members`` (their definitions still
    count: decorators are read at class level)."""
    if not members:
        return [node]
    kept: list[ast.AST] = [*node.decorator_list, *node.bases, *node.keywords]
    for stmt in node.body:
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef) and (
            _member(stmt) in members
        ):
            kept += stmt.decorator_list
        elif _bare_annotation(stmt) not in members:
            kept.append(stmt)
    return kept


def _class_reads(node: ast.ClassDef, members: frozenset[str], future: bool,
                 module: _Module) -> set[tuple[str, bool, bool]]:
    """The names a class reads that may be module-level names, each with whether it is
    read at class level and whether only in an annotation that is never evaluated when
    the class is made (``future``: ``from __future__ import annotations``). All but the
    bodies of ``members`` and a method's own locals (no `global` or `nonlocal` in it: a
    name it binds is local in all of it, and in the scopes nested in it)."""
    at_class = {id(n) for n in _class_level(node)}
    skipped: set[int] = set()
    notes: set[int] = set()
    for stmt in node.body:
        if future:
            notes |= {id(n) for a in ast.walk(stmt) for n in _annotation_nodes(a)}
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
            own = _own_locals(stmt)
            skipped |= {id(n) for inner in stmt.body for n in ast.walk(inner)
                        if isinstance(n, ast.Name) and n.id in own}
    return {(n.id, id(n) in at_class, id(n) in notes) for part in _members_left(node, members)
            for n in ast.walk(part) if isinstance(n, ast.Name) and id(n) not in skipped}


def _annotation_nodes(node: ast.AST) -> Iterator[ast.AST]:
    """The nodes of the annotations ``node`` carries itself."""
    notes: list[ast.expr | None] = []
    if isinstance(node, ast.arg):
        notes.append(node.annotation)
    elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
        notes.append(node.returns)
    elif isinstance(node, ast.AnnAssign):
        notes.append(node.annotation)
    for note in notes:
        if note is not None:
            yield from ast.walk(note)


def _own_locals(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    """The names ``fn``'s own scope binds (parameters, and every binding form outside the
    scopes nested in it), or none where it declares `global` or `nonlocal` anywhere."""
    if any(isinstance(n, ast.Global | ast.Nonlocal) for n in ast.walk(fn)):
        return set()
    names = {p.arg for p in _params(fn.args)}
    stack: list[ast.AST] = list(fn.body)
    while stack:
        n = stack.pop()
        if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(n.name)
            stack += n.decorator_list
            stack += (_outer_parts(n) if not isinstance(n, ast.ClassDef)
                      else [*n.bases, *n.keywords])
            continue
        if isinstance(n, ast.Lambda):
            stack += _outer_parts(n)
            continue
        if isinstance(n, _COMPREHENSIONS):
            stack.append(n.generators[0].iter)
            names |= {w.target.id for w in ast.walk(n)
                      if isinstance(w, ast.NamedExpr) and isinstance(w.target, ast.Name)}
            continue
        names.update(_node_bindings(n))
        stack.extend(ast.iter_child_nodes(n))
    return names


def _future_annotations(tree: ast.Module) -> bool:
    return any(isinstance(s, ast.ImportFrom) and s.module == "__future__"
               and any(a.name == "annotations" for a in s.names) for s in tree.body)


def _assign_key(name: str, value: ast.expr) -> str:
    """``name = value`` as comparable text: the same for ``name = value`` and, where its
    annotation is never evaluated, ``name: T = value``."""
    return f"{name} = {pysource.code_key(value)}"


def _running_order(node: ast.ClassDef, postponed: bool, plain: bool) -> list[str]:
    """What the body of a class runs when the class is made, in order, but for the
    docstring, annotations never evaluated (``postponed``) and, in a ``plain`` class
    (``_plain_class``), statements that neither have an effect nor see one: ``x =
    <literal>`` (or ``x: T = <literal>``, ``postponed``) of a name no class-level code
    reads, and a plain method (``_member``) whose defaults are literals and whose
    annotations are never evaluated. A method's body runs only when called: a plain method
    stands for its definition without it. Two versions of a class whose orders are equal
    run the same code in the same order, so a statement the same in both binds the same
    value; a statement that differs changes only the names it binds. (Every other
    statement counts, whether it changed or not: `a = next(it)` and `b = next(it)` swapped
    bind other values with the same text; where a base or a decorator may see the
    namespace, an `Enum`'s members swapped iterate in another order.)"""
    read = {n.id for n in _class_level(node) if isinstance(n, ast.Name) and isinstance(
        n.ctx, ast.Load)}
    order: list[str] = []
    for k, stmt in enumerate(node.body):
        if k == 0 and isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) and (
                isinstance(stmt.value.value, str)):
            continue
        target: ast.expr | None = None
        value: ast.expr | None = None
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
            target, value = stmt.targets[0], stmt.value
        elif isinstance(stmt, ast.AnnAssign) and stmt.simple and postponed:
            if stmt.value is None:
                if not plain:  # (a dataclass's or a NamedTuple's fields, in order)
                    order.append(f"{pysource.code_key(stmt.target)}: "
                                 f"{pysource.code_key(stmt.annotation)}")
                continue
            target, value = stmt.target, stmt.value
        if isinstance(target, ast.Name) and value is not None:
            if plain and _literal(value) is not None and target.id not in read:
                continue
            order.append(_assign_key(target.id, value))
            continue
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef) and _member(
                stmt) is not None:
            a = stmt.args
            notes = [p.annotation for p in _params(a) if p.annotation is not None]
            if stmt.returns is not None:
                notes.append(stmt.returns)
            if plain and all(d is None or _literal(d) is not None
                             for d in (*a.defaults, *a.kw_defaults)) and (postponed or not notes):
                continue
            order.append(pysource.code_key(type(stmt)(
                name=stmt.name, args=_unannotated(a) if postponed else a, body=[ast.Pass()],
                decorator_list=stmt.decorator_list,
                returns=None if postponed else stmt.returns, type_comment=None)))
            continue
        order.append(pysource.code_key(stmt))
    return order


def _plain_class(node: ast.ClassDef, module: _Module, depth: int = 0) -> bool:
    """Whether nothing but Python sees the class's namespace as its body fills it: no
    decorator, no keyword (metaclass), and only bases that are ``object``, a builtin class,
    ``abc``'s ``ABC`` or such a class of the module, defining no ``__init_subclass__``.
    (``ABCMeta`` has no ``__prepare__``: it sees the namespace once it is full, and keeps
    of it only which names are abstract; ``_abstract_names_kept`` checks those.)"""
    if node.decorator_list or node.keywords or depth > 20:
        return False
    for base in node.bases:
        if not isinstance(base, ast.Name):
            return False
        if pyinterfere.from_abc(base.id, module.tree):
            continue
        local = module.defs.get(base.id)
        if isinstance(local, ast.ClassDef) and local is not node:
            if not _plain_class(local, module, depth + 1) or any(
                    isinstance(s, ast.FunctionDef | ast.AsyncFunctionDef)
                    and s.name == "__init_subclass__" for s in local.body):
                return False
            continue
        if module.bindings[base.id] or not isinstance(vars(builtins).get(base.id), type):
            return False
    return True


def _abc_derived(node: ast.ClassDef, module: _Module, depth: int = 0) -> bool:
    """Whether ``abc``'s ``ABC`` is among the bases of a class, through classes of the
    module."""
    for base in node.bases:
        if not isinstance(base, ast.Name) or depth > 20:
            return True
        if pyinterfere.from_abc(base.id, module.tree):
            return True
        local = module.defs.get(base.id)
        if isinstance(local, ast.ClassDef) and local is not node and _abc_derived(
                local, module, depth + 1):
            return True
    return False


def _abstract_names_kept(pair: _Pair, da: ast.ClassDef, db: ast.ClassDef,
                         names_a: list[str], names_b: list[str]) -> None:
    """Refuse where a class made by ``ABCMeta`` binds a name in one version only that
    another class of the module binds too. ``ABCMeta`` finds a class abstract by the names
    it resolves to an abstract method: a method added or removed here (a plain one, never
    abstract itself) may hide or reveal an abstract method of that name in a base (or, for
    a subclass with several bases, in another base), and an object of the class, or of a
    subclass, can be made or not, though no code names it."""
    if not (_abc_derived(da, pair.a) or _abc_derived(db, pair.b)):
        return
    for name in sorted((set(names_a) ^ set(names_b)) - {"__annotations__", "__doc__"}):
        for module, own in ((pair.a, da), (pair.b, db)):
            # (``own`` may be a copy: its definition in the module is what is left out)
            real = module.defs.get(own.name)
            for cls in (n for n in ast.walk(module.tree) if isinstance(n, ast.ClassDef)):
                if cls is not real and any(name in _statement_names(cls, s) for s in cls.body):
                    raise Refused(f"the class `{da.name}`, made by `ABCMeta`, binds `{name}` "
                                  "in one version only, and another class binds it too")


def _first_bindings(node: ast.ClassDef) -> list[str]:
    """The names the class body binds, in the order its namespace first holds them."""
    seen: dict[str, None] = {}
    for stmt in node.body:
        for name in sorted(_statement_names(node, stmt)):
            seen.setdefault(name, None)
    return list(seen)


def _same_order(pair: _Pair, da: ast.ClassDef, db: ast.ClassDef) -> None:
    """Refuse unless the two versions of a class run the same code in the same order when
    it is made (``_running_order``), and fill its namespace in the same order (``vars(C)``
    lists it so) as far as they bind the same names."""
    postponed = _future_annotations(pair.a.tree) and _future_annotations(pair.b.tree)
    # A plain class's methods decorated by `staticmethod`, `classmethod` or `property`
    # are left out of the order only where those are the builtins.
    plain = _plain_class(da, pair.a) and _plain_class(db, pair.b) and not any(
        word in pyinterfere.bound_names(module.tree)
        for word in _MEMBER_DECORATORS for module in (pair.a, pair.b))
    if _running_order(da, postponed, plain) != _running_order(db, postponed, plain):
        raise Refused(f"the class `{da.name}` changed code its body runs when it is made, or "
                      "its order")
    names_a, names_b = _first_bindings(da), _first_bindings(db)
    _abstract_names_kept(pair, da, db, names_a, names_b)
    both = set(names_a) & set(names_b)
    if [n for n in names_a if n in both] != [n for n in names_b if n in both]:
        raise Refused(f"the class `{da.name}` binds its names in another order")


def _same_but_notes(pair: _Pair, class_a: ast.ClassDef | None, class_b: ast.ClassDef | None,
                    a: ast.stmt | None, b: ast.stmt | None) -> bool:
    """Whether ``a`` and ``b``, definitions in the two versions of a class (or of the
    module, without classes), are the same code but for annotations of assignments in
    their bodies (never kept) and annotations of their own that no code can read and that
    are never evaluated (``noise.header_unread``): the objects they make behave alike."""
    if not isinstance(a, ast.FunctionDef | ast.AsyncFunctionDef) or not isinstance(
            b, ast.FunctionDef | ast.AsyncFunctionDef):
        return False
    # The annotations of its body's assignments are never kept (``_plain_annotated``).
    plain = [_plain_annotated(f) for f in (a, b)]
    if pysource.code_key(plain[0]) == pysource.code_key(plain[1]):
        return True
    bare = [type(f)(name=f.name, args=_unannotated(f.args), body=f.body,
                    decorator_list=f.decorator_list, returns=None, type_comment=None)
            for f in plain]
    chain_a: list[noise.Definition] = [a] if class_a is None else [class_a, a]
    chain_b: list[noise.Definition] = [b] if class_b is None else [class_b, b]
    return pysource.code_key(bare[0]) == pysource.code_key(bare[1]) and noise.header_unread(
        pair.a.tree, pair.b.tree, chain_a, chain_b)


def _class_annotations_unread(pair: _Pair, da: ast.ClassDef, db: ast.ClassDef) -> None:
    """Refuse unless a class's annotations, which differ, are never evaluated and no code
    of the module can read them: no decorator or keyword on the class (a `dataclass`, a
    metaclass make something of them), postponed evaluation, and no word of the module (a
    name, an attribute, an imported name or a string: `getattr(o, "__annotations__")`)
    that reads annotations (``noise.signatures_unread``, ``_READS_ANNOTATIONS``) or a
    whole namespace (``vars(C)`` holds ``__annotations__``). ``dir`` lists names only: it
    sees the annotations only where one version has some and the other none."""
    # (the compiler makes `__annotations__` for an annotation anywhere in the body)
    noted = [any(isinstance(n, ast.AnnAssign) for n in _class_level(d)) for d in (da, db)]
    if da.decorator_list or da.keywords:
        raise Refused(f"the class `{da.name}` is decorated or has keywords, and its "
                      "annotations changed")
    if not (_future_annotations(pair.a.tree) and _future_annotations(pair.b.tree)):
        raise Refused(f"the annotations of the class `{da.name}` changed, and are "
                      "evaluated when it is made")
    if not noise.signatures_unread(pair.a.tree, pair.b.tree):
        raise Refused(f"the annotations of the class `{da.name}` changed, and the module "
                      "may read annotations")
    texts: list[str] = []  # words of strings
    for tree in (pair.a.tree, pair.b.tree):
        for n in ast.walk(tree):
            word = n.name if isinstance(n, ast.alias) else _word(n)
            if word is None and isinstance(n, ast.Constant) and isinstance(n.value, str):
                texts += _WORD.findall(n.value)
                continue
            if word is None or (word == "dir" and noted[0] == noted[1]):
                continue
            if word in _READS_ANNOTATIONS or word in _ALL_ATTRIBUTES:
                raise Refused(f"the annotations of the class `{da.name}` changed, and "
                              f"the module uses `{word}`")
    # `vars` and `dir` are builtins, no attributes: a string names them only for code that
    # can fetch a builtin by name (``_REACHES_BUILTINS``); "env vars" in prose does not.
    by_name = _reaches_builtins(pair)
    for w in texts:
        if (w in ("vars", "dir") and not by_name) or (w == "dir" and noted[0] == noted[1]):
            continue
        if w in _READS_ANNOTATIONS or w in _ALL_ATTRIBUTES:
            raise Refused(f"the annotations of the class `{da.name}` changed, and the "
                          f"module uses `{w}`")


def _class_delta(pair: _Pair, da: ast.ClassDef,
                 db: ast.ClassDef) -> tuple[frozenset[str], frozenset[str]]:
    """The members in which a class differs between the versions (its methods
    changed, added or removed; bare annotations under ``from __future__ import
    annotations``, which change only ``__annotations__``), and those of them that both
    versions define; or ``Refused``.

    Everything else must be the same: the decorators, bases and keywords (a `dataclass`
    makes `__init__` from the annotations, a metaclass sees the namespace), and every
    other statement in the same order. A changed member must be a plain method or a
    builtin `staticmethod`/`classmethod` of a name that is no dunder (`==`, `hash`, `len`
    call those by themselves) and that class-level code does not read; the class must not
    bind its name otherwise.
    """
    head = [pysource.code_key(ast.ClassDef(name=d.name, bases=d.bases, keywords=d.keywords,
                                           body=[ast.Pass()], decorator_list=d.decorator_list))
            for d in (da, db)]
    if head[0] != head[1]:
        raise Refused(f"the class `{da.name}` changed its decorators, bases or keywords")
    _same_order(pair, da, db)
    kept: list[list[tuple[str, ast.stmt | None]]] = [[], []]
    defs: list[dict[str, tuple[str, ast.stmt]]] = [{}, {}]
    notes: list[dict[str, str]] = [{}, {}]
    for i, node in enumerate((da, db)):
        for stmt in node.body:
            member, note = _member(stmt), _bare_annotation(stmt)
            if member is not None and member not in defs[i]:
                defs[i][member] = (pysource.code_key(stmt), stmt)
            elif note is not None and note not in notes[i]:
                notes[i][note] = pysource.code_key(stmt)
            elif (isinstance(stmt, ast.AnnAssign) and stmt.value is not None and stmt.simple
                  and isinstance(stmt.target, ast.Name) and stmt.target.id not in notes[i]):
                # `x: T = v` is `x = v` and an annotation of `x`.
                notes[i][stmt.target.id] = "=" + pysource.code_key(stmt.annotation)
                kept[i].append((_assign_key(stmt.target.id, stmt.value), None))
            elif isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(
                    stmt.targets[0], ast.Name):
                kept[i].append((_assign_key(stmt.targets[0].id, stmt.value), None))
            else:
                kept[i].append((pysource.code_key(stmt), stmt))

    def same(a: tuple[str, ast.stmt | None], b: tuple[str, ast.stmt | None]) -> bool:
        """The same statement, or definitions that differ only in annotations nobody
        reads (``noise.header_unread``)."""
        return a[0] == b[0] or _same_but_notes(pair, da, db, a[1], b[1])

    if len(kept[0]) != len(kept[1]) or not all(map(same, kept[0], kept[1])):
        raise Refused(f"the class `{da.name}` changed other than in its methods and bare "
                      "annotations")
    changed = {m for m in defs[0].keys() | defs[1].keys()
               if m not in defs[0] or m not in defs[1] or not same(defs[0][m], defs[1][m])}
    annotated = {m for m in notes[0].keys() | notes[1].keys()
                 if notes[0].get(m) != notes[1].get(m)}
    if annotated:
        _class_annotations_unread(pair, da, db)
        changed.add("__annotations__")
    for word in _MEMBER_DECORATORS:  # the builtins (the child confirms it)
        if pair.a.bindings[word] or pair.b.bindings[word] or any(
            word in _node_bindings(n) for node in (da, db) for n in _class_level(node)
        ):
            raise Refused(f"the class `{da.name}` changed, and the module binds `{word}`")
    for m in sorted(changed - {"__annotations__"}):
        if m.startswith("__") and m.endswith("__") and m not in _CONSTRUCTION:
            raise Refused(f"the method `{m}` of the class `{da.name}` changed, which "
                          "Python calls by itself")
        for node, module in ((da, pair.a), (db, pair.b)):
            # `x: int` alone binds nothing (it only fills `__annotations__`), and the
            # definition after `@overload` stubs replaces them (which are compared above).
            bare = {id(st.target) for st in node.body
                    if isinstance(st, ast.AnnAssign) and _bare_annotation(st) is not None}
            stubs = overload_stubs(module.tree, node.body)
            binds = sum((m in _node_bindings(n) and id(n) not in bare) or (
                isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
                and n.name == m and id(n) not in stubs) for n in _class_level(node))
            reads = any(isinstance(n, ast.Name) and n.id == m and isinstance(n.ctx, ast.Load)
                        for n in _class_level(node))
            if binds > 1 or reads:
                raise Refused(f"`{m}` of the class `{da.name}` changed and is bound or "
                              "read by other code of the class body")
    return frozenset(changed), frozenset(changed & defs[0].keys() & defs[1].keys())


# What runs only when an object of the class is made: reached by code that names the class
# (then it is a class the entry reads), or makes one from an object it has (`type(o)()`).
_CONSTRUCTION = frozenset({"__init__", "__new__", "__post_init__"})
# Attributes of a class that read its name only.
_CLASS_NAMES = frozenset({"__name__", "__qualname__", "__module__"})
# Code that makes an object from another object's class.
_MAKES_FROM_OBJECTS = {"type", "__class__", "copy", "deepcopy", "replace", "__reduce__",
                       "__reduce_ex__", "__copy__", "__deepcopy__"}


def _other_classes(pair: _Pair) -> list[str]:
    """The classes of the module the entry does not name, that differ between the
    versions: any object it handles may be an instance of one (a subclass of its own
    class, an argument), and what it calls on that object runs the class's methods.

    Each such class may differ in the names its body binds (``_unread_delta``: not its
    header, no dunder but ``__init__``/``__new__``/``__post_init__``, which run only when
    an object of it is made: code that names the class is the entry's own, a class it
    reads and compares as such, and code that makes one from an object, ``type(o)()`` or
    ``copy``, is refused). Its changed members are then recorded like those of a class
    the entry reads, for ``_unreached``:
    an attribute or string of their name in code the entry runs makes the result relative
    to them (a plain method both versions define) or refuses. A class defined more than
    once, or only in one version (its objects come only from code of that version, which
    changed and is a unit of its own), is handled so: the first refuses when it differs,
    the second is left out.
    """
    notes: list[str] = []
    classes_a, classes_b = _module_classes(pair.a.tree), _module_classes(pair.b.tree)
    for name in sorted(classes_a.keys() & classes_b.keys()):
        if name in pair.members or name in pair.same or name == pair.entry:
            continue
        nodes_a, nodes_b = classes_a[name], classes_b[name]
        if [pysource.code_key(n) for n in nodes_a] == [pysource.code_key(n) for n in nodes_b]:
            continue
        if len(nodes_a) != 1 or len(nodes_b) != 1:
            raise Refused(f"the class `{name}`, defined more than once, changed: objects the "
                          "function handles may be instances of it")
        shadowed = bool(pair.a.bindings["object"] or pair.b.bindings["object"])
        changed, kept = _unread_delta(pair, nodes_a[0], nodes_b[0], shadowed)
        made = changed & _CONSTRUCTION
        changed -= made
        if made:  # (``_no_object_made`` says what is assumed)
            pair.made |= made
            pair.constructed.add(name)
        if changed:
            pair.members[name] = changed
            pair.kept[name] = kept
            pair.unread.add(name)
    return notes


def _module_classes(tree: ast.Module) -> dict[str, list[ast.ClassDef]]:
    """The classes the module's own code defines (not inside functions), by name."""
    found: dict[str, list[ast.ClassDef]] = {}
    stack: list[ast.AST] = list(tree.body)
    while stack:
        n = stack.pop(0)
        if isinstance(n, ast.ClassDef):
            found.setdefault(n.name, []).append(n)
            stack.extend(n.body)  # a class nested in a class is made with it
        elif isinstance(n, ast.stmt) and not isinstance(
                n, ast.FunctionDef | ast.AsyncFunctionDef):
            stack.extend(c for c in ast.iter_child_nodes(n)
                         if isinstance(c, ast.stmt | ast.ExceptHandler | ast.match_case))
        elif isinstance(n, ast.ExceptHandler | ast.match_case):
            stack.extend(n.body)
    return found


def _unread_delta(pair: _Pair, da: ast.ClassDef, db: ast.ClassDef,
                  shadowed: bool) -> tuple[frozenset[str], frozenset[str]]:
    """The names a class the entry does not name binds otherwise in the two versions, and
    those of them that are plain methods (``_member``) in both; or ``Refused`` where its
    header (decorators, bases, keywords) or a statement that binds nothing differs.

    Each statement of the body is filed under the names it binds: a definition, an
    assignment, an annotation (under ``__annotations__``), the docstring (``__doc__``). A
    dunder other than the construction methods refuses: Python calls it by itself, on
    any object the entry handles. ``class E(object)`` is ``class E`` unless the module
    binds ``object`` (``shadowed``). A definition that differs only in annotations nobody
    reads (``_same_but_notes``) is the same.
    """
    head = [pysource.code_key(ast.ClassDef(
        name=d.name, keywords=d.keywords, body=[ast.Pass()], decorator_list=d.decorator_list,
        bases=[b for b in d.bases if shadowed or not (
            isinstance(b, ast.Name) and b.id == "object")]))
        for d in (da, db)]
    if head[0] != head[1]:
        raise Refused(f"the class `{da.name}` changed its decorators, bases or keywords: "
                      "objects the function handles may be instances of it")
    _same_order(pair, da, db)
    bound: list[dict[str, list[tuple[str, ast.stmt]]]] = [{}, {}]
    rest: list[list[str]] = [[], []]
    methods: list[set[str]] = [set(), set()]
    postponed = _future_annotations(pair.a.tree) and _future_annotations(pair.b.tree)
    for i, node in enumerate((da, db)):
        for k, stmt in enumerate(node.body):
            key = pysource.code_key(stmt)
            if k == 0 and isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
                names = ["__doc__"]
            else:
                names = sorted(_statement_names(node, stmt))
            member = _member(stmt)
            if member is not None:
                methods[i].add(member)
            if not names:
                rest[i].append(key)
            if (isinstance(stmt, ast.AnnAssign) and postponed and stmt.simple
                    and stmt.value is not None and isinstance(stmt.target, ast.Name)):
                # `x: T = v` is `x = v` and an annotation of `x`, never evaluated.
                bound[i].setdefault(stmt.target.id, []).append(
                    (_assign_key(stmt.target.id, stmt.value), stmt))
                bound[i].setdefault("__annotations__", []).append(
                    (f"{stmt.target.id}: {pysource.code_key(stmt.annotation)}", stmt))
                continue
            if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(
                    stmt.targets[0], ast.Name):
                key = _assign_key(stmt.targets[0].id, stmt.value)
            for n in names:
                bound[i].setdefault(n, []).append((key, stmt))
    if rest[0] != rest[1]:
        raise Refused(f"the class `{da.name}` changed a statement of its body that binds "
                      "nothing: objects the function handles may be instances of it")

    def same(a: list[tuple[str, ast.stmt]], b: list[tuple[str, ast.stmt]]) -> bool:
        return len(a) == len(b) and all(x[0] == y[0] or _same_but_notes(
            pair, da, db, x[1], y[1]) for x, y in zip(a, b, strict=True))

    changed = frozenset(n for n in bound[0].keys() | bound[1].keys()
                        if not same(bound[0].get(n, []), bound[1].get(n, [])))
    if "__annotations__" in changed:
        _class_annotations_unread(pair, da, db)
    for n in sorted(changed - _CONSTRUCTION - {"__doc__", "__annotations__"}):
        if n.startswith("__") and n.endswith("__"):
            raise Refused(f"the method `{n}` of the class `{da.name}` changed, which Python "
                          "calls by itself on objects the function may handle")
    once = {n for n in changed if len(bound[0].get(n, [])) == 1 == len(bound[1].get(n, []))}
    return changed, frozenset(changed & methods[0] & methods[1] & once)


def _word(n: ast.AST) -> str | None:
    """The name a ``Name`` reads or the attribute an ``Attribute`` reads, else None."""
    return n.id if isinstance(n, ast.Name) else n.attr if isinstance(n, ast.Attribute) else None


def _reached_members(code: list[ast.AST], classes: list[ast.ClassDef],
                     changed: dict[str, frozenset[str] | set[str]],
                     outside: dict[int, frozenset[str] | None]) -> list[ast.AST]:
    """The unchanged statements of ``classes`` that code reached from ``code`` names (by
    an attribute, a name or a word of a string), that Python calls by itself (dunders), or
    that code outside the module may call (``outside``, by class: what its bases outside
    the module define, None for any name), to a fixpoint."""
    def words(part: ast.AST) -> set[str]:
        out: set[str] = set()
        for n in ast.walk(part):
            word = _word(n)
            if word is not None:
                out.add(word)
            elif isinstance(n, ast.Constant) and isinstance(n.value, str):
                out.update(_WORD.findall(n.value))
        return out

    seen = {w for part in code for w in words(part)}
    named = [(stmt, _statement_names(node, stmt), node) for node in classes
             for stmt in node.body if not isinstance(stmt, ast.Expr)]
    left = [(stmt, names, outside[id(node)]) for stmt, names, node in named
            if not names & changed[node.name]]
    reached: list[ast.AST] = []
    grew = True
    while grew:
        grew = False
        for item in list(left):
            stmt, names, called = item
            if names & seen or any(n.startswith("__") and n.endswith("__") for n in names) or (
                    called is None or names & called):
                left.remove(item)
                reached.append(stmt)
                seen |= words(stmt)
                grew = True
    return reached


def _statement_names(node: ast.ClassDef, stmt: ast.stmt) -> set[str]:
    """The names a statement of the class body binds in the class's namespace (an
    annotation binds ``__annotations__``)."""
    if _bare_annotation(stmt) is not None:
        return {"__annotations__"}
    alone = ast.ClassDef(name=node.name, bases=[], keywords=[], body=[stmt], decorator_list=[])
    names = {b for n in _class_level(alone) for b in _node_bindings(n)}
    if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        names.add(stmt.name)
    if isinstance(stmt, ast.AnnAssign):
        names.add("__annotations__")
    return names


def _unreached(pair: _Pair, fns: tuple[ast.AST, ...]) -> list[str]:
    """Refuse unless the entry cannot reach a member its class differs in, or reaches
    only methods both versions define, each then a changed unit the result is relative to
    (added to ``pair.relative`` as ``Class.method``: it stands only if that method, decided
    on its own, is verified by this check too).

    The code that runs as part of the entry, as far as this module goes, is the entry
    itself, its class (any object may be an instance of it) and the functions and classes
    it reads, in both versions. A member is reached there by any attribute of its name
    (on any object: `super()` and other instances too), by a string of its name
    (`getattr(x, "m")`), or, for the names Python looks up by itself, anywhere. Code that
    reads attributes by a computed name, or all of them, may reach any.
    """
    notes = [f"the annotations of the class `{cls}` changed: code outside the module does "
             "not read them (no code of the module does)"
             for cls, changed in sorted(pair.members.items()) if "__annotations__" in changed]
    members = {cls: changed - {"__annotations__"} for cls, changed in pair.members.items()}
    if not any(members.values()) and not pair.made:
        return notes
    every = {m for changed in members.values() for m in changed}
    code: list[ast.AST] = list(fns)
    for module, side in ((pair.a, pair.side_a), (pair.b, pair.side_b)):
        for read in {pair.entry, *side.functions, *side.relative, *side.classes}:
            node = module.defs.get(read)
            if node is not None:
                code += (_members_left(node, pair.members[read]) if read in pair.members
                         and isinstance(node, ast.ClassDef) else [node])
        # Any class of the module runs a method of its objects that the code reached so
        # far names (and any dunder): those count as reached in turn. A class the entry
        # does not name is one of them, changed or not: an object it is given may be an
        # instance of a subclass that inherits the method (`o.fresh()`, where `fresh` of
        # an unchanged base calls `type(self)()` of a class whose constructor changed).
        classes = _module_classes(module.tree)
        every_class = [node for name in sorted(classes) for node in classes[name]]
        code += _reached_members(code, every_class, {
            name: pair.members.get(name, frozenset()) | (
                pair.made if name in pair.unread else frozenset()) for name in classes},
            {id(node): pyclasses.outside_members(module.tree, node) for node in every_class})
    if pair.made:
        notes += _no_object_made(pair, code)
    # A private name is stored mangled: `getattr(self, "_C__m")` reads `__m`.
    strings: dict[str, set[tuple[str, str]]] = {}
    for cls, changed in members.items():
        for m in changed:
            strings.setdefault(m, set()).add((cls, m))
            strings.setdefault(_mangled(cls, m), set()).add((cls, m))
    for part in code:
        # `getattr(x, "name")` names what it reads: the string is checked below.
        named = {id(n.func) for n in ast.walk(part)
                 if isinstance(n, ast.Call) and _by_constant_name(n)}
        # A string that is a statement of its own (a docstring) is no value any code uses.
        unused = {id(n.value) for n in ast.walk(part)
                  if isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant)}
        for n in ast.walk(part):
            if id(n) in unused:
                continue
            word = _word(n)
            if word in _ALL_ATTRIBUTES or (word in _BY_NAME and id(n) not in named):
                raise Refused(f"a class it reads changed ({_listed(every)}), and code the "
                              f"method reaches uses `{word}`")
            if _formats_by_name(n):
                raise Refused(f"a class it reads changed ({_listed(every)}), and code the "
                              f"method reaches formats with a string it computes "
                              f"(`{word}`: its fields read attributes by name)")
            if isinstance(n, ast.MatchClass) and (n.patterns or set(n.kwd_attrs) & every):
                raise Refused(f"a class pattern may read a member that changed (line "
                              f"{n.lineno})")
            # A string may name it anywhere in its text: `"{0.m}".format(x)`, `"a.m"`.
            words = [word] if word is not None else _WORD.findall(n.value) if isinstance(
                n, ast.Constant) and isinstance(n.value, str) else []
            for cls, reached in {r for w in words for r in strings.get(w, ())}:
                if reached not in pair.kept[cls]:
                    raise Refused(f"the method reaches `{reached}`, which the class "
                                  f"`{cls}` changed other than as a method both versions "
                                  "define")
                pair.relative.add(f"{cls}.{reached}")
    # Other modules of the package, which the code may call (or be handed objects by):
    # a member they name is reached as if this module named it.
    elsewhere = _package_words(pair)
    for cls, changed in sorted(members.items()):
        for m in sorted(changed):
            if f"{cls}.{m}" in pair.relative or (
                    elsewhere is not None and not {m, _mangled(cls, m)} & elsewhere):
                continue
            if m not in pair.kept[cls]:
                names = _NAMES if elsewhere is None else "names"
                raise Refused(f"another module of the package {names} `{m}`, which the class "
                              f"`{cls}` changed other than as a method both versions define")
            pair.relative.add(f"{cls}.{m}")
    # An object of a class deriving from one outside the module may be handed to code
    # outside it (any code may make one), which may call any member of that base by name:
    # an override of one is reached (`html.escape` calls `replace` of a `str` subclass).
    for cls, changed in sorted(members.items()):
        outside = _outside_members(pair, cls)
        for m in sorted(changed):
            if f"{cls}.{m}" in pair.relative or (outside is not None and m not in outside):
                continue
            if m not in pair.kept[cls]:
                raise Refused(f"the class `{cls}` derives from a class outside the module "
                              f"whose member `{m}` it changed other than as a method both "
                              "versions define (code outside the module may call it on "
                              "objects it is handed)")
            pair.relative.add(f"{cls}.{m}")
    # A member the result is relative to stands for every caller (it must be verified on
    # its own); one taken as unreached must not be one the standard library calls.
    protocol = {m for cls, changed in members.items() for m in changed
                if f"{cls}.{m}" not in pair.relative
                and (m in _PROTOCOL_NAMES or m.startswith(_PROTOCOL_PREFIXES))}
    if protocol:
        raise Refused(f"`{sorted(protocol)[0]}` changed in a class, which Python or the "
                      "standard library calls by itself on objects it is handed")
    for cls, changed in sorted(members.items()):
        unreached = {m for m in changed if f"{cls}.{m}" not in pair.relative}
        if unreached:
            where = ("no code it runs of this module names them, nor does other code of "
                     "the package, and code outside the package" if _in_package(pair) else
                     "no code it runs of this module names them, and code outside the module")
            notes.append(f"the class `{cls}` differs in {_listed(unreached)}, which the "
                         f"method cannot reach: {where} does not call them on the objects "
                         "it is given")
    return notes


def _outside_members(pair: _Pair, cls: str) -> frozenset[str] | None:
    """What the bases outside the module of the class ``cls`` define, in either version
    (``pyclasses.outside_members``); None (any name) where a version's is not known or
    the class is not one bound once at module level."""
    found: set[str] = set()
    for module in (pair.a, pair.b):
        nodes = _module_classes(module.tree).get(cls, [])
        if len(nodes) != 1:
            return None
        names = pyclasses.outside_members(module.tree, nodes[0])
        if names is None:
            return None
        found |= names
    return frozenset(found)


def _in_package(pair: _Pair) -> bool:
    """Whether the code the entry runs reads objects of the project's other modules (whose
    code may then run as part of it)."""
    return pair.internal and pair.a.package is not None and pair.b.package is not None


# What is said of a module of the package that the size caps left unread.
_NAMES = "(one the size caps left unread) may name"


def _package_words(pair: _Pair) -> set[str] | None:
    """The words of the other modules of the package, in either revision (``_file_words``),
    where the code the entry runs reads objects of them (``_in_package``): none else; None
    (any word) where the size caps left some of them out."""
    found: set[str] = set()
    if not _in_package(pair):
        return found
    for module in (pair.a, pair.b):
        if module.package is not None and module.package.left_out:
            return None
        if module.package is not None:
            for path, text in module.package.files:
                if path.endswith(".py"):
                    found |= _file_words(text)
    return found


@functools.lru_cache(maxsize=1024)
def _file_words(text: str) -> frozenset[str]:
    """``_tree_words`` of a module's text; every word of it where it does not parse."""
    try:
        return _tree_words(ast.parse(text))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return frozenset(_WORD.findall(text))


def _reaches_builtins(pair: _Pair) -> bool:
    """Whether either module, or another of the package, has a word of code that can fetch
    a builtin by a name it computes, or the module of the builtins (``_REACHES_BUILTINS``:
    `getattr(builtins, "vars")`, `sys.modules["builtins"].type`)."""
    if any(_REACHES_BUILTINS & _tree_words(module.tree) for module in (pair.a, pair.b)):
        return True
    return any(_REACHES_BUILTINS & _file_words(text) for module in (pair.a, pair.b)
               if module.package for path, text in module.package.files
               if path.endswith(".py"))


def _tree_words(tree: ast.Module) -> frozenset[str]:
    """Every name, attribute, imported name and word of a string (but docstrings) in a
    module."""
    docs = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Expr)
            and isinstance(n.value, ast.Constant) and isinstance(n.value.value, str)}
    words: set[str] = set()
    for n in ast.walk(tree):
        if isinstance(n, ast.alias):
            words.update(_WORD.findall(f"{n.name} {n.asname or ''}"))
        elif isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docs:
            words.update(_WORD.findall(n.value))
        else:
            word = _word(n)
            if word is not None:
                words.add(word)
    return frozenset(words)


def _no_object_made(pair: _Pair, code: list[ast.AST]) -> list[str]:
    """Refuse where ``code`` may make an object of a class whose constructor changed
    (``pair.made``): by naming it or a subclass of it (whose constructor runs its base's),
    or from another object (``type(o)()``, ``copy``). Else the assumption that code
    outside the module does not do it either."""
    made_by = set(pair.constructed)
    for tree in (pair.a.tree, pair.b.tree):
        classes = [n for ns in _module_classes(tree).values() for n in ns]
        grew = True
        while grew:
            grew = False
            for node in classes:
                if node.name not in made_by and any(
                        isinstance(b, ast.Name) and b.id in made_by for b in node.bases):
                    made_by.add(node.name)
                    grew = True
    local = _local_names(pair.a.tree, "type") | _local_names(pair.b.tree, "type")
    postponed = _future_annotations(pair.a.tree) and _future_annotations(pair.b.tree)
    elsewhere = _package_words(pair)
    named = sorted(made_by if elsewhere is None else made_by & elsewhere)
    if named:
        raise Refused(f"the class `{named[0]}` changed {_listed(pair.made)}, and another "
                      f"module of the package {_NAMES if elsewhere is None else 'names'} it "
                      "(it may make an object of it)")
    for part in code:
        made = _class_used(part)
        if made is not None:
            raise Refused(f"a class changed {_listed(pair.made)}, and code the function "
                          f"reaches uses the class a method is called on as a value "
                          f"(`{made}`: it may make an object of it)")
        notes = {id(w) for n in ast.walk(part) for w in _annotation_nodes(n)} if (
            postponed) else set()
        # `type(o).__name__`, `o.__class__.__qualname__`: a name read, no object made
        notes |= {id(w) for n in ast.walk(part) if isinstance(n, ast.Attribute)
                  and n.attr in _CLASS_NAMES for w in (
                      n.value, n.value.func if isinstance(n.value, ast.Call) else n.value)}
        for n in ast.walk(part):
            word = _word(n)
            if id(n) in notes or id(n) in local:
                continue  # (never evaluated; a parameter or variable named `type`)
            if word in _MAKES_FROM_OBJECTS and not _makes_nothing(pair, made_by, n):
                raise Refused(f"a class changed {_listed(pair.made)}, and code the "
                              f"function reaches uses `{word}` (it may make an object "
                              "of that class)")
            if isinstance(n, ast.Name) and n.id in made_by:
                raise Refused(f"the class `{n.id}` changed {_listed(pair.made)}, and "
                              "code the function reaches names it (it may make an "
                              "object of it)")
    outside = "the package" if _in_package(pair) else "the module"
    return [f"the constructor of the class `{cls}` changed: code outside {outside} does "
            "not make objects of it from the objects it is given"
            for cls in sorted(pair.constructed)]


# Methods whose first parameter Python binds to a class (not an instance of it).
_CLASS_RECEIVERS = frozenset({"__new__", "__init_subclass__", "__class_getitem__"})


def _class_used(part: ast.AST) -> str | None:
    """The first parameter of a class method in ``part`` (``cls``: the class it is called
    on, a subclass of its own, or any object through ``K.m.__func__``), where it is used
    otherwise than to read an attribute of it (``cls(v)``, ``super().__new__(cls)``,
    ``make(cls)``, ``return cls``): that may make an object of the class."""
    for fn in ast.walk(part):
        if not isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        if not (fn.name in _CLASS_RECEIVERS or any(
                _word(d) == "classmethod" for d in fn.decorator_list)):
            continue
        first = [*fn.args.posonlyargs, *fn.args.args]
        if not first:
            if fn.args.vararg is not None:
                return f"*{fn.args.vararg.arg}"
            continue
        name = first[0].arg
        parents = {id(c): n for n in ast.walk(fn) for c in ast.iter_child_nodes(n)}
        for n in ast.walk(fn):
            if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load):
                up = parents.get(id(n))
                if not (isinstance(up, ast.Attribute) and up.value is n):
                    return name
    return None


def _makes_nothing(pair: _Pair, classes: set[str], n: ast.AST) -> bool:
    """Whether ``n``, an attribute named like a way to make an object from another, cannot
    make an object of ``classes``. ``o.type`` is no builtin `type` where neither module,
    nor another of the package, stores that builtin as a value (a parameter named `type`
    is no builtin) or can reach the module of the builtins. ``o.copy`` and ``o.replace``
    where ``o`` is no name of a module (not ``copy.copy`` or ``dataclasses.replace``) and
    the module imports neither, cannot where no class of theirs (in either version) has a
    member of that name and all their bases are classes of the module, ``object`` or
    ``abc``'s ``ABC`` (``str.replace`` makes a string). (``type(self)()`` in a method
    counts: ``K.method(o)`` passes any object as ``self``.)"""
    if isinstance(n, ast.Attribute) and n.attr == "type":
        # (`builtins.type`, `sys.modules["builtins"].type` are the builtin)
        return not _reaches_builtins(pair) and not any(
            _stores_type(module.tree) for module in (pair.a, pair.b)) and not any(
            _text_stores_type(text) for module in (pair.a, pair.b) if module.package
            for path, text in module.package.files if path.endswith(".py"))
    if not isinstance(n, ast.Attribute) or n.attr not in ("copy", "deepcopy", "replace"):
        return False
    if any(isinstance(a, ast.alias) and {"copy", "dataclasses"} & set(a.name.split("."))
           for module in (pair.a, pair.b) for a in ast.walk(module.tree)):
        return False  # (the module may keep `copy` or `dataclasses` in an attribute)
    if isinstance(n.value, ast.Name) and any(
            module.bindings[n.value.id] and n.value.id not in module.defs
            for module in (pair.a, pair.b)):
        return False  # (a name bound otherwise than by a def or class: an import, maybe)
    for module in (pair.a, pair.b):
        todo = [module.defs.get(name) for name in classes]
        seen: set[int] = set()
        while todo:
            node = todo.pop()
            if node is not None and id(node) in seen:
                continue
            # (a class not bound once at module level is not known)
            if not isinstance(node, ast.ClassDef) or len(seen) > 50 or node.keywords or any(
                    n.attr in _statement_names(node, st) for st in node.body):
                return False
            seen.add(id(node))
            for base in node.bases:
                if not isinstance(base, ast.Name):
                    return False
                if base.id in module.defs:
                    todo.append(module.defs[base.id])
                elif not (base.id == "object" and not module.bindings["object"]) and not (
                        pyinterfere.from_abc(base.id, module.tree)):
                    return False
    return True


def _local_names(tree: ast.Module, name: str) -> set[int]:
    """The nodes of the name ``name`` in functions that bind it themselves (a parameter, a
    variable) and declare nothing `global` or `nonlocal`, with the functions nested in
    them: there it is no builtin."""
    found: set[int] = set()
    for fn in ast.walk(tree):
        if isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef) and name in _own_locals(fn):
            found |= {id(w) for w in ast.walk(fn) if isinstance(w, ast.Name) and w.id == name}
    return found


@functools.lru_cache(maxsize=1024)
def _text_stores_type(text: str) -> bool:
    """``_stores_type`` of another module of the package, by its text (True where it does
    not parse)."""
    try:
        return _stores_type(ast.parse(text))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return True


def _stores_type(tree: ast.Module) -> bool:
    """Whether the module may store the builtin ``type`` somewhere: a load of the name
    ``type`` that is not the function of a call, an operand of a comparison (``x is
    type``), a base of a class or part of an annotation never evaluated, outside functions
    that bind ``type`` themselves (a parameter named so)."""
    postponed = _future_annotations(tree)
    used = set()
    for n in ast.walk(tree):
        if isinstance(n, ast.Call):
            used.add(id(n.func))
        elif isinstance(n, ast.Compare):
            used |= {id(x) for x in (n.left, *n.comparators)}
        elif isinstance(n, ast.ClassDef):
            used |= {id(b) for b in n.bases}
        if postponed:
            used |= {id(w) for w in _annotation_nodes(n)}

    def loads(nodes: list[ast.AST]) -> Iterator[ast.Name]:
        for part in nodes:
            for w in ast.walk(part):
                if isinstance(w, ast.Name) and w.id == "type" and isinstance(
                        w.ctx, ast.Load) and id(w) not in used:
                    yield w

    functions = [f for f in ast.walk(tree) if isinstance(f, ast.FunctionDef | ast.AsyncFunctionDef
                                                         | ast.Lambda)]
    inner = {id(w) for f in functions for w in ast.walk(f)}
    if any(id(w) not in inner for w in loads([tree])):
        return True  # (at module or class level)
    for f in functions:
        own = {p.arg for p in _params(f.args)}
        if not isinstance(f, ast.Lambda):
            own |= _own_locals(f) or {"?"}
        if "type" not in own and any(loads(list(ast.iter_child_nodes(f)))):
            return True
    return False


def _mangled(owner: str, name: str) -> str:
    """The name a member ``name`` of the class ``owner`` is stored under."""
    if name.startswith("__") and not name.endswith("__") and owner.strip("_"):
        return f"_{owner.lstrip('_')}{name}"
    return name


def _by_constant_name(call: ast.Call) -> bool:
    """Whether a call of ``getattr`` and the like names the attribute by a string literal
    (``attrgetter("a", "b.c")``: each one), not by a value the code computes."""
    f = call.func
    name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None
    names = call.args if name == "attrgetter" else call.args[:1] if name == "methodcaller" \
        else call.args[1:2]
    return bool(names) and not any(isinstance(a, ast.Starred) for a in call.args) and all(
        isinstance(a, ast.Constant) and isinstance(a.value, str) for a in names)


def _formats_by_name(n: ast.AST) -> bool:
    """Whether ``n`` formats with a template that is no string literal (whose words the
    scan of strings sees): its fields (`{0.name}`) read attributes by the names its text
    holds, as ``getattr`` with a computed name does. ``template.format(x)``,
    ``template.format_map(m)``, ``string.Formatter`` (any use of it); the builtin
    ``format(x, spec)`` reads no attribute by name (only ``__format__``, a dunder)."""
    if isinstance(n, ast.Attribute) and n.attr in ("format", "format_map", "vformat"):
        return not (isinstance(n.value, ast.Constant) and isinstance(n.value.value, str))
    return _word(n) == "Formatter"


def _listed(names: frozenset[str] | set[str]) -> str:
    return ", ".join(f"`{n}`" for n in sorted(names))


def _merge(pair: _Pair, sub: _Pair) -> None:
    for side, other in ((pair.side_a, sub.side_a), (pair.side_b, sub.side_b)):
        side.functions.update(other.functions)
        side.wrapped |= other.wrapped
        side.relative.update(other.relative)
        side.constants |= other.constants
        side.classes.update(other.classes)
        side.chains += other.chains
        side.builtins |= other.builtins
        side.excluded |= other.excluded
    pair.chains |= sub.chains
    pair.local_imports |= sub.local_imports
    pair.internal |= sub.internal


def _literal(node: ast.expr) -> tuple[object] | None:
    try:
        value = ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None
    return (value,) if modulecheck._plain(value) else None


# ----------------------------------------------------------------------------- the sandbox


_SUBJECT = "subject.py"
_PACKAGE = "__veribot_package__"
_EXPECT = "relational.txt"

# Runs in the sandbox child: every tool is taken before the module under review runs.
_SCRIPT = """
import abc, builtins, importlib, importlib.util, os, sys, types
_pristine = dict(vars(builtins))
_ABCMeta, _ABC, _sorted = abc.ABCMeta, abc.ABC, sorted
_abc_dump = getattr(abc, "_get_dump", None)
_type, _repr, _vars, _write, _tuple, _dict = type, repr, vars, os.write, tuple, dict
_hex, _getattr, _str, _len, _import = hex, getattr, str, len, importlib.import_module
_id = id
_module, _function = types.ModuleType, types.FunctionType
_object = object
_PLAIN_OBJECT = %(plain_object)r
_plain = (type(None), bool, int, float, str, bytes, complex)
_missing = object()
with open(%(expect)r, encoding="utf-8") as handle:
    _expect = __import__("ast").literal_eval(handle.read())
with open(%(subject)r, encoding="utf-8") as handle:
    _compiled = compile(handle.read(), os.path.abspath(%(subject)r), "exec", dont_inherit=True)
_codes = {}
def _collect(code):
    for c in code.co_consts:
        if _type(c) is _type(code):
            _codes[(c.co_qualname, c.co_firstlineno)] = c
            _collect(c)
_collect(_compiled)
# What `contextlib.contextmanager` makes of a function: a closure over it, running this code.
_cm_code = __import__("contextlib").contextmanager(lambda: None).__code__

%(shown)s

def _fp(v):
    s = _shown(v)
    if not s.startswith("<"):
        return s
    if _type(v) is _module:
        return "<module " + _str(_vars(v).get("__name__")) + ">"
    if _type(v) is _object:
        return _PLAIN_OBJECT
    try:
        return ("<" + _type(v).__qualname__ + " " + _str(_getattr(v, "__module__", None)) + "."
                + _str(_getattr(v, "__qualname__", _getattr(v, "__name__", None))) + ">")
    except BaseException:
        return "<unreadable>"

def _walk(parts, local):
    # The objects along `parts`, by plain lookups in plain modules' dicts; stops at the
    # first object that is not a module. None where a step is not a plain lookup.
    if local:
        try:
            _import(parts[0] if _len(parts) == 1 else ".".join(parts[:-1]))
        except BaseException:
            return None
    obj = sys.modules.get(parts[0], _missing)
    if _type(obj) is not _module:
        return None
    objs = [obj]
    for part in parts[1:]:
        if _type(obj) is not _module:
            break
        d = _vars(obj)
        if "__getattr__" in d or part.startswith("__") or part not in d:
            return None
        obj = d[part]
        objs.append(obj)
    return objs

_early = {}
for _name, _parts, _own, _external, _stdlib in _expect["chains"]:
    if _stdlib:
        try:
            _import(_parts[0])
        except BaseException:
            continue
        _seen = _walk(_parts, False)
        if _seen is not None:
            _early[_parts] = _seen[-1]

def _load():
    if %(package)r is not None:
        root, name = %(package)r
        sys.path.insert(0, os.path.abspath(root))
        try:
            return _vars(importlib.import_module(name)), None
        except BaseException as exc:
            return None, "importing it raises " + _type(exc).__name__
    spec = importlib.util.spec_from_file_location("subject", os.path.abspath(%(subject)r))
    module = importlib.util.module_from_spec(spec)
    sys.modules["subject"] = module
    try:
        spec.loader.exec_module(module)
    except BaseException as exc:
        return None, "importing it raises " + _type(exc).__name__
    return module.__dict__, None

_globals, _failed = _load()
_problems, _prints = [], {}

# A default that is the very object a confirmed import names (a sentinel such as
# `_marker = object()` imported from another module) shows as that name: the chain's own
# check vouches that it is the same object in both versions. ("@" starts no other text.)
_named = {}
if _globals is not None:
    for _name, _parts, _own, _external, _stdlib in _expect["chains"]:
        if _name is not None:
            _seen = _walk(_parts, False)
            if _seen is not None and _len(_seen) == _len(_parts):
                _named[_id(_seen[-1])] = "@" + ".".join(_parts)

def _defaults(v):
    if _type(v) is _tuple:
        return "(" + ", ".join(_named.get(_id(i)) or _shown(i) for i in v) + ")"
    if _type(v) is _dict and not [k for k in v if _type(k) is not str]:
        return "{" + ", ".join(_repr(k) + ": " + (_named.get(_id(v[k])) or _shown(v[k]))
                               for k in v) + "}"
    return _shown(v)

def _function_at(key, qual, line, docs, obj=_missing):
    if obj is _missing:
        obj = _globals.get(key, _missing)
    if _type(obj) is not _function:
        _problems.append(f"`{key}` is not the function defined at line {line}")
        return
    if obj.__code__ != _codes.get((qual, line)):
        _problems.append(f"`{key}` runs other code than its definition at line {line}")
    elif obj.__globals__ is not _globals or obj.__builtins__ is not _vars(builtins):
        _problems.append(f"`{key}` runs with other globals or builtins than the module's")
    elif docs is not None:
        _prints["function " + key] = (_defaults(obj.__defaults__), _defaults(obj.__kwdefaults__),
                                      _shown(_dict(obj.__dict__)), obj.__name__,
                                      obj.__qualname__, _shown(obj.__doc__) if docs else "")

def _unwrapped(key):
    # The function `contextlib.contextmanager` wrapped, where `key` is bound to its wrapper.
    obj = _globals.get(key, _missing)
    if _type(obj) is not _function or obj.__code__ is not _cm_code:
        return _missing
    try:
        return obj.__closure__[obj.__code__.co_freevars.index("func")].cell_contents
    except BaseException:
        return _missing

_property = property
_sha = __import__("hashlib").sha256
_marshal = __import__("marshal").dumps
_codetype = _type(_compiled)

def _norm(code):
    # The code without where it is: line numbers and file name (the workspace differs).
    consts = _tuple(_norm(c) if _type(c) is _codetype else c for c in code.co_consts)
    return code.replace(co_firstlineno=1, co_linetable=b"", co_filename="", co_consts=consts)

def _digest(code):
    return _sha(_marshal(_norm(code))).hexdigest()

_plain_kinds = (staticmethod, classmethod)
_descriptors = (types.MemberDescriptorType, types.GetSetDescriptorType)
_operators = tuple(_getattr(__import__("operator"), n)
                   for n in ("attrgetter", "itemgetter", "methodcaller"))

def _deep(v, skip, seen, depth=0):
    # A structural fingerprint of what a class holds; "<" marks what cannot be compared.
    if depth > 12:
        return "<too deep>"
    s = _shown(v)
    if not s.startswith("<"):
        return s
    if _type(v) is _tuple:
        return ("tuple", [_deep(i, skip, seen, depth + 1) for i in v])
    key = _id(v)
    if key in seen:
        return ("ref", seen[key])
    seen[key] = _len(seen)
    t = _type(v)
    if key == skip:
        return "the entry"
    if t is _function:
        code = v.__code__
        here = _codes.get((code.co_qualname, code.co_firstlineno)) == code
        if not here:
            return "<a function defined elsewhere>"
        if v.__globals__ is not _globals:
            return "<a function with other globals>"
        cells = ()
        if v.__closure__ is not None:
            # Only the `__class__` cell of a method that uses `super()`.
            if code.co_freevars != ("__class__",):
                return "<a function with a closure>"
            cells = _deep(v.__closure__[0].cell_contents, skip, seen, depth + 1)
        return ("function", code.co_qualname, _digest(code),
                _deep(v.__defaults__, skip, seen, depth + 1),
                _deep(v.__kwdefaults__, skip, seen, depth + 1),
                _deep(_dict(v.__dict__), skip, seen, depth + 1), _shown(v.__doc__), cells)
    if t is _dict:
        return ("dict", [(_shown(k), _deep(v[k], skip, seen, depth + 1)) for k in v]
                if all(_type(k) is str for k in v) else "<a dict of other keys>")
    if t is _module:
        return "<module " + _str(_vars(v).get("__name__")) + ">"
    if t in _plain_kinds:
        return (t.__name__, _deep(v.__func__, skip, seen, depth + 1))
    if t in _descriptors:
        return (t.__name__, v.__name__)
    if t in _operators:
        return (t.__name__, _repr(v))
    if isinstance(v, _property):
        own = (_dict(v.__dict__) if _type(_getattr(v, "__dict__", None)) is _dict else {})
        return ("property", _deep(t, skip, seen, depth + 1),
                [_deep(f, skip, seen, depth + 1) for f in (v.fget, v.fset, v.fdel)],
                _shown(v.__doc__), _deep(own, skip, seen, depth + 1))
    if isinstance(v, type):
        if v is _ABC:
            return "<type abc.ABC>"
        if t is not type and t is not _ABCMeta:
            return "<a class with a metaclass>"
        if t is _ABCMeta and (_abc_dump is None or _len(_abc_dump(v)[0])):
            return "<an abstract class with registered classes>"  # (`isinstance` sees them)
        if v.__module__ != _globals.get("__name__"):
            if v.__module__ == "builtins" and _pristine.get(v.__qualname__) is v:
                return "<type builtins." + v.__qualname__ + ">"
            return "<a class of another module>"
        # `ABCMeta` keeps a cache of its own (`_abc_impl`) and which names are abstract.
        left = [(k, x) for k, x in _vars(v).items() if (_id(v), k) not in _excluded
                and not (t is _ABCMeta and k == "_abc_impl")]
        return ("class", v.__qualname__, [_deep(b, skip, seen, depth + 1) for b in v.__bases__],
                [(k, "abstract " + _repr(_sorted(x)) if t is _ABCMeta
                  and k == "__abstractmethods__" else _deep(x, skip, seen, depth + 1))
                 for k, x in left])
    if t.__module__ == "builtins" and t.__qualname__ == "builtin_function_or_method":
        return "<builtin " + _str(v.__module__) + "." + _str(v.__qualname__) + ">"
    return "<an object of another type>"

def _comparable(fp):
    # Builtin types and builtin functions are named the same in both versions.
    if _type(fp) is str:
        return not fp.startswith("<") or fp.startswith(("<type builtins.", "<builtin ",
                                                         "<type abc.ABC>"))
    if _type(fp) in (_tuple, list):
        return all(_comparable(x) for x in fp)
    return True

if _globals is not None:
    _classes = [(_key, None) for _key, _line in _expect["classes"]]
    _entry_fn = None
    # The members a class may differ in, by the class object the module binds.
    _excluded = {(_id(_globals.get(_c)), _m) for _c, _m in _expect["excluded"]}
    if _expect["method"] is not None:
        _name, _attr = _expect["method"]
        _cls = _globals.get(_name, _missing)
        _value = _vars(_cls).get(_attr, _missing) if isinstance(_cls, type) else _missing
        _entry_fn = _value
        if _type(_value) in _plain_kinds:
            _entry_fn = _value.__func__
        elif isinstance(_value, _property):
            _entry_fn = _value.fget
        _classes.append((_name, id(_entry_fn)))
    for _key, _skip in _classes:
        _fpc = _deep(_globals.get(_key, _missing), _skip, {})
        if not _comparable(_fpc):
            _problems.append(f"the class `{_key}` holds objects that cannot be compared")
        else:
            _prints["class " + _key] = _repr(_fpc)
    # Which classes of the module are abstract, and in what: `ABCMeta` decides it by names
    # alone (a method a mixin adds makes a subclass concrete), whoever defines them.
    for _key in _sorted(_globals):
        _v = _globals[_key]
        if isinstance(_v, _ABCMeta) and _getattr(_v, "__module__", None) == _globals.get(
                "__name__"):
            _prints["abstract " + _str(_key)] = _repr(_sorted(
                _getattr(_v, "__abstractmethods__", ())))

if _globals is not None:
    _qual, _line = _expect["entry"]
    if _expect["method"] is None:
        _function_at(_qual, _qual, _line, False,
                     _unwrapped(_qual) if _qual in _expect["wrapped"] else _missing)
    else:
        _function_at(_qual, _qual, _line, False, _entry_fn)
    for _key, (_qual, _line) in _expect["functions"]:
        if _key in _expect["wrapped"]:
            _function_at(_key, _qual, _line, True, _unwrapped(_key))
        else:
            _function_at(_key, _qual, _line, True)
    for _key, (_qual, _line) in _expect["relative"]:
        _function_at(_key, _qual, _line, None)
    for _key in _expect["constants"]:
        _prints["constant " + _key] = _shown(_globals.get(_key, _missing))
    for _key in _expect["builtins"]:
        if _key in _globals:
            _problems.append(f"the module binds `{_key}`, read as the builtin")
        elif _vars(builtins).get(_key, _missing) is not _pristine.get(_key, _missing):
            _problems.append(f"the builtin `{_key}` was replaced")
    for _name, _parts, _own, _external, _stdlib in _expect["chains"]:
        _shown_as = ".".join(_parts)
        _seen = _walk(_parts, _name is None)
        if _seen is None or _len(_seen) < _own:
            _problems.append(f"`{_shown_as}` is not found by plain lookups in modules")
            continue
        if _name is not None and _globals.get(_name, _missing) is not _seen[_own - 1]:
            _problems.append(f"`{_name}` is not `{'.'.join(_parts[:_own])}` once loaded")
            continue
        if _parts in _early and _early[_parts] is not _seen[-1]:
            _problems.append(f"`{_shown_as}` was replaced while the module loaded")
            continue
        _last = _seen[-1]
        _self = False
        for _o in _seen:  # `import subject` in `subject` itself is not outside it
            if _type(_o) is _module and _vars(_o) is _globals:
                _self = True
        if _self:
            _problems.append(f"`{_shown_as}` is read through the module under review")
            continue
        if _getattr(_last, "__module__", None) == _globals.get("__name__"):
            _problems.append(f"`{_shown_as}` comes from the module under review")
            continue
        _prints["chain " + _shown_as] = (_len(_seen), _fp(_last), _external)
_write(1, ("\\n%(marker)s" + _repr([_failed, _problems, _prints]) + "\\n").encode())
"""


@dataclass(frozen=True)
class _Report:
    failed: str | None
    problems: tuple[str, ...]
    prints: dict[str, object]


def _load(source: str, request: dict[str, object], limits: Limits,
          package: Package | None) -> _Report:
    marker = f"veribot-relational-{secrets.token_hex(8)}: "
    files: dict[str, str | bytes] = {_SUBJECT: source, _EXPECT: repr(request)}
    subject, where = _SUBJECT, None
    if package is not None:
        tree_files, subject = package_files(_PACKAGE, package, source)
        files = {**tree_files, _EXPECT: files[_EXPECT]}
        where = (posixpath.join(_PACKAGE, package.root), package.module)
    script = _SCRIPT % {"expect": _EXPECT, "subject": subject, "marker": marker,
                        "shown": modulecheck._SHOWN, "package": where,
                        "plain_object": PLAIN_OBJECT}
    run = run_script(script, files, limits=limits,
                     readonly=(_PACKAGE,) if package is not None else ())
    if run.timed_out:
        return _Report("importing it did not finish in the sandbox's time", (), {})
    reports = [line for line in run.stdout.splitlines() if line.startswith(marker)]
    if run.returncode != 0 or len(reports) != 1:
        return _Report(f"importing it ended with status {run.returncode}", (), {})
    try:
        failed, problems, prints = pysource.literal(reports[0][len(marker):])
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return _Report("the sandbox's report was unreadable", (), {})
    return _Report(failed, tuple(str(p) for p in problems), dict(prints))


# The entries whose changed callees are being checked, to stop at a cycle (f calls g,
# g calls f, both changed).
_CHECKING: ContextVar[frozenset[str]] = ContextVar("relational_checking", default=frozenset())


def check(
    before: str,
    after: str,
    tree_a: ast.Module,
    tree_b: ast.Module,
    entry: str,
    limits: Limits,
    context: PairContext | None = None,
    callee: Callable[[str], Result] | None = None,
    statements: Mapping[int, int] | None = None,
    refusal: list[str] | None = None,
    relative: bool = False,
) -> Result | None:
    """A verified result when the versions are the same code in the same environment,
    confirmed by loading both in the sandbox; None when that is not shown (the caller
    goes on as before). Never raises.

    Where the function calls another function of the module that changed, the result
    holds relative to it; ``callee`` decides that function in the same pair, and only a
    verified callee lets the result stand (without ``callee``, None).
    ``statements`` is a hint's statement correspondence (see ``plan``); why the check did
    not verify is appended to ``refusal`` (when given) for the hint's report. With
    ``relative``, code that differs may match relative to its callees (``plan``).
    """
    why_not = refusal if refusal is not None else []
    try:
        found = plan(tree_a, tree_b, entry, context, statements, relative)
    except Refused as why:
        log.debug("relational check of %s does not apply: %s", entry, why)
        why_not.append(str(why))
        return None
    except (RecursionError, MemoryError):
        log.debug("relational check of %s: the code is nested too deeply", entry)
        return None
    except Exception:  # the check's boundary: the existing path decides instead
        log.exception("relational check of %s failed", entry)
        return None
    try:
        pa, pb = (context.before, context.after) if context is not None else (None, None)
        with ThreadPoolExecutor(max_workers=2, thread_name_prefix="veribot-rel") as pool:
            ja = pool.submit(_load, before, found.before, limits, pa)
            jb = pool.submit(_load, after, found.after, limits, pb)
            ra, rb = ja.result(), jb.result()
    except Exception:
        log.exception("relational check of %s: loading the modules failed", entry)
        return None
    unconfirmed = _mismatch(ra, rb, context)
    if unconfirmed is not None:
        log.debug("relational check of %s not confirmed: %s", entry, unconfirmed)
        why_not.append(f"loading the modules did not confirm it: {unconfirmed}")
        return None
    assumptions = list(found.assumptions)
    if found.relative_to:
        checked = _callees(entry, found.relative_to, callee)
        if checked is None:
            why_not.append("a changed function it calls was not verified the same way")
            return None
        assumptions += checked
    detail = ("the two versions are the same code in the same environment (compared "
              "without a model of the code; both modules were loaded to confirm the names "
              "it reads)")
    method = METHOD_REORDERED if found.reordered else METHOD
    if found.relative:
        detail = ("relative to the calls it makes: on every path both versions make the same "
                  "calls and operations, with equal arguments, in the same order, and return "
                  "or raise the same (compared without a model of the code; both modules "
                  "were loaded to confirm the names it reads)")
        method = METHOD_RELATIVE
    return Result(Verdict.VERIFIED, Reason.PROOF, detail, assumptions=tuple(assumptions),
                  method=method)


def _callees(
    entry: str, names: tuple[str, ...], callee: Callable[[str], Result] | None
) -> list[str] | None:
    """Each changed callee decided on its own: what the result then rests on, or None
    unless every one is verified."""
    active = _CHECKING.get()
    if callee is None or entry in active or any(n in active for n in names):
        log.debug("relational check of %s: its changed callees are not checked here", entry)
        return None
    token = _CHECKING.set(active | {entry})
    try:
        out: list[str] = []
        for name in names:
            result = callee(name)
            # Only a relational proof holds for whatever the caller passes: a model's proof
            # rests on the callee's parameter types and distinct list arguments, which the
            # caller's calls need not meet (`g(xs, xs)`, a float for an `int`).
            if result.verdict is not Verdict.VERIFIED or result.method not in (
                METHOD, METHOD_RELATIVE
            ):
                log.debug("relational check of %s: the changed callee %s is %s", entry, name,
                          result.verdict.value)
                return None
            out.append(f"`{name}` changed too and was verified ({result.method})")
            out += [f"for `{name}`: {a}" for a in result.assumptions]
        return out
    finally:
        _CHECKING.reset(token)


# How the child shows an object of exactly `object` (a sentinel such as `_marker = object()`).
PLAIN_OBJECT = "<a plain object()>"


def _mismatch(ra: _Report, rb: _Report, context: PairContext | None) -> str | None:
    """Why the loaded modules do not confirm the plan, or None if they do."""
    for label, r in (("before", ra), ("after", rb)):
        if r.failed is not None:
            return f"the {label} version: {r.failed}"
        if r.problems:
            return f"the {label} version: {r.problems[0]}"
    if ra.prints != rb.prints:
        keys = sorted(k for k in ra.prints.keys() | rb.prints.keys()
                      if ra.prints.get(k) != rb.prints.get(k))
        return f"{keys[0]} differs once loaded"
    for key, value in ra.prints.items():
        text = repr(value)
        if key.startswith(("function ", "constant ")) and "'<" in text:
            return f"{key} holds objects that cannot be compared"
        internal = isinstance(value, tuple) and value[-1] is False
        sentinel = (isinstance(value, tuple) and len(value) == 3 and value[1] == PLAIN_OBJECT
                    and key.startswith("chain ")
                    and _unshared_sentinel(key.removeprefix("chain "), context))
        if internal and not sentinel and "'<" in text and not _files_same(context):
            return f"{key} is an object of the project, whose other files changed"
    return None


def _unshared_sentinel(dotted: str, context: PairContext | None) -> bool:
    """Whether the project object at ``dotted`` (found as a bare ``object()`` once loaded)
    is a sentinel no changed code can reach: the project's other files are the same in
    both revisions; the file of its module binds the name once, at module level, by
    ``NAME = object()``, and imports nothing of the module under review; and no file of
    the project assigns an attribute of that name. A bare object has no state and no code,
    so such a sentinel is compared by its identity alone."""
    if context is None or context.before is None or context.after is None:
        return False
    a, b = context.before, context.after
    if dict(a.files) != dict(b.files) or a.left_out or b.left_out:
        return False
    module, _, name = dotted.rpartition(".")
    wanted = (module.replace(".", "/") + ".py", module.replace(".", "/") + "/__init__.py")
    texts = [(path, text) for path, text in a.files
             if any(path == w or path.endswith("/" + w) for w in wanted)]
    if len(texts) != 1:
        return False
    reviewed = a.module.rpartition(".")[2]
    try:
        tree = pysource.parse(texts[0][1])
    except SyntaxError:
        return False
    bindings = _bound_names_anywhere(tree)
    if bindings.count(name) != 1 or "object" in bindings:
        return False
    if not any(isinstance(s, ast.Assign) and len(s.targets) == 1
               and isinstance(s.targets[0], ast.Name) and s.targets[0].id == name
               and isinstance(s.value, ast.Call) and isinstance(s.value.func, ast.Name)
               and s.value.func.id == "object" and not s.value.args and not s.value.keywords
               for s in tree.body):
        return False
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            names = [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            names += [alias.name for alias in node.names]
            # A star import may rebind the name; the module under review may be imported.
            if any(n == "*" or reviewed in n.split(".") for n in names):
                return False
        elif isinstance(node, ast.Name | ast.Attribute) and (
                node.id if isinstance(node, ast.Name) else node.attr) in _REBINDERS:
            return False
    # No file writes the name into a module: as an attribute, or by a string key.
    for _, text in a.files:
        try:
            other = pysource.parse(text)
        except SyntaxError:
            return False
        for n in ast.walk(other):
            if (isinstance(n, ast.Attribute) and n.attr == name
                    and not isinstance(n.ctx, ast.Load)) or (
                    isinstance(n, ast.Constant) and n.value == name):
                return False
    return True


# What binds a module's names other than its statements: a dynamic import (which could
# be of the module under review), its namespace, `setattr`.
_REBINDERS = {"import_module", "__import__", "globals", "vars", "__dict__", "setattr",
              "exec", "eval"}


def _bound_names_anywhere(tree: ast.Module) -> list[str]:
    """Every binding of a name in ``tree``, in any scope, once per binding."""
    return [b for n in ast.walk(tree) for b in _binds(n)] + [
        g for n in ast.walk(tree) if isinstance(n, ast.Global | ast.Nonlocal) for g in n.names]


def _files_same(context: PairContext | None) -> bool:
    """The project's other files are the same in both revisions, and none of them names
    the module under review (through which it could read the names that changed)."""
    if context is None:
        return True
    a, b = context.before, context.after
    if a is None or b is None:
        return a is b
    if dict(a.files) != dict(b.files) or a.left_out or b.left_out:
        return False
    word = re.compile(r"\b" + re.escape(a.module.rpartition(".")[2]) + r"\b")
    return not any(word.search(text) for _, text in a.files)
