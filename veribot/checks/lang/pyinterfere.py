"""What code of a module can change, after import, the function under review or its names.

A proof models the function as written and the module-level names it reads as the static
reader saw them (``pymodule``). What import-time code does is checked by loading the module
(``modulecheck``); this module finds, statically, code that can change them later, at
call time: anywhere in the module, since other code may call it before the function.

The check is scoped to the function: it and the module's functions and classes it names,
transitively (its *closure*), read a set of free names (module-level names and builtins).
Code anywhere in the module blocks a proof only if it can

- rebind one of those names or patch a function: a ``global`` declaration of the name;
  an attribute write of that name (``mod.K = 3``, ``setattr(m, "K", 3)``,
  ``m.__setattr__("K", 3)``; a builtin's name only where the module can reach the
  ``builtins`` module); a ``setattr`` with a computed name or passed around; a write to a
  function's or object's state (``__code__``, ``__defaults__``, ``__dict__``,
  ``__class__``, ``cell_contents``), or to another dunder of a name the closure reads;
  any use of ``__defaults__`` or ``__kwdefaults__`` (their contents change in place); an
  attribute write named like a *member* of a class in the closure (a method, property,
  nested class or other value its body binds that may be a descriptor), on any object
  that may be an instance of it (an instance attribute hides the member: ``obj.helper =
  f``); an attribute write named like other data of those classes (what their bodies bind,
  or any attribute the closure reads) on an object that may be a class: not on a method's
  ``self``, a parameter annotated with a class of the module (an instance, as the
  annotation says: an assumption of the verdict), an exception bound by ``except``, a
  function the code defines, or an imported module; nor a write of a literal, display or
  comprehension (never a descriptor) of a name no class of the closure binds; but always
  a write of a class's own data through ``cls`` in a classmethod;
- write through a reflective view of a namespace: ``globals()``, ``vars()``,
  ``sys.modules``, ``__dict__``, ``__globals__``, a frame's ``f_globals`` (also reached
  by ``getattr`` with that or a computed name), used as the target of a write, the
  receiver of a method other than a read, an argument of a call that may keep it, a
  returned value, or through a name aliased to it; or run code given as text (``exec``,
  ``eval``, ``compile``, ``__import__`` other than of a literal name) or poke memory
  (``ctypes``, ``gc``);
- change a mutable module-level object the closure reads (a list, dict or set bound to a
  literal): any use of it other than a read (indexing, ``in``, iteration, a read-only
  method, a builtin that only reads; an iterator over it only where a loop consumes it;
  an operand of an operator only where the module defines no operand hook such as
  ``__eq__`` or ``__radd__``), or any use at all if it holds mutable items.

- install an interpreter-wide hook or run code given as text, anywhere in the module
  (``pyreflect``: a mention of a hook, or a lookup by a computed name or key that may
  reach one).

Writes to attributes of a method's ``self`` or ``cls`` are taken to be on an instance or
class, never on a module. A base class outside the module is taken not to derive from a
class of the module (it would have to import it). Uses of ``sys``, decorators on other
functions (import-time code, which the loaded module is checked for) and writes to names
the closure does not read do not matter.
"""

from __future__ import annotations

import ast
import builtins
import threading
from collections import Counter, OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

from veribot.checks.lang import pylookups, pyreflect
from veribot.checks.lang.pylookups import CODE_RUNNERS as _CODE_RUNNERS
from veribot.checks.lang.pylookups import REFLECTIVE_ATTRS as _REFLECTIVE_ATTRS
from veribot.checks.lang.pymodule import Module

# Attributes whose change alters what a call of any function does (or reaches its
# globals, or an object's class); other dunders count when written on a name the
# function reads (`C.__eq__ = ...`).
_FUNCTION_STATE = {
    "__code__", "__defaults__", "__kwdefaults__", "__dict__", "__class__", "__globals__",
    "__closure__", "__builtins__", "cell_contents",
}  # fmt: skip
# A function's defaults: a dict, and a tuple whose items may be mutable.
_DEFAULTS = {"__defaults__", "__kwdefaults__"}
# Attributes no call reads: a write to one, even on this module, changes no behaviour.
_SAFE_DUNDERS = {"__doc__", "__name__", "__qualname__", "__module__"}
_POKING_MODULES = {"ctypes", "gc"}
# What of `gc` cannot reach other objects (`gc.get_referrers` finds a module's globals).
_GC_SAFE = {"collect", "enable", "disable", "isenabled", "get_count", "get_threshold",
            "set_threshold", "freeze", "unfreeze", "get_freeze_count", "get_stats"}
# Methods that only read a mapping (globals(), a module's __dict__).
READ_METHODS = {"get", "keys", "values", "items", "copy", "__contains__", "__getitem__"}
# Builtins that neither keep nor change their arguments.
_READ_CALLS = {
    "len", "isinstance", "issubclass", "hasattr", "repr", "str", "bool", "id", "type",
    "sorted", "print", "callable",
}  # fmt: skip



@dataclass(frozen=True)
class Interference:
    """Code that can change the function under review, or what it reads, after import."""

    what: str
    line: int


ANNOTATED_INSTANCE = (
    "code of the module that writes an attribute of a parameter annotated with a class of "
    "the module writes it on an instance of that class, as the annotation says, not on "
    "the class"
)


HELD_INSTANCE = (
    "an attribute of `self` that the module's code only ever sets to an instance of one of "
    "its classes (or None) holds such an instance where the module writes through it: code "
    "outside the module sets it to nothing else"
)


# The last answers, by tree and entry (the relational check and the proof ask alike); the
# tree is kept with its answer, so that its id is not reused while the entry is here.
_ANSWERS: OrderedDict[tuple[int, str], tuple[ast.Module, Interference | None,
                                              tuple[str, ...]]] = OrderedDict()
_ANSWERS_LOCK = threading.Lock()


def interference(
    tree: ast.Module, module: Module | None, entry: str, notes: list[str] | None = None
) -> Interference | None:
    """The first code of ``tree`` that can change ``entry`` or a name it reads; else None.

    ``module`` is ``Module.of(tree)``, read here when not given. Where a write was taken
    to be on an instance because of a parameter's annotation, ``ANNOTATED_INSTANCE`` is
    added to ``notes`` (once), an assumption of the verdict; where it was taken to be on
    an instance because of what the module stores in an attribute of ``self``,
    ``HELD_INSTANCE``."""
    key = (id(tree), entry)
    with _ANSWERS_LOCK:
        known = _ANSWERS.get(key)
    if known is not None and known[0] is tree:
        found, assumed = known[1], known[2]
    else:
        found, assumed = _interference(tree, module or Module.of(tree), entry)
        with _ANSWERS_LOCK:
            _ANSWERS[key] = (tree, found, assumed)
            while len(_ANSWERS) > 16:
                _ANSWERS.popitem(last=False)
    if found is None and notes is not None:
        notes.extend(a for a in assumed if a not in notes)
    return found


def _interference(
    tree: ast.Module, module: Module, entry: str
) -> tuple[Interference | None, tuple[str, ...]]:
    """``interference``, and the assumptions it made (``ANNOTATED_INSTANCE``,
    ``HELD_INSTANCE``)."""
    bound = bound_names(tree)
    at_top = module_bound(tree)
    hook = pyreflect.hook(tree, bound, at_top)
    if hook is not None:
        return Interference(hook.what, hook.line), ()
    closure, reads = _closure(tree, entry)
    names = closure | reads
    parents = {id(c): n for n in ast.walk(tree) for c in ast.iter_child_nodes(n)}
    for name in sorted(reads):
        value = module.constants.get(name)
        if value is None or _immutable(value):
            continue
        shallow = all(_immutable(v) for v in _items(value))
        use = None if shallow else module.lines.get(name, 0)
        if use is None:
            use = _changing_use(tree, name, parents, bound)
        if use is not None:
            return Interference(
                f"the module-level `{name}`, a mutable {type(value).__name__} that code of the "
                "module may change after import", use,
            ), ()
    by_class, data, class_data = _class_attributes(tree, closure)
    trusted: list[int] = []
    held: list[int] = []
    found = _targeted(tree, names, at_top, by_class, data, class_data, trusted, held)
    if found is not None:
        return found, ()
    chosen = pylookups.caller_dicts(tree)
    for scope in pylookups.scopes(tree):
        found = _reflective_write(scope, at_top, chosen)
        if found is not None:
            return found, ()
    return None, (*([ANNOTATED_INSTANCE] if trusted else []),
                  *([HELD_INSTANCE] if held else []))


def reads(tree: ast.Module, entry: str) -> set[str]:
    """The free names (module-level names and builtins) that ``entry`` and the module's
    functions and classes it names, transitively, read."""
    return _closure(tree, entry)[1]


def _closure(tree: ast.Module, entry: str) -> tuple[set[str], set[str]]:
    """The module's functions and classes ``entry`` names, transitively, and the free
    names they read (module-level names and builtins)."""
    defs: dict[str, list[ast.stmt]] = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            defs.setdefault(node.name, []).append(node)
    closure: set[str] = set()
    reads: set[str] = set()
    todo = [entry]
    while todo:
        name = todo.pop()
        if name in closure:
            continue
        closure.add(name)
        for node in defs.get(name, ()):
            free = _free_names(node)
            reads |= free
            todo.extend(n for n in free if n in defs)
    return closure, reads


def _class_attributes(
    tree: ast.Module, closure: set[str]
) -> tuple[dict[str, set[str]], set[str], set[str]]:
    """Attribute names through which code may change a class of the closure after import
    (``C.k = 2`` in a helper, ``type(self).k = 2``, ``setattr(C, "get", ...)``), in two
    sets: the *members* whose lookup an instance's own attribute of the same name changes
    (what the classes' bodies bind as methods, properties, nested classes or any value
    that may be a descriptor), and the *data*: the other names the bodies bind and every
    attribute the closure reads (an instance's read may fall back to its class). A class
    with a base outside the module may inherit any member: then every attribute its
    methods read on ``self`` that none writes on ``self`` counts as a member of it. The
    members are by class; the third set is the data the bodies bind (a class's own
    state, which its instances read unless they hold an attribute of the name). All empty
    when the closure holds no class."""
    classes = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name in closure]
    if not classes:
        return {}, set(), set()
    defs = [n for n in tree.body
            if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
            and n.name in closure]
    data = {n.attr for d in defs for n in ast.walk(d)
            if isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Load)}
    by_class: dict[str, set[str]] = {}
    class_data: set[str] = set()
    for cls in classes:
        members = by_class.setdefault(cls.name, set())
        for stmt in cls.body:
            if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                members.add(stmt.name)
            elif isinstance(stmt, ast.Assign | ast.AnnAssign | ast.AugAssign):
                targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
                bound = {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
                if stmt.value is None:
                    continue  # `x: int` alone binds nothing (an attribute the closure
                    # reads is data as such)
                if _plain_data(stmt.value):
                    data |= bound
                    class_data |= bound
                else:
                    members |= bound
    for c in classes:
        inherited = _builtin_members(c, tree)
        if inherited is not None:
            by_class[c.name] |= inherited
        elif not _known_bases(c, tree):
            on_self = {n.attr for n in ast.walk(c)
                       if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name)
                       and n.value.id == "self"}
            written = {n.attr for n in ast.walk(c)
                       if isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Store)
                       and isinstance(n.value, ast.Name) and n.value.id == "self"}
            by_class[c.name] |= on_self - written
    every = set().union(*by_class.values())
    return by_class, data - every, class_data - every


def _plain_data(value: ast.expr) -> bool:
    """A class-body value that cannot be a descriptor: a literal, or a container of them."""
    if isinstance(value, ast.Constant):
        return True
    if isinstance(value, ast.Tuple | ast.List | ast.Set):
        return all(_plain_data(e) for e in value.elts)
    if isinstance(value, ast.Dict):
        return all(k is not None and _plain_data(k) for k in value.keys) and all(
            _plain_data(v) for v in value.values)
    return False


# Bases that add no attribute an instance's own attribute could shadow, and no metaclass.
_PLAIN_BASES = {"object", "ABC"}


def from_abc(name: str, tree: ast.Module) -> bool:
    """Whether ``name`` is bound once, by ``from abc import ABC`` (as itself)."""
    return name in bound_once(tree) and any(
        isinstance(n, ast.ImportFrom) and n.module == "abc" and n.level == 0 and any(
            a.name == "ABC" and (a.asname or a.name) == name for a in n.names)
        for n in ast.walk(tree))


def _builtin_members(cls: ast.ClassDef, tree: ast.Module) -> set[str] | None:
    """Where every class ``cls`` derives from is in the module, ``object`` or a builtin
    class (``Exception``, ``dict``: a name the module binds nowhere), without a metaclass,
    the members it inherits from builtins (all their attributes); else None. None too
    where no base is a builtin (``_known_bases`` says the rest)."""
    bound = bound_names(tree)
    if "*" in bound:
        return None
    local = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}
    found: set[str] = set()
    todo, seen = [cls], 0
    while todo:
        c = todo.pop()
        seen += 1
        if c.keywords or seen > 50:
            return None
        for base in c.bases:
            if not isinstance(base, ast.Name):
                return None
            if base.id in local and local[base.id] is not c:
                todo.append(local[base.id])
                continue
            if base.id in bound:
                return None
            kind = vars(builtins).get(base.id)
            if not isinstance(kind, type):
                return None
            if kind is not object:
                found |= set(dir(kind))
    return found or None


def _known_bases(cls: ast.ClassDef, tree: ast.Module, depth: int = 0) -> bool:
    """Whether every class ``cls`` derives from is in the module (``object``, or ``abc``'s
    ``ABC``), without a metaclass: then its members are what the bodies bind."""
    if cls.keywords or depth > 20:
        return False
    local = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}
    for base in cls.bases:
        if isinstance(base, ast.Name) and base.id in _PLAIN_BASES and base.id not in local and (
                base.id == "object" or from_abc(base.id, tree)):
            continue
        if isinstance(base, ast.Name) and base.id in local and local[base.id] is not cls \
                and _known_bases(local[base.id], tree, depth + 1):
            continue
        return False
    return True


_SCOPES = (
    ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef, ast.ListComp,
    ast.SetComp, ast.DictComp, ast.GeneratorExp,
)


def _free_names(scope: ast.AST) -> set[str]:
    """Names ``scope`` (a def, class, lambda or comprehension) reads from outside itself,
    with those of the scopes nested in it that it does not bind (Python's scoping rules;
    a class body's names are not visible in its methods)."""
    local: set[str] = set()
    declared: set[str] = set()
    loads: set[str] = set()
    nested: set[str] = set()
    stack: list[ast.AST] = []
    if isinstance(scope, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
        a = scope.args
        local |= {p.arg for p in (*a.posonlyargs, *a.args, a.vararg, *a.kwonlyargs, a.kwarg)
                  if p is not None}
        # Decorators, defaults and annotations are read where the def runs: outside.
        outer: list[ast.AST] = [*a.defaults, *(d for d in a.kw_defaults if d is not None)]
        if not isinstance(scope, ast.Lambda):
            outer += scope.decorator_list
            outer += [p.annotation for p in (*a.posonlyargs, *a.args, a.vararg,
                                             *a.kwonlyargs, a.kwarg)
                      if p is not None and p.annotation is not None]
            if scope.returns is not None:
                outer.append(scope.returns)
        for o in outer:
            nested |= {n.id for n in ast.walk(o) if isinstance(n, ast.Name)}
        stack = [scope.body] if isinstance(scope, ast.Lambda) else list(scope.body)
    elif isinstance(scope, ast.ClassDef):
        for o in (*scope.decorator_list, *scope.bases, *(k.value for k in scope.keywords)):
            nested |= {n.id for n in ast.walk(o) if isinstance(n, ast.Name)}
        stack = list(scope.body)
    else:  # a comprehension: its first iterable is read outside, the rest inside
        assert isinstance(scope, ast.ListComp | ast.SetComp | ast.DictComp | ast.GeneratorExp)
        first, *rest = scope.generators
        nested |= _free_in(first.iter)
        stack = [first.target, *first.ifs, *rest]
        stack += [scope.key, scope.value] if isinstance(scope, ast.DictComp) else [scope.elt]
    while stack:
        n = stack.pop()
        if isinstance(n, _SCOPES):
            if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                local.add(n.name)
            nested |= _free_names(n)
            continue
        if isinstance(n, ast.Name):
            (loads if isinstance(n.ctx, ast.Load) else local).add(n.id)
        elif isinstance(n, ast.Global | ast.Nonlocal):
            declared |= set(n.names)
        elif isinstance(n, ast.alias):
            local.add((n.asname or n.name).split(".")[0])
        elif isinstance(n, ast.ExceptHandler | ast.MatchAs | ast.MatchStar) and n.name:
            local.add(n.name)
        elif isinstance(n, ast.MatchMapping) and n.rest:
            local.add(n.rest)
        stack.extend(ast.iter_child_nodes(n))
    local -= declared
    if isinstance(scope, ast.ClassDef):
        return (loads - local) | nested | declared
    return ((loads | nested) - local) | declared


def _free_in(node: ast.AST) -> set[str]:
    """Free names of an expression that may hold nested scopes."""
    if isinstance(node, _SCOPES):
        return _free_names(node)
    found: set[str] = set()
    for n in ast.iter_child_nodes(node):
        found |= _free_in(n)
    if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
        found.add(node.id)
    return found


def bound_names(tree: ast.Module) -> set[str]:
    """Names the module binds anywhere, in any scope (a call of such a name may not be
    the builtin)."""
    bound: set[str] = set()
    for n in ast.walk(tree):
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store | ast.Del):
            bound.add(n.id)
        elif isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            bound.add(n.name)
        elif isinstance(n, ast.alias):
            bound.add((n.asname or n.name).split(".")[0])
        elif isinstance(n, ast.arg):
            bound.add(n.arg)
    return bound


def module_bound(tree: ast.Module) -> set[str]:
    """Names bound at module level (or declared ``global``): a free name of a function
    that is not one of these is the builtin. Nested scopes' own names are left out."""
    bound: set[str] = set()
    stack: list[ast.AST] = list(tree.body)
    while stack:
        n = stack.pop()
        if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            bound.add(n.name)
            stack.extend(n.decorator_list)
            for sub in ast.walk(n):
                if isinstance(sub, ast.Global):
                    bound |= set(sub.names)
            continue
        if isinstance(n, ast.Lambda | ast.ListComp | ast.SetComp | ast.DictComp
                      | ast.GeneratorExp):
            continue
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store | ast.Del):
            bound.add(n.id)
        elif isinstance(n, ast.alias):
            bound.add((n.asname or n.name).split(".")[0])
        elif isinstance(n, ast.ExceptHandler | ast.MatchAs | ast.MatchStar) and n.name:
            bound.add(n.name)
        elif isinstance(n, ast.MatchMapping) and n.rest:
            bound.add(n.rest)
        stack.extend(ast.iter_child_nodes(n))
    return bound


def _items(value: object) -> list[object]:
    if isinstance(value, dict):
        return [*value.keys(), *value.values()]
    return list(value) if isinstance(value, list | set | tuple | frozenset) else [value]


# What may be done with a list, dict or set of immutable items without changing it.
_READ_ONLY_METHODS = {"get", "keys", "values", "items", "copy", "count", "index",
                      "__contains__", "__getitem__", "__len__", "issubset", "issuperset",
                      "isdisjoint", "union", "intersection", "difference",
                      "symmetric_difference"}
_CONSUMING_CALLS = _READ_CALLS | {
    "sorted", "list", "tuple", "set", "frozenset", "dict", "min", "max", "sum", "any", "all",
    "enumerate", "zip", "iter", "reversed",
}  # fmt: skip


# Builtins whose result keeps a reference to the list they are given.
_ITERATORS = {"iter", "reversed", "enumerate", "zip"}
# Methods through which the other operand of an operator receives a module-level object.
_OPERAND_HOOKS = {
    "__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__", "__contains__",
    *(f"__r{op}__" for op in ("add", "sub", "mul", "matmul", "truediv", "floordiv", "mod",
                              "divmod", "pow", "lshift", "rshift", "and", "xor", "or")),
}  # fmt: skip


def _changing_use(
    tree: ast.Module, name: str, parents: dict[int, ast.AST], bound: set[str]
) -> int | None:
    """The line of a use of the module-level ``name`` (a list, dict or set of immutable
    items) that may change it or let it escape; None if every use only reads it."""
    operators = any(isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)
                    and n.name in _OPERAND_HOOKS for n in ast.walk(tree))
    for n in ast.walk(tree):
        if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load):
            use: ast.expr = n
        elif isinstance(n, ast.Attribute) and n.attr == name:
            use = n  # `module.name`, through an import of the module itself
        else:
            continue
        parent = parents.get(id(use))
        if isinstance(parent, ast.Subscript) and parent.value is use and isinstance(
            parent.ctx, ast.Load
        ):
            continue
        if isinstance(parent, ast.Compare | ast.BinOp) and not operators:
            continue  # (an operand's `__eq__`/`__radd__`/`__contains__` would get it)
        if isinstance(parent, ast.comprehension | ast.For) and parent.iter is use:
            continue
        if isinstance(parent, ast.Attribute) and parent.attr in _READ_ONLY_METHODS:
            call = parents.get(id(parent))
            if isinstance(call, ast.Call) and call.func is parent:
                continue
        if isinstance(parent, ast.Call) and use is not parent.func and isinstance(
            parent.func, ast.Name
        ) and parent.func.id in _CONSUMING_CALLS and parent.func.id not in bound:
            # An iterator over the list hands it back (`iter(L).__reduce__()`) unless it
            # is consumed at once by a loop.
            grand = parents.get(id(parent))
            if parent.func.id not in _ITERATORS or (
                isinstance(grand, ast.comprehension | ast.For) and grand.iter is parent
            ):
                continue
        return getattr(use, "lineno", 0)
    return None


def _immutable(value: object) -> bool:
    if isinstance(value, tuple | frozenset):
        return all(_immutable(v) for v in value)
    return isinstance(value, type(None) | bool | int | float | complex | str | bytes)


def _builtin(node: ast.expr, names: set[str], bound: set[str]) -> str | None:
    if isinstance(node, ast.Name) and node.id in names and node.id not in bound:
        return node.id
    return None


def _targeted(
    tree: ast.Module, names: set[str], bound: set[str], by_class: dict[str, set[str]],
    data: set[str], class_data: set[str], trusted: list[int], held: list[int],
) -> Interference | None:
    """A write that names one of ``names`` or an attribute of the closure's classes
    (``by_class``, ``data``: see ``_class_attributes``) or a function attribute, or runs
    text as code.

    A write of a data attribute on an instance changes only that instance's state, which
    the method takes as given: writes on a method's ``self`` and on a parameter annotated
    with a class of the module (an instance, as the annotation says) are such writes. A
    member is looked up through the class unless the instance holds an attribute of that
    name: a write of a member's name on any object counts (``obj.helper = f`` hides the
    method ``helper`` for that object). The lines of writes let through only because of
    a parameter's annotation are added to ``trusted``; those let through because of what
    the module stores in an attribute of ``self`` (``_writes_on_held``), to ``held``."""
    called = {id(n.func) for n in ast.walk(tree) if isinstance(n, ast.Call)}
    # A builtin the closure reads can be replaced by an attribute write only on the
    # builtins module; a module-level name, on this module (imported by itself).
    reaches = any(n not in bound for n in names) and _reaches_builtins(tree)
    targets = {n for n in names if n in bound or reaches} - _SAFE_DUNDERS
    targets |= data - _SAFE_DUNDERS
    members = set().union(*by_class.values()) - _SAFE_DUNDERS
    on_self, on_cls = _writes_on_self(tree, by_class)
    hidden = _hiding(tree, by_class)
    plain = _plain_writes(tree)
    once = bound_once(tree)
    imported = {(a.asname or a.name).split(".")[0] for n in tree.body
               if isinstance(n, ast.Import) for a in n.names} & once
    on_instance = _writes_on_instances(tree)
    through = {k: v for k, v in _writes_on_held(tree).items() if k not in on_instance}
    on_instance |= {k: cls for k, (cls, _) in through.items()}

    def trust(node: ast.AST, line: int) -> None:
        if id(node) in through:
            held.append(line)
            if not through[id(node)][1]:
                return
        trusted.append(line)

    relayed = pylookups.relays(tree)
    for node in ast.walk(tree):
        line = getattr(node, "lineno", 0)
        if isinstance(node, ast.Global):
            hit = sorted(set(node.names) & names)
            if hit:
                return Interference(f"`global {hit[0]}` in a function, which may rebind it",
                                    line)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store | ast.Del):
            if node.attr in targets and id(node) not in on_self and (
                on_instance.get(id(node), _EXCEPTION) not in (_EXCEPTION, _FUNCTION)
            ):
                trust(node, line)
            if id(node) in on_self:
                hides = on_self[id(node)]
            elif id(node) in on_instance:
                hides = hidden(on_instance[id(node)])
            else:
                hides = members
            if node.attr in _FUNCTION_STATE or node.attr in hides or (
                node.attr in targets and id(node) not in on_self and id(node) not in on_instance
                and (node.attr in names or node.attr in class_data or id(node) not in plain)
                # a module's attribute is no class's: the names it binds are the rule
                and not (node.attr not in names and isinstance(node.value, ast.Name)
                         and node.value.id in imported)
            ) or (
                # `cls.k = 2` in a classmethod rebinds the class's own `k`
                id(node) in on_cls and node.attr in class_data
            ) or (
                node.attr.startswith("__") and node.attr not in _SAFE_DUNDERS
                and _root(node.value) in names
            ):
                return Interference(f"a write to an attribute named `{node.attr}`", line)
        elif isinstance(node, ast.Constant) and node.value in _DEFAULTS:
            return Interference(f"`{node.value}` named in a string", line)
        elif isinstance(node, ast.Attribute) and node.attr in _DEFAULTS:
            # Read, not written: `f.__kwdefaults__["k"] = 5` or `f.__defaults__[0].append(1)`
            # changes the defaults in place, whatever function the expression names.
            return Interference(f"a use of `{node.attr}`, through which the defaults of a "
                                "function may change in place", line)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            runner = _builtin(node, _CODE_RUNNERS, bound)
            if runner == "__import__" and id(node) in called and _imports_by_name(node, tree):
                runner = None  # `__import__("pkg.mod")` only imports, as `import` does
            if runner is not None:
                return Interference(f"`{runner}`, which runs code given as text", line)
            setter = _builtin(node, {"setattr", "delattr", "getattr"}, bound)
            if setter is not None and id(node) not in called:
                return Interference(f"`{setter}` used other than in a direct call", line)
        elif isinstance(node, ast.Attribute) and node.attr in (
            "__setattr__", "__delattr__", "__getattribute__"
        ) and id(node) not in called:
            return Interference(f"`{node.attr}` used other than in a direct call", line)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            modules = ([a.name for a in node.names] if isinstance(node, ast.Import)
                       else [node.module or ""])
            for m in modules:
                if m.split(".")[0] in _POKING_MODULES and not _harmless_gc(node, tree):
                    return Interference(f"an import of `{m}`", line)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and (
            node.func.attr == "__getattribute__"
        ):
            # `m.__getattribute__("__dict__")` reaches what `m.__dict__` does; a relay
            # of the name Python asked for reaches what that lookup names.
            attr = _setattr_name(node)
            if id(node) in relayed:
                continue
            if attr is None or attr in _REFLECTIVE_ATTRS or attr in _DEFAULTS:
                return Interference("`__getattribute__` of a namespace or a computed name", line)
        elif isinstance(node, ast.Call):
            setter = _builtin(node.func, {"setattr", "delattr"}, bound)
            if isinstance(node.func, ast.Attribute) and node.func.attr in (
                "__setattr__", "__delattr__"
            ):
                setter = node.func.attr
            if setter is None:
                continue
            attr = _setattr_name(node)
            if attr is None:
                return Interference(f"`{setter}` with a computed attribute name", line)
            obj = node.args[0] if node.args and setter in ("setattr", "delattr") else None
            instance = obj is not None and id(node) in on_instance
            if instance and attr in targets and on_instance[id(node)] not in (
                _EXCEPTION, _FUNCTION
            ):
                trust(node, line)
            hides = hidden(on_instance[id(node)]) if instance else members
            if attr in hides or (attr in targets and not instance) or (
                attr in _FUNCTION_STATE
            ) or (
                attr.startswith("__") and attr not in _SAFE_DUNDERS
                and (obj is None or _root(obj) in names)
            ):
                return Interference(f"`{setter}` of an attribute named `{attr}`", line)
    return None


# Values that are never descriptors: stored on a class, an instance's own attribute of the
# same name still hides them.
_PLAIN_VALUES = (
    ast.Constant, ast.List, ast.Tuple, ast.Set, ast.Dict, ast.ListComp, ast.SetComp,
    ast.DictComp, ast.JoinedStr,
)


def _plain_writes(tree: ast.Module) -> set[int]:
    """Attribute stores (``x.a = []``, ``y, x.a = x.a, None``) of a value that is never a
    descriptor (a literal, a display, a comprehension, an f-string). Whatever object
    ``x`` is, such a write of a name that no class of the closure binds changes no
    member's lookup: on an instance it is the instance's state; on a class, a data
    attribute that the instance's own one, set when it was built, hides."""
    found: set[int] = set()
    for n in ast.walk(tree):
        if not isinstance(n, ast.Assign):
            continue
        for target in n.targets:
            pairs: list[tuple[ast.expr, ast.expr]] = [(target, n.value)]
            if isinstance(target, ast.Tuple | ast.List) and isinstance(n.value, ast.Tuple) and (
                len(target.elts) == len(n.value.elts)
                and not any(isinstance(e, ast.Starred) for e in (*target.elts, *n.value.elts))
            ):
                pairs = list(zip(target.elts, n.value.elts, strict=True))
            for t, v in pairs:
                if isinstance(t, ast.Attribute) and isinstance(v, _PLAIN_VALUES):
                    found.add(id(t))
    return found


def _writes_on_self(
    tree: ast.Module, by_class: dict[str, set[str]]
) -> tuple[dict[int, set[str]], set[int]]:
    """Attribute writes on a method's ``self`` or ``cls`` (its first parameter), which is
    taken to be an instance or subclass of its class, never a module; mapped to the
    members (of ``by_class``, the closure's classes) whose lookup the write may change.

    A write on ``self`` in a method of ``K`` hides a member of a closure class ``F`` only
    on an object of ``F``: one whose class derives from ``K`` (``self`` of ``F``'s method
    is taken to be of exactly ``F``), so only when ``K`` is ``F`` or one of its bases;
    then every member ``F`` has (its bases' too) counts. A write on ``cls``, or in a
    decorated method or a nested class, may change any of them; the second set holds the
    writes that may be on a class (on ``cls``, or in a decorated method)."""
    hidden = _hiding(tree, by_class)
    every = set().union(*by_class.values())
    found: dict[int, set[str]] = {}
    on_class: set[int] = set()
    for cls in ast.walk(tree):
        if not isinstance(cls, ast.ClassDef):
            continue
        top = cls in tree.body
        for fn in cls.body:
            if not isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef) or any(
                isinstance(d, ast.Name) and d.id == "staticmethod" for d in fn.decorator_list
            ):
                continue
            params = [*fn.args.posonlyargs, *fn.args.args]
            if not params or params[0].arg not in ("self", "cls"):
                continue
            first = params[0].arg
            rebound = any(
                isinstance(n, ast.Name) and n.id == first and not isinstance(n.ctx, ast.Load)
                for n in ast.walk(fn)
            )
            if rebound:
                continue
            plain = top and first == "self" and not fn.decorator_list
            blocked = hidden(cls.name) if plain else every
            writes = {
                id(n) for n in ast.walk(fn)
                if isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Store | ast.Del)
                and isinstance(n.value, ast.Name) and n.value.id == first
            }
            found.update(dict.fromkeys(writes, blocked))
            if first == "cls" or not all(_on_instance(d) for d in fn.decorator_list):
                on_class |= writes
    return found, on_class


def _hiding(tree: ast.Module, by_class: dict[str, set[str]]) -> Callable[[str], set[str]]:
    """For a class ``K`` of the module, the members (of ``by_class``) that an attribute
    of an object of ``K`` hides: those of each closure class that ``K`` is or is a base
    of, with their bases'. (A base outside the module is taken not to derive from a
    class of this module, which it would have to import.)"""
    local = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}

    def ancestors(name: str) -> set[str]:
        """``name`` and the classes of the module it derives from."""
        found, todo = set(), [name]
        while todo:
            n = todo.pop()
            if n in found:
                continue
            found.add(n)
            todo += [b.id for b in (local[n].bases if n in local else ())
                     if isinstance(b, ast.Name) and b.id in local]
        return found

    lines = {f: ancestors(f) for f in by_class}
    # An exception may be an object of a closure class that derives from one.
    open_lines = {f for f, line in lines.items()
                  if any(not _known_bases(local[c], tree) for c in line if c in local)}

    def hidden(cls: str) -> set[str]:
        out: set[str] = set()
        for f, line in lines.items():
            if cls in line or (cls == _EXCEPTION and f in open_lines):
                for a in line:
                    out |= by_class.get(a, set())
        return out

    return hidden


_EXCEPTION = ""  # the class of an object bound by `except ... as e`: some exception
_FUNCTION = "<function>"  # the class of a function object the function defines


# Decorators of a method that still call it with an instance as `self`.
_INSTANCE_DECORATORS = {"contextmanager", "asynccontextmanager", "property", "setter",
                        "deleter", "getter", "abstractmethod", "cached_property", "overload",
                        "override", "wraps"}


def _on_instance(decorator: ast.expr) -> bool:
    """Whether a method's decorator keeps its first parameter an instance."""
    if isinstance(decorator, ast.Call):
        decorator = decorator.func
    name = decorator.attr if isinstance(decorator, ast.Attribute) else (
        decorator.id if isinstance(decorator, ast.Name) else None)
    return name in _INSTANCE_DECORATORS


def _writes_on_instances(tree: ast.Module) -> dict[int, str]:
    """Attribute writes (``p.x = v``, ``setattr(p, "x", v)``) on a parameter ``p``
    annotated with a class of the module that has no metaclass, and which the function
    does not rebind: by its annotation an instance, whose own attributes are its state
    (not a class, whose attributes all its instances read); mapped to that class."""
    local = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}
    once = bound_once(tree)
    plain = {name for name, cls in local.items() if name in once and _known_bases(cls, tree)}
    found: dict[int, str] = {}
    for fn in ast.walk(tree):
        if not isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        a = fn.args
        own = [*a.posonlyargs, *a.args, *a.kwonlyargs]
        params: dict[str, str] = {}
        for p in own:
            cls = _instance_of(p.annotation, plain) if p.annotation is not None else None
            if cls is not None:
                params[p.arg] = cls
        nodes = list(ast.walk(fn))
        handlers = {n.name for n in nodes if isinstance(n, ast.ExceptHandler) and n.name}
        defs = Counter(n.name for n in nodes
                       if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
                       and n is not fn)
        # `except E as e` binds an exception, an instance (``_EXCEPTION``) too.
        params |= {name: _EXCEPTION for name in handlers if name not in params}
        # A function the function defines (once, and binds no other way) is a function
        # object (``_FUNCTION``): its attributes are no class's (`memof.__wrapped__ = f`).
        params |= {n.name: _FUNCTION for n in nodes
                   if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef) and n is not fn
                   and not n.decorator_list and defs[n.name] == 1 and n.name not in params}
        if not params:
            continue
        rebound = {name for name in defs if params.get(name) != _FUNCTION}
        rebound |= {p.arg for p in (*own, a.vararg, a.kwarg)
                    if p is not None and p.arg not in params}
        for n in nodes:
            if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load):
                rebound.add(n.id)
            elif isinstance(n, ast.alias):
                rebound.add((n.asname or n.name).split(".")[0])
            elif isinstance(n, ast.arg) and n.arg in params and not any(n is p for p in own):
                rebound.add(n.arg)  # a lambda's or a nested function's parameter
            elif isinstance(n, ast.ExceptHandler) and n.name in params and (
                    params[n.name] != _EXCEPTION):
                rebound.add(n.name)
        for name in rebound:
            params.pop(name, None)
        if not params:
            continue
        for n in nodes:
            written = n.value if isinstance(n, ast.Attribute) and isinstance(
                n.ctx, ast.Store | ast.Del
            ) else n.args[0] if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and (
                n.func.id in ("setattr", "delattr") and n.args
            ) else None
            if isinstance(written, ast.Name) and written.id in params:
                found[id(n)] = params[written.id]
    return found


def bound_once(tree: ast.Module) -> set[str]:
    """Names the module binds exactly once, in any scope (a class name that is also
    assigned elsewhere may name something else when an annotation is read)."""
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
    return {k for k, v in counts.items() if v == 1}


def _writes_on_held(tree: ast.Module) -> dict[int, tuple[str, bool]]:
    """Attribute writes (``self.a.x = v``, ``setattr(self.a, "x", v)``) on an attribute
    ``a`` of a method's ``self`` (not rebound in the method) that the module only ever
    sets to an instance of one plain class of its own (``_held_attributes``); mapped to
    that class, and whether a parameter's annotation told it."""
    held = _held_attributes(tree)
    if not held:
        return {}
    found: dict[int, tuple[str, bool]] = {}
    for cls in tree.body:
        # (`self.a` of a class with a base outside the module may be that base's.)
        if not isinstance(cls, ast.ClassDef) or not _known_bases(cls, tree):
            continue
        for fn in cls.body:
            if not isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef) or fn.decorator_list:
                continue
            own = [*fn.args.posonlyargs, *fn.args.args]
            if not own:
                continue
            me = own[0].arg
            if _rebinds(fn, me, own[0]):
                continue
            for n in ast.walk(fn):
                written = n.value if isinstance(n, ast.Attribute) and isinstance(
                    n.ctx, ast.Store | ast.Del
                ) else n.args[0] if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and (
                    n.func.id in ("setattr", "delattr") and n.args
                ) else None
                if (isinstance(written, ast.Attribute) and isinstance(written.ctx, ast.Load)
                        and isinstance(written.value, ast.Name) and written.value.id == me
                        and written.attr in held):
                    found[id(n)] = held[written.attr]
    return found


def _held_attributes(tree: ast.Module) -> dict[str, tuple[str, bool]]:
    """Attribute names that every write of the module sets to an instance of one plain
    class of the module (``C(...)``, or a parameter annotated ``C`` that its function does
    not rebind) or to ``None``, which no class body and no module-level code binds as a
    name: by name, that class and whether an annotation told it. A plain class is one
    bound once, whose bases are the module's or ``object`` without a metaclass
    (``_known_bases``), and which neither it nor a base gives a ``__new__`` (so calling it
    makes an instance of it)."""
    local = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}
    once = bound_once(tree)

    def new_free(name: str, depth: int = 0) -> bool:
        cls = local[name]
        if depth > 20 or any(isinstance(m, ast.FunctionDef | ast.AsyncFunctionDef | ast.Assign)
                             and "__new__" in _defined(m) for m in cls.body):
            return False
        return all(not (isinstance(b, ast.Name) and b.id in local) or new_free(b.id, depth + 1)
                   for b in cls.bases)

    plain = {name for name, cls in local.items()
             if name in once and _known_bases(cls, tree) and new_free(name)}
    if not plain:
        return {}
    if any((isinstance(n, ast.Attribute) and n.attr == "__dict__")
           or (isinstance(n, ast.Name) and n.id == "vars") for n in ast.walk(tree)):
        return {}  # an object's attributes may be written through its namespace
    parents = {id(c): n for n in ast.walk(tree) for c in ast.iter_child_nodes(n)}
    kinds: dict[str, set[tuple[str, bool]]] = {}
    # An attribute named like what a class body binds may be read from the class.
    spoiled = {t for c in ast.walk(tree) if isinstance(c, ast.ClassDef)
               for m in c.body for t in _defined(m)}

    def function_of(node: ast.AST) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
        at = parents.get(id(node))
        while at is not None and not isinstance(at, ast.FunctionDef | ast.AsyncFunctionDef):
            at = parents.get(id(at))
        return at

    def kind(value: ast.expr | None, node: ast.AST) -> tuple[str, bool] | None:
        """What a written value is: ``(class, told by an annotation)``, ``("", False)``
        for None, or None when not known."""
        if isinstance(value, ast.Constant) and value.value is None:
            return "", False
        if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and (
                value.func.id in plain):
            return value.func.id, False
        fn = function_of(node)
        if isinstance(value, ast.Name) and fn is not None:
            own = [*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs]
            param = next((p for p in own if p.arg == value.id), None)
            cls = _instance_of(param.annotation, plain) if (
                param is not None and param.annotation is not None) else None
            if cls is not None and not _rebinds(fn, value.id, param):
                return cls, True
        return None

    for n in ast.walk(tree):
        if isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Store):
            parent = parents.get(id(n))
            value = parent.value if isinstance(parent, ast.Assign) and parent.targets == [n] \
                else parent.value if isinstance(parent, ast.AnnAssign) and parent.target is n \
                else None
            what = kind(value, n)
            if what is None:
                spoiled.add(n.attr)
            else:
                kinds.setdefault(n.attr, set()).add(what)
        elif isinstance(n, ast.Call) and (
                (isinstance(n.func, ast.Name) and n.func.id == "setattr")
                or (isinstance(n.func, ast.Attribute) and n.func.attr == "__setattr__")):
            attr = _setattr_name(n)
            if attr is None:
                return {}  # any attribute may be written (a blocker of its own)
            spoiled.add(attr)
    out: dict[str, tuple[str, bool]] = {}
    for attr, seen in kinds.items():
        classes = {c for c, _ in seen if c}
        if attr not in spoiled and len(classes) == 1:
            cls = classes.pop()
            out[attr] = (cls, any(told for c, told in seen if c == cls))
    return out


def _defined(stmt: ast.AST) -> set[str]:
    """The names a class-body statement binds."""
    if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return {stmt.name}
    return {n.id for n in ast.walk(stmt)
            if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)}


def _rebinds(fn: ast.AST, name: str, param: ast.arg | None) -> bool:
    """Whether ``fn`` binds ``name`` other than by its parameter ``param``."""
    for n in ast.walk(fn):
        if isinstance(n, ast.Name) and n.id == name and not isinstance(n.ctx, ast.Load):
            return True
        if isinstance(n, ast.arg) and n.arg == name and n is not param:
            return True
        if isinstance(n, ast.Global | ast.Nonlocal) and name in n.names:
            return True
    return False


def _instance_of(annotation: ast.expr, classes: set[str]) -> str | None:
    """The one of ``classes`` an annotation names an instance of (``C``, ``"C"``,
    ``C | None``, ``Optional[C]``); never for ``type[C]``."""
    if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
        try:
            annotation = ast.parse(annotation.value, mode="eval").body
        except SyntaxError:
            return None
    if isinstance(annotation, ast.Name):
        return annotation.id if annotation.id in classes else None
    if isinstance(annotation, ast.BinOp) and isinstance(annotation.op, ast.BitOr):
        for one, other in ((annotation.left, annotation.right),
                           (annotation.right, annotation.left)):
            if isinstance(other, ast.Constant) and other.value is None:
                return _instance_of(one, classes)
        return None
    if isinstance(annotation, ast.Subscript) and isinstance(annotation.value, ast.Name) and (
        annotation.value.id == "Optional"
    ):
        return _instance_of(annotation.slice, classes)
    return None


def _harmless_gc(node: ast.Import | ast.ImportFrom, tree: ast.Module) -> bool:
    """An import of `gc` whose every use is a function that cannot reach other objects."""
    if isinstance(node, ast.ImportFrom):
        return node.module == "gc" and all(a.name in _GC_SAFE for a in node.names)
    if [a.name for a in node.names] != ["gc"]:
        return False
    name = node.names[0].asname or "gc"
    attrs = {id(n.value) for n in ast.walk(tree)
             if isinstance(n, ast.Attribute) and n.attr in _GC_SAFE}
    return all(
        id(n) in attrs for n in ast.walk(tree) if isinstance(n, ast.Name) and n.id == name
    )


def _root(node: ast.expr) -> str | None:
    """The name an attribute or subscript chain starts from (`a` in `a.b[0].c`)."""
    while isinstance(node, ast.Attribute | ast.Subscript):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _reaches_builtins(tree: ast.Module) -> bool:
    """Whether the module may get hold of the builtins module (to write to it)."""
    for n in ast.walk(tree):
        if isinstance(n, ast.alias) and n.name.split(".")[0] in ("builtins", "importlib"):
            return True
        if isinstance(n, ast.Name | ast.Attribute | ast.Constant):
            text = n.id if isinstance(n, ast.Name) else (
                n.attr if isinstance(n, ast.Attribute) else n.value
            )
            if isinstance(text, str) and ("builtins" in text or text in (
                "modules", "import_module", "__import__"
            )):
                return True
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and (
            n.func.id == "getattr"
        ) and not (
            len(n.args) > 1 and isinstance(n.args[1], ast.Constant)
        ):
            return True  # `getattr(sys, name)` may be `sys.modules`
    return False


def _imports_by_name(name: ast.Name, tree: ast.Module) -> bool:
    """Whether ``name`` is called with one string literal: a plain import."""
    for n in ast.walk(tree):
        if isinstance(n, ast.Call) and n.func is name:
            return len(n.args) == 1 and not n.keywords and isinstance(
                n.args[0], ast.Constant
            ) and isinstance(n.args[0].value, str)
    return False


def _setattr_name(call: ast.Call) -> str | None:
    """The attribute name a ``setattr``-like call writes, when it is a string literal."""
    at = 0 if isinstance(call.func, ast.Attribute) and not isinstance(
        call.func.value, ast.Name
    ) else 1
    # `obj.__setattr__(name, v)` names it first; `object.__setattr__(obj, name, v)` second.
    if isinstance(call.func, ast.Attribute) and isinstance(call.func.value, ast.Name):
        at = 1 if call.func.value.id in ("object", "type") else 0
    if len(call.args) <= at:
        return None
    arg = call.args[at]
    if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
        return arg.value
    return None


def _reflective_write(scope: pylookups.Scope, bound: set[str],
                      chosen: set[int]) -> Interference | None:
    """A write through a reflective view of a namespace (``globals()``, ``sys.modules``...).
    A pickling helper may write into the ``__dict__`` of an object its caller chose
    (``chosen``, ``pylookups.caller_dicts``)."""
    views = pylookups.Views(scope, bound)
    reflective, aliases = views.reflective, views.aliases

    def written(e: ast.expr) -> bool:
        return views.written(e) and id(e) not in chosen

    for n in scope.nodes:
        line = getattr(n, "lineno", 0)
        if isinstance(n, ast.Attribute | ast.Subscript) and isinstance(
            n.ctx, ast.Store | ast.Del
        ) and written(n.value):
            return Interference("a write through a reflective view of a namespace "
                                "(`globals()`, `sys.modules`, `__dict__`, a frame)", line)
        if isinstance(n, ast.AugAssign) and isinstance(n.target, ast.Name) and (
            n.target.id in aliases
        ):
            return Interference("an in-place update of a reflective view of a namespace",
                                line)
        if isinstance(n, ast.Call):
            func = n.func
            if isinstance(func, ast.Attribute) and func.attr not in READ_METHODS and (
                written(func.value)
            ):
                return Interference(f"a call of `.{func.attr}` on a reflective view of a "
                                    "namespace", line)
            keeps = not (isinstance(func, ast.Name) and func.id in _CONSUMING_CALLS
                         and func.id not in bound)
            if keeps and any(
                reflective(a) for a in (*n.args, *(k.value for k in n.keywords))
            ):
                return Interference("a reflective view of a namespace passed to a call",
                                    line)
        if isinstance(n, ast.Return | ast.Yield | ast.YieldFrom) and n.value is not None and (
            reflective(n.value)
        ):
            return Interference("a reflective view of a namespace returned to callers", line)
        if isinstance(n, ast.Assign | ast.AnnAssign) and n.value is not None and (
            reflective(n.value)
        ) and any(
            not isinstance(t, ast.Name)
            for target in (n.targets if isinstance(n, ast.Assign) else [n.target])
            for t in pylookups.leaves(target)
        ):
            return Interference("a reflective view of a namespace stored in an object", line)
    return None
