"""A function that enters a module-level `@contextmanager` helper of the same module.

The helper is the same code in both versions, decorated by `contextlib.contextmanager`
itself: the same object once loaded, so the function is compared relative to nothing but
what the helper's body reads. A helper that changed, a decorator that only looks like
`contextlib.contextmanager`, or a module that replaces it must not let a change through.
"""

from __future__ import annotations

import pytest

from veribot.checks.equivalence import Budget, check_pair
from veribot.checks.verdict import Verdict

BUDGET = Budget(timeout_s=10, search=False)

HELPER = ("import contextlib\n\n\n@contextlib.contextmanager\ndef scaled(k):\n"
          "    try:\n        yield k * 2\n    finally:\n        pass\n\n\n")
F_A = "def f(x):\n    k = x\n    with scaled(k) as y:\n        return y + 1\n"
F_B = "def f(x):\n    with scaled(x) as y:\n        return y + 1\n"


def test_a_refactor_around_an_unchanged_helper_is_verified() -> None:
    r = check_pair(HELPER + F_A, HELPER + F_B, "f", budget=BUDGET)
    assert r.verdict is Verdict.VERIFIED, r.detail
    assert r.method.startswith("relational"), r.method
    imported = HELPER.replace("import contextlib", "from contextlib import contextmanager")
    imported = imported.replace("@contextlib.contextmanager", "@contextmanager")
    r = check_pair(imported + F_A, imported + F_B, "f", budget=BUDGET)
    assert r.verdict is Verdict.VERIFIED, r.detail


NOT_VERIFIED = [
    ("the-helper-changed", HELPER + F_A, HELPER.replace("k * 2", "k * 3") + F_B),
    ("a-look-alike-decorator",
     "def contextmanager(g):\n    return lambda k: [k]\n\n\n"
     + HELPER.replace("import contextlib\n", "").replace("@contextlib.", "@") + F_A,
     "def contextmanager(g):\n    return lambda k: [k]\n\n\n"
     + HELPER.replace("import contextlib\n", "").replace("@contextlib.", "@") + F_B),
    ("the-module-replaces-it",
     HELPER.replace("import contextlib\n", "import contextlib\ncontextlib.contextmanager = "
                    "lambda g: g\n") + F_A,
     HELPER.replace("import contextlib\n", "import contextlib\ncontextlib.contextmanager = "
                    "lambda g: g\n") + F_B),
    ("a-second-decorator",
     HELPER.replace("@contextlib", "@other\n@contextlib") + "def other(g):\n    return g\n\n\n"
     + F_A,
     HELPER.replace("@contextlib", "@other\n@contextlib") + "def other(g):\n    return g\n\n\n"
     + F_B),
]


@pytest.mark.parametrize(("before", "after"), [(b, a) for _, b, a in NOT_VERIFIED],
                         ids=[n for n, _, _ in NOT_VERIFIED])
def test_not_verified(before: str, after: str) -> None:
    r = check_pair(before, after, "f", budget=BUDGET)
    if r.verdict is Verdict.VERIFIED:
        assert not r.method.startswith("relational"), r.detail  # the model may decide
    if "k * 3" in after:
        assert r.verdict is not Verdict.VERIFIED, r.detail
