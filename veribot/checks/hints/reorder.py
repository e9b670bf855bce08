"""A statement correspondence for the relational check: statements of ``before`` reordered
to match ``after``, only where the reordering provably changes nothing.

The relational check (``veribot.checks.relational.check``) proves two versions the same code; a
version whose statements were reordered is not the same code, and the check cannot guess
which statement of one version is which of the other. A hint says it: ``statements`` maps
a line of ``before`` (where a statement starts) to the line of ``after`` where the same
statement is. ``reorder`` builds ``before`` with the statements of each block put in the
order of those lines, and the relational check then compares that with ``after``: the
hint only proposes the matching; the texts must still be the same code.

What is checked here is that the reordering is harmless: every pair of statements whose
order changes (the mapped statements and whatever they move past) must commute. Both must
be an assignment of one local name from an *inert* value, which calls no code and so
cannot change or observe any state and makes no external call:

- a constant, a name, a tuple or list display of inert values, or ``set()``, ``list()``,
  ``dict()``, ``tuple()``, ``frozenset()`` with no arguments, where that name is bound
  nowhere in the module (the builtin; the relational check's sandbox confirms that the
  builtins the function reads are not replaced);
- neither assigns a name the other reads or assigns;
- no nested scope (a closure, which may run at any time, or a comprehension) reads
  either name, and neither is declared ``global`` or ``nonlocal``;
- each name is bound only by that statement (not a parameter), and, in a loop, each value
  reads no name: so a store never drops an object (whose ``__del__`` could run code),
  except a constant or a builtin container of a previous iteration;
- at most one of them may raise (reading a name other than a parameter never deleted may
  raise ``NameError``/``UnboundLocalError``); then the other only binds a local the
  function never reads after an exception: the function has no ``try`` or ``with``.

Operators are not inert (``a + b`` may call ``__add__`` of an object of any type), nor is
any other call, subscript or attribute read. The hint is data: nothing here runs code.
"""

from __future__ import annotations

import ast
import copy
from collections.abc import Iterator, Mapping

__all__ = ["NotShown", "reorder"]

_EMPTY_BUILTINS = frozenset({"set", "list", "dict", "tuple", "frozenset"})
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef, ast.GeneratorExp,
           ast.ListComp, ast.SetComp, ast.DictComp)


class NotShown(Exception):
    """The reordering was not shown harmless: the message says why."""


def reorder(
    fn: ast.FunctionDef | ast.AsyncFunctionDef, module: ast.Module, moves: Mapping[int, int]
) -> ast.FunctionDef | ast.AsyncFunctionDef:
    """A copy of ``fn`` whose statements starting at the lines of ``moves`` are put, within
    their block, in the order of the lines they map to. Raises ``NotShown``."""
    copied = copy.deepcopy(fn)
    found: set[int] = set()
    moved = False
    shadowed = _bound_names(module)
    deleted = {n.id for n in ast.walk(fn) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Del)}
    params = {a.arg for a in ast.walk(fn.args) if isinstance(a, ast.arg)} - deleted
    for block in _blocks(copied.body):
        mapped = [i for i, s in enumerate(block) if s.lineno in moves]
        found |= {block[i].lineno for i in mapped}
        if len(mapped) < 2:
            continue
        slots = sorted(mapped)
        order = sorted(mapped, key=lambda i: (moves[block[i].lineno], i))
        new = list(range(len(block)))
        for slot, i in zip(slots, order, strict=True):
            new[slot] = i
        if new == list(range(len(block))):
            continue
        position = {old: pos for pos, old in enumerate(new)}
        looped = _in_loop(copied, block)
        for x in range(len(block)):
            for y in range(x + 1, len(block)):
                if position[x] > position[y]:
                    _commute(block[x], block[y], copied, shadowed, params, looped)
        block[:] = [block[i] for i in new]
        moved = True
    missing = sorted(set(moves) - found)
    if missing:
        raise NotShown(f"no statement of `{fn.name}` starts at line {missing[0]} of before")
    if not moved:
        raise NotShown("it moves no statement")
    return copied


def _blocks(body: list[ast.stmt]) -> Iterator[list[ast.stmt]]:
    """Every statement list of the function, not entering nested scopes."""
    yield body
    for stmt in body:
        if isinstance(stmt, _SCOPES):
            continue
        for name in ("body", "orelse", "finalbody"):
            sub = getattr(stmt, name, None)
            if isinstance(sub, list) and sub and isinstance(sub[0], ast.stmt):
                yield from _blocks(sub)
        for handler in getattr(stmt, "handlers", []):
            yield from _blocks(handler.body)
        for case in getattr(stmt, "cases", []):
            yield from _blocks(case.body)


def _commute(
    s: ast.stmt, t: ast.stmt, fn: ast.FunctionDef | ast.AsyncFunctionDef,
    shadowed: set[str], params: set[str], looped: bool,
) -> None:
    """Raise ``NotShown`` unless ``s; t`` and ``t; s`` do the same."""
    where = f"lines {s.lineno} and {t.lineno} of before"
    target_s, value_s = _assignment(s)
    target_t, value_t = _assignment(t)
    if target_s is None or target_t is None or value_s is None or value_t is None:
        raise NotShown(f"{where}: only assignments of one local name from a value that "
                       "calls no code may be reordered")
    for value in (value_s, value_t):
        problem = _inert(value, shadowed)
        if problem:
            raise NotShown(f"{where}: {problem}")
    if target_s == target_t:
        raise NotShown(f"{where}: both assign `{target_s}`")
    if "__builtins__" in shadowed:
        raise NotShown(f"{where}: the module binds `__builtins__`")
    for target in (target_s, target_t):
        # A store drops the name's old value, whose `__del__` may run code: only a name
        # bound nowhere else, never before this store in the call (outside any loop, or
        # in a loop only to a value that reads no name: a constant, a new empty builtin).
        if _bindings(fn, target) != 1 or target in params:
            raise NotShown(f"{where}: `{target}` is bound elsewhere too, so the store may "
                           "drop an object whose `__del__` runs code")
    if looped and (_names(value_s) or _names(value_t)):
        raise NotShown(f"{where}: in a loop, a store may drop the object of the previous "
                       "iteration, whose `__del__` runs code: only values that read no name")
    declared = {n for node in ast.walk(fn) if isinstance(node, ast.Global | ast.Nonlocal)
                for n in node.names}
    if {target_s, target_t} & declared:
        raise NotShown(f"{where}: one assigns a name declared `global` or `nonlocal`")
    if target_s in _names(value_t) or target_t in _names(value_s):
        raise NotShown(f"{where}: one reads the name the other assigns")
    raising = [v for v in (value_s, value_t) if _names(v) - params]
    if len(raising) == 2:
        raise NotShown(f"{where}: both read a name that may be unbound, so which error comes "
                       "first would change")
    for node in ast.walk(fn):
        if raising and isinstance(node, ast.Try | ast.TryStar | ast.With | ast.AsyncWith):
            raise NotShown(f"{where}: one may raise, and the function catches or handles "
                           f"exceptions (line {node.lineno})")
        if isinstance(node, _SCOPES) and node is not fn and {target_s, target_t} & _names(node):
            raise NotShown(f"{where}: a nested scope (line {node.lineno}) reads what they "
                           "assign")


def _in_loop(fn: ast.AST, block: list[ast.stmt]) -> bool:
    """Whether ``block`` is (within) the body of a loop of ``fn``."""
    for node in ast.walk(fn):
        if isinstance(node, ast.For | ast.AsyncFor | ast.While):
            for part in (node.body, node.orelse):
                if part is block or any(block is b for st in part for b in _blocks([st])):
                    return True
    return False


def _bindings(fn: ast.FunctionDef | ast.AsyncFunctionDef, name: str) -> int:
    """How many places of ``fn`` (nested scopes included) bind ``name``."""
    count = 0
    for node in ast.walk(fn):
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            count += node.id == name
        elif isinstance(node, ast.arg | ast.alias):
            bound = node.arg if isinstance(node, ast.arg) else (node.asname or node.name)
            count += bound.split(".")[0] == name
        elif isinstance(node, ast.ExceptHandler | ast.MatchAs | ast.MatchStar
                        | ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            count += node.name == name and node is not fn
        elif isinstance(node, ast.Global | ast.Nonlocal):
            count += name in node.names
    return count


def _assignment(stmt: ast.stmt) -> tuple[str | None, ast.expr | None]:
    if (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], ast.Name)):
        return stmt.targets[0].id, stmt.value
    return None, None


def _inert(value: ast.expr, shadowed: set[str]) -> str:
    """Why evaluating ``value`` may call code, or "" if it cannot."""
    for node in ast.walk(value):
        if isinstance(node, ast.Constant | ast.Name | ast.Load):
            continue
        if isinstance(node, ast.Tuple | ast.List):
            if any(isinstance(e, ast.Starred) for e in node.elts):
                return "unpacking calls code"
            continue
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                and node.func.id in _EMPTY_BUILTINS and not node.args and not node.keywords):
            if node.func.id in shadowed:
                return f"`{node.func.id}` is bound in the module, so it may not be the builtin"
            continue
        return f"`{ast.unparse(node)}` may call code"
    return ""


def _names(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def _bound_names(module: ast.Module) -> set[str]:
    """Every name bound anywhere in the module (``*``: every builtin counts as bound)."""
    out: set[str] = set()
    for node in ast.walk(module):
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            out.add(node.id)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            out.add(node.name)
        elif isinstance(node, ast.arg):
            out.add(node.arg)
        elif isinstance(node, ast.alias):
            if node.name == "*":
                out |= _EMPTY_BUILTINS
            out.add((node.asname or node.name).split(".")[0])
        elif isinstance(node, ast.Global | ast.Nonlocal):
            out.update(node.names)
        elif isinstance(node, ast.ExceptHandler | ast.MatchAs | ast.MatchStar) and node.name:
            out.add(node.name)
        elif isinstance(node, ast.MatchMapping) and node.rest:
            out.add(node.rest)
    return out
