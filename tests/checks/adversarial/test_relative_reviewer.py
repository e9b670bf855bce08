"""Pairs a reviewer wrote to break the relative check (each a real CPython behaviour).

Every "not verified" pair below differs in CPython on some input: an object let go of
before a call that needs it, a StopIteration turned into a RuntimeError as it leaves a
generator expression, a context manager that suppresses, keyword order seen by
``**kwargs``, a set's order, a module name rebound by the module's own code... The
"verified" ones are refactorings that keep every call and operation (a module name read
after a call instead of before it is verified under the stated assumption that nothing
rebinds it meanwhile). Each goes through ``check_pair`` (the sandbox loads both modules),
without random search, so a verdict is the proof's alone.
"""

from __future__ import annotations

import pytest

from veribot.checks.equivalence import Budget, check_pair
from veribot.checks.verdict import Verdict

BUDGET = Budget(timeout_s=10, search=False)

PAIRS = [
    ('tempfile-lifetime', 'not-verified', """
import tempfile
def f(use):
    tmp = tempfile.NamedTemporaryFile()
    name = tmp.name
    return use(name)
""", """
import tempfile
def f(use):
    name = tempfile.NamedTemporaryFile().name
    return use(name)
"""),
    ('rebind-holds-across-call', 'not-verified', """
def f(g, h, a, b):
    x = g(a)
    x = h(b)
    return x
""", """
def f(g, h, a, b):
    g(a)
    return h(b)
"""),
    ('global-read-moved-across-call', 'verified', """
X = 1
def f(g):
    v = X
    g()
    return v
""", """
X = 1
def f(g):
    g()
    return X
"""),
    ('genfunc-vs-genexp', 'not-verified', """
def f(it, g):
    for x in it:
        yield g(x)
""", """
def f(it, g):
    return (g(x) for x in it)
"""),
    ('alias-fresh', 'not-verified', """
def f(g):
    a = []
    b = a
    b.append(1)
    return g(a)
""", """
def f(g):
    a = []
    return g(a)
"""),
    ('append-after-escape', 'not-verified', """
def f(g):
    a = []
    g(a)
    a.append(1)
    return a
""", """
def f(g):
    a = []
    a.append(1)
    g(a)
    return a
"""),
    ('loop-else', 'not-verified', """
def f(xs, g):
    for x in xs:
        if g(x):
            break
    else:
        return 1
    return 2
""", """
def f(xs, g):
    for x in xs:
        if g(x):
            break
    return 2
"""),
    ('comp-vs-loop', 'verified', """
def f(xs, g):
    out = []
    for x in xs:
        out.append(g(x))
    return out
""", """
def f(xs, g):
    return [g(x) for x in xs]
"""),
    ('ternary', 'verified', """
def f(a, x, y):
    if a:
        return x
    return y
""", """
def f(a, x, y):
    return x if a else y
"""),
    ('extract-var', 'verified', """
def f(g, h, a):
    return h(g(a), a)
""", """
def f(g, h, a):
    t = g(a)
    return h(t, a)
"""),
    ('mutable-default', 'not-verified', """
def f(x, acc=[]):
    acc.append(x)
    return len(acc)
""", """
def f(x, acc=None):
    acc = [] if acc is None else acc
    acc.append(x)
    return len(acc)
"""),
    ('closure-late-binding', 'not-verified', """
def f(g):
    k = 1
    fn = lambda: k
    k = 2
    return g(fn)
""", """
def f(g):
    k = 1
    fn = lambda: k
    return g(fn)
"""),
    ('while-counter', 'not-verified', """
def f(n, g):
    i = 0
    while i < n:
        g(i)
        i += 1
""", """
def f(n, g):
    i = 0
    while i < n:
        g(i)
        i = i + 1
"""),
    ('try-return-finally', 'not-verified', """
def f(g, h):
    try:
        return g()
    finally:
        h()
""", """
def f(g, h):
    r = g()
    h()
    return r
"""),
    ('exc-var-cleared', 'not-verified', """
def f(g, h):
    e = None
    try:
        g()
    except ValueError as e:
        pass
    return h(e)
""", """
def f(g, h):
    e = None
    try:
        g()
    except ValueError:
        pass
    return h(e)
"""),
    ('iter-twice', 'not-verified', """
def f(it, g):
    for x in it:
        g(x)
    for x in it:
        g(x)
""", """
def f(it, g):
    for x in it:
        g(x)
        g(x)
"""),
    ('swap-if-bool-of-flag', 'verified', """
def f(a, b, g):
    if not a:
        return g(b)
    else:
        return b
""", """
def f(a, b, g):
    if a:
        return b
    return g(b)
"""),
    ('stop-iteration-in-gen', 'not-verified', """
def f(it):
    yield next(it)
""", """
def f(it):
    for x in it:
        yield x
        break
"""),
    ('dict-order', 'not-verified', """
def f(a, b):
    return {a: 1, b: 2}
""", """
def f(a, b):
    d = {b: 2}
    d[a] = 1
    return d
"""),
    ('chained-compare', 'verified', """
def f(a, b, c):
    return a < b < c
""", """
def f(a, b, c):
    return a < b and b < c
"""),
    ('with-suppress-unbound', 'not-verified', """
def f(cm, g):
    with cm:
        x = g()
    return x
""", """
def f(cm, g):
    with cm:
        return g()
"""),
    ('try-pass-unbound', 'not-verified', """
def f(g):
    try:
        x = g()
    except ValueError:
        pass
    return x
""", """
def f(g):
    try:
        return g()
    except ValueError:
        pass
"""),
    ('kwargs-order', 'not-verified', """
def f(g):
    return g(a=1, b=2)
""", """
def f(g):
    return g(b=2, a=1)
"""),
    ('set-order', 'not-verified', """
def f(a, b):
    return list({a, b})
""", """
def f(a, b):
    return list({b, a})
"""),
    ('dict-display-order', 'not-verified', """
def f(a, b):
    return {a: 1, b: 2}
""", """
def f(a, b):
    return {b: 2, a: 1}
"""),
    ('with-return-inside', 'not-verified', """
def f(cm, g):
    with cm:
        r = g()
    return r
""", """
def f(cm, g):
    with cm:
        return g()
"""),
    ('or-value', 'not-verified', """
def f(a, b):
    return a or b
""", """
def f(a, b):
    return True if a else b
"""),
    ('swap-unpack', 'verified', """
def f(a, b, g):
    a, b = b, a
    return g(a, b)
""", """
def f(a, b, g):
    return g(b, a)
"""),
    ('gen-try-finally-close', 'not-verified', """
def f(it, h):
    try:
        for x in it:
            yield x
    finally:
        h()
""", """
def f(it, h):
    for x in it:
        yield x
    h()
"""),
    ('loop-prev-held', 'not-verified', """
def f(xs, g):
    for x in xs:
        y = g(x)
""", """
def f(xs, g):
    for x in xs:
        g(x)
"""),
    ('star-vs-list', 'not-verified', """
def f(g, xs):
    return g(*xs)
""", """
def f(g, xs):
    return g(*list(xs))
"""),
    ('genexp-arg-laziness', 'not-verified', """
def f(g, h, xs):
    return g(h(x) for x in xs)
""", """
def f(g, h, xs):
    return g([h(x) for x in xs])
"""),
    ('fstring-vs-str', 'not-verified', """
def f(x):
    return f"{x}"
""", """
def f(x):
    return str(x)
"""),
    ('return-in-finally-swallow', 'not-verified', """
def f(g):
    try:
        g()
    finally:
        return 1
""", """
def f(g):
    g()
    return 1
"""),
    ('recursion-changed', 'not-verified', """
def f(n, g):
    if n:
        return f(g(n), g)
    return 0
""", """
def f(n, g):
    if n:
        return f(g(n), g) + 0
    return 1
"""),
    ('genexp-stopiteration', 'not-verified', """
def f(it, xs):
    return [next(it) for _ in xs]
""", """
def f(it, xs):
    return list(next(it) for _ in xs)
"""),
    ('genfunc-stopiteration', 'not-verified', """
def f(it, xs):
    out = []
    for _ in xs:
        out.append(next(it))
    return out
""", """
def f(it, xs):
    return list(next(it) for _ in xs)
"""),
    ('tuple-genexp-vs-listcomp-type', 'not-verified', """
def f(g, xs):
    return tuple(g(x) for x in xs)
""", """
def f(g, xs):
    return [g(x) for x in xs]
"""),
    ('gen-vs-plain', 'not-verified', """
def f(g):
    return g()
    yield
""", """
def f(g):
    return g()
"""),
    ('decorator-changed', 'not-verified', """
import functools
@functools.lru_cache(maxsize=None)
def f(g, x):
    y = g(x)
    return y
""", """
import functools
def f(g, x):
    return g(x)
"""),
    ('lambda-default-changed', 'not-verified', """
def f(g):
    return g(lambda a=1: a)
""", """
def f(g):
    return g(lambda a=2: a)
"""),
    ('async-def', 'not-verified', """
async def f(g):
    x = g()
    return x
""", """
async def f(g):
    return g()
"""),
    ('exc-handled-visible', 'not-verified', """
def f(g, h):
    try:
        g()
    except ValueError:
        return h()
""", """
def f(g, h):
    try:
        g()
    except ValueError:
        pass
    else:
        return None
    return h()
"""),
    ('global-rebound-by-module-code', 'not-verified', """
X = 1
def reset():
    global X
    X = 2
def f(g):
    v = X
    g()
    return v
""", """
X = 1
def reset():
    global X
    X = 2
def f(g):
    g()
    return X
"""),
]


@pytest.mark.parametrize(("name", "expect", "before", "after"), PAIRS,
                         ids=[p[0] for p in PAIRS])
def test_reviewer_pair(name: str, expect: str, before: str, after: str) -> None:
    result = check_pair(before, after, "f", budget=BUDGET)
    if expect == "verified":
        assert result.verdict is Verdict.VERIFIED, result.detail
        assert "relative to" in result.detail
        # A module name read after a call instead of before it is the same value only if
        # nothing rebinds it meanwhile: the verdict says so.
        assert any("not reassigned while it runs" in a for a in result.assumptions)
    else:
        assert result.verdict is not Verdict.VERIFIED, (result.method, result.detail)
