"""Adversarial pairs: ``for x in it: yield x`` against ``yield from it``.

They are the same for a generator driven by ``next`` alone (the verdict's assumption)
when nothing reads ``x`` after the loop: not a later statement, a ``finally``, a closure
that runs later, or another scope through ``global``.
"""

from __future__ import annotations

import pytest

from veribot.checks.equivalence import Budget, check_pair
from veribot.checks.lang.pygen import DRIVEN
from veribot.checks.verdict import Verdict

BUDGET = Budget(timeout_s=8)
# For the pairs that must only not be verified: random testing, which runs only once no
# proof was found and can turn no verdict into "verified", is left out (it took all but a
# few milliseconds of each of those checks' seconds).
NO_SEARCH = Budget(timeout_s=8, search=False)


def _gen(*lines: str, head: str = "") -> str:
    return head + "def g(it, n):\n" + "".join(f"    {line}\n" for line in lines)


LOOP = ("for x in it:", "    yield x")

SAME = {
    "end-of-body": (_gen("x = n", "yield x", *LOOP), _gen("x = n", "yield x", "yield from it")),
    "before-return": (_gen("if n:", "    for x in it:", "        yield x", "    return",
                           "yield n"),
                      _gen("if n:", "    yield from it", "    return", "yield n")),
    "in-a-handler": (_gen("try:", "    n = next(it)", "except StopIteration:", *(
                          "    " + s for s in LOOP), "    return None", "yield n"),
                     _gen("try:", "    n = next(it)", "except StopIteration:",
                          "    yield from it", "    return None", "yield n")),
}


@pytest.mark.parametrize(("before", "after"), list(SAME.values()), ids=list(SAME))
def test_a_loop_that_only_yields_is_yield_from(before: str, after: str) -> None:
    result = check_pair(before, after, "g", budget=BUDGET)
    assert result.verdict is Verdict.VERIFIED, result.detail
    assert DRIVEN in result.assumptions


DIFFERENT = {
    "read-after": (_gen(*LOOP, "yield x"), _gen("x = None", "yield from it", "yield x")),
    "returned": (_gen("x = 0", *LOOP, "return x"), _gen("x = 0", "yield from it", "return x")),
    "closure-runs-later": (_gen("x = n", "yield lambda: x", *LOOP),
                           _gen("x = n", "yield lambda: x", "yield from it")),
    "finally-reads-it": (_gen("x = n", "try:", *("    " + s for s in LOOP), "    return",
                              "finally:", "    print(x)"),
                         _gen("x = n", "try:", "    yield from it", "    return",
                              "finally:", "    print(x)")),
    "global": (_gen("global x", *LOOP, head="x = 0\n"),
               _gen("global x", "yield from it", head="x = 0\n")),
    "yields-something-else": (_gen("x = n", "for x in it:", "    yield n"),
                              _gen("x = n", "yield from it")),
}


@pytest.mark.parametrize(("before", "after"), list(DIFFERENT.values()), ids=list(DIFFERENT))
def test_a_loop_whose_variable_is_read_later_is_not_yield_from(before: str, after: str) -> None:
    assert check_pair(before, after, "g", budget=NO_SEARCH).verdict is not Verdict.VERIFIED
