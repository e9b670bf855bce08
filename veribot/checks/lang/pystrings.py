"""Strings the code looks for, to seed the random search's string inputs.

Random text rarely contains what a function searches for (an ANSI escape sequence, a
separator, a keyword). This module gathers, without running anything, the string
literals of a function's body and of the module-level constants it reads, and for each
that is a regular expression (passed to ``re.compile``, ``re.sub`` and the like) a few
short strings it matches, so the search can try them and their concatenations with
random text. Only an input generator's dictionary: nothing here decides a verdict.
"""

from __future__ import annotations

import ast
import importlib
import logging
from collections.abc import Iterable, Iterator
from typing import Any

from veribot.checks.lang import pysource

__all__ = ["MAX_SEEDS", "regex_samples", "seeds"]

log = logging.getLogger(__name__)

MAX_SEEDS = 32
_MAX_LEN = 40
_RE_FUNCTIONS = frozenset({"compile", "match", "fullmatch", "search", "sub", "subn", "split",
                           "findall", "finditer"})
_Function = ast.FunctionDef | ast.AsyncFunctionDef


def seeds(sources: Iterable[str], entry: str, limit: int = MAX_SEEDS) -> list[str]:
    """String seeds for ``entry`` from each source (both versions), most specific first:
    samples of the regular expressions it uses, then its string literals."""
    found: dict[str, None] = {}
    for source in sources:
        try:
            tree = pysource.parse(source)
        except (SyntaxError, ValueError, RecursionError):
            continue
        fn = _find(tree, entry)
        if fn is None:
            continue
        for text in _strings(tree, fn):
            if 0 < len(text) <= _MAX_LEN:
                found.setdefault(text)
    return list(found)[:limit]


def _find(tree: ast.Module, entry: str) -> _Function | None:
    scope: list[ast.stmt] = tree.body
    *classes, name = entry.split(".")
    for part in classes:
        cls = next((n for n in scope if isinstance(n, ast.ClassDef) and n.name == part), None)
        if cls is None:
            return None
        scope = cls.body
    found = [n for n in scope if isinstance(n, _Function) and n.name == name]
    return found[-1] if found else None


def _strings(tree: ast.Module, fn: _Function) -> Iterator[str]:
    constants: dict[str, ast.expr] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(
            node.targets[0], ast.Name
        ):
            constants[node.targets[0].id] = node.value
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value:
            constants[node.target.id] = node.value
    functions = {n.name: n for n in tree.body if isinstance(n, _Function)}
    read = _names_read(fn)
    # The module's functions it calls are followed one level (``term_len`` calls
    # ``strip_ansi``, which reads the regular expression).
    callees = [functions[n] for n in sorted(read) if n in functions and functions[n] is not fn]
    for callee in callees:
        read |= _names_read(callee)
    parts: list[ast.AST] = [fn, *callees, *(constants[n] for n in sorted(read) if n in constants)]
    literals: list[str] = []
    for part in parts:
        for sub in ast.walk(part):
            pattern = _regex_argument(sub)
            if pattern is not None:
                yield from regex_samples(pattern)
            if isinstance(sub, ast.Constant) and isinstance(sub.value, str):
                literals.append(sub.value)
    yield from literals


def _names_read(fn: _Function) -> set[str]:
    return {n.id for n in ast.walk(fn) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def _regex_argument(node: ast.AST) -> str | None:
    """The pattern of ``re.compile("...")`` (and ``re.sub`` and the like), if literal."""
    if not isinstance(node, ast.Call) or not node.args:
        return None
    func = node.func
    if not (isinstance(func, ast.Attribute) and func.attr in _RE_FUNCTIONS
            and isinstance(func.value, ast.Name) and func.value.id == "re"):
        return None
    first = node.args[0]
    if isinstance(first, ast.Constant) and isinstance(first.value, str):
        return first.value
    return None


def regex_samples(pattern: str) -> list[str]:
    """A few short strings ``pattern`` matches: the fewest repetitions with the first
    character of each class, one repetition, and the last character of each class."""
    try:
        parser: Any = importlib.import_module("re._parser")
        parsed = parser.parse(pattern)
    except Exception:  # a pattern Python rejects, or a Python without re._parser
        return []
    out: list[str] = []
    for repeat, last in ((0, False), (1, False), (1, True)):
        try:
            text = _sample(parsed, repeat, last, 0)
        except (ValueError, TypeError, IndexError, RecursionError):
            continue
        if text and text not in out and len(text) <= _MAX_LEN:
            out.append(text)
    return out


_CATEGORY_CHARS = {"CATEGORY_DIGIT": "0", "CATEGORY_WORD": "a", "CATEGORY_SPACE": " ",
                   "CATEGORY_NOT_DIGIT": "a", "CATEGORY_NOT_WORD": " ",
                   "CATEGORY_NOT_SPACE": "a"}


def _sample(items: Any, repeat: int, last: bool, depth: int) -> str:
    if depth > 30:
        raise ValueError("too deep")
    out = []
    for op, av in items:
        name = str(op)
        if name == "LITERAL":
            out.append(chr(av))
        elif name == "ANY":
            out.append("a")
        elif name == "IN":
            out.append(_class_char(av, last))
        elif name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
            low, _high, sub = av
            out.append(_sample(sub, repeat, last, depth + 1) * max(low, repeat))
        elif name == "SUBPATTERN":
            out.append(_sample(av[-1], repeat, last, depth + 1))
        elif name == "BRANCH":
            branches = av[1]
            out.append(_sample(branches[-1 if last else 0], repeat, last, depth + 1))
        elif name in ("AT", "ASSERT", "ASSERT_NOT"):
            continue
        else:
            raise ValueError(f"no sample for {name}")
    return "".join(out)


def _class_char(options: Any, last: bool) -> str:
    chars = []
    for op, av in options:
        name = str(op)
        if name == "NEGATE":
            raise ValueError("a negated class")
        if name == "LITERAL":
            chars.append(chr(av))
        elif name == "RANGE":
            chars.append(chr(av[1] if last else av[0]))
        elif name == "CATEGORY":
            chars.append(_CATEGORY_CHARS.get(str(av), "a"))
    if not chars:
        raise ValueError("an empty class")
    return chars[-1] if last else chars[0]
