"""Load a module for real (in the sandbox) and check what a proof assumed about it.

A proof models the functions as written and the module-level names as the static reader
sees them (``lang.pymodule``). Module-level code can make that wrong in ways no static
reading catches for sure: a call at import that replaces a function's ``__code__`` or
``__defaults__``, ``globals()`` or ``setattr`` writes, class hooks
(``__init_subclass__``, ``__class_getitem__``), a bad annotation or base class that makes
the import fail. So before a "verified" is reported, each version's module is imported
in a sandboxed child, which reports back, for every function the model may run, that
the module attribute (for a method, the class's own attribute) is still the function
defined at that line (same code, same
globals and builtins) with the defaults as written; the value of every constant the
model used; and that no builtin the model relies on is shadowed or replaced.

Code in the child could forge this report (it shares the interpreter); the script takes
every tool it needs before the module runs and uses only C-level operations afterwards,
so forging it takes code written against this script.
"""

from __future__ import annotations

import ast
import posixpath
import secrets
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from veribot.checks.lang import pysource
from veribot.checks.lang.pymodule import BUILTIN_EXCEPTIONS, MODELLED_BUILTINS, Module
from veribot.checks.lang.pysignature import (
    KEYWORD_ONLY,
    POSITIONAL_ONLY,
    POSITIONAL_OR_KEYWORD,
    Signature,
)
from veribot.checks.project.package import Package, PairContext
from veribot.checks.sandbox import Limits, package_files, run_script

__all__ = ["Loaded", "check_both", "check_loaded", "expectations"]

_SUBJECT = "subject.py"
_PACKAGE = "__veribot_package__"
_EXPECT = "expect.txt"

# How a value is written for comparison, the same text in the parent and in the child.
# Integers are written in hex: decimal text of more than 4300 digits raises ValueError.
_SHOWN = """
def _shown(v, depth=0):
    if _type(v) is int:
        return _hex(v)
    if _type(v) in _plain:
        return _repr(v)
    if _type(v) is _tuple and depth < 20:
        items = [_shown(item, depth + 1) for item in v]
        for i in items:
            if i.startswith("<"):
                return "<a tuple of other objects>"
        return "(" + "".join(i + ", " for i in items) + ")"
    if _type(v) is _dict and depth < 20:
        pairs = []
        for k in v:
            if _type(k) is not str or _shown(v[k], depth + 1).startswith("<"):
                return "<a dict of other objects>"
            pairs.append(_repr(k) + ": " + _shown(v[k], depth + 1))
        return "{" + ", ".join(pairs) + "}"
    return "<an object of another type>"
"""
_SHOWN_NAMES: dict[str, object] = {
    "_type": type, "_repr": repr, "_tuple": tuple, "_dict": dict, "_hex": hex,
    "_plain": (type(None), bool, int, float, str, bytes, complex),
}
exec(_SHOWN, _SHOWN_NAMES)  # our own fixed text, not the code under review
_shown: Callable[[object], str] = _SHOWN_NAMES["_shown"]  # type: ignore[assignment]

# Runs in the sandbox child. Everything it uses after the import is taken before it.
_SCRIPT = """
import builtins, importlib, importlib.util, os, sys, types
_pristine = dict(vars(builtins))
_type, _repr, _vars, _write, _tuple, _dict = type, repr, vars, os.write, tuple, dict
_isinstance = isinstance
_hex = hex
_function, _plain = types.FunctionType, (type(None), bool, int, float, str, bytes, complex)
_missing = object()
with open(%(expect)r, encoding="utf-8") as handle:
    _expect = __import__("ast").literal_eval(handle.read())
with open(%(subject)r, encoding="utf-8") as handle:
    _compiled = compile(handle.read(), os.path.abspath(%(subject)r), "exec", dont_inherit=True)
def _nested(code):
    for c in code.co_consts:
        if _type(c) is _type(code):
            yield c
            if c.co_name[:1] != "<":
                yield from _nested(c)  # a class body's methods

_codes = {(c.co_name, c.co_firstlineno): c for c in _nested(_compiled)}

%(shown)s

def _load():
    if %(package)r is not None:
        root, name = %(package)r
        sys.path.insert(0, os.path.abspath(root))
        try:
            return _vars(importlib.import_module(name)), None
        except BaseException as exc:
            return None, "importing it raises " + _type(exc).__name__
    spec = importlib.util.spec_from_file_location("subject", os.path.abspath(%(subject)r))
    module = importlib.util.module_from_spec(spec)
    sys.modules["subject"] = module
    globals_ = module.__dict__
    try:
        spec.loader.exec_module(module)
    except BaseException as exc:
        return None, "importing it raises " + _type(exc).__name__
    return globals_, None

_globals, _failed = _load()
_problems = []
if _globals is not None:
    for name, line, defaults, kwdefaults in _expect["functions"]:
        owner, _, short = name.rpartition(".")
        if owner:
            # A method: the class's own attribute at that name, not what lookup finds.
            cls = _globals.get(owner, _missing)
            obj = _vars(cls).get(short, _missing) if _isinstance(cls, _type) else _missing
        else:
            short = name
            obj = _globals.get(name, _missing)
        if _type(obj) is not _function:
            _problems.append(f"`{name}` is no longer the function defined at line {line}")
        elif obj.__code__ != _codes.get((short, line)):
            _problems.append(f"`{name}` runs other code than its definition at line {line}")
        elif obj.__globals__ is not _globals or obj.__builtins__ is not _vars(builtins):
            _problems.append(f"`{name}` runs with other globals or builtins than the module's")
        elif defaults is not None and _shown(obj.__defaults__) != defaults:
            _problems.append(f"the defaults of `{name}` are {_shown(obj.__defaults__)}, "
                             f"not {defaults} as written")
        elif kwdefaults is not None and _shown(obj.__kwdefaults__) != kwdefaults:
            _problems.append(f"the keyword-only defaults of `{name}` are "
                             f"{_shown(obj.__kwdefaults__)}, not {kwdefaults} as written")
    for name, text in _expect["constants"]:
        shown = _shown(_globals.get(name, _missing))
        if shown != text:
            _problems.append(f"`{name}` is {shown} once the module is loaded, not {text}")
    for name in _expect["builtins"]:
        if name in _globals:
            _problems.append(f"the module binds `{name}`, which the model took as the builtin")
        elif _vars(builtins).get(name, _missing) is not _pristine.get(name, _missing):
            _problems.append(f"the builtin `{name}` was replaced")
_write(1, ("\\n%(marker)s" + _repr([_failed, _problems]) + "\\n").encode())
"""


@dataclass(frozen=True)
class Loaded:
    """What loading one version showed: whether it imported, and what did not match."""

    imported: bool
    problems: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return self.imported and not self.problems


def expectations(tree: ast.Module) -> dict[str, object]:
    """What the static reader assumes of the loaded module, for the child to check."""
    module = Module.of(tree)
    functions: list[tuple[str, int, str | None, str | None]] = []
    methods = {
        f"{cls.name}.{fn.name}": fn
        for cls in tree.body if isinstance(cls, ast.ClassDef) and _modelled_class(cls)
        for fn in cls.body
        if isinstance(fn, ast.FunctionDef) and not fn.decorator_list
        and sum(isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef) and n.name == fn.name
                for n in cls.body) == 1
    }
    for name, fn in {**module.functions, **methods}.items():
        if fn.decorator_list:
            continue  # the model never runs a decorated function (it is unsupported there)
        line = fn.lineno
        sig = Signature.of(fn, module)
        positional = [
            p.default for p in sig.params
            if p.kind in (POSITIONAL_ONLY, POSITIONAL_OR_KEYWORD) and p.default is not None
        ]
        keyword = [
            (p.name, p.default)
            for p in sig.params if p.kind == KEYWORD_ONLY and p.default is not None
        ]
        defaults: str | None = None
        if all(d.known for d in positional):
            defaults = _shown(tuple(d.value for d in positional)) if positional else "None"
        kwdefaults: str | None = None
        if all(d.known for _, d in keyword):
            kwdefaults = _shown({n: d.value for n, d in keyword}) if keyword else "None"
        functions.append((name, line, defaults, kwdefaults))
    constants = [
        (name, _shown(value))
        for name, value in module.constants.items()
        if _plain(value)
    ]
    builtins = sorted((MODELLED_BUILTINS | BUILTIN_EXCEPTIONS) - module.rebound)
    return {"functions": functions, "constants": constants, "builtins": builtins}


def _modelled_class(cls: ast.ClassDef) -> bool:
    """A class whose methods the model may run (see ``lang.pyobject``): no metaclass and
    no decorator but ``dataclass``."""
    def name(d: ast.expr) -> str:
        target = d.func if isinstance(d, ast.Call) else d
        return target.id if isinstance(target, ast.Name) else (
            target.attr if isinstance(target, ast.Attribute) else "")

    return not cls.keywords and all(name(d) == "dataclass" for d in cls.decorator_list)


def _plain(value: object) -> bool:
    if type(value) in (type(None), bool, int, float, str, bytes, complex):
        return True
    return type(value) is tuple and all(_plain(v) for v in value)


def check_loaded(
    source: str, tree: ast.Module, limits: Limits, package: Package | None = None
) -> Loaded:
    """Import ``source`` in the sandbox and compare it with the static reading of ``tree``.

    With ``package``, it is imported as part of its package (read-only files of its
    revision), as the calls on it are.
    """
    marker = f"veribot-loaded-{secrets.token_hex(8)}: "
    files: dict[str, str | bytes] = {_SUBJECT: source, _EXPECT: repr(expectations(tree))}
    subject, where = _SUBJECT, None
    if package is not None:
        tree_files, subject = package_files(_PACKAGE, package, source)
        files = {**tree_files, _EXPECT: files[_EXPECT]}
        where = (posixpath.join(_PACKAGE, package.root), package.module)
    script = _SCRIPT % {"expect": _EXPECT, "subject": subject, "marker": marker,
                        "shown": _SHOWN, "package": where}
    run = run_script(script, files, limits=limits,
                     readonly=(_PACKAGE,) if package is not None else ())
    if run.timed_out:
        return Loaded(False, ("importing it did not finish in the sandbox's time",))
    reports = [line for line in run.stdout.splitlines() if line.startswith(marker)]
    if run.returncode != 0 or len(reports) != 1:
        return Loaded(False, (f"importing it ended with status {run.returncode}",))
    try:
        failed, problems = pysource.literal(reports[0][len(marker):])
    except (ValueError, SyntaxError, TypeError):
        return Loaded(False, ("the sandbox's report was unreadable",))
    if failed is not None:
        return Loaded(False, (str(failed),))
    return Loaded(True, tuple(str(p) for p in problems))


def check_both(
    before: tuple[str, ast.Module], after: tuple[str, ast.Module], limits: Limits,
    context: PairContext | None = None,
) -> tuple[Loaded, Loaded]:
    """``check_loaded`` on both versions, concurrently (each in its own child)."""
    pa, pb = (context.before, context.after) if context is not None else (None, None)
    with ThreadPoolExecutor(max_workers=2, thread_name_prefix="veribot-load") as pool:
        a = pool.submit(check_loaded, *before, limits, pa)
        b = pool.submit(check_loaded, *after, limits, pb)
        return a.result(), b.result()
