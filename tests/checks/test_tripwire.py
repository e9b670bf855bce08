"""The tripwire: targeted inputs run on both versions in the real sandbox."""

from __future__ import annotations

import math

from veribot.checks.equivalence import Budget, check_pair
from veribot.checks.sandbox import Limits, parse_literal
from veribot.checks.search import tripwire
from veribot.checks.verdict import BehaviourKind, Verdict

QUICK = Limits(wall_s=8.0, call_s=1.0)

DOUBLE = "def f(n: int) -> int:\n    return n * 2\n"


def _calls(source: str, entry: str = "f", max_inputs: int = 150) -> list[tuple[object, ...]]:
    params = tripwire.parameters(source, source, entry)
    assert params is not None
    calls = tripwire.draw_inputs(source, source, params, max_inputs=max_inputs)
    assert 0 < len(calls) <= max_inputs
    return [tuple(parse_literal(a) for a in call) for call in calls]


def test_a_difference_on_an_edge_value_is_found_and_reproduced() -> None:
    after = "def f(n: int) -> int:\n    if n == -(2**63):\n        return 0\n    return n + n\n"
    found = tripwire.check(DOUBLE, after, "f", time_s=3.0, confirm_limits=QUICK)
    assert found.counterexample is not None
    assert found.counterexample.args == ("-9223372036854775808",)
    assert found.counterexample.found_by == tripwire.FOUND_BY
    assert found.counterexample.before.text == "-18446744073709551616"
    assert found.counterexample.after.text == "0"


def test_bool_for_an_int_parameter_is_tried() -> None:
    after = "def f(n: int) -> int:\n    return n if n is True else n * 2\n"
    found = tripwire.check(DOUBLE, after, "f", time_s=3.0, confirm_limits=QUICK)
    assert found.counterexample is not None and found.counterexample.args == ("True",)


def test_non_bmp_string_is_tried() -> None:
    before = "def f(s: str) -> int:\n    return len(s)\n"
    after = "def f(s: str) -> int:\n    return len(s.encode('utf-16-le')) // 2\n"
    found = tripwire.check(before, after, "f", time_s=3.0, confirm_limits=QUICK)
    assert found.counterexample is not None
    assert any(ord(ch) > 0xFFFF for ch in str(parse_literal(found.counterexample.args[0])))


def test_a_tuple_where_a_sequence_is_declared_is_tried() -> None:
    before = "def f(xs: 'Sequence[int]') -> int:\n    return len(xs)\n"
    after = "def f(xs: 'Sequence[int]') -> int:\n    return len(list(xs) + [])\n"
    same = tripwire.check(before, after, "f", time_s=3.0, confirm_limits=QUICK)
    assert same.counterexample is None
    after = "def f(xs: 'Sequence[int]') -> int:\n    return len(xs + [])\n"
    found = tripwire.check(before, after, "f", time_s=3.0, confirm_limits=QUICK)
    assert found.counterexample is not None
    assert isinstance(parse_literal(found.counterexample.args[0]), tuple)
    assert found.counterexample.after.kind is BehaviourKind.RAISED


def test_equal_sources_give_nothing() -> None:
    source = "def f(x: float, xs: list[str], o: int | None = None) -> object:\n" \
             "    return (x, xs, o)\n"
    outcome = tripwire.check(source, source, "f", time_s=3.0, confirm_limits=QUICK)
    assert outcome.counterexample is None and outcome.unstable is None
    assert outcome.inputs_run >= 50
    assert "without a difference" in outcome.note


def test_inputs_respect_the_declared_types() -> None:
    source = ("def f(n: int, x: float, s: str, xs: list[int], t: tuple[str, ...],"
              " o: Optional[int] = None) -> int:\n    return 0\n")
    calls = _calls(source)
    assert {len(c) for c in calls} <= {5, 6}
    for n, x, s, xs, t, *rest in calls:
        assert isinstance(n, int)  # bool is an int
        assert isinstance(x, int | float)
        assert isinstance(s, str)
        assert isinstance(xs, list) and all(isinstance(v, int) for v in xs)
        assert isinstance(t, tuple) and all(isinstance(v, str) for v in t)
        assert all(v is None or isinstance(v, int) for v in rest)
    values = {repr(c[0]) for c in calls}
    assert {"True", "False", "0", "-1", str(2**64)} <= values
    floats = [c[1] for c in calls]
    assert any(isinstance(v, float) and math.isnan(v) for v in floats)
    assert any(isinstance(v, float) and math.copysign(1.0, v) < 0 and v == 0 for v in floats)
    assert any(type(v) is int for v in floats)  # an int is a float by the typing rules
    assert any(c[3] == [] for c in calls) and any(len(c[3]) == 1 for c in calls)
    assert any(len(c) == 6 and c[5] is None for c in calls)
    assert any(len(c) == 6 and isinstance(c[5], int) for c in calls)


def test_the_code_s_constants_and_their_neighbours_are_tried() -> None:
    source = "def f(n: int, s: str) -> int:\n    return 1 if n == 4217 and s == 'zq' else 0\n"
    calls = _calls(source)
    assert {4216, 4217, 4218} <= {c[0] for c in calls}
    assert "zq" in {c[1] for c in calls}


def test_sequence_of_str_admits_a_string() -> None:
    calls = _calls("def f(xs: Sequence[str]) -> int:\n    return 0\n")
    kinds = {type(c[0]) for c in calls}
    assert kinds == {list, tuple, str}


def test_methods_run_on_objects_their_class_builds() -> None:
    source = "class C:\n    def m(self, n: int) -> int:\n        return n\n"
    outcome = tripwire.check(source, source, "C.m", time_s=1.0)
    assert outcome.inputs_run > 0 and all(c[0] == "@C()" for c in outcome.inputs)


def test_methods_of_objects_it_cannot_build_are_not_run() -> None:
    source = ("class C:\n    def __init__(self, f: 'Callable[[], int]') -> None:\n"
              "        self.f = f\n    def m(self, n: int) -> int:\n        return n\n")
    outcome = tripwire.check(source, source, "C.m", time_s=1.0)
    assert outcome.inputs_run == 0 and "not run" in outcome.note


def test_heavy_inputs_go_last() -> None:
    calls = _calls(DOUBLE)
    heavy = [abs(c[0]) >= 10**6 for c in calls if isinstance(c[0], int)]
    assert heavy == sorted(heavy) and any(heavy)


def test_a_kept_proof_says_what_the_tripwire_ran() -> None:
    before = "def f(x: int, y: int) -> int:\n    if x > y:\n        return x - y\n" \
             "    return y - x\n"
    after = "def f(x: int, y: int) -> int:\n    return abs(x - y)\n"
    result = check_pair(before, after, "f", budget=Budget(timeout_s=10))
    assert result.verdict is Verdict.VERIFIED
    assert any(n.startswith("tripwire: both versions run on") for n in result.notes)


def test_without_execution_the_tripwire_does_not_run() -> None:
    before = "def f(x: int) -> int:\n    return x + x\n"
    after = "def f(x: int) -> int:\n    return 2 * x\n"
    result = check_pair(before, after, "f", budget=Budget(timeout_s=10, execute=False))
    assert result.verdict is Verdict.VERIFIED
    assert not any("tripwire" in n for n in result.notes)


def test_a_difference_only_between_calls_is_unstable_not_a_counterexample() -> None:
    # A shared default list grows from call to call; each fresh process sees one call.
    before = "def f(n: int) -> int:\n    acc = []\n    acc.append(n)\n    return len(acc)\n"
    after = "def f(n: int, acc: list[int] = []) -> int:\n    acc.append(n)\n    return len(acc)\n"
    outcome = tripwire.check(before, after, "f", time_s=3.0, confirm_limits=QUICK)
    assert outcome.counterexample is None
    assert outcome.unstable is not None
    args, sentence = outcome.unstable
    assert len(args) == 1
    assert "returns 1" in sentence and "returns 2" in sentence
