"""Adversarial pairs: reflection that reaches an interpreter hook or a code runner.

A module whose code can install a trace or profile function, or run code given as text,
changes what every function computes, whatever names they read. A lookup by a computed
name reaches such a thing from any object (``print.__self__`` is the builtins module),
so it blocks a proof unless the name can only be one of a few harmless strings, relays
the name Python asked a ``__getattr__`` for, or the value is only tested. The attacks
here each reach one without writing its name; the harmless shapes are real code
(``click``'s stream wrappers and deprecation shims).
"""

from __future__ import annotations

import ast

import pytest

from veribot.checks.equivalence import Budget, check_pair
from veribot.checks.lang import pyinterfere
from veribot.checks.lang.pymodule import Module
from veribot.checks.verdict import Verdict

BUDGET = Budget(timeout_s=6)
# For the pairs that must only not be verified: random testing, which runs only once no
# proof was found and can turn no verdict into "verified", is left out (it took all but a
# few milliseconds of each of those checks' seconds).
NO_SEARCH = Budget(timeout_s=6, search=False)

DOUBLE = "def f(x: int) -> int:\n    return x * 2\n"
TWICE = "def f(x: int) -> int:\n    return x + x\n"


def _found(code: str) -> pyinterfere.Interference | None:
    tree = ast.parse(code + DOUBLE)
    return pyinterfere.interference(tree, Module.of(tree), "f")


# Module code that reaches a hook or a code runner without naming it (each alone).
REACHING: list[tuple[str, str]] = [
    ("getattr-of-print-self-no-imports",
     "def g(h: object) -> None:\n    b = getattr(print, '__self__')\n"
     "    getattr(b, '__imp' + 'ort__')('s' + 'ys').setprofile(h)\n"),
    ("getattr-by-a-parameter", "import sys\ndef g(n: str, h: object) -> None:\n"
     "    getattr(sys, n)(h)\n"),
    ("vars-by-a-computed-key", "import sys\ndef g(h: object) -> None:\n"
     "    vars(sys)['set' + 'profile'](h)\n"),
    ("dict-by-a-parameter", "import sys\ndef g(k: str, h: object) -> None:\n"
     "    sys.__dict__.get(k)(h)\n"),
    ("namespace-values", "import sys\ndef g(h: object) -> None:\n"
     "    for v in vars(sys).values():\n        v(h)\n"),
    ("namespace-items", "import sys\ndef g(h: object) -> None:\n"
     "    for k, v in sys.__dict__.items():\n        v(h)\n"),
    ("namespace-copied", "import sys\ndef g(k: str) -> object:\n    return dict(vars(sys))[k]\n"),
    ("namespace-unpacked", "import sys\ndef g(k: str) -> object:\n    return {**vars(sys)}[k]\n"),
    ("own-globals-builtins-by-key",
     "def g() -> None:\n    globals()['__buil' + 'tins__']['ev' + 'al']('1')\n"),
    ("own-globals-builtins-literal", "def g() -> None:\n    globals()['__builtins__']['x']\n"),
    ("eval-by-a-literal-key", "def g(b: dict) -> None:\n    b['eval']('1')\n"),
    ("builtins-exec-attribute", "import builtins\ndef g() -> None:\n    builtins.exec('1')\n"),
    ("exec-on-print-self", "def g() -> None:\n    print.__self__.exec('1')\n"),
    ("function-globals-by-key", "def g(k: str) -> object:\n    return g.__globals__[k]\n"),
    ("breakpoint", "def g() -> None:\n    breakpoint()\n"),
    ("a-hook-in-a-dotted-string", "from operator import attrgetter\nimport sys\n"
     "def g(m: object, h: object) -> None:\n    attrgetter('sys.settrace')(m)(h)\n"),
    ("attrgetter-second-name-computed", "from operator import attrgetter\nimport sys\n"
     "def g(n: str) -> object:\n    return attrgetter('path', n)(sys)\n"),
    ("attrgetter-renamed", "from operator import attrgetter as pick\nimport sys\n"
     "def g(n: str) -> object:\n    return pick(n)(sys)\n"),
    ("attrgetter-passed-on", "import operator\nimport sys\n"
     "def g(n: str) -> object:\n    return list(map(operator.attrgetter, [n]))[0](sys)\n"),
    ("methodcaller-computed", "from operator import methodcaller\nimport sys\n"
     "def g(n: str, h: object) -> None:\n    methodcaller(n, h)(sys)\n"),
    ("getmembers", "import inspect\nimport sys\ndef g() -> object:\n"
     "    return inspect.getmembers(sys)\n"),
    ("resolve-name", "import pkgutil\ndef g(h: object) -> None:\n"
     "    pkgutil.resolve_name('sys:set' + 'profile')(h)\n"),
    ("pickle-import", "import pickle\ndef g(data: bytes) -> object:\n"
     "    return pickle.loads(data)\n"),
    ("finite-names-that-spell-a-hook", "import sys\ndef g(h: object) -> None:\n"
     "    for n in ('set', 'get'):\n        getattr(sys, n + 'profile')(h)\n"),
    ("guard-then-rebound", "import sys\ndef g(n: str, h: object) -> None:\n"
     "    if n in {'path'}:\n        n = n + 'x'\n        getattr(sys, n)(h)\n"),
    # The value leaves the test: called, returned through `or`, kept in a variable.
    ("tested-then-called", "import sys\ndef g(n: str, h: object) -> None:\n"
     "    v = getattr(sys, n, None)\n    if v is not None:\n        v(h)\n"),
    ("returned-through-or", "import sys\ndef g(n: str) -> object:\n"
     "    return getattr(sys, n, None) or None\n"),
    # A test that hands the value to the module's code: the other operand's `__eq__`, a
    # metaclass's `__instancecheck__`.
    ("tested-by-a-module-eq", "import sys\nclass Catch:\n"
     "    def __eq__(self, other: object) -> bool:\n        other(None)\n        return False\n"
     "def g(n: str) -> bool:\n    return getattr(sys, n, None) == Catch()\n"),
    ("tested-by-a-module-instancecheck", "import sys\nclass Meta(type):\n"
     "    def __instancecheck__(cls, v: object) -> bool:\n        v(None)\n        return False\n"
     "class K(metaclass=Meta):\n    pass\n"
     "def g(n: str) -> bool:\n    return isinstance(getattr(sys, n, None), K)\n"),
    # A relay only relays the name it was asked for, unchanged, and only when Python asks.
    ("relay-of-a-changed-name", "import sys\nclass W:\n"
     "    def __getattr__(self, name: str) -> object:\n"
     "        return getattr(sys, name.rstrip('_'))\n"),
    ("relay-of-a-rebound-name", "import sys\nclass W:\n"
     "    def __getattr__(self, name: str) -> object:\n        name = 'set' + name\n"
     "        return getattr(sys, name)\n"),
    ("relay-called-by-a-computed-name", "import sys\nclass W:\n"
     "    def __getattr__(self, name: str) -> object:\n        return getattr(sys, name)\n"
     "def g(n: str) -> object:\n    return W().__getattr__(n)\n"),
    ("relay-handed-out", "import sys\nclass W:\n"
     "    def __getattr__(self, name: str) -> object:\n        return getattr(sys, name)\n"
     "def g(n: str) -> object:\n    relay = W().__getattr__\n    return relay(n)\n"),
    ("relay-named-in-a-string", "import sys\nclass W:\n"
     "    def __getattr__(self, name: str) -> object:\n        return getattr(sys, name)\n"
     "def g(n: str) -> object:\n    return getattr(W(), '__getattr__')(n)\n"),
    # A local of the name elsewhere does not make the builtin another function here.
    ("vars-shadowed-in-another-function", "import sys\ndef h(vars: object) -> object:\n"
     "    return vars\ndef g(k: str) -> object:\n    return vars(sys)[k]\n"),
    ("dict-shadowed-in-another-function", "import sys\ndef h(dict: object) -> object:\n"
     "    return dict\ndef g(k: str) -> object:\n    return dict(vars(sys))\n"),
    ("module-getattr-with-a-prefix", "def __getattr__(name: str) -> object:\n"
     "    return globals()['_' + name]\n"),
    # A value walked down a dotted name, then let out: called, returned, passed on, kept
    # in an attribute, called through an attribute, or walked by another lookup function.
    ("walked-then-called", "import sys\ndef g(path: str, h: object) -> None:\n"
     "    obj = sys\n    for part in path.split('.'):\n"
     "        obj = getattr(obj, part, None)\n        if obj is None:\n            return\n"
     "    obj(h)\n"),
    ("walked-then-returned", "import sys\ndef g(path: str) -> object:\n"
     "    obj = getattr(sys, path, None)\n    obj = obj.__self__\n    return obj\n"),
    ("walked-attribute-called", "import sys\ndef g(n: str, h: object) -> None:\n"
     "    obj = getattr(print, n, None)\n    obj.setprofile(h)\n"),
    ("walked-attribute-passed-on", "import sys\ndef g(n: str, k: list) -> None:\n"
     "    obj = getattr(sys, n, None)\n    k.append(obj.__call__)\n"),
    ("walked-then-kept", "import sys\nclass C:\n    def g(self, n: str) -> None:\n"
     "        obj = getattr(sys, n, None)\n        self.hook = obj\n"),
    ("walked-by-attrgetter-then-called", "import sys\nfrom operator import attrgetter\n"
     "def g(n: str, h: object) -> None:\n    obj = getattr(sys, n, None)\n"
     "    attrgetter('x')(obj)(h)\n"),
    ("walked-through-augmented", "import sys\ndef g(n: str, h: object) -> None:\n"
     "    obj = getattr(sys, n, None)\n    obj += h\n"),
    # Shown, then let out; or "shown" by the module's own code, which receives the value.
    ("shown-then-called", "import sys\ndef g(n: str, h: object) -> str:\n"
     "    v = getattr(sys, n)\n    text = repr(v)\n    v(h)\n    return text\n"),
    ("shown-by-a-module-repr", "import sys\ndef repr(v: object) -> str:\n    v(None)\n"
     "    return ''\ndef g(n: str) -> str:\n    return repr(getattr(sys, n))\n"),
    ("formatted-by-a-module-object", "import sys\nclass Fmt:\n"
     "    def __mod__(self, v: object) -> str:\n        v(None)\n        return ''\n"
     "def g(n: str) -> str:\n    return Fmt() % getattr(sys, n)\n"),
    ("formatted-in-a-tuple-then-kept", "import sys\nKEPT = []\n"
     "def g(n: str) -> None:\n    KEPT.append((getattr(sys, n), 1))\n"),
    # Names from a local literal that code can add to, or that is bound again.
    ("local-list-appended", "import sys\ndef g(h: object) -> None:\n"
     "    names = ['path']\n    names.append('set' + 'trace')\n"
     "    for n in names:\n        getattr(sys, n)(h)\n"),
    ("local-list-handed-out", "import sys\ndef add(xs: list) -> None:\n"
     "    xs.append('settrace')\ndef g(h: object) -> None:\n    names = ['path']\n"
     "    add(names)\n    for n in names:\n        getattr(sys, n)(h)\n"),
    ("local-tuple-bound-again", "import sys\ndef g(h: object, more: str) -> None:\n"
     "    names = ('path',)\n    names = names + (more,)\n"
     "    for n in names:\n        getattr(sys, n)(h)\n"),
    ("local-tuple-augmented", "import sys\ndef g(h: object, more: str) -> None:\n"
     "    names = ('path',)\n    names += (more,)\n    for n in names:\n"
     "        getattr(sys, n)(h)\n"),
    ("local-tuple-rebound-by-a-nested-function", "import sys\n"
     "def g(h: object, more: str) -> None:\n    names = ('path',)\n"
     "    def swap() -> None:\n        nonlocal names\n        names = (more,)\n"
     "    swap()\n    for n in names:\n        getattr(sys, n)(h)\n"),
    ("local-tuple-spelling-a-hook", "import sys\ndef g(h: object) -> None:\n"
     "    names = ('path', 'setprofile')\n    for n in names:\n        getattr(sys, n)(h)\n"),
    # A value "narrowed" to a scalar where the narrowing does not hold for it.
    ("asserted-inside-a-try", "import sys\ndef g(n: str, h: object) -> None:\n"
     "    try:\n        v = getattr(sys, n)\n        assert isinstance(v, int)\n"
     "    except AssertionError:\n        v(h)\n"),
    ("asserted-after-the-call", "import sys\ndef g(n: str, h: object) -> None:\n"
     "    v = getattr(sys, n)\n    v(h)\n    assert isinstance(v, int)\n"),
    ("asserted-with-a-rebound-int", "import sys\nint = object\n"
     "def g(n: str, h: object) -> None:\n    v = getattr(sys, n)\n"
     "    assert isinstance(v, int)\n    v(h)\n"),
    ("narrowed-by-an-or", "import sys\ndef g(n: str, h: object) -> None:\n"
     "    v = getattr(sys, n)\n    if isinstance(v, int) or callable(v):\n        v(h)\n"),
    ("called-in-the-else", "import sys\ndef g(n: str, h: object) -> None:\n"
     "    v = getattr(sys, n)\n    if isinstance(v, int):\n        pass\n"
     "    else:\n        v(h)\n"),
    ("bound-again-inside-the-narrowing-if", "import sys\n"
     "def g(n: str, m: str, h: object) -> None:\n    v = 1\n"
     "    if isinstance(v, int):\n        v = getattr(sys, m)\n        v(h)\n"),
    ("narrowed-to-a-non-scalar", "import sys\ndef g(n: str, h: object) -> None:\n"
     "    v = getattr(sys, n)\n    if isinstance(v, object):\n        v(h)\n"),
    # `re` is the builtins module where the code reads it, however a method is named.
    ("a-class-level-re-bound-to-builtins", "import re\nimport sys\n"
     "def count() -> int:\n    return len(sys.modules)\nclass R:\n"
     "    re = sys.modules['builtins']\n    PAT = re.compile('1', 'f', 'exec')\n"),
    ("a-local-re-bound-to-builtins", "import re\nimport sys\n"
     "def count() -> int:\n    return len(sys.modules)\ndef g() -> object:\n"
     "    def re() -> None:\n        pass\n    re = sys.modules['builtins']\n"
     "    return re.compile('1', 'f', 'exec')\n"),
    ("format-with-a-computed-spec-passed-on", "import sys\n"
     "def g(n: str, h: object) -> str:\n    return format(h, getattr(sys, n))\n"),
]


@pytest.mark.parametrize("code", [c for _, c in REACHING], ids=[n for n, _ in REACHING])
def test_reflection_that_may_reach_a_hook_blocks(code: str) -> None:
    assert _found(code) is not None


# Reflection that reaches nothing but what the code names (real code's shapes).
HARMLESS: list[tuple[str, str]] = [
    ("relay-in-getattr", "class Wrapper:\n    def __init__(self, inner: object) -> None:\n"
     "        self._inner = inner\n    def __getattr__(self, name: str) -> object:\n"
     "        return getattr(self._inner, name)\n"),
    ("relay-in-getattribute", "class Wrapper:\n"
     "    def __getattribute__(self, name: str) -> object:\n"
     "        return object.__getattribute__(self, name)\n"),
    ("tested-only", "def same(stream: object, attr: str, value: object) -> bool:\n"
     "    found = getattr(stream, attr, None)\n"
     "    return found == value or (value is None and found is not None)\n"),
    # dateutil's `_ttinfo.__repr__`: the names come from `__slots__` (any strings, as far
    # as a subclass goes), each value only tested and shown.
    ("shown-in-a-repr", "class Info:\n    __slots__ = ['offset', 'abbr']\n"
     "    def __repr__(self) -> str:\n        parts = []\n"
     "        for attr in self.__slots__:\n            value = getattr(self, attr)\n"
     "            if value is not None:\n"
     "                parts.append('%s=%s' % (attr, repr(value)))\n"
     "        return f'{type(self).__name__}({len(parts)}: {\", \".join(parts)})'\n"
     "    def text(self, attr: str) -> str:\n"
     "        return f'{getattr(self, attr)!r} {str(getattr(self, attr))} '"
     " + '%s' % getattr(self, attr) + format(getattr(self, attr), '>4')\n"),
    # jsonschema's `ValidationError._contents`: the names from a local tuple of literals.
    ("names-from-a-local-tuple", "class Error:\n    def contents(self) -> dict:\n"
     "        attrs = ('message', 'cause', 'path')\n"
     "        return {attr: getattr(self, attr) for attr in attrs}\n"),
    ("names-from-a-local-list-only-iterated", "def pick(a: object, key: str) -> list:\n"
     "    names = ['name', 'doc']\n    if key not in names:\n        return []\n"
     "    return [getattr(a, n) for n in names]\n"),
    # black's `blib2to3` grammar tables: a value looked up by a computed name, used only
    # once known to be an int (asserted right after, or inside an `if type(v) == int:`).
    ("asserted-an-int", "import token\ndef label(c: dict, name: str) -> int:\n"
     "    itoken = getattr(token, name, None)\n    assert isinstance(itoken, int), name\n"
     "    assert itoken in token.tok_name, name\n    c[itoken] = name\n"
     "    return itoken\n"),
    ("narrowed-by-type-in-an-if", "import token\nTABLE: dict = {}\n"
     "def reprs(n: int) -> object:\n    for name in dir(token):\n"
     "        val = getattr(token, name)\n        if type(val) == int:\n"
     "            TABLE[val] = name\n    return TABLE.setdefault(n, n)\n"),
    # pyparsing's `Regex`: a property named `re` binds a class attribute; its methods
    # still read the module `re` (the module elsewhere reaches `sys.modules`).
    ("a-method-named-like-an-imported-module", "import re\nimport sys\n"
     "def count() -> int:\n    return len(sys.modules)\nclass R:\n    @property\n"
     "    def re(self) -> object:\n        return re.compile('a+')\n"),
    ("finite-loop-names", "def fields(a: object) -> list:\n"
     "    return [getattr(a, attr) for attr in ('name', 'doc')]\n"),
    ("guarded-module-getattr", "import warnings\ndef __getattr__(name: str) -> object:\n"
     "    if name in {'Parser', 'Option'}:\n"
     "        warnings.warn('deprecated', DeprecationWarning, stacklevel=2)\n"
     "        return globals()[f'_{name}']\n"
     "    raise AttributeError(name)\n"),
    ("own-instance-dict", "class C:\n    def state(self) -> tuple:\n"
     "        return tuple((k, v) for k, v in self.__dict__.items() if k != 'x')\n"),
    ("this-module-from-sys-modules", "import sys\ndef me() -> object:\n"
     "    return sys.modules[__name__]\n"),
    ("re-compile", "import re\nPATTERN = re.compile('a+')\nimport builtins\n"),
    # toolz's `curry.__reduce__`: a dotted name walked from a module, the object found
    # only tested (`isinstance`, `is`) and walked further; the module defines `__eq__`,
    # which an `isinstance` test does not hand the value to.
    ("walked-down-a-dotted-name", "from importlib import import_module\nclass curry:\n"
     "    def __init__(self, func: object) -> None:\n        self.func = func\n"
     "    def __eq__(self, other: object) -> bool:\n"
     "        return isinstance(other, curry) and self.func == other.func\n"
     "    def __hash__(self) -> int:\n        return 0\n"
     "    def found(self, modname: str, qualname: str) -> bool:\n"
     "        obj = import_module(modname)\n        for attr in qualname.split('.'):\n"
     "            if isinstance(obj, curry):\n                obj = obj.func\n"
     "            obj = getattr(obj, attr, None)\n            if obj is None:\n"
     "                break\n"
     "        return isinstance(obj, curry) and obj.func is self.func\n"),
]


@pytest.mark.parametrize("code", [c for _, c in HARMLESS], ids=[n for n, _ in HARMLESS])
def test_reflection_that_reaches_nothing_new_keeps_the_proof(code: str) -> None:
    assert _found(code) is None
    result = check_pair(code + DOUBLE, code + TWICE, "f", budget=BUDGET)
    assert result.verdict is Verdict.VERIFIED, result.detail


# Writes that change what `f` reads, next to a relay `__getattr__` (which no longer
# blocks by itself): each must still keep `f` from verifying.
RELAY = ("class Wrapper:\n    def __init__(self, inner: object) -> None:\n"
         "        self._inner = inner\n    def __getattr__(self, name: str) -> object:\n"
         "        return getattr(self._inner, name)\n")
READS_K = "def f(x: int) -> int:\n    return x + K\n"
K2 = "def f(x: int) -> int:\n    return x + 2\n"
WRITES: list[tuple[str, str]] = [
    ("setattr-on-this-module-by-name", "import sys\nK = 2\ndef g(n: str) -> None:\n"
     "    setattr(sys.modules[__name__], n, 3)\n"),
    ("globals-write-by-name", "K = 2\ndef g(n: str) -> None:\n    globals()[n] = 3\n"),
    ("vars-of-this-module-written", "import sys\nK = 2\ndef g() -> None:\n"
     "    vars(sys.modules[__name__])['K'] = 3\n"),
    ("dict-of-this-module-written", "import sys\nK = 2\ndef g() -> None:\n"
     "    sys.modules[__name__].__dict__['K'] = 3\n"),
    ("import-module-then-setattr", "import importlib\nK = 2\ndef g() -> None:\n"
     "    setattr(importlib.import_module(__name__), 'K', 3)\n"),
    ("relay-target-written-by-name", "K = 2\ndef g(w: Wrapper, n: str) -> None:\n"
     "    setattr(w, n, 3)\n"),
]


@pytest.mark.parametrize("code", [c for _, c in WRITES], ids=[n for n, _ in WRITES])
def test_a_write_next_to_a_relay_still_blocks(code: str) -> None:
    result = check_pair(RELAY + code + READS_K, RELAY + code.replace("K = 2\n", "") + K2,
                        "f", budget=NO_SEARCH)
    assert result.verdict is not Verdict.VERIFIED, result.detail


def test_a_write_to_a_class_the_method_reads_next_to_a_relay_blocks() -> None:
    head = RELAY + "class C:\n    k = 2\n    def __init__(self, x: int) -> None:\n" \
        "        self.x = x\n"
    tail = "def g(n: str) -> None:\n    setattr(C, n, 5)\n"
    before = head + "    def get(self) -> int:\n        return self.x + self.k\n" + tail
    after = head + "    def get(self) -> int:\n        return self.x + 2\n" + tail
    result = check_pair(before, after, "C.get", budget=NO_SEARCH)
    assert result.verdict is not Verdict.VERIFIED, result.detail
