"""Adversarial pairs: methods, with ``self`` built by calling its class.

A method is refuted on an object its class really builds (``Point(3).move(2)``), never on
a value of the wrong type; the object's state after the call (its attributes and slots,
read without its ``__eq__``, ``__repr__`` or properties) and data its class holds are part
of the behaviour; a constructor that differs is a difference of the class, not of the
method.
"""

from __future__ import annotations

import pytest

from veribot.bot.render import describe_call
from veribot.checks.equivalence import Budget, check_pair
from veribot.checks.verdict import Verdict

BUDGET = Budget(timeout_s=8)


def _cls(*lines: str, head: str = "class C:") -> str:
    return head + "\n" + "".join(f"    {line}\n" for line in lines)


INIT = ("def __init__(self, x: int) -> None:", "    self.x = x")

# (name, before, after, entry, what the counterexample's call must start with)
DIFFERING: list[tuple[str, str, str, str, str]] = [
    ("state-through-user-eq",
     _cls(*INIT, "def __eq__(self, other): return True", "def __repr__(self): return 'C'",
          "def bump(self, d: int) -> None:", "    self.x += d"),
     _cls(*INIT, "def __eq__(self, other): return True", "def __repr__(self): return 'C'",
          "def bump(self, d: int) -> None:", "    self.x += d + 1"),
     "C.bump", "C("),
    ("slots",
     _cls("__slots__ = ('x', 'y')", *INIT, "def put(self, v: int) -> int:",
          "    self.y = v", "    return 0"),
     _cls("__slots__ = ('x', 'y')", *INIT, "def put(self, v: int) -> int:",
          "    self.y = v + 1", "    return 0"),
     "C.put", "C("),
    ("class-list-shared-by-all-instances",
     _cls("items = []", *INIT, "def add(self, v: int) -> None:", "    self.items.append(v)"),
     _cls("items = []", *INIT, "def add(self, v: int) -> None:", "    pass"),
     "C.add", "C("),
    ("class-attribute-vs-instance-attribute",
     _cls("count = 0", "def hit(self) -> int:", "    self.count += 1", "    return 0"),
     _cls("count = 0", "def hit(self) -> int:", "    type(self).count += 1", "    return 0"),
     "C.hit", "C()"),
    ("stored-argument-mutated-through-the-alias",
     _cls("def keep(self, xs: list[int]) -> None:", "    self.xs = xs", "    self.xs.append(1)"),
     _cls("def keep(self, xs: list[int]) -> None:", "    self.xs = list(xs)",
          "    self.xs.append(1)"),
     "C.keep", "C()"),
    ("property-read",
     _cls(*INIT, "@property", "def double(self) -> int:", "    return self.x * 2"),
     _cls(*INIT, "@property", "def double(self) -> int:", "    return self.x + self.x + 1"),
     "C.double", "C("),
    ("constructor-is-the-unit",
     _cls("def __init__(self, x: int) -> None:", "    self.x = abs(x)"),
     _cls("def __init__(self, x: int) -> None:", "    self.x = x"),
     "C.__init__", "C(-"),
    ("dataclass-fields",
     "from dataclasses import dataclass\n@dataclass\nclass P:\n    x: int\n    y: str = 'a'\n"
     "    def key(self) -> str:\n        return self.y * self.x\n",
     "from dataclasses import dataclass\n@dataclass\nclass P:\n    x: int\n    y: str = 'a'\n"
     "    def key(self) -> str:\n        return self.y * abs(self.x)\n",
     "P.key", "P("),
    ("init-calls-an-overridable-method",
     _cls("def __init__(self, x: int) -> None:", "    self.x = self.norm(x)",
          "def norm(self, v: int) -> int:", "    return v % 7",
          "def get(self) -> int:", "    return self.x"),
     _cls("def __init__(self, x: int) -> None:", "    self.x = self.norm(x)",
          "def norm(self, v: int) -> int:", "    return v % 7",
          "def get(self) -> int:", "    return self.x + 0 * self.x - (self.x > 5)"),
     "C.get", "C("),
    ("staticmethod-on-the-class",
     _cls("@staticmethod", "def f(v: int) -> int:", "    return v"),
     _cls("@staticmethod", "def f(v: int) -> int:", "    return v if v < 9 else 0"),
     "C.f", "f("),
]


@pytest.mark.parametrize(("before", "after", "entry", "call"),
                         [d[1:] for d in DIFFERING], ids=[d[0] for d in DIFFERING])
def test_a_differing_method_is_refuted_on_a_built_object(
        before: str, after: str, entry: str, call: str) -> None:
    result = check_pair(before, after, entry, budget=BUDGET)
    assert result.verdict is Verdict.REFUTED, result.detail
    assert result.counterexample is not None
    assert describe_call(entry, result.counterexample).startswith(call)


def test_a_constructor_that_differs_is_not_a_difference_of_the_method() -> None:
    before = _cls("def __init__(self, x: int) -> None:", "    if x < 0:",
                  "        raise ValueError", "    self.x = x",
                  "def get(self) -> int:", "    return self.x")
    after = _cls("def __init__(self, x: int) -> None:", "    self.x = x",
                 "def get(self) -> int:", "    return self.x")
    assert check_pair(before, after, "C.get", budget=BUDGET).verdict is not Verdict.REFUTED
    assert check_pair(before, after, "C.__init__", budget=BUDGET).verdict is Verdict.REFUTED


def test_an_object_of_an_unbuildable_class_is_not_searched() -> None:
    # The constructor needs a value of a type the search cannot generate.
    before = _cls("def __init__(self, cb: 'Callable[[], int]') -> None:", "    self.cb = cb",
                  "def get(self, v: int) -> int:", "    return v")
    after = _cls("def __init__(self, cb: 'Callable[[], int]') -> None:", "    self.cb = cb",
                 "def get(self, v: int) -> int:", "    return v + 1")
    result = check_pair(before, after, "C.get", budget=BUDGET)
    assert result.verdict is Verdict.INCONCLUSIVE
    assert any("objects are not built" in n for n in result.notes), result.notes


EQUIVALENT: list[tuple[str, str, str, str]] = [
    ("extract-a-variable",
     _cls(*INIT, "def move(self, d: int) -> int:", "    self.x = self.x + d", "    return self.x"),
     _cls(*INIT, "def move(self, d: int) -> int:", "    new = self.x + d", "    self.x = new",
          "    return new"),
     "C.move"),
    ("augmented-assignment",
     _cls(*INIT, "def move(self, d: int) -> None:", "    self.x = self.x + d"),
     _cls(*INIT, "def move(self, d: int) -> None:", "    self.x += d"),
     "C.move"),
    # Read through the class, the attribute is the same; only `vars()` tells them apart.
    ("attribute-becomes-a-property",
     _cls(*INIT, "    self.positive = x > 0"),
     _cls(*INIT, "@property", "def positive(self) -> bool:", "    return self.x > 0"),
     "C.__init__"),
]


@pytest.mark.parametrize(("before", "after", "entry"), [e[1:] for e in EQUIVALENT],
                         ids=[e[0] for e in EQUIVALENT])
def test_an_equivalent_method_is_not_refuted(before: str, after: str, entry: str) -> None:
    assert check_pair(before, after, entry, budget=BUDGET).verdict is not Verdict.REFUTED
