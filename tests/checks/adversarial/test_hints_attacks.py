"""Adversarial hints: strong, plausible invariants and lemmas offered on pairs that differ.

A hint is only a Houdini candidate or a lemma proven on the helper's body, so whatever it
says, a pair that differs must never become verified: the difference here sits beyond the
unrolling bound (an early return, an exception, a break, one more iteration, another exit
condition) where only induction could decide, and each hint is true at the lock-step loop
heads or close to it. Equivalent pairs with the right hint stay verified (reach is kept).
"""

from __future__ import annotations

import ast

import pytest
import z3

from veribot.checks.equivalence import Budget
from veribot.checks.hints.check import check_hints
from veribot.checks.hints.format import HintError, loads, parse_hints
from veribot.checks.hints.model import Session, Status
from veribot.checks.lang.pymodule import Module
from veribot.checks.lang.pyvalues import SInt
from veribot.checks.verdict import Verdict

# Slow cases only `python -m pytest -m heavy` runs (tests/conftest.py); the default
# run keeps this module's other cases of each family.
HEAVY_CASES: dict[str, set[str]] = {
    "test_a_hint_never_verifies_a_pair_that_differs": {
        "invariant-true-only-after-a-side-effecting-loop-test",
        "side-effect-in-the-loop-condition",
    },
}

PROOF_ONLY = Budget(timeout_s=30, execute=False, search=False)
WITH_RUNS = Budget(timeout_s=30)

LOOP = """\
def f(n: int) -> int:
    s = 0
    i = 0
    while i < n:
        s += i
        i += 1
    return s
"""


def inv(expr: str) -> dict[str, object]:
    return {"kind": "invariant", "expr": expr}


# (name, before, after, hints): every pair differs, only beyond the unrolling bound or at
# a type the widened loop head must keep.
DIFFERENT: list[tuple[str, str, str, list[dict[str, object]]]] = [
    ("early-return-in-one-loop", LOOP, LOOP.replace(
        "        s += i\n", "        if i == 50:\n            return -1\n        s += i\n"),
     [inv("before.s == after.s and before.i == after.i")]),
    ("exception-mid-iteration-in-one-version", LOOP, LOOP.replace(
        "        s += i\n", "        s += 100 // (i - 50)\n        s -= 100 // (i - 50)\n"
        "        s += i\n"),
     [inv("before.s == after.s and before.i == after.i")]),
    ("break-in-one-version",
     "def f(n: int) -> int:\n    s = 0\n    for i in range(n):\n        s += i\n    return s\n",
     "def f(n: int) -> int:\n    s = 0\n    for i in range(n):\n        if i == 60:\n"
     "            break\n        s += i\n    return s\n",
     [inv("before.s == after.s")]),
    ("for-else-skipped-by-a-late-break",
     "def f(n: int) -> int:\n    s = 0\n    for i in range(n):\n        s += i\n    else:\n"
     "        s += 1\n    return s\n",
     "def f(n: int) -> int:\n    s = 0\n    for i in range(n):\n        s += i\n"
     "        if i == 70:\n            break\n    else:\n        s += 1\n    return s\n",
     [inv("before.s == after.s")]),
    ("one-more-iteration-hidden-by-k",
     "def f(n: int) -> int:\n    s = 0\n    i = 0\n    while i < n:\n        s += 2\n"
     "        i += 1\n    return s\n",
     "def f(n: int) -> int:\n    s = 0\n    i = 0\n    while i < n + 1:\n        s += 2\n"
     "        i += 1\n    return s - 2\n",
     [inv("before.s == 2 * k and after.s == 2 * k and before.i == k and after.i == k")]),
    ("exit-conditions-differ",
     "def f(n: int) -> int:\n    s = 0\n    for i in range(n):\n        s += i\n    return s\n",
     "def f(n: int) -> int:\n    s = 0\n    i = 0\n    while i < n and i != 1000:\n"
     "        s += i\n        i += 1\n    return s\n",
     [inv("before.s == after.s and after.i == k")]),
    ("side-effect-in-the-loop-condition",
     "def f(xs: list[int]) -> int:\n    s = 0\n    while len(xs) > 0:\n        s += xs.pop()\n"
     "    return s\n",
     "def f(xs: list[int]) -> int:\n    s = 0\n    while len(xs) > 0:\n        s += xs.pop()\n"
     "        if len(xs) == 70:\n            xs.pop()\n    return s\n",
     [inv("before.s == after.s and before.xs == after.xs")]),
    ("aliased-list-versus-copy",
     "def f(xs: list[int], n: int) -> list[int]:\n    ys = xs\n    for i in range(n):\n"
     "        ys.append(i)\n    return xs\n",
     "def f(xs: list[int], n: int) -> list[int]:\n    ys = list(xs)\n    for i in range(n):\n"
     "        ys.append(i)\n    return xs\n",
     [inv("before.xs == after.ys and before.ys == after.ys")]),
    ("bool-kept-by-a-loop-that-does-not-run",  # `v: int` also takes False; x + 0 is 0
     "def f(v: int, n: int) -> int:\n    x = v\n    i = 0\n    while i < n:\n        x = x + 0\n"
     "        i += 1\n    return x\n",
     "def f(v: int, n: int) -> int:\n    x = v\n    i = 0\n    while i < n:\n        x = x * 1\n"
     "        i += 1\n    return x + 0\n",
     [inv("before.x == after.x and before.i == after.i")]),
    ("bool-versus-int-from-the-start",
     "def f(b: bool, n: int) -> int:\n    x = b\n    for _ in range(n):\n        x = x + 1\n"
     "    return x\n",
     "def f(b: bool, n: int) -> int:\n    x = int(b)\n    for _ in range(n):\n"
     "        x = x + 1\n    return x\n",
     [inv("before.x == after.x")]),
    ("lemma-about-a-helper-that-never-returns-or-recurses",
     "def g(x: int) -> int:\n    while True:\n        x += 1\n    return x\n\n"
     "def r(x: int) -> int:\n    return r(x + 1)\n\n"
     "def h(x: int) -> int:\n    return x + 1\n\n" + LOOP.replace("s += i", "s = h(s)"),
     "def g(x: int) -> int:\n    while True:\n        x += 1\n    return x\n\n"
     "def r(x: int) -> int:\n    return r(x + 1)\n\n"
     "def h(x: int) -> int:\n    return x + 1\n\n"
     + LOOP.replace("s += i", "s = h(s) if i != 77 else s + 2"),
     [inv("g(before.s) == after.s"), inv("r(before.s) == r(after.s)"),
      {"kind": "lemma", "function": "h", "ensures": "result == g(x)"},
      {"kind": "lemma", "function": "h", "ensures": "result == r(x)"},
      {"kind": "lemma", "function": "h", "ensures": "result == x + 1"},
      inv("before.s == after.s and before.i == after.i")]),
]


# The loop test `xs.pop() > 0` changes the state: an invariant must be checked at one point
# of the head. It was checked on entry after the test, but assumed before it in the step,
# so `k == 0 and <true only after the first test>` made every step vacuous (verified,
# though the versions differ from 101 iterations on: [0] + [1] * 101 gives 101 and 102).
SIDE_EFFECT_TEST = """\
def f(xs: list[int]) -> int:
    t = len(xs)
    s = 0
    while xs.pop() > 0:
        s += 1
    return s
"""
DIFFERENT.append((
    "invariant-true-only-after-a-side-effecting-loop-test", SIDE_EFFECT_TEST,
    SIDE_EFFECT_TEST.replace("return s", "return s + (1 if s > 100 else 0)"),
    [inv("k == 0 and len(before.xs) + 1 == before.t and len(after.xs) + 1 == after.t")]))
DIFFERENT.append((
    "invariant-false-after-a-side-effecting-loop-test", SIDE_EFFECT_TEST,
    SIDE_EFFECT_TEST.replace("return s", "return s + (1 if s > 100 else 0)"),
    [inv("len(before.xs) == before.t and len(after.xs) == after.t")]))

# A hint that calls a helper with a loop: reading it over an arbitrary state reaches the
# unrolling bound. Read as false there, the invariant made every induction step vacuous,
# and the lemma made every call of `h` return nothing: both verified (1111 tells apart).
COUNT_DOWN = "def g(x: int) -> int:\n    while x > 0:\n        x -= 1\n    return x\n\n"
DIFFERENT.append((
    "invariant-whose-reading-reaches-the-unrolling-bound", COUNT_DOWN + LOOP,
    COUNT_DOWN + LOOP.replace("return s", "return s + (1 if s * 7 == 7777 else 0)"),
    [inv("g(before.s) == before.s")]))
DIFFERENT.append((
    "lemma-whose-reading-reaches-the-unrolling-bound",
    COUNT_DOWN + "def h(x: int) -> int:\n    return 0\n\ndef f(n: int) -> int:\n"
    "    return h(n + 0)\n",
    COUNT_DOWN + "def h(x: int) -> int:\n    return 0\n\ndef f(n: int) -> int:\n"
    "    return h(n + 0) + (1 if n * 7 == 7777 else 0)\n",
    [{"kind": "lemma", "function": "h", "ensures": "g(result) == 0"}]))


@pytest.mark.parametrize("name,before,after,hints", DIFFERENT, ids=[d[0] for d in DIFFERENT])
def test_a_hint_never_verifies_a_pair_that_differs(
    name: str, before: str, after: str, hints: list[dict[str, object]]
) -> None:
    checked = check_hints(before, after, "f", parse_hints(hints), budget=PROOF_ONLY)
    assert checked.result.verdict is not Verdict.VERIFIED, (name, checked.result.method)


@pytest.mark.parametrize("name", ["early-return-in-one-loop", "bool-versus-int-from-the-start"])
def test_the_difference_is_reproduced(name: str) -> None:
    _, before, after, hints = next(d for d in DIFFERENT if d[0] == name)
    checked = check_hints(before, after, "f", parse_hints(hints), budget=WITH_RUNS)
    assert checked.result.verdict is Verdict.REFUTED


def test_an_unreadable_helper_in_a_hint_makes_it_fail_not_hang() -> None:
    _, before, after, hints = next(
        d for d in DIFFERENT if d[0] == "lemma-about-a-helper-that-never-returns-or-recurses")
    checked = check_hints(before, after, "f", parse_hints(hints), budget=PROOF_ONLY)
    statuses = [r.status for r in checked.hints]
    # What a hint is where reading it reaches the unrolling bound is unknown: never
    # proven, never assumed (read as false it made every induction step vacuous).
    assert all(s in (Status.REFUTED, Status.REJECTED, Status.UNPROVEN) for s in statuses[:4])
    assert statuses[4] is Status.PROVEN  # true, and still no wrong verdict


# Equivalent: the same loops with the right hint are verified by induction.
EQUIVALENT: list[tuple[str, str, str, list[dict[str, object]]]] = [
    ("count-down-instead-of-up", LOOP,
     "def f(n: int) -> int:\n    s = 0\n    j = n\n    while j > 0:\n        j -= 1\n"
     "        s += n - 1 - j\n    return s\n",
     [inv("before.s == after.s and before.i + after.j == before.n")]),
    ("a-side-effecting-loop-test", SIDE_EFFECT_TEST,
     SIDE_EFFECT_TEST.replace("s += 1", "s = 1 + s"),
     [inv("before.s == after.s and before.xs == after.xs")]),
]


@pytest.mark.parametrize("name,before,after,hints", EQUIVALENT,
                         ids=[e[0] for e in EQUIVALENT])
def test_a_proven_hint_keeps_its_reach(
    name: str, before: str, after: str, hints: list[dict[str, object]]
) -> None:
    checked = check_hints(before, after, "f", parse_hints(hints), budget=PROOF_ONLY)
    assert checked.result.verdict is Verdict.VERIFIED, (name, checked.result.detail)


# -- hostile text: never evaluated, always a reason ----------------------------------------


@pytest.mark.parametrize("text", [
    '{"kind": "invariant", "expr": "before.s == after.s"}',  # one hint, not in a list
    '{"version": 1}',
])
def test_a_document_without_a_hint_list_says_so(text: str) -> None:
    with pytest.raises(HintError, match="list"):
        loads(text)


@pytest.mark.parametrize("expr", [
    "-" * 399 + "1", "(" * 150 + "1" + ")" * 150, "1<" * 150 + "1", "before.s == after.s; 1",
    "\x00", "len(x)(y)", "before(1)", "len(before)",
])
def test_hostile_expressions_get_a_reason(expr: str) -> None:
    parsed = parse_hints([inv(expr)])
    assert parsed.hints == () or parsed.hints[0].expr is not None
    for r in parsed.rejected:
        assert r.reason


def test_a_lemma_is_not_said_to_be_used_by_a_proof_that_did_not_happen() -> None:
    # The lemma is true and narrows `deep`, but says nothing about `deep` returning, so the
    # unit stays undecided: the report must not claim the lemma was used by a proof.
    helper = ("def deep(x: int) -> int:\n    return deep2(x)\n\n"
              "def deep2(x: int) -> int:\n    return x\n\n")
    before = helper + LOOP.replace("s += i", "s += deep(i)")
    after = helper + LOOP
    checked = check_hints(before, after, "f", parse_hints(
        [{"kind": "lemma", "function": "deep", "ensures": "result == x"}]), budget=PROOF_ONLY)
    assert checked.result.verdict is not Verdict.VERIFIED
    assert checked.hints[0].status is Status.PROVEN
    assert not checked.hints[0].used
    assert "used by the proof" not in checked.lines()[0]


def test_a_hint_the_model_cannot_read_at_some_head_is_never_kept() -> None:
    # Read as false where the model cannot read it, a hint assumed at the loop head would
    # make every step vacuous: it is dropped as soon as one reading fails.
    module = Module.of(ast.parse(""))
    session = Session(parse_hints([inv("before.x == after.x")]).hints)
    env = {"x": SInt(z3.Int("x"))}
    offered = session.candidates(module, module, (1, 1), dict(env), dict(env), {})
    assert len(offered) == 1
    assert session.prune(offered, "step") == offered  # read fine at the probed head
    offered[0][1]({}, {}, z3.Int("k"))  # a head where `x` cannot be read
    assert session.prune(offered, "step") == []
    assert session.results[0].status is Status.REJECTED
