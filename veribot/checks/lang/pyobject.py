"""Methods for the model: ``self`` as an object of its class with attributes of known types.

A method is lowered to a module-level function the executor already models: each
attribute of ``self`` it uses becomes a parameter of the attribute's declared type, so
reading ``self.x`` reads that parameter. An attribute the method (or a method it calls)
rebinds becomes a one-item list, a *cell*, whose contents are compared after the call on
every exit like a mutated list argument: the object's state after the call is part of the
behaviour. A list attribute that is only mutated (``self.items.append(v)``) is a list
parameter, compared the same way. Calls of other plain methods of the class
(``self.m(...)``) are lowered alike and inlined as module functions.

Where the declared types come from: class-level annotations (``x: int``, dataclass
fields) and ``__init__`` assigning an annotated parameter (``self.x = x``) or annotating
the assignment (``self.x: int = ...``). The types must be the same in both versions.

Bases (``pyclasses``): a class may derive from classes of the same module (and
``object``, ``abc.ABC``, ``typing.Generic[...]``); a name on ``self`` means what the first
class of Python's method resolution order binds, ``super().m(...)`` in a method of ``K``
the first ``m`` after ``K`` in that order, and the constructor is the first ``__init__``
with those it reaches by ``super().__init__``. A read-only property (``@property`` alone)
is read by calling its getter, lowered like a method; an ``@overload`` stub is replaced
by the definition after it.

Anything else on ``self`` is ``Unsupported``: an attribute of unknown type, another
member that is not a plain method, ``self`` used as a value, ``super()`` other than to
call a plain method, ``type(self)``, a base from another module, a metaclass, a
decorator other than ``dataclass`` (none in a hierarchy), or ``__getattr__``,
``__getattribute__``, ``__setattr__``, ``__delattr__``, ``__init_subclass__``; special
methods (``__init__``, ``__eq__``, ...).

The proof rests on the assumption (stated in the verdict) that ``self`` is an instance of
exactly its class, not of a subclass overriding its methods, whose attributes hold values
of their declared types, with list attributes distinct from each other and from the
arguments.
"""

from __future__ import annotations

import ast
import copy
from dataclasses import dataclass, field

from veribot.checks.lang import pyclasses, pysignature
from veribot.checks.lang.pymodule import overload_stubs
from veribot.checks.lang.pytypes import ListT, PyType, UnionT, domain, from_annotation, is_known
from veribot.checks.lang.pyvalues import Unsupported

ENTRY = "__veribot_method__"
_PREFIX = "_vb_self_"
_HOOKS = frozenset({"__getattr__", "__getattribute__", "__setattr__", "__delattr__",
                    "__init_subclass__", "__set_name__", "__class_getitem__"})
_MUTABLE = (ListT,)
_PROPERTY = ast.dump(ast.Name("property", ast.Load()))


@dataclass(frozen=True)
class Lowered:
    """Both modules with the method as a module function ``ENTRY``, and the assumptions."""

    tree_a: ast.Module
    tree_b: ast.Module
    entry: str
    assumptions: tuple[str, ...]


@dataclass
class _Class:
    node: ast.ClassDef
    name: str  # qualified within the module
    types: dict[str, ast.expr]  # attribute -> annotation
    methods: dict[str, ast.FunctionDef]  # plain methods (no decorator)
    members: set[str]  # every other name the class body binds (properties, constants, ...)
    frozen: bool
    slots: frozenset[str] | None
    # The method resolution order, and the class whose body defines each method (by id).
    order: pyclasses.Hierarchy
    owners: dict[int, ast.ClassDef] = field(default_factory=dict)
    # Read-only properties (`@property` alone, no setter): reading one calls its getter.
    properties: dict[str, ast.FunctionDef] = field(default_factory=dict)
    # What building an object leaves: the attributes it surely has (on the instance or
    # its class), those surely on the instance, and why an attribute's type is not known.
    present: frozenset[str] = frozenset()
    own: frozenset[str] = frozenset()
    unknown: dict[str, str] = field(default_factory=dict)
    # The attributes building the object may set on it (None: any, `self` escapes).
    ctor_writes: frozenset[str] | None = frozenset()
    # Members whose lookup on `self` may run code not read here (a decorated method, a
    # descriptor): other than plain methods, read-only properties and plain data.
    active: frozenset[str] = frozenset()


def lower(tree_a: ast.Module, tree_b: ast.Module, entry: str) -> Lowered:
    """Lower ``Class.method`` in both modules, or raise ``Unsupported`` saying why not."""
    parts = entry.split(".")
    cls_a, cls_b = _read_class(tree_a, parts[:-1]), _read_class(tree_b, parts[:-1])
    name = parts[-1]
    fn_a, fn_b = cls_a.methods.get(name), cls_b.methods.get(name)
    if fn_a is None or fn_b is None or cls_a.owners.get(id(fn_a)) is not cls_a.node or (
            cls_b.owners.get(id(fn_b)) is not cls_b.node):
        node = _member_def(cls_b.node, name) or _member_def(cls_a.node, name)
        line = node.lineno if node is not None else cls_b.node.lineno
        raise Unsupported("a method with decorators (the model covers plain methods)", line)
    if name.startswith("__") and name.endswith("__"):
        raise Unsupported(f"the special method `{name}`", fn_b.lineno)
    used: set[str] = set()
    written: set[str] = set()
    called_a: dict[str, ast.FunctionDef] = {}
    called_b: dict[str, ast.FunctionDef] = {}
    for cls, fn, called in ((cls_a, fn_a, called_a), (cls_b, fn_b, called_b)):
        _uses(cls, fn, used, written, called, set())
    names = {key.rsplit(".", 1)[1] for key in (*called_a, *called_b)}
    # An attribute of the object hides a method of its name, not a property (a data
    # descriptor: writing one without a setter raises).
    hideable = {fn.name for fn in (*called_a.values(), *called_b.values())
                if not fn.decorator_list}
    for tree, cls in ((tree_a, cls_a), (tree_b, cls_b)):
        _not_overridden(tree, cls, names | {name})
        for node in cls.order.classes:
            _untouched(tree, node)
        for method in sorted(hideable):
            if cls.ctor_writes is None or method in cls.ctor_writes:
                # An attribute of the object named like the method hides it.
                raise Unsupported(f"`self.{method}()`, which building the object may "
                                  "replace by an attribute", fn_b.lineno)
    for attr in sorted(used):
        ta, tb = cls_a.types.get(attr), cls_b.types.get(attr)
        if ta is None or tb is None:
            raise Unsupported(f"the attribute `self.{attr}`, whose type is not declared "
                              "(annotate it in the class body or in `__init__`)", fn_b.lineno)
        if ast.dump(ta) != ast.dump(tb):
            raise Unsupported(f"a change of the declared type of `self.{attr}`", fn_b.lineno)
        t = from_annotation(ta)
        if not is_known(t):
            raise Unsupported(f"the attribute `self.{attr}` of type {ast.unparse(ta)}",
                              fn_b.lineno)
        if attr in written and isinstance(t, _MUTABLE):
            raise Unsupported(f"rebinding the list attribute `self.{attr}`", fn_b.lineno)
        for cls, called in ((cls_a, called_a), (cls_b, called_b)):
            if attr in cls.unknown:
                raise Unsupported(cls.unknown[attr], fn_b.lineno)
            if attr not in cls.present:
                raise Unsupported(f"the attribute `self.{attr}`, which building the object "
                                  "may leave unset (AttributeError)", fn_b.lineno)
            reads = _reads(cls, [*called.values(), cls.methods[name]])
            if attr in written and attr not in cls.own and attr in reads:
                # `self.n = self.n` adds an attribute equal to the class's: the model, which
                # sees only values, would miss it.
                raise Unsupported(f"writing `self.{attr}`, which the object may not hold "
                                  "itself (the write would add it)", fn_b.lineno)
    for cls in (cls_a, cls_b):
        if written and cls.frozen:
            raise Unsupported("writing an attribute of a frozen dataclass", fn_b.lineno)
        if cls.slots is not None and used - cls.slots:
            raise Unsupported("an attribute outside the class's `__slots__`", fn_b.lineno)
    attrs = sorted(used)
    out_a = _lowered_module(tree_a, cls_a, fn_a, attrs, written)
    out_b = _lowered_module(tree_b, cls_b, fn_b, attrs, written)
    shown = ", ".join(f"{a}: {ast.unparse(cls_b.types[a])}" for a in attrs)
    assumptions = [
        f"`self` is an instance of exactly `{cls_b.name}` (not of a subclass that overrides "
        "its methods or attributes)"
        + (f", whose attributes hold values of their declared types ({shown})" if attrs
           else ""),
    ]
    if len(cls_b.order.mro) > 2 or any(len(c.order.classes) > 1 for c in (cls_a, cls_b)):
        assumptions.append(
            "its class's bases are read as each version's module defines them (method "
            f"resolution order {cls_b.order.names})")
    if any(isinstance(from_annotation(cls_b.types[a]), ListT) for a in attrs):
        assumptions.append("the list attributes of `self` are distinct objects, and distinct "
                           "from the arguments")
    return Lowered(out_a, out_b, ENTRY, tuple(assumptions))


def _not_overridden(tree: ast.Module, cls: _Class, names: set[str]) -> None:
    """Refuse when a subclass in the module overrides a method the proof inlines: the
    assumption that ``self`` is exactly of its class would be plainly at odds with it."""
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and any(
                isinstance(b, ast.Name) and b.id == cls.node.name for b in node.bases):
            for stmt in node.body:
                if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef) \
                        and stmt.name in names - {cls.node.name}:
                    raise Unsupported(f"a method that a subclass (`{node.name}`) overrides",
                                      stmt.lineno)


def _untouched(tree: ast.Module, cls: ast.ClassDef) -> None:
    """Refuse when code outside the class may change it: its name rebound, stored into,
    or handed to a function (``setattr(C, ...)``) anywhere but in a constructor call or
    an ``isinstance`` test."""
    name = cls.name
    parents: dict[ast.AST, ast.AST] = {}
    for node in ast.walk(tree):
        for child in ast.iter_child_nodes(node):
            parents[child] = node
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Name) and node.id == name):
            continue
        parent = parents.get(node)
        if not isinstance(node.ctx, ast.Load):
            raise Unsupported(f"code that rebinds the class name `{name}`", node.lineno)
        if isinstance(parent, ast.Call) and parent.func is node:
            continue  # building an object
        if isinstance(parent, ast.ClassDef) and node in parent.bases:
            continue
        grand = parents.get(parent) if parent is not None else None
        if isinstance(parent, ast.Subscript) and parent.value is node and isinstance(
                grand, ast.ClassDef) and parent in grand.bases:
            continue  # `class Sub(Base[int])`
        if isinstance(parent, ast.Attribute) and isinstance(parent.ctx, ast.Load) and not (
                isinstance(parents.get(parent), ast.Call)
                and parents[parent].func is parent):  # type: ignore[attr-defined]
            continue  # reading a class attribute
        if isinstance(parent, ast.Call) and isinstance(parent.func, ast.Name) \
                and parent.func.id in ("isinstance", "issubclass"):
            continue
        if _in_annotation(node, parents):
            continue
        raise Unsupported(f"code that may change the class `{name}` (line {node.lineno})",
                          node.lineno)


def _in_annotation(node: ast.AST, parents: dict[ast.AST, ast.AST]) -> bool:
    child, parent = node, parents.get(node)
    while parent is not None:
        if isinstance(parent, ast.arg) and child is parent.annotation:
            return True
        if isinstance(parent, ast.FunctionDef | ast.AsyncFunctionDef) and child is parent.returns:
            return True
        if isinstance(parent, ast.AnnAssign) and child is parent.annotation:
            return True
        child, parent = parent, parents.get(parent)
    return False


def _member_def(cls: ast.ClassDef, name: str) -> ast.stmt | None:
    found = None
    for node in cls.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == name:
            found = node
    return found


def _read_class(tree: ast.Module, path: list[str]) -> _Class:
    body: list[ast.stmt] = tree.body
    node: ast.ClassDef | None = None
    for part in path:
        matches = [n for n in body if isinstance(n, ast.ClassDef) and n.name == part]
        if len(matches) != 1:
            raise Unsupported(f"a class `{part}` defined more than once, or not at all")
        node = matches[0]
        body = node.body
    assert node is not None
    if len(path) > 1:
        raise Unsupported("a method of a nested class", node.lineno)
    order = pyclasses.hierarchy(tree, node)
    classes = order.classes
    for c in classes:
        _no_private_names(c)
    frozen = _decorators(tree, node) if len(classes) == 1 else False
    for c in classes if len(classes) > 1 else ():
        if c.decorator_list:
            raise Unsupported(f"a class decorator in a class hierarchy "
                              f"({ast.unparse(c.decorator_list[0])})", c.lineno)
    builtin_property = not any(
        (isinstance(n, ast.Name) and n.id == "property" and not isinstance(n.ctx, ast.Load))
        or (isinstance(n, ast.alias) and (n.asname or n.name) == "property")
        or (isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.arg)
            and getattr(n, "name", getattr(n, "arg", None)) == "property")
        for n in ast.walk(tree))
    bodies = [_read_body(tree, c, overload_stubs(tree, c.body), builtin_property)
              for c in classes]
    types: dict[str, ast.expr] = {}
    for b in reversed(bodies):
        for name, (annotation, line) in b.types.items():
            _declare(types, name, annotation, line)
    # Each name means what the first class of the order binding it binds.
    methods: dict[str, ast.FunctionDef] = {}
    members: set[str] = set()
    owners: dict[int, ast.ClassDef] = {}
    by_class = {id(c): b for c, b in zip(classes, bodies, strict=True)}
    properties: dict[str, ast.FunctionDef] = {}
    active: set[str] = set()
    for c, b in zip(classes, bodies, strict=True):
        for fn in (*b.methods.values(), *b.properties.values()):
            owners[id(fn)] = c
    for name in set().union(*(b.members | set(b.types) for b in bodies)):
        binder = order.binder(name)
        if isinstance(binder, str):
            members.add(name)  # a neutral base binds it (`_abc_impl`)
        elif binder is not None:
            found = by_class[id(binder)]
            if name in found.methods:
                methods[name] = found.methods[name]
            if name in found.properties:
                properties[name] = found.properties[name]
            if name in found.members:
                members.add(name)
            if name in found.active:
                active.add(name)
    slots = bodies[0].slots
    if len(classes) > 1 and any(b.slots is not None for b in bodies):
        raise Unsupported("`__slots__` in a class hierarchy", node.lineno)
    for b in bodies:
        init = b.methods.get("__init__")
        if init is not None:
            _init_types(init, types)
    # A member (a method, a property, a descriptor) is what the lookup finds, whatever
    # type a class declares for the name: any use of it is refused as a member's.
    for name in list(types):
        if name in members:
            del types[name]
    qualified = ".".join(path)
    cls = _Class(node, qualified, types, methods, members, frozen, slots, order, owners,
                 properties, active=frozenset(active))
    _construction(cls, {id(c): b for c, b in zip(classes, bodies, strict=True)})
    return cls


def _no_private_names(cls: ast.ClassDef) -> None:
    """Refuse a private name (``__x``) anywhere in a class: Python mangles it there
    (``self.__x`` in class ``K`` is ``self._K__x``), which the model does not follow."""
    for n in ast.walk(cls):
        names: list[str | None] = []
        if isinstance(n, ast.Name):
            names.append(n.id)
        elif isinstance(n, ast.Attribute):
            names.append(n.attr)
        elif isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.append(n.name)
        elif isinstance(n, ast.arg | ast.keyword):
            names.append(n.arg)
        elif isinstance(n, ast.alias):
            names.extend([n.name, n.asname])
        elif isinstance(n, ast.ExceptHandler | ast.MatchAs | ast.MatchStar):
            names.append(n.name)
        elif isinstance(n, ast.Global | ast.Nonlocal):
            names.extend(n.names)
        for name in names:
            if name is not None and name.startswith("__") and not name.endswith("__"):
                raise Unsupported(f"the private name `{name}`, which Python mangles in a "
                                  f"class (`_{cls.name.lstrip('_')}{name}`)",
                                  getattr(n, "lineno", cls.lineno))


def _decorators(tree: ast.Module, node: ast.ClassDef) -> bool:
    """Refuse decorators other than ``dataclasses.dataclass``; whether it makes the class
    frozen."""
    frozen = False
    for d in node.decorator_list:
        target = d.func if isinstance(d, ast.Call) else d
        if pyclasses.dotted_name(tree, target) != "dataclasses.dataclass":
            raise Unsupported(f"a class decorator ({ast.unparse(d)})", d.lineno)
        if isinstance(d, ast.Call):
            for k in d.keywords:
                if k.arg == "frozen" and not (isinstance(k.value, ast.Constant)
                                              and k.value.value is False):
                    frozen = True
                if k.arg == "slots":
                    raise Unsupported("a dataclass with slots", d.lineno)
    return frozen


@dataclass
class _Body:
    """What one class body binds: attribute types (with the line), plain methods, other
    members (methods too), ``__slots__``, and every name it binds."""

    types: dict[str, tuple[ast.expr, int]]
    methods: dict[str, ast.FunctionDef]
    members: set[str]
    slots: frozenset[str] | None
    bound: set[str]
    properties: dict[str, ast.FunctionDef] = field(default_factory=dict)
    # Members whose lookup may run code (see `_Class.active`); `dataclasses.field` names.
    active: set[str] = field(default_factory=set)
    fields: set[str] = field(default_factory=set)


def _read_body(tree: ast.Module, node: ast.ClassDef, stubs: set[int],
               builtin_property: bool) -> _Body:
    """What a class body binds (``stubs``: its ``@overload`` definitions, which the next
    definition of their name replaces; ``builtin_property``: whether ``property`` is the
    builtin in the module)."""
    active: set[str] = set()
    fields: set[str] = set()
    types: dict[str, ast.expr] = {}
    lines: dict[str, int] = {}
    methods: dict[str, ast.FunctionDef] = {}
    properties: dict[str, ast.FunctionDef] = {}
    members: set[str] = set()
    slots: frozenset[str] | None = None
    bound: dict[str, int] = {}
    statements = [stmt for stmt in node.body if id(stmt) not in stubs]
    for stmt in statements:
        for bound_name in pyclasses.bound_names(stmt):
            bound[bound_name] = bound.get(bound_name, 0) + 1

    def declare(name: str, annotation: ast.expr, line: int) -> None:
        _declare(types, name, annotation, line)
        lines.setdefault(name, line)

    for stmt in statements:
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
            if stmt.name in _HOOKS:
                raise Unsupported(f"a class that defines `{stmt.name}`", stmt.lineno)
            if not stmt.decorator_list and isinstance(stmt, ast.FunctionDef) \
                    and bound.get(stmt.name) == 1:
                methods[stmt.name] = stmt
            elif builtin_property and isinstance(stmt, ast.FunctionDef) and [
                    ast.dump(d) for d in stmt.decorator_list] == [_PROPERTY] and (
                    bound.get(stmt.name) == 1):
                properties[stmt.name] = stmt  # no setter or deleter: bound once
            else:
                active.add(stmt.name)  # a decorated method: what it is is not read here
            members.add(stmt.name)
        elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
            name = stmt.target.id
            annotation = _unwrap_classvar(stmt.annotation)
            is_field = _is_field(tree, stmt.value)
            if is_field:
                fields.add(name)
            if stmt.value is not None and not _plain_value(stmt.value) and not is_field:
                members.add(name)  # a descriptor, say
                active.add(name)
            elif stmt.value is None or (is_field and _field_fits(tree, stmt.value, annotation)) \
                    or (not is_field and _fits(stmt.value, annotation)):
                # A default that is not of the declared type leaves the type unknown.
                declare(name, annotation, stmt.lineno)
        elif isinstance(stmt, ast.Assign):
            for target in stmt.targets:
                if isinstance(target, ast.Name) and target.id == "__slots__":
                    slots = _slot_names(stmt.value, stmt.lineno)
                elif isinstance(target, ast.Name) and len(stmt.targets) == 1 \
                        and bound.get(target.id) == 1 and _literal_type(stmt.value):
                    # A class constant (`kind = "option"`): an attribute of the literal's
                    # type, which an instance may shadow.
                    declare(target.id, ast.Name(_literal_type(stmt.value), ast.Load()),
                            stmt.lineno)
                elif isinstance(target, ast.Name):
                    members.add(target.id)
                    if not _plain_value(stmt.value):
                        active.add(target.id)
                else:
                    raise Unsupported("a class body assigning other than a name", stmt.lineno)
        elif (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant)) \
                or isinstance(stmt, ast.Pass):
            continue
        else:
            members.update(pyclasses.bound_names(stmt))
            active.update(pyclasses.bound_names(stmt))
    return _Body({n: (t, lines[n]) for n, t in types.items()}, methods, members, slots,
                 set(bound), properties, active, fields)


def _is_field(tree: ast.Module, value: ast.expr | None) -> bool:
    """Whether ``value`` is a call of ``dataclasses.field``."""
    return isinstance(value, ast.Call) and pyclasses.dotted_name(
        tree, value.func) == "dataclasses.field"


# What a builtin `default_factory` makes.
_FACTORIES: dict[str, object] = {"list": [], "int": 0, "float": 0.0, "str": "", "bool": False}


def _field_fits(tree: ast.Module, value: ast.expr, annotation: ast.expr) -> bool:
    """Whether the default a ``field(...)`` gives (``default=``, ``default_factory=``),
    if any, is of the type ``annotation`` declares."""
    assert isinstance(value, ast.Call)
    if value.args or any(k.arg is None for k in value.keywords):
        return False
    keys = {k.arg: k.value for k in value.keywords}
    if "default" in keys and not _fits(keys["default"], annotation):
        return False
    factory = keys.get("default_factory")
    if factory is not None:
        if not (isinstance(factory, ast.Name) and factory.id in _FACTORIES
                and not _module_binds(tree, factory.id)):
            return False
        made = copy.copy(_FACTORIES[factory.id])
        return _fits_value(made, domain(from_annotation(annotation)))
    return True


def _module_binds(tree: ast.Module, name: str) -> bool:
    """Whether the module binds ``name`` anywhere (so it may not be the builtin)."""
    for n in ast.walk(tree):
        if (isinstance(n, ast.Name) and n.id == name and not isinstance(n.ctx, ast.Load)) \
                or (isinstance(n, ast.alias) and (n.asname or n.name).split(".")[0] == name) \
                or (isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
                    and n.name == name) or (isinstance(n, ast.arg) and n.arg == name):
            return True
    return False


def _literal_type(node: ast.expr) -> str:
    """``int``, ``float``, ``str`` or ``bool`` for a literal of that type, else ""."""
    if isinstance(node, ast.Constant) and type(node.value) in (int, float, str, bool):
        return type(node.value).__name__
    return ""


def _unwrap_classvar(node: ast.expr) -> ast.expr:
    if isinstance(node, ast.Subscript):
        head = node.value
        name = head.id if isinstance(head, ast.Name) else (
            head.attr if isinstance(head, ast.Attribute) else "")
        if name == "ClassVar":
            return node.slice
    return node


def _plain_value(node: ast.expr) -> bool:
    """A value that is plain data (no descriptor): literals and containers of them."""
    if isinstance(node, ast.Constant):
        return True
    if isinstance(node, ast.UnaryOp) and isinstance(node.operand, ast.Constant):
        return True
    if isinstance(node, ast.List | ast.Tuple | ast.Set):
        return all(_plain_value(e) for e in node.elts)
    if isinstance(node, ast.Dict):
        return all(k is not None and _plain_value(k) for k in node.keys) and all(
            _plain_value(v) for v in node.values)
    return False


def _slot_names(node: ast.expr, line: int) -> frozenset[str]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return frozenset({node.value})
    if isinstance(node, ast.Tuple | ast.List) and all(
            isinstance(e, ast.Constant) and isinstance(e.value, str) for e in node.elts):
        names = frozenset(str(e.value) for e in node.elts if isinstance(e, ast.Constant))
        if any(n.startswith("__") for n in names):
            raise Unsupported("private or special names in `__slots__`", line)
        return names
    raise Unsupported("`__slots__` that is not a literal", line)


def _declare(types: dict[str, ast.expr], name: str, annotation: ast.expr, line: int) -> None:
    old = types.get(name)
    if old is not None and ast.dump(old) != ast.dump(annotation):
        raise Unsupported(f"`self.{name}` declared with two types", line)
    types[name] = annotation


def _init_types(init: ast.FunctionDef, types: dict[str, ast.expr]) -> None:
    """Types ``__init__`` gives attributes: ``self.x = x`` of an annotated parameter, or
    ``self.x: T = ...``."""
    args = init.args
    params = _typed_params(init)
    own = [*args.posonlyargs, *args.args][:1]
    if not own:
        return
    me = own[0].arg
    for stmt in init.body:
        if isinstance(stmt, ast.AnnAssign) and _is_self_attr(stmt.target, me):
            assert isinstance(stmt.target, ast.Attribute)
            _declare(types, stmt.target.attr, stmt.annotation, stmt.lineno)
        elif isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 \
                and _is_self_attr(stmt.targets[0], me) and isinstance(stmt.value, ast.Name):
            target = stmt.targets[0]
            assert isinstance(target, ast.Attribute)
            annotation = params.get(stmt.value.id)
            if annotation is not None and _reassigned(init, stmt.value.id) == 0:
                _declare(types, target.attr, annotation, stmt.lineno)


def _typed_params(fn: ast.FunctionDef) -> dict[str, ast.expr | None]:
    """The parameters of ``fn`` whose values are of their annotation (or unannotated)."""
    args = fn.args
    positional = [*args.posonlyargs, *args.args]
    defaults: dict[str, ast.expr | None] = dict.fromkeys(a.arg for a in positional)
    defaults.update(zip((a.arg for a in positional[len(positional) - len(args.defaults):]),
                        args.defaults, strict=True))
    defaults.update(zip((a.arg for a in args.kwonlyargs), args.kw_defaults, strict=True))
    params: dict[str, ast.expr | None] = {}
    for a in (*args.posonlyargs, *args.args, *args.kwonlyargs):
        default = defaults.get(a.arg)
        # A default not of the declared type (`x: int = None`) leaves the type unknown.
        if default is None or a.annotation is None or _fits(default, a.annotation):
            params[a.arg] = a.annotation
    return params


def _fits(value: ast.expr, annotation: ast.expr) -> bool:
    """Whether the literal ``value`` is of the type ``annotation`` declares."""
    try:
        v = ast.literal_eval(value)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return False
    return _fits_value(v, domain(from_annotation(annotation)))


def _fits_value(v: object, t: PyType) -> bool:
    if isinstance(t, UnionT):
        return any(_fits_value(v, o) for o in t.options)
    if type(v) is list:
        return isinstance(t, ListT) and all(_fits_value(x, t.elem) for x in v)
    if type(v) in (dict, set):
        return False
    return pysignature.fits(v, t)


# Builtins that only read what they are given (do not change it in place nor keep it).
_READERS = frozenset({"len", "isinstance", "str", "repr", "int", "float", "bool", "tuple",
                      "list", "sorted", "sum", "min", "max", "any", "all", "abs", "hash",
                      "frozenset", "set", "dict", "enumerate", "zip", "reversed", "iter",
                      "print", "format", "id", "type", "callable", "hasattr", "round",
                      "divmod", "ord", "chr", "bin", "hex", "oct"})


def _handed_on(node: ast.expr, parents: dict[ast.AST, ast.AST],
               read: frozenset[int] | set[int] = frozenset()) -> bool:
    """Whether the value ``node`` reads may be changed in place there: a method called on
    it or an attribute read of it (``items.append``), a store or delete of an item or
    slice of it, an augmented assignment to it, or handed to a call other than a builtin
    that only reads it, or bound to another name (an alias), or unpacked."""
    parent = parents.get(node)
    if isinstance(parent, ast.Attribute):
        return True
    if isinstance(parent, ast.Subscript) and parent.value is node:
        return not isinstance(parent.ctx, ast.Load)
    if isinstance(parent, ast.keyword):
        parent = parents.get(parent)
    if isinstance(parent, ast.Call) and parent.func is not node:
        return id(parent) not in read and not (
            isinstance(parent.func, ast.Name) and parent.func.id in _READERS)
    if isinstance(parent, ast.Assign | ast.AnnAssign | ast.NamedExpr) and (
            parent.value is node):
        return True
    return isinstance(parent, ast.Starred | ast.AugAssign)


def _changed_in_place(fn: ast.FunctionDef, name: str, calls: set[int]) -> bool:
    """Whether code of ``fn`` may change the value of its parameter ``name`` in place
    (``items.append("s")``: a ``list[int]`` no more): ``_handed_on`` at some read of it,
    but a store of it on the object (``self.items = items``), checked as a store."""
    parents = {child: n for n in ast.walk(fn) for child in ast.iter_child_nodes(n)}
    for n in ast.walk(fn):
        if not (isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)):
            continue
        parent = parents.get(n)
        if isinstance(parent, ast.Assign) and parent.value is n and all(
                isinstance(t, ast.Attribute) for t in parent.targets):
            continue
        if _handed_on(n, parents, calls):
            return True
    return False


def _reassigned(fn: ast.FunctionDef, name: str) -> int:
    return sum(1 for n in ast.walk(fn) if isinstance(n, ast.Name) and n.id == name
               and not isinstance(n.ctx, ast.Load))


def _is_self_attr(node: ast.expr, me: str) -> bool:
    return isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) \
        and node.value.id == me


def _self_name(fn: ast.FunctionDef) -> str:
    own = [*fn.args.posonlyargs, *fn.args.args][:1]
    if not own:
        raise Unsupported("a method without a `self` parameter", fn.lineno)
    return own[0].arg


def _uses(cls: _Class, fn: ast.FunctionDef, used: set[str], written: set[str],
          called: dict[str, ast.FunctionDef], visiting: set[int]) -> None:
    """The attributes ``fn`` (and the methods it calls) read and rebind; the methods it
    calls, by ``_key``."""
    if id(fn) in visiting:
        return
    visiting.add(id(fn))
    me = _self_name(fn)
    parents: dict[ast.AST, ast.AST] = {}
    for node in ast.walk(fn):
        for child in ast.iter_child_nodes(node):
            parents[child] = node
    for node in ast.walk(fn):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | ast.ClassDef) \
                and node is not fn:
            raise Unsupported("a nested function or class in a method", node.lineno)
        if isinstance(node, ast.Name) and node.id == "super":
            call, method = parents.get(node), None
            if call is not None:
                method = parents.get(call)
            callee = _super_method(cls, fn, method) if isinstance(
                method, ast.Attribute) and isinstance(parents.get(method), ast.Call) and (
                parents[method].func is method) else None  # type: ignore[attr-defined]
            if not isinstance(callee, ast.FunctionDef) or callee.name == "__init__":
                raise Unsupported("`super()` other than to call a plain method of a base "
                                  "class of the module", node.lineno)
            called[_key(cls, callee)] = callee
            _uses(cls, callee, used, written, called, visiting)
            continue
        if isinstance(node, ast.Global | ast.Nonlocal):
            raise Unsupported("global or nonlocal in a method", node.lineno)
        if not (isinstance(node, ast.Name) and node.id == me):
            continue
        if not isinstance(node.ctx, ast.Load):
            raise Unsupported("rebinding `self`", node.lineno)
        parent = parents.get(node)
        if not isinstance(parent, ast.Attribute):
            raise Unsupported("`self` used as a value", node.lineno)
        attr = parent.attr
        if attr.startswith("__") and attr.endswith("__"):
            raise Unsupported(f"the special attribute `self.{attr}`", node.lineno)
        grand = parents.get(parent)
        if attr in cls.methods and attr not in cls.types:
            if not (isinstance(grand, ast.Call) and grand.func is parent):
                raise Unsupported(f"the method `self.{attr}` used as a value", node.lineno)
            callee = cls.methods[attr]
            if attr == "__init__":
                raise Unsupported("calling `__init__` again", node.lineno)
            called[_key(cls, callee)] = callee
            _uses(cls, callee, used, written, called, visiting)
            continue
        if attr in cls.properties and attr not in cls.types:
            if not isinstance(parent.ctx, ast.Load):
                raise Unsupported(f"writing the property `self.{attr}`", node.lineno)
            getter = cls.properties[attr]
            called[_key(cls, getter)] = getter  # reading it calls its getter
            _uses(cls, getter, used, written, called, visiting)
            continue
        if attr in cls.members and attr not in cls.types:
            raise Unsupported(f"`self.{attr}`, a member of the class that is not a plain "
                              "method (a property, a descriptor or a class constant)",
                              node.lineno)
        used.add(attr)
        if isinstance(parent.ctx, ast.Del):
            raise Unsupported("deleting an attribute of `self`", node.lineno)
        if isinstance(parent.ctx, ast.Store):
            written.add(attr)
    visiting.discard(id(fn))


def _key(cls: _Class, fn: ast.FunctionDef) -> str:
    """``Owner.method``: a method of the order by the class whose body defines it."""
    return f"{cls.owners[id(fn)].name}.{fn.name}"


def _function_name(key: str) -> str:
    return "__veribot_" + key.replace(".", "__")


def _lowered_module(tree: ast.Module, cls: _Class, fn: ast.FunctionDef, attrs: list[str],
                    written: set[str]) -> ast.Module:
    """``tree`` with the method and the methods it calls added as module functions."""
    for node in ast.walk(tree):
        if (isinstance(node, ast.Name) and node.id.startswith(_PREFIX)) or (isinstance(
                node, ast.FunctionDef) and node.name.startswith("__veribot_")):
            raise Unsupported("names the lowering of `self` uses", node.lineno)
    out = copy.deepcopy(tree)
    done: set[int] = set()
    todo = [fn]
    while todo:
        method = todo.pop()
        if id(method) in done:
            continue
        done.add(id(method))
        lowered = _lower_method(cls, method, attrs, written, todo)
        lowered.name = ENTRY if method is fn else _function_name(_key(cls, method))
        out.body.append(lowered)
    return ast.fix_missing_locations(out)


def _lower_method(cls: _Class, fn: ast.FunctionDef, attrs: list[str], written: set[str],
                  todo: list[ast.FunctionDef]) -> ast.FunctionDef:
    me = _self_name(fn)
    new = copy.deepcopy(fn)
    params: list[ast.arg] = []
    for attr in attrs:
        annotation = copy.deepcopy(cls.types[attr])
        if attr in written:  # a cell: a one-item list
            annotation = ast.Subscript(ast.Name("list", ast.Load()), annotation, ast.Load())
        params.append(ast.arg(_PREFIX + attr, annotation))
    positional = [*new.args.posonlyargs, *new.args.args]
    rest = positional[1:]
    new.args = ast.arguments(posonlyargs=[], args=[*params, *rest],
                             vararg=new.args.vararg, kwonlyargs=new.args.kwonlyargs,
                             kw_defaults=new.args.kw_defaults, kwarg=new.args.kwarg,
                             defaults=new.args.defaults)
    new.decorator_list = []
    new.returns = None
    rewriter = _Rewrite(me, fn, written, cls, attrs, todo)
    body = [rewriter.visit(stmt) for stmt in new.body]
    cells = [a for a in attrs if a in written]
    guard: list[ast.stmt] = []
    if cells:
        # Only one-item lists stand for an attribute; both versions leave others alone.
        test = ast.BoolOp(ast.Or(), [
            ast.Compare(ast.Call(ast.Name("len", ast.Load()),
                                 [ast.Name(_PREFIX + a, ast.Load())], []),
                        [ast.NotEq()], [ast.Constant(1)]) for a in cells
        ]) if len(cells) > 1 else ast.Compare(
            ast.Call(ast.Name("len", ast.Load()), [ast.Name(_PREFIX + cells[0], ast.Load())],
                     []), [ast.NotEq()], [ast.Constant(1)])
        guard = [ast.If(test, [ast.Return(ast.Constant(None))], [])]
    new.body = [*guard, *body]
    return new


class _Rewrite(ast.NodeTransformer):
    def __init__(self, me: str, fn: ast.FunctionDef, written: set[str], cls: _Class,
                 attrs: list[str], todo: list[ast.FunctionDef]) -> None:
        self.me = me
        self.fn = fn
        self.written = written
        self.cls = cls
        self.attrs = attrs
        self.todo = todo

    def _is_self(self, node: ast.AST) -> bool:
        return isinstance(node, ast.Name) and node.id == self.me

    def visit_Call(self, node: ast.Call) -> ast.AST:
        func = node.func
        callee: ast.FunctionDef | str | None = None
        if isinstance(func, ast.Attribute) and self._is_self(func.value) \
                and func.attr in self.cls.methods and func.attr not in self.cls.types:
            callee = self.cls.methods[func.attr]
        else:
            callee = _super_method(self.cls, self.fn, func)  # checked in `_uses`
        if isinstance(callee, ast.FunctionDef):
            self.todo.append(callee)
            args = [self._attr_arg(a) for a in self.attrs]
            call = ast.Call(ast.Name(_function_name(_key(self.cls, callee)), ast.Load()),
                            [*args, *(self.visit(a) for a in node.args)],
                            [self.visit(k) for k in node.keywords])
            return ast.copy_location(call, node)
        return self.generic_visit(node)

    def _attr_arg(self, attr: str) -> ast.expr:
        return ast.Name(_PREFIX + attr, ast.Load())

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        if self._is_self(node.value) and node.attr in self.cls.properties and (
                node.attr not in self.cls.types):
            getter = self.cls.properties[node.attr]  # a read: `_uses` refused writes
            self.todo.append(getter)
            call = ast.Call(ast.Name(_function_name(_key(self.cls, getter)), ast.Load()),
                            [self._attr_arg(a) for a in self.attrs], [])
            return ast.copy_location(call, node)
        if self._is_self(node.value):
            name = ast.Name(_PREFIX + node.attr, ast.Load())
            if node.attr in self.written:
                return ast.copy_location(
                    ast.Subscript(name, ast.Constant(0), node.ctx), node)
            if not isinstance(node.ctx, ast.Load):
                raise Unsupported("writing an attribute of `self`", node.lineno)
            return ast.copy_location(name, node)
        return self.generic_visit(node)


def _construction(cls: _Class, bodies: dict[int, _Body]) -> None:
    """What calling the class surely leaves on the object, and which declared types the
    code run while building it may break (a second assignment, a value of another type,
    two list attributes bound to the same list). The constructor is the first
    ``__init__`` of the class's order, with the ones it reaches by ``super().__init__``."""
    node = cls.node
    classes = cls.order.classes
    class_level: set[str] = set()
    generated: set[str] = set()  # set on the instance by a dataclass's own __init__
    dataclass_init = False
    for d in node.decorator_list:
        dataclass_init = not (isinstance(d, ast.Call) and any(
            k.arg == "init" for k in d.keywords))
    # What any class of the order binds (`__init__ = f` too).
    defined = set().union(*(bodies[id(c)].bound for c in classes))
    for c in classes[1:]:  # (the class's own, below)
        class_level |= _class_level(c)
    for stmt in node.body:
        if isinstance(stmt, ast.Assign):
            class_level.update(t.id for t in stmt.targets if isinstance(t, ast.Name))
        elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
            name, value = stmt.target.id, stmt.value
            is_classvar = _unwrap_classvar(stmt.annotation) is not stmt.annotation
            if "InitVar" in ast.unparse(stmt.annotation):
                continue
            is_field = name in bodies[id(node)].fields
            if value is not None and not is_field:
                class_level.add(name)
            if not (dataclass_init and "__init__" not in defined and not is_classvar):
                continue
            if is_field:
                assert isinstance(value, ast.Call)
                keys = {k.arg: k.value for k in value.keywords}
                init_kw = keys.get("init")
                if value.args or (init_kw is not None and not (
                        isinstance(init_kw, ast.Constant) and init_kw.value is True)
                        and not {"default", "default_factory"} & set(keys)):
                    continue
            generated.add(name)
    own: set[str] = set(generated)
    init = cls.methods.get("__init__")
    ctor = [m for m in (init, cls.methods.get("__post_init__")) if m is not None]
    if "__new__" in defined or ("__init__" in defined and init is None):
        ctor, own = [], set()
    elif init is not None:
        own |= _surely_set(cls, init, 0)
    deleted = {t.attr for c in classes for n in ast.walk(c) if isinstance(n, ast.Delete)
               for t in n.targets if isinstance(t, ast.Attribute)}
    if any(isinstance(n, ast.Name) and n.id == "delattr" for c in classes for n in ast.walk(c)):
        deleted |= own
    own -= deleted
    cls.own = frozenset(own)
    cls.present = frozenset(own | class_level)
    _construction_types(cls, ctor)
    if "__new__" in defined or ("__init__" in defined and init is None):
        cls.ctor_writes = None  # code the lowering does not read builds the object


def _class_level(cls: ast.ClassDef) -> set[str]:
    """Names a class body binds to a value at class level (what a base gives an object)."""
    found: set[str] = set()
    for stmt in cls.body:
        if isinstance(stmt, ast.Assign):
            found.update(t.id for t in stmt.targets if isinstance(t, ast.Name))
        elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and (
                stmt.value is not None):
            found.add(stmt.target.id)
    return found


def _surely_set(cls: _Class, init: ast.FunctionDef, depth: int) -> set[str]:
    """The attributes ``init`` surely sets on ``self``: by its statements before the first
    that may return, and by a ``super().__init__(...)`` statement among them."""
    me = _self_name(init)
    own: set[str] = set()
    if _reassigned(init, me) != 0 or depth > 50:
        return own
    for stmt in init.body:
        if any(isinstance(n, ast.Return) for n in ast.walk(stmt)):
            break
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
            callee = _super_method(cls, init, stmt.value.func)
            if isinstance(callee, ast.FunctionDef) and callee.name == "__init__":
                own |= _surely_set(cls, callee, depth + 1)
        targets = stmt.targets if isinstance(stmt, ast.Assign) else (
            [stmt.target] if isinstance(stmt, ast.AnnAssign) and stmt.value else [])
        for t in targets:
            for part in t.elts if isinstance(t, ast.Tuple) else [t]:
                if _is_self_attr(part, me):
                    assert isinstance(part, ast.Attribute)
                    own.add(part.attr)
    return own


_NOT_SUPER = "not a call of a method through super()"


def _super_method(cls: _Class, fn: ast.FunctionDef,
                  func: ast.expr) -> ast.FunctionDef | str | None:
    """For ``super().m`` in ``fn`` (a method of the order): the plain method it finds,
    ``"neutral"`` when a neutral base's (``object.__init__``), None when it is no plain
    method; ``_NOT_SUPER`` when ``func`` is not ``super().m``."""
    if not (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Call)
            and isinstance(func.value.func, ast.Name) and func.value.func.id == "super"
            and not func.value.args and not func.value.keywords):
        return _NOT_SUPER
    owner = cls.owners.get(id(fn))
    if owner is None:
        return None
    for entry in cls.order.after(owner):
        if isinstance(entry, str):
            if func.attr in pyclasses.NEUTRAL[entry]:
                # `object.__init__()` with no arguments does nothing.
                return "neutral" if func.attr == "__init__" else None
            continue
        if func.attr in pyclasses.body_names(entry):
            found = next((m for m in entry.body if isinstance(m, ast.FunctionDef)
                          and m.name == func.attr and id(m) in cls.owners), None)
            return found
    return None


def _construction_types(cls: _Class, ctor: list[ast.FunctionDef]) -> None:
    """Check each value the code building the object stores on it against the declared
    type. Only ``__init__``'s own parameters are of their annotated types (the search
    makes them so); a parameter of a method the constructor calls (``self._set(v)``,
    ``super().__init__(v)``) is when every call passes it one (``_trusted``)."""
    writes: set[str] = set()
    # The calls between the methods building the object: (caller, callee, call).
    sites: list[tuple[ast.FunctionDef, ast.FunctionDef, ast.Call]] = []
    stores: list[tuple[ast.FunctionDef, ast.Attribute, ast.AST | None]] = []
    reached: list[ast.FunctionDef] = []

    def escape(reason: str) -> None:
        for attr in cls.types:
            cls.unknown[attr] = reason
        cls.ctor_writes = None

    todo, seen = list(ctor), set()
    while todo:
        fn = todo.pop()
        if id(fn) in seen:
            continue
        seen.add(id(fn))
        reached.append(fn)
        me = _self_name(fn)
        parents: dict[ast.AST, ast.AST] = {}
        for n in ast.walk(fn):
            for child in ast.iter_child_nodes(n):
                parents[child] = n
        for n in ast.walk(fn):
            if isinstance(n, ast.Name) and n.id == "super":
                # `super()` hands `self` on, to the method it finds.
                call = parents.get(n)
                method = parents.get(call) if call is not None else None
                outer = parents.get(method) if method is not None else None
                callee = _super_method(cls, fn, method) if isinstance(
                    method, ast.Attribute) and isinstance(outer, ast.Call) and (
                    outer.func is method) else None
                if isinstance(callee, ast.FunctionDef):
                    assert isinstance(outer, ast.Call)
                    todo.append(callee)
                    sites.append((fn, callee, outer))
                    continue
                if callee != "neutral":
                    escape("`super()` in the constructor, which reaches code not read here "
                           f"(line {n.lineno})")
                    return
                continue
            if not (isinstance(n, ast.Name) and n.id == me):
                continue
            parent = parents.get(n)
            if not isinstance(parent, ast.Attribute) or (
                    parent.attr.startswith("__") and parent.attr.endswith("__")):
                escape(f"`self`, which the constructor hands to other code (line {n.lineno})")
                return
            grand = parents.get(parent)
            if parent.attr in cls.methods:
                if not (isinstance(grand, ast.Call) and grand.func is parent):
                    escape(f"the method `self.{parent.attr}` used as a value in the "
                           f"constructor (line {n.lineno})")
                    return
                todo.append(cls.methods[parent.attr])
                sites.append((fn, cls.methods[parent.attr], grand))
                continue
            if parent.attr in cls.properties and isinstance(parent.ctx, ast.Load):
                todo.append(cls.properties[parent.attr])  # reading it runs its getter
                continue
            if parent.attr in cls.active:
                escape(f"`self.{parent.attr}` in the constructor, a member whose code is "
                       f"not read here (line {n.lineno})")
                return
            if isinstance(parent.ctx, ast.Load) and _handed_on(parent, parents):
                # `self.items.append("s")`: what it holds may no longer be of its type.
                cls.unknown[parent.attr] = (
                    f"the attribute `self.{parent.attr}`, which the constructor may change "
                    f"in place (line {parent.lineno})")
                continue
            if isinstance(parent.ctx, ast.Load | ast.Del):
                continue  # a deleted attribute is not `present`
            writes.add(parent.attr)
            cls.ctor_writes = frozenset(writes)
            stores.append((fn, parent, grand))
    trusted, roots = _trusted(reached, sites, {id(f) for f in ctor if f.name == "__init__"})
    sources: dict[tuple[object, ...], set[str]] = {}
    for fn, parent, stmt in stores:
        attr = parent.attr
        declared = cls.types.get(attr)
        if declared is None:
            continue
        params = trusted[id(fn)]
        value = stmt.value if isinstance(stmt, ast.Assign | ast.AnnAssign) else None
        fits = False
        if isinstance(stmt, ast.Assign | ast.AnnAssign) and value is not None and (
                not isinstance(stmt, ast.Assign) or stmt.targets == [parent]):
            if isinstance(value, ast.Name) and value.id in params:
                fits = ast.dump(params[value.id]) == ast.dump(declared)
                for root in roots[(id(fn), value.id)]:
                    sources.setdefault(root, set()).add(attr)
            else:
                fits = _fits(value, declared)
        if not fits:
            cls.unknown[attr] = (f"the attribute `self.{attr}`, which the constructor "
                                 f"sets to a value that may not be of its declared type "
                                 f"(line {parent.lineno})")
    for attrs in sources.values():
        lists = [a for a in attrs if isinstance(from_annotation(cls.types[a]), ListT)]
        if len(lists) > 1:
            for a in lists:
                cls.unknown[a] = ("list attributes the constructor binds to the same list ("
                                  + ", ".join(f"`self.{x}`" for x in sorted(lists)) + ")")


def _trusted(reached: list[ast.FunctionDef],
             sites: list[tuple[ast.FunctionDef, ast.FunctionDef, ast.Call]],
             entries: set[int]) -> tuple[dict[int, dict[str, ast.expr]],
                                         dict[tuple[int, str], set[tuple[object, ...]]]]:
    """Which parameters of the methods building the object surely hold a value of their
    annotation (by method id): those of ``__init__`` (``entries``), and a parameter of a
    method it calls that every call passes a literal of that type, or a parameter of the
    same annotation that is itself surely of it, never rebound. With each such parameter,
    where its value may come from (for list aliasing): a parameter of ``__init__``, a
    literal or a default."""
    # A call between the methods building the object hands a value on to code that is
    # read here: the callee's parameter is checked in its turn.
    calls = {id(call) for _, _, call in sites}
    typed = {id(f): {a: t for a, t in _typed_params(f).items()
                     if t is not None and _reassigned(f, a) == 0
                     and not _changed_in_place(f, a, calls)}
             for f in reached}
    trusted = {k: dict(v) for k, v in typed.items()}
    for f in reached:
        if id(f) not in entries:
            called = any(callee is f for _, callee, _ in sites)
            if not called:  # `__post_init__`, a getter: nothing says what it gets
                trusted[id(f)] = {}
    bound: list[tuple[ast.FunctionDef, ast.FunctionDef, dict[str, ast.expr] | None]] = [
        (caller, callee, _bind_call(callee, call)) for caller, callee, call in sites]
    changed = True
    while changed:  # the largest set each call keeps
        changed = False
        for caller, callee, args in bound:
            params = trusted[id(callee)]
            for p in list(params):
                if args is None:
                    del params[p]
                    changed = True
                    continue
                arg = args.get(p)
                if arg is None:
                    continue  # its default, which `_typed_params` checked
                source = trusted[id(caller)].get(arg.id) if isinstance(arg, ast.Name) else None
                if source is not None and ast.dump(source) == ast.dump(params[p]):
                    continue
                if not isinstance(arg, ast.Name) and _fits(arg, params[p]):
                    continue
                del params[p]
                changed = True
    roots: dict[tuple[int, str], set[tuple[object, ...]]] = {}
    for f in reached:
        for p in trusted[id(f)]:
            roots[(id(f), p)] = {("param", id(f), p)} if id(f) in entries else set()
    changed = True
    while changed:  # the smallest sets the calls give
        changed = False
        for caller, callee, args in bound:
            for p in trusted[id(callee)]:
                arg = (args or {}).get(p)
                found: set[tuple[object, ...]]
                if arg is None:
                    found = {("default", id(callee), p)}
                elif isinstance(arg, ast.Name):
                    found = roots.get((id(caller), arg.id), set())
                else:
                    found = {("literal", id(arg))}
                if not found <= roots[(id(callee), p)]:
                    roots[(id(callee), p)] |= found
                    changed = True
    return trusted, roots


def _bind_call(fn: ast.FunctionDef, call: ast.Call) -> dict[str, ast.expr] | None:
    """The argument ``call`` (of the method ``fn``, ``self`` bound) passes each named
    parameter, or None when it cannot be told (``*args``, ``**kwargs``)."""
    if any(isinstance(a, ast.Starred) for a in call.args) or any(
            k.arg is None for k in call.keywords):
        return None
    positional = [a.arg for a in (*fn.args.posonlyargs, *fn.args.args)][1:]
    out: dict[str, ast.expr] = dict(zip(positional, call.args, strict=False))
    keyword_names = {a.arg for a in (*fn.args.args, *fn.args.kwonlyargs)}
    for k in call.keywords:
        if k.arg in keyword_names and k.arg not in out:
            out[str(k.arg)] = k.value
    return out


def _reads(cls: _Class, methods: list[ast.FunctionDef]) -> set[str]:
    """The attributes of ``self`` that these methods read (``self.x += 1`` too)."""
    read: set[str] = set()
    for fn in methods:
        me = _self_name(fn)
        for n in ast.walk(fn):
            target = n.target if isinstance(n, ast.AugAssign) else n
            if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) \
                    and target.value.id == me and (isinstance(n, ast.AugAssign)
                                                   or isinstance(target.ctx, ast.Load)):
                read.add(target.attr)
    return read
