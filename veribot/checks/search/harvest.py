"""Calls of a function taken from its repository: doctests and test files, both revisions.

A test or doctest added with a change usually calls the changed function with the input
that shows the change. This module finds such calls without running anything: it reads
the doctests (``>>>`` lines) of both versions' module and the test and doc files of both
revisions (``PairContext.before_tests``/``after_tests``), and keeps the calls of the unit
whose arguments are literals the sandbox's call format takes (see
``sandbox._child.parse_literal``), resolving a name bound once to a literal in the same
test function or module (``seq = 'ABC'`` then ``sliced(seq, -1)``), the rows of
``pytest.mark.parametrize`` and f-strings of literal strings.

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
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from veribot.checks.lang import pysource
from veribot.checks.project.package import PairContext
from veribot.checks.sandbox import Limits
from veribot.checks.sandbox._child import split_arguments
from veribot.checks.search.differential import Confirmation, compare, examine, run_both
from veribot.checks.verdict import Counterexample

__all__ = [
    "MAX_CALLS",
    "Call",
    "calls_for",
    "first_difference",
    "from_doctests",
    "from_test_file",
    "rank",
]

log = logging.getLogger(__name__)

MAX_CALLS = 64
# Calls that differed in the first run and are examined in fresh children, at most.
_MAX_EXAMINED = 4
NOT_RUN = "not-run"  # the value of a call the sandbox had no time left to start
# A call whose arguments print longer than this is left out (a fixture, not an example).
_MAX_ARGS_CHARS = 2000
_MAX_DEPTH = 20
_MAX_STEPS = 4000


@dataclass(frozen=True)
class Call:
    """One call of the unit, as the sandbox takes it, and where it was found.

    ``args``: literal texts, keyword arguments as ``name=literal``; ``origin``: a phrase
    for a verdict ("the doctest at line 40 of the after version", "a call in
    tests/test_more.py line 123 (after revision)").
    """

    args: tuple[str, ...]
    origin: str


def calls_for(
    before: str, after: str, entry: str, context: PairContext | None = None,
    *, limit: int = MAX_CALLS,
) -> list[Call]:
    """The calls of ``entry`` found in the repository, most telling first, deduplicated.

    Calls only in the after revision (a test added with the change) come first, then the
    rest in the order found. Only plain functions are harvested (``entry`` without a
    class part); never raises on bad input.
    """
    if "." in entry or not entry.isidentifier():
        return []
    try:
        found = list(_all_calls(before, after, entry, context))
    except (SyntaxError, ValueError, RecursionError, MemoryError) as err:
        log.info("harvest: %s: %s", entry, err)
        return []
    before_args = {c.args for label, c in found if label == "before"}
    ordered = [c for label, c in found if label == "after" and c.args not in before_args]
    ordered += [c for _, c in found]
    seen: set[tuple[str, ...]] = set()
    out: list[Call] = []
    for call in ordered:
        if call.args in seen:
            continue
        seen.add(call.args)
        out.append(call)
        if len(out) >= limit:
            break
    return out


def _all_calls(
    before: str, after: str, entry: str, context: PairContext | None
) -> Iterator[tuple[str, Call]]:
    for label, source, package in (("after", after, context and context.after),
                                   ("before", before, context and context.before)):
        module = package.module if package else ""
        for call in from_doctests(source, entry, f"the {label} version", module=module):
            yield label, call
    if context is None:
        return
    for label, package, files in (("after", context.after, context.after_tests),
                                  ("before", context.before, context.before_tests)):
        module = package.module if package is not None else ""
        for file in files:
            if file.path.endswith(".py"):
                calls = from_test_file(file.text, entry, module, f"{file.path}", label)
            else:
                calls = from_doctests(file.text, entry, f"{file.path} ({label} revision)",
                                      docs=True, module=module)
            for call in calls:
                yield label, call


# --------------------------------------------------------------------------- doctests


def from_doctests(
    source: str, name: str, where: str, *, docs: bool = False, module: str = ""
) -> list[Call]:
    """Calls of ``name`` in the doctests of ``source``.

    ``source`` is a Python module (its docstrings are read), or with ``docs`` a text file
    whose ``>>>`` examples are read whole. In a module's own doctests the function is
    its bare name; in a doc file, a name imported from ``module`` or its packages.
    """
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
        if ">>>" not in text or name not in text:
            continue
        try:
            examples = parser.get_examples(text)
        except ValueError:
            continue
        session: list[tuple[ast.Module, int]] = []
        for example in examples:
            try:
                session.append((ast.parse(example.source), first_line + example.lineno))
            except SyntaxError:
                continue
        refs = _References(name, module)
        if not docs:
            refs.bare_names.add(name)  # a module's doctests run in its namespace
        for tree_, _ in session:
            refs.read(tree_)
        for tree_, line in session:
            for node in ast.walk(tree_):
                call = _call_of(node, refs, {})
                if call is not None:
                    out.append(Call(call, f"the doctest at line {line} of {where}"))
    return out


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


def from_test_file(text: str, name: str, module: str, path: str, label: str) -> list[Call]:
    """Calls of function ``name`` of module ``module`` (dotted) in the test file ``text``."""
    if name not in text:
        return []
    try:
        tree = _parse(text)
    except SyntaxError:
        return []
    refs = _References(name, module)
    refs.read(tree)
    if not refs.bare_names and not refs.module_names:
        return []
    found: list[tuple[int, Call]] = []
    for scope, env in _scopes(tree):
        for node in _walk_scope(scope):
            call = _call_of(node, refs, env)
            if call is not None:
                line = getattr(node, "lineno", 0)
                found.append((line, Call(call, f"a call in {path} line {line} ({label} revision)")))
    return [c for _, c in sorted(found, key=lambda f: f[0])]


@functools.lru_cache(maxsize=16)
def _parse(text: str) -> ast.Module:
    return pysource.parse(text)


class _References:
    """How code refers to the unit: bare names bound to it, names bound to its module or
    one of its packages (``p.f``, ``p.mod.f``)."""

    def __init__(self, name: str, module: str) -> None:
        self.name = name
        parts = module.split(".") if module else []
        # The unit's module and the packages above it: any may re-export the function.
        self.modules = {".".join(parts[: i + 1]) for i in range(len(parts))}
        self.bare_names: set[str] = set()
        self.module_names: dict[str, str] = {}  # bound name -> the module it is

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
                    if node.module in self.modules and alias.name == self.name:
                        self.bare_names.add(bound)
                    elif node.module in self.modules and alias.name == "*":
                        self.bare_names.add(self.name)
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
        self.bare_names -= rebound
        for name in rebound & set(self.module_names):
            del self.module_names[name]

    def refers(self, func: ast.expr) -> bool:
        if isinstance(func, ast.Name):
            return func.id in self.bare_names
        if isinstance(func, ast.Attribute) and func.attr == self.name:
            dotted = _dotted(func.value) or ""
            head, _, rest = dotted.partition(".")
            real = self.module_names.get(head)
            return real is not None and (f"{real}.{rest}" if rest else real) in self.modules
        return False


def _dotted(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value)
        return f"{base}.{node.attr}" if base else None
    return None


_Scope = ast.Module | ast.FunctionDef | ast.AsyncFunctionDef


def _scopes(tree: ast.Module) -> Iterator[tuple[_Scope, dict[str, ast.expr]]]:
    """Each function (and the module) with its names bound exactly once to a literal;
    a function sees the module's such names that it does not bind itself."""
    module_env, _ = _literal_names(tree)
    yield tree, module_env
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            env, bound = _literal_names(node)
            outer = {k: v for k, v in module_env.items() if k not in bound}
            for row in _parametrized(node, module_env):
                yield node, {**outer, **env, **row}


_MAX_ROWS = 32


def _parametrized(fn: ast.FunctionDef | ast.AsyncFunctionDef,
                  module_env: dict[str, ast.expr]) -> list[dict[str, ast.expr]]:
    """The argument rows of ``@pytest.mark.parametrize`` decorators (their product), as
    name bindings; ``[{}]`` for a function without them. Rows are the literal list or
    tuple given, or a module-level name bound once to one (or a sum of such)."""
    rows: list[dict[str, ast.expr]] = [{}]
    for d in fn.decorator_list:
        if not (isinstance(d, ast.Call) and len(d.args) >= 2
                and (_dotted(d.func) or "").endswith("mark.parametrize")):
            continue
        names = _parameter_names(d.args[0])
        values = _sequence(d.args[1], module_env, 0)
        if names is None or values is None:
            continue  # not understood: the function's arguments stay unbound
        these: list[dict[str, ast.expr]] = []
        for value in values:
            if isinstance(value, ast.Call) and (_dotted(value.func) or "").endswith("param"):
                value = ast.Tuple(list(value.args), ast.Load())
                if len(names) == 1 and len(value.elts) == 1:
                    value = value.elts[0]
            if len(names) == 1:
                these.append({names[0]: value})
            elif isinstance(value, ast.Tuple | ast.List) and len(value.elts) == len(names):
                these.append(dict(zip(names, value.elts, strict=True)))
        rows = [{**r, **t} for r in rows for t in these][:_MAX_ROWS]
    return rows


def _parameter_names(node: ast.expr) -> list[str] | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        names = [n.strip() for n in node.value.split(",") if n.strip()]
    elif isinstance(node, ast.Tuple | ast.List) and all(
            isinstance(e, ast.Constant) and isinstance(e.value, str) for e in node.elts):
        names = [str(e.value) for e in node.elts if isinstance(e, ast.Constant)]
    else:
        return None
    return names if names and all(n.isidentifier() for n in names) else None


def _sequence(node: ast.expr, module_env: dict[str, ast.expr],
              depth: int) -> list[ast.expr] | None:
    if depth > _MAX_DEPTH:
        return None
    if isinstance(node, ast.List | ast.Tuple):
        return list(node.elts)
    if isinstance(node, ast.Name) and node.id in module_env:
        return _sequence(module_env[node.id], {}, depth + 1)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left = _sequence(node.left, module_env, depth + 1)
        right = _sequence(node.right, module_env, depth + 1)
        return left + right if left is not None and right is not None else None
    return None


def _walk_scope(scope: _Scope) -> Iterator[ast.AST]:
    """The nodes of ``scope``, not descending into nested functions (their own scope);
    lambdas are part of the scope (``lambda: list(f(seq, -1))``)."""
    nested = ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef
    todo: list[ast.AST] = [n for n in scope.body if not isinstance(n, nested)]
    while todo:
        node = todo.pop()
        yield node
        todo.extend(c for c in ast.iter_child_nodes(node) if not isinstance(c, nested))


def _literal_names(scope: _Scope) -> tuple[dict[str, ast.expr], set[str]]:
    assigned: dict[str, list[ast.expr | None]] = {}
    for node in _walk_scope(scope):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(
            node.targets[0], ast.Name
        ):
            assigned.setdefault(node.targets[0].id, []).append(node.value)
            continue
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store | ast.Del):
            assigned.setdefault(node.id, []).append(None)  # a loop target, a tuple target
        elif isinstance(node, ast.arg):
            assigned.setdefault(node.arg, []).append(None)
        elif isinstance(node, ast.Global | ast.Nonlocal):
            for n in node.names:
                assigned.setdefault(n, []).append(None)
    # `x = 1` sits in the scope's walk as an Assign and as its target Name: count once.
    env: dict[str, ast.expr] = {}
    for name, values in assigned.items():
        exprs = [v for v in values if v is not None]
        if len(exprs) == 1 and len(values) == 2:
            env[name] = exprs[0]
    return env, set(assigned)


# --------------------------------------------------------------------------- arguments


def _call_of(node: ast.AST, refs: _References, env: dict[str, ast.expr]) -> tuple[str, ...] | None:
    """The call's arguments as sandbox literals, if ``node`` calls the unit with literals."""
    if not isinstance(node, ast.Call) or not refs.refers(node.func):
        return None
    args: list[str] = []
    for arg in node.args:
        text = _literal_text(arg, env)
        if text is None:
            return None
        args.append(text)
    for kw in node.keywords:
        if kw.arg is None:
            return None
        text = _literal_text(kw.value, env)
        if text is None:
            return None
        args.append(f"{kw.arg}={text}")
    if sum(len(a) for a in args) > _MAX_ARGS_CHARS:
        return None
    try:
        split_arguments(args)  # the sandbox's own reading: what it refuses is left out
    except (ValueError, SyntaxError, TypeError, RecursionError, MemoryError):
        return None
    return tuple(args)


_SIMPLE_CALLS = frozenset({"float", "set", "frozenset", "range", "iter"})


def _literal_text(node: ast.expr, env: dict[str, ast.expr]) -> str | None:
    resolved = _resolve(node, env, 0, [0])
    if resolved is None:
        return None
    try:
        return ast.unparse(resolved)
    except (ValueError, RecursionError):
        return None


def _resolve(node: ast.expr, env: dict[str, ast.expr], depth: int,
             steps: list[int]) -> ast.expr | None:
    """``node`` with names replaced by their literal values, if it is a literal.

    ``steps`` counts the nodes built, shared by the whole argument: a name used twice
    in each of a chain of names must not build an exponentially large value.
    """
    steps[0] += 1
    if depth > _MAX_DEPTH or steps[0] > _MAX_STEPS:
        return None
    d = depth + 1
    if isinstance(node, ast.Constant):
        return None if node.value is Ellipsis else node
    if isinstance(node, ast.Name):
        bound = env.get(node.id)
        return _resolve(bound, env, d, steps) if bound is not None else None
    if isinstance(node, ast.JoinedStr):  # an f-string of literal strings and ints
        pieces = []
        for part in node.values:
            piece: ast.expr | None = part
            if isinstance(part, ast.FormattedValue):
                if part.conversion != -1 or part.format_spec is not None:
                    return None
                piece = _resolve(part.value, env, d, steps)
            if not (isinstance(piece, ast.Constant) and type(piece.value) in (str, int)):
                return None
            pieces.append(str(piece.value))
        joined = "".join(pieces)
        return ast.Constant(joined) if len(joined) <= _MAX_ARGS_CHARS else None
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        inner = _resolve(node.operand, env, d, steps)
        return ast.UnaryOp(node.op, inner) if inner is not None else None
    if isinstance(node, ast.List | ast.Tuple | ast.Set):
        elts = _resolve_all(node.elts, env, d, steps)
        if elts is None:
            return None
        if isinstance(node, ast.List):
            return ast.List(elts, ast.Load())
        return ast.Tuple(elts, ast.Load()) if isinstance(node, ast.Tuple) else ast.Set(elts)
    if isinstance(node, ast.Dict):
        if any(k is None for k in node.keys):
            return None
        keys = _resolve_all([k for k in node.keys if k is not None], env, d, steps)
        values = _resolve_all(node.values, env, d, steps)
        if keys is None or values is None:
            return None
        return ast.Dict(list[ast.expr | None](keys), values)
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
            and node.func.id in _SIMPLE_CALLS and not node.keywords):
        inner_args = _resolve_all(node.args, env, d, steps)
        if inner_args is None:
            return None
        return ast.Call(ast.Name(node.func.id, ast.Load()), inner_args, [])
    return None


def _resolve_all(nodes: Sequence[ast.expr], env: dict[str, ast.expr],
                 depth: int, steps: list[int]) -> list[ast.expr] | None:
    out = []
    for n in nodes:
        if isinstance(n, ast.Starred):
            return None
        r = _resolve(n, env, depth, steps)
        if r is None:
            return None
        out.append(r)
    return out


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
