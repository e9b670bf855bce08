"""A module function whose docstring or annotations changed, compared by the relative check.

The relative check compares the code of a function without its docstring and annotations,
and its verdict lists as an assumption that code *outside* the module does not read them.
Code inside the module that reads them (``f.__doc__``, ``f.__annotations__``,
``inspect.signature``), a decorator that does (``click.command`` turns the docstring into
help), or an annotation evaluated when the definition runs (an expression with an effect)
makes the change one of behaviour: each pair below was verified before this check, and
must not be. A change nobody can read keeps its proof.
"""

from __future__ import annotations

import pytest

from veribot.checks.equivalence import Budget, check_pair
from veribot.checks.verdict import Verdict

BUDGET = Budget(timeout_s=10, search=False)

# A local renamed too, so the versions are not the same text but for the header.
F = "def f(x{note}){ret}:\n    '''{doc}'''\n    y = x\n    return [y]\n"
G = "def f(x{note}){ret}:\n    '''{doc}'''\n    z = x\n    return [z]\n"
FUTURE = "from __future__ import annotations\n\n"


def _pair(head: str, tail: str = "", *, doc: tuple[str, str] = ("a", "a"),
          note: tuple[str, str] = ("", ""), ret: tuple[str, str] = ("", "")) -> tuple[str, str]:
    before = head + F.format(doc=doc[0], note=note[0], ret=ret[0]) + tail
    after = head + G.format(doc=doc[1], note=note[1], ret=ret[1]) + tail
    return before, after


def test_a_header_change_nobody_reads_keeps_its_proof() -> None:
    for before, after in (_pair("", doc=("a", "b")),
                          _pair(FUTURE, note=(": int", ": str"), ret=(" -> list", " -> object"))):
        r = check_pair(before, after, "f", budget=BUDGET)
        assert r.verdict is Verdict.VERIFIED, r.detail
        assert r.method.startswith("relational"), r.method


NOT_VERIFIED = [
    ("docstring-read-in-module",
     _pair("", "\n\ndef g():\n    return f.__doc__\n", doc=("a", "b"))),
    ("annotations-read-in-module",
     _pair(FUTURE, "\n\ndef g():\n    return f.__annotations__\n", note=(": int", ": str"))),
    ("signature-read-in-module",
     _pair(FUTURE + "import inspect\n\n", "\n\ndef g():\n    return str(inspect.signature(f))\n",
           note=(": int", ": str"))),
    ("docstring-read-by-a-decorator",
     tuple(s.replace("def f", "@click.command()\ndef f") for s in _pair(
         "import click\n\n", doc=("a", "b")))),
    ("annotation-evaluated-at-definition",
     _pair("", note=(": int", ": print('imported') or int"))),
    ("return-annotation-evaluated-at-definition",
     _pair("import os\n\n", ret=(" -> list", " -> os.getcwd() and list"))),
]


@pytest.mark.parametrize(("before", "after"), [p for _, p in NOT_VERIFIED],
                         ids=[n for n, _ in NOT_VERIFIED])
def test_not_verified_relationally(before: str, after: str) -> None:
    r = check_pair(before, after, "f", budget=BUDGET)
    # The model may still prove the function's own behaviour with its assumptions listed
    # (it never reads the header); the relative check must not.
    assert not (r.verdict is Verdict.VERIFIED and r.method.startswith("relational")), r.detail
