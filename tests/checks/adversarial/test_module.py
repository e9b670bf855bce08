"""Adversarial pairs: a verified result holds for the module as Python really loads it.

Module-level code that shadows an exception class, fails the import, rewrites a
function's defaults or code, or rebinds a constant by any binding form must never let a
proof stand; harmless module-level code must keep it.
"""

from __future__ import annotations

import pytest

from veribot.checks.equivalence import Budget, check_pair
from veribot.checks.search.differential import confirm
from veribot.checks.verdict import Reason, Verdict

# Slow cases only `python -m pytest -m heavy` runs (tests/conftest.py); the default
# run keeps this module's other cases of each family.
HEAVY_CASES: dict[str, set[str]] = {
    "test_module_level_code_never_lets_a_wrong_proof_stand": {
        "init-subclass-hook",
        "defaults-patched-by-a-call",
        "class-getitem-in-an-annotation",
        "globals-write-in-a-function",
        "star-import-after-a-constant",
        "match-capture-rebinds",
        "for-target-rebinds",
        "global-in-a-function-called-at-import",
        "with-as-rebinds",
        "except-as-deletes",
        "walrus-rebinds",
        "decorator-replaces-the-function",
        "exception-name-rebound",
        "setattr-on-the-module",
        "code-replaced-by-a-call",
        "exception-class-shadowed",
    },
}

BUDGET = Budget(timeout_s=6)
# For the pairs that must only not be verified: random testing, which runs only once no
# proof was found and can turn no verdict into "verified", is left out.
NO_SEARCH = Budget(timeout_s=6, search=False)


def _fn(params: str, *body: str) -> str:
    return f"def f({params}):\n" + "".join(f"    {line}\n" for line in body)


K2 = _fn("x: int", "return x + 2")
SCALE = _fn("x: int, k: int = 2", "return x * k")
RAISES = _fn("x: int", "if x < 0:", "    raise ValueError", "return x")

# (name, before, after, a call on which they differ when executed)
DIFFERING: list[tuple[str, str, str, str]] = [
    ("exception-class-shadowed", "class ValueError(Exception):\n    pass\n" + RAISES, RAISES,
     "-1"),
    ("exception-name-rebound", "ValueError = KeyError\n" + RAISES, RAISES, "-1"),
    ("kwdefaults-patched", _fn("x: int, *, k: int = 2", "return x * k")
     + "f.__kwdefaults__ = {'k': 3}\n", _fn("x: int, *, k: int = 2", "return x * k"), "1"),
    ("defaults-patched-by-a-call", "def patch():\n    f.__defaults__ = (5,)\n" + SCALE
     + "patch()\n", SCALE, "1"),
    ("code-replaced-by-a-call", "def g(x: int) -> int:\n    return 0\n"
     "def patch():\n    f.__code__ = g.__code__\n" + K2 + "patch()\n", K2, "1"),
    ("init-subclass-hook", "class A:\n    def __init_subclass__(cls):\n"
     "        f.__defaults__ = (9,)\n" + SCALE + "class B(A):\n    pass\n", SCALE, "1"),
    ("class-getitem-in-an-annotation", "class A:\n    def __class_getitem__(cls, item):\n"
     "        f.__defaults__ = (9,)\n        return int\n" + SCALE
     + "def h(y: A[0]) -> int:\n    return y\n", SCALE, "1"),
    ("setattr-on-the-module", "import sys\nK = 2\nsetattr(sys.modules[__name__], 'K', 3)\n"
     + _fn("x: int", "return x + K"), K2, "0"),
    ("star-import-after-a-constant", "pi = 3\nfrom math import *\n"
     + _fn("x: int", "return x + pi"), _fn("x: int", "return x + 3"), "0"),
    ("match-capture-rebinds", "K = 2\nmatch 5:\n    case K:\n        pass\n"
     + _fn("x: int", "return x + K"), K2, "0"),
    ("for-target-rebinds", "K = 2\nfor K in range(4):\n    pass\n"
     + _fn("x: int", "return x + K"), K2, "0"),
    ("with-as-rebinds", "import contextlib\nK = 2\nwith contextlib.nullcontext(5) as K:\n"
     "    pass\n" + _fn("x: int", "return x + K"), "import contextlib\n" + K2, "0"),
    ("walrus-rebinds", "K = 2\n(K := 4)\n" + _fn("x: int", "return x + K"), K2, "0"),
    ("global-in-a-function-called-at-import", "K = 2\ndef g():\n    global K\n    K = 7\ng()\n"
     + _fn("x: int", "return x + K"), K2, "0"),
    ("except-as-deletes", "K = 2\ntry:\n    1 / 0\nexcept ZeroDivisionError as K:\n"
     "    pass\n" + _fn("x: int", "return x + K"), K2, "0"),
    ("builtin-replaced-by-a-call", "import builtins\ndef g():\n    builtins.abs = lambda x: 0\n"
     "g()\n" + _fn("x: int", "return abs(x)"), _fn("x: int", "return x if x >= 0 else -x"),
     "1"),
    ("globals-write-in-a-function", "def g():\n    globals()['len'] = lambda s: 0\ng()\n"
     + _fn("xs: list[int]", "return len(xs)"), _fn("xs: list[int]", "return len(xs)"), "[1]"),
    ("decorator-replaces-the-function", "def deco(fn):\n    return lambda x: 0\n@deco\n" + K2,
     K2, "1"),
]


@pytest.mark.parametrize(("before", "after", "call"), [(b, a, c) for _, b, a, c in DIFFERING],
                         ids=[n for n, _, _, _ in DIFFERING])
def test_module_level_code_never_lets_a_wrong_proof_stand(
    before: str, after: str, call: str
) -> None:
    assert confirm(before, after, "f", [call], found_by="test") is not None, "meant to differ"
    result = check_pair(before, after, "f", budget=NO_SEARCH)
    assert result.verdict is not Verdict.VERIFIED, result.detail
    if result.verdict is Verdict.REFUTED:
        assert result.counterexample is not None


@pytest.mark.parametrize("broken", [
    _fn("x: Missing", "return x"),  # an annotation evaluated when the def runs
    "class C(int, str):\n    pass\n" + _fn("x: int", "return x"),  # a bad base class
    "import no_such_module_here\n" + _fn("x: int", "return x"),
])
def test_a_module_that_fails_to_import_is_never_verified(broken: str) -> None:
    result = check_pair(_fn("x: int", "return x"), broken, "f", budget=BUDGET)
    assert result.verdict is not Verdict.VERIFIED
    if result.verdict is Verdict.INCONCLUSIVE and "import" not in result.reason:
        assert "import" in result.detail


def test_a_patched_default_is_found_by_loading_the_module() -> None:
    # Same text in both versions except a call at import that rewrites the defaults.
    before = "def patch():\n    f.__defaults__ = (5,)\n" + SCALE + "patch()\n"
    after = "def patch():\n    pass\n" + SCALE + "patch()\n"
    result = check_pair(before, after, "f", budget=BUDGET)
    assert result.verdict is Verdict.REFUTED
    quiet = check_pair(before, after, "f", budget=Budget(timeout_s=4, search=False))
    assert quiet.verdict is not Verdict.VERIFIED


def test_without_execution_code_run_at_import_is_not_trusted() -> None:
    src = "def setup():\n    pass\nsetup()\n" + K2
    result = check_pair(src, src, "f", budget=Budget(timeout_s=4, execute=False))
    assert result.verdict is Verdict.INCONCLUSIVE
    assert result.reason == Reason.NOT_EXECUTED
    assert "line 3" in result.detail


HARMLESS: list[tuple[str, str, str]] = [
    ("logger-and-constant",
     "import logging\nlog = logging.getLogger(__name__)\nLIMIT = 10\n"
     + _fn("x: int", "return min(x, LIMIT)"),
     "import logging\nlog = logging.getLogger(__name__)\nLIMIT = 10\n"
     + _fn("x: int", "return x if x < LIMIT else LIMIT")),
    ("setup-call-that-touches-nothing-used",
     "CACHE = {}\ndef warm():\n    CACHE['a'] = 1\nwarm()\n" + _fn("x: int", "return x * 2"),
     "CACHE = {}\ndef warm():\n    CACHE['a'] = 1\nwarm()\n" + _fn("x: int", "return x + x")),
    ("class-and-main-guard",
     "class Point:\n    x: int = 0\n" + _fn("x: int", "return x - 1")
     + "if __name__ == '__main__':\n    print(f(3))\n",
     "class Point:\n    x: int = 0\n" + _fn("x: int", "return -1 + x")
     + "if __name__ == '__main__':\n    print(f(3))\n"),
    ("class-with-methods-that-set-attributes",
     "class Box:\n    def __init__(self, v: int) -> None:\n        self.v = v\n"
     + _fn("x: int", "return x * 2"),
     "class Box:\n    def __init__(self, v: int) -> None:\n        self.v = v\n"
     + _fn("x: int", "return x + x")),
    ("typing-annotations",
     "from typing import Optional\n" + _fn("x: Optional[int]", "return 0 if x is None else x + 1"),
     "from typing import Optional\n" + _fn("x: Optional[int]", "return 0 if x is None else 1 + x")),
]


@pytest.mark.parametrize(("before", "after"), [(b, a) for _, b, a in HARMLESS],
                         ids=[n for n, _, _ in HARMLESS])
def test_harmless_module_code_keeps_the_proof(before: str, after: str) -> None:
    result = check_pair(before, after, "f", budget=BUDGET)
    assert result.verdict is Verdict.VERIFIED, result.detail


def test_without_execution_harmless_module_code_keeps_the_proof() -> None:
    before, after = HARMLESS[0][1], HARMLESS[0][2]
    result = check_pair(before, after, "f", budget=Budget(timeout_s=4, execute=False))
    assert result.verdict is Verdict.VERIFIED, result.detail
    assert any("module-level code" in a for a in result.assumptions)
