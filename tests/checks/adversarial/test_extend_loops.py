"""`for x in it: out.append(x)` against `out.extend(it)` (click 748a34d).

`list.extend` of an iterator calls `iter` once and `__next__` until it stops, appending each
item as it comes, the items before an exception kept: the same as the loop where `out` is a
list no other code holds while the loop runs and `x` is not read after it. Each pair below
breaks one of those conditions and must not be verified; the shape of the real commit keeps
its proof, with the length probe of `extend` listed as an assumption.
"""

from __future__ import annotations

import pytest

from veribot.checks.equivalence import Budget, check_pair
from veribot.checks.relational.check import EXTEND_PROBE
from veribot.checks.verdict import Verdict

BUDGET = Budget(timeout_s=10, search=False)

SPLIT = '''import shlex


def split(string):
    lex = shlex.shlex(string, posix=True)
    lex.whitespace_split = True
    out = []
    try:
        for token in lex:
            out.append(token)
    except ValueError:
        out.append(lex.token)
    return out
'''
EXTENDED = SPLIT.replace("        for token in lex:\n            out.append(token)\n",
                         "        out.extend(lex)\n")


def test_the_loop_of_appends_is_extend() -> None:
    assert EXTENDED != SPLIT
    r = check_pair(SPLIT, EXTENDED, "split", budget=BUDGET)
    assert r.verdict is Verdict.VERIFIED, r.detail
    assert EXTEND_PROBE in r.assumptions
    r = check_pair(EXTENDED, SPLIT, "split", budget=BUDGET)
    assert r.verdict is Verdict.VERIFIED, r.detail


def loop(before_loop: str, after_loop: str = "    return out\n", head: str = "    out = []\n",
         params: str = "it") -> tuple[str, str]:
    a = (f"def f({params}):\n{head}{before_loop}    for x in it:\n        out.append(x)\n"
         f"{after_loop}")
    b = f"def f({params}):\n{head}{before_loop}    out.extend(it)\n{after_loop}"
    return a, b


NOT_VERIFIED = [
    # The loop variable is read after the loop: its last item, or unbound.
    ("x-read-after", loop("", "    return out, x\n")),
    # Another name holds the list before the loop: iterating it while appending.
    ("aliased-before", (
        "def f(it):\n    out = [1]\n    a = out\n    for x in a:\n        out.append(x)\n"
        "        if len(out) > 3:\n            break\n    return out\n",
        "def f(it):\n    out = [1]\n    a = out\n    out.extend(a)\n    return out\n")),
    ("aliased-then-iterated", loop("    it = out\n", head="    out = [1, 2]\n")),
    # `out` is any object the caller passes.
    ("out-is-a-parameter", loop("", head="", params="it, out")),
    # `out` may be unbound: the loop appends nothing for an empty iterable.
    ("conditionally-bound", loop("", head="    if it:\n        out = []\n")),
    # `out` is rebound by an exception handler before the loop.
    ("rebound-by-except", loop(
        "    try:\n        pass\n    except ValueError as out:\n        pass\n")),
    # A loop around it reads the list before the inner loop runs again.
    ("read-in-an-outer-loop", (
        "def f(it):\n    out = []\n    for k in range(2):\n        for x in it:\n"
        "            out.append(x)\n        it = out\n    return out\n",
        "def f(it):\n    out = []\n    for k in range(2):\n        out.extend(it)\n"
        "        it = out\n    return out\n")),
    # A closure sees the list while the loop runs.
    ("a-closure-reads-it", loop("    g = lambda: len(out)\n", "    return out, g()\n")),
    # An `else` clause.
    ("for-else", (
        "def f(it):\n    out = []\n    for x in it:\n        out.append(x)\n    else:\n"
        "        out.append(0)\n    return out\n",
        "def f(it):\n    out = []\n    out.extend(it)\n    return out\n")),
]


@pytest.mark.parametrize(("before", "after"), [p for _, p in NOT_VERIFIED],
                         ids=[n for n, _ in NOT_VERIFIED])
def test_not_verified(before: str, after: str) -> None:
    r = check_pair(before, after, "f", budget=BUDGET)
    assert r.verdict is not Verdict.VERIFIED, r.detail
