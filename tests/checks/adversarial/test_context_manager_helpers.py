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


# The function under review is the `@contextmanager` one: the child finds its definition in
# the wrapper. `contextmanager` drives it by `next`, `throw` and `close`, so only the same
# code (up to renaming, docstring and annotations nobody reads) is verified.
CM = ("from __future__ import annotations\nimport collections.abc as cabc\n"
      "from contextlib import contextmanager\n\n\n@contextmanager\n"
      "def g(x: int) -> cabc.Iterator[int]:\n    try:\n        yield x\n"
      "    except ValueError as e:\n        e.note = x\n        raise\n")


def test_a_context_manager_renamed_or_reannotated_is_verified() -> None:
    for after in (CM.replace("as e:", "as err:").replace("e.note", "err.note"),
                  CM.replace("cabc.Iterator[int]", "cabc.Generator[int]")):
        r = check_pair(CM, after, "g", budget=BUDGET)
        assert r.verdict is Verdict.VERIFIED, r.detail
        assert r.method.startswith("relational"), r.method


def _items(items: str) -> str:
    return ("from contextlib import contextmanager\n\n\n@contextmanager\ndef g(xs):\n"
            + items)


CM_NOT_VERIFIED = [
    # Thrown into at the `yield`, the handler runs in one version only.
    ("the-yield-leaves-the-try",
     CM, CM.replace("    try:\n        yield x\n", "    yield x\n    try:\n        pass\n")),
    # `throw` at a re-yield loop's `yield` is not passed on to `xs`, as `yield from` does.
    ("a-loop-becomes-yield-from",
     _items("    for x in xs:\n        yield x\n"), _items("    yield from xs\n")),
    ("a-look-alike-decorator",
     CM.replace("from contextlib import contextmanager", "from mylib import contextmanager"),
     CM.replace("from contextlib import contextmanager", "from mylib import contextmanager")
     .replace("as e:", "as err:").replace("e.note", "err.note")),
    # A decorator that reads annotations (`functools.singledispatch`) keeps them compared.
    ("annotations-under-a-reading-decorator",
     CM.replace("@contextmanager\n", "@contextmanager\n@singledispatch\n").replace(
         "from contextlib", "from functools import singledispatch\nfrom contextlib"),
     CM.replace("@contextmanager\n", "@contextmanager\n@singledispatch\n").replace(
         "from contextlib", "from functools import singledispatch\nfrom contextlib").replace(
         "cabc.Iterator[int]", "cabc.Generator[int]")),
]


@pytest.mark.parametrize(("before", "after"), [(b, a) for _, b, a in CM_NOT_VERIFIED],
                         ids=[n for n, _, _ in CM_NOT_VERIFIED])
def test_a_context_manager_not_verified_relationally(before: str, after: str) -> None:
    r = check_pair(before, after, "g", budget=BUDGET)
    assert not (r.verdict is Verdict.VERIFIED and r.method.startswith("relational")), r.detail
