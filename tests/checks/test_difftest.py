"""Randomised differential testing: finds real differences, confirms them, runs sandboxed."""

from __future__ import annotations

import ast
import os
from pathlib import Path

from veribot.checks.lang.pytypes import parse_type
from veribot.checks.sandbox import Limits
from veribot.checks.search.difftest import (
    code_constants,
    entry_parameters,
    parse_report,
    regex_patterns,
    search,
    type_to_json,
)
from veribot.checks.verdict import BehaviourKind, Reason

FAST = Limits(call_s=0.5)


def types(**texts: str) -> dict[str, object]:
    return {name: parse_type(text) for name, text in texts.items()}


GCD = """
def gcd(a, b):
    if b == 0:
        return a
    else:
        return gcd(b, a % b)
"""
GCD_SWAPPED = """
def gcd(a, b):
    if b == 0:
        return a
    else:
        return gcd(a % b, b)
"""


def test_finds_the_swapped_arguments_of_gcd() -> None:
    outcome = search(GCD, GCD_SWAPPED, "gcd", types(a="int", b="int"), deadline_s=6, limits=FAST)
    cex = outcome.counterexample
    assert cex is not None, outcome.note
    assert cex.found_by == "random-testing"
    _a, b = (int(x) for x in cex.args)
    assert b != 0
    assert cex.before.kind is BehaviourKind.RETURNED
    assert cex.after.kind is BehaviourKind.RAISED
    assert "RecursionError" in cex.after.text
    assert outcome.inputs_tried >= 1


def test_finds_an_off_by_one_in_a_list_loop_with_a_small_input() -> None:
    before = "def total(xs: list[int]) -> int:\n    s = 0\n    for i in range(len(xs)):\n" \
             "        s += xs[i]\n    return s\n"
    after = before.replace("range(len(xs))", "range(len(xs) - 1)")
    outcome = search(before, after, "total", types(xs="list[int]"), deadline_s=6, limits=FAST)
    cex = outcome.counterexample
    assert cex is not None, outcome.note
    # Shrunk: one non-zero element is the smallest distinguishing input.
    assert len(ast.literal_eval(cex.args[0])) == 1
    assert cex.before.text != cex.after.text


def test_finds_the_nan_case_of_a_float_comparison() -> None:
    before = "def nonneg(x: float) -> bool:\n    return x >= 0\n"
    after = "def nonneg(x: float) -> bool:\n    return not (x < 0)\n"
    outcome = search(before, after, "nonneg", types(x="float"), deadline_s=6, limits=FAST)
    cex = outcome.counterexample
    assert cex is not None, outcome.note
    assert cex.args == ("float('nan')",)
    assert cex.before.text == "False" and cex.after.text == "True"


def test_finds_a_string_difference() -> None:
    before = "def clean(s: str) -> str:\n    return s.strip()\n"
    after = "def clean(s: str) -> str:\n    return s.rstrip()\n"
    outcome = search(before, after, "clean", types(s="str"), deadline_s=6, limits=FAST)
    cex = outcome.counterexample
    assert cex is not None, outcome.note
    value = ast.literal_eval(cex.args[0])
    assert isinstance(value, str) and value != value.lstrip()


def test_a_version_that_hangs_where_the_other_returns_is_a_difference() -> None:
    before = "def bits(n: int) -> int:\n    c = 0\n    while n:\n        n &= n - 1\n" \
             "        c += 1\n    return c\n"
    after = before.replace("n &= n - 1", "n ^= n - 1")
    outcome = search(before, after, "bits", types(n="int"), deadline_s=6, limits=FAST)
    cex = outcome.counterexample
    assert cex is not None, outcome.note
    assert cex.before.kind is BehaviourKind.RETURNED
    assert cex.after.kind is BehaviourKind.HUNG


def test_finds_nothing_on_an_equivalent_pair() -> None:
    before = "def total(xs: list[int]) -> int:\n    return sum(xs)\n"
    after = "def total(xs: list[int]) -> int:\n    s = 0\n    for x in xs:\n" \
            "        s = s + x\n    return s\n"
    outcome = search(before, after, "total", types(xs="list[int]"), deadline_s=8, limits=FAST)
    assert outcome.counterexample is None
    assert outcome.inputs_tried > 20  # many inputs, even on a loaded machine
    assert "no difference" in outcome.note or "time cap" in outcome.note


def test_an_unannotated_parameter_takes_any_value() -> None:
    """With no annotation (and none inferred) the domain is every value: searched."""
    before = "def last(xs):\n    return xs[-1] if xs else None\n"
    after = "def last(xs):\n    return xs[0] if xs else None\n"
    outcome = search(before, after, "last", {}, deadline_s=6, limits=FAST)
    assert outcome.counterexample is not None, outcome.note


def test_unknown_parameter_types_are_not_searched_and_said() -> None:
    before = "def last(xs):\n    return xs[-1] if xs else None\n"
    after = "def last(xs):\n    return xs[0] if xs else None\n"
    # A class of the module whose objects cannot be made: its constructor needs a value
    # of a type that names nothing in the module.
    node = "class Node:\n    def __init__(self, cb: 'Undefined') -> None:\n" \
           "        self.cb = cb\n\n"
    outcome = search(node + before, node + after, "last", types(xs="list[Node]"),
                     deadline_s=6, limits=FAST)
    assert outcome.counterexample is None and outcome.inputs_tried == 0
    assert ("`xs: list[Node]`: `Node` is a class of the project whose objects are not built: "
            "its constructor's `cb`: `Undefined` could not be resolved in the module"
            ) in outcome.note, outcome.note


def test_a_bare_list_takes_elements_of_any_type() -> None:
    before = "def last(xs: list):\n    return xs[-1] if xs else None\n"
    after = "def last(xs: list):\n    return xs[0] if xs else None\n"
    outcome = search(before, after, "last", types(xs="list"), deadline_s=6, limits=FAST)
    assert outcome.counterexample is not None, outcome.note


def test_the_versions_run_in_the_sandbox_not_here(tmp_path: Path) -> None:
    marker = tmp_path / "written-by-pr-code"
    before = f"def f(x: int) -> int:\n    open({str(marker)!r}, 'w').write('x')\n    return x\n"
    after = "def f(x: int) -> int:\n    return x\n"
    outcome = search(before, after, "f", types(x="int"), deadline_s=6, limits=FAST)
    # The write outside the sandbox's directory was refused, in a child process; that
    # refusal is the sandbox's doing, so it is not a difference of the code.
    assert outcome.counterexample is None
    assert outcome.undecided is not None, outcome.note
    assert outcome.undecided.reason == Reason.SANDBOX_REFUSED
    assert "refused writing" in outcome.undecided.detail
    assert not marker.exists()


def test_a_difference_seen_only_by_the_search_child_is_not_returned() -> None:
    # Hypothesis is loaded in the search child but not in the children that confirm.
    before = "import sys\n\ndef f(x: int) -> bool:\n    return 'hypothesis' in sys.modules\n"
    after = "def f(x: int) -> bool:\n    return False\n"
    outcome = search(before, after, "f", types(x="int"), deadline_s=6, limits=FAST)
    assert outcome.counterexample is None
    assert "did not reproduce" in outcome.note


def test_a_version_that_does_not_import_is_reported() -> None:
    outcome = search("def f(x):\n    return x\n", "raise ImportError('no')\n", "f",
                     types(x="int"), deadline_s=4, limits=FAST)
    assert outcome.counterexample is None
    assert "after version could not be loaded" in outcome.note


def test_entry_parameters_are_read_without_running_the_code() -> None:
    src = "import os\nos._exit(3)\n\nclass C:\n    def m(self, a, b=1):\n        pass\n\n" \
          "def f(a, /, b, *rest, c=2):\n    pass\n"
    assert entry_parameters(src, "f") == ["a", "b"]
    assert entry_parameters(src, "C.m") == ["a"]
    assert entry_parameters(src, "g") is None
    assert entry_parameters("def (", "f") is None
    assert os.getpid() > 0  # still here: nothing was executed


def test_type_tree_and_constants_and_report_parsing() -> None:
    assert type_to_json(parse_type("dict[str, list[int | None]]")) == {
        "k": "dict", "key": {"k": "str"},
        "value": {"k": "list", "elem": {"k": "union",
                                        "options": [{"k": "int"}, {"k": "none"}]}},
    }
    assert type_to_json(parse_type("tuple[int, ...]")) == {"k": "tuple", "homog": {"k": "int"}}
    ints, strs = code_constants("x = 7\ny = '+'\nz = True\n", "def (")
    assert ints == [7] and strs == ["+"]
    out = 'noise\n@@veribot-search-result@@{"status": "none", "tried": 3}\nmore noise\n'
    report = parse_report(out)
    assert report is not None and report.status == "none" and report.tried == 3
    assert parse_report("nothing here") is None


def test_text_matching_a_changed_module_level_regex_is_tried() -> None:
    # Random text almost never holds an escape sequence; text drawn from the patterns does.
    head = "import re\nfrom re import sub as resub\n"
    fn = "\ndef strip(s: str) -> str:\n    return _ansi.sub('', s)\n"
    before = head + '_ansi = re.compile(r"\\033\\[[;?0-9]*[a-zA-Z]")' + fn
    after = head + '_ansi = re.compile(r"\\033\\[[0-?]*[ -/]*[@-~]")' + fn
    assert regex_patterns(before, after) == [r"\033\[[;?0-9]*[a-zA-Z]", r"\033\[[0-?]*[ -/]*[@-~]"]
    assert regex_patterns("import re as r\nx = r.sub('a+', '', y)\nz = resub('b', '', y)\n") == [
        "a+"
    ]
    outcome = search(before, after, "strip", types(s="str"), deadline_s=8, limits=FAST)
    assert outcome.counterexample is not None, outcome.note
    value = ast.literal_eval(outcome.counterexample.args[0])
    assert "\x1b[" in value
