"""Pairs the relational check took for the same code, or the same calls and operations,
though a change reaches the function's result by a way it did not see: a method the
standard library calls by name on an object it is handed (`bisect.insort` calls
`insert`; `ast.NodeVisitor.visit` looks up `visit_` + a class name), a template whose
fields read attributes by name, a constructor run through a class method's `cls`, an
attribute of an imported object (not of a module) read as a constant, module-level code
that changes the standard library's state, and a local the traceback keeps alive when an
exception leaves the function. None of them may be verified, but the last, whose proof
must then list the assumption it makes of it.
"""

from __future__ import annotations

import ast

import pytest

from veribot.checks.equivalence import Budget, check_pair
from veribot.checks.relational import check as relational
from veribot.checks.verdict import Verdict

BUDGET = Budget(timeout_s=10, search=False)

INSORT = ("import bisect\n\n\nclass Bag:\n    def __init__(self):\n        self.items = []\n"
          "    def __len__(self):\n        return len(self.items)\n"
          "    def __getitem__(self, i):\n        return self.items[i]\n"
          "    def insert(self, i, x):\n        self.items.insert(i, {})\n\n\n"
          "def f(x: int):\n    b = Bag()\n    bisect.insort(b, x)\n    return b.items\n")
TEMPLATE = ("class C:\n    def __init__(self, v: int):\n        self.v = v\n    @property\n"
            "    def double(self):\n        return self.v * {}\n"
            "    def show(self, template: str):\n        return template.format(self)\n")
VISITOR = ("import ast\n\n\nclass V:\n    def visit_Constant(self, node):\n"
           "        return {}\n    def generic_visit(self, node):\n        return None\n"
           "    def run(self, text: str):\n"
           "        return ast.NodeVisitor.visit(self, ast.parse(text, mode='eval').body)\n")
MAKER = ("class C:\n    def __init__(self, v: int = 0):\n        self.v = {}\n"
         "    @classmethod\n    def make(cls, v: int):\n        return cls(v).v\n")
LOGGER = ("import logging\n\nlogging.getLogger('app').setLevel(logging.{})\n\n\n"
          "def enabled(level: int):\n    return logging.getLogger('app').isEnabledFor(level)\n")
SEED = ("import random\n\nrandom.seed({})\n\n\n"
        "def draw(n: int):\n    return random.randrange(n) if n > 0 else 0\n")

NOT_VERIFIED = [
    # 01: `bisect.insort` calls `insert` on any sequence but a list.
    ("a-method-the-standard-library-calls-by-name", INSORT.format("x"),
     INSORT.format("x * 2"), "f"),
    # 05: `{0.double}` in the template reads the changed property.
    ("a-template-reads-attributes-by-name", TEMPLATE.format(2), TEMPLATE.format(3), "C.show"),
    # 06: `visit` looks up `visit_Constant` by a name it computes.
    ("a-standard-library-dispatcher-computes-the-name", VISITOR.format("node.value"),
     VISITOR.format("node.value * 2"), "V.run"),
    # 07: `cls(v)` makes an object of the class: its changed constructor runs.
    ("a-class-method-makes-an-object-of-its-class", MAKER.format("v"), MAKER.format("v + 1"),
     "C.make"),
    # 08: module-level calls of the standard library change state the function reads.
    ("module-level-code-sets-a-logger-level", LOGGER.format("DEBUG"), LOGGER.format("INFO"),
     "enabled"),
    ("module-level-code-seeds-random", SEED.format(1), SEED.format(2), "draw"),
    # A local's annotation is never evaluated, but a `yield` in it makes a generator and a
    # `:=` a local all the same.
    ("a-local-annotation-that-yields", "def g():\n    x: int = 1\n    return 5\n",
     "def g():\n    x: (yield) = 1\n    return 5\n", "g"),
    ("a-local-annotation-that-binds", "y = 5\n\n\ndef g():\n    x: int = 2\n    return y\n",
     "y = 5\n\n\ndef g():\n    x: (y := 1) = 2\n    return y\n", "g"),
    # A helper reads the function's local names by a name not written out.
    ("a-local-name-read-by-a-computed-name",
     "def g(p):\n    return getattr(getattr(f, '__co' + 'de__'), 'co_var' + 'names')\n\n\n"
     "def f(p: int):\n    a = 1\n    return g(p)\n",
     "def g(p):\n    return getattr(getattr(f, '__co' + 'de__'), 'co_var' + 'names')\n\n\n"
     "def f(p: int):\n    z = 1\n    return g(p)\n", "f"),
    ("a-local-name-read-by-a-format-string",
     "def g(p, t):\n    return t.format(f)\n\n\n"
     "def f(p: int, t: str):\n    a = 1\n    return g(p, t)\n",
     "def g(p, t):\n    return t.format(f)\n\n\n"
     "def f(p: int, t: str):\n    z = 1\n    return g(p, t)\n", "f"),
    # 03: `logging.root` is an object: `g` may change its `level` before it is read.
    ("an-attribute-of-an-imported-object-moved-past-a-call",
     "import logging\n\n\ndef f(g):\n    level = logging.root.level\n    g()\n"
     "    return level\n",
     "import logging\n\n\ndef f(g):\n    g()\n    return logging.root.level\n", "f"),
]


@pytest.mark.parametrize(("before", "after", "entry"), [c[1:] for c in NOT_VERIFIED],
                         ids=[c[0] for c in NOT_VERIFIED])
def test_a_change_reached_another_way_keeps_it_from_verifying(
        before: str, after: str, entry: str) -> None:
    result = check_pair(before, after, entry, budget=BUDGET)
    assert result.verdict is not Verdict.VERIFIED, result.detail
    # The relational check refuses on its own, not only through the tripwire after it.
    for relative in (False, True):
        assert relational.check(before, after, ast.parse(before), ast.parse(after), entry,
                                relational.Limits(), relative=relative) is None


def test_a_property_of_an_imported_object_is_read_each_time() -> None:
    # 04: `ids` is an instance imported from another module of the package; its property
    # `next` counts, so reading it twice is not reading it once.
    from veribot.checks.project.package import Package, PairContext

    before = ("from pkg.ids import ids\n\n\ndef pair():\n    a = ids.next\n    b = ids.next\n"
              "    return a, b\n")
    after = "from pkg.ids import ids\n\n\ndef pair():\n    a = ids.next\n    return a, a\n"
    ids = ("class Ids:\n    def __init__(self):\n        self.n = 0\n\n    @property\n"
           "    def next(self):\n        self.n += 1\n        return self.n\n\n\nids = Ids()\n")
    files = (("pkg/__init__.py", ""), ("pkg/ids.py", ids))
    package = Package(module="pkg.core", path="pkg/core.py", root="", files=files)
    result = check_pair(before, after, "pair", budget=BUDGET,
                        context=PairContext(package, package))
    assert result.verdict is not Verdict.VERIFIED, result.detail


def test_the_tripwire_runs_after_a_relational_proof() -> None:
    # The same code (a comment apart), same environment: verified, and the tripwire ran.
    before = "def f(x: int):\n    return x + 1\n"
    after = "def f(x: int):\n    # one more\n    return x + 1\n"
    result = check_pair(before, after, "f", budget=BUDGET)
    assert result.verdict is Verdict.VERIFIED, result.detail
    assert any(n.startswith("tripwire") for n in result.notes), result.notes


def test_a_module_attribute_and_pure_module_level_code_keep_the_proof() -> None:
    # `os.path.join` and `sys.maxsize` are modules' attributes (no event), and
    # `PYPY = hasattr(sys, ...)` changes no state.
    before = ("import os\nimport sys\n\n\ndef f(g, p):\n    m = sys.maxsize\n    g()\n"
              "    return os.path.join(p, 'x'), m\n")
    after = ("import os\nimport sys\n\nPYPY = hasattr(sys, 'pypy_version_info')\n\n\n"
             "def f(g, p):\n    g()\n    return os.path.join(p, 'x'), sys.maxsize\n")
    result = check_pair(before, after, "f", budget=BUDGET)
    assert result.verdict is Verdict.VERIFIED, result.detail


def test_a_local_the_traceback_keeps_alive_is_an_assumption() -> None:
    # 02: `x` holds `make()`'s object when `g` raises: the traceback keeps it alive until
    # the caller drops the exception; inlined, it is let go of as the exception unwinds.
    # Refusing would refuse every inlined temporary; the proof says what it assumes.
    before = "def f(make, g):\n    x = make()\n    g(x)\n"
    after = "def f(make, g):\n    g(make())\n"
    result = check_pair(before, after, "f", budget=BUDGET)
    assert result.verdict is not Verdict.VERIFIED or any(
        "traceback" in a for a in result.assumptions), result.assumptions
    # Where the locals hold the same objects, nothing more is assumed.
    same = "def f(make, g):\n    x = make()\n    g(x)\n    return None\n"
    result = check_pair(before, same, "f", budget=BUDGET)
    assert not any("traceback" in a for a in result.assumptions), result.assumptions
