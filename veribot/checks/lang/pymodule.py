"""What one version of a module offers the executor: functions, constants, import-time code."""

from __future__ import annotations

import ast
import builtins
from collections import Counter
from collections.abc import Iterator
from contextlib import suppress
from dataclasses import dataclass, field

# Exceptions a `raise` may name without a class definition in the module.
BUILTIN_EXCEPTIONS = {
    name
    for name, obj in vars(builtins).items()
    if isinstance(obj, type) and issubclass(obj, BaseException)
}
MODELLED_BUILTINS = {
    "len", "abs", "min", "max", "sum", "range", "enumerate", "list", "tuple", "bool",
    "int", "float", "any", "all", "isinstance", "print",
}  # fmt: skip


@dataclass(frozen=True)
class Module:
    """What the executor may use from the module: its functions and constant globals."""

    functions: dict[str, ast.FunctionDef]
    constants: dict[str, object]
    rebound: frozenset[str]  # module-level names that shadow builtins or are not constants
    star_import: bool = False  # `from m import *` may shadow any builtin
    imports: tuple[str, ...] = ()  # the module's import statements, as source text
    active_code: tuple[int, ...] = ()  # lines of module-level code that run at import
    lines: dict[str, int] = field(default_factory=dict)  # where each function/constant is bound
    # Line of module-level code that runs this module's own functions or classes at import
    # (a call, a decorator, a class hook): only loading the module shows what it does.
    runs_own_code: int | None = None

    @staticmethod
    def of(tree: ast.Module) -> Module:
        # Every binding of every name, anywhere in the module (function bodies too: a
        # `global` there rebinds a module name; a local of the same name only makes this
        # more conservative). A function or constant must be bound exactly once.
        bindings = _bindings(tree)
        stubs = overload_stubs(tree)
        # `from m import *` may bind any name, at its line: no name is a known constant.
        star = any(
            isinstance(n, ast.ImportFrom) and any(a.name == "*" for a in n.names)
            for n in ast.walk(tree)
        )
        # Names that may hold this module's own code (functions, classes, lambdas, what a
        # call returned): every name bound in it, except by an import or to a literal.
        imported_only = {
            (a.asname or a.name).split(".")[0]
            for n in ast.walk(tree) if isinstance(n, ast.Import | ast.ImportFrom)
            for a in n.names
        }
        own = {
            name for name in bindings
            if name not in imported_only or bindings[name] > 1
        } - {
            t.id
            for n in tree.body if isinstance(n, ast.Assign) and _literal(n.value)
            for t in n.targets if isinstance(t, ast.Name) and bindings[t.id] == 1
        }
        functions: dict[str, ast.FunctionDef] = {}
        constants: dict[str, object] = {}
        lines: dict[str, int] = {}
        imports: list[str] = []
        active: list[int] = []
        runs_own: int | None = None
        names = _Names(
            bindings,
            {
                (a.asname or a.name).split(".")[0]: node.lineno
                for node in tree.body
                if isinstance(node, ast.Import | ast.ImportFrom)
                for a in node.names
                if bindings[(a.asname or a.name).split(".")[0]] == 1
            },
            any(
                isinstance(n, ast.ImportFrom)
                and n.module == "__future__"
                and any(a.name == "annotations" for a in n.names)
                for n in tree.body
            ),
        )
        for node in tree.body:
            if isinstance(node, ast.Import | ast.ImportFrom):
                imports.append(ast.unparse(node))
            elif not _inert(node, names):
                active.append(node.lineno)
                if runs_own is None and _runs_own_code(node, own):
                    runs_own = node.lineno
            if isinstance(node, ast.FunctionDef) and bindings[node.name] == 1 and (
                id(node) not in stubs
            ):
                functions[node.name] = node
                lines[node.name] = node.lineno
            elif (
                isinstance(node, ast.Assign)
                and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name)
                and bindings[node.targets[0].id] == 1
                and not star
            ):
                with suppress(ValueError):
                    constants[node.targets[0].id] = ast.literal_eval(node.value)
                    lines[node.targets[0].id] = node.lineno
        rebound = frozenset(
            name
            for name in bindings
            if (name not in functions and name not in constants)
            or name in MODELLED_BUILTINS
            or name in BUILTIN_EXCEPTIONS
        )
        return Module(
            functions, constants, rebound, star, tuple(imports), tuple(active),
            lines, runs_own,
        )


def _bindings(tree: ast.Module) -> Counter[str]:
    """How often each name is bound anywhere in the module, in any binding form.

    Function bodies count too: a `global` there rebinds a module name (a local of the same
    name only makes this more conservative). Every form Python has: assignment targets of
    all kinds (for, with, walrus, del, augmented, annotated, comprehensions), definitions,
    imports, `except ... as`, `match` capture patterns, and `global` declarations.
    """
    bindings: Counter[str] = Counter()
    stubs = overload_stubs(tree)
    for n in ast.walk(tree):
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store | ast.Del):
            bindings[n.id] += 1
        elif isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            if id(n) not in stubs:
                bindings[n.name] += 1
        elif isinstance(n, ast.alias):
            bindings[(n.asname or n.name).split(".")[0]] += 1
        elif isinstance(n, ast.ExceptHandler | ast.MatchAs | ast.MatchStar) and n.name:
            bindings[n.name] += 1
        elif isinstance(n, ast.MatchMapping) and n.rest:
            bindings[n.rest] += 1
        elif isinstance(n, ast.Global):
            for name in n.names:
                bindings[name] += 1
    return bindings


_TYPING = ("typing", "typing_extensions")


def overload_stubs(tree: ast.Module, body: list[ast.stmt] | None = None) -> set[int]:
    """The top-level ``@typing.overload`` definitions (by ``id``): each is replaced by the
    next definition of its name, so only the last, undecorated one is the function. With
    ``body`` (a class's), those among its statements.

    ``overload`` must be typing's: imported from ``typing`` (or ``typing_extensions``)
    or reached through the module, and bound nowhere else in the module.
    """
    imports: Counter[str] = Counter()
    plain: set[str] = set()  # names bound to typing.overload
    modules: set[str] = set()  # names bound to the typing module
    for n in ast.walk(tree):
        if isinstance(n, ast.ImportFrom) and n.module in _TYPING and n.level == 0:
            plain |= {a.asname or a.name for a in n.names if a.name == "overload"}
        elif isinstance(n, ast.Import):
            modules |= {a.asname or a.name for a in n.names if a.name in _TYPING}
    for n in ast.walk(tree):  # every binding of those names, to see that there is one
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store | ast.Del):
            imports[n.id] += 1
        elif isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            imports[n.name] += 1
        elif isinstance(n, ast.alias):
            imports[n.asname or n.name.split(".")[0]] += 1
        elif isinstance(n, ast.arg):
            imports[n.arg] += 1
        elif isinstance(n, ast.Global):
            imports.update(n.names)
    star = any(isinstance(n, ast.ImportFrom) and any(a.name == "*" for a in n.names)
               for n in ast.walk(tree))
    if star:
        return set()
    plain = {p for p in plain if imports[p] == 1}
    modules = {m for m in modules if imports[m] == 1}

    def is_overload(d: ast.expr) -> bool:
        if isinstance(d, ast.Name):
            return d.id in plain
        return (
            isinstance(d, ast.Attribute) and d.attr == "overload"
            and isinstance(d.value, ast.Name) and d.value.id in modules
        )

    # A stub after the last real definition is what the name holds: it is not skipped.
    stubs: set[int] = set()
    defined: set[str] = set()
    for node in reversed(tree.body if body is None else body):
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        if len(node.decorator_list) == 1 and is_overload(node.decorator_list[0]):
            if node.name in defined:
                stubs.add(id(node))
        else:
            defined.add(node.name)
    return stubs


# Class attributes Python calls by itself when a class is defined, subclassed or
# subscripted: a class that defines one runs its own code at import.
_CLASS_HOOKS = {
    "__init_subclass__", "__class_getitem__", "__set_name__", "__mro_entries__",
    "__prepare__",
}  # fmt: skip

def _runs_own_code(node: ast.stmt, own: set[str]) -> bool:
    """Whether module-level code may run a function or class defined in this module.

    Subclassing one of the module's classes runs nothing of its own unless a class
    defines a hook, which counts where it is defined.
    """
    bases = {
        id(b) for sub in ast.walk(node) if isinstance(sub, ast.ClassDef) for b in sub.bases
    }
    for sub in _at_import(node):
        if (
            isinstance(sub, ast.Name)
            and isinstance(sub.ctx, ast.Load)
            and sub.id in own
            and id(sub) not in bases
        ):
            return True
        if isinstance(sub, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) and (
            sub.decorator_list
        ):
            return True
        if isinstance(sub, ast.ClassDef) and (
            sub.keywords or any(_defines(s, _CLASS_HOOKS) for s in sub.body)
        ):
            return True
    return False


def _literal(node: ast.expr) -> bool:
    try:
        ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False
    return True


def _at_import(node: ast.AST) -> Iterator[ast.AST]:
    """The nodes of ``node`` that run when the module is imported: not function bodies."""
    stack: list[ast.AST] = [node]
    while stack:
        n = stack.pop()
        yield n
        if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            a = n.args
            stack.extend(a.defaults)
            stack.extend(d for d in a.kw_defaults if d is not None)
            if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef):
                stack.extend(n.decorator_list)
                params = (*a.posonlyargs, *a.args, a.vararg, *a.kwonlyargs, a.kwarg)
                stack.extend(p.annotation for p in params if p is not None and p.annotation)
                if n.returns is not None:
                    stack.append(n.returns)
        else:
            stack.extend(ast.iter_child_nodes(n))


def _defines(stmt: ast.stmt, names: set[str]) -> bool:
    if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return stmt.name in names
    if isinstance(stmt, ast.Assign):
        return any(isinstance(t, ast.Name) and t.id in names for t in stmt.targets)
    return isinstance(stmt, ast.AnnAssign) and (
        isinstance(stmt.target, ast.Name) and stmt.target.id in names
    )

# Names whose value in an annotation or as a base class is known without running code.
_PLAIN_TYPES = {
    "int", "bool", "float", "str", "bytes", "complex", "list", "tuple", "dict", "set",
    "frozenset", "object", "type", "None",
}  # fmt: skip

@dataclass(frozen=True)
class _Names:
    """What the static reader knows of the module's names, for judging definitions."""

    bindings: Counter[str]
    imported: dict[str, int]  # names bound once, by a top-level import at that line
    lazy_annotations: bool  # `from __future__ import annotations`: never evaluated


def _plain_annotation(node: ast.expr | None, names: _Names, line: int = 0) -> bool:
    """An annotation whose evaluation at definition time runs no module code, cannot fail."""
    if node is None or isinstance(node, ast.Constant) or names.lazy_annotations:
        return True
    if isinstance(node, ast.Name):
        if node.id in names.imported:
            return names.imported[node.id] < line
        return node.id in _PLAIN_TYPES and names.bindings[node.id] == 0
    if isinstance(node, ast.Subscript):
        parts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        return _plain_annotation(node.value, names, line) and all(
            _plain_annotation(p, names, line) for p in parts
        )
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return _plain_annotation(node.left, names, line) and _plain_annotation(
            node.right, names, line
        )
    return False


# Base classes that run no code of the module's when subclassed (not rebound there).
_SAFE_BASES = {"object", "Exception"} | BUILTIN_EXCEPTIONS


def _inert(node: ast.stmt, names: _Names) -> bool:
    """Module-level code that defines things without running anything of its own.

    Annotations count: without `from __future__ import annotations` they are evaluated
    when the `def` runs (a bad one makes the import fail), so only plain builtin types
    are inert here.
    """
    if isinstance(node, ast.FunctionDef):
        a = node.args
        return (
            not node.decorator_list
            and all(d is None or isinstance(d, ast.Constant) for d in a.defaults)
            and all(d is None or isinstance(d, ast.Constant) for d in a.kw_defaults)
            and all(
                _plain_annotation(p.annotation, names, node.lineno)
                for p in (*a.posonlyargs, *a.args, a.vararg, *a.kwonlyargs, a.kwarg)
                if p is not None
            )
            and _plain_annotation(node.returns, names, node.lineno)
        )
    if isinstance(node, ast.Expr):
        return isinstance(node.value, ast.Constant)
    if isinstance(node, ast.Assign | ast.AnnAssign):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        if not all(isinstance(t, ast.Name) for t in targets):
            return False  # X.attr = ..., X[k] = ... change other objects at import
        if isinstance(node, ast.AnnAssign) and not _plain_annotation(
            node.annotation, names, node.lineno
        ):
            return False
        value = node.value
        if value is None:
            return True
        try:
            ast.literal_eval(value)
        except ValueError:
            return False
        return True
    if isinstance(node, ast.ClassDef):
        # One base at most: several can conflict (layout, method order) at import.
        return (
            not node.decorator_list
            and not node.keywords
            and len(node.bases) <= 1
            and all(isinstance(b, ast.Name) and b.id in _SAFE_BASES for b in node.bases)
            and not any(names.bindings[b.id] for b in node.bases if isinstance(b, ast.Name))
            and not any(_defines(s, _CLASS_HOOKS) for s in node.body)
            and all(_inert(s, names) for s in node.body)
        )
    if isinstance(node, ast.If):  # `if __name__ == "__main__":` does not run on import
        test = node.test
        return (
            isinstance(test, ast.Compare)
            and isinstance(test.left, ast.Name)
            and test.left.id == "__name__"
            and len(test.comparators) == 1
            and isinstance(test.comparators[0], ast.Constant)
            and test.comparators[0].value == "__main__"
            and isinstance(test.ops[0], ast.Eq)
            and not node.orelse
        )
    return isinstance(node, ast.Pass)
