"""Which reads of a local variable a binding of it may reach, within one function.

``pylookups`` follows a value looked up by a computed name through the locals it is
assigned to; counting every read of such a local, anywhere in the function, also counts
reads of the values it held before the assignment (a parameter the function rebinds) and
after the next one. ``reached`` narrows that to the reads a binding may reach, and gives
up (``None``) wherever the answer would need more than a walk of the statement tree:

- every statement after the binding is reachable (a ``return`` or ``raise`` is not taken
  to end a path), and all of an enclosing loop (its next iteration);
- only a plain ``name = ...`` in the binding's own block or an enclosing one ends the
  walk (the value it assigns is read first), and not inside a loop of a function that
  has ``break`` or ``continue`` (a path may skip it);
- a binding inside ``try`` or ``with`` gives up: an exception, or a context manager that
  swallows it, can carry the value past any later assignment;
- so does a name that a nested function, lambda, class or generator expression mentions
  (it reads the name when it runs, not where it is written), or that
  ``global``/``nonlocal`` declares.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

__all__ = ["reached"]

_Function = ast.FunctionDef | ast.AsyncFunctionDef
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
_LOOPS = (ast.For, ast.AsyncFor, ast.While)
# What reads a name when it runs, later than where it is written: a generator expression's
# items are computed as it is iterated.
_LAZY = (*_SCOPES, ast.GeneratorExp)


def reached(fn: _Function, binding: ast.stmt | None, name: str) -> list[ast.Name] | None:
    """The reads of ``name`` in ``fn`` that the value bound by ``binding`` (a statement of
    ``fn``, or ``None``: the parameter's value on entry) may reach, or None when unknown."""
    if _nested_mention(fn, name):
        return None
    blocks = _blocks(fn)
    jumps = any(isinstance(n, ast.Break | ast.Continue) for n in _own_nodes(fn))
    found: list[ast.Name] = []
    if binding is None:
        _walk(fn.body, 0, name, found, in_loop=False, jumps=jumps)
        return found
    if id(binding) not in blocks:
        return None
    chain: list[tuple[list[ast.stmt], int, ast.AST]] = []
    at: ast.AST = binding
    while True:
        spot = blocks.get(id(at))
        if spot is None:
            break
        block, index, owner = spot
        chain.append((block, index, owner))
        if owner is fn:
            break
        at = owner
    if any(isinstance(owner, ast.Try | ast.TryStar | ast.With | ast.AsyncWith)
           for _, _, owner in chain):
        return None
    for k, (block, index, owner) in enumerate(chain):
        in_loop = any(isinstance(o, _LOOPS) for _, _, o in chain[k:])
        if _walk(block, index + 1, name, found, in_loop=in_loop, jumps=jumps):
            return found
        if isinstance(owner, _LOOPS):
            found.extend(_reads(owner, name))  # its next iteration, from the top
    return found


def _walk(block: list[ast.stmt], start: int, name: str, found: list[ast.Name], *,
          in_loop: bool, jumps: bool) -> bool:
    """Collect the reads in ``block[start:]``; True when a plain assignment of ``name``
    there ends every path (its value's reads are collected first)."""
    for stmt in block[start:]:
        if isinstance(stmt, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == name for t in stmt.targets
        ) and not (in_loop and jumps):
            found.extend(_reads(stmt.value, name))
            return True
        found.extend(_reads(stmt, name))
    return False


def _reads(node: ast.AST, name: str) -> Iterator[ast.Name]:
    for n in _own_nodes(node):
        if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load):
            yield n


def _own_nodes(node: ast.AST) -> Iterator[ast.AST]:
    """``node`` and what it contains, without nested functions, lambdas and classes."""
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(c for c in ast.iter_child_nodes(n) if not isinstance(c, _SCOPES))


def _nested_mention(fn: _Function, name: str) -> bool:
    for n in ast.walk(fn):
        if isinstance(n, ast.Global | ast.Nonlocal) and name in n.names:
            return True
        if n is not fn and isinstance(n, _LAZY) and any(
            isinstance(m, ast.Name) and m.id == name for m in ast.walk(n)
        ):
            return True
    return False


def _blocks(fn: _Function) -> dict[int, tuple[list[ast.stmt], int, ast.AST]]:
    """Each statement of ``fn`` (by ``id``, not inside nested scopes): its block, its
    index there, and the statement (or ``fn``) that owns the block."""
    found: dict[int, tuple[list[ast.stmt], int, ast.AST]] = {}
    todo: list[ast.AST] = [fn]
    while todo:
        owner = todo.pop()
        for block in _child_blocks(owner):
            for i, stmt in enumerate(block):
                found[id(stmt)] = (block, i, owner)
                if not isinstance(stmt, _SCOPES):
                    todo.append(stmt)
    return found


def _child_blocks(node: ast.AST) -> Iterator[list[ast.stmt]]:
    for field in ("body", "orelse", "finalbody"):
        block = getattr(node, field, None)
        if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
            yield block
    for handler in getattr(node, "handlers", ()):
        yield handler.body
    for case in getattr(node, "cases", ()):
        yield case.body
