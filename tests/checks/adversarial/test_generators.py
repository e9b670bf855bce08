"""Generators and iterators: what the comparison sees is the drained output.

The sandbox drains a returned generator or iterator at once (``drain`` in
``sandbox/_child.py``): the behaviour is the list of yielded items and whether it ended,
or the exception raised while draining (the items yielded before it are not kept), and the
list arguments after that. Each differing pair comes with an input on which CPython (run
here the same way) tells the two versions apart.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator

import pytest

from veribot.checks.equivalence import Budget, check_pair
from veribot.checks.verdict import Verdict

FAST = Budget(timeout_s=8)
PROOF_ONLY = Budget(timeout_s=8, search=False, execute=False)
# For pairs that must only not be verified, the code still run: random testing, which runs
# only once no proof was found and can turn no verdict into "verified", is left out.
NO_SEARCH = Budget(timeout_s=8, search=False)


def _g(body: str, params: str = "a: int, xs: list[int], s: str") -> str:
    return f"def f({params}):\n" + "".join(f"    {line}\n" for line in body.split("\n"))


def _run(src: str, args: tuple[object, ...]) -> tuple[str, object]:
    """What the comparison sees: the drained items (or the value), or the exception."""
    namespace: dict[str, object] = {}
    exec(compile(src, "<pair>", "exec"), namespace)
    fn = namespace["f"]
    assert callable(fn)
    copied = tuple(list(a) if isinstance(a, list) else a for a in args)
    try:
        value = fn(*copied)
        if isinstance(value, Iterator):
            # As the sandbox drains it: at most 1000 items, and whether it ended there.
            items = list(itertools.islice(value, 1001))
            value = ("drained", items[:1000], len(items) <= 1000)
        return "return", (value, copied)
    except Exception as exc:
        return "raise", (type(exc).__name__, copied)


DIFFERENT = [
    # Raising after some yields: the call raises (what was yielded is not seen).
    (_g("yield 1\nyield 10 // a"), _g("yield 1\nif a:\n    yield 10 // a"), (0, [], "")),
    # yield from a string yields its characters.
    (_g("yield from s"), _g("for c in s[1:]:\n    yield c"), (0, [], "ab")),
    # An empty generator against one that yields None.
    (_g("return\nyield"), _g("yield"), (0, [], "")),
    # A generator is not a list.
    (_g("yield from xs"), _g("return list(xs)"), (0, [1], "")),
    # PEP 479: StopIteration leaving a generator is a RuntimeError.
    (_g("yield next(iter(xs))"), _g("if xs:\n    yield xs[0]"), (0, [], "")),
    # The list arguments after the generator has run are compared.
    (_g("yield len(xs)\nxs.append(a)"), _g("yield len(xs)"), (0, [], "")),
    # Order of the items.
    (_g("yield from xs\nyield a"), _g("yield a\nyield from xs"), (0, [1], "")),
    # The iterator is shared: the second loop goes on where the first stopped.
    (
        _g("it = iter(xs)\nfor x in it:\n    if x > a:\n        break\nyield from it"),
        _g("for x in xs:\n    if x > a:\n        break\nyield from xs"),
        (0, [1, 2], ""),
    ),
]


def test_a_yielded_list_is_seen_after_the_generator_has_run() -> None:
    """The model leaves it aside (a yielded list mutated later); the search may refute it."""
    before, after = _g("yield xs\nxs.append(a)"), _g("yield list(xs)\nxs.append(a)")
    assert _run(before, (0, [], "")) != _run(after, (0, [], ""))
    result = check_pair(before, after, "f", budget=FAST)
    assert result.verdict is not Verdict.VERIFIED, result


def test_a_generator_stopped_after_1000_items_never_ran_its_end() -> None:
    """The comparison stops at the 1001st item: the mutation after it never happens."""
    before = _g("yield from xs\nxs.append(1)", "xs: list[int]")
    after = _g("xs.append(1)\nyield from xs[:-1]", "xs: list[int]")
    assert _run(before, (list(range(1001)),)) != _run(after, (list(range(1001)),))
    assert _run(before, ([1, 2],)) == _run(after, ([1, 2],))
    result = check_pair(before, after, "f", budget=NO_SEARCH)
    assert result.verdict is not Verdict.VERIFIED, result


def test_next_on_the_iterator_a_loop_runs_over_is_not_verified() -> None:
    """`for x in it: ... next(it)` skips items: the loop takes fewer turns (was verified
    against the pairwise sum over a tuple, whose loop the model unrolled in full)."""
    before = (
        "def f(t: tuple[int, int, int]) -> int:\n    it = iter(t)\n    n = 0\n"
        "    for x in it:\n        n = n * 7 + x + next(it, 100)\n    return n\n"
    )
    after = (
        "def f(t: tuple[int, int, int]) -> int:\n    a, b, c = t\n"
        "    return ((a + b) * 7 + b + c) * 7 + c + 100\n"
    )
    assert _run(before, ((1, 2, 3),)) != _run(after, ((1, 2, 3),))
    result = check_pair(before, after, "f", budget=PROOF_ONLY)
    assert result.verdict is not Verdict.VERIFIED, result
    result = check_pair(before, after, "f", budget=FAST)
    assert result.verdict is Verdict.REFUTED, result


def test_an_exception_after_the_1000th_item_is_not_seen() -> None:
    """Both raise ValueError in full, but the comparison stops the first after 1001 items:
    it never raises there (was verified: the model compared the exceptions only)."""
    before = _g("yield from xs\nraise ValueError", "xs: list[int]")
    after = _g("raise ValueError\nyield 0", "xs: list[int]")
    assert _run(before, (list(range(1001)),)) != _run(after, (list(range(1001)),))
    assert _run(before, ([1],)) == _run(after, ([1],))
    result = check_pair(before, after, "f", budget=PROOF_ONLY)
    assert result.verdict is not Verdict.VERIFIED, result


# Each was verified: the model said `x in it` raises TypeError and `it == it` is False.
ITERATOR_TESTS = [
    _g("it = iter(xs)\ntry:\n    return 1 if a in it else 0\nexcept TypeError:\n    return 5"),
    _g("it = iter(s)\ntry:\n    return 1 if 'a' in it else 0\nexcept TypeError:\n    return 5"),
    _g("it = iter(xs)\nreturn 1 if it == it else 5"),
    _g("it = iter(xs)\nreturn 1 if it in (it, a) else 5"),
]


@pytest.mark.parametrize("before", ITERATOR_TESTS, ids=[f"it{n}" for n in range(4)])
def test_membership_in_and_equality_of_an_iterator_are_not_verified(before: str) -> None:
    after = _g("return 5")
    assert _run(before, (2, [2], "a")) != _run(after, (2, [2], "a"))
    # Proof only (as under pull_request_target): a run of the code would catch the defect.
    result = check_pair(before, after, "f", budget=PROOF_ONLY)
    assert result.verdict is not Verdict.VERIFIED, result


@pytest.mark.parametrize(
    ("before", "after", "witness"), DIFFERENT, ids=[f"pair{n}" for n in range(len(DIFFERENT))]
)
def test_differing_generators_are_not_verified(
    before: str, after: str, witness: tuple[object, ...]
) -> None:
    assert _run(before, witness) != _run(after, witness)
    result = check_pair(before, after, "f", budget=FAST)
    assert result.verdict is Verdict.REFUTED, result


EQUIVALENT = [
    (_g("for x in xs:\n    yield x"), _g("yield from xs")),
    (_g("for c in s:\n    yield c\nyield s"), _g("yield from s\nyield s")),
    (_g("return\nyield"), _g("yield from []")),
    (_g("return iter(xs)"), _g("yield from xs")),
    (_g("yield len(xs)\nxs.append(a)"), _g("xs.append(a)\nyield len(xs) - 1")),
    (_g("yield 1\nreturn 5"), _g("yield 1\nreturn 6")),  # the return value is not seen
    # The partition_all pattern: hold one item back, yield it when the next arrives (on
    # a tuple of three, so the loop is unrolled in full; on a list it is beyond the bound).
    (
        _g("it = iter(xs)\ntry:\n    prev = next(it)\nexcept StopIteration:\n    return\n"
           "for item in it:\n    yield prev\n    prev = item\nyield prev",
           "xs: tuple[int, int, int]"),
        _g("yield from xs", "xs: tuple[int, int, int]"),
    ),
    (
        _g("if a > 0:\n    yield from xs\nelse:\n    for x in xs[1:]:\n        yield x"),
        _g("yield from (xs if a > 0 else xs[1:])"),
    ),
]


@pytest.mark.parametrize(
    ("before", "after"), EQUIVALENT, ids=[f"eq{n}" for n in range(len(EQUIVALENT))]
)
def test_equivalent_generators_are_verified(before: str, after: str) -> None:
    result = check_pair(before, after, "f", budget=FAST)
    assert result.verdict is Verdict.VERIFIED, result


# toolz 5eee30eb, `_merge_sorted_binary` on two lists (the recursion on more is left out).
MERGE = """
def f(a: list[int], b: list[int]):
    seq1 = iter(a)
    seq2 = iter(b)
    try:
        val2 = next(seq2)
    except StopIteration:
        {tail0}
        return

    for val1 in seq1:
        if val2 < val1:
            yield val2
            for val2 in seq2:
                if val2 < val1:
                    yield val2
                else:
                    yield val1
                    break
            else:
                break
        else:
            yield val1
    else:
        yield val2
        {tail2}
        return
    yield val1
    {tail1}
"""
BEFORE = MERGE.format(
    tail0="for val1 in seq1:\n            yield val1",
    tail1="for val1 in seq1:\n        yield val1",
    tail2="for val2 in seq2:\n            yield val2",
)
AFTER = MERGE.format(tail0="yield from seq1", tail1="yield from seq1", tail2="yield from seq2")


def test_merge_sorted_refactor_is_not_refuted() -> None:
    """The nested loops go beyond what a bounded proof covers: inconclusive, never refuted."""
    result = check_pair(BEFORE, AFTER, "f", budget=FAST)
    assert result.verdict in (Verdict.VERIFIED, Verdict.INCONCLUSIVE), result


@pytest.mark.parametrize(
    "mutant",
    [
        AFTER.replace("if val2 < val1:", "if val2 <= val1:"),
        AFTER.replace("        yield from seq2", "        yield from seq1"),
        AFTER.replace("    yield val1\n    yield from seq1", "    yield from seq1"),
    ],
    ids=["le", "wrong-tail", "dropped-item"],
)
def test_merge_sorted_mutants_are_refuted(mutant: str) -> None:
    assert mutant != AFTER
    result = check_pair(BEFORE, mutant, "f", budget=FAST)
    assert result.verdict is Verdict.REFUTED, result
