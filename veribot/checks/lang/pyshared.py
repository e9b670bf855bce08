"""Helpers identical in both versions, modelled once as uninterpreted functions.

A call to a function of the same module that is the same in both versions, is not
recursive, and cannot observe or change anything but its arguments, behaves the same on
the same arguments in both versions, whatever its body does. So instead of inlining it,
both versions call one shared uninterpreted function: its value, whether it ends
normally, and, if not, which way it ends (an exception type, or never returning). The
solver may pick any behaviour for it, so a proof holds for every possible helper body,
and a difference it finds is only a candidate that the sandbox then checks for real.

"The same arguments" are equal values, so a helper with a float parameter (or a tuple of
floats) is never shared: it may tell two equal floats apart by identity (two NaN objects,
through ``(x,) == (y,)`` or ``x in (y,)``). Integers, strings and booleans are safe: the
model has no ``is`` between them, and for them identity implies equality.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import z3

from veribot.checks.lang import pysource
from veribot.checks.lang.pyexec import Executor, Limits
from veribot.checks.lang.pymodule import Module
from veribot.checks.lang.pytypes import (
    BoolT,
    FloatT,
    IntT,
    PyType,
    StrT,
    TupleT,
    from_annotation,
)
from veribot.checks.lang.pyvalues import (
    Fresh,
    OutOfTime,
    SBool,
    SFloat,
    SInt,
    SSeq,
    SStr,
    Unsupported,
    V,
    sort_of,
    wrap,
)

# Builtins whose result depends on their arguments only.
_PURE_BUILTINS = {
    "len", "abs", "min", "max", "sum", "range", "enumerate", "list", "tuple", "bool",
    "int", "float", "str", "sorted", "reversed", "zip", "any", "all", "isinstance",
    "round", "divmod", "pow", "ord", "chr", "dict", "set", "frozenset", "map", "filter",
    "ValueError", "TypeError", "IndexError", "KeyError", "ZeroDivisionError",
    "ArithmeticError", "RuntimeError", "AssertionError", "Exception", "True", "False",
    "None",
}  # fmt: skip


@dataclass(frozen=True)
class Helper:
    """One shared helper: uninterpreted value, ``ends normally``, and ``how it ended``."""

    name: str
    value: z3.FuncDeclRef
    returns: z3.FuncDeclRef
    outcome: z3.FuncDeclRef
    result: PyType
    params: tuple[PyType, ...]


def shared_helpers(
    tree_a: ast.Module, tree_b: ast.Module, module_a: Module, module_b: Module
) -> dict[str, Helper]:
    """The helpers that may be modelled as shared uninterpreted functions."""
    same = {
        name
        for name, fn in module_a.functions.items()
        if name in module_b.functions
        and pysource.code_key(fn) == pysource.code_key(module_b.functions[name])
        and _closed(fn, module_a, module_b)
    }
    if module_a.star_import or module_b.star_import:
        return {}
    # Keep only helpers whose callees are themselves shared, with no cycle through them.
    calls = {name: _callees(module_a.functions[name], module_a) for name in same}
    changed = True
    while changed:
        changed = False
        for name in list(same):
            if not calls[name] <= same or _reaches(name, name, calls):
                same.discard(name)
                changed = True
    helpers: dict[str, Helper] = {}
    for name in sorted(same):
        helper = _declare(module_a.functions[name])
        if helper is not None and _keeps_its_annotation(helper, module_a):
            helpers[name] = helper
    return helpers


def _keeps_its_annotation(helper: Helper, module: Module) -> bool:
    """Whether the helper provably returns its annotated type (annotations are not checked
    by Python: a helper that says ``-> int`` and returns NaN would make the model lie)."""
    fn = module.functions[helper.name]
    fresh = Fresh(f"ret_{helper.name}_")
    params = [fresh.value(t, a.arg) for t, a in zip(helper.params, fn.args.args, strict=True)]
    limits = Limits(loop_bound=4, inline_depth=2, max_inlines=8)
    try:
        run = Executor(module, fresh, limits).run(fn, params)
    except (Unsupported, OutOfTime, RecursionError):
        return False
    if run.exhausted:
        return False
    return all(e.value is None or e.value.ty == helper.result for e in run.exits)


def _declare(fn: ast.FunctionDef) -> Helper | None:
    result = from_annotation(fn.returns)
    params = tuple(from_annotation(a.annotation) for a in fn.args.args)
    if not _scalar(result) or not all(_scalar(p) for p in params):
        return None
    if any(_holds_float(p) for p in params):
        # A float argument is an object the helper can tell from an equal one (a NaN is
        # found by `is` in `(x,) == (y,)` or `x in (y,)`): the helper is then not a
        # function of the argument values. Its body is executed instead.
        return None
    if fn.args.vararg or fn.args.kwarg or fn.args.kwonlyargs or fn.args.posonlyargs:
        return None
    if fn.args.defaults:
        return None
    sorts = [sort_of(p) for p in params]
    base = f"helper!{fn.name}"
    return Helper(
        fn.name,
        z3.Function(f"{base}!value", *sorts, sort_of(result)),
        z3.Function(f"{base}!returns", *sorts, z3.BoolSort()),
        z3.Function(f"{base}!outcome", *sorts, z3.IntSort()),
        result,
        params,
    )


def call(helper: Helper, args: Sequence[V]) -> tuple[V, z3.BoolRef, z3.ArithRef] | None:
    """Apply a helper to argument values: (value, ends normally, how it ended otherwise).

    None when the arguments do not match the helper's declared parameter types (then the
    caller inlines the body instead).
    """
    if len(args) != len(helper.params):
        return None
    terms = []
    for value, t in zip(args, helper.params, strict=True):
        if value.ty != t or not isinstance(value, SInt | SBool | SFloat | SStr | SSeq):
            return None
        terms.append(value.e)
    value_term = helper.value(*terms)
    return wrap(helper.result, value_term), helper.returns(*terms), helper.outcome(*terms)


def _scalar(t: PyType) -> bool:
    if isinstance(t, IntT | BoolT | FloatT | StrT):
        return True
    return isinstance(t, TupleT) and t.homogeneous is not None and _scalar(t.homogeneous)


def _holds_float(t: PyType) -> bool:
    if isinstance(t, FloatT):
        return True
    return isinstance(t, TupleT) and t.homogeneous is not None and _holds_float(t.homogeneous)


def _closed(fn: ast.FunctionDef, module_a: Module, module_b: Module) -> bool:
    """Whether ``fn`` depends on nothing but its arguments, equal constants, and calls."""
    if fn.decorator_list:
        return False
    local = {a.arg for a in fn.args.args}
    for node in ast.walk(fn):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            local.add(node.id)
    for node in ast.walk(fn):
        if isinstance(
            node,
            ast.Global | ast.Nonlocal | ast.Attribute | ast.Lambda | ast.Yield | ast.YieldFrom
            | ast.Await | ast.Import | ast.ImportFrom | ast.Delete,
        ):
            return False
        if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Store | ast.Del):
            return False
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            name = node.id
            if name in local:
                continue
            if name in module_a.functions:
                continue
            if name in module_a.constants:
                if module_b.constants.get(name, _MISSING) != module_a.constants[name]:
                    return False
                continue
            if name in _PURE_BUILTINS and name not in module_a.rebound | module_b.rebound:
                continue
            return False
    return True


_MISSING = object()


def _callees(fn: ast.FunctionDef, module: Module) -> set[str]:
    names = set()
    for n in ast.walk(fn):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name):
            names.add(n.func.id)
    return names & module.functions.keys()


def _reaches(start: str, target: str, calls: Mapping[str, set[str]]) -> bool:
    seen: set[str] = set()
    stack = list(calls.get(start, ()))
    while stack:
        name = stack.pop()
        if name == target:
            return True
        if name not in seen:
            seen.add(name)
            stack.extend(calls.get(name, ()))
    return False

