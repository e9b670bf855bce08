"""Calls of a unit taken from its repository: doctests and test files, both revisions.

A test or doctest added with a change usually calls the changed function with the input
that shows the change. This module finds such calls without running anything: it reads
the doctests (``>>>`` lines) of both versions' module and the test and doc files of both
revisions (``PairContext.before_tests``/``after_tests``), and keeps the calls of the unit
whose arguments can be written in the sandbox's call format (``testcode``: literals, names
bound to them, loops over literal cases, ``pytest.mark.parametrize`` rows, objects of the
project's classes).

What a call of the unit looks like depends on the unit (``Target``):

- a function: ``f(...)``;
- a constructor ``C.__init__``: ``C(...)``; a static or class method: ``C.m(...)``;
- a method ``C.m``: ``obj.m(...)`` on an object the test builds with ``C(...)`` (directly
  or through a name bound to that call), which becomes the receiver ``@C(...)`` of the
  call format; a special method through the operation that calls it (``a == b`` and
  ``assertEqual(a, b)`` for ``__eq__``, ``hash(a)``, ``len(a)``, ``a[k]``, ``k in a``,
  ``a + b``, ...); a property: ``obj.p`` read.

Only calls that refer to the unit are taken: in a test file, through a name imported
from the unit's module or one of its parent packages (``from pkg.mod import f``,
``import pkg as p`` then ``p.f(...)``); a bare name the file also defines or assigns is
not trusted. Nothing found here is trusted beyond being an input: each call is executed
on both versions in the sandbox (``differential.examine``) before it can refute.
"""

from __future__ import annotations

import ast
import dataclasses
import doctest
import functools
import logging
import posixpath
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

from veribot.checks.lang import pysource
from veribot.checks.project.package import PairContext
from veribot.checks.sandbox import Limits
from veribot.checks.sandbox._child import split_arguments
from veribot.checks.search import construct, testcode
from veribot.checks.search.differential import Confirmation, compare, examine, run_both
from veribot.checks.verdict import Counterexample

__all__ = [
    "MAX_CALLS",
    "Call",
    "Target",
    "calls_for",
    "first_difference",
    "from_doctests",
    "from_test_file",
    "rank",
    "target_of",
]

log = logging.getLogger(__name__)

MAX_CALLS = 64
# Calls that differed in the first run and are examined in fresh children, at most.
_MAX_EXAMINED = 4
NOT_RUN = "not-run"  # the value of a call the sandbox had no time left to start


@dataclass(frozen=True)
class Call:
    """One call of the unit, as the sandbox takes it, and where it was found.

    ``args``: literal texts, keyword arguments as ``name=literal``, a method's receiver
    first (``@C(1, 2)``); ``origin``: a phrase for a verdict ("the doctest at line 40 of
    the after version", "a call in tests/test_more.py line 123 (after revision)").
    """

    args: tuple[str, ...]
    origin: str
    # The exceptions the test expects the call to raise (``assertRaises(TypeError, ...)``,
    # a doctest's traceback), by name: such a call is an input, but what it passes may be
    # no type the unit takes (``pyinfer`` does not infer from it).
    raises: tuple[str, ...] = ()


# How a unit is reached (``Target.kind``).
FUNCTION, INIT, METHOD, STATIC, PROPERTY = "function", "init", "method", "static", "property"


@dataclass(frozen=True)
class Target:
    """What a call of the unit looks like in code.

    ``name``: what code calls or builds, the function or the class; ``member``: the
    method or property of the class ("" for a function or a constructor).
    """

    kind: str
    name: str
    member: str = ""


def target_of(entry: str, source: str = "") -> Target | None:
    """The target of ``entry`` (``f``, ``C.m``), its kind read from ``source`` (a method
    when not found there); None for what is not harvested (a nested class's member)."""
    parts = entry.split(".")
    if not all(p.isidentifier() for p in parts) or len(parts) > 2:
        return None
    if len(parts) == 1:
        return Target(FUNCTION, entry)
    cls, member = parts
    if member == "__init__":
        return Target(INIT, cls)
    found = construct.member(source, entry) if source else None
    kind = {construct.STATIC: STATIC, construct.PROPERTY: PROPERTY}.get(
        found.kind if found is not None else "", METHOD)
    return Target(kind, cls, member)


def calls_for(
    before: str, after: str, entry: str, context: PairContext | None = None,
    *, limit: int = MAX_CALLS,
) -> list[Call]:
    """The calls of ``entry`` found in the repository, most telling first, deduplicated.

    Calls only in the after revision (a test added with the change) come first, then the
    rest in the order found. Never raises on bad input.
    """
    return list(_calls_for(before, after, entry, context, limit))


@functools.lru_cache(maxsize=64)
def _calls_for(before: str, after: str, entry: str, context: PairContext | None,
               limit: int) -> tuple[Call, ...]:
    """``calls_for``, once per sources, unit and context (a helper's callers ask again)."""
    target = target_of(entry, after) or None
    if target is None:
        return ()
    try:
        classes = frozenset(construct.class_names(before) | construct.class_names(after))
        found = list(_all_calls(before, after, target, classes, context))
    except (SyntaxError, ValueError, RecursionError, MemoryError) as err:
        log.info("harvest: %s: %s", entry, err)
        return ()
    before_args = {c.args for label, c in found if label == "before"}
    ordered = [c for label, c in found if label == "after" and c.args not in before_args]
    ordered += [c for _, c in found]
    # A call made both where it is expected to raise and where it is not is a plain input.
    plain = {c.args for _, c in found if not c.raises}
    seen: set[tuple[str, ...]] = set()
    out: list[Call] = []
    for call in ordered:
        if call.args in seen:
            continue
        seen.add(call.args)
        out.append(dataclasses.replace(call, raises=()) if call.args in plain else call)
        if len(out) >= limit:
            break
    return tuple(out)


def _all_calls(
    before: str, after: str, target: Target, classes: frozenset[str],
    context: PairContext | None,
) -> Iterator[tuple[str, Call]]:
    for label, source, package in (("after", after, context and context.after),
                                   ("before", before, context and context.before)):
        module = package.module if package else ""
        for call in from_doctests(source, target, f"the {label} version", module=module,
                                  classes=classes):
            yield label, call
    if context is None:
        return
    for label, package, files in (("after", context.after, context.after_tests),
                                  ("before", context.before, context.before_tests)):
        module = package.module if package is not None else ""
        for file in files:
            if file.path.endswith(".py"):
                calls = from_test_file(file.text, target, module, f"{file.path}", label,
                                       classes=classes)
            else:
                calls = from_doctests(file.text, target, f"{file.path} ({label} revision)",
                                      docs=True, module=module, classes=classes)
            for call in calls:
                yield label, call


def _as_target(name: str | Target) -> Target | None:
    return name if isinstance(name, Target) else target_of(name)


# --------------------------------------------------------------------------- doctests


def from_doctests(
    source: str, name: str | Target, where: str, *, docs: bool = False, module: str = "",
    classes: Iterable[str] = (),
) -> list[Call]:
    """Calls of the unit ``name`` in the doctests of ``source``.

    ``source`` is a Python module (its docstrings are read), or with ``docs`` a text file
    whose ``>>>`` examples are read whole. In a module's own doctests the unit and the
    ``classes`` (the project's classes its module names) are bare names; in a doc file,
    names imported from ``module`` or its packages. The examples of one docstring are
    one session: a name bound in one example is seen by the next.
    """
    target = _as_target(name)
    if target is None:
        return []
    if docs:
        texts = [(source, 1)]
    else:
        try:
            tree = _parse(source)
        except SyntaxError:
            return []
        texts = sorted(_docstrings(tree), key=lambda t: t[1])
    out: list[Call] = []
    parser = doctest.DocTestParser()
    for text, first_line in texts:
        if ">>>" not in text or target.name not in text:
            continue
        try:
            examples = parser.get_examples(text)
        except ValueError:
            continue
        session = ast.Module([], [])
        raising: dict[int, tuple[str, ...]] = {}  # line -> what its traceback shows
        for example in examples:
            try:
                parsed = ast.parse(example.source)
            except SyntaxError:
                continue
            ast.increment_lineno(parsed, first_line + example.lineno - 1)
            session.body.extend(parsed.body)
            if example.exc_msg is not None:
                name = example.exc_msg.split(":", 1)[0].strip().rsplit(".", 1)[-1]
                for stmt in parsed.body:
                    raising[stmt.lineno] = (name or "?",)
        refs = _References({target.name, *classes}, module)
        if not docs:
            refs.own_module({target.name, *classes})  # a module's doctests run in it
        refs.read(session)
        reader = _Reader(target, refs)
        for node, env, raises in testcode.sites(session):
            call = reader.call_of(node, env)
            if call is not None:
                line = getattr(node, "lineno", first_line)
                out.append(Call(call, f"the doctest at line {line} of {where}",
                                (*raises, *raising.get(line, ()))))
    return list(dict.fromkeys(out))


def _docstrings(tree: ast.Module) -> Iterator[tuple[str, int]]:
    nodes: list[ast.AST] = [tree]
    while nodes:
        node = nodes.pop()
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                value = body[0].value.value
                if isinstance(value, str):
                    yield value, body[0].lineno
            nodes.extend(n for n in body
                         if isinstance(n, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef))


# --------------------------------------------------------------------------- test files


def from_test_file(text: str, name: str | Target, module: str, path: str, label: str,
                   *, classes: Iterable[str] = ()) -> list[Call]:
    """Calls of the unit ``name`` (a function name, ``Class.member``, or a ``Target``) of
    module ``module`` (dotted) in the test file ``text``; objects of the project's
    ``classes`` (names the unit's module binds) may be arguments."""
    target = _as_target(name)
    if target is None or target.name not in text:
        return []
    found = _file_calls(text, target, module, frozenset(classes))
    return list(dict.fromkeys(Call(args, f"a call in {path} line {line} ({label} revision)",
                                   raises) for line, args, raises in found))


@functools.lru_cache(maxsize=64)
def _file_calls(text: str, target: Target, module: str, classes: frozenset[str],
                ) -> tuple[tuple[int, tuple[str, ...], tuple[str, ...]], ...]:
    """The calls of ``target`` in a test file, by line (read once per file text: the
    before and after revisions of a test file are often the same)."""
    try:
        tree = _parse(text)
    except SyntaxError:
        return ()
    refs = _References({target.name, *classes}, module)
    refs.read(tree)
    if not refs.refers_to(target.name):
        return ()
    reader = _Reader(target, refs)
    found: list[tuple[int, tuple[str, ...], tuple[str, ...]]] = []
    # The names a call of it may be written with: its own, and what the file binds to it.
    names = {target.name, *(b for b, real in refs.bare.items() if real == target.name)}
    for node, env, raises in testcode.sites(tree, names, text):
        call = reader.call_of(node, env)
        if call is not None:
            found.append((getattr(node, "lineno", 0), call, raises))
    return tuple(sorted(found, key=lambda f: f[0]))


@functools.lru_cache(maxsize=16)
def _parse(text: str) -> ast.Module:
    return pysource.parse(text)


class _References:
    """How code refers to names of the unit's module: bare names bound to them, names
    bound to the module or one of its packages (``p.f``, ``p.mod.f``)."""

    def __init__(self, names: Iterable[str], module: str) -> None:
        self.names = frozenset(names)
        parts = module.split(".") if module else []
        # The unit's module and the packages above it: any may re-export the function.
        self.modules = {".".join(parts[: i + 1]) for i in range(len(parts))}
        self.bare: dict[str, str] = {}  # bound name -> the module's name it is
        self.module_names: dict[str, str] = {}  # bound name -> the module it is

    def own_module(self, names: Iterable[str]) -> None:
        """Code that runs in the unit's module itself (its doctests) sees its names."""
        self.bare.update((n, n) for n in names)

    def read(self, tree: ast.AST) -> None:
        """Learn the imports of ``tree``; drop bare names it also binds otherwise."""
        rebound: set[str] = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    # `import a.b` binds `a`; `import a.b as m` binds `m` to `a.b`.
                    target = alias.name if alias.asname else alias.name.split(".")[0]
                    if target in self.modules:
                        self.module_names[alias.asname or target] = target
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                for alias in node.names:
                    bound = alias.asname or alias.name
                    if node.module in self.modules and alias.name in self.names:
                        self.bare[bound] = alias.name
                    elif node.module in self.modules and alias.name == "*":
                        self.bare.update((n, n) for n in self.names)
                    elif f"{node.module}.{alias.name}" in self.modules:
                        self.module_names[bound] = f"{node.module}.{alias.name}"
                    else:
                        rebound.add(bound)
            elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                rebound.add(node.name)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store | ast.Del):
                rebound.add(node.id)
            elif isinstance(node, ast.arg):
                rebound.add(node.arg)
        for name in rebound:
            self.bare.pop(name, None)
            self.module_names.pop(name, None)

    def refers_to(self, name: str) -> bool:
        """Whether the code can refer to ``name`` at all."""
        return name in self.bare.values() or bool(self.module_names)

    def refers(self, func: ast.expr) -> str | None:
        """Which of the module's names ``func`` is, if any."""
        if isinstance(func, ast.Name):
            return self.bare.get(func.id)
        if isinstance(func, ast.Attribute) and func.attr in self.names:
            dotted = _dotted(func.value) or ""
            head, _, rest = dotted.partition(".")
            real = self.module_names.get(head)
            if real is not None and (f"{real}.{rest}" if rest else real) in self.modules:
                return func.attr
        return None


def _dotted(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value)
        return f"{base}.{node.attr}" if base else None
    return None


# --------------------------------------------------------------------------- calls of the unit

# The operations that call a special method, by the method.
_COMPARE = {ast.Eq: "__eq__", ast.NotEq: "__ne__", ast.Lt: "__lt__", ast.LtE: "__le__",
            ast.Gt: "__gt__", ast.GtE: "__ge__"}
_BINARY = {ast.Add: "__add__", ast.Sub: "__sub__", ast.Mult: "__mul__",
           ast.Div: "__truediv__", ast.FloorDiv: "__floordiv__", ast.Mod: "__mod__",
           ast.BitAnd: "__and__", ast.BitOr: "__or__", ast.MatMult: "__matmul__"}
_UNARY_CALLS = {"hash": "__hash__", "len": "__len__", "repr": "__repr__", "str": "__str__",
                "bool": "__bool__", "iter": "__iter__", "list": "__iter__",
                "tuple": "__iter__", "reversed": "__reversed__", "abs": "__abs__"}
# unittest's assertions that compare two objects with `==` (or `!=`).
_ASSERT_EQUAL = frozenset({"assertEqual", "assertNotEqual", "assertEquals"})


class _Reader:
    """Reads the calls of one target in code whose references are known."""

    def __init__(self, target: Target, refs: _References) -> None:
        self.target, self.refs = target, refs

    def _classes(self, func: ast.expr) -> str | None:
        return self.refs.refers(func)

    def _args(self, call: ast.Call, env: testcode.Env) -> tuple[str, ...] | None:
        args = testcode.arguments(call, env, self._classes)
        if args is None:
            return None
        try:
            # The sandbox's own reading: what it refuses is left out.
            split_arguments(args, objects=True)
        except (ValueError, SyntaxError, TypeError, RecursionError, MemoryError):
            return None
        return args

    def _value(self, node: ast.expr, env: testcode.Env) -> str | None:
        return testcode.literal_text(node, env, self._classes)

    def receiver(self, node: ast.expr, env: testcode.Env) -> str | None:
        """``@C(...)``, if ``node`` is an object the test builds with the target's class."""
        if isinstance(node, ast.Name) and node.id in env:
            node = env[node.id]
        if not isinstance(node, ast.Call) or self.refs.refers(node.func) != self.target.name:
            return None
        args = self._args(node, env)
        return f"@{self.target.name}({', '.join(args)})" if args is not None else None

    def call_of(self, node: ast.AST, env: testcode.Env) -> tuple[str, ...] | None:
        """The call's arguments in the call format, if ``node`` calls the target."""
        t = self.target
        if t.kind in (FUNCTION, INIT):
            if isinstance(node, ast.Call) and self.refs.refers(node.func) == t.name:
                return self._args(node, env)
            return None
        if t.kind == STATIC:
            func = node.func if isinstance(node, ast.Call) else None
            if (isinstance(func, ast.Attribute) and func.attr == t.member
                    and self.refs.refers(func.value) == t.name):
                assert isinstance(node, ast.Call)
                return self._args(node, env)
            return None
        if t.kind == PROPERTY:
            if isinstance(node, ast.Attribute) and node.attr == t.member and isinstance(
                    node.ctx, ast.Load):
                recv = self.receiver(node.value, env)
                return (f"{recv}.{t.member}",) if recv is not None else None
            return None
        return self._method(node, env)

    def _method(self, node: ast.AST, env: testcode.Env) -> tuple[str, ...] | None:
        m = self.target.member
        if isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Attribute) and func.attr == m:
                recv = self.receiver(func.value, env)
                args = self._args(node, env) if recv is not None else None
                return (recv, *args) if recv is not None and args is not None else None
            if isinstance(func, ast.Attribute) and func.attr in _ASSERT_EQUAL and m in (
                    "__eq__", "__ne__") and len(node.args) >= 2:
                return self._pair(node.args[0], node.args[1], env, symmetric=True)
            if (isinstance(func, ast.Name) and func.id not in env
                    and _UNARY_CALLS.get(func.id) == m and len(node.args) == 1
                    and not node.keywords):
                recv = self.receiver(node.args[0], env)
                return (recv,) if recv is not None else None
            if m == "__call__":
                recv = self.receiver(func, env)
                args = self._args(node, env) if recv is not None else None
                return (recv, *args) if recv is not None and args is not None else None
            return None
        if isinstance(node, ast.Compare) and len(node.ops) == 1:
            op, other = node.ops[0], node.comparators[0]
            if isinstance(op, ast.In | ast.NotIn) and m == "__contains__":
                return self._pair(other, node.left, env, symmetric=False)
            if _COMPARE.get(type(op)) == m:
                return self._pair(node.left, other, env,
                                  symmetric=isinstance(op, ast.Eq | ast.NotEq))
            return None
        if isinstance(node, ast.Subscript) and m == "__getitem__" and isinstance(
                node.ctx, ast.Load) and not isinstance(node.slice, ast.Slice):
            return self._pair(node.value, node.slice, env, symmetric=False)
        if isinstance(node, ast.BinOp) and _BINARY.get(type(node.op)) == m:
            return self._pair(node.left, node.right, env, symmetric=False)
        return None

    def _pair(self, obj: ast.expr, arg: ast.expr, env: testcode.Env, *,
              symmetric: bool) -> tuple[str, ...] | None:
        """``obj.m(arg)`` when ``obj`` is built by the class (or, for ``==``, either side:
        Python tries the reflected method when the left one does not know the right)."""
        for a, b in ((obj, arg), (arg, obj)) if symmetric else ((obj, arg),):
            recv = self.receiver(a, env)
            value = self._value(b, env) if recv is not None else None
            if recv is not None and value is not None:
                try:
                    split_arguments([value], objects=True)
                except (ValueError, SyntaxError, TypeError, RecursionError, MemoryError):
                    continue
                return (recv, value)
        return None


# --------------------------------------------------------------------------- which test files


def rank(path: str, module_path: str) -> tuple[int, int, str]:
    """Sort key for test files: those named after the module first (``test_more.py`` for
    ``more.py``), then the shallower, then by path."""
    stem = posixpath.splitext(posixpath.basename(module_path))[0].lstrip("_")
    name = posixpath.basename(path)
    return (0 if stem and stem in name else 1, path.count("/"), path)


# --------------------------------------------------------------------------- running them


def first_difference(
    before: str, after: str, entry: str, calls: Sequence[Call], *, limits: Limits,
    until: float, context: PairContext | None = None,
) -> tuple[Counterexample | None, Confirmation | None]:
    """Run every call on both versions; the first confirmed difference, and the first
    input that differed without refuting (with the reason), if any.

    The calls first run one after another in one child per version; each that differed
    is then examined alone in fresh children (``differential.examine``), so a refutation
    never rests on state left by an earlier call.
    """
    left = until - time.monotonic()
    if not calls or left < 0.5:
        return None, None
    texts = [list(c.args) for c in calls]
    # At most half of what is left: the random search comes after.
    batch = dataclasses.replace(limits, wall_s=max(1.0, min(limits.wall_s, left / 2)))
    pairs = run_both(before, after, entry, texts, limits=batch, context=context)
    undecided: Confirmation | None = None
    examined = 0
    for call, (a, b) in zip(calls, pairs, strict=True):
        if compare(a, b).same or NOT_RUN in (a.value, b.value):
            continue
        if until - time.monotonic() < 0.5 or examined >= _MAX_EXAMINED:
            break
        examined += 1
        seen = examine(before, after, entry, call.args, found_by=call.origin, limits=limits,
                       context=context)
        if seen.counterexample is not None:
            return seen.counterexample, undecided
        if seen.reason and undecided is None:
            undecided = seen
    return None, undecided
