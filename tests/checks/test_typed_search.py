"""Random testing on annotations the type tree does not know, read by the typing rules.

The search child reads such an annotation in the before module (``Iterable[str] | None``,
``pathlib.Path``, a ``TypeVar``, a name bound under ``if TYPE_CHECKING:``) and draws its
values with Hypothesis; only values of the declared type, written so that a fresh sandbox
child reads them back as the same value.
"""

from __future__ import annotations

import collections
import datetime
import decimal
import pathlib
import re

import pytest

from veribot.checks.equivalence import Budget, check_pair
from veribot.checks.lang.pytypes import parse_type
from veribot.checks.sandbox import Limits
from veribot.checks.sandbox._child import canonical, library_text, parse_literal
from veribot.checks.search.difftest import SearchOutcome, search
from veribot.checks.verdict import Verdict

FAST = Limits(call_s=0.5)
HEAD = "from __future__ import annotations\nimport datetime, pathlib\nfrom typing import *\n"
ITEM = "class Item:\n    def __init__(self, n: int) -> None:\n        self.n = n\n"
CHECKED = "if TYPE_CHECKING:\n    from decimal import Decimal as Money\n"
BOUND = "T = TypeVar('T', bound=int)\n"


def _search(before: str, after: str, annotations: dict[str, str],
            deadline_s: float = 8) -> SearchOutcome:
    types = {name: parse_type(text) for name, text in annotations.items()}
    return search(HEAD + before, HEAD + after, "f", types, deadline_s=deadline_s, limits=FAST)


# (name, before body, after body, annotations, what the input reads as, a check of it)
DIFFERING = [
    ("optional-iterable",
     "def f(abis: Iterable[str] | None = None) -> list:\n    return sorted(abis or [])\n",
     "def f(abis: Iterable[str] | None = None) -> list:\n    return sorted(set(abis or []))\n",
     {"abis": "Iterable[str] | None"},
     lambda v: v is None or all(isinstance(x, str) for x in v)),
    ("path",
     "def f(p: pathlib.Path) -> str:\n    return p.suffix\n",
     "def f(p: pathlib.Path) -> str:\n    return p.name.rsplit('.', 1)[-1]\n",
     {"p": "pathlib.Path"}, lambda v: isinstance(v, pathlib.Path)),
    ("date",
     "def f(t: datetime.date) -> int:\n    return t.weekday()\n",
     "def f(t: datetime.date) -> int:\n    return t.isoweekday() % 7\n",
     {"t": "datetime.date"}, lambda v: type(v) is datetime.date),
    ("typevar-bound",
     BOUND + "def f(x: T) -> int:\n    return x // 2\n",
     BOUND + "def f(x: T) -> int:\n    return int(x / 2)\n",
     {"x": "T"}, lambda v: isinstance(v, int)),
    ("type-checking-alias",
     CHECKED + "def f(m: Money) -> str:\n    return str(m)\n",
     CHECKED + "def f(m: Money) -> str:\n    return str(m.normalize())\n",
     {"m": "Money"}, lambda v: type(v) is decimal.Decimal),
    ("literal",
     "def f(m: Literal['r', 'w', 'a']) -> bool:\n    return m != 'r'\n",
     "def f(m: Literal['r', 'w', 'a']) -> bool:\n    return m == 'w'\n",
     {"m": "Literal['r', 'w', 'a']"}, lambda v: v == "a"),
    ("sequence-of-project-class",
     ITEM + "def f(xs: Sequence[Item]) -> int:\n    return sum(i.n for i in xs)\n",
     ITEM + "def f(xs: Sequence[Item]) -> int:\n    return sum(i.n for i in xs[1:])\n",
     {"xs": "Sequence[Item]"}, lambda v: True),
]


@pytest.mark.parametrize(("before", "after", "annotations", "of_type"),
                         [d[1:] for d in DIFFERING], ids=[d[0] for d in DIFFERING])
def test_typed_annotations_get_inputs_and_refute(before: str, after: str,
                                                 annotations: dict[str, str],
                                                 of_type: object) -> None:
    outcome = _search(before, after, annotations)
    cex = outcome.counterexample
    assert cex is not None, outcome.note
    assert cex.found_by == "random-testing"
    if "Item" in before:  # made by each version's own class, shown as the call that makes it
        assert cex.args[0].startswith("[Item("), cex.args
    else:
        value = parse_literal(cex.args[0], objects=True)
        assert callable(of_type) and of_type(value), cex.args


def test_an_equivalent_pair_is_not_refuted() -> None:
    # An iterator is consumed by the first reading: each version gets its own.
    outcome = _search("def f(xs: Iterable[str]) -> str:\n    return ','.join(xs)\n",
                      "def f(xs: Iterable[str]) -> str:\n    return ','.join(list(xs))\n",
                      {"xs": "Iterable[str]"}, deadline_s=4)
    assert outcome.counterexample is None and outcome.inputs_tried > 20, outcome.note


def test_no_input_outside_the_declared_type() -> None:
    """The versions differ only on values the annotations exclude: never refuted."""
    before = BOUND + "def f(m: Literal['a', 'b'], n: T, xs: Iterable[str]) -> int:\n" \
                     "    return 1\n"
    after = BOUND + "def f(m: Literal['a', 'b'], n: T, xs: Iterable[str]) -> int:\n" \
                    "    if m not in ('a', 'b') or not isinstance(n, int):\n        return 2\n" \
                    "    return 2 if any(not isinstance(x, str) for x in xs) else 1\n"
    outcome = _search(before, after, {"m": "Literal['a', 'b']", "n": "T",
                                      "xs": "Iterable[str]"}, deadline_s=4)
    assert outcome.counterexample is None and outcome.inputs_tried > 20, outcome.note


def test_an_annotation_without_values_says_what_it_met() -> None:
    unresolved = _search("def f(x: Foo) -> int:\n    return 1\n",
                         "def f(x: Foo) -> int:\n    return 2\n", {"x": "Foo"})
    assert unresolved.inputs_tried == 0
    assert "`x: Foo` could not be resolved in the module" in unresolved.note
    protocol = "class P(Protocol):\n    def read(self) -> str: ...\n"
    outcome = _search(protocol + "def f(x: P) -> int:\n    return 1\n",
                      protocol + "def f(x: P) -> int:\n    return 2\n", {"x": "P"})
    assert outcome.inputs_tried == 0 and "`x: P` is a Protocol, not modelled yet" in outcome.note
    # The prover says what it met too: an annotation it does not model, not "annotate it".
    before = "from typing import Iterable\ndef f(abis: Iterable[str] | None) -> int:\n" \
             "    return 1\n"
    result = check_pair(before, before.replace("1", "2"), "f",
                        budget=Budget(timeout_s=3, search=False))
    assert result.verdict is Verdict.INCONCLUSIVE
    assert "`abis: Iterable[str] | None` is not modelled yet" in result.detail
    assert "annotate" not in result.detail


def test_library_values_read_back_as_themselves() -> None:
    """A call's text writes values of the standard library by their qualified
    constructor, and a sandbox child reads them back as equal values of the same type."""
    values = [datetime.datetime(2024, 1, 31, 12, tzinfo=datetime.UTC),
              decimal.Decimal("-0.10"), pathlib.PurePosixPath("a/b.txt"),
              re.compile("a+", re.IGNORECASE), collections.OrderedDict([("b", 1), ("a", 2)]),
              collections.deque([1], maxlen=2), KeyError("k")]
    for value in values:
        text = library_text(value, repr)
        assert text is not None, value
        back = parse_literal(text, objects=True)
        assert type(back) is type(value) and canonical(back) == canonical(value), text
    constant = parse_literal("lambda *args, **kwargs: [1]", objects=True)
    assert callable(constant) and constant(2, k=3) == [1]
    with pytest.raises(ValueError):  # a call of anything else is no value of the library
        parse_literal("os.system('true')", objects=True)
