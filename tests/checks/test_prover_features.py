"""The prover's ways of proving: shared helpers, induction, no-execute mode, time limits."""

from __future__ import annotations

import ast

from veribot.checks.equivalence import Budget, check_pair
from veribot.checks.lang import pyshared
from veribot.checks.lang.pymodule import Module
from veribot.checks.search.differential import confirm
from veribot.checks.verdict import Reason, Verdict

FAST = Budget(timeout_s=6)

HELPER = '''
def scale(a: int, b: int) -> int:
    if a > 10:
        return a * b - 1
    if b < 0:
        raise ValueError("negative")
    return a * b + a // (b + 1)
'''


def test_identical_helper_is_shared_and_named_in_the_assumptions() -> None:
    before = HELPER + '''
def f(x: int, y: int) -> int:
    if x > y:
        return scale(x, y) + 1
    return scale(y, x) - 1
'''
    after = HELPER + '''
def f(x: int, y: int) -> int:
    return scale(x, y) + 1 if x > y else scale(y, x) - 1
'''
    result = check_pair(before, after, "f", budget=FAST)
    assert result.verdict is Verdict.VERIFIED
    assert any("`scale`" in a and "arbitrary function" in a for a in result.assumptions)


def test_wrong_call_of_a_shared_helper_is_refuted_with_a_real_input() -> None:
    before = HELPER + '''
def f(x: int, y: int) -> int:
    return scale(y, x) - 1
'''
    after = HELPER + '''
def f(x: int, y: int) -> int:
    return scale(x, y) - 1
'''
    result = check_pair(before, after, "f", budget=FAST)
    assert result.verdict is Verdict.REFUTED
    assert result.counterexample is not None
    assert confirm(before, after, "f", result.counterexample.args, found_by="test") is not None


def test_changed_helper_is_not_shared() -> None:
    before = HELPER + "\ndef f(x: int) -> int:\n    return scale(x, 2)\n"
    caller = "\ndef f(x: int) -> int:\n    return scale(x, 2)\n"
    after = HELPER.replace("a * b - 1", "a * b - 2") + caller
    a, b = ast.parse(before), ast.parse(after)
    assert pyshared.shared_helpers(a, b, Module.of(a), Module.of(b)) == {}
    assert "scale" in pyshared.shared_helpers(a, a, Module.of(a), Module.of(a))


def test_helper_reading_a_changed_constant_is_not_shared() -> None:
    src = (
        "K = {k}\ndef g(x: int) -> int:\n    return x + K\n"
        "def f(x: int) -> int:\n    return g(x)\n"
    )
    a, b = ast.parse(src.format(k=1)), ast.parse(src.format(k=2))
    assert pyshared.shared_helpers(a, b, Module.of(a), Module.of(b)) == {}
    result = check_pair(src.format(k=1), src.format(k=2), "f", budget=FAST)
    assert result.verdict is Verdict.REFUTED


def test_recursive_or_impure_helpers_are_not_shared() -> None:
    src = '''
def rec(n: int) -> int:
    return 0 if n <= 0 else rec(n - 1)

def impure(n: int) -> int:
    print(n)
    return n

def f(n: int) -> int:
    return rec(n) + impure(n)
'''
    tree = ast.parse(src)
    module = Module.of(tree)
    assert pyshared.shared_helpers(tree, tree, module, module) == {}


def test_lock_step_loops_are_proven_for_every_length() -> None:
    before = '''
def search(x: int, seq: tuple[int, ...]) -> int:
    for i in range(len(seq)):
        if x <= seq[i]:
            return i
    return len(seq)
'''
    after = '''
def search(x: int, seq: tuple[int, ...]) -> int:
    count = 0
    for item in seq:
        if x <= item:
            return count
        count += 1
    return count
'''
    result = check_pair(before, after, "search", budget=FAST)
    assert result.verdict is Verdict.VERIFIED
    assert "induction" in result.method
    assert "count' == k" in result.method


def test_list_building_loops_are_proven_by_induction() -> None:
    before = '''
def dedupe(lst: list[int]) -> list[int]:
    out = []
    for v in lst:
        if v not in out:
            out.append(v)
    return out
'''
    after = '''
def dedupe(lst: list[int]) -> list[int]:
    seen = []
    for item in lst:
        if item in seen:
            continue
        seen.append(item)
    return seen
'''
    result = check_pair(before, after, "dedupe", budget=FAST)
    assert result.verdict is Verdict.VERIFIED
    assert "out == seen'" in result.method


def test_without_execution_a_solver_difference_stays_inconclusive() -> None:
    before = "def f(x: int) -> int:\n    return x // 2\n"
    after = "def f(x: int) -> int:\n    return -(-x // 2)\n"
    result = check_pair(before, after, "f", budget=Budget(timeout_s=6, execute=False))
    assert result.verdict is Verdict.INCONCLUSIVE
    assert result.reason == Reason.NOT_EXECUTED
    assert result.counterexample is None


def test_without_execution_a_proof_still_verifies() -> None:
    before = "def f(x: int) -> int:\n    return x * 2\n"
    after = "def f(x: int) -> int:\n    return x + x\n"
    result = check_pair(before, after, "f", budget=Budget(timeout_s=6, execute=False))
    assert result.verdict is Verdict.VERIFIED


def test_a_model_too_slow_to_build_is_a_timeout_not_a_proof() -> None:
    # Deep inlining of a doubly recursive helper: the model cannot be built in the time.
    src = '''
def fib(n: int) -> int:
    if n < 2:
        return n
    return fib(n - 1) + fib(n - 2) + fib(n - 3) * 0

def f(n: int) -> int:
    return fib(n)
'''
    result = check_pair(
        src, src.replace("* 0", "* 1"), "f", budget=Budget(timeout_s=1.5, inline_depth=12)
    )
    assert result.verdict is not Verdict.VERIFIED


SEARCH = '''
def search(x: int, seq: tuple[int, ...]) -> int:
    for i in range(len(seq)):
        if x <= seq[i]:
            return i
    return len(seq)
'''


def test_while_counter_against_for_loop_with_the_loop_in_an_else() -> None:
    after = '''
def search(x: int, seq: tuple[int, ...]) -> int:
    if len(seq) == 0:
        return 0
    else:
        n = 0
        while n < len(seq):
            if x <= seq[n]:
                return n
            n += 1
        return n
'''
    result = check_pair(SEARCH, after, "search", budget=FAST)
    assert result.verdict is Verdict.VERIFIED, result
    assert "n' == k" in result.method


def test_loop_else_and_the_value_of_the_loop_variable_after_the_loop() -> None:
    after = '''
def search(x: int, seq: tuple[int, ...]) -> int:
    if not seq:
        return 0
    for c, value in enumerate(seq):
        if value >= x:
            return c
    else:
        return c + 1
'''
    assert check_pair(SEARCH, after, "search", budget=FAST).verdict is Verdict.VERIFIED


def test_a_difference_only_when_the_loop_ends_is_refuted() -> None:
    after = '''
def search(x: int, seq: tuple[int, ...]) -> int:
    for i in range(len(seq)):
        if x <= seq[i]:
            return i
    else:
        return len(seq) + (1 if len(seq) > 7 else 0)
'''
    result = check_pair(SEARCH, after, "search", budget=FAST)
    assert result.verdict is Verdict.REFUTED
    assert result.counterexample is not None
    assert confirm(SEARCH, after, "search", result.counterexample.args, found_by="t") is not None


def test_a_return_on_the_last_iteration_only_is_compared_with_the_loop_end() -> None:
    # Equivalent: returning len(seq) in the last iteration is what the loop end does.
    last = '''
def search(x: int, seq: tuple[int, ...]) -> int:
    for i, elem in enumerate(seq):
        if x <= elem:
            return i
        if i == len(seq) - 1:
            return len(seq)
    return 0
'''
    assert check_pair(SEARCH, last, "search", budget=FAST).verdict is Verdict.VERIFIED
    # Not equivalent: the same, but one before the end.
    early = last.replace("if i == len(seq) - 1:", "if i == len(seq) - 2:")
    result = check_pair(SEARCH, early, "search", budget=FAST)
    assert result.verdict is Verdict.REFUTED


def test_a_helper_whose_annotation_lies_is_not_shared() -> None:
    # `-> int`, but it may return NaN: as an int-valued function, g(x) == g(x) would hold.
    before = '''
def g(x: int) -> int:
    if x > 3:
        return x * 1e308 * 10 - x * 1e308 * 10
    return x

def f(x: int) -> bool:
    return g(x) == g(x)
'''
    after = before.replace("return g(x) == g(x)", "return True")
    tree = ast.parse(before)
    module = Module.of(tree)
    assert "g" not in pyshared.shared_helpers(tree, tree, module, module)
    result = check_pair(before, after, "f", budget=FAST)
    assert result.verdict is Verdict.REFUTED


DEDUPE = '''
def dedupe(lst: list[int]) -> list[int]:
    out = []
    for v in lst:
        if v not in out:
            out.append(v)
    return out
'''


def test_an_early_return_where_the_other_loop_would_not_run_and_a_head_start() -> None:
    # The after version returns early on [] (where the other loop runs zero times) and
    # starts its list with the first item: equal from the second iteration on.
    after = '''
def dedupe(lst: list[int]) -> list[int]:
    if lst == []:
        return lst
    seen = [lst[0]]
    for item in lst:
        if item in seen:
            continue
        seen.append(item)
    return seen
'''
    result = check_pair(DEDUPE, after, "dedupe", budget=FAST)
    assert result.verdict is Verdict.VERIFIED, result
    assert "k > 0 -> out == seen'" in result.method


def test_a_head_start_that_changes_the_result_is_refuted() -> None:
    after = '''
def dedupe(lst: list[int]) -> list[int]:
    if lst == []:
        return lst
    seen = [lst[0], lst[0]]
    for item in lst:
        if item in seen:
            continue
        seen.append(item)
    return seen
'''
    result = check_pair(DEDUPE, after, "dedupe", budget=FAST)
    assert result.verdict is Verdict.REFUTED
