"""Lookups by a computed name: what the name can be, and what is done with the value.

``pyreflect`` looks for module code that may install an interpreter-wide hook or run code
given as text. Without writing any such name, code can reach one by a computed access:
looking an attribute up by a computed name (``getattr(x, n)``, ``x.__getattribute__(n)``,
``attrgetter(n)``, ``methodcaller(n)``), or reading a namespace by a computed key or
wholesale (``vars(m)[k]``, ``m.__dict__.get(k)``, ``f.__globals__.values()``,
``dict(vars(m))``, ``inspect.getmembers(m)``). Any object may lead to one
(``print.__self__`` is the builtins module, whose ``__import__`` gives ``sys``), so where
the object comes from does not matter; what the name can be, and what is done with the
value, does. ``computed`` finds the first such access that none of these exceptions lets
through; a computed access is harmless, and let through, when

- the name is drawn from a finite set of strings none of which is a hook or a code
  runner: concatenations and f-strings of literals and of a name bound only by ``for
  n in ("a", "b")`` (or over a local bound once to such a tuple, or to such a list or set
  that is only iterated over or tested), or used only inside ``if n in {"a", "b"}:`` /
  ``if n == "a":``;
- it *relays* a lookup: ``getattr(self._wrapped, name)`` in ``__getattr__`` or
  ``__getattribute__`` (a method, or a module's ``__getattr__``) with the name it was
  called with, unchanged. Python calls it for a lookup ``w.name`` that the code writes
  literally (checked by ``pyreflect`` as any literal is) or computes (a computed access itself,
  checked here), or that code outside the module makes (its own doing). So the module
  must call it no other way: ``__getattr__``/``__getattribute__`` named only in a
  definition or a direct call;
- the value is only tested or shown: an operand of ``is``, a condition, the argument of
  ``callable``/``hasattr``; the one argument of ``repr``, ``str``, ``len``, ``hash``... or
  a field of an f-string or of ``%`` formatting a literal string (these call a special
  method of the value's own type, with the value as ``self``, never the value); or a local
  variable whose every use is one of these; also
  an operand of another comparison where the module defines no method that receives it
  (``__eq__``, ``__contains__``...), or the argument of ``isinstance`` where it defines
  no ``__instancecheck__``/``__subclasscheck__``. A hook function that is never called
  installs nothing. The value may also be *walked*: the object of a further attribute
  read or ``getattr`` whose result is, in turn, only tested or walked (``obj =
  getattr(obj, part, None)`` down a dotted name, as a pickling helper does), never
  called, passed on, returned or kept. Where the local is known to hold an instance of a
  builtin scalar type (``int``, ``str``...: read in the body of an ``if isinstance(v,
  int):`` or ``if type(v) is int:``, or after an ``assert`` of it right after the
  binding, outside any ``try`` or ``with``), it may be used in any way: no hook or code
  runner is such an instance.

A *pickling helper* (``reduce_helpers``) is a module-level function that only the pickle
and copy protocols call: the module names it nowhere but in what a ``__reduce__`` or
``__reduce_ex__`` method returns, and names those methods nowhere but in their
definitions. It rebuilds an object from data its caller chose (``_restore_curry(cls,
"pkg.mod:name", ...)``), as the unpickler's own ``find_class`` does, so what it does with
that data is the caller's doing, as if done by code outside the module: there, the value
of a lookup may also be *handed back*, returned or passed to a call of one of the
helper's parameters, and ``pyinterfere`` lets it write into the ``__dict__`` of an object
that only its parameters (or what calling one returned) may be.

A value is followed through the locals it is assigned to, to the reads that assignment
may reach (``pyflow``; every read of the local where that is unknown).

``sys.modules[k]`` is no computed access (its values are modules, which need one more
step); the module's own ``globals()`` is a namespace like any other (``__builtins__``
is in it).
"""

from __future__ import annotations

import ast
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from veribot.checks.lang import pyflow

# Interpreter-wide hooks and settings that change what any function does (``pyreflect``).
INTERPRETER_HOOKS = {
    "settrace", "setprofile", "monitoring", "f_lineno", "f_trace", "f_trace_lines",
    "f_trace_opcodes", "addaudithook", "filterwarnings", "simplefilter", "setitimer",
    "alarm", "setcontext", "getcontext", "localcontext", "DefaultContext",
    "set_int_max_str_digits", "setswitchinterval", "setrecursionlimit", "setlocale",
    "call_tracing", "_settraceallthreads", "_setprofileallthreads",
    # `breakpoint()` runs `sys.breakpointhook`, by default pdb, which sets a trace function.
    "breakpoint", "breakpointhook", "set_trace",
}  # fmt: skip
# Builtin names that run code given as text or reach the interpreter's own objects.
CODE_RUNNERS = {"exec", "eval", "compile", "__import__", "__builtins__"}
# Functions that resolve a dotted name given as data to an object.
RESOLVERS = {"resolve_name"}
# Attribute reads that reach a module's namespace (or a function's), or a frame's.
REFLECTIVE_ATTRS = {
    "modules", "__dict__", "__globals__", "f_globals", "f_locals", "f_builtins",
    "__builtins__",
}  # fmt: skip
REFLECTIVE_CALLS = {"globals", "vars"}
# Lookups by name: the function, and where its name argument is (-1: the last one; None:
# every argument).
_LOOKUPS: dict[str, int | None] = {
    "getattr": 1, "getattr_static": 1, "__getattribute__": -1, "__getattr__": -1,
    "attrgetter": None, "methodcaller": 0,
}  # fmt: skip
# Methods of a namespace that read one value by key, and that hand out every value.
KEY_READS = {"get", "__getitem__"}
_VALUE_READS = {"values", "items", "copy"}
# The relays Python calls for an attribute lookup.
_RELAYS = {"__getattr__", "__getattribute__"}
# The methods through which the pickle and copy protocols reach a pickling helper.
_REDUCERS = {"__reduce__", "__reduce_ex__"}
# What unpickles or copies an object (so calls a pickling helper and returns its result),
# or reaches such a module: where module code names one, it has no pickling helpers.
DRIVERS = {
    "copy", "deepcopy", "_reconstruct", "pickle", "_pickle", "cPickle", "copyreg",
    "shelve", "multiprocessing", "concurrent", "dill", "cloudpickle", "joblib", "loads",
    "load", "Unpickler", "modules",
}  # fmt: skip
# Functions that import a module by name.
_IMPORTERS = {"import_module", "__import__"}
# Builtins that only test a value (do not call it or keep it).
_TESTS = {"isinstance", "callable", "hasattr"}
# Builtins that only show or measure a value: each calls a special method of the value's
# own type with the value as ``self`` (``repr(v)`` is ``type(v).__repr__(v)``), never the
# value itself, hands it to nothing else, and returns a str, an int or a bool.
_SHOWS = {"repr", "str", "ascii", "format", "len", "hash", "bool", "id"}
# Methods of the *other* operand (or of the class in `isinstance`) that a test hands the
# value to: where the module defines one, a comparison is no mere test.
_RECEIVERS = {"__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__", "__contains__",
              "__instancecheck__", "__subclasscheck__"}
# Those an `isinstance` test hands the value to.
_INSTANCE_RECEIVERS = {"__instancecheck__", "__subclasscheck__"}


@dataclass(frozen=True)
class Found:
    """Code that may reach a hook or a code runner, and its line."""

    what: str
    line: int


def called(node: ast.expr, parents: dict[int, ast.AST]) -> bool:
    parent = parents.get(id(node))
    return isinstance(parent, ast.Call) and parent.func is node


@dataclass
class Scope:
    """The nodes of one scope (the module's own code, or a function's body)."""

    nodes: list[ast.AST]
    top: bool  # module level (or a class body at module level): locals() is the namespace
    fn: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | None = None


def scopes(tree: ast.Module) -> Iterator[Scope]:
    """The module level, then each function or lambda, each without nested functions."""
    roots: list[tuple[ast.AST, bool]] = [(tree, True)]
    while roots:
        root, top = roots.pop()
        nodes: list[ast.AST] = []
        stack = list(ast.iter_child_nodes(root))
        while stack:
            n = stack.pop()
            if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
                roots.append((n, False))
                # Defaults and decorators run in the enclosing scope.
                a = n.args
                stack.extend(a.defaults)
                stack.extend(d for d in a.kw_defaults if d is not None)
                if not isinstance(n, ast.Lambda):
                    stack.extend(n.decorator_list)
                continue
            nodes.append(n)
            stack.extend(ast.iter_child_nodes(n))
        fn = root if isinstance(
            root, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) else None
        yield Scope(nodes, top, fn)


def leaves(target: ast.expr) -> Iterator[ast.expr]:
    """The single targets of an assignment target (tuples and starred unpacked)."""
    if isinstance(target, ast.Tuple | ast.List):
        for e in target.elts:
            yield from leaves(e)
    elif isinstance(target, ast.Starred):
        yield from leaves(target.value)
    else:
        yield target


def _plain_targets(target: ast.expr) -> set[str]:
    return {t.id for t in leaves(target) if isinstance(t, ast.Name)}


class Views:
    """The expressions of one scope that may be a namespace reached by reflection
    (``globals()``, ``vars(m)``, ``m.__dict__``, ``sys.modules``, a frame's globals), with
    the local names that may hold one (flow-insensitive: any binding counts)."""

    def __init__(self, scope: Scope, bound: set[str]) -> None:
        self.calls = REFLECTIVE_CALLS | ({"locals"} if scope.top else set())
        self.bound = bound
        self.aliases: set[str] = set()
        # Names bound to a `getattr` with a computed name (which may be `__dict__`): writes
        # through them count, returning or passing them on does not.
        self.weak: set[str] = set()
        changed = True
        while changed:
            changed = False
            for n in scope.nodes:
                for target, value in _bindings(n):
                    if self.written(value):
                        for t in _plain_targets(target) - self.weak:
                            self.weak.add(t)
                            changed = True
                    if not self.reflective(value):
                        continue
                    # Only plain names alias it; a store into an object is an escape.
                    for t in _plain_targets(target) - self.aliases:
                        self.aliases.add(t)
                        changed = True

    def reflective(self, e: ast.expr) -> bool:
        """Whether ``e`` may be a namespace, a module or a frame reached by reflection."""
        if isinstance(e, ast.Name):
            return e.id in self.aliases
        if isinstance(e, ast.Call):
            func = e.func
            return isinstance(func, ast.Name) and func.id in self.calls and (
                func.id not in self.bound)
        if isinstance(e, ast.Attribute):
            return e.attr in REFLECTIVE_ATTRS
        if isinstance(e, ast.IfExp):
            return self.reflective(e.body) or self.reflective(e.orelse)
        if isinstance(e, ast.BoolOp):
            return any(self.reflective(v) for v in e.values)
        if isinstance(e, ast.NamedExpr):
            return self.reflective(e.value)
        if isinstance(e, ast.Tuple | ast.List | ast.Set):
            return any(self.reflective(v) for v in e.elts)
        if isinstance(e, ast.Starred):
            return self.reflective(e.value)
        return False

    def written(self, e: ast.expr) -> bool:
        """Whether ``e``, written or read by key, may be a namespace: also
        ``getattr(m, "__dict__")`` or a ``getattr`` with a computed name, which may be one."""
        if isinstance(e, ast.Name) and e.id in self.weak:
            return True
        if isinstance(e, ast.Call) and isinstance(e.func, ast.Name) and (
            e.func.id == "getattr" and e.func.id not in self.bound
        ):
            name = e.args[1] if len(e.args) > 1 else None
            return not (isinstance(name, ast.Constant) and isinstance(name.value, str)
                        and name.value not in REFLECTIVE_ATTRS)
        return self.reflective(e)


def _bindings(n: ast.AST) -> list[tuple[ast.expr, ast.expr]]:
    """(target, value) pairs a statement or expression binds."""
    if isinstance(n, ast.Assign):
        return [(t, n.value) for t in n.targets]
    if isinstance(n, ast.AnnAssign | ast.AugAssign | ast.NamedExpr) and n.value:
        return [(n.target, n.value)]
    if isinstance(n, ast.For | ast.AsyncFor | ast.comprehension):
        return [(n.target, n.iter)]
    if isinstance(n, ast.withitem) and n.optional_vars is not None:
        return [(n.optional_vars, n.context_expr)]
    return []


def lookup_keys(call: ast.Call) -> list[ast.expr] | None:
    """The name arguments of a lookup by name (``getattr(x, n)``, ``attrgetter(a, b)``,
    ``x.__getattribute__(n)``...), or None when ``call`` is none. A lookup without its
    name argument (``getattr(x)``) raises: no keys."""
    func = call.func
    called = func.id if isinstance(func, ast.Name) else (
        func.attr if isinstance(func, ast.Attribute) else None)
    if called not in _LOOKUPS:
        return None
    at = _LOOKUPS[called]
    if at is None:
        return list(call.args)
    if at == -1:
        return call.args[-1:]
    return call.args[at:at + 1]


def computed(tree: ast.Module, bound: set[str], module_bound: set[str]) -> Found | None:
    """A lookup by a computed name, or a read of a namespace by a computed key or
    wholesale, that none of the exceptions above lets through."""
    parents = {id(c): n for n in ast.walk(tree) for c in ast.iter_child_nodes(n)}
    relayable = _relayable(tree, parents)
    receivers = {name for n in ast.walk(tree) if (name := _receiver(n)) is not None}
    helpers = reduce_helpers(tree)
    for scope in scopes(tree):
        views = Views(scope, module_bound)
        names = _Names(scope, parents, relayable, receivers, id(scope.fn) in helpers,
                       bool(helpers))
        for node in scope.nodes:
            line = getattr(node, "lineno", 0)
            if isinstance(node, ast.Call):
                keys = lookup_keys(node)
                if keys and not all(names.safe(k) for k in keys) and not names.tested(
                        node, bound):
                    return Found("an attribute looked up by a computed name (it may reach "
                                 "an interpreter-wide hook or a code runner)", line)
                found = _namespace_call(node, views, names, bound)
                if found is not None:
                    return Found(found, line)
            elif isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load) and (
                views.written(node.value) and not names.exempt(node.value)
                and not names.safe(node.slice) and not names.tested(node, bound)
            ):
                return Found("a value read from a namespace by a computed key (it may reach "
                             "an interpreter-wide hook or a code runner)", line)
            elif isinstance(node, ast.Dict) and any(
                k is None and views.reflective(v) for k, v in zip(node.keys, node.values,
                                                                   strict=True)
            ):
                return Found("a namespace unpacked into a dict (every value of it)", line)
    return None


def finite_strings(tree: ast.Module) -> Callable[[ast.expr], set[str] | None]:
    """What gives the strings an expression of ``tree`` may be, where finitely many are
    known: literals, their concatenations and f-strings, a name bound only by ``for n in
    ("a", "b")`` or a parameter tested by an enclosing ``if n in {"a", "b"}:``."""
    parents = {id(c): n for n in ast.walk(tree) for c in ast.iter_child_nodes(n)}
    by_node: dict[int, _Names] = {}
    for scope in scopes(tree):
        names = _Names(scope, parents, relayable=False, receivers=set())
        by_node.update((id(n), names) for n in scope.nodes)

    def strings(e: ast.expr) -> set[str] | None:
        names = by_node.get(id(e))
        return None if names is None else names.values(e, 0)

    return strings


def relays(tree: ast.Module) -> set[int]:
    """The lookups (by ``id``) that relay the name their ``__getattr__`` or
    ``__getattribute__`` was asked for (see above)."""
    parents = {id(c): n for n in ast.walk(tree) for c in ast.iter_child_nodes(n)}
    if not _relayable(tree, parents):
        return set()
    found: set[int] = set()
    for scope in scopes(tree):
        relay = _relay_name(scope.fn, parents)
        if relay is None:
            continue
        for node in scope.nodes:
            keys = lookup_keys(node) if isinstance(node, ast.Call) else None
            if keys and all(isinstance(k, ast.Name) and k.id == relay for k in keys):
                found.add(id(node))
    return found


def _namespace_call(node: ast.Call, views: Views, names: _Names,
                    bound: set[str]) -> str | None:
    """Why a call reading a namespace may reach a hook, if it may."""
    func = node.func
    if isinstance(func, ast.Attribute) and views.written(func.value) and not names.exempt(
            func.value):
        if func.attr in _VALUE_READS:
            return f"`.{func.attr}()` of a namespace (every value of it)"
        if func.attr in KEY_READS and node.args and not names.safe(node.args[0]) and (
                not names.tested(node, bound)):
            return ("a value read from a namespace by a computed key (it may reach an "
                    "interpreter-wide hook or a code runner)")
    if isinstance(func, ast.Name) and func.id == "dict" and any(
        views.reflective(a) for a in (*node.args, *(k.value for k in node.keywords))
    ):
        return "a namespace copied by `dict` (every value of it)"
    return None


def _modules(view: ast.expr) -> bool:
    """``sys.modules``: its values are modules, one step short of any hook."""
    return isinstance(view, ast.Attribute) and view.attr == "modules"


def _relayable(tree: ast.Module, parents: dict[int, ast.AST]) -> bool:
    """Whether the module reaches its ``__getattr__``/``__getattribute__`` only as Python
    does, or by a direct call: not named in a string, nor passed around."""
    for n in ast.walk(tree):
        if isinstance(n, ast.Constant) and n.value in _RELAYS:
            return False
        if isinstance(n, ast.Name | ast.Attribute) and (
            (n.id if isinstance(n, ast.Name) else n.attr) in _RELAYS
        ) and not called(n, parents):
            return False
    return True


class _Names:
    """What the names of one scope's lookups can be, and what is done with the values."""

    def __init__(self, scope: Scope, parents: dict[int, ast.AST], relayable: bool,
                 receivers: set[str], helper: bool = False, drivers: bool = False) -> None:
        self.fn = scope.fn
        self.helper = helper  # a pickling helper: a value may be handed back
        self.drivers = drivers  # the module has pickling helpers: DRIVERS are unsafe too
        self.receivers = receivers
        self.parents = parents
        self.relay = _relay_name(scope.fn, parents) if relayable else None
        self.stores: dict[str, list[ast.AST]] = {}
        if self.fn is not None:
            for n in ast.walk(self.fn):
                for name in bound_names(n):
                    self.stores.setdefault(name, []).append(n)

    def exempt(self, view: ast.expr) -> bool:
        """A namespace whose values are no hook: ``sys.modules`` (modules, one step short
        of any), a method's own object's (``self.__dict__``, ``vars(self)``: what code
        stored there; ``self`` is taken to be an instance, as everywhere here)."""
        if _modules(view):
            return True
        me = _self_name(self.fn, self.parents)
        if me is None or len(self.stores.get(me, [])) != 1:
            return False
        if isinstance(view, ast.Attribute) and view.attr == "__dict__":
            return isinstance(view.value, ast.Name) and view.value.id == me
        return isinstance(view, ast.Call) and isinstance(view.func, ast.Name) and (
            view.func.id == "vars" and len(view.args) == 1 and not view.keywords
            and isinstance(view.args[0], ast.Name) and view.args[0].id == me)

    def safe(self, key: ast.expr) -> bool:
        """A name that relays the one asked for, or one of finitely many strings none of
        which is a hook or a code runner."""
        if self.relay is not None and isinstance(key, ast.Name) and key.id == self.relay:
            return True
        values = self.values(key, 0)
        return values is not None and not any(
            v in INTERPRETER_HOOKS or v in CODE_RUNNERS or v in RESOLVERS
            or (self.drivers and v in DRIVERS) for v in values)

    def values(self, e: ast.expr, depth: int) -> set[str] | None:
        """The strings ``e`` may be, when finitely many are known (see above)."""
        if depth > 8:
            return None
        if isinstance(e, ast.Constant) and isinstance(e.value, str):
            return {e.value}
        if isinstance(e, ast.BinOp) and isinstance(e.op, ast.Add):
            return _product(self.values(e.left, depth + 1), self.values(e.right, depth + 1))
        if isinstance(e, ast.JoinedStr):
            found: set[str] | None = {""}
            for part in e.values:
                if isinstance(part, ast.FormattedValue):
                    if part.conversion != -1 or part.format_spec is not None:
                        return None
                    found = _product(found, self.values(part.value, depth + 1))
                else:
                    found = _product(found, self.values(part, depth + 1))
            return found
        if isinstance(e, ast.Name):
            return self._domain(e)
        return None

    def _domain(self, e: ast.Name) -> set[str] | None:
        """The strings a name may hold at ``e``: bound only by one ``for`` over literal
        strings (written there, or a local bound once to them: ``_literal_local``), or a
        parameter never rebound, tested by an enclosing ``if``."""
        fn = self.fn
        if fn is None:
            return None
        stores = self.stores.get(e.id, [])
        if len(stores) == 1 and isinstance(stores[0], ast.Name):
            loop = self.parents.get(id(stores[0]))
            if isinstance(loop, ast.For | ast.comprehension) and loop.target is stores[0]:
                return _literal_strings(loop.iter) or self._literal_local(loop.iter)
        if len(stores) != 1 or not isinstance(stores[0], ast.arg) or not any(
                stores[0] is p for p in _own_params(fn)):
            return None
        child: ast.AST = e
        parent = self.parents.get(id(e))
        while parent is not None and child is not fn:
            if isinstance(parent, ast.If) and any(child is s for s in parent.body):
                found = _guarded(parent.test, e.id)
                if found is not None:
                    return found
            child, parent = parent, self.parents.get(id(parent))
        return None

    def _literal_local(self, e: ast.expr) -> set[str] | None:
        """The strings of a local bound once to a literal tuple of strings (``names =
        ("a", "b")``), or to a literal list or set of them that is only iterated over or
        tested (``for n in names``, ``n in names``: nothing can add to it)."""
        if not isinstance(e, ast.Name) or self.fn is None:
            return None
        stores = self.stores.get(e.id, [])
        binding = self.parents.get(id(stores[0])) if len(stores) == 1 else None
        if not (isinstance(binding, ast.Assign) and len(binding.targets) == 1
                and binding.targets[0] is stores[0]):
            return None
        found = _literal_strings(binding.value)
        if found is None or isinstance(binding.value, ast.Tuple):
            return found
        for use in ast.walk(self.fn):
            if isinstance(use, ast.Name) and use.id == e.id and isinstance(use.ctx, ast.Load):
                parent = self.parents.get(id(use))
                if not ((isinstance(parent, ast.For | ast.comprehension) and parent.iter is use)
                        or (isinstance(parent, ast.Compare) and use in parent.comparators
                        and all(isinstance(o, ast.In | ast.NotIn) for o in parent.ops))):
                    return None
        return found

    def tested(self, value: ast.expr, bound: set[str]) -> bool:
        """Whether the value of ``value`` is only tested or walked (see above), never
        called, passed on, returned or kept (a pickling helper may hand it back)."""
        if self._test_use(value, bound) or self._handed_back(value):
            return True
        first = self._local_of(value)
        if first is None:
            return False
        todo, seen = [first], {(first[0], id(first[1]))}
        while todo:
            name, binding = todo.pop()
            assert self.fn is not None
            if any(isinstance(n, ast.Global | ast.Nonlocal) and name in n.names
                   for n in ast.walk(self.fn)) or any(
                    isinstance(n, ast.AugAssign) and isinstance(n.target, ast.Name)
                    and n.target.id == name for n in ast.walk(self.fn)):
                return False
            narrowed = self._asserted(name, binding, bound)
            for use in self._uses(name, binding):
                if self._test_use(use, bound) or self._handed_back(use) or narrowed or (
                        self._narrowed(use, binding, bound)):
                    continue
                step = self._walked(use, bound)
                if step is None:
                    return False
                if self._test_use(step, bound) or self._handed_back(step):
                    continue
                local = self._local_of(step)
                if local is None:
                    return False
                if (local[0], id(local[1])) not in seen:
                    seen.add((local[0], id(local[1])))
                    todo.append(local)
        return True

    def _narrowed(self, use: ast.Name, binding: ast.stmt, bound: set[str]) -> bool:
        """Whether ``use`` is in the body of an ``if`` outside ``binding`` whose test holds
        only for an instance of a builtin scalar type (``_narrows``), which no hook or code
        runner is. Every path from the binding to ``use`` passes that test after the
        binding, and ``use`` reads the binding's value (it is reached by it), so the test
        saw that value. (An ``if`` around the binding tested an earlier value.)"""
        around: set[int] = set()
        at: ast.AST | None = binding
        while at is not None and at is not self.fn:
            around.add(id(at))
            at = self.parents.get(id(at))
        child: ast.AST = use
        parent = self.parents.get(id(use))
        while parent is not None and parent is not self.fn:
            if isinstance(parent, ast.If) and id(parent) not in around and any(
                    child is s for s in parent.body) and _narrows(parent.test, use.id, bound):
                return True
            child, parent = parent, self.parents.get(id(parent))
        return False

    def _asserted(self, name: str, binding: ast.stmt, bound: set[str]) -> bool:
        """Whether the statement right after ``binding`` asserts that ``name`` holds an
        instance of a builtin scalar type, with no ``try`` or ``with`` around them in the
        function (an ``AssertionError`` caught there would go on with any value): every
        read the binding reaches then sees such an instance (the assert's own test is a
        test)."""
        at: ast.AST = binding
        following: ast.stmt | None = None
        while at is not self.fn:
            owner = self.parents.get(id(at))
            if owner is None or isinstance(owner, ast.Try | ast.TryStar | ast.With
                                           | ast.AsyncWith | ast.ExceptHandler):
                return False
            if following is None:
                for block in (getattr(owner, f, None) for f in ("body", "orelse",
                                                                  "finalbody")):
                    if isinstance(block, list) and any(s is binding for s in block):
                        index = next(i for i, s in enumerate(block) if s is binding)
                        following = block[index + 1] if index + 1 < len(block) else None
                        break
                if following is None:
                    return False
            at = owner
        return isinstance(following, ast.Assert) and _narrows(following.test, name, bound)

    def _uses(self, name: str, binding: ast.stmt) -> list[ast.Name]:
        """The reads of local ``name`` that ``binding`` may reach (all, where unknown)."""
        fn = self.fn
        if isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
            found = pyflow.reached(fn, binding, name)
            if found is not None:
                return found
        assert fn is not None
        return [n for n in ast.walk(fn)
                if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)]

    def _handed_back(self, value: ast.expr) -> bool:
        """In a pickling helper: ``value`` returned, or passed to a call of one of its
        parameters (which nothing in it binds again)."""
        if not self.helper or self.fn is None:
            return False
        parent = self.parents.get(id(value))
        if isinstance(parent, ast.Return):
            return True
        if isinstance(parent, ast.Starred | ast.keyword):
            parent = self.parents.get(id(parent))
        if not isinstance(parent, ast.Call) or parent.func is value:
            return False
        return isinstance(parent.func, ast.Name) and caller_given(self.fn, parent.func.id)

    def _local_of(self, value: ast.expr) -> tuple[str, ast.Assign] | None:
        """The local variable ``value`` is assigned to alone (``x = value``), and that
        assignment, or None."""
        parent = self.parents.get(id(value))
        if (isinstance(parent, ast.Assign) and parent.value is value
                and len(parent.targets) == 1 and isinstance(parent.targets[0], ast.Name)
                and self.fn is not None):
            return parent.targets[0].id, parent
        return None

    def _walked(self, use: ast.Name, bound: set[str]) -> ast.expr | None:
        """The attribute read ``use.a`` or lookup ``getattr(use, n[, d])`` that ``use`` is
        the object of, or None. (A computed ``n`` is a lookup examined on its own.)"""
        parent = self.parents.get(id(use))
        if isinstance(parent, ast.Attribute) and parent.value is use and isinstance(
                parent.ctx, ast.Load):
            return parent
        if (isinstance(parent, ast.Call) and isinstance(parent.func, ast.Name)
                and parent.func.id == "getattr" and "getattr" not in bound
                and 2 <= len(parent.args) <= 3 and not parent.keywords
                and parent.args[0] is use and all(a is not use for a in parent.args[1:])):
            return parent
        return None

    def _test_use(self, value: ast.expr, bound: set[str]) -> bool:
        parent = self.parents.get(id(value))
        if isinstance(parent, ast.Compare):
            return not self.receivers or all(
                isinstance(op, ast.Is | ast.IsNot) for op in parent.ops)
        if isinstance(parent, ast.UnaryOp) and isinstance(parent.op, ast.Not):
            return True
        if isinstance(parent, ast.If | ast.While | ast.IfExp | ast.Assert) and (
                parent.test is value):
            return True
        if isinstance(parent, ast.Call) and isinstance(parent.func, ast.Name) and (
            parent.func.id in _TESTS and parent.func.id not in bound
            and parent.args and parent.args[0] is value and value not in parent.args[1:]
        ):
            return parent.func.id != "isinstance" or not self.receivers & _INSTANCE_RECEIVERS
        if self._shown(value, parent, bound):
            return True
        if isinstance(parent, ast.Call) and isinstance(parent.func, ast.Name) and (
                parent.func.id == "type" and "type" not in bound and not parent.keywords
                and len(parent.args) == 1 and parent.args[0] is value):
            # `type(v) is C`, `type(v) == C`: the value's class compared, by identity or
            # by its metaclass's `__eq__`, which receives the class, not the value.
            compare = self.parents.get(id(parent))
            return isinstance(compare, ast.Compare) and all(
                isinstance(op, ast.Is | ast.IsNot | ast.Eq | ast.NotEq) for op in compare.ops)
        return isinstance(parent, ast.BoolOp) and self._test_use(parent, bound)

    def _shown(self, value: ast.expr, parent: ast.AST | None, bound: set[str]) -> bool:
        """Whether ``value`` is only shown: the one argument of ``repr``, ``str``,
        ``len``... (``format`` with a literal spec), a field of an f-string, or an operand
        of ``%`` formatting a literal string (alone or in a tuple)."""
        if isinstance(parent, ast.Call) and isinstance(parent.func, ast.Name) and (
                parent.func.id in _SHOWS and parent.func.id not in bound
                and not parent.keywords and parent.args and parent.args[0] is value
                and len(parent.args) <= (2 if parent.func.id == "format" else 1)
                and all(isinstance(a, ast.Constant) for a in parent.args[1:])):
            return True
        if isinstance(parent, ast.FormattedValue) and parent.value is value:
            return True
        if isinstance(parent, ast.Tuple) and isinstance(parent.ctx, ast.Load):
            value, parent = parent, self.parents.get(id(parent))
        return (isinstance(parent, ast.BinOp) and isinstance(parent.op, ast.Mod)
                and parent.right is value and isinstance(parent.left, ast.Constant)
                and isinstance(parent.left.value, str))


# The answers for the last few modules (a review asks once per function of a module, from
# several checks), each kept with its tree: an ``id`` is reused only once that is gone.
_HELPERS: OrderedDict[int, tuple[ast.Module, frozenset[int]]] = OrderedDict()
_HELPERS_LOCK = threading.Lock()


def reduce_helpers(tree: ast.Module) -> set[int]:
    """The pickling helpers of a module (see above), by ``id`` of their definitions."""
    with _HELPERS_LOCK:
        known = _HELPERS.get(id(tree))
    if known is not None and known[0] is tree:
        return set(known[1])
    found = _reduce_helpers(tree)
    with _HELPERS_LOCK:
        _HELPERS[id(tree)] = (tree, frozenset(found))
        while len(_HELPERS) > 16:
            _HELPERS.popitem(last=False)
    return found


def _reduce_helpers(tree: ast.Module) -> set[int]:
    parents = {id(c): n for n in ast.walk(tree) for c in ast.iter_child_nodes(n)}
    for n in ast.walk(tree):
        if _mentions(n) & _REDUCERS and not (
            isinstance(n, ast.FunctionDef) and isinstance(parents.get(id(n)), ast.ClassDef)
        ):
            return set()
    defs = {n.name: n for n in tree.body
            if isinstance(n, ast.FunctionDef) and not n.decorator_list}
    returned: set[str] = set()  # by a `__reduce__`
    for n in ast.walk(tree):
        for name in _mentions(n) & defs.keys():
            if n is defs[name]:
                continue
            if not _reduced(n, parents):
                del defs[name]
            elif isinstance(n, ast.Name):
                returned.add(name)
    helpers = {id(d) for name, d in defs.items() if name in returned}
    return helpers if helpers and not _drives(tree, helpers, parents) else set()


def _drives(tree: ast.Module, helpers: set[int], parents: dict[int, ast.AST]) -> bool:
    """Whether code of the module outside its pickling helpers may itself unpickle or copy
    an object (and so call a helper, with data it chose, and use what it returns): it
    names a module or function that does (``DRIVERS``), or imports a module by a computed
    name and does more with it than test or walk it (``import_module(n).copy``)."""
    bound = {name for stmt in tree.body for n in ast.walk(stmt) for name in bound_names(n)
             if not isinstance(n, ast.arg)}
    receivers = {name for n in ast.walk(tree) if (name := _receiver(n)) is not None}
    for scope in scopes(tree):
        if id(scope.fn) in helpers:
            continue
        names = _Names(scope, parents, False, receivers)
        for n in scope.nodes:
            if _mentions(n) & DRIVERS:
                return True
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Name | ast.Attribute) and (
                (n.func.id if isinstance(n.func, ast.Name) else n.func.attr) in _IMPORTERS
            ) and not (n.args and isinstance(n.args[0], ast.Constant) and isinstance(
                    n.args[0].value, str) and n.args[0].value.split(".")[0] not in DRIVERS
            ) and not names.tested(n, bound):
                return True
    return False


def caller_dicts(tree: ast.Module) -> set[int]:
    """The ``x.__dict__`` reads (by ``id``) in pickling helpers where ``x`` is an object of
    the caller's choosing (``caller_made``): writes into it are the caller's doing."""
    found: set[int] = set()
    helpers = reduce_helpers(tree)
    if not helpers:
        return found
    for fn in tree.body:
        if isinstance(fn, ast.FunctionDef) and id(fn) in helpers:
            found |= {id(n) for n in ast.walk(fn) if isinstance(n, ast.Attribute)
                      and n.attr == "__dict__" and isinstance(n.value, ast.Name)
                      and caller_made(fn, n.value)}
    return found


def _mentions(n: ast.AST) -> set[str]:
    """The names ``n`` binds or mentions: as a name, an attribute, a string."""
    found = set(bound_names(n))
    if isinstance(n, ast.Name):
        found.add(n.id)
    elif isinstance(n, ast.Attribute):
        found.add(n.attr)
    elif isinstance(n, ast.Constant) and isinstance(n.value, str):
        found.add(n.value)
    return found


def _reduced(n: ast.AST, parents: dict[int, ast.AST]) -> bool:
    """Whether ``n`` is a read of a name that a ``__reduce__``/``__reduce_ex__`` method
    returns (alone or in the tuple it returns), or a string of a module-level
    ``__all__``."""
    up = parents.get(id(n))
    if isinstance(n, ast.Constant):
        while isinstance(up, ast.List | ast.Tuple | ast.BinOp):
            up = parents.get(id(up))
        return isinstance(up, ast.Assign | ast.AugAssign) and isinstance(
            parents.get(id(up)), ast.Module) and all(
            isinstance(t, ast.Name) and t.id == "__all__"
            for t in (up.targets if isinstance(up, ast.Assign) else [up.target]))
    if not (isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)):
        return False
    if isinstance(up, ast.Tuple) and isinstance(up.ctx, ast.Load):
        up = parents.get(id(up))
    if not isinstance(up, ast.Return):
        return False
    while up is not None and not isinstance(up, ast.FunctionDef | ast.AsyncFunctionDef
                                            | ast.Lambda | ast.ClassDef):
        up = parents.get(id(up))
    return isinstance(up, ast.FunctionDef) and up.name in _REDUCERS and isinstance(
        parents.get(id(up)), ast.ClassDef)


def caller_given(fn: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda, name: str) -> bool:
    """Whether ``name`` is a parameter of ``fn`` that nothing in it binds again."""
    return any(p.arg == name for p in _all_params(fn)) and not any(
        name in bound_names(n) for n in ast.walk(fn) if not isinstance(n, ast.arg))


def caller_made(fn: ast.FunctionDef | ast.AsyncFunctionDef, read: ast.Name) -> bool:
    """Whether every value ``read`` may see is a parameter's, or what calling one
    returned (``obj = cls(...)``): an object of the caller's choosing."""
    name = read.id
    for n in ast.walk(fn):
        if isinstance(n, ast.arg):
            if n.arg == name and n not in _all_params(fn):
                return False  # a nested function's parameter of that name
            continue
        if name not in bound_names(n):
            continue
        if isinstance(n, ast.Name) and isinstance(parent := _statement_of(fn, n), ast.Assign):
            found = pyflow.reached(fn, parent, name)
            if found is not None and not any(r is read for r in found):
                continue  # it never reaches the read
            value = parent.value
            if (len(parent.targets) == 1 and parent.targets[0] is n
                    and isinstance(value, ast.Call) and isinstance(value.func, ast.Name)
                    and caller_given(fn, value.func.id)):
                continue
        return False
    return any(p.arg == name for p in _all_params(fn)) or any(
        name in bound_names(n) for n in ast.walk(fn))


def _statement_of(fn: ast.AST, target: ast.Name) -> ast.stmt | None:
    for n in ast.walk(fn):
        if isinstance(n, ast.Assign) and any(t is target for t in n.targets):
            return n
    return None


def _all_params(fn: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> list[ast.arg]:
    a = fn.args
    return [*a.posonlyargs, *a.args, *([a.vararg] if a.vararg else []), *a.kwonlyargs,
            *([a.kwarg] if a.kwarg else [])]


def _receiver(n: ast.AST) -> str | None:
    """The method that receives a tested value, if ``n`` defines, binds or mentions one."""
    name = n.name if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef) else (
        n.id if isinstance(n, ast.Name) else (n.attr if isinstance(n, ast.Attribute) else (
            n.value if isinstance(n, ast.Constant) else None)))
    return name if isinstance(name, str) and name in _RECEIVERS else None


# Builtin types no hook or code runner is an instance of.
_SCALARS = {"int", "float", "complex", "bool", "str", "bytes"}


def _narrows(test: ast.expr, name: str, bound: set[str]) -> bool:
    """Whether ``test`` holds only where local ``name`` is an instance of a builtin scalar
    type: ``isinstance(name, int)`` (or a tuple of such types), ``type(name) is int`` or
    ``== int``, or a conjunction with one of these (none of the names rebound in the
    module)."""
    def scalar(e: ast.expr) -> bool:
        if isinstance(e, ast.Tuple):
            return bool(e.elts) and all(scalar(x) for x in e.elts)
        return isinstance(e, ast.Name) and e.id in _SCALARS and e.id not in bound

    def this(e: ast.expr) -> bool:
        return isinstance(e, ast.Name) and e.id == name

    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        return any(_narrows(v, name, bound) for v in test.values)
    if isinstance(test, ast.Call) and isinstance(test.func, ast.Name) and (
            test.func.id == "isinstance" and "isinstance" not in bound
            and len(test.args) == 2 and not test.keywords):
        return this(test.args[0]) and scalar(test.args[1])
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(
            test.ops[0], ast.Is | ast.Eq):
        left, right = test.left, test.comparators[0]
        return (isinstance(left, ast.Call) and isinstance(left.func, ast.Name)
                and left.func.id == "type" and "type" not in bound
                and len(left.args) == 1 and not left.keywords and this(left.args[0])
                and isinstance(right, ast.Name) and scalar(right))
    return False


def _product(a: set[str] | None, b: set[str] | None) -> set[str] | None:
    if a is None or b is None or len(a) * len(b) > 256:
        return None
    return {x + y for x in a for y in b}


def _literal_strings(e: ast.expr) -> set[str] | None:
    if isinstance(e, ast.Tuple | ast.List | ast.Set) and all(
            isinstance(x, ast.Constant) and isinstance(x.value, str) for x in e.elts):
        return {x.value for x in e.elts
                if isinstance(x, ast.Constant) and isinstance(x.value, str)}
    return None


def _guarded(test: ast.expr, name: str) -> set[str] | None:
    """The strings ``if name in {...}`` / ``if name == "..."`` lets into its body."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1
            and isinstance(test.left, ast.Name) and test.left.id == name):
        return None
    op, right = test.ops[0], test.comparators[0]
    if isinstance(op, ast.In):
        return _literal_strings(right)
    if isinstance(op, ast.Eq) and isinstance(right, ast.Constant) and isinstance(
            right.value, str):
        return {right.value}
    return None


def _own_params(fn: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> list[ast.arg]:
    a = fn.args
    return [*a.posonlyargs, *a.args, *a.kwonlyargs]


def bound_names(n: ast.AST) -> list[str]:
    """The names a node binds, in any form (an argument, a `global` declaration too)."""
    if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load):
        return [n.id]
    if isinstance(n, ast.arg):
        return [n.arg]
    if isinstance(n, ast.alias):
        return [(n.asname or n.name).split(".")[0]]
    if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return [n.name]
    if isinstance(n, ast.ExceptHandler | ast.MatchAs | ast.MatchStar) and n.name:
        return [n.name]
    if isinstance(n, ast.MatchMapping) and n.rest:
        return [n.rest]
    if isinstance(n, ast.Global | ast.Nonlocal):
        return list(n.names)
    return []


def _self_name(fn: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | None,
               parents: dict[int, ast.AST]) -> str | None:
    """The first parameter of a method (a def in a class body, not a staticmethod)."""
    if not isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef) or not isinstance(
            parents.get(id(fn)), ast.ClassDef):
        return None
    if not all(isinstance(d, ast.Name) and d.id == "property" for d in fn.decorator_list):
        return None  # a staticmethod's first parameter, say, may be anything
    positional = [*fn.args.posonlyargs, *fn.args.args]
    return positional[0].arg if positional else None


def _relay_name(fn: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | None,
                parents: dict[int, ast.AST]) -> str | None:
    """The name parameter of ``__getattr__``/``__getattribute__`` (a method's second, a
    module's first), when nothing in it binds that name again."""
    if not isinstance(fn, ast.FunctionDef) or fn.name not in _RELAYS or fn.decorator_list:
        return None
    owner = parents.get(id(fn))
    positional = [*fn.args.posonlyargs, *fn.args.args]
    if isinstance(owner, ast.ClassDef):
        param = positional[1] if len(positional) > 1 else None
    elif isinstance(owner, ast.Module) and fn.name == "__getattr__":
        param = positional[0] if positional else None
    else:
        return None
    if param is None:
        return None
    again = [n for n in ast.walk(fn) if param.arg in bound_names(n) and n is not param]
    return None if again else param.arg
