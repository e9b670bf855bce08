"""Reading Python source without recursing: parsing, and a structural key for comparing code.

``ast.parse`` raises ``RecursionError`` or ``MemoryError`` on very deep code (a long
``elif`` chain, a long sum) and ``ast.dump`` recurses as deep as the tree and fails on an
integer literal of more than 4,300 digits; neither may end a review.

CPython 3.11 keeps one recursion counter for building syntax trees per interpreter, not
per thread: two threads parsing at once (a child's report read by each of two workers)
can fail with ``SystemError: AST constructor recursion depth mismatch``. Parsing in
worker threads goes through ``literal``, under one lock.
"""

from __future__ import annotations

import ast
import threading
from typing import Any

_PARSING = threading.Lock()


def literal(text: str) -> Any:
    """``ast.literal_eval`` of ``text``, one thread at a time (see above)."""
    with _PARSING:
        return ast.literal_eval(text)


def parse(source: str) -> ast.Module:
    """``ast.parse``, with every way it can fail on bad or huge input as a ``SyntaxError``."""
    try:
        return ast.parse(source)
    except SyntaxError:
        raise
    except (RecursionError, MemoryError) as err:
        raise SyntaxError("the code is nested too deeply for Python's parser") from err
    except ValueError as err:  # e.g. a null byte in the source
        raise SyntaxError(str(err)) from err


def code_key(node: ast.AST) -> str:
    """A text that two trees share exactly when they are the same code (``ast.dump``
    without positions), built with an explicit stack."""
    out: list[str] = []
    # Items are AST nodes, lists of them, plain values, or text already rendered (_Text).
    stack: list[object] = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, _Text):
            out.append(item.text)
        elif isinstance(item, ast.AST):
            parts: list[object] = [_Text(type(item).__name__ + "(")]
            for name in item._fields:
                parts += [_Text(name + "="), getattr(item, name, None), _Text(",")]
            parts.append(_Text(")"))
            stack.extend(reversed(parts))
        elif isinstance(item, list):
            stack.extend(reversed([_Text("["), *item, _Text("]")]))
        else:
            out.append(_value_text(item))
    return "".join(out)


class _Text:
    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text


def _value_text(value: object) -> str:
    if isinstance(value, int) and not isinstance(value, bool):
        return f"int:{value:#x}"  # repr is capped at 4,300 digits; hex is not
    return f"{type(value).__name__}:{value!r}"


def definition(tree: ast.Module, entry: str) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    """The definition ``entry`` (``func`` or ``Class.method``) names: the last one, as
    Python binds it, or None."""
    scope: list[ast.stmt] = tree.body
    *classes, name = entry.split(".")
    for part in classes:
        cls = next((n for n in reversed(scope)
                    if isinstance(n, ast.ClassDef) and n.name == part), None)
        if cls is None:
            return None
        scope = cls.body
    return next((n for n in reversed(scope)
                 if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef) and n.name == name),
                None)
