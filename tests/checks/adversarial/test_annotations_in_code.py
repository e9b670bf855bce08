"""Typing pull requests: annotations added to or moved within code the relative check reads.

In a function, ``x: T = v`` is ``x = v`` (the annotation is neither evaluated nor kept,
whatever the target) and a bare ``p.a: T`` of a parameter only loads ``p``. A helper, a
class member or a ``@contextmanager`` function whose own annotations differ is the same
code where no code of the module reads annotations, none is evaluated (postponed
evaluation) and its decorators are known not to read them. Each pair below that stays
refused shows where one of those conditions fails and the change can be seen.
"""

from __future__ import annotations

import pytest

from veribot.checks.equivalence import Budget, check_pair
from veribot.checks.verdict import Verdict

# Slow cases only `python -m pytest -m heavy` runs (tests/conftest.py); the default
# run keeps this module's other cases of each family.
HEAVY_CASES: dict[str, set[str]] = {
    "test_not_verified_relationally": {
        "an-evaluated-helper-annotation",
        "helper-annotations-read",
    },
}

BUDGET = Budget(timeout_s=10, search=False)
FUTURE = "from __future__ import annotations\n\n"


def _relational(before: str, after: str, entry: str) -> bool:
    r = check_pair(before, after, entry, budget=BUDGET)
    return r.verdict is Verdict.VERIFIED and r.method.startswith("relational")


# A method that writes annotated attributes; the after version drops the annotations.
INIT = ("class A:\n    def __init__(self, x):\n        self.x: int\n"
        "        self.x{note} = x\n        if x:\n            y{note} = []\n"
        "            self.y = y\n")


def test_annotated_assignments_in_a_function_are_plain_assignments() -> None:
    before = INIT.format(note=": list")
    after = INIT.format(note="").replace("        self.x: int\n", "")
    assert _relational(before, after, "A.__init__")


# A helper `g` whose annotations changed, called by the function under review `f`.
HELPER = ("import collections.abc as cabc\n\n\ndef g(x: {note}) -> {ret}:\n    return [x]\n\n\n"
          "def f(x):\n    return g(x)\n")


def test_a_helper_whose_annotations_changed_is_the_same_code() -> None:
    before = FUTURE + HELPER.format(note="int", ret="list")
    after = FUTURE + HELPER.format(note="object", ret="cabc.Sequence[int]")
    assert _relational(before, after, "f")


# A class whose `__enter__` changed its return annotation, used by the function under review.
CLASS = ("class C:\n    def __enter__(self) -> {ret}:\n        return self\n\n"
         "    def __exit__(self, *a: object) -> None:\n        return None\n\n\n"
         "def f():\n    with C() as c:\n        return [c]\n")


def test_a_dunder_whose_annotations_changed_is_the_same_code() -> None:
    assert _relational(FUTURE + CLASS.format(ret="C"), FUTURE + CLASS.format(ret="object"), "f")


READ_NOTES = "\n\ndef h():\n    return g.__annotations__\n"

NOT_VERIFIED = [
    # A class body evaluates its annotations, even in a function.
    ("a-nested-class-annotation",
     "def f():\n    class K:\n        x: print('made') = 1\n    return K.x\n",
     "def f():\n    class K:\n        x = 1\n    return K.x\n", "f"),
    # Without postponed evaluation the changed annotation runs when `g` is defined.
    ("an-evaluated-helper-annotation",
     HELPER.format(note="int", ret="list"),
     HELPER.format(note="int", ret="print('defined') or list"), "f"),
    # Code of the module reads the helper's annotations.
    ("helper-annotations-read",
     FUTURE + HELPER.format(note="int", ret="list") + READ_NOTES,
     FUTURE + HELPER.format(note="str", ret="list") + READ_NOTES, "f"),
    # Code of the module reads the dunder's annotations through `typing.get_type_hints`.
    ("dunder-annotations-read-by-type-hints",
     FUTURE + "import typing\n\n" + CLASS.format(ret="C")
     + "\n\ndef h():\n    return typing.get_type_hints(C.__enter__)\n",
     FUTURE + "import typing\n\n" + CLASS.format(ret="object")
     + "\n\ndef h():\n    return typing.get_type_hints(C.__enter__)\n", "f"),
    # A decorator that dispatches on annotations.
    ("a-dispatching-decorator",
     FUTURE + "from functools import singledispatch\n\n"
     + HELPER.format(note="int", ret="list").replace("def g", "@singledispatch\ndef g"),
     FUTURE + "from functools import singledispatch\n\n"
     + HELPER.format(note="str", ret="list").replace("def g", "@singledispatch\ndef g"), "f"),
    # The helper's code changed too (not only its annotations): relative to it, at best.
    ("the-helper-changed",
     FUTURE + HELPER.format(note="int", ret="list"),
     FUTURE + HELPER.format(note="str", ret="list").replace("[x]", "(x,)"), "f"),
    # `del self` first: the bare annotation would fail to load `self`, so it stays.
    ("a-deleted-parameter",
     "class A:\n    def m(self, o):\n        del o\n        o.x: int\n        return 1\n",
     "class A:\n    def m(self, o):\n        del o\n        return 1\n", "A.m"),
]


@pytest.mark.parametrize(("before", "after", "entry"), [p[1:] for p in NOT_VERIFIED],
                         ids=[p[0] for p in NOT_VERIFIED])
def test_not_verified_relationally(before: str, after: str, entry: str) -> None:
    assert not _relational(before, after, entry)
