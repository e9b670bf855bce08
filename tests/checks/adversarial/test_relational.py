"""Adversarial pairs for the relational check: the same code in the same environment.

Pairs that differ only by a consistent renaming of locals, a docstring, or a name that
resolves to the same imported object are verified without a model; every way the names
could denote something else (a merged local, a rebound import, another object of the same
name, a builtin shadowed in one version, a changed constant or decorator, code that can
see local names) must not verify.
"""

from __future__ import annotations

import ast

import pytest

from veribot.checks.equivalence import Budget, check_pair
from veribot.checks.project.package import Package, PairContext
from veribot.checks.relational import check as relational
from veribot.checks.verdict import Verdict

# Slow cases only `python -m pytest -m heavy` runs (tests/conftest.py); the default
# run keeps this module's other cases of each family.
HEAVY_CASES: dict[str, set[str]] = {
    "test_a_callee_verified_by_the_model_does_not_carry_the_caller": {
        "aliased-list-arguments",
    },
    "test_same_code_same_environment_is_verified": {
        "unchanged-body-import-replaced",
        "relative-to-a-changed-helper",
    },
}

BUDGET = Budget(timeout_s=4, search=False)

# (name, before, after, entry)
EQUIVALENT: list[tuple[str, str, str, str]] = [
    ("attribute-chain-to-from-import",
     "import itertools\ndef remove(p, seq):\n    return itertools.filterfalse(p, seq)\n",
     "from itertools import filterfalse, zip_longest\n"
     "def remove(p, seq):\n    return filterfalse(p, seq)\n", "remove"),
    ("operator-not",
     "import operator\ndef compose(f, g):\n    return lambda x: f(g(x))\n"
     "def complement(func):\n    return compose(operator.not_, func)\n",
     "from operator import attrgetter, not_\ndef compose(f, g):\n    return lambda x: f(g(x))\n"
     "def complement(func):\n    return compose(not_, func)\n", "complement"),
    ("module-import-moved-into-the-body",
     "from random import Random\ndef sample(p, seq, state=None):\n"
     "    if not hasattr(state, 'random'):\n        state = Random(state)\n"
     "    return filter(lambda _: state.random() < p, seq)\n",
     "def sample(p, seq, state=None):\n    \"\"\"Doc.\"\"\"\n"
     "    if not hasattr(state, 'random'):\n        from random import Random\n\n"
     "        state = Random(state)\n"
     "    return filter(lambda _: state.random() < p, seq)\n", "sample"),
    ("renamed-locals-and-captured",
     "def f(xs, k):\n    total = 0\n    for item in xs:\n        total += item * k\n"
     "    scale = lambda v: v * total\n    return [scale(i) for i in xs]\n",
     "def f(xs, k):\n    acc = 0\n    for x in xs:\n        acc += x * k\n"
     "    sc = lambda v: v * acc\n    return [sc(j) for j in xs]\n", "f"),
    ("unchanged-body-import-replaced",
     "import itertools\ndef pad(a, b):\n    return list(itertools.zip_longest(a, b))\n",
     "from itertools import zip_longest\ndef pad(a, b):\n    return list(zip_longest(a, b))\n",
     "pad"),
    # The helper changed by a renaming only: itself verified relationally, for any input.
    ("relative-to-a-changed-helper",
     "import itertools\ndef helper(x: int) -> int:\n    y = x + 1\n    return y\n"
     "def f(xs):\n    return [helper(x) for x in itertools.chain(xs)]\n",
     "import itertools\ndef helper(x: int) -> int:\n    z = x + 1\n    return z\n"
     "def f(xs):\n    return [helper(y) for y in itertools.chain(xs)]\n", "f"),
]

CLASS = ("import itertools\nclass H:\n    k = 1\n    def get(self):\n        return self.k\n"
         "    def all(self, xs):\n        out = [x * self.k for x in xs]\n        return out\n")
EQUIVALENT += [
    ("unchanged-class-read-by-the-function",
     CLASS + "def f(x):\n    m = H().get()\n    return m + x\n",
     CLASS + "def f(x):\n    n = H().get()\n    return n + x\n", "f"),
    ("method-with-renamed-locals",
     CLASS, CLASS.replace("out = [x * self.k for x in xs]\n        return out",
                          "res = [v * self.k for v in xs]\n        return res"), "H.all"),
    ("method-reading-its-own-class",
     "class C:\n    def dup(self, n):\n        r = C()\n        return r, n\n",
     "class C:\n    def dup(self, n):\n        other = C()\n        return other, n\n", "C.dup"),
    ("method-using-super",
     "class B:\n    def g(self):\n        return 1\nclass C(B):\n    def g(self):\n"
     "        r = super().g()\n        return r\n",
     "class B:\n    def g(self):\n        return 1\nclass C(B):\n    def g(self):\n"
     "        s = super().g()\n        return s\n", "C.g"),
    ("method-local-import-under-a-decorator",
     "from textwrap import dedent\ndef deco(classval=None):\n    def wrap(fn):\n"
     "        return property(fn)\n    return wrap\nclass E:\n    \"\"\"Doc.\"\"\"\n"
     "    @deco(classval=__doc__)\n    def text(self):\n        return dedent('  x')\n",
     "def deco(classval=None):\n    def wrap(fn):\n"
     "        return property(fn)\n    return wrap\nclass E:\n    \"\"\"Doc.\"\"\"\n"
     "    @deco(classval=__doc__)\n    def text(self):\n        from textwrap import dedent\n\n"
     "        return dedent('  x')\n", "E.text"),
    ("walrus-and-comprehension-renamed",
     "def f(xs):\n    ys = [(t := x) for x in xs]\n    return ys, t\n",
     "def f(xs):\n    zs = [(u := v) for v in xs]\n    return zs, u\n", "f"),
    ("local-annotation-added",
     "def f(s):\n    out = []\n    out.append(s)\n    return out\n",
     "def f(s):\n    res: list[str] = []\n    res.append(s)\n    return res\n", "f"),
    ("class-using-inspect-signature",
     "import inspect\nimport operator\nclass H:\n    def sig(self):\n"
     "        return str(inspect.signature(H.sig))\n"
     "def f(x):\n    return operator.not_(H().sig() == x)\n",
     "import inspect\nfrom operator import not_\nclass H:\n    def sig(self):\n"
     "        return str(inspect.signature(H.sig))\n"
     "def f(x):\n    return not_(H().sig() == x)\n", "f"),
    ("exception-variable-renamed",
     "def f(x):\n    try:\n        return 1 // x\n    except ZeroDivisionError as e:\n"
     "        return str(e)\n",
     "def f(x):\n    try:\n        return 1 // x\n    except ZeroDivisionError as err:\n"
     "        return str(err)\n", "f"),
]

EQUIVALENT += [
    ("class-read-with-unrelated-attribute-writes",
     CLASS + "def g(o):\n    o.other = 1\ndef f(x):\n    m = H().get()\n    return m + x\n",
     CLASS + "def g(o):\n    o.other = 1\ndef f(x):\n    n = H().get()\n    return n + x\n",
     "f"),
]

# (name, before, after, entry): not the same code in the same environment.
DIFFERING: list[tuple[str, str, str, str]] = [
    ("two-locals-merged",
     "def f(a, b):\n    x = a\n    y = b\n    x = x + 1\n    return x, y\n",
     "def f(a, b):\n    x = a\n    x = b\n    x = x + 1\n    return x, x\n", "f"),
    ("import-rebound-later",
     "import itertools\ndef f(xs):\n    return list(itertools.chain(xs))\n",
     "from itertools import chain\nchain = list\ndef f(xs):\n    return list(chain(xs))\n",
     "f"),
    ("local-import-of-another-object",
     "from itertools import chain\ndef f(xs):\n    return list(chain(xs))\n",
     "def f(xs):\n    from collections import ChainMap as chain\n    return list(chain(xs))\n",
     "f"),
    ("path-function-changed",
     "import os.path\ndef f(p):\n    return os.path.basename(p)\n",
     "from os import path\ndef f(p):\n    return path.dirname(p)\n", "f"),
    ("arguments-swapped",
     "def f(a, b):\n    return divmod(a, b)\n", "def f(a, b):\n    return divmod(b, a)\n", "f"),
    ("changed-constant",
     "K = 2\ndef f(x):\n    return x * K\n", "K = 3\ndef f(x):\n    return x * K\n", "f"),
    ("builtin-shadowed-in-one-version",
     "def f(xs):\n    return len(xs)\n",
     "def len(xs):\n    return 0\ndef f(xs):\n    return len(xs)\n", "f"),
    ("global-statement",
     "n = 0\ndef f(x):\n    global n\n    n = x\n    return n\n",
     "n = 0\ndef f(y):\n    global n\n    n = y\n    return n\n", "f"),
    ("changed-decorator",
     "import functools\ndef f(x):\n    return x\n",
     "import functools\n@functools.lru_cache\ndef f(x):\n    return x\n", "f"),
    ("changed-default",
     "def f(x, k=1):\n    return x + k\n", "def f(x, k=2):\n    return x + k\n", "f"),
    ("captured-rename-inconsistent",
     "def f(xs):\n    a = 1\n    b = 2\n    g = lambda: a\n    return g() + b\n",
     "def f(xs):\n    a = 1\n    b = 2\n    g = lambda: b\n    return g() + a\n", "f"),
    ("locals-observed",
     "def f(x):\n    y = x\n    return locals()\n",
     "def f(x):\n    z = x\n    return locals()\n", "f"),
    ("frame-observed",
     "import sys\ndef f(x):\n    y = x\n    return sys._getframe().f_locals\n",
     "import sys\ndef f(x):\n    z = x\n    return sys._getframe().f_locals\n", "f"),
    ("del-of-a-local",
     "def f(x):\n    y = x\n    del y\n    return x\n",
     "def f(x):\n    z = x\n    del z\n    return x\n", "f"),
    ("nonlocal",
     "def f(x):\n    y = 0\n    def g():\n        nonlocal y\n        y = x\n"
     "    g()\n    return y\n",
     "def f(x):\n    z = 0\n    def g():\n        nonlocal z\n        z = x\n"
     "    g()\n    return z\n",
     "f"),
    ("module-attribute-patched-at-import",
     "import itertools\ndef f(xs):\n    return itertools.chain(xs)\n",
     "import itertools\nitertools.chain = list\ndef f(xs):\n    return itertools.chain(xs)\n",
     "f"),
    ("global-written-through-globals",
     "from itertools import chain\ndef f(xs):\n    return list(chain(xs))\n",
     "from itertools import chain\nglobals()['chain'] = reversed\n"
     "def f(xs):\n    return list(chain(xs))\n", "f"),
    ("nested-def-renamed",  # a nested function's name shows (__name__)
     "def f():\n    def inner():\n        return 1\n    return inner\n",
     "def f():\n    def other():\n        return 1\n    return other\n", "f"),
    ("class-attribute-changed-at-import",
     CLASS + "def f(x):\n    return H().get() + x\n",
     CLASS + "H.k = 2\ndef f(x):\n    return H().get() + x\n", "f"),
    ("method-replaced-at-import",
     CLASS + "def f(x):\n    return H().get() + x\n",
     CLASS + "def other(self):\n    return 5\nH.get = other\n"
     "def f(x):\n    return H().get() + x\n", "f"),
    ("method-entry-replaced-at-import",
     CLASS, CLASS.replace("out = [x * self.k for x in xs]\n        return out",
                          "res = [v * self.k for v in xs]\n        return res")
     + "H.all = lambda self, xs: []\n", "H.all"),
    ("class-method-reads-changed-constant",
     "K = 1\nclass H:\n    def get(self):\n        return K\ndef f(x):\n    return H().get()\n",
     "K = 2\nclass H:\n    def get(self):\n        return K\ndef f(x):\n    return H().get()\n",
     "f"),
    ("method-whose-class-changed-elsewhere",
     CLASS, CLASS.replace("k = 1", "k = 2").replace("out = [", "res = [").replace(
         "return out", "return res"), "H.all"),
    ("super-of-another-base",
     "class B:\n    def g(self):\n        return 1\nclass D(B):\n    def g(self):\n"
     "        return 2\nclass C(B):\n    def g(self):\n        r = super().g()\n        return r\n",
     "class B:\n    def g(self):\n        return 1\nclass D(B):\n    def g(self):\n"
     "        return 2\nclass C(D):\n    def g(self):\n        s = super().g()\n        return s\n",
     "C.g"),
    ("class-with-a-metaclass-changed-at-import",
     "class M(type):\n    pass\nclass H(metaclass=M):\n    k = 1\n"
     "def f(x):\n    return H.k + x\n",
     "class M(type):\n    pass\nclass H(metaclass=M):\n    k = 1\nM.k = 3\n"
     "def f(x):\n    return H.k + x\n", "f"),
    ("local-import-not-before-every-use",
     "from random import Random\ndef f(c, s):\n    if c:\n        r = Random(s)\n"
     "    return Random(s).random()\n",
     "def f(c, s):\n    if c:\n        from random import Random\n        r = Random(s)\n"
     "    return Random(s).random()\n", "f"),
    ("comprehension-reads-the-outer-name",
     "def f(xs):\n    x = [1]\n    return [x for z in x]\n",
     "def f(xs):\n    y = [1]\n    return [z for z in y]\n", "f"),
    ("builtin-written-through-globals",
     "def f(xs):\n    return len(xs)\n",
     "globals()['len'] = lambda xs: 0\ndef f(xs):\n    return len(xs)\n", "f"),
    ("builtin-replaced-at-import",
     "def f(xs):\n    n = len(xs)\n    return n\n",
     "import builtins\nbuiltins.len = lambda xs: 0\ndef f(xs):\n    m = len(xs)\n    return m\n",
     "f"),
    ("mangled-global-in-a-method",
     "__h = 1\n_C__h = 2\nclass C:\n    def g(self):\n        return __h\n",
     "__h = 1\n_C__h = 3\nclass C:\n    def g(self):\n        return __h\n", "C.g"),
    ("reads-its-own-changed-docstring",
     "def f(x):\n    \"\"\"One.\"\"\"\n    return f.__doc__\n",
     "def f(x):\n    \"\"\"Two.\"\"\"\n    return f.__doc__\n", "f"),
    ("reads-its-own-changed-annotations",
     "from typing import get_type_hints\ndef f(x: int):\n    return get_type_hints(f)\n",
     "from typing import get_type_hints\ndef f(x: str):\n    return get_type_hints(f)\n", "f"),
    ("forged-builtin-type-in-a-class",
     "class H:\n    x = int\ndef f(v):\n    return H.x(v)\n",
     "class H:\n    x = int\nclass Fake:\n    def __init__(self, v):\n        pass\n"
     "Fake.__module__ = 'builtins'\nFake.__qualname__ = 'int'\nH.x = Fake\n"
     "def f(v):\n    return H.x(v)\n", "f"),
    ("name-unbound-in-one-version",
     "class H:\n    def g(self):\n        return helper()\ndef f(x):\n    return H().g()\n",
     "class H:\n    def g(self):\n        return helper()\nglobals()['helper'] = lambda: 1\n"
     "def f(x):\n    return H().g()\n", "f"),
    ("string-names-a-renamed-local",  # a callee may look the name up in the caller's frame
     "import sys\ndef lookup(s):\n    return sys._getframe(1).f_locals[s]\n"
     "def f(x):\n    limit = x\n    return lookup('limit')\n",
     "import sys\ndef lookup(s):\n    return sys._getframe(1).f_locals[s]\n"
     "def f(x):\n    bound = x\n    return lookup('limit')\n", "f"),
    ("helper-reads-the-callers-frame",
     "import sys\ndef peek():\n    return sorted(sys._getframe(1).f_locals)\n"
     "def f(x):\n    a = x\n    return peek()\n",
     "import sys\ndef peek():\n    return sorted(sys._getframe(1).f_locals)\n"
     "def f(x):\n    b = x\n    return peek()\n", "f"),
    ("source-text-read-through-inspect",
     "from inspect import getsource\ndef f(x):\n    return getsource(f)\n",
     "from inspect import getsource\ndef f(x):\n    # a comment\n    return getsource(f)\n",
     "f"),
    ("class-reads-a-frame-through-inspect",
     "import inspect\nclass H:\n    def peek(self):\n"
     "        return sorted(inspect.stack()[1][0].f_locals)\n"
     "def f(x):\n    a = x\n    return H().peek()\n",
     "import inspect\nclass H:\n    def peek(self):\n"
     "        return sorted(inspect.stack()[1][0].f_locals)\n"
     "def f(x):\n    b = x\n    return H().peek()\n", "f"),
    # Code elsewhere in the module that changes, after import, what f reads: the same
    # code in the same environment at import is not the same once `g()` has run.
    ("module-attribute-patched-by-a-helper",
     "import math\ndef g():\n    math.pi = 3\ndef f(x):\n    return math.pi + x\n",
     "import math\ndef g():\n    math.pi = 4\ndef f(x):\n    return math.pi + x\n", "f"),
    ("module-attribute-patched-by-setattr",
     "import math\ndef g():\n    setattr(math, 'pi', 3)\ndef f(x):\n    return math.pi + x\n",
     "from math import pi\ndef g():\n    setattr(math, 'pi', 3)\ndef f(x):\n    return pi + x\n",
     "f"),
    ("constant-rebound-by-a-helper",
     "K = 2\ndef g():\n    global K\n    K = 5\ndef f(x):\n    return x + K\n",
     "K = 2\ndef g():\n    global K\n    K = 6\ndef f(x):\n    return x + K\n", "f"),
    ("module-list-mutated-by-a-helper",
     "L = [1]\ndef g():\n    L.append(2)\ndef f(x):\n    return len(L) + x\n",
     "L = [1]\ndef g():\n    L.append(3)\n    L.append(3)\ndef f(x):\n    return len(L) + x\n",
     "f"),
    # An exception's message names the local whose read raised it; code that reads the
    # exception (a handler's name, `__context__`, a context manager's `__exit__`) sees it.
    ("unbound-local-message-read",
     "def f(c):\n    if c:\n        y = 1\n    try:\n        return y\n"
     "    except UnboundLocalError as e:\n        return str(e)\n",
     "def f(c):\n    if c:\n        z = 1\n    try:\n        return z\n"
     "    except UnboundLocalError as e:\n        return str(e)\n", "f"),
    ("unbound-local-message-through-context",
     "def f(c):\n    if c:\n        y = 1\n    try:\n        try:\n            y\n"
     "        finally:\n            raise ValueError\n    except ValueError as e:\n"
     "        return str(e.__context__)\n",
     "def f(c):\n    if c:\n        z = 1\n    try:\n        try:\n            z\n"
     "        finally:\n            raise ValueError\n    except ValueError as e:\n"
     "        return str(e.__context__)\n", "f"),
    ("unbound-local-message-in-exit",
     "class R:\n    def __enter__(self):\n        return self\n"
     "    def __exit__(self, t, v, tb):\n        self.m = str(v)\n        return True\n"
     "def f(c):\n    if c:\n        y = 1\n    with R() as r:\n        y\n    return r.m\n",
     "class R:\n    def __enter__(self):\n        return self\n"
     "    def __exit__(self, t, v, tb):\n        self.m = str(v)\n        return True\n"
     "def f(c):\n    if c:\n        z = 1\n    with R() as r:\n        z\n    return r.m\n",
     "f"),
    # Code run after import that rewrites a class the function reads (by attribute name).
    ("class-attribute-written-by-a-helper",
     "class C:\n    k = 1\ndef g():\n    C.k = 2\ndef f(x):\n    y = x\n    return C.k + y\n",
     "class C:\n    k = 1\ndef g():\n    C.k = 3\ndef f(x):\n    z = x\n    return C.k + z\n",
     "f"),
    ("method-patched-by-a-helper",
     "class C:\n    def get(self):\n        return 1\ndef g():\n    C.get = lambda self: 2\n"
     "def f(x):\n    y = x\n    return C().get() + y\n",
     "class C:\n    def get(self):\n        return 1\ndef g():\n    C.get = lambda self: 3\n"
     "def f(x):\n    z = x\n    return C().get() + z\n", "f"),
    ("class-attribute-set-by-setattr",
     "class C:\n    k = 1\ndef g():\n    setattr(C, 'k', 2)\n"
     "def f(x):\n    y = x\n    return C.k + y\n",
     "class C:\n    k = 1\ndef g():\n    setattr(C, 'k', 3)\n"
     "def f(x):\n    z = x\n    return C.k + z\n", "f"),
    ("own-class-attribute-written-by-a-helper",
     "class C:\n    k = 1\n    def get(self, x):\n        y = x\n        return self.k + y\n"
     "def g():\n    C.k = 2\n",
     "class C:\n    k = 1\n    def get(self, x):\n        z = x\n        return self.k + z\n"
     "def g():\n    C.k = 3\n", "C.get"),
    ("class-attribute-written-through-type-of-self",
     "class C:\n    k = 1\n    def bump(self):\n        type(self).k = 2\n"
     "def f(x):\n    y = x\n    return C.k + y\n",
     "class C:\n    k = 1\n    def bump(self):\n        type(self).k = 3\n"
     "def f(x):\n    z = x\n    return C.k + z\n", "f"),
    ("keyword-defaults-changed-in-place",
     "def f(x, *, k=2):\n    y = x\n    return y + k\ndef g():\n    f.__kwdefaults__['k'] = 5\n",
     "def f(x, *, k=2):\n    z = x\n    return z + k\ndef g():\n    f.__kwdefaults__['k'] = 6\n",
     "f"),
    # A lone source is loaded as `subject`: importing that name imports the module itself.
    ("changed-helper-read-through-a-self-import",
     "import subject\ndef h(x):\n    return x + 1\ndef f(x):\n    return subject.h(x)\n",
     "import subject\ndef h(x):\n    return x + 2\ndef f(x):\n    return subject.h(x)\n", "f"),
    ("unchanged-helper-reads-changed-constant",
     "K = 1\ndef h(x):\n    return x + K\ndef f(x):\n    return h(x)\n",
     "K = 2\ndef h(x):\n    return x + K\ndef f(x):\n    return h(x)\n", "f"),
]


@pytest.mark.parametrize(("name", "before", "after", "entry"), EQUIVALENT,
                         ids=[c[0] for c in EQUIVALENT])
def test_same_code_same_environment_is_verified(
    name: str, before: str, after: str, entry: str
) -> None:
    result = check_pair(before, after, entry, budget=BUDGET)
    assert result.verdict is Verdict.VERIFIED, result
    assert result.method == relational.METHOD


@pytest.mark.parametrize(("name", "before", "after", "entry"), DIFFERING,
                         ids=[c[0] for c in DIFFERING])
def test_other_code_or_environment_is_not_verified(
    name: str, before: str, after: str, entry: str
) -> None:
    result = check_pair(before, after, entry, budget=BUDGET)
    assert result.verdict is not Verdict.VERIFIED, result
    assert relational.check(before, after, ast.parse(before), ast.parse(after), entry,
                            relational.Limits()) is None


def test_a_verified_changed_callee_is_named_in_the_assumptions() -> None:
    _, before, after, entry = next(c for c in EQUIVALENT if c[0] == "relative-to-a-changed-helper")
    result = check_pair(before, after, entry, budget=BUDGET)
    assert any("`helper` changed too and was verified" in a for a in result.assumptions)


def test_a_changed_callee_that_is_not_verified_leaves_the_caller_unverified() -> None:
    before = ("def helper(x):\n    return x + 1\n"
              "def f(xs):\n    return [helper(x) for x in xs]\n")
    after = ("def helper(x):\n    return x + 2\n"
             "def f(ys):\n    return [helper(y) for y in ys]\n".replace("ys", "xs"))
    assert check_pair(before, after, "f", budget=BUDGET).verdict is not Verdict.VERIFIED
    assert relational.check(before, after, ast.parse(before), ast.parse(after), "f",
                            relational.Limits()) is None


def test_mutually_recursive_changed_functions_stop() -> None:
    before = ("def g(n: int) -> int:\n    return 0 if n <= 0 else f(n - 1)\n"
              "def f(n: int) -> int:\n    return 0 if n <= 0 else g(n - 1)\n")
    after = before.replace("0 if n <= 0 else f", "0 if n < 1 else f")
    result = check_pair(before, after, "f", budget=BUDGET)
    assert result.verdict is not Verdict.REFUTED


def test_execution_off_never_verifies_relationally() -> None:
    _, before, after, entry = EQUIVALENT[0]
    result = check_pair(before, after, entry, budget=Budget(timeout_s=3, execute=False))
    assert result.verdict is not Verdict.VERIFIED


def test_submodule_or_attribute_of_the_same_name_is_not_verified() -> None:
    """`import pkg.b` makes `pkg.b` the submodule; `from pkg import b` takes the package's
    attribute `b`: the same dotted name, two objects."""
    files = (("pkg/__init__.py", "def b():\n    return 'attribute'\n"),
             ("pkg/b.py", "X = 'submodule'\n"))
    package = Package(module="pkg.mod", path="pkg/mod.py", root="", files=files)
    context = PairContext(package, package)
    before = "import pkg.b\ndef f():\n    return pkg.b\n"
    after = "from pkg import b\ndef f():\n    return b\n"
    assert relational.check(before, after, ast.parse(before), ast.parse(after), "f",
                            relational.Limits(), context) is None
    result = check_pair(before, after, "f", budget=BUDGET, context=context)
    assert result.verdict is not Verdict.VERIFIED, result


def test_same_object_from_the_project_is_verified() -> None:
    files = (("pkg/__init__.py", ""), ("pkg/utils.py", "no_default = '__no__default__'\n"))
    package = Package(module="pkg.mod", path="pkg/mod.py", root="", files=files)
    before = "import pkg.utils\ndef f(x):\n    return x == pkg.utils.no_default\n"
    after = "from .utils import no_default\ndef f(x):\n    return x == no_default\n"
    result = check_pair(before, after, "f", budget=BUDGET, context=PairContext(package, package))
    assert result.verdict is Verdict.VERIFIED, result


def test_module_under_review_read_through_a_self_import_is_not_verified() -> None:
    files = (("pkg/__init__.py", ""),)
    before_pkg = Package(module="pkg.mod", path="pkg/mod.py", root="", files=files)
    context = PairContext(before_pkg, before_pkg)
    before = "from pkg import mod as me\nK = 1\ndef f(x):\n    return getattr(me, x)\n"
    after = "from pkg import mod as me\nK = 2\ndef f(x):\n    return getattr(me, x)\n"
    assert relational.check(before, after, ast.parse(before), ast.parse(after), "f",
                            relational.Limits(), context) is None


# A changed callee verified by the model holds for its own domain: its annotated types and
# distinct list arguments, exceptions compared by type. The caller's calls need not meet it.
CALLEE_OUTSIDE_ITS_PROOF: list[tuple[str, str, str]] = [
    ("aliased-list-arguments",
     "def g(a: list[int], b: list[int]) -> int:\n    a.append(1)\n    return len(b)\n"
     "def f(xs: list[int]):\n    return g(xs, xs)\n",
     "def g(a: list[int], b: list[int]) -> int:\n    n = len(b)\n    a.append(1)\n    return n\n"
     "def f(xs: list[int]):\n    return g(xs, xs)\n"),
    ("a-float-for-an-int",
     "def g(x: int) -> bool:\n    return x % 2 == 1\n"
     "def f(xs: list[float]):\n    return [g(x) for x in xs]\n",
     "def g(x: int) -> bool:\n    return x % 2 != 0\n"
     "def f(xs: list[float]):\n    return [g(y) for y in xs]\n"),
    ("exception-message-read",
     "def g(x: int) -> int:\n    if x < 0:\n        raise ValueError('negative')\n    return x\n"
     "def f(x: int):\n    try:\n        return g(x)\n    except ValueError as e:\n"
     "        return str(e)\n",
     "def g(x: int) -> int:\n    if x < 0:\n        raise ValueError('below zero')\n    return x\n"
     "def f(x: int):\n    try:\n        return g(x)\n    except ValueError as e:\n"
     "        return str(e)\n"),
    # Verified relationally (a renaming), but its UnboundLocalError names the local.
    ("renamed-callee-message-read",
     "def g(c):\n    if c:\n        y = 1\n    return y\n"
     "def f(c):\n    try:\n        return g(c)\n    except NameError as e:\n"
     "        return str(e)\n",
     "def g(c):\n    if c:\n        z = 1\n    return z\n"
     "def f(c):\n    try:\n        return g(c)\n    except NameError as e:\n"
     "        return str(e)\n"),
]


@pytest.mark.parametrize(("name", "before", "after"), CALLEE_OUTSIDE_ITS_PROOF,
                         ids=[c[0] for c in CALLEE_OUTSIDE_ITS_PROOF])
def test_a_callee_verified_by_the_model_does_not_carry_the_caller(
    name: str, before: str, after: str
) -> None:
    assert check_pair(before, after, "g", budget=BUDGET).verdict is Verdict.VERIFIED
    result = relational.check(before, after, ast.parse(before), ast.parse(after), "f",
                              relational.Limits(),
                              callee=lambda n: check_pair(before, after, n, budget=BUDGET))
    assert result is None
    assert check_pair(before, after, "f", budget=BUDGET).verdict is not Verdict.VERIFIED
