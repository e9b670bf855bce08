"""What one version of a module offers the executor: functions, constants, import-time code."""

from __future__ import annotations

import ast
import builtins
from collections import Counter
from contextlib import suppress
from dataclasses import dataclass

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
    tampering: int | None = None  # line of module-level code that may rewrite definitions

    @staticmethod
    def of(tree: ast.Module) -> Module:
        # Every binding of every name, anywhere in the module (function bodies too: a
        # `global` there rebinds a module name; a local of the same name only makes this
        # more conservative). A function or constant must be bound exactly once.
        bindings: Counter[str] = Counter()
        for n in ast.walk(tree):
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store | ast.Del):
                bindings[n.id] += 1
            elif isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                bindings[n.name] += 1
            elif isinstance(n, ast.alias):
                bindings[(n.asname or n.name).split(".")[0]] += 1
        functions: dict[str, ast.FunctionDef] = {}
        constants: dict[str, object] = {}
        star = False
        imports: list[str] = []
        active: list[int] = []
        tampering: int | None = None
        for node in tree.body:
            if isinstance(node, ast.Import | ast.ImportFrom):
                imports.append(ast.unparse(node))
                star = star or any(a.name == "*" for a in node.names)
            elif not _inert(node):
                active.append(node.lineno)
                if tampering is None and _tampers(node):
                    tampering = node.lineno
            if isinstance(node, ast.FunctionDef) and bindings[node.name] == 1:
                functions[node.name] = node
            elif (
                isinstance(node, ast.Assign)
                and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name)
                and bindings[node.targets[0].id] == 1
            ):
                with suppress(ValueError):
                    constants[node.targets[0].id] = ast.literal_eval(node.value)
        rebound = frozenset(
            name
            for name in bindings
            if (name not in functions and name not in constants)
            or name in MODELLED_BUILTINS
            or name in BUILTIN_EXCEPTIONS
        )
        return Module(
            functions, constants, rebound, star, tuple(imports), tuple(active), tampering
        )

_TAMPERING_NAMES = {
    "exec", "eval", "compile", "setattr", "delattr", "globals", "vars", "locals",
    "__import__", "builtins", "__builtins__", "sys", "importlib", "inspect", "types",
}  # fmt: skip

def _tampers(node: ast.stmt) -> bool:
    """Whether module-level code may rewrite functions, constants or builtins in place.

    Binding a plain name is visible statically (the name stops being a constant); writes
    through attributes or subscripts, ``del``, ``global`` and the reflective builtins are
    not, so they make every proof in the module unsupported.
    """
    for sub in ast.walk(node):
        if isinstance(sub, ast.Attribute | ast.Subscript) and isinstance(
            sub.ctx, ast.Store | ast.Del
        ):
            return True
        if isinstance(sub, ast.Delete | ast.Global | ast.Nonlocal):
            return True
        if isinstance(sub, ast.Name) and sub.id in _TAMPERING_NAMES:
            return True
        if isinstance(sub, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) and (
            sub.decorator_list
        ):
            return True
    return False

def _inert(node: ast.stmt) -> bool:
    """Module-level code that defines things without running anything of its own."""
    if isinstance(node, ast.FunctionDef):
        return not node.decorator_list and all(
            d is None or isinstance(d, ast.Constant) for d in node.args.defaults
        )
    if isinstance(node, ast.Expr):
        return isinstance(node.value, ast.Constant)
    if isinstance(node, ast.Assign | ast.AnnAssign):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        if not all(isinstance(t, ast.Name) for t in targets):
            return False  # X.attr = ..., X[k] = ... change other objects at import
        value = node.value
        if value is None:
            return True
        try:
            ast.literal_eval(value)
        except ValueError:
            return False
        return True
    if isinstance(node, ast.ClassDef):
        return (
            not node.decorator_list
            and not node.keywords
            and all(isinstance(b, ast.Name) for b in node.bases)
            and all(_inert(s) for s in node.body)
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
