"""Locals dead at a loop head, compared as a multiset (more-itertools f7b44bb, `minmax`).

`if y < x: x, y = y, x` and then reading `x` and `y` is the same as two branches reading
them the other way round: only which local holds which item differs, and the locals are
dead at the loop head (the next item rebinds both before any read). What each version
holds there is the same multiset of objects, let go of at the same point. Each pair below
breaks that (a local read after the loop, rebound alone elsewhere, bound another way,
captured by a closure) and must not be verified; the swap shapes keep their proof.
"""

from __future__ import annotations

import pytest

from veribot.checks.equivalence import Budget, check_pair
from veribot.checks.project.package import Package, PairContext
from veribot.checks.verdict import Verdict

BUDGET = Budget(timeout_s=10, search=False)

SWAP = '''def f(it, lo, hi):
    for x, y in it:
        if y < x:
            x, y = y, x
        if x < lo:
            lo = x
        if hi < y:
            hi = y
{tail}    return lo, hi
'''
BRANCHES = '''def f(it, lo, hi):
    for x, y in it:
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
{tail}    return lo, hi
'''
KEYED_SWAP = '''def f(it, lo, hi, key):
    lo_key = hi_key = key(lo)
    for x, y in it:
        x_key, y_key = key(x), key(y)
        if y_key < x_key:
            x, y, x_key, y_key = y, x, y_key, x_key
        if x_key < lo_key:
            lo, lo_key = x, x_key
        if hi_key < y_key:
            hi, hi_key = y, y_key
    return lo, hi
'''
KEYED_BRANCHES = '''def f(it, lo, hi, key):
    lo_key = hi_key = key(lo)
    for x, y in it:
        x_key, y_key = key(x), key(y)
        if y_key < x_key:
            if y_key < lo_key:
                lo, lo_key = y, y_key
            if hi_key < x_key:
                hi, hi_key = x, x_key
        else:
            if x_key < lo_key:
                lo, lo_key = x, x_key
            if hi_key < y_key:
                hi, hi_key = y, y_key
    return lo, hi
'''


def test_a_swap_of_dead_locals_is_two_branches() -> None:
    r = check_pair(SWAP.format(tail=""), BRANCHES.format(tail=""), "f", budget=BUDGET)
    assert r.verdict is Verdict.VERIFIED, r.detail
    r = check_pair(KEYED_SWAP, KEYED_BRANCHES, "f", budget=BUDGET)
    assert r.verdict is Verdict.VERIFIED, r.detail


NOT_VERIFIED = [
    # Read after the loop: the last pair, swapped or not.
    ("read-after-the-loop", "    lo = (lo, x)\n"),
    # Rebound alone by another loop: one object let go of there, another in the other.
    ("rebound-alone-by-another-loop", "    for x in (0,):\n        pass\n"),
    # Bound otherwise after the loop: `except ... as x` lets go of what `x` held.
    ("bound-by-an-except", "    try:\n        raise ValueError\n    except ValueError as x:\n"
     "        pass\n"),
    # A closure made after the loop reads the last `y`.
    ("read-by-a-closure", "    g = lambda: y\n    lo = (lo, g())\n"),
]


@pytest.mark.parametrize("tail", [t for _, t in NOT_VERIFIED], ids=[n for n, _ in NOT_VERIFIED])
def test_not_verified(tail: str) -> None:
    r = check_pair(SWAP.format(tail=tail), BRANCHES.format(tail=tail), "f", budget=BUDGET)
    assert r.verdict is not Verdict.VERIFIED, r.detail


def test_a_group_rebound_whole_by_another_loop_keeps_the_proof() -> None:
    tail = "    for x, y in ((0, 1),):\n        lo = (lo, x, y)\n"
    r = check_pair(SWAP.format(tail=tail), BRANCHES.format(tail=tail), "f", budget=BUDGET)
    assert r.verdict is Verdict.VERIFIED, r.detail


SENTINEL_A = ("from .sent import _marker\n\n\ndef f(it, default=_marker):\n"
              "    x = default\n    if x is _marker:\n        return list(it)\n    return x\n")
SENTINEL_B = ("from .sent import _marker\n\n\ndef f(it, default=_marker):\n"
              "    if default is _marker:\n        return list(it)\n    return default\n")


def sentinel_context(sent: str, init: str = "from . import mod\n") -> PairContext:
    files = (("pkg/__init__.py", init), ("pkg/sent.py", sent))
    package = Package("pkg.mod", "pkg/mod.py", "", files)
    return PairContext(package, package)


def test_a_sentinel_of_another_file_is_compared_by_identity() -> None:
    # more-itertools' `_marker = object()` in recipes.py, read by more.py, which the
    # package's `__init__` imports: an object of the project, but one without state.
    r = check_pair(SENTINEL_A, SENTINEL_B, "f", budget=BUDGET,
                   context=sentinel_context("_marker = object()\n"))
    assert r.verdict is Verdict.VERIFIED, r.detail


@pytest.mark.parametrize("sent", [
    # The sentinel's file imports the module under review: it may be one of its objects.
    "from . import mod\n_marker = object()\n",
    # Bound twice, or not by `object()`.
    "_marker = object()\n_marker = mod_marker = object()\n",
    "class Marker:\n    pass\n\n\n_marker = Marker()\n",
    # A dynamic import may reach the module under review.
    "import importlib\n_marker = object()\nM = importlib.import_module('pkg.mod')\n",
])
def test_other_sentinels_need_the_same_files(sent: str) -> None:
    r = check_pair(SENTINEL_A, SENTINEL_B, "f", budget=BUDGET, context=sentinel_context(sent))
    assert r.verdict is not Verdict.VERIFIED or "relational" not in r.method, r.detail

