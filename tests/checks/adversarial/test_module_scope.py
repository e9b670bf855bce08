"""Adversarial pairs: module code blocks a proof only if it can change what the function uses.

Code anywhere in the module that can rebind a name the function reads, replace or patch a
function it runs, or mutate a module-level object it reads (after import, when called)
must keep the proof from standing. Decorators, ``sys`` and writes elsewhere that touch
nothing the function uses must not.
"""

from __future__ import annotations

import ast

import pytest

from veribot.checks.equivalence import Budget, check_pair
from veribot.checks.lang import pyinterfere
from veribot.checks.lang.pymodule import Module
from veribot.checks.search.differential import confirm
from veribot.checks.verdict import Verdict

# Slow cases only `python -m pytest -m heavy` runs (tests/conftest.py); the default
# run keeps this module's other cases of each family.
HEAVY_CASES: dict[str, set[str]] = {
    "test_code_that_can_change_what_f_uses_blocks_the_proof": {
        "exec-in-a-helper",
        "globals-aliased-then-updated",
        "global-rebind-in-a-helper",
        "attribute-write-of-the-name",
        "helper-code-swapped",
        "computed-setattr",
        "helper-appends-to-a-list-f-reads",
        "dunder-setattr-on-an-object",
        "defaults-patched-in-an-uncalled-helper",
        "setattr-passed-on",
        "kwdefaults-changed-in-place",
        "dict-reached-by-getattr",
        "getattr-aliased",
        "helper-writes-a-dict-through-an-alias",
        "globals-write-in-a-function",
        "dict-by-getattribute",
        "dict-by-a-computed-getattr-then-written",
    },
    "test_decorators_that_change_f_never_verify": {
        "overload-stub-after-the-real-definition",
    },
}

BUDGET = Budget(timeout_s=6)


def _fn(params: str, *body: str) -> str:
    return f"def f({params}):\n" + "".join(f"    {line}\n" for line in body)


K2 = _fn("x: int", "return x + 2")
READS_K = _fn("x: int", "return x + K")
SCALE = _fn("x: int, k: int = 2", "return x * k")
KW = _fn("x: int, *, k: int = 2", "return x * k")
KW_SWAPPED = _fn("x: int, *, k: int = 2", "return k * x")

# (name, before, after): `f` is the same on a freshly imported module, but other code of
# the before version can change what it computes once it has run.
CHANGEABLE: list[tuple[str, str, str]] = [
    ("global-rebind-in-a-helper", "K = 2\ndef g() -> None:\n    global K\n    K = 5\n" + READS_K,
     K2),
    ("helper-appends-to-a-list-f-reads", "L = [1, 2]\ndef g() -> None:\n    L.append(3)\n"
     + _fn("x: int", "return x + len(L)"), K2),
    ("helper-writes-a-dict-through-an-alias", "D = {'a': 2}\ndef g() -> None:\n    d = D\n"
     "    d['a'] = 5\n" + _fn("x: int", "return x + D['a']"), K2),
    ("setattr-on-sys-modules-in-a-function", "import sys\nK = 2\ndef g() -> None:\n"
     "    setattr(sys.modules[__name__], 'K', 3)\n" + READS_K, "import sys\n" + K2),
    ("attribute-write-of-the-name", "K = 2\ndef g(m: object) -> None:\n    m.K = 3\n" + READS_K,
     K2),
    ("computed-setattr", "K = 2\ndef g(m: object, name: str) -> None:\n"
     "    setattr(m, name, 3)\n" + READS_K, K2),
    ("globals-write-in-a-function", "K = 2\ndef g() -> None:\n    globals()['K'] = 3\n"
     + READS_K, K2),
    ("globals-aliased-then-updated", "K = 2\ndef g() -> None:\n    ns = globals()\n"
     "    ns.update(K=3)\n" + READS_K, K2),
    ("frame-globals-write", "import sys\nK = 2\ndef g() -> None:\n"
     "    sys._getframe().f_globals['K'] = 3\n" + READS_K, "import sys\n" + K2),
    ("exec-in-a-helper", "K = 2\ndef g() -> None:\n    exec('K = 3', globals())\n" + READS_K,
     K2),
    ("defaults-patched-in-an-uncalled-helper", "def g() -> None:\n    f.__defaults__ = (5,)\n"
     + SCALE, SCALE),
    ("helper-code-swapped", "def h(y: int) -> int:\n    return y\n"
     "def g() -> None:\n    h.__code__ = (lambda y: 0).__code__\n"
     + _fn("x: int", "return h(x) + 2"), _fn("x: int", "return x + 2")),
    ("dict-reached-by-getattr", "K = 2\ndef g(m: object) -> None:\n"
     "    getattr(m, '__di' + 'ct__')['K'] = 3\n" + READS_K, K2),
    ("dunder-setattr-on-an-object", "K = 2\ndef g(m: object) -> None:\n"
     "    type(m).__setattr__(m, 'K', 3)\n" + READS_K, K2),
    ("setattr-passed-on", "K = 2\ndef g(m: object) -> None:\n    s = setattr\n"
     "    s(m, 'K', 3)\n" + READS_K, K2),
    ("kwdefaults-changed-in-place", KW + "def g() -> None:\n    f.__kwdefaults__['k'] = 5\n",
     KW_SWAPPED),
    ("dict-by-a-computed-getattr-then-written", "K = 2\ndef g(m: object) -> None:\n"
     "    d = getattr(m, '__di' + 'ct__')\n    d['K'] = 3\n" + READS_K, K2),
    ("dict-by-getattribute", "K = 2\ndef g(m: object) -> None:\n"
     "    m.__getattribute__('__dict__')['K'] = 3\n" + READS_K, K2),
    ("getattr-aliased", "K = 2\ndef g(m: object) -> None:\n    ga = getattr\n"
     "    ga(m, '__dict__')['K'] = 3\n" + READS_K, K2),
]


@pytest.mark.parametrize(("before", "after"), [(b, a) for _, b, a in CHANGEABLE],
                         ids=[n for n, _, _ in CHANGEABLE])
def test_code_that_can_change_what_f_uses_blocks_the_proof(before: str, after: str) -> None:
    result = check_pair(before, after, "f", budget=BUDGET)
    assert result.verdict is Verdict.INCONCLUSIVE, result.detail


# (name, before, after, a call on which they differ when executed)
DIFFERING: list[tuple[str, str, str, str]] = [
    ("decorator-defined-in-the-module-wraps-f",
     "import functools\ndef deco(fn):\n    @functools.wraps(fn)\n    def wrapper(x):\n"
     "        return fn(x) + 1\n    return wrapper\n@deco\n" + K2, K2, "1"),
    ("overload-stub-after-the-real-definition",
     "from typing import overload\n" + K2 + "@overload\ndef f(x: int) -> int: ...\n", K2, "1"),
    ("decorator-swaps-the-code",
     "def deco(fn):\n    fn.__code__ = (lambda x: x).__code__\n    return fn\n@deco\n" + K2,
     K2, "1"),
]


@pytest.mark.parametrize(("before", "after", "call"), [(b, a, c) for _, b, a, c in DIFFERING],
                         ids=[n for n, _, _, _ in DIFFERING])
def test_decorators_that_change_f_never_verify(before: str, after: str, call: str) -> None:
    assert confirm(before, after, "f", [call], found_by="test") is not None, "meant to differ"
    result = check_pair(before, after, "f", budget=BUDGET)
    assert result.verdict is Verdict.REFUTED, result.detail


DOUBLE = _fn("x: int", "return x * 2")
TWICE = _fn("x: int", "return x + x")
PLUS_K = _fn("x: int", "return K + x")

# (name, before, after): equivalent, in modules whose other code touches nothing f uses.
UNRELATED: list[tuple[str, str, str]] = [
    ("decorators-elsewhere",
     "import functools\n@functools.lru_cache(maxsize=None)\ndef g(y: int) -> int:\n"
     "    return y\nclass C:\n    @property\n    def p(self) -> int:\n        return 1\n"
     "    @staticmethod\n    def s() -> int:\n        return 2\n", ""),
    ("sys-uses", "import sys\nWIN = sys.platform.startswith('win')\n"
     "def argv() -> list[str]:\n    return sys.argv\n", ""),
    ("dict-writes-to-an-unrelated-name",
     "CACHE = {}\ndef remember(k: str, v: int) -> None:\n    CACHE[k] = v\n", ""),
    ("global-of-an-unrelated-name",
     "counter = 0\ndef bump() -> None:\n    global counter\n    counter += 1\n", ""),
    ("globals-read-in-module-getattr",
     "def __getattr__(name: str) -> object:\n    if name in ('A', 'B'):\n"
     "        return globals()['_' + name]\n    raise AttributeError(name)\n", ""),
]


@pytest.mark.parametrize(("prefix", "suffix"), [(p, s) for _, p, s in UNRELATED],
                         ids=[n for n, _, _ in UNRELATED])
def test_unrelated_module_code_keeps_the_proof(prefix: str, suffix: str) -> None:
    result = check_pair(prefix + DOUBLE + suffix, prefix + TWICE + suffix, "f", budget=BUDGET)
    assert result.verdict is Verdict.VERIFIED, result.detail


def test_overload_stubs_before_the_definition_keep_the_proof() -> None:
    stubs = ("from typing import overload\n@overload\ndef f(x: bool) -> int: ...\n"
             "@overload\ndef f(x: int) -> int: ...\n")
    result = check_pair(stubs + DOUBLE, stubs + TWICE, "f", budget=BUDGET)
    assert result.verdict is Verdict.VERIFIED, result.detail


def test_a_method_writing_an_attribute_named_like_a_constant_keeps_the_proof() -> None:
    prefix = "K = 2\nclass Box:\n    def __init__(self) -> None:\n        self.K = 5\n"
    result = check_pair(prefix + READS_K, prefix + PLUS_K, "f", budget=BUDGET)
    assert result.verdict is Verdict.VERIFIED, result.detail


# A module-level list the function reads, handed to other code without a visible write:
# an iterator gives it back (`__reduce__`), an operand's hook receives it. (The model
# does not read module-level lists yet; the rule is checked on its own.)
LIST_LEAKS: list[tuple[str, str]] = [
    ("iterator-reduced", "def g() -> None:\n    iter(L).__reduce__()[1][0][0] = 5\n"),
    ("reversed-kept", "def g() -> None:\n    it = reversed(L)\n    it.__reduce__()[1][0][0] = 5\n"),
    ("operand-hook", "class E:\n    def __eq__(self, o: object) -> bool:\n"
     "        o[0] = 5\n        return True\ndef g() -> None:\n    E() == L\n"),
]


@pytest.mark.parametrize("code", [c for _, c in LIST_LEAKS], ids=[n for n, _ in LIST_LEAKS])
def test_a_module_level_list_handed_on_may_change(code: str) -> None:
    tree = ast.parse("L = [2]\n" + code + _fn("x: int", "return x + L[0]"))
    assert pyinterfere.interference(tree, Module.of(tree), "f") is not None


def test_a_module_level_list_read_by_loops_and_operators_is_unchanged() -> None:
    tree = ast.parse("L = [2]\n" + _fn("x: int", "return sum(v for v in iter(L)) + (L == [x])"))
    assert pyinterfere.interference(tree, Module.of(tree), "f") is None
