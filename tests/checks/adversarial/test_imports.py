"""Adversarial pairs: a change in the module's imports, next to a changed function.

An import that runs the same modules and binds a name the function does not read cannot
change it; any other change of the imports may (another module's import-time code, a
submodule imported by ``from package import name``, a name the function or its helper
reads, a builtin it shadows).
"""

from __future__ import annotations

import ast

import pytest

from veribot.checks.equivalence import Budget, check_pair
from veribot.checks.lang import pyimports
from veribot.checks.verdict import Verdict

BUDGET = Budget(timeout_s=6)

DOUBLE = "def f(x: int) -> int:\n    return x * 2\n"
TWICE = "def f(x: int) -> int:\n    return x + x\n"


def test_an_unused_name_removed_from_an_import_keeps_the_proof() -> None:
    result = check_pair("from math import comb, factorial\n" + DOUBLE,
                        "from math import comb\n" + TWICE, "f", budget=BUDGET)
    assert result.verdict is Verdict.VERIFIED, result.detail
    assert any("`factorial`" in a for a in result.assumptions)


# (name, before imports, after imports, body reading what the imports bind)
CHANGED: list[tuple[str, str, str, str]] = [
    ("another-module-runs", "", "import collections\n", ""),
    ("modules-in-another-order", "import json\nimport math\n", "import math\nimport json\n", ""),
    ("a-relative-name-may-be-a-submodule", "from .util import a, b\n", "from .util import a\n",
     ""),
    ("a-stdlib-package-submodule", "from collections import abc, OrderedDict\n",
     "from collections import OrderedDict\n", ""),
    ("a-builtin-no-longer-shadowed", "from math import floor, pow\n", "from math import floor\n",
     "def g(y: int) -> int:\n    return int(pow(y, 2))\n"),
    ("a-name-a-helper-reads", "from math import comb, factorial\n", "from math import comb\n",
     "def g(y: int) -> int:\n    return factorial(y)\n"),
    ("a-future-feature", "from __future__ import annotations, division\n",
     "from __future__ import division\n", ""),
    ("a-star-import-added", "from math import comb\n",
     "from math import comb\nfrom math import *\n", ""),
]


@pytest.mark.parametrize(("before", "after", "helper"), [(b, a, h) for _, b, a, h in CHANGED],
                         ids=[n for n, _, _, _ in CHANGED])
def test_imports_that_may_change_the_function_block_the_model(before: str, after: str,
                                                              helper: str) -> None:
    uses = "def f(x: int) -> int:\n    return g(x) * 0 + x * 2\n" if helper else DOUBLE
    result = check_pair(before + helper + uses, after + helper + uses.replace(
        "x * 2", "x + x"), "f", budget=Budget(timeout_s=6, search=False))
    assert result.verdict is not Verdict.VERIFIED, result.detail
    assert "imports" in result.detail or "star" in result.detail, result.detail


def test_what_imports_run() -> None:
    tree = ast.parse("import a.b\nfrom math import floor\nfrom json import loads\n"
                     "from . import x\nfrom .p import y as z\n")
    assert pyimports.runs(tree) == ("a", "a.b", "math", "json", "json.loads?", ".", ".x?",
                                    ".p", ".p.y?")
