"""A change in a module's import statements: whether it can matter to one function.

The model never reads what an import binds (a call of an imported function is outside
it); what imports can change is what runs when the module is imported. Two versions
whose import statements differ are compared here: they must run the same modules in the
same order, and the names whose binding differs must not be read by the function under
review (nor by what it calls) in either version. Then the only difference is a name
nothing the proof covers reads (``from math import comb, factorial`` becoming ``from
math import comb``, where the function does not use ``factorial``).

What runs: ``import a.b`` runs ``a`` then ``a.b``; ``from m import x`` runs ``m``, and
``m.x`` too when ``m`` may be a package and ``x`` one of its submodules. A module of the
standard library that is not a package has no submodules; any other module (the
project's own, a relative import, a third-party one) may have. ``from m import *`` runs
``m`` and binds names no reading can list: it is compared as it is.
"""

from __future__ import annotations

import ast
import sys

# The standard library's packages (Python 3.11, where some are installed): their
# submodules run code when a `from p import sub` first imports them.
_STDLIB_PACKAGES = frozenset({
    "asyncio", "collections", "concurrent", "ctypes", "curses", "dbm", "distutils",
    "email", "encodings", "ensurepip", "html", "http", "idlelib", "importlib", "json",
    "lib2to3", "logging", "msilib", "multiprocessing", "pydoc_data", "re", "sqlite3",
    "test", "tkinter", "tomllib", "turtledemo", "unittest", "urllib", "venv", "wsgiref",
    "xml", "xmlrpc", "zoneinfo",
})  # fmt: skip


def runs(tree: ast.Module) -> tuple[str, ...]:
    """The modules the module-level imports may run, in order, each once (``m.x?``: the
    submodule ``x`` of ``m``, if it is one)."""
    seen: list[str] = []

    def add(name: str) -> None:
        if name not in seen:
            seen.append(name)

    for node in tree.body:
        if isinstance(node, ast.Import):
            for a in node.names:
                parts = a.name.split(".")
                for n in range(1, len(parts) + 1):
                    add(".".join(parts[:n]))
        elif isinstance(node, ast.ImportFrom):
            base = "." * node.level + (node.module or "")
            if node.module:
                parts = node.module.split(".")
                for n in range(1, len(parts) + 1):
                    add("." * node.level + ".".join(parts[:n]))
            else:
                add(base)
            sep = "." if node.module else ""
            for a in node.names:
                if a.name == "*":
                    add(f"{base}{sep}*")
                elif _may_have_submodules(node):
                    add(f"{base}{sep}{a.name}?")
    return tuple(seen)


def _may_have_submodules(node: ast.ImportFrom) -> bool:
    module = node.module or ""
    if node.level or not module:
        return True
    top = module.split(".")[0]
    return top not in sys.stdlib_module_names or top in _STDLIB_PACKAGES


def bindings(tree: ast.Module) -> dict[str, str]:
    """The names module-level imports bind, each with what it binds it to."""
    found: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.Import):
            for a in node.names:
                name = a.asname or a.name.split(".")[0]
                found[name] = a.name if a.asname else a.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom):
            base = "." * node.level + (node.module or "")
            for a in node.names:
                found[a.asname or a.name] = f"{base}:{a.name}"
    return found


def change(tree_a: ast.Module, tree_b: ast.Module, reads: set[str]) -> str | None:
    """Why the imports of the two versions may make the function differ, or None.

    ``reads``: the names the function and what it calls read, in either version."""
    if runs(tree_a) != runs(tree_b):
        return "the imports run other modules, or in another order"
    if _future(tree_a) != _future(tree_b):
        return "another `from __future__` feature, which changes how the module compiles"
    read = [n for n in changed_names(tree_a, tree_b) if n in reads]
    if read:
        return f"`{read[0]}`, which the function reads, is imported otherwise"
    return None


def _future(tree: ast.Module) -> set[str]:
    return {a.name for n in tree.body if isinstance(n, ast.ImportFrom)
            and n.module == "__future__" for a in n.names}


def changed_names(tree_a: ast.Module, tree_b: ast.Module) -> list[str]:
    """The names the two versions' imports bind differently."""
    a, b = bindings(tree_a), bindings(tree_b)
    return sorted(n for n in a.keys() | b.keys() if a.get(n) != b.get(n))
