"""A method whose annotations or docstring changed while the rest of its module changed too.

Through ``self`` any code may reach a method, so its annotations and docstring are behaviour
wherever code reads them. The relative check lets them differ only where no code of the
module reads annotations or docstrings (by name, by a computed lookup, through code given
as text), no differing annotation is evaluated when the class is made (postponed
evaluation, or strings), and the method's decorators and its class's bases are known not to
read them. Each pair below breaks one of those and must not be verified; the plain one keeps
its proof.
"""

from __future__ import annotations

import pytest

from veribot.checks.equivalence import Budget, check_pair
from veribot.checks.verdict import Verdict

BUDGET = Budget(timeout_s=10, search=False)

HEAD = "from __future__ import annotations\n\nimport typing\n\n\n"
BOX = ("class Box{bases}:\n    def __init__(self, items: list[int]) -> None:\n"
       "        self.items = items\n\n{deco}    def total(self, extra: int) -> object:\n"
       "        'Sum.'\n        out = extra\n        for x in self.items:\n"
       "            out += x\n        return out, probe(self)\n\n\n")
# What the method calls: a function of the module that may look at the method itself.
TAIL = "def other(n: int) -> int:\n    return n + 1\n\n\ndef probe(b: Box) -> object:\n"


def pair(head: str = HEAD, bases: str = "", deco: str = "",
         probe: str = "    return len(b.items)\n", new: str = "extra: int | float",
         tail: str = "") -> tuple[str, str]:
    before = head + BOX.format(bases=bases, deco=deco) + TAIL + probe + tail
    after = before.replace("extra: int", new).replace("return n + 1", "return n + 2")
    assert after != before
    return before, after


def test_an_annotation_change_of_a_method_keeps_the_proof() -> None:
    before, after = pair()
    r = check_pair(before, after, "Box.total", budget=BUDGET)
    assert r.verdict is Verdict.VERIFIED, r.detail
    assert any("docstring or annotations" in a for a in r.assumptions)
    before, after = pair()
    r = check_pair(before, after.replace("'Sum.'", "'The sum.'"), "Box.total", budget=BUDGET)
    assert r.verdict is Verdict.VERIFIED, r.detail


NOT_VERIFIED = [
    ("the-module-reads-type-hints", pair(
        probe="    return typing.get_type_hints(b.total)\n")),
    ("the-module-reads-annotations", pair(probe="    return b.total.__annotations__\n")),
    ("a-computed-lookup", pair(probe="    return getattr(b.total, '__annot' + 'ations__')\n")),
    ("code-given-as-text", pair(probe="    return eval('b.total.__annot' + 'ations__')\n")),
    ("a-signature", pair(head=HEAD + "import inspect\n\n\n",
                         probe="    return str(inspect.signature(b.total))\n")),
    ("the-docstring-is-read", pair(probe="    return b.total.__doc__\n", new="extra: int")),
    ("a-decorator-that-may-read-them", pair(
        deco="    @validate\n",
        tail="\n\ndef validate(f):\n    f.seen = str(f.__annotations__)\n    return f\n")),
    ("a-base-that-looks-at-subclasses", pair(
        head=HEAD + "from lib import Base\n\n\n", bases="(Base)")),
    ("a-metaclass", pair(bases="(metaclass=Meta)")),
    ("evaluated-when-the-class-is-made", pair(
        head="import typing\n\nSEEN = []\n\n\ndef note(t):\n    SEEN.append(t)\n"
        "    return t\n\n\n", probe="    return len(SEEN)\n", new="extra: note(int)")),
]


@pytest.mark.parametrize(("before", "after"), [p for _, p in NOT_VERIFIED],
                         ids=[n for n, _ in NOT_VERIFIED])
def test_not_verified(before: str, after: str) -> None:
    if "__doc__" in before:
        after = after.replace("'Sum.'", "'The sum.'")
    r = check_pair(before, after, "Box.total", budget=BUDGET)
    assert r.verdict is not Verdict.VERIFIED, r.detail
