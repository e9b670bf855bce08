"""The relational check relative to callees: code that differs but makes the same calls.

Refactorings that keep every call and operation a function makes (extract or inline a
variable, flip an `if` with `not`, return early, a loop into a comprehension, nested
`with` into one) are verified relative to those calls; every change an attacker of the
engine can make to what is called, with what, in which order, or how often, must not be.
Each pair goes through ``check_pair``, so the sandbox loads both modules too.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

import pytest

from veribot.checks.equivalence import Budget, check_pair
from veribot.checks.relational import check as relational
from veribot.checks.verdict import Verdict

BUDGET = Budget(timeout_s=6, search=False)

MINMAX_BEFORE = """\
from itertools import zip_longest
def minmax(iterable, lo, hi):
    it = iter(iterable)
    for x, y in zip_longest(it, it, fillvalue=lo):
        if y < x:
            x, y = y, x
        if x < lo:
            lo = x
        if hi < y:
            hi = y
    return lo, hi
"""
MINMAX_AFTER = """\
from itertools import zip_longest
def minmax(iterable, lo, hi):
    it = iter(iterable)
    for x, y in zip_longest(it, it, fillvalue=lo):
        if y < x:
            if y < lo:
                lo = y
            if hi < x:
                hi = x
        else:
            if x < lo:
                lo = x
            if hi < y:
                hi = y
    return lo, hi
"""

# (name, before, after, entry)
EQUIVALENT: list[tuple[str, str, str, str]] = [
    # The swap's locals are dead at the loop head: the same multiset of objects is held
    # there and let go of when the next pair comes (``test_dead_locals``).
    ("minmax-swap-removed", MINMAX_BEFORE, MINMAX_AFTER, "minmax"),
    ("rename-and-extract-variable",
     "def f(get, k):\n    return get(k.strip())\n",
     "def f(get, k):\n    key = k.strip()\n    value = get(key)\n    return value\n", "f"),
    ("inline-variable",
     "import logging\ndef f(x):\n    msg = x.name\n    logging.info(msg)\n",
     "import logging\ndef f(x):\n    logging.info(x.name)\n", "f"),
    ("flip-if-with-not",
     "def f(c, a, b):\n    if not c:\n        r = a()\n    else:\n        r = b()\n    return r\n",
     "def f(c, a, b):\n    if c:\n        r = b()\n"
     "    else:\n        r = a()\n    return r\n", "f"),
    ("early-return",
     "def f(c, a, b):\n    if c.ok():\n        out = a(c)\n    else:\n        out = b(c)\n"
     "    return out\n",
     "def f(c, a, b):\n    if c.ok():\n        return a(c)\n    return b(c)\n", "f"),
    ("loop-append-to-comprehension",
     "def f(g, it):\n    out = []\n    for x in it:\n        out.append(g(x))\n    return out\n",
     "def f(g, it):\n    return [g(y) for y in it]\n", "f"),
    ("filtered-loop-to-comprehension",
     "def f(g, it):\n    out = []\n    for x in it:\n        if x.ok:\n"
     "            out.append(g(x))\n"
     "    return out\n",
     "def f(g, it):\n    return [g(x) for x in it if x.ok]\n", "f"),
    ("nested-with-to-combined",
     "def f(a, b, g):\n    with a:\n        with b as y:\n            return g(y)\n",
     "def f(a, b, g):\n    with a, b as y:\n        return g(y)\n", "f"),
    ("while-loop-with-renamed-counter",
     "def f(n, g):\n    i = 0\n    while i < n:\n        g(i)\n        i += 1\n    return i\n",
     "def f(n, g):\n    k = 0\n    while k < n:\n        g(k)\n        k += 1\n    return k\n",
     "f"),
    ("method-self-attribute",
     "class C:\n    def m(self, k):\n        d = self.data\n"
     "        v = d.get(k)\n        return v\n",
     "class C:\n    def m(self, k):\n        return self.data.get(k)\n", "C.m"),
    ("guard-clause-in-loop",
     "def f(xs, g):\n    for x in xs:\n        if x:\n            g(x)\n",
     "def f(xs, g):\n    for x in xs:\n        if not x:\n"
     "            continue\n        g(x)\n", "f"),
    ("yield-loop-already-handled",
     "def f(it):\n    for x in it:\n        yield x\n",
     "def f(it):\n    yield from it\n", "f"),
    ("fstring-extracted",
     "def f(name, n):\n    print(f'{name}: {n!r}')\n",
     "def f(name, n):\n    text = f'{name}: {n!r}'\n    print(text)\n", "f"),
]

EQUIVALENT += [
    ("try-except-renamed-and-extracted",
     "def f(g, log):\n    try:\n        v = g()\n    except ValueError as e:\n"
     "        log(e)\n        return None\n    return v\n",
     "def f(g, log):\n    try:\n        return g()\n    except ValueError as err:\n"
     "        log(err)\n", "f"),
    ("try-finally-early-return",
     "def f(lock, g):\n    lock.acquire()\n    try:\n        r = g()\n    finally:\n"
     "        lock.release()\n    return r\n",
     "def f(lock, g):\n    lock.acquire()\n    try:\n        return g()\n    finally:\n"
     "        lock.release()\n", "f"),
    ("lambda-extracted",
     "def f(xs, scale):\n    return sorted(xs, key=lambda x: x.k * scale)\n",
     "def f(xs, scale):\n    key = lambda x: x.k * scale\n    out = sorted(xs, key=key)\n"
     "    return out\n", "f"),
    ("generator-expression-renamed",
     "def f(xs, g):\n    return sum(g(x) for x in xs if x)\n",
     "def f(xs, g):\n    total = sum(g(v) for v in xs if v)\n    return total\n", "f"),
    ("super-call-extracted",
     "class B:\n    def m(self, x):\n        return x\nclass C(B):\n    def m(self, x):\n"
     "        r = super().m(x)\n        return r\n",
     "class B:\n    def m(self, x):\n        return x\nclass C(B):\n    def m(self, x):\n"
     "        return super().m(x)\n", "C.m"),
    ("starred-display-extracted",
     "def f(g, a, *others):\n    return g((a, *others))\n",
     "def f(g, a, *others):\n    t = (a, *others)\n    return g(t)\n", "f"),
    ("loop-sums-with-a-flipped-test",  # the induction splits `i` from `s` after one round
     "def f(xs):\n    i = 0\n    s = 0\n    for x in xs:\n        i = i + 1\n        if x:\n"
     "            s = s + x\n    return i, s\n",
     "def f(xs):\n    n = 0\n    t = 0\n    for y in xs:\n        n = n + 1\n        if not y:\n"
     "            pass\n        else:\n            t = t + y\n    return n, t\n", "f"),
    ("tuple-of-generator-both-sides",
     "def f(pool, indices):\n    return tuple(pool[i] for i in indices)\n",
     "def f(pool, indices):\n    return tuple(pool[j] for j in indices)\n", "f"),
    ("reraise-kept",
     "def f(g, h):\n    try:\n        g()\n    except KeyError:\n        h()\n        raise\n",
     "def f(g, h):\n    try:\n        g()\n    except KeyError:\n        h()\n        raise\n"
     "    return None\n", "f"),
]

# (name, before, after, entry): not the same calls, or not shown to be.
DIFFERING: list[tuple[str, str, str, str]] = [
    # A StopIteration that `pool[i]` or `g(x)` raises leaves a generator expression as a
    # RuntimeError (PEP 479), but passes through a comprehension as it is.
    ("tuple-of-generator-to-tuple-of-list",
     "def f(pool, indices):\n    return tuple(pool[i] for i in indices)\n",
     "def f(pool, indices):\n    return tuple([pool[i] for i in indices])\n", "f"),
    ("list-of-generator-to-comprehension",
     "def f(g, xs):\n    return list(g(x) for x in xs if x)\n",
     "def f(g, xs):\n    return [g(x) for x in xs if x]\n", "f"),
    ("break-to-continue",
     "def f(xs, g):\n    for x in xs:\n        if g(x):\n            break\n        g(x)\n",
     "def f(xs, g):\n    for x in xs:\n        if g(x):\n"
     "            continue\n        g(x)\n", "f"),
    ("effectful-calls-swapped",
     "def f(a, b):\n    a.save()\n    b.save()\n",
     "def f(a, b):\n    b.save()\n    a.save()\n", "f"),
    ("dropped-reset",
     "class C:\n    def m(self, x):\n        self.reset()\n        return self.run(x)\n",
     "class C:\n    def m(self, x):\n        return self.run(x)\n", "C.m"),
    ("second-next",
     "def f(it):\n    a = next(it)\n    return a\n",
     "def f(it):\n    next(it)\n    a = next(it)\n    return a\n", "f"),
    ("mutation-after-escape",
     "def f(g):\n    out = []\n    g(out)\n    out.append(1)\n    return 0\n",
     "def f(g):\n    out = []\n    out.append(1)\n    g(out)\n    return 0\n", "f"),
    ("mutation-through-alias",
     "def f(g):\n    a = []\n    b = a\n    b.append(1)\n    return g(a)\n",
     "def f(g):\n    a = []\n    b = []\n    b.append(1)\n    return g(a)\n", "f"),
    ("inplace-versus-binary",
     "def f(x, y):\n    x += y\n    return x\n",
     "def f(x, y):\n    x = x + y\n    return x\n", "f"),
    ("not-le-versus-gt",
     "def f(a, b):\n    return not a <= b\n",
     "def f(a, b):\n    return b < a\n", "f"),
    ("in-tuple-versus-eq",
     "def f(rv):\n    return rv in (b'-', '-')\n",
     "def f(rv):\n    return rv == '-'\n", "f"),
    ("try-except-in-one-version",  # caught in one version only
     "def f(g):\n    try:\n        return g()\n    except ValueError:\n        return None\n",
     "def f(g):\n    return g()\n", "f"),
    ("argument-evaluation-order",
     "def f(g, h, k):\n    return k(g(), h())\n",
     "def f(g, h, k):\n    b = h()\n    a = g()\n    return k(a, b)\n", "f"),
    ("default-changed",
     "def f(g, x=1):\n    y = g(x)\n    return y\n",
     "def f(g, x=2):\n    return g(x)\n", "f"),
    ("iteration-count-differs",
     "def f(n, g):\n    i = 0\n    while i < n:\n        g(i)\n        i += 1\n",
     "def f(n, g):\n    i = 0\n    while i <= n:\n        g(i)\n        i += 1\n", "f"),
    ("extra-iteration-by-one",
     "def f(n, g):\n    i = 0\n    while i < n:\n        g(i)\n        i = i + 1\n",
     "def f(n, g):\n    i = 1\n    while i < n:\n        g(i)\n        i = i + 1\n", "f"),
    ("comprehension-variable-versus-loop-variable",
     "def f(xs, g):\n    x = 0\n    ys = [g(x) for x in xs]\n    return x, ys\n",
     "def f(xs, g):\n    x = 0\n    ys = []\n    for x in xs:\n        ys.append(g(x))\n"
     "    return x, ys\n", "f"),
    ("constants-of-other-types",
     "def f(g):\n    return g(1)\n", "def f(g):\n    return g(1.0)\n", "f"),
    ("true-versus-one",
     "def f(g):\n    return g(True)\n", "def f(g):\n    return g(1)\n", "f"),
    ("returned-list-aliased",
     "def f(g):\n    a = [g()]\n    return a, a\n",
     "def f(g):\n    v = g()\n    return [v], [v]\n", "f"),
    ("with-dropped",
     "def f(lock, g):\n    with lock:\n        return g()\n",
     "def f(lock, g):\n    return g()\n", "f"),
    ("with-exit-suppression-ignored",
     "def f(m, g, h):\n    with m:\n        g()\n    return h()\n",
     "def f(m, g, h):\n    with m:\n        g()\n        return h()\n", "f"),
    ("loop-accumulates-differently",
     "def f(xs):\n    total = 0\n    for x in xs:\n        total = total + x\n    return total\n",
     "def f(xs):\n    total = 0\n    for x in xs:\n        total = x + total\n    return total\n",
     "f"),
    ("loop-variable-read-after-loop",
     "def f(xs, g):\n    last = None\n    for x in xs:\n        last = g(x)\n    return last\n",
     "def f(xs, g):\n    last = None\n    for x in xs:\n        g(x)\n    return last\n", "f"),
    ("generator-versus-list",
     "def f(g, xs):\n    for x in xs:\n        yield g(x)\n",
     "def f(g, xs):\n    return [g(x) for x in xs]\n", "f"),
    ("iterator-reused-after-break",
     "def f(it, g):\n    it = iter(it)\n    for x in it:\n        if g(x):\n            break\n"
     "    return list(it)\n",
     "def f(it, g):\n    it = iter(it)\n    for x in it:\n        if g(x):\n            break\n"
     "    return list(iter(it))\n", "f"),
    ("starred-versus-plain-item",
     "def f(g, a, b):\n    return g((a, *b))\n", "def f(g, a, b):\n    return g((a, b))\n", "f"),
    ("lambda-reads-a-rebound-local",  # late binding: the lambda sees the last value
     "def f(g):\n    k = 1\n    h = lambda: k\n    k = 2\n    return g(h)\n",
     "def f(g):\n    k = 1\n    h = lambda: 1\n    k = 2\n    return g(h)\n", "f"),
    ("lambda-body-differs",
     "def f(xs):\n    return sorted(xs, key=lambda x: x.k)\n",
     "def f(xs):\n    return sorted(xs, key=lambda x: x.j)\n", "f"),
    ("one-closure-passed-twice-versus-two",
     "def f(g):\n    h = lambda: 0\n    return g(h, h)\n",
     "def f(g):\n    return g(lambda: 0, lambda: 0)\n", "f"),
    ("generator-expression-iterates-another-value",
     "def f(xs, ys, g):\n    return g(x for x in xs)\n",
     "def f(xs, ys, g):\n    return g(x for x in ys)\n", "f"),
    ("lambda-default-differs",
     "def f(g, a, b):\n    return g(lambda x=a: x)\n",
     "def f(g, a, b):\n    return g(lambda x=b: x)\n", "f"),
    ("list-appended-after-its-argument-handed-it-out",
     "def f(g, h):\n    out = []\n    out.append(g(out))\n    h()\n    return 0\n",
     "def f(g, h):\n    out = []\n    g(out)\n    h()\n    return 0\n", "f"),
    ("handler-deletes-a-local-read-in-the-next-iteration",
     "def f(xs, g):\n    e = 1\n    for x in xs:\n        g(e)\n        try:\n            g(x)\n"
     "        except ValueError as e:\n            pass\n",
     "def f(xs, g):\n    e = 1\n    for x in xs:\n        g(e)\n        try:\n            g(x)\n"
     "        except ValueError as err:\n            pass\n", "f"),
    ("super-after-self-rebound",
     "class B:\n    def m(self, x):\n        return x\nclass C(B):\n    def m(self, x):\n"
     "        return super().m(x)\n",
     "class B:\n    def m(self, x):\n        return x\nclass C(B):\n    def m(self, x):\n"
     "        self = x\n        return super().m(x)\n", "C.m"),
    ("generator-handed-on-versus-tuple",  # a generator runs as its consumer asks
     "def f(g, pool, xs):\n    return g(tuple(pool[i] for i in xs))\n",
     "def f(g, pool, xs):\n    return g(pool[i] for i in xs)\n", "f"),
    ("tuple-shadowed-locally",
     "def f(pool, xs, tuple):\n    return tuple(pool[i] for i in xs)\n",
     "def f(pool, xs, tuple):\n    return tuple([pool[i] for i in xs])\n", "f"),
    ("list-copy-is-a-new-object",
     "def f(g, xs):\n    a = [g(x) for x in xs]\n    return a, a\n",
     "def f(g, xs):\n    a = [g(x) for x in xs]\n    return a, list(a)\n", "f"),
    ("loop-counters-swapped-at-the-end",
     "def f(xs):\n    i = 0\n    s = 0\n    for x in xs:\n        i = i + 1\n        s = s + x\n"
     "    return i, s\n",
     "def f(xs):\n    n = 0\n    t = 0\n    for y in xs:\n        n = n + 1\n        v = t + y\n"
     "        t = v\n    return t, n\n", "f"),
    # When a version lets go of an object runs its finalizer (a file's close and flush).
    ("file-closed-before-a-later-call",
     "def f(p, s, g):\n    h = open(p, 'w')\n    h.write(s)\n    return g(p)\n",
     "def f(p, s, g):\n    open(p, 'w').write(s)\n    return g(p)\n", "f"),
    ("result-kept-across-a-call",
     "def f(make, g):\n    x = make()\n    g()\n",
     "def f(make, g):\n    make()\n    g()\n", "f"),
    ("generator-parameter-let-go-of-before-a-call",  # only the generator holds `p`
     "def f(p, h):\n    p = None\n    x = h()\n    yield x\n",
     "def f(p, h):\n    x = h()\n    p = None\n    yield x\n", "f"),
    ("call-moved-into-the-try",
     "def f(g, h):\n    x = g()\n    try:\n        return h(x)\n    except ValueError:\n"
     "        return None\n",
     "def f(g, h):\n    try:\n        x = g()\n        return h(x)\n    except ValueError:\n"
     "        return None\n", "f"),
    ("handlers-swapped",
     "def f(g):\n    try:\n        return g()\n    except KeyError:\n        return 1\n"
     "    except LookupError:\n        return 2\n",
     "def f(g):\n    try:\n        return g()\n    except LookupError:\n        return 2\n"
     "    except KeyError:\n        return 1\n", "f"),
    ("exception-type-widened",
     "def f(g):\n    try:\n        return g()\n    except Exception:\n        return 1\n",
     "def f(g):\n    try:\n        return g()\n    except BaseException:\n        return 1\n", "f"),
    ("handler-variable-read-after-the-handler",
     "def f(g):\n    e = 0\n    try:\n        g()\n    except ValueError as e:\n        pass\n"
     "    return e\n",
     "def f(g):\n    e = 0\n    try:\n        g()\n    except ValueError as x:\n        pass\n"
     "    return e\n", "f"),
    ("finally-dropped",
     "def f(g, h):\n    try:\n        return g()\n    finally:\n        h()\n",
     "def f(g, h):\n    r = g()\n    h()\n    return r\n", "f"),
    ("raise-from-added",
     "def f(g):\n    try:\n        return g()\n    except KeyError as e:\n"
     "        raise ValueError('x')\n",
     "def f(g):\n    try:\n        return g()\n    except KeyError as e:\n"
     "        raise ValueError('x') from e\n", "f"),
    ("raise-outside-the-handler",  # the implicit context of the new exception differs
     "def f(g):\n    try:\n        g()\n    except KeyError:\n        raise ValueError('x')\n",
     "def f(g):\n    try:\n        g()\n    except KeyError:\n        failed = True\n"
     "    else:\n        failed = False\n    if failed:\n        raise ValueError('x')\n", "f"),
    # The method is looked up before its arguments are evaluated.
    ("method-looked-up-after-its-argument",
     "def f(db, k):\n    return db.get(k.strip())\n",
     "def f(db, k):\n    key = k.strip()\n    return db.get(key)\n", "f"),
    ("attribute-read-twice",
     "def f(o):\n    a = o.x\n    return a, a\n",
     "def f(o):\n    return o.x, o.x\n", "f"),
]


@pytest.mark.parametrize(("name", "before", "after", "entry"), EQUIVALENT,
                         ids=[c[0] for c in EQUIVALENT])
def test_same_calls_are_verified_relative_to_callees(
    name: str, before: str, after: str, entry: str
) -> None:
    result = check_pair(before, after, entry, budget=BUDGET)
    assert result.verdict is Verdict.VERIFIED, result
    assert result.method in (relational.METHOD, relational.METHOD_RELATIVE) or (
        result.method.startswith("smt")), result


@pytest.mark.parametrize(("name", "before", "after", "entry"), DIFFERING,
                         ids=[c[0] for c in DIFFERING])
def test_other_calls_are_not_verified(name: str, before: str, after: str, entry: str) -> None:
    assert relational.check(before, after, ast.parse(before), ast.parse(after), entry,
                            relational.Limits(), relative=True) is None
    result = check_pair(before, after, entry, budget=BUDGET)
    assert result.verdict is not Verdict.VERIFIED, result


SENTINEL = "from dataclasses import MISSING, KW_ONLY\n"


def test_a_default_that_is_an_imported_sentinel_is_confirmed_by_its_name() -> None:
    before = SENTINEL + "def f(g, x=MISSING):\n    y = g(x)\n    return y\n"
    after = SENTINEL + "def f(g, x=MISSING):\n    return g(x)\n"
    result = check_pair(before, after, "f", budget=BUDGET)
    assert result.verdict is Verdict.VERIFIED, result
    assert result.method == relational.METHOD_RELATIVE


def test_a_default_swapped_for_another_named_object_is_not_verified() -> None:
    before = SENTINEL + "def f(g, x=MISSING):\n    y = g(x, KW_ONLY)\n    return y\n"
    after = (SENTINEL + "def f(g, x=MISSING):\n    return g(x, KW_ONLY)\n"
             "f.__defaults__ = (KW_ONLY,)\n")
    assert relational.check(before, after, ast.parse(before), ast.parse(after), "f",
                            relational.Limits(), relative=True) is None
    assert check_pair(before, after, "f", budget=BUDGET).verdict is not Verdict.VERIFIED


def test_the_verdict_names_the_callees_it_assumes() -> None:
    before = ("from itertools import zip_longest\ndef f(a, b, lo):\n"
              "    for x, y in zip_longest(a, b, fillvalue=lo):\n        if not y < x:\n"
              "            lo = x\n    return lo\n")
    after = before.replace("if not y < x:\n            lo = x\n",
                           "if y < x:\n            pass\n        else:\n            lo = x\n")
    result = check_pair(before, after, "f", budget=BUDGET)
    assert result.method == relational.METHOD_RELATIVE, result
    assumed = " ".join(result.assumptions)
    assert "`itertools.zip_longest`" in assumed and "`<`" in assumed
    assert "deterministic given its arguments and the state" in assumed


def test_the_model_decides_where_it_covers_the_code() -> None:
    """The relative check runs after the model: a pair the model proves keeps its proof."""
    before = "def f(x: int, y: int) -> int:\n    s = x + y\n    return s * 2\n"
    after = "def f(x: int, y: int) -> int:\n    return (x + y) * 2\n"
    result = check_pair(before, after, "f", budget=BUDGET)
    assert result.verdict is Verdict.VERIFIED, result
    assert result.method != relational.METHOD_RELATIVE
    assert relational.check(before, after, ast.parse(before), ast.parse(after), "f",
                            relational.Limits(), relative=True) is not None


def test_execution_off_never_verifies_relative_to_callees() -> None:
    _, before, after, entry = next(c for c in EQUIVALENT if c[0] == "early-return")
    result = check_pair(before, after, entry, budget=Budget(timeout_s=3, execute=False))
    assert result.verdict is not Verdict.VERIFIED


def test_a_loop_round_that_regroups_its_equalities_is_not_taken_as_stable() -> None:
    """Two rounds may have as many classes yet group the locals otherwise: the equalities
    a round assumed are inductive only if its back edges split none of its classes."""
    from veribot.checks.relational import opaque
    from veribot.checks.relational.terms import Res, const
    from veribot.checks.relational.walker import Head

    zero = (const(0),)
    head = Head({("var", 0, "x"): zero, ("var", 0, "y"): zero})
    loop = opaque._Loop.at(1, head, head)
    assert len(set(loop.classes.values())) == 1
    r1, r2 = (Res(1),), (Res(2),)
    loop.backs = [{("a", ("var", 0, "x")): r1, ("a", ("var", 0, "y")): r1,
                   ("b", ("var", 0, "x")): r2, ("b", ("var", 0, "y")): r2}]
    assert loop.refine()  # {a.x, a.y} and {b.x, b.y}
    loop.backs = [{("a", ("var", 0, "x")): r1, ("a", ("var", 0, "y")): r2,
                   ("b", ("var", 0, "x")): r1, ("b", ("var", 0, "y")): r2}]
    assert loop.refine()  # the same number of groups by value, but a.x != a.y now
    assert len(set(loop.classes.values())) == 4


def test_the_minmax_versions_let_go_of_items_in_another_order() -> None:
    """What the proof of the swap's removal assumes: with items whose finalizers are seen,
    the two versions finalize a pair's two items in another order, both when the next pair
    comes (between the same two operations). The verdict lists that finalizers of objects
    let go of between the same two operations do not depend on their order."""
    class V:
        def __init__(self, v: float, log: list[float]) -> None:
            self.v, self.log = v, log

        def __lt__(self, other: V) -> bool:
            return self.v < other.v

        def __del__(self) -> None:
            self.log.append(self.v)

    orders = []
    for source in (MINMAX_BEFORE, MINMAX_AFTER):
        log: list[float] = []
        space: dict[str, object] = {}
        exec(compile(source, "minmax", "exec"), space)  # test-owned code, not reviewed code
        minmax = space["minmax"]
        assert callable(minmax)
        def items(log: list[float] = log) -> Iterator[V]:
            for v in (5, 6, 9, 8, 5.5, 5.6, 7, 6.5):
                yield V(v, log)  # held by nobody else

        minmax(items(), V(5.2, log), V(5.3, log))
        orders.append([v for v in log if v in (6.5, 7)])
    assert orders == [[6.5, 7], [7, 6.5]]
