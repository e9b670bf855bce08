"""Refutations are stable and the code's own: never an artefact of the run or the sandbox.

Each pair runs through ``check_pair`` with the real sandbox. Versions that depend on
something besides their input (random numbers, the clock, the environment) are
inconclusive (``nondeterministic``), not refuted; a result that follows the hash seed
(the order of a set of strings) is compared under one seed, which a refutation names; equal
versions that the sandbox stops (a sleep past the per-call timer, a large temporary, a
write outside its directory, a thread pool, a subprocess) are inconclusive with the
sandbox's reason; real differences, an endless loop included, are still refuted.
"""

from __future__ import annotations

import pytest

from veribot.checks.equivalence import Budget, check_pair
from veribot.checks.sandbox import Limits
from veribot.checks.search.differential import examine
from veribot.checks.verdict import ENDLESS, BehaviourKind, Reason, Result, Verdict

# Slow cases only `python -m pytest -m heavy` runs (tests/conftest.py); the default
# run keeps this module's other cases of each family.
HEAVY_CASES: dict[str, set[str]] = {"test_equivalent_versions_are_still_verified": {"loop"}}

QUICK = Budget(timeout_s=4)
SURE = Budget(timeout_s=30)


def _check(before: str, after: str, entry: str = "f") -> Result:
    return check_pair(before, after, entry, budget=QUICK)


def _sure(before: str, after: str, entry: str = "f") -> Result:
    """For pairs that must be decided: a wall clock a loaded machine cannot run out of (a
    refutation or a proof ends the check at once, so it costs nothing when the machine is
    quiet)."""
    return check_pair(before, after, entry, budget=SURE)


def _undecided(result: Result, reason: str) -> None:
    assert result.verdict is Verdict.INCONCLUSIVE, (result.verdict, result.detail)
    assert result.reason == reason, (result.reason, result.detail, result.notes)


def _refuted(result: Result) -> None:
    assert result.verdict is Verdict.REFUTED, (result.reason, result.detail, result.notes)
    assert result.counterexample is not None
    assert "seen in each of 5 runs" in result.counterexample.difference


# -- nondeterministic versions: not refuted -------------------------------------------------


def test_a_random_result_is_nondeterministic_not_a_difference() -> None:
    before = "import random\n\ndef f(x: int) -> int:\n    return x + random.randint(0, 10**9)\n"
    after = "import random\n\ndef f(x: int) -> int:\n    return random.randint(0, 10**9) + x\n"
    result = _check(before, after)
    _undecided(result, Reason.NONDETERMINISTIC)
    assert "in one run and" in result.detail


def test_the_clock_is_nondeterministic() -> None:
    before = "import time\n\ndef f(x: int) -> str:\n    return f'{x}@{time.time()}'\n"
    after = "import time\n\ndef f(x: int) -> str:\n    return str(x) + '@' + str(time.time())\n"
    _undecided(_check(before, after), Reason.NONDETERMINISTIC)


def test_the_environment_is_nondeterministic() -> None:
    # The sandbox gives each child its own HOME: a version that reads it varies.
    before = "import os\n\ndef f(x: int) -> str:\n    return os.environ.get('HOME', '') + str(x)\n"
    after = "def f(x: int) -> str:\n    return '/root' + str(x)\n"
    _undecided(_check(before, after), Reason.NONDETERMINISTIC)


def test_the_order_of_a_set_of_strings_differs_under_one_hash_seed() -> None:
    # The order follows PYTHONHASHSEED: under each seed it is the same every time, so the
    # versions differ under one seed, which the counterexample names.
    words = "{s, 'apple', 'pear', 'fig', 'kiwi', 'plum', 'lime'}"
    before = f"def f(s: str) -> list[str]:\n    return list({words})\n"
    after = f"def f(s: str) -> list[str]:\n    return sorted({words})\n"
    seen = examine(before, after, "f", ["'z'"], found_by="test")
    cex = seen.counterexample
    assert cex is not None, seen.detail  # 1 chance in 5040 that the first order is sorted
    assert cex.hash_seed is not None and f"PYTHONHASHSEED={cex.hash_seed}" in cex.difference


def test_random_results_of_the_same_kind_are_never_a_difference_under_one_seed() -> None:
    # Both draw from the same distribution, by other calls: a draw repeating under one
    # seed by chance must not pass for a result that follows the seed.
    before = "import random\n\ndef f(x: int) -> int:\n    return random.randrange(2) + x\n"
    after = "import random\n\ndef f(x: int) -> int:\n    return random.choice([0, 1]) + x\n"
    for _ in range(3):
        seen = examine(before, after, "f", ["1"], found_by="test")
        assert seen.counterexample is None
        assert seen.reason in ("", Reason.NONDETERMINISTIC)


def test_a_set_order_mixed_with_the_clock_is_nondeterministic() -> None:
    before = ("import time\n\ndef f(s: str) -> list[str]:\n"
              "    return list({s, 'a', 'b', 'c', str(time.time_ns())})\n")
    after = before.replace("list(", "sorted(")
    seen = examine(before, after, "f", ["'z'"], found_by="test")
    assert seen.counterexample is None and seen.reason == Reason.NONDETERMINISTIC


def test_object_ids_are_nondeterministic() -> None:
    before = "def f(x: int) -> int:\n    return id(object()) % 1000003 + x\n"
    after = "def f(x: int) -> int:\n    return x\n"
    seen = examine(before, after, "f", ["1"], found_by="test")
    assert seen.counterexample is None and seen.reason == Reason.NONDETERMINISTIC


# -- the sandbox's limits and refusals: not refuted ------------------------------------------


def test_a_sleep_past_the_timer_is_not_a_hang() -> None:
    before = "import time\n\ndef f(x: int) -> int:\n    time.sleep(30)\n    return x + 1\n"
    after = "def f(x: int) -> int:\n    return x + 1\n"
    result = _check(before, after)
    _undecided(result, Reason.SANDBOX_LIMIT)
    assert "no endless loop was seen" in result.detail


def test_a_slow_but_finite_loop_is_not_a_hang() -> None:
    before = ("def f(x: int) -> int:\n    i = 0\n    while i < 10**9:\n        i += 1\n"
              "    return x\n")
    after = "def f(x: int) -> int:\n    return x\n"
    seen = examine(before, after, "f", ["1"], found_by="test", limits=Limits(call_s=0.3))
    assert seen.counterexample is None and seen.reason == Reason.SANDBOX_LIMIT


def test_an_inner_loop_repeating_its_state_is_not_an_endless_outer_loop() -> None:
    # The inner loop comes back to x == 3 each round, but the outer one counts rounds.
    before = ("def f(n: int) -> int:\n    rounds = 0\n    x = 3\n    while True:\n"
              "        while x > 0:\n            x -= 1\n            rounds += 1\n"
              "        if rounds > 10**8:\n            return n\n        x = 3\n")
    after = "def f(n: int) -> int:\n    return n\n"
    seen = examine(before, after, "f", ["1"], found_by="test", limits=Limits(call_s=0.3))
    assert seen.counterexample is None and seen.reason == Reason.SANDBOX_LIMIT


def test_a_large_temporary_is_the_sandboxs_memory_limit() -> None:
    before = ("def f(x: int) -> int:\n    scratch = bytearray(10**9)\n"
              "    return x + 1 + scratch[0]\n")
    after = "def f(x: int) -> int:\n    return x + 1\n"
    result = _check(before, after)
    _undecided(result, Reason.SANDBOX_LIMIT)
    assert "memory" in result.detail


def test_a_log_file_outside_the_sandbox_is_a_refusal() -> None:
    before = ("def f(x: int) -> int:\n    with open('/var/log/veribot-app.log', 'a') as log:\n"
              "        log.write(str(x))\n    return x * 2\n")
    after = "def f(x: int) -> int:\n    return x * 2\n"
    result = _check(before, after)
    _undecided(result, Reason.SANDBOX_REFUSED)
    assert "refused writing '/var/log/veribot-app.log'" in result.detail


def test_a_refusal_the_code_catches_is_still_the_sandboxs() -> None:
    before = ("def f(x: int) -> int:\n    try:\n        open('/var/log/app.log', 'a').close()\n"
              "    except OSError:\n        return -1\n    return x\n")
    after = "def f(x: int) -> int:\n    return x\n"
    _undecided(_check(before, after), Reason.SANDBOX_REFUSED)


def test_a_thread_pool_is_a_refusal() -> None:
    before = ("from concurrent.futures import ThreadPoolExecutor\n\n"
              "def f(xs: list[int]) -> list[int]:\n"
              "    with ThreadPoolExecutor(max_workers=2) as pool:\n"
              "        return list(pool.map(abs, xs))\n")
    after = "def f(xs: list[int]) -> list[int]:\n    return [abs(x) for x in xs]\n"
    result = _check(before, after)
    _undecided(result, Reason.SANDBOX_REFUSED)
    assert "starting a thread" in result.detail


def test_a_subprocess_is_a_refusal() -> None:
    before = ("import subprocess\n\ndef f(x: int) -> int:\n"
              "    subprocess.run(['true'], check=False)\n    return x\n")
    after = "def f(x: int) -> int:\n    return x\n"
    _undecided(_check(before, after), Reason.SANDBOX_REFUSED)


# -- real differences: still refuted ------------------------------------------------------


def test_an_endless_loop_against_a_return_is_refuted() -> None:
    before = ("def f(xs: list[int]) -> int:\n    i = 0\n    total = 0\n"
              "    while i < len(xs):\n        total += xs[i]\n        i += 1\n    return total\n")
    after = before.replace("        i += 1\n", "")  # the increment forgotten
    result = _sure(before, after)
    _refuted(result)
    assert result.counterexample is not None
    assert result.counterexample.after.kind is BehaviourKind.HUNG
    assert result.counterexample.after.value == ENDLESS


def test_an_exception_difference_is_refuted() -> None:
    before = "def f(xs: list[int]) -> int:\n    return xs[0]\n"
    after = "def f(xs: list[int]) -> int:\n    return xs[0] if xs else 0\n"
    result = _sure(before, after)
    _refuted(result)
    assert result.counterexample is not None and "IndexError" in result.counterexample.before.text


def test_seeded_randomness_is_deterministic_and_refutable() -> None:
    before = ("import random\n\ndef f(x: int) -> int:\n    rng = random.Random(x)\n"
              "    return rng.randint(0, 10**6)\n")
    after = before.replace("random.Random(x)", "random.Random(x + 1)")
    _refuted(_sure(before, after))


def test_allowed_scratch_files_and_short_sleeps_do_not_hide_a_difference() -> None:
    before = ("import tempfile, time\n\ndef f(x: int) -> int:\n    time.sleep(0.01)\n"
              "    with tempfile.TemporaryFile('w+') as scratch:\n"
              "        scratch.write(str(x))\n        scratch.seek(0)\n"
              "        return int(scratch.read()) + 1\n")
    after = before.replace("+ 1\n", "+ 2\n")
    _refuted(_sure(before, after))


# -- random search uses only inputs of the declared types ---------------------------------


def test_an_instance_method_is_searched_on_objects_its_class_builds() -> None:
    before = ("class Scale:\n    def __init__(self, k: int) -> None:\n        self.k = k\n\n"
              "    def apply(self, x: int) -> int:\n        return x * self.k\n")
    # Equivalent for every `k`: proven, with self taken as a Scale whose `k` is an int.
    same = _sure(before, before.replace("x * self.k", "self.k * x"), "Scale.apply")
    assert same.verdict is Verdict.VERIFIED, same.detail
    assert any("exactly `Scale`" in a for a in same.assumptions), same.assumptions
    # A difference is shown on an object built by calling the class, never a made-up self.
    result = _sure(before, before.replace("x * self.k", "x + self.k"), "Scale.apply")
    _refuted(result)
    assert result.counterexample is not None
    assert result.counterexample.receiver.startswith("Scale(")


def test_static_and_class_methods_are_searched() -> None:
    before = ("class Units:\n    @staticmethod\n    def cm(x: int) -> int:\n"
              "        return x * 100\n\n    @classmethod\n    def mm(cls, x: int) -> int:\n"
              "        return x * 1000\n")
    after = before.replace("x * 100\n", "x * 10\n").replace("x * 1000", "x * 100")
    _refuted(_sure(before, after, "Units.cm"))
    _refuted(_sure(before, after, "Units.mm"))


def test_a_frozenset_parameter_gets_frozensets() -> None:
    # hash() of a set would raise: a set is outside the declared domain.
    before = "def f(s: frozenset[int]) -> int:\n    return len(s) + 0 * hash(s)\n"
    after = "def f(s: frozenset[int]) -> int:\n    return len(s)\n"
    assert _check(before, after).verdict is not Verdict.REFUTED


# -- equivalent versions: the proof is untouched ------------------------------------------


_LOOP = "def f(n: int) -> int:\n    s = 0\n    for i in range(n):\n        s += 2\n    return s\n"
EQUIVALENT = {
    "straight-line": ("def f(x: int, y: int) -> int:\n    return x * 2 + y\n",
                      "def f(x: int, y: int) -> int:\n    return y + x + x\n"),
    # The tripwire after the proof runs inputs up to range(10**9), each stopped by the
    # sandbox's timer without a difference: about a third of SURE's 30 s.
    "loop": (_LOOP, _LOOP.replace("s += 2", "s += 1\n        s += 1")),
}


@pytest.mark.parametrize(("before", "after"), list(EQUIVALENT.values()), ids=list(EQUIVALENT))
def test_equivalent_versions_are_still_verified(before: str, after: str) -> None:
    assert _sure(before, after).verdict is Verdict.VERIFIED


# -- artefacts of what the sandbox was given, seen on real commits -----------------------------


def test_a_context_manager_whose_function_docstring_changed_is_not_a_difference() -> None:
    # @contextmanager copies the function's docstring into the object it returns; that
    # bookkeeping attribute is not state (seen on a real refactoring of click).
    source = (
        "import contextlib\n\n@contextlib.contextmanager\ndef f(x: int):\n"
        "    '''DOC'''\n    yield x\n"
    )
    result = _check(source.replace("DOC", "Old."), source.replace("DOC", "New."))
    assert result.verdict is not Verdict.REFUTED, result.detail


def test_an_attribute_of_a_returned_object_is_still_compared() -> None:
    source = (
        "class Box:\n    def __init__(self, v):\n        self.v = v\n\n"
        "def f(x: int):\n    return Box(EXPR)\n"
    )
    _refuted(_sure(source.replace("EXPR", "x"), source.replace("EXPR", "x + 1")))


def test_an_import_the_sandbox_cannot_make_is_not_a_difference() -> None:
    before = "def f(x: int) -> int:\n    import not_installed_anywhere\n    return x\n"
    after = "def f(x: int) -> int:\n    return x\n"
    _undecided(_check(before, after), Reason.SANDBOX_LIMIT)


# -- the sandbox's environment is a plain process's -----------------------------------------


def test_code_that_reads_the_environment_sees_a_plain_process() -> None:
    """PATH and HOME exist in the sandbox as in any login shell: reading them is no
    KeyError that the sandbox alone makes, and an equivalent pair is not refuted."""
    before = ("import os\n\ndef f(x: int) -> int:\n"
              "    return x + len(os.environ['PATH'].split(':'))\n")
    after = ("import os\n\ndef f(x: int) -> int:\n"
             "    return len(os.environ.get('PATH', '').split(':')) + x\n")
    result = _check(before, after)
    assert result.verdict is not Verdict.REFUTED, (result.detail, result.counterexample)
    # A variable a plain process lacks still tells two versions apart.
    before = "import os\n\ndef f(x: int) -> str:\n    return os.environ.get('TZ', 'none')\n"
    after = "import os\n\ndef f(x: int) -> str:\n    return 'none'\n"
    _refuted(_sure(before, after))
