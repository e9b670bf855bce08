"""Pickling helpers: a function only the pickle and copy protocols call.

toolz's ``_restore_curry(cls, func, ...)`` resolves ``"pkg.mod:name"`` by ``getattr``
with a computed name, returns what it finds and writes the pickled ``__dict__`` into the
object ``cls`` built. A module that has one was refused for every function of it (the
lookup may reach an interpreter-wide hook). What such a helper does with its caller's
data is the caller's doing, as the unpickler's own lookups are, so it no longer refuses,
unless module code can itself drive the protocol (copy, pickle, ``sys.modules``, a
computed import it uses), call the helper, or the helper does more than hand the value
back. Each must-not pair below is a change of line layout only, which a trace function
installed through the helper sees (a different count of 'line' events).
"""

from __future__ import annotations

import ast
import contextlib
import io
import sys

import pytest

from veribot.checks.equivalence import Budget, check_pair
from veribot.checks.lang import pyflow, pylookups
from veribot.checks.verdict import Verdict

BUDGET = Budget(timeout_s=10, search=False)

CURRY = '''\
import operator
from importlib import import_module
from operator import not_


class curry:
    def __init__(self, func, *args):
        self.func = func
        self.args = args

    def __call__(self, *more):
        return self.func(*self.args, *more)

    def __reduce__(self):
        func = self.func
        modname = getattr(func, "__module__", None)
        qualname = getattr(func, "__qualname__", None)
        is_decorated = None
        if modname and qualname:
            obj = import_module(modname)
            for attr in qualname.split("."):
                obj = getattr(obj, attr, None)
                if obj is None:
                    break
            if isinstance(obj, curry) and obj.func is func:
                is_decorated = obj is self
                func = "%s:%s" % (modname, qualname)
        userdict = tuple((k, v) for k, v in self.__dict__.items() if k != "func")
        return _restore_curry, (type(self), func, self.args, userdict, is_decorated)


def _restore_curry(cls, func, args, userdict, is_decorated):
    if isinstance(func, str):
        modname, qualname = func.rsplit(":", 1)
        obj = import_module(modname)
        for attr in qualname.split("."):
            obj = getattr(obj, attr)
        if is_decorated:
            return obj
        func = obj.func
    obj = cls(func, *args)
    obj.__dict__.update(userdict)
    return obj


def compose(f, g):
    return lambda *a: f(g(*a))


'''
F_A = "def complement(func):\n    return compose(operator.not_, func)\n"
F_B = "def complement(func):\n    return compose(not_, func)\n"


def test_a_module_with_a_pickling_helper_is_compared() -> None:
    r = check_pair(CURRY + F_A, CURRY + F_B, "complement", budget=BUDGET)
    assert r.verdict is Verdict.VERIFIED, r.detail
    assert r.method.startswith("relational"), r.method
    tree = ast.parse(CURRY)
    assert len(pylookups.reduce_helpers(tree)) == 1
    assert len(pylookups.caller_dicts(tree)) == 1


# A trace function printing events, installed at import by calling what the helper hands
# back: every frame of `f` is traced, and its 'line' events printed.
TRACER = '''\
import sys
from importlib import import_module


def tracer(frame, event, arg):
    print(event)
    return tracer


def _rebuild(mod, name):
    return getattr(import_module(mod), name)


class Ref:
    def __init__(self, mod, name):
        self.mod = mod
        self.name = name

    def __reduce__(self):
        return _rebuild, (self.mod, self.name)


'''


def _module(imports: str, install: str, *, one_line: bool) -> str:
    body = "    y = x - 1; r = y * 2\n" if one_line else "    y = x - 1\n    r = y * 2\n"
    return imports + TRACER + install + "\n\n\ndef f(x):\n" + body + "    return r\n"


INSTALLS = [
    ("copy", "import copy\n", "copy.copy(Ref('sys', 'set' + 'trace'))(tracer)"),
    ("pickle", "import pickle\n",
     "pickle.loads(pickle.dumps(Ref('sys', 'set' + 'trace')))(tracer)"),
    ("sys-modules-computed", "",
     "getattr(sys.modules['co' + 'py'], 'co' + 'py')(Ref('sys', 'set' + 'trace'))(tracer)"),
    ("computed-import", "",
     "getattr(import_module('co' + 'py'), 'co' + 'py')(Ref('sys', 'set' + 'trace'))(tracer)"),
    ("reduce-called", "",
     "_rebuild(*Ref('sys', 'set' + 'trace').__reduce__()[1])(tracer)"),
    ("helper-called", "", "_rebuild('sys', 'set' + 'trace')(tracer)"),
]


@pytest.mark.parametrize(("imports", "install"), [(i, c) for _, i, c in INSTALLS],
                         ids=[n for n, _, _ in INSTALLS])
def test_module_code_that_drives_the_helper_is_refused(imports: str, install: str) -> None:
    before = _module(imports, install, one_line=True)
    after = _module(imports, install, one_line=False)
    r = check_pair(before, after, "f", budget=BUDGET)
    assert r.verdict is not Verdict.VERIFIED, r.detail


def test_the_layouts_differ_under_the_tracer() -> None:
    """The must-not pairs above differ: run here, the two layouts print a different
    number of trace events (so a 'verified' would be wrong)."""
    printed = []
    for one_line in (True, False):
        code = _module(INSTALLS[0][1], INSTALLS[0][2], one_line=one_line)
        space: dict[str, object] = {}
        out = io.StringIO()
        old = sys.gettrace()
        try:
            exec(compile(code, "<pair>", "exec"), space)
            f = space["f"]
            assert callable(f)
            with contextlib.redirect_stdout(out):
                f(3)
        finally:
            sys.settrace(old)
        printed.append(out.getvalue().count("line"))
    assert printed[0] != printed[1], printed


HELPERS_NOT = [
    # The helper itself does more than hand the value back: it calls it.
    ("calls-the-value", "lookup", "def _h(mod, name, arg):\n    return getattr(import_module(mod), "
     "name)(arg)\n"),
    # It writes into a module it imported, not an object of the caller's choosing.
    ("writes-a-module", "write", "def _h(mod, d):\n    obj = import_module(mod)\n"
     "    obj.__dict__.update(d)\n    return obj\n"),
    # A rebinding inside `try` may not end the value's life: an exception skips it.
    ("try-rebinding", "lookup",
     "def _h(mod, name, g):\n    obj = getattr(import_module(mod), name)\n"
     "    try:\n        obj = g()\n    except Exception:\n        obj(tracer)\n"
     "    return obj\n"),
    # A loop with `continue` may skip the rebinding.
    ("loop-continue", "lookup", "def _h(mod, names):\n    obj = None\n    for name in names:\n"
     "        obj = getattr(import_module(mod), name)\n        if name:\n"
     "            continue\n        obj = None\n    obj(tracer)\n"),
]


@pytest.mark.parametrize(("kind", "helper"), [(k, h) for _, k, h in HELPERS_NOT],
                         ids=[n for n, _, _ in HELPERS_NOT])
def test_a_helper_that_uses_the_value_is_refused(kind: str, helper: str) -> None:
    module = ("from importlib import import_module\n\n\ndef tracer(*a):\n    return None\n\n\n"
              + helper + "\n\nclass C:\n    def __reduce__(self):\n"
              "        return _h, ()\n")
    tree = ast.parse(module)
    bound = {"tracer", "_h", "C", "import_module"}
    assert pylookups.reduce_helpers(tree), "the helper qualifies as one"
    if kind == "lookup":
        assert pylookups.computed(tree, bound, bound) is not None
    else:
        assert not pylookups.caller_dicts(tree)  # so the write refuses (pyinterfere)


def test_reads_a_binding_reaches() -> None:
    fn = ast.parse(
        "def g(a, b):\n"
        "    a.x()\n"          # the parameter's value
        "    if b:\n"
        "        a = b()\n"    # a binding in a branch
        "        a.y()\n"
        "    a.z()\n"          # reached by both
        "    a = 1\n"
        "    return a\n"
    ).body[0]
    assert isinstance(fn, ast.FunctionDef)
    entry = pyflow.reached(fn, None, "a")
    assert entry is not None
    # (line 5 too: a rebinding inside a branch does not end the walk outside it, so reads
    # after it in the branch count; more reads is the safe side)
    assert sorted(_line(r) for r in entry) == [2, 5, 6]
    branch = fn.body[1]
    assert isinstance(branch, ast.If)
    inner = pyflow.reached(fn, branch.body[0], "a")
    assert inner is not None
    assert sorted(_line(r) for r in inner) == [5, 6]
    # Inside a loop: the next iteration's reads too, and none past a rebinding...
    loop = ast.parse("def g(xs):\n    for x in xs:\n        a = x\n        a.p()\n"
                     "    a.q()\n    a = 2\n    a.r()\n").body[0]
    assert isinstance(loop, ast.FunctionDef) and isinstance(loop.body[0], ast.For)
    found = pyflow.reached(loop, loop.body[0].body[0], "a")
    assert found is not None and sorted({_line(r) for r in found}) == [4, 5]
    # ... unless a closure reads it, or the binding is inside `with`: unknown.
    closure = ast.parse("def g(b):\n    a = b\n    return lambda: a\n").body[0]
    assert isinstance(closure, ast.FunctionDef)
    assert pyflow.reached(closure, closure.body[0], "a") is None
    lazy = ast.parse("def g(b, n):\n    it = (a() for _ in n)\n    a = b\n    return it\n"
                     ).body[0]
    assert isinstance(lazy, ast.FunctionDef)
    assert pyflow.reached(lazy, lazy.body[1], "a") is None  # the generator reads it later
    inside = ast.parse("def g(b):\n    with b:\n        a = b\n    return a\n").body[0]
    assert isinstance(inside, ast.FunctionDef) and isinstance(inside.body[0], ast.With)
    assert pyflow.reached(inside, inside.body[0].body[0], "a") is None


def _line(n: ast.AST) -> int:
    return getattr(n, "lineno", 0)
