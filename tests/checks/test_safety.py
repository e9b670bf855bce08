"""Crash safety of one function: safe (a proof), unsafe (an input run in the sandbox),
inconclusive (why). Every "unsafe" input is run again here, in plain CPython, and must
raise what the verdict says; every "safe" function is called here on inputs of its
domain and must raise nothing but what it raises on purpose."""

from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import Any

import pytest

from veribot.bench import safety as bench
from veribot.bot.cli import main as cli_main
from veribot.checks.equivalence import Budget, check_pair
from veribot.checks.safety import (
    INCONCLUSIVE,
    SAFE,
    UNSAFE,
    SafetyBudget,
    check_safety,
    documented_exceptions,
)
from veribot.checks.verdict import Verdict

BUDGET = SafetyBudget(timeout_s=10)

# (name, module, entry, the exception an input must raise)
CRASHING = [
    ("true-division-by-a-parameter", "def f(x: int) -> float:\n    return 10 / x\n", "f",
     "ZeroDivisionError"),
    ("first-item-of-a-list", "def f(xs: list[int]) -> int:\n    return xs[0]\n", "f",
     "IndexError"),
    ("unpacking-a-list", "def f(xs: list[int]) -> int:\n    a, b = xs\n    return a\n", "f",
     "ValueError"),
    ("max-of-a-list", "def f(xs: list[int]) -> int:\n    return max(xs)\n", "f",
     "ValueError"),
    ("an-assert", "def f(x: int) -> int:\n    assert x != 3\n    return x\n", "f",
     "AssertionError"),
    ("in-a-helper-of-the-module", "def g(a: int) -> int:\n    return 100 // a\n\n\n"
     "def f(x: int) -> int:\n    return g(x - 7)\n", "f", "ZeroDivisionError"),
    ("in-a-loop", "def f(n: int) -> int:\n    t = 0\n    for i in range(n):\n"
     "        t += 10 // (5 - i)\n    return t\n", "f", "ZeroDivisionError"),
    ("none-where-optional", "def f(s: str | None) -> int:\n    return len(s)\n", "f",
     "TypeError"),
    ("a-method-of-an-optional-list", "def f(xs: list[int] | None) -> int:\n"
     "    return xs.count(3)\n", "f", "AttributeError"),
    ("float-division", "def f(x: float) -> float:\n    return 1.0 / x\n", "f",
     "ZeroDivisionError"),
]

# (name, module, entry, calls tried here): no input raises anything unintended.
SAFE_CASES = [
    ("guarded-division", "def f(x: int) -> float:\n    if x == 0:\n        return 0.0\n"
     "    return 10 / x\n", "f", [(0,), (3,), (-2,), (True,)]),
    ("a-raise-statement", "def f(x: int) -> int:\n    if x < 0:\n"
     "        raise ValueError('negative')\n    return x\n", "f", [(-1,), (4,)]),
    ("a-raise-statement-of-a-helper", "def check(x: int) -> int:\n    if x == 0:\n"
     "        raise ValueError('zero')\n    return x\n\n\n"
     "def f(x: int) -> float:\n    return 1 / check(x)\n", "f", [(1,)]),
    ("guarded-index", "def f(xs: list[int]) -> int:\n    return xs[0] if xs else -1\n", "f",
     [([],), ([4],)]),
    ("google-raises", "def f(xs: list[int]) -> int:\n    '''The first.\n\n    Raises:\n"
     "        IndexError: when `xs` is empty.\n    '''\n    return xs[0]\n", "f", [([2],)]),
    ("sphinx-raises", "def f(xs: list[int]) -> int:\n"
     "    '''The largest.\n\n    :raises ValueError: if `xs` is empty.\n    '''\n"
     "    return max(xs)\n", "f", [([1, 3],)]),
    ("none-tested", "def f(s: str | None) -> int:\n"
     "    return len(s) if s is not None else 0\n", "f", [(None,), ("ab",)]),
    ("a-loop-of-known-length", "def f(xs: list[int]) -> int:\n    t = 0\n"
     "    for i in range(3):\n        t += i\n    return t + len(xs)\n", "f", [([],)]),
]


def _load(module: str) -> dict[str, Any]:
    namespace: dict[str, Any] = {}
    exec(compile(module, "<case>", "exec"), namespace)  # our own test code
    return namespace


@pytest.mark.parametrize(("module", "entry", "raised"),
                         [c[1:] for c in CRASHING], ids=[c[0] for c in CRASHING])
def test_a_crashing_function_is_unsafe_with_an_input_that_crashes(
        module: str, entry: str, raised: str) -> None:
    result = check_safety(module, entry, budget=BUDGET)
    assert result.verdict == UNSAFE, result.detail
    assert result.exception == raised
    assert result.line is not None and result.call
    # The input, in plain CPython.
    args = ast.literal_eval(f"({result.call},)")
    with pytest.raises(BaseException) as caught:
        _load(module)[entry](*args)
    assert type(caught.value).__name__ == raised


@pytest.mark.parametrize(("module", "entry", "calls"),
                         [c[1:] for c in SAFE_CASES], ids=[c[0] for c in SAFE_CASES])
def test_a_function_that_cannot_crash_is_proven_safe(
        module: str, entry: str, calls: list[tuple[object, ...]]) -> None:
    result = check_safety(module, entry, budget=BUDGET)
    assert result.verdict == SAFE, result.detail
    assert result.method.startswith("smt")
    fn = _load(module)[entry]
    documented = documented_exceptions(ast.parse(module).body[-1])
    for args in calls:
        try:
            fn(*args)
        except Exception as err:  # only what it raises on purpose
            assert type(err).__name__ in documented or "raise" in module, err


def test_the_domain_assumption_is_listed_with_a_proof() -> None:
    result = check_safety(SAFE_CASES[0][1], "f", budget=BUDGET)
    assert any("arguments are instances of the builtin types" in a for a in result.assumptions)


LINES = ("def f(x: int, y: int) -> int:\n"
         "    a = 10 // x\n"
         "    b = a + y\n"
         "    return b\n")


def test_a_line_question_is_about_that_line_only() -> None:
    at_2 = check_safety(LINES, "f", line=2, budget=BUDGET)
    assert at_2.verdict == UNSAFE and at_2.line == 2 and at_2.exception == "ZeroDivisionError"
    at_3 = check_safety(LINES, "f", line=3, budget=BUDGET)
    assert at_3.verdict == SAFE and at_3.line == 3, at_3.detail


def test_an_exception_question_is_about_that_class_only() -> None:
    assert check_safety(LINES, "f", exception="KeyError", budget=BUDGET).verdict == SAFE
    found = check_safety(LINES, "f", exception="ArithmeticError", budget=BUDGET)
    assert found.verdict == UNSAFE and found.exception == "ZeroDivisionError"
    unknown = check_safety(LINES, "f", exception="NoSuchError", budget=BUDGET)
    assert unknown.verdict == INCONCLUSIVE and unknown.reason == "unknown-exception"


UNDECIDED = [
    ("unknown-type", "class P:\n    pass\n\n\ndef f(p: 'Q') -> int:\n    return p.n\n", "f",
     "unknown-type"),
    ("no-such-function", "def g() -> None:\n    pass\n", "f", "entry-not-found"),
    ("does-not-parse", "def f(:\n", "f", "parse-error"),
    ("async", "async def f(x: int) -> int:\n    return 1 // x\n", "f",
     "unsupported:async-def"),
    ("loop-beyond-the-bound", "def f(n: int) -> int:\n    t = 0\n    while n > 0:\n"
     "        t += 1\n        n -= 1\n    return t\n", "f", "bounded:loop-bound"),
    ("a-builtin-outside-the-model", "def f(x: int) -> str:\n    return chr(x % 256)\n", "f",
     "unsupported:the-function-chr"),
]


@pytest.mark.parametrize(("module", "entry", "reason"),
                         [c[1:] for c in UNDECIDED], ids=[c[0] for c in UNDECIDED])
def test_what_is_not_decided_says_why(module: str, entry: str, reason: str) -> None:
    result = check_safety(module, entry, budget=BUDGET)
    assert result.verdict == INCONCLUSIVE
    assert result.reason == reason, result.detail
    assert result.detail


def test_a_crash_is_not_claimed_when_running_is_off() -> None:
    result = check_safety(CRASHING[0][1], "f", budget=SafetyBudget(timeout_s=10, execute=False))
    assert result.verdict == INCONCLUSIVE and result.reason == "not-executed"
    assert "ZeroDivisionError" in result.detail


DOCSTRINGS = {
    "google": ('"""Do it.\n\nArgs:\n    x: a value.\n\nRaises:\n    KeyError: when missing.\n'
               '    ValueError: when bad.\n\nReturns:\n    The thing.\n"""', {"KeyError",
                                                                          "ValueError"}),
    "sphinx": ('"""Do it.\n\n:param x: a value.\n:raises KeyError: when missing.\n'
               ':raise builtins.ValueError: when bad.\n"""', {"KeyError", "ValueError"}),
    "numpy": ('"""Do it.\n\nRaises\n------\nIndexError\n    If empty.\n"""', {"IndexError"}),
    "none": ('"""Do it, and never raise KeyError."""', set()),
}


@pytest.mark.parametrize(("doc", "found"), DOCSTRINGS.values(), ids=DOCSTRINGS.keys())
def test_documented_exceptions_are_read_from_the_docstring(doc: str, found: set[str]) -> None:
    fn = ast.parse(f"def f(x):\n    {doc}\n    return x\n").body[0]
    assert documented_exceptions(fn) == found


# -- the harness ----------------------------------------------------------------------------


def _write(path: Path, records: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def test_the_harness_writes_a_record_per_question_and_counts_by_label(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    questions = _write(tmp_path / "q.jsonl", [
        {"id": "div", "module": CRASHING[0][1], "entry": "f", "label": "unsafe"},
        {"id": "guarded", "module": SAFE_CASES[0][1], "entry": "f", "label": "safe"},
        {"id": "line-3", "module": LINES, "entry": "f", "line": 3},
        {"id": "unknown", "module": UNDECIDED[0][1], "entry": "f", "label": "unsafe"},
    ])
    out = tmp_path / "r.jsonl"
    code = cli_main(["bench-safety", str(questions), "--out", str(out), "--jobs", "2"])
    assert code == 0
    results = {r["id"]: r for r in map(json.loads, out.read_text().splitlines())}
    assert [results[k]["verdict"] for k in ("div", "guarded", "line-3", "unknown")] == [
        UNSAFE, SAFE, SAFE, INCONCLUSIVE]
    assert results["div"]["input"] == "0" and results["div"]["exception"] == "ZeroDivisionError"
    assert results["div"]["line"] == 2 and results["line-3"]["line"] == 3
    assert set(results["div"]) >= {"id", "verdict", "reason", "input", "line", "exception"}
    shown = capsys.readouterr().out
    assert "decided 3/4" in shown and "labelled 3: agree 2, WRONG 0" in shown
    assert "unknown-type 1" in shown


BAD = [
    ("not json", "not JSON"),
    ('{"id": "a", "module": "x = 1"}', "`entry` is a non-empty string"),
    ('{"id": "a", "module": "x", "entry": "f", "line": 0}', "`line`, where given"),
    ('{"id": "a", "module": "x", "entry": "f", "label": "maybe"}', "`label`, where given"),
    ('{"id": "a", "module": "x", "entry": "f"}\n{"id": "a", "module": "x", "entry": "f"}',
     "used twice"),
    ("[1, 2]", "a JSON object"),
]


@pytest.mark.parametrize(("text", "said"), BAD, ids=[s for _, s in BAD])
def test_a_bad_questions_file_is_refused_naming_the_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, said: str) -> None:
    path = tmp_path / "q.jsonl"
    path.write_text(text + "\n", encoding="utf-8")
    assert cli_main(["bench-safety", str(path), "--out", str(tmp_path / "r.jsonl")]) == 2
    err = capsys.readouterr().err
    assert said in err and "q.jsonl:" in err and "Traceback" not in err


def test_the_safety_command_answers_one_question(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "m.py"
    path.write_text(LINES, encoding="utf-8")
    assert cli_main(["safety", str(path), "--entry", "f"]) == 1  # unsafe
    assert "unsafe (crash)" in capsys.readouterr().out
    assert cli_main(["safety", str(path), "--entry", "f", "--line", "3",
                     "--format", "json"]) == 0
    answer = json.loads(capsys.readouterr().out)
    assert answer["verdict"] == SAFE and answer["line"] == 3
    assert cli_main(["safety", str(tmp_path / "missing.py"), "--entry", "f"]) == 2
    assert "cannot read" in capsys.readouterr().err


def test_the_summary_counts_a_wrong_verdict() -> None:
    qs = [bench.Question("a", "", "f", label="safe"), bench.Question("b", "", "f",
                                                                      label="unsafe")]
    rs: list[dict[str, object]] = [
        {"id": "a", "verdict": UNSAFE, "reason": "crash", "time": 1.0},
        {"id": "b", "verdict": UNSAFE, "reason": "crash", "time": 2.0}]
    assert "agree 1, WRONG 1" in bench.summary(qs, rs)


def test_every_pair_of_crashing_cases_keeps_its_own_line() -> None:
    # Two functions of one module: each question reads its own function.
    module = CRASHING[0][1] + "\n\n" + CRASHING[1][1].replace("def f", "def g")
    found = {e: check_safety(module, e, budget=BUDGET) for e in ("f", "g")}
    assert {e: r.exception for e, r in found.items()} == {"f": "ZeroDivisionError",
                                                        "g": "IndexError"}
    assert {e: r.line for e, r in found.items()} == {"f": 2, "g": 6}


def test_a_method_of_none_is_a_difference_for_equivalence_too() -> None:
    # The model's `None.count(...)` (AttributeError) is the same model equivalence reads.
    before = "def f(xs: list[int] | None) -> int:\n    return xs.count(3)\n"
    after = ("def f(xs: list[int] | None) -> int:\n    if xs is None:\n        return 0\n"
             "    return xs.count(3)\n")
    result = check_pair(before, after, "f", budget=Budget(timeout_s=10))
    assert result.verdict is Verdict.REFUTED, result.detail
    assert result.counterexample is not None and result.counterexample.args == ("None",)
    same = check_pair(before, before.replace("return xs.count(3)",
                                             "n = xs.count(3)\n    return n"), "f",
                      budget=Budget(timeout_s=10))
    assert same.verdict is Verdict.VERIFIED, same.detail


# Outside the model: random testing over the annotated types, each crash run again twice.
SEARCHED = [
    ("a-builtin-outside-the-model", "def f(x: int) -> str:\n    return chr(x)\n", "f",
     "ValueError"),
    ("a-dict-key", "def f(d: dict[str, int], k: str) -> int:\n    return d[k]\n", "f",
     "KeyError"),
    ("a-string-split", "def f(s: str) -> str:\n    return s.split(',')[1]\n", "f",
     "IndexError"),
    ("a-method-of-a-built-object", "class C:\n    def __init__(self, n: int) -> None:\n"
     "        self.n = n\n\n    def inv(self) -> float:\n        return 1 / self.n\n",
     "C.inv", "ZeroDivisionError"),
]


@pytest.mark.parametrize(("module", "entry", "raised"),
                         [c[1:] for c in SEARCHED], ids=[c[0] for c in SEARCHED])
def test_outside_the_model_random_testing_finds_the_crash(
        module: str, entry: str, raised: str) -> None:
    result = check_safety(module, entry, budget=BUDGET)
    assert result.verdict == UNSAFE and result.exception == raised, result.detail
    assert result.method == "random testing, then executed"
    assert any(n.startswith("the model: ") for n in result.notes)
    if "." in entry:
        assert result.detail.startswith("`C(0).inv()` raises ZeroDivisionError")
        return
    args = ast.literal_eval(f"({result.call},)")
    with pytest.raises(BaseException) as caught:
        _load(module)[entry](*args)
    assert type(caught.value).__name__ == raised


def test_a_protocol_exception_of_a_special_method_is_on_purpose() -> None:
    module = ("class Table:\n    def __init__(self, rows: dict[str, int]) -> None:\n"
              "        self.rows = rows\n\n    def __getitem__(self, key: str) -> int:\n"
              "        return self.rows[key]\n")
    result = check_safety(module, "Table.__getitem__", budget=BUDGET)
    assert result.verdict != UNSAFE, result.detail  # KeyError is how `t[key]` says "absent"


def test_what_random_testing_tried_is_said_when_it_finds_nothing() -> None:
    result = check_safety("def f(x: int) -> str:\n    return chr(x % 256)\n", "f",
                          budget=BUDGET)
    assert result.verdict == INCONCLUSIVE
    assert any(n.startswith("random testing tried ") and "without a crash" in n
               for n in result.notes), result.notes


UNDECLARED = {
    "a-parameter": ("def f(d, k: str) -> int:\n    return d[k]\n", "f", "`d` has no annotation"),
    "the-constructor": ("class C:\n    def __init__(self, n) -> None:\n        self.n = n\n\n"
                        "    def inv(self) -> float:\n        return 1 / self.n\n", "C.inv",
                        "`n` of `C`'s constructor has no annotation"),
}


@pytest.mark.parametrize(("module", "entry", "said"), UNDECLARED.values(), ids=UNDECLARED.keys())
def test_no_crash_is_claimed_on_a_domain_nobody_declared(module: str, entry: str,
                                                         said: str) -> None:
    # `f(None, '')` raises, but nothing says `d` may be None: no verdict, and why.
    result = check_safety(module, entry, budget=BUDGET)
    assert result.verdict == INCONCLUSIVE, result.detail
    assert any(said in n and "random testing was not run" in n for n in result.notes), (
        result.notes)


def test_the_harness_imports_a_module_as_part_of_its_package_with_repos(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from tests.bot.gitrepos import GitRepo

    module = ("from .consts import SCALE\n\n\ndef f(d: dict[str, int], k: str) -> int:\n"
              "    return d[k] * SCALE\n")
    repo = GitRepo(tmp_path / "repos" / "proj")
    revision = repo.commit("code", {"pkg/__init__.py": b"", "pkg/consts.py": b"SCALE = 2\n",
                                    "pkg/calc.py": module.encode()})
    record = {"id": "q", "module": module, "entry": "f", "project": "proj",
              "revision": revision, "path": "pkg/calc.py"}
    questions = _write(tmp_path / "q.jsonl", [record])
    alone, placed = tmp_path / "alone.jsonl", tmp_path / "placed.jsonl"
    assert cli_main(["bench-safety", str(questions), "--out", str(alone)]) == 0
    assert cli_main(["bench-safety", str(questions), "--out", str(placed),
                     "--repos", str(tmp_path / "repos")]) == 0
    capsys.readouterr()
    (without,) = map(json.loads, alone.read_text().splitlines())
    (within,) = map(json.loads, placed.read_text().splitlines())
    assert without["verdict"] == INCONCLUSIVE  # `from .consts` has no package to come from
    assert within["verdict"] == UNSAFE and within["exception"] == "KeyError", within


def test_a_raise_statement_in_another_module_of_the_project_is_on_purpose(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from tests.bot.gitrepos import GitRepo

    module = ("from .validate import check\n\n\ndef f(d: dict[str, int], k: str) -> int:\n"
              "    return check(len(d) - len(k))\n")
    repo = GitRepo(tmp_path / "repos" / "proj")
    revision = repo.commit("code", {
        "pkg/__init__.py": b"",
        "pkg/validate.py": b"def check(n: int) -> int:\n    if n < 0:\n"
                           b"        raise ValueError('fewer entries than the key is long')\n"
                           b"    return n\n",
        "pkg/calc.py": module.encode()})
    questions = _write(tmp_path / "q.jsonl", [{
        "id": "q", "module": module, "entry": "f", "project": "proj", "revision": revision,
        "path": "pkg/calc.py"}])
    out = tmp_path / "r.jsonl"
    assert cli_main(["bench-safety", str(questions), "--out", str(out),
                     "--repos", str(tmp_path / "repos")]) == 0
    capsys.readouterr()
    (result,) = map(json.loads, out.read_text().splitlines())
    # `f({}, 'a')` raises ValueError, from `check`'s own `raise`: validation, not a crash.
    assert result["verdict"] != UNSAFE, result


# The order CPython keeps: `None.count(1 // k)` looks `count` up before it divides, so
# with `xs=None, k=0` it raises AttributeError, not ZeroDivisionError.
ORDER_BEFORE = "def f(xs: list[int] | None, k: int) -> int:\n    return xs.count(1 // k)\n"
ORDER_AFTER = ("def f(xs: list[int] | None, k: int) -> int:\n    n = 1 // k\n"
               "    return xs.count(n)\n")


def test_a_method_of_none_is_looked_up_before_its_arguments_run() -> None:
    result = check_pair(ORDER_BEFORE, ORDER_AFTER, "f", budget=Budget(timeout_s=10))
    assert result.verdict is Verdict.REFUTED, result.detail
    assert result.counterexample is not None
    assert result.counterexample.args[0] == "None"
    assert result.counterexample.args[1] in ("0", "False")  # k == 0 (False is an int here)
    assert result.counterexample.before.value == "AttributeError"
    assert result.counterexample.after.value == "ZeroDivisionError"
