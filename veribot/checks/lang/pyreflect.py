"""Reflection: how a module's code may reach what none of its names shows.

Two things a module can do after import change what *any* of its functions computes,
whatever names they read: install an interpreter-wide hook (a trace or profile function
jumps over lines or raises inside them; an audit hook, a warnings filter, a signal
handler, a decimal context, the recursion limit make them raise or compute otherwise),
or run code given as text (``exec``, ``eval``, ``compile``). ``hook`` finds module code
that may do either:

- a *mention* of a hook (``settrace``, ``setprofile``, ``breakpoint`` ...): as a name, an
  attribute, an imported name, or a word of a string (``"sys.settrace"``); an import of a
  module that runs code it is given as data (``pickle``, ``marshal``, ``pdb``, ...); a
  lookup of a code runner by a literal key (``globals()["__builtins__"]``,
  ``getattr(b, "eval")``), or a ``b.exec``/``b.eval`` attribute where the module may hold
  the builtins module (``print.__self__`` is one);
- a *computed access* of one (``pylookups``): a lookup by a computed name, or a read of a
  namespace by a computed key or wholesale, that none of the exceptions there lets through.

What is left out, knowingly: standard-library functions that resolve a name given as
data beyond those named here (``pkgutil.resolve_name`` is; ``string.Formatter.get_field``
is not), and code objects built from bytes (``f.__code__.replace(co_code=...)``).
"""

from __future__ import annotations

import ast
import builtins
from collections.abc import Iterator

from veribot.checks.lang.pylookups import (
    CODE_RUNNERS,
    INTERPRETER_HOOKS,
    KEY_READS,
    RESOLVERS,
    Found,
    called,
    computed,
    lookup_keys,
)

__all__ = ["Found", "hook", "module_blind"]

# Keys that reach a code runner when looked up by name (`__import__` only imports).
_RUNNER_KEYS = CODE_RUNNERS - {"__import__"}
# Attributes that are code runners when read on the builtins module (`re.compile` is not).
_RUNNER_ATTRS = {"exec", "eval", "compile"}
# Modules that run code they are given as data (bytes, a name, a file, a debugger command).
_CODE_MODULES = {"pickle", "_pickle", "marshal", "shelve", "runpy", "code", "codeop",
                 "pydoc", "pdb", "bdb"}
# Lookup functions that are harmless only where called directly: passed on, they look up
# whatever name they are given.
_LOOKUP_VALUES = {"attrgetter", "methodcaller", "getattr_static", "__getattr__"}
# Every attribute of an object at once, values included.
_WHOLESALE = {"getmembers", "getmembers_static"}


# Builtins that read the caller's namespace or frame, or make an object carrying the
# caller module's name (`type(n, b, d)` takes its `__module__` from the caller's globals).
_SEES_CALLER = {"globals", "vars", "locals", "dir", "eval", "exec", "compile", "__import__",
                "breakpoint", "help", "type", "super", "__build_class__", "getattr"}
# Attributes that reach frames and code objects (a generator's frame holds the module's
# globals) or read attributes by names in text (`"{0.__traceback__}".format(e)`).
_FRAME_PREFIXES = ("f_", "gi_", "cr_", "ag_", "tb_", "co_")
_FORMATS = {"format", "format_map"}


def module_blind(tree: ast.Module, entry: str) -> bool:
    """Whether the function ``entry`` (a plain function at module level) can observe
    nothing of its module, and so not its name: it reads no name of the module, no
    dunder, no builtin of ``_SEES_CALLER``, no attribute of a frame or code object, does
    not format by attribute names in text, defines no function or class (each carries
    the module's name, `__module__`), and the module binds no name by `import *`. Only
    what it is handed reaches it, and the builtins. A method is never blind (its object's
    class is the module's)."""
    if "." in entry:
        return False
    node = next((n for n in reversed(tree.body) if isinstance(
        n, ast.FunctionDef | ast.AsyncFunctionDef) and n.name == entry), None)
    if node is None or any(isinstance(n, ast.ImportFrom) and any(
            a.name == "*" for a in n.names) for n in ast.walk(tree)):
        return False
    outside = _module_scope_names(tree) | {node.name}
    local = {n.arg for n in ast.walk(node.args) if isinstance(n, ast.arg)} | {
        n.id for n in ast.walk(node) if isinstance(n, ast.Name)
        and not isinstance(n.ctx, ast.Load)}
    for n in ast.walk(node):
        if n is not node and isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda
                                        | ast.ClassDef | ast.Global | ast.Nonlocal):
            return False
        if isinstance(n, ast.Attribute) and (n.attr.startswith(("__", *_FRAME_PREFIXES))
                                             or n.attr in _FORMATS):
            return False
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and (
                n.id in outside or n.id.startswith("__") or n.id in _SEES_CALLER
                or not (n.id in local or hasattr(builtins, n.id))):
            return False
    return not node.decorator_list


def _module_scope_names(tree: ast.Module) -> set[str]:
    """The names bound in the module's namespace: at module level (in no function, class
    body or comprehension), and those a function declares `global`."""
    found: set[str] = {g for n in ast.walk(tree) if isinstance(n, ast.Global) for g in n.names}
    todo: list[ast.AST] = list(tree.body)
    while todo:
        n = todo.pop()
        if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            found.add(n.name)
            todo.extend([*n.decorator_list, *getattr(n, "bases", [])])
            continue
        if isinstance(n, ast.Lambda):
            continue
        if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load):
            found.add(n.id)
        elif isinstance(n, ast.alias):
            found.add((n.asname or n.name).split(".")[0])
        elif isinstance(n, ast.MatchAs | ast.MatchStar) and n.name:
            found.add(n.name)
        elif isinstance(n, ast.MatchMapping) and n.rest:
            found.add(n.rest)
        elif isinstance(n, ast.ExceptHandler) and n.name:
            found.add(n.name)
        todo.extend(ast.iter_child_nodes(n))
    return found


def hook(tree: ast.Module, bound: set[str], module_bound: set[str]) -> Found | None:
    """The first code of ``tree`` that may install an interpreter-wide hook or run code
    given as text (see above). ``bound``: the names the module binds anywhere (a call of
    one may not be the builtin); ``module_bound``: those bound at module level (elsewhere
    a free name is the builtin)."""
    return _mention(tree, bound) or computed(tree, bound, module_bound)


def _mention(tree: ast.Module, bound: set[str]) -> Found | None:
    """A hook, a code runner or a resolver named in the text (see above)."""
    parents = {id(c): n for n in ast.walk(tree) for c in ast.iter_child_nodes(n)}
    builtins_reachable = _holds_builtins(tree)
    for node in ast.walk(tree):
        line = getattr(node, "lineno", 0)
        words: set[str] = set()
        if isinstance(node, ast.Name):
            words = {node.id}
        elif isinstance(node, ast.Attribute):
            words = {node.attr}
        elif isinstance(node, ast.alias):
            words = {node.name.rsplit(".", 1)[-1]}
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and not (
            isinstance(parents.get(id(node)), ast.Expr)  # a docstring or a bare string
        ):
            words = set(_words(node.value))
        hit = sorted(words & INTERPRETER_HOOKS)
        if hit:
            return Found(f"`{hit[0]}`, an interpreter-wide hook that may change what any "
                         "function does", line)
        if words & (RESOLVERS | _WHOLESALE):
            return Found(f"`{sorted(words & (RESOLVERS | _WHOLESALE))[0]}`, which looks "
                         "objects up by names given as data", line)
        if isinstance(node, ast.Import | ast.ImportFrom):
            modules = ([a.name for a in node.names] if isinstance(node, ast.Import)
                       else [node.module or ""])
            for m in modules:
                if m.split(".")[0] in _CODE_MODULES:
                    return Found(f"an import of `{m}`, which runs code it is given as data",
                                 line)
            if isinstance(node, ast.ImportFrom) and any(
                a.name in _LOOKUP_VALUES and a.asname not in (None, a.name)
                for a in node.names
            ):
                return Found("a lookup function imported under another name", line)
        if isinstance(node, ast.Constant) and node.value == "__builtins__":
            return Found("`__builtins__` named in a string", line)
        if isinstance(node, ast.Attribute) and node.attr in _RUNNER_ATTRS and (
            builtins_reachable and not _imported_module(node.value, tree, "builtins",
                                                        parents)
        ):
            return Found(f"`.{node.attr}` where the module may hold the builtins module",
                         line)
        if isinstance(node, ast.Name | ast.Attribute) and (
            (node.id if isinstance(node, ast.Name) else node.attr) in _LOOKUP_VALUES
        ) and isinstance(node.ctx, ast.Load) and not called(node, parents):
            name = node.id if isinstance(node, ast.Name) else node.attr
            return Found(f"`{name}` used other than in a direct call", line)
        if isinstance(node, ast.Call):
            keys = lookup_keys(node) or []
            if isinstance(node.func, ast.Attribute) and node.func.attr in KEY_READS:
                keys = node.args[:1]
            for key in keys:
                if isinstance(key, ast.Constant) and key.value in _RUNNER_KEYS:
                    return Found(f"a lookup of `{key.value}` by name", line)
        if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) and (
            node.slice.value in _RUNNER_KEYS
        ):
            return Found(f"a lookup of `{node.slice.value}` by key", line)
    return None


def _words(text: str) -> Iterator[str]:
    """The names a string may be looked up as: its parts between dots and colons that are
    identifiers (``"sys.settrace"``, ``"sys:settrace"``: ``sys``, ``settrace``)."""
    for part in text.replace(":", ".").split("."):
        if part.isidentifier():
            yield part


def _holds_builtins(tree: ast.Module) -> bool:
    """Whether the module may get hold of the builtins module, by import or reflection."""
    for n in ast.walk(tree):
        if isinstance(n, ast.alias) and n.name.split(".")[0] in ("builtins", "importlib"):
            return True
        text = n.id if isinstance(n, ast.Name) else (
            n.attr if isinstance(n, ast.Attribute) else (
                n.value if isinstance(n, ast.Constant) else None))
        if isinstance(text, str) and (
            "builtins" in text or text in ("__self__", "__globals__", "modules",
                                           "import_module", "__import__")
        ):
            return True
        if isinstance(n, ast.Call) and (lookup_keys(n) or []) and not all(
            isinstance(k, ast.Constant) for k in lookup_keys(n) or []
        ):
            return True
    return False


def _imported_module(node: ast.expr, tree: ast.Module, but: str,
                     parents: dict[int, ast.AST]) -> bool:
    """Whether ``node`` is a name bound once, by ``import m``, to a module other than
    ``but`` (``re.compile`` is not the builtin). A method or nested class of that name
    binds an attribute of its class, which a function's code does not see: it does not
    count where ``node`` is in a function."""
    if not isinstance(node, ast.Name):
        return False
    in_function = False
    at = parents.get(id(node))
    while at is not None and not in_function:
        in_function = isinstance(at, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda)
        at = parents.get(id(at))
    bindings = [n for n in ast.walk(tree) if (
        isinstance(n, ast.Name) and n.id == node.id and not isinstance(n.ctx, ast.Load)
    ) or (isinstance(n, ast.alias) and (n.asname or n.name).split(".")[0] == node.id) or (
        isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
        and n.name == node.id
        and not (in_function and isinstance(parents.get(id(n)), ast.ClassDef))
    ) or (isinstance(n, ast.arg) and n.arg == node.id)]
    if len(bindings) != 1 or not isinstance(bindings[0], ast.alias):
        return False
    alias = bindings[0]
    imports = [n for n in ast.walk(tree) if isinstance(n, ast.Import) and alias in n.names]
    return bool(imports) and alias.name.split(".")[0] != but
