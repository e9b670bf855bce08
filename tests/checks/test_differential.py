"""Differential confirmation on real pairs of versions, executed in the sandbox."""

from __future__ import annotations

import pytest

from veribot.checks.sandbox import Limits, canonical
from veribot.checks.search.differential import (
    compare,
    confirm,
    difference,
    examine,
    render,
    run_both,
    same_behaviour,
)
from veribot.checks.verdict import ENDLESS, Behaviour, BehaviourKind, Reason

QUICK = Limits(wall_s=8.0, call_s=0.5)

GCD = "def gcd(a, b):\n    while b:\n        a, b = b, a % b\n    return a\n"
GCD_SWAPPED = "def gcd(a, b):\n    while b:\n        a, b = a % b, b\n    return a\n"


def test_gcd_with_swapped_assignment_is_refuted_as_an_endless_loop() -> None:
    cex = confirm(GCD, GCD_SWAPPED, "gcd", ["35", "21"], found_by="test", limits=QUICK)
    assert cex is not None
    assert cex.before.kind is BehaviourKind.RETURNED and cex.before.text == "7"
    assert cex.after.kind is BehaviourKind.HUNG and cex.after.value == ENDLESS
    assert "endless loop: the same state repeats at line 3" in cex.difference
    assert "when the before version returned in" in cex.difference
    assert cex.args == ("35", "21") and cex.found_by == "test"


def test_gcd_on_an_input_where_both_agree_is_not_a_counterexample() -> None:
    assert confirm(GCD, GCD_SWAPPED, "gcd", ["5", "0"], found_by="test", limits=QUICK) is None


def test_identical_versions_are_never_refuted() -> None:
    pairs = run_both(GCD, GCD, "gcd", [["12", "18"], ["0", "0"], ["-4", "6"]], limits=QUICK)
    assert all(same_behaviour(a, b) for a, b in pairs)
    assert all(difference(a, b) is None for a, b in pairs)


def test_mutating_the_argument_is_a_difference() -> None:
    pure = "def largest(xs):\n    return sorted(xs)[-1]\n"
    mutating = "def largest(xs):\n    xs.sort()\n    return xs[-1]\n"
    cex = confirm(pure, mutating, "largest", ["[3, 1, 2]"], found_by="test", limits=QUICK)
    assert cex is not None
    assert cex.before.value == cex.after.value
    assert "leave the arguments different" in cex.difference
    assert ("argument 1 is [3, 1, 2] after the before version, [1, 2, 3] after the after "
            "version") in cex.difference
    # already sorted: the mutation is invisible, so no difference
    assert confirm(pure, mutating, "largest", ["[1, 2]"], found_by="t", limits=QUICK) is None


def test_nan_results_are_equal_and_zero_signs_too() -> None:
    before = "def f(x):\n    return x - x\n"
    after = "def f(x):\n    return x * 0.0 if x == x else x\n"
    assert confirm(before, after, "f", ["float('nan')"], found_by="t", limits=QUICK) is None
    assert confirm(before, after, "f", ["float('inf')"], found_by="t", limits=QUICK) is None
    assert confirm(before, after, "f", ["-3.0"], found_by="t", limits=QUICK) is None


def test_one_versus_true_is_a_difference() -> None:
    before = "def pos(x):\n    return 1 if x > 0 else 0\n"
    after = "def pos(x):\n    return x > 0\n"
    cex = confirm(before, after, "pos", ["5"], found_by="t", limits=QUICK)
    assert cex is not None
    assert "returns 1" in cex.difference and "returns True" in cex.difference


def test_int_versus_float_with_equal_value() -> None:
    before = "def half(x):\n    return x // 2\n"
    after = "def half(x):\n    return x / 2\n"
    cex = confirm(before, after, "half", ["4"], found_by="t", limits=QUICK)
    assert cex is not None and "returns 2," in cex.difference and "returns 2.0" in cex.difference
    assert confirm(before, after, "half", ["5"], found_by="t", limits=QUICK) is not None


def test_exception_type_matters_but_not_its_message() -> None:
    div = "def f(a, b):\n    return a // b\n"
    checked = (
        "def f(a, b):\n    if b == 0:\n        raise ZeroDivisionError('no')\n    return a // b\n"
    )
    other = "def f(a, b):\n    if b == 0:\n        raise ValueError('no')\n    return a // b\n"
    assert confirm(div, checked, "f", ["1", "0"], found_by="t", limits=QUICK) is None
    cex = confirm(div, other, "f", ["1", "0"], found_by="t", limits=QUICK)
    assert cex is not None
    assert "raises ZeroDivisionError" in cex.difference and "raises ValueError" in cex.difference


def test_recursion_error_against_a_return_is_a_difference() -> None:
    before = "def depth(n):\n    return 0 if n == 0 else 1 + depth(n - 1)\n"
    after = "def depth(n):\n    return max(n, 0)\n"
    cex = confirm(before, after, "depth", ["-1"], found_by="t", limits=QUICK)
    assert cex is not None
    assert cex.before.kind is BehaviourKind.RAISED and cex.before.value == "RecursionError"
    assert cex.after.kind is BehaviourKind.RETURNED


def test_both_hanging_is_not_a_difference() -> None:
    loop = "def f(x):\n    while True:\n        x += 1\n"
    other_loop = "def f(x):\n    while x == x:\n        pass\n"
    [(a, b)] = run_both(loop, other_loop, "f", [["1"]], limits=QUICK)
    assert a.kind is b.kind is BehaviourKind.HUNG
    assert difference(a, b) is None and not same_behaviour(a, b)
    assert confirm(loop, other_loop, "f", ["1"], found_by="t", limits=QUICK) is None


def test_a_crash_is_never_silently_equal() -> None:
    returns = "def f(x):\n    return x\n"
    crashes = "import os\ndef f(x):\n    os._exit(3)\n"
    cex = confirm(returns, crashes, "f", ["1"], found_by="t", limits=QUICK)
    assert cex is not None and cex.after.kind is BehaviourKind.CRASHED
    assert "seen in each of 5 runs" in cex.difference
    [(a, b)] = run_both(crashes, crashes, "f", [["1"]], limits=QUICK)
    comparison = compare(a, b)
    assert not comparison.same and comparison.difference is None and comparison.undecided


def test_memory_blowup_against_a_return_is_the_sandboxs_limit_not_a_difference() -> None:
    small = "def f(n):\n    return n\n"
    huge = "def f(n):\n    return len(bytearray(n * 10**9))\n"
    limits = Limits(wall_s=8.0, call_s=0.5, memory_mb=256)
    seen = examine(small, huge, "f", ["4"], found_by="t", limits=limits)
    assert seen.counterexample is None
    assert seen.reason == Reason.SANDBOX_LIMIT and "memory" in seen.detail


def test_batch_keeps_the_order_and_isolates_versions() -> None:
    before = "seen = []\ndef f(x):\n    seen.append(x)\n    return len(seen)\n"
    after = "def f(x):\n    return 1\n"
    pairs = run_both(before, after, "f", [["'a'"], ["'b'"], ["'c'"]], limits=QUICK)
    assert [a.text for a, _ in pairs] == ["1", "2", "3"]
    assert [difference(a, b) is None for a, b in pairs] == [True, False, False]


@pytest.mark.parametrize(
    "value",
    [[1, (2,)], {"a": {1}}, frozenset(), set(), frozenset({2}), None, 1.5, "x", b"\x01", 10**30],
)
def test_render_reads_like_python(value: object) -> None:
    assert render(canonical(value)) == repr(value)


def test_behaviours_are_hashable_values() -> None:
    b = Behaviour(BehaviourKind.RETURNED, canonical([1, {2: 3}]), "[1, {2: 3}]")
    assert hash(b) == hash(Behaviour(BehaviourKind.RETURNED, canonical([1, {2: 3}]), "[1, {2: 3}]"))


def test_returned_generators_are_compared_by_what_they_yield() -> None:
    before = "def f(n):\n    for i in range(n):\n        yield i\n"
    after = "def f(n):\n    for i in range(n - 1):\n        yield i\n"
    same = "def f(n):\n    return iter(list(range(n)))\n"
    found = confirm(before, after, "f", ["3"], found_by="test")
    assert found is not None
    assert "[0, 1, 2]" in found.before.text and "[0, 1]" in found.after.text
    assert confirm(before, same, "f", ["3"], found_by="test") is None


def test_an_exception_while_iterating_ends_the_returned_iterator() -> None:
    before = "def f(n):\n    yield 1\n    raise ValueError('late')\n"
    after = "def f(n):\n    yield 1\n"
    found = confirm(before, after, "f", ["0"], found_by="test")
    assert found is not None
    assert found.before.kind is BehaviourKind.RETURNED
    assert "then raising ValueError" in found.before.text


def test_raising_at_the_call_is_not_raising_when_consumed() -> None:
    # more-itertools `chunked` (0e6acdf): a negative size now raises at the call; before,
    # the iterator it returned raised only when consumed (a caller may never consume it).
    lazy = "def f(n):\n    return map(lambda i: 1 // n, [1])\n"
    eager = "def f(n):\n    if n == 0:\n        raise ZeroDivisionError\n" \
        "    return map(lambda i: 1 // n, [1])\n"
    found = confirm(lazy, eager, "f", ["0"], found_by="test")
    assert found is not None
    assert found.before.kind is BehaviourKind.RETURNED and found.after.kind is BehaviourKind.RAISED
    assert confirm(lazy, eager, "f", ["1"], found_by="test") is None


def test_what_a_generator_yielded_before_it_raised_is_not_compared() -> None:
    # As the model has it (``pygen``): a generator that raises is compared by the exception.
    before = "def f(n):\n    yield 1\n    raise ValueError\n"
    after = "def f(n):\n    yield 2\n    raise ValueError\n"
    assert confirm(before, after, "f", ["0"], found_by="test") is None


def test_keyword_calls_and_defaults_left_out() -> None:
    before = "def scale(x, k=2):\n    return x * k\n"
    after = "def scale(x, k=3):\n    return x * k\n"
    cex = confirm(before, after, "scale", ["x=1"], found_by="t", limits=QUICK)
    assert cex is not None and cex.args == ("x=1",)
    assert cex.call("scale") == "scale(x=1)"
    assert confirm(before, after, "scale", ["x=1", "k=5"], found_by="t", limits=QUICK) is None


def test_a_difference_after_earlier_calls_names_them() -> None:
    fresh = "def f(x, acc=None):\n    acc = [] if acc is None else acc\n    acc.append(x)\n" \
        "    return acc\n"
    shared = "def f(x, acc=[]):\n    acc.append(x)\n    return acc\n"
    assert confirm(fresh, shared, "f", ["2"], found_by="t", limits=QUICK) is None
    cex = confirm(fresh, shared, "f", ["2"], found_by="t", limits=QUICK, prior=[["1"]])
    assert cex is not None and cex.prior == (("1",),)
    assert cex.before.text == "[2]" and cex.after.text == "[1, 2]"
    assert cex.call("f") == "f(2) after f(1)"


TAG = "class Tag:\n    def __init__(self, v):\n        self.v = v\n\n\n"


def test_an_address_in_a_result_is_no_difference_and_hides_none() -> None:
    # A true refactoring that returns an object's repr (its address differs in each run).
    made = TAG + "def f(x):\n    return f'made {Tag(x)!r}'\n"
    same = TAG + "def f(x):\n    tag = Tag(x)\n    return 'made ' + repr(tag)\n"
    seen = examine(made, same, "f", ["1"], found_by="t", limits=QUICK)
    assert seen.counterexample is None and not seen.reason, seen
    # Returning it where the other raises is a difference, reproduced in every run.
    raises = TAG + "def f(x):\n    raise ValueError(f'bad {Tag(x)!r}')\n"
    seen = examine(made, raises, "f", ["1"], found_by="t", limits=QUICK)
    assert seen.counterexample is not None, seen
    assert seen.counterexample.before.text == "'made <subject.Tag object at 0x?>'"
    assert seen.counterexample.after.text == "ValueError: bad <subject.Tag object at 0x?>"
