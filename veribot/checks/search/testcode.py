"""What the code of a test or a doctest session stands for, read without running it.

A call found in a test is an input of the unit only if each of its arguments can be
written in the sandbox's call format (``sandbox._child.parse_literal``). This module turns
argument expressions into such literals:

- a name stands for the expression it is bound to, if bound exactly once in its scope
  (the module's names are seen by its functions that do not bind them), or once in the
  body of the ``for`` loop the use is in (a loop body's ``r = C(*args)``);
- a ``for`` loop over a literal sequence (or ``range`` of ints) binds its target to each
  item in turn, with tuple unpacking, and so do the rows of ``pytest.mark.parametrize``:
  each use inside is read once per row (``sites``);
- literals, f-strings of literal strings and ints, ``-x``; ``list``/``tuple`` of literals,
  ``dict(k=v)``, a list comprehension over a literal sequence; ``*args`` and ``**kwargs``
  of literals in a call; ``iter``, ``range``, ``float``, ``set`` and ``frozenset`` calls
  stay calls (the sandbox builds them); so do ``io.StringIO('...')`` and
  ``io.BytesIO(b'...')`` (also written ``StringIO(...)``, as after ``from io import``);
- a call of one of the project's classes (``classes`` says which name it refers to)
  stays a call, ``Point(1, 2)``: the sandbox makes the object with each version's class.

Everything is bounded (depth, nodes built, rows per loop, nodes visited), so a large or
hostile test file cannot make this slow.
"""

from __future__ import annotations

import ast
import itertools
import re
from collections.abc import Callable, Iterable, Iterator, Sequence

__all__ = ["Classes", "Env", "arguments", "literal_names", "literal_text", "sites"]

Env = dict[str, ast.expr]
# Which of the project's classes an expression names (its name in the unit's module).
Classes = Callable[[ast.expr], str | None]

MAX_ARGS_CHARS = 2000  # an argument printing longer is a fixture, not an example
_MAX_DEPTH = 20
_MAX_STEPS = 4000
_MAX_ROWS = 32  # rows of one loop or one parametrize decorator
_MAX_VISITS = 200_000  # nodes visited in one scope, rows included
_MAX_RANGE = 32
# Calls the sandbox reads as builtin values (never a project's class).
_VALUE_CALLS = frozenset({"float", "set", "frozenset", "range", "iter"})
# Streams the sandbox makes, by how a test may name them: the name it writes them with.
_STREAM_CALLS = {"io.StringIO": "StringIO", "StringIO": "StringIO",
                 "io.BytesIO": "BytesIO", "BytesIO": "BytesIO"}

_Scope = ast.Module | ast.FunctionDef | ast.AsyncFunctionDef
_NESTED = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


# --------------------------------------------------------------------------- where names are bound


def sites(tree: ast.Module, names: Iterable[str] | None = None, text: str = "",
          ) -> Iterator[tuple[ast.AST, Env, tuple[str, ...]]]:
    """Each node of the code of ``tree`` (its top level and each function, methods of
    test classes included), with the bindings it sees and the exceptions the test
    expects it to raise (inside ``assertRaises(E, ...)``, ``with pytest.raises(E):``;
    ``("?",)`` for an exception not named plainly); a node inside a loop over a literal
    sequence, or in a parametrized function, once per row.

    With ``names``, only the functions that mention one of them (or a module-level name
    bound to an expression that does) are read: a call of the unit names it. ``text``,
    the source of ``tree``, makes that quicker (its lines are searched, not its tree).
    """
    module_env, _ = literal_names(tree.body)
    wanted = _mentioning(module_env, names) if names is not None else None
    # Line breaks as the parser counts them (``splitlines`` also breaks at \x0c, \u2028).
    lines = re.split(r"\r\n|\r|\n", text) if text else []
    visits = [0]
    yield from _nodes(tree.body, module_env, visits, ())
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and (
                wanted is None or _mentions(node, wanted, lines)):
            env, bound = literal_names(node.body, node.args)
            outer = {k: v for k, v in module_env.items() if k not in bound}
            visits = [0]
            for row in _parametrized(node, module_env):
                yield from _nodes(node.body, {**outer, **env, **row}, visits, ())


def _mentioning(env: Env, names: Iterable[str]) -> frozenset[str]:
    """``names`` and the module-level names bound to an expression that mentions one."""
    found = set(names)
    for name, value in env.items():
        if any((isinstance(n, ast.Name) and n.id in found) or (isinstance(n, ast.Attribute)
               and n.attr in found) for n in ast.walk(value)):
            found.add(name)
    return frozenset(found)


def _mentions(fn: ast.FunctionDef | ast.AsyncFunctionDef, names: frozenset[str],
              lines: Sequence[str]) -> bool:
    if lines and fn.end_lineno is not None:
        # The function's lines (decorators too) holding one of the names, as text: a
        # superset of the names it uses, found without walking its tree.
        first = min([fn.lineno, *(d.lineno for d in fn.decorator_list)]) - 1
        return any(name in line for line in lines[first:fn.end_lineno] for name in names)
    return any((isinstance(n, ast.Name) and n.id in names)
               or (isinstance(n, ast.Attribute) and n.attr in names) for n in ast.walk(fn))


_Site = tuple[ast.AST, Env, tuple[str, ...]]


def _nodes(body: Sequence[ast.AST], env: Env, visits: list[int],
           raises: tuple[str, ...]) -> Iterator[_Site]:
    for node in body:
        yield from _node(node, env, visits, raises)


def _node(node: ast.AST, env: Env, visits: list[int],
          raises: tuple[str, ...]) -> Iterator[_Site]:
    if isinstance(node, _NESTED):
        return  # a scope of its own
    visits[0] += 1
    if visits[0] > _MAX_VISITS:
        return
    yield node, env, raises
    if isinstance(node, ast.For):
        yield from _node(node.iter, env, visits, raises)
        inner, _ = literal_names(node.body)
        targets = _target_names(node.target)
        outer = {k: v for k, v in env.items() if k not in targets}
        for row in _loop_rows(node, env):
            yield from _nodes(node.body, {**outer, **row, **inner}, visits, raises)
        yield from _nodes(node.orelse, env, visits, raises)
        return
    if isinstance(node, ast.With | ast.AsyncWith):
        expected = [e for item in node.items for e in _expected(item.context_expr)]
        yield from _nodes(node.items, env, visits, raises)
        yield from _nodes(node.body, env, visits, (*raises, *expected))
        return
    if isinstance(node, ast.Call) and _raises_call(node):
        # assertRaises(E, f, *args) / pytest.raises(E, f, ...): what follows E is expected
        # to raise it.
        yield from _node(node.func, env, visits, raises)
        yield from _nodes([*node.args, *(k.value for k in node.keywords)], env, visits,
                          (*raises, *_expected(node)))
        return
    for child in ast.iter_child_nodes(node):
        yield from _node(child, env, visits, raises)


# unittest's and pytest's ways of saying "this raises E".
_RAISES = frozenset({"assertRaises", "assertRaisesRegex", "assertRaisesRegexp", "raises"})


def _raises_call(node: ast.expr) -> bool:
    return isinstance(node, ast.Call) and bool(node.args) and (
        _dotted(node.func) or "").rsplit(".", 1)[-1] in _RAISES


def _expected(node: ast.expr) -> tuple[str, ...]:
    """The exceptions ``assertRaises(E, ...)``/``pytest.raises(E)`` expect, by name."""
    if not _raises_call(node):
        return ()
    assert isinstance(node, ast.Call)
    first = node.args[0]
    names = first.elts if isinstance(first, ast.Tuple) else [first]
    return tuple((_dotted(n) or "?").rsplit(".", 1)[-1] for n in names)


def literal_names(body: Sequence[ast.stmt],
                  args: ast.arguments | None = None) -> tuple[Env, set[str]]:
    """The names bound exactly once in ``body`` (not descending into nested functions)
    by a plain ``name = expr``, with their expressions; and every name bound there."""
    assigned: dict[str, list[ast.expr | None]] = {}
    if args is not None:
        for a in ast.walk(args):
            if isinstance(a, ast.arg):
                assigned.setdefault(a.arg, []).append(None)
    todo: list[ast.AST] = [n for n in body if not isinstance(n, _NESTED)]
    while todo:
        node = todo.pop()
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(
            node.targets[0], ast.Name
        ):
            assigned.setdefault(node.targets[0].id, []).append(node.value)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store | ast.Del):
            assigned.setdefault(node.id, []).append(None)  # a loop target, a tuple target
        elif isinstance(node, ast.arg):
            assigned.setdefault(node.arg, []).append(None)  # a lambda's parameter
        elif isinstance(node, ast.Global | ast.Nonlocal):
            for n in node.names:
                assigned.setdefault(n, []).append(None)
        todo.extend(c for c in ast.iter_child_nodes(node) if not isinstance(c, _NESTED))
    # `x = 1` is seen as the Assign and as its target Name: once bound, two entries.
    env: Env = {}
    for name, values in assigned.items():
        exprs = [v for v in values if v is not None]
        if len(exprs) == 1 and len(values) == 2:
            env[name] = exprs[0]
    return env, set(assigned)


def _target_names(target: ast.expr) -> set[str]:
    return {n.id for n in ast.walk(target) if isinstance(n, ast.Name)}


def _loop_rows(loop: ast.For, env: Env) -> list[Env]:
    """The bindings of the loop's target for each item, if the iterable is literal;
    else one row that binds nothing (the target stays unknown)."""
    items = _items(loop.iter, env, 0)
    if items is None:
        return [{}]
    rows: list[Env] = []
    for item in items[:_MAX_ROWS]:
        row = _bind(loop.target, item, env, 0)
        if row is not None:
            rows.append(row)
    return rows or [{}]


def _items(node: ast.expr, env: Env, depth: int) -> list[ast.expr] | None:
    """The items of a literal sequence expression (a list, a tuple, a name bound to one,
    a sum of such, ``range`` of ints), unresolved; None if not one."""
    if depth > _MAX_DEPTH:
        return None
    if isinstance(node, ast.List | ast.Tuple):
        return list(node.elts)
    if isinstance(node, ast.Name) and node.id in env:
        return _items(env[node.id], {k: v for k, v in env.items() if k != node.id}, depth + 1)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _items(node.left, env, depth + 1), _items(node.right, env, depth + 1)
        return left + right if left is not None and right is not None else None
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
            and node.func.id == "range" and node.func.id not in env and not node.keywords):
        bounds = [_int(a, env) for a in node.args]
        if not 1 <= len(bounds) <= 3 or any(b is None for b in bounds):
            return None
        numbers = range(*[b for b in bounds if b is not None])
        return [ast.Constant(i) for i in itertools.islice(numbers, _MAX_RANGE)]
    return None


def _int(node: ast.expr, env: Env) -> int | None:
    resolved = _resolve(node, env, None, 0, [0])
    if isinstance(resolved, ast.Constant) and type(resolved.value) is int:
        return resolved.value
    return None


def _bind(target: ast.expr, item: ast.expr, env: Env, depth: int) -> Env | None:
    if isinstance(target, ast.Name):
        return {target.id: item}
    if not isinstance(target, ast.Tuple | ast.List) or depth > _MAX_DEPTH:
        return None
    if isinstance(item, ast.Name) and item.id in env:
        item = env[item.id]
    if not isinstance(item, ast.Tuple | ast.List) or len(item.elts) != len(target.elts):
        return None
    row: Env = {}
    for t, v in zip(target.elts, item.elts, strict=True):
        inner = _bind(t, v, env, depth + 1)
        if inner is None:
            return None
        row.update(inner)
    return row


def _parametrized(fn: ast.FunctionDef | ast.AsyncFunctionDef, module_env: Env) -> list[Env]:
    """The argument rows of ``@pytest.mark.parametrize`` decorators (their product), as
    name bindings; ``[{}]`` for a function without them. Rows are the literal list or
    tuple given, or a module-level name bound once to one (or a sum of such)."""
    rows: list[Env] = [{}]
    for d in fn.decorator_list:
        if not (isinstance(d, ast.Call) and len(d.args) >= 2
                and (_dotted(d.func) or "").endswith("mark.parametrize")):
            continue
        names = _parameter_names(d.args[0])
        values = _items(d.args[1], module_env, 0)
        if names is None or values is None:
            continue  # not understood: the function's arguments stay unbound
        these: list[Env] = []
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


def _dotted(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value)
        return f"{base}.{node.attr}" if base else None
    return None


# --------------------------------------------------------------------------- literals


def literal_text(node: ast.expr, env: Env, classes: Classes | None = None) -> str | None:
    """``node`` as a literal of the sandbox's call format, or None if it is not one."""
    resolved = _resolve(node, env, classes, 0, [0])
    if resolved is None:
        return None
    try:
        text = ast.unparse(resolved)
    except (ValueError, RecursionError):
        return None
    return text if len(text) <= MAX_ARGS_CHARS else None


def arguments(call: ast.Call, env: Env, classes: Classes | None = None,
              ) -> tuple[str, ...] | None:
    """The arguments of ``call`` as literals (keywords as ``name=literal``), with
    ``*args`` and ``**kwargs`` of literals spread; None if one is not a literal."""
    steps = [0]
    spread = _spread(call.args, call.keywords, env, classes, 0, steps)
    if spread is None:
        return None
    out: list[str] = []
    try:
        out += [ast.unparse(a) for a in spread[0]]
        out += [f"{k.arg}={ast.unparse(k.value)}" for k in spread[1]]
    except (ValueError, RecursionError):
        return None
    if sum(len(a) for a in out) > MAX_ARGS_CHARS:
        return None
    return tuple(out)


def _spread(args: Sequence[ast.expr], keywords: Sequence[ast.keyword], env: Env,
            classes: Classes | None, depth: int,
            steps: list[int]) -> tuple[list[ast.expr], list[ast.keyword]] | None:
    """Resolved positional arguments and keywords, stars spread."""
    positional: list[ast.expr] = []
    for arg in args:
        if isinstance(arg, ast.Starred):
            items = _resolve(arg.value, env, classes, depth, steps)
            if not isinstance(items, ast.List | ast.Tuple):
                return None
            positional.extend(items.elts)
            continue
        value = _resolve(arg, env, classes, depth, steps)
        if value is None:
            return None
        positional.append(value)
    named: list[ast.keyword] = []
    for kw in keywords:
        value = _resolve(kw.value, env, classes, depth, steps)
        if kw.arg is not None:
            if value is None:
                return None
            named.append(ast.keyword(kw.arg, value))
            continue
        if not isinstance(value, ast.Dict):
            return None
        for k, v in zip(value.keys, value.values, strict=True):
            if not (isinstance(k, ast.Constant) and isinstance(k.value, str)
                    and k.value.isidentifier()):
                return None
            named.append(ast.keyword(k.value, v))
    names = [k.arg for k in named]
    if len(set(names)) != len(names):
        return None  # Python would refuse the call
    return positional, named


def _resolve(node: ast.expr, env: Env, classes: Classes | None, depth: int,
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
        return _resolve(bound, env, classes, d, steps) if bound is not None else None
    if isinstance(node, ast.JoinedStr):
        return _fstring(node, env, classes, d, steps)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        inner = _resolve(node.operand, env, classes, d, steps)
        return ast.UnaryOp(node.op, inner) if inner is not None else None
    if isinstance(node, ast.BinOp):
        return _arithmetic(node, env, classes, d, steps)
    if isinstance(node, ast.List | ast.Tuple | ast.Set):
        elts = _resolve_all(node.elts, env, classes, d, steps)
        if elts is None:
            return None
        if isinstance(node, ast.List):
            return ast.List(elts, ast.Load())
        return ast.Tuple(elts, ast.Load()) if isinstance(node, ast.Tuple) else ast.Set(elts)
    if isinstance(node, ast.Dict):
        if any(k is None for k in node.keys):
            return None
        keys = _resolve_all([k for k in node.keys if k is not None], env, classes, d, steps)
        values = _resolve_all(node.values, env, classes, d, steps)
        if keys is None or values is None:
            return None
        return ast.Dict(list[ast.expr | None](keys), values)
    if isinstance(node, ast.ListComp):
        return _comprehension(node, env, classes, d, steps)
    if isinstance(node, ast.Call):
        return _call(node, env, classes, d, steps)
    return None


def _fstring(node: ast.JoinedStr, env: Env, classes: Classes | None, depth: int,
             steps: list[int]) -> ast.expr | None:
    """An f-string of literal strings and ints."""
    pieces = []
    for part in node.values:
        piece: ast.expr | None = part
        if isinstance(part, ast.FormattedValue):
            if part.conversion != -1 or part.format_spec is not None:
                return None
            piece = _resolve(part.value, env, classes, depth, steps)
        if not (isinstance(piece, ast.Constant) and type(piece.value) in (str, int)):
            return None
        pieces.append(str(piece.value))
    joined = "".join(pieces)
    return ast.Constant(joined) if len(joined) <= MAX_ARGS_CHARS else None


def _arithmetic(node: ast.BinOp, env: Env, classes: Classes | None, depth: int,
                steps: list[int]) -> ast.expr | None:
    """``i + 1`` and the like on small ints (a loop's index, say); nothing else."""
    if not isinstance(node.op, ast.Add | ast.Sub | ast.Mult):
        return None
    left = _resolve(node.left, env, classes, depth, steps)
    right = _resolve(node.right, env, classes, depth, steps)
    values = []
    for side in (left, right):
        if isinstance(side, ast.UnaryOp) and isinstance(side.op, ast.USub):
            side = side.operand if isinstance(side.operand, ast.Constant) else None
            if side is None or type(side.value) is not int:
                return None
            values.append(-side.value)
        elif isinstance(side, ast.Constant) and type(side.value) is int:
            values.append(side.value)
        else:
            return None
    a, b = values
    if max(abs(a), abs(b)) > 10**6:
        return None
    result = a + b if isinstance(node.op, ast.Add) else a - b if isinstance(
        node.op, ast.Sub) else a * b
    return ast.Constant(result) if result >= 0 else ast.UnaryOp(ast.USub(), ast.Constant(-result))


def _comprehension(node: ast.ListComp, env: Env, classes: Classes | None, depth: int,
                   steps: list[int]) -> ast.expr | None:
    """``[f(x) for x in <literal sequence>]``, one loop and no condition, as a list."""
    if len(node.generators) != 1:
        return None
    gen = node.generators[0]
    if gen.ifs or gen.is_async:
        return None
    items = _items(gen.iter, env, depth)
    if items is None or len(items) > _MAX_ROWS:
        return None
    targets = _target_names(gen.target)
    outer = {k: v for k, v in env.items() if k not in targets}
    elts: list[ast.expr] = []
    for item in items:
        row = _bind(gen.target, item, env, 0)
        value = _resolve(node.elt, {**outer, **row}, classes, depth, steps) if row else None
        if value is None:
            return None
        elts.append(value)
    return ast.List(elts, ast.Load())


def _call(node: ast.Call, env: Env, classes: Classes | None, depth: int,
          steps: list[int]) -> ast.expr | None:
    func = node.func
    if isinstance(func, ast.Name) and isinstance(env.get(func.id), ast.Name):
        func = env[func.id]  # `for wrapper in (list, iter): wrapper(seq)`
    name = func.id if isinstance(func, ast.Name) and func.id not in env else None
    stream = _STREAM_CALLS.get(_dotted(func) or "")
    if stream is not None and not (isinstance(func, ast.Name) and func.id in env) and (
            classes is None or classes(func) is None):
        if node.keywords or len(node.args) > 1:
            return None
        contents = _resolve_all(node.args, env, classes, depth, steps)
        if contents is None:
            return None
        return ast.Call(ast.Attribute(ast.Name("io", ast.Load()), stream, ast.Load()),
                        contents, [])
    if name not in (*_VALUE_CALLS, "list", "tuple", "dict"):
        # Not a builtin value: one of the project's classes, or no literal at all.
        cls = classes(func) if classes is not None else None
        if cls is None:
            return None
        spread = _spread(node.args, node.keywords, env, classes, depth, steps)
        if spread is None:
            return None
        return ast.Call(ast.Name(cls, ast.Load()), spread[0], spread[1])
    if name == "dict":  # dict(a=1): a dict of str keys
        if node.args or any(k.arg is None for k in node.keywords):
            return None
        values = _resolve_all([k.value for k in node.keywords], env, classes, depth, steps)
        if values is None:
            return None
        return ast.Dict([ast.Constant(k.arg) for k in node.keywords], values)
    if node.keywords:
        return None
    args = _resolve_all(node.args, env, classes, depth, steps)
    if args is None:
        return None
    if name in ("list", "tuple"):
        return _convert(name, args)
    return ast.Call(ast.Name(name, ast.Load()), args, [])


def _convert(name: str, args: list[ast.expr]) -> ast.expr | None:
    """``list(x)``/``tuple(x)`` of a literal string, list or tuple, as a literal."""
    if len(args) != 1:
        return ast.List([], ast.Load()) if not args and name == "list" else (
            ast.Tuple([], ast.Load()) if not args else None)
    x = args[0]
    if isinstance(x, ast.Constant) and isinstance(x.value, str):
        elts: list[ast.expr] = [ast.Constant(ch) for ch in x.value]
    elif isinstance(x, ast.List | ast.Tuple):
        elts = list(x.elts)
    else:
        return None
    return ast.List(elts, ast.Load()) if name == "list" else ast.Tuple(elts, ast.Load())


def _resolve_all(nodes: Sequence[ast.expr], env: Env, classes: Classes | None, depth: int,
                 steps: list[int]) -> list[ast.expr] | None:
    out = []
    for n in nodes:
        if isinstance(n, ast.Starred):
            return None
        r = _resolve(n, env, classes, depth, steps)
        if r is None:
            return None
        out.append(r)
    return out
