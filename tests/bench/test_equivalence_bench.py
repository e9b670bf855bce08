"""The benchmark harness on a tiny benchmark file written here."""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import fields
from pathlib import Path

import pytest

from veribot.bench.equivalence import (
    ENGINE_FIELDS,
    BenchInput,
    Settings,
    add_arguments,
    engine_input,
    format_summary,
    label_stats,
    main,
    parse_given,
    percentile,
    recheck,
    result_record,
    run_engine,
    run_peer,
)
from veribot.checks.equivalence import Budget, check_pair
from veribot.checks.sandbox import Limits
from veribot.checks.search import tripwire
from veribot.checks.search.differential import examine
from veribot.checks.verdict import (
    Behaviour,
    BehaviourKind,
    Counterexample,
    Reason,
    Result,
    Verdict,
)

GCD = "def gcd(a, b):\n    if b == 0:\n        return a\n    return gcd(b, a % b)\n"
GCD_SWAPPED = "def gcd(a, b):\n    if b == 0:\n        return a\n    return gcd(a % b, b)\n"
SUM = "def total(xs):\n    return sum(xs)\n"
SUM_LOOP = "def total(xs):\n    s = 0\n    for x in xs:\n        s += x\n    return s\n"

RECORDS = [
    {"id": "t/gcd", "language": "python", "label": "different", "entry": "gcd",
     "before": GCD, "after": GCD_SWAPPED, "param_types": {"a": "int", "b": "int"},
     "tests": [[[35, 21], 7]], "notes": "swapped arguments"},
    # A label that is garbage, and people-only fields that are garbage too.
    {"id": "t/sum", "language": "python", "label": {"not": ["a label"]}, "entry": "total",
     "before": SUM, "after": SUM_LOOP, "param_types": {"xs": "list[int]"},
     "tests": "garbage", "counterexample": 42, "notes": None},
    {"id": "t/c", "language": "c", "label": "equivalent", "entry": "f",
     "before": "int f(int x) { return x; }", "after": "int f(int x) { return x + 0; }"},
]
README_FIELDS = {"id", "verdict", "reason", "counterexample", "before", "after", "time_s"}


def write_bench(tmp_path: Path, records: list[dict[str, object]]) -> Path:
    path = tmp_path / "tiny.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    return parser.parse_args(argv)


def test_the_engine_input_holds_only_the_allowed_fields() -> None:
    assert {f.name for f in fields(BenchInput)} <= set(ENGINE_FIELDS)
    record = dict(RECORDS[0])
    stripped = {k: v for k, v in record.items() if k in ENGINE_FIELDS}
    assert engine_input(record) == engine_input(stripped)
    assert "different" not in repr(engine_input(record))


def test_a_run_writes_result_records_and_a_summary(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "results.jsonl"
    code = main(parse([str(write_bench(tmp_path, RECORDS)), "--out", str(out),
                       "--timeout", "3", "--jobs", "2"]))
    assert code == 0
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["id"] for r in records] == ["t/gcd", "t/sum", "t/c"]
    for r in records:
        assert set(r) >= README_FIELDS
        assert r["verdict"] in ("verified", "refuted", "inconclusive")
        assert isinstance(r["time_s"], float | int)
    gcd, total, c = records
    assert gcd["verdict"] != "verified"
    for r in records:
        if r["verdict"] == "refuted":
            assert r["reproduced"] is True
            assert all(isinstance(a, str) for a in r["counterexample"]["args"])
    assert total["reason"] != "internal-error", total["detail"]
    assert c["verdict"] == "inconclusive" and c["reason"] == "skipped"
    assert c["detail"] == "C front end not built"
    summary = capsys.readouterr().out
    assert "different" in summary and "equivalent" in summary
    assert "{'not': ['a label']}" in summary  # the garbage label is a row of its own
    assert "WRONG" in summary and "skipped" in summary
    assert (tmp_path / "results.jsonl.summary.txt").read_text().strip() in summary


def test_selection_by_ids_language_and_limit(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "only-c.jsonl"
    assert main(parse([str(write_bench(tmp_path, RECORDS)), "--out", str(out),
                       "--ids", "t/c*", "--limit", "1"])) == 0
    [record] = [json.loads(line) for line in out.read_text().splitlines()]
    assert record["id"] == "t/c" and record["reason"] == "skipped"
    assert main(parse([str(write_bench(tmp_path, RECORDS)), "--out", str(out),
                       "--language", "c", "--ids", "gcd"])) == 2
    assert "no records selected" in capsys.readouterr().err


def test_a_file_that_is_not_a_benchmark_is_a_plain_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "x"}\n')
    assert main(parse([str(bad)])) == 2
    assert "bad.jsonl:1" in capsys.readouterr().err


def _never_returns(item: BenchInput, timeout_s: float) -> Result:
    time.sleep(3600)
    raise AssertionError("unreachable")


def test_a_pair_over_its_budget_is_killed_and_recorded_as_timeout() -> None:
    item = engine_input(RECORDS[1])
    done: list[dict[str, object]] = []
    start = time.monotonic()
    run_engine([item], Settings(timeout_s=0.3, jobs=1, kill_margin_s=0.5), done.append,
               decide=_never_returns)
    assert time.monotonic() - start < 5
    [record] = done
    assert record["verdict"] == "inconclusive" and record["reason"] == "timeout"


def test_a_refutation_that_does_not_reproduce_counts_as_wrong() -> None:
    item = engine_input(RECORDS[1])
    bogus = {"id": "t/sum", "verdict": "refuted", "reason": "counterexample",
             "counterexample": {"args": ["[1, 2]"]}, "time_s": 0.1}
    assert recheck(item, bogus, Limits(call_s=1)) is False
    stats = label_stats("equivalent_by_tests", [bogus], {"t/sum": False})
    assert stats.wrong == 1 and stats.finds == 0
    verified_on_different = {"id": "x", "verdict": "verified", "reason": "proof", "time_s": 2.0}
    assert label_stats("different", [verified_on_different], {}).wrong == 1
    assert percentile([1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0], 90) == 9.0


def test_the_crosshair_peer_runs_its_command_line_in_the_sandbox() -> None:
    item = engine_input({"id": "t/over", "language": "python", "entry": "over",
                         "before": "def over(x):\n    return x > 5\n",
                         "after": "def over(x):\n    return x >= 5\n",
                         "param_types": {"x": "int"}})
    outcome = run_peer(item, 4.0, Limits(call_s=1))
    assert outcome.status == "refuted", outcome.detail
    assert outcome.args == ("5",) and outcome.reproduced is True


def test_parse_given_reads_crosshair_output() -> None:
    out = "Given: (a=nan, b=[1, 2]),\n  peer_before.f : returns 1\n"
    assert parse_given(out, ["a", "b"]) == ("float('nan')", "[1, 2]")
    assert parse_given("No differences found.", ["a"]) is None


def test_refutations_by_the_tripwire_are_counted_as_model_defects() -> None:
    returned = Behaviour(BehaviourKind.RETURNED, ("int", 1), "1")
    other = Behaviour(BehaviourKind.RETURNED, ("bool", True), "True")

    def refuted(found_by: str) -> Result:
        cex = Counterexample(("True",), returned, other, found_by, "they differ")
        return Result(Verdict.REFUTED, Reason.COUNTEREXAMPLE, "d", counterexample=cex,
                      method=tripwire.METHOD if found_by == tripwire.FOUND_BY else "smt")

    defect = result_record("a", refuted(tripwire.FOUND_BY), 0.1)
    plain = result_record("b", refuted("z3"), 0.1)
    assert defect["model_defect"] is True and plain["model_defect"] is False
    stats = label_stats("equivalent", [defect, plain], {"a": True, "b": True})
    assert stats.model_defects == 1 and stats.finds == 2
    assert "model defects" in format_summary([stats], "header")


def test_a_refutation_after_earlier_calls_is_recorded_and_rechecked() -> None:
    # A fresh list per call against a shared default list: only a second call differs.
    before = (
        "def collect(x: int, acc: list[int] | None = None) -> list[int]:\n"
        "    if acc is None:\n        acc = []\n    acc.append(x)\n    return acc\n"
    )
    after = (
        "def collect(x: int, acc: list[int] = []) -> list[int]:\n"
        "    acc.append(x)\n    return acc\n"
    )
    result = check_pair(before, after, "collect", budget=Budget(timeout_s=10))
    assert result.verdict is Verdict.REFUTED and result.counterexample is not None
    record = result_record("shared-default", result, result.time_s)
    cex = record["counterexample"]
    assert isinstance(cex, dict) and cex.get("prior"), record
    item = BenchInput("shared-default", "python", "collect", before, after)
    assert recheck(item, record, Limits(wall_s=10.0, call_s=2.0))
    # Without the earlier calls the input alone shows nothing.
    alone = {**record, "counterexample": {"args": cex["args"]}}
    assert not recheck(item, alone, Limits(wall_s=10.0, call_s=2.0))


def test_a_method_refutation_under_one_hash_seed_is_rechecked_as_found() -> None:
    # The object the method was called on, and the seed the difference shows under, are
    # part of the record: the harness's re-run uses both.
    cls = ("class Names:\n    def __init__(self, names: list[str]) -> None:\n"
           "        self.names = names\n\n    def unique(self) -> list[str]:\n")
    before = cls + "        return list(set(self.names))\n"
    after = cls + "        return list(dict.fromkeys(self.names))\n"
    limits = Limits(wall_s=20.0, call_s=2.0)
    found = examine(before, after, "Names.unique",
                    ["@Names(['a', 'b', 'c', 'd', 'e', 'f'])"], found_by="test", limits=limits)
    assert found.counterexample is not None and found.counterexample.hash_seed is not None
    record = result_record("names", Result(Verdict.REFUTED, Reason.COUNTEREXAMPLE, "",
                                           found.counterexample), 0.1)
    cex = record["counterexample"]
    assert isinstance(cex, dict) and cex["receiver"] == "Names(['a', 'b', 'c', 'd', 'e', 'f'])"
    item = BenchInput("names", "python", "Names.unique", before, after)
    assert recheck(item, record, limits)
