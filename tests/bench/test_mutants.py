"""The mutation soundness check: mutants, the engine on them, the long runs, the records."""

from __future__ import annotations

import argparse
import ast
import json
import random
from pathlib import Path

import pytest

from veribot.bench import mutants as m
from veribot.bench.equivalence import BenchInput, engine_input

SHARED_DEV = Path(__file__).resolve().parents[2].parent / "shared" / "bench" / "dev"

CLAMP = (
    "def clamp(x: int, lo: int = 0, hi: int = 10) -> int:\n"
    "    if x < lo:\n"
    "        return lo\n"
    "    if x > hi:\n"
    "        return hi\n"
    "    return x\n"
)
CLAMP_MINMAX = (
    "def clamp(x: int, lo: int = 0, hi: int = 10) -> int:\n    return max(lo, min(x, hi))\n"
)
GREET = (
    "def greet(name: str, loud: bool) -> str:\n"
    "    '''Say hello.'''\n"
    "    if not name:\n"
    "        raise ValueError('no name')\n"
    "    text = 'h\\u00e9llo ' + name\n"
    "    return text.upper() if loud and len(name) > 1 else text\n"
)
RECORDS = [
    {"id": "t/clamp", "language": "python", "label": "equivalent", "entry": "clamp",
     "before": CLAMP, "after": CLAMP_MINMAX},
    {"id": "t/greet", "language": "python", "label": "equivalent_by_tests", "entry": "greet",
     "before": GREET, "after": GREET, "param_types": {"name": "str", "loud": "bool"}},
    {"id": "t/diff", "language": "python", "label": "different", "entry": "clamp",
     "before": CLAMP, "after": CLAMP.replace("x < lo", "x <= lo")},
]


def _write(tmp_path: Path) -> Path:
    path = tmp_path / "tiny.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in RECORDS), encoding="utf-8")
    return path


def _parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    m.add_arguments(parser)
    return parser.parse_args(argv)


def test_only_the_equivalent_pairs_are_mutated(tmp_path: Path) -> None:
    pairs = m.equivalent_pairs([_write(tmp_path)])
    assert [p.input.id for p in pairs] == ["t/clamp", "t/greet"]


def test_mutants_change_the_after_version_and_compile() -> None:
    item = engine_input(RECORDS[1])
    made = m.mutants(item, 40, random.Random(0))
    operators = {x.operator for x in made}
    assert {"signature", "comparison", "operator", "constant", "string escape",
            "exception type"} <= operators
    original = ast.unparse(ast.parse(GREET)) + "\n"
    sources = [x.source for x in made]
    assert len(set(sources)) == len(sources) and original not in sources
    for x in made:
        compile(x.source, "<mutant>", "exec")
        assert "Say hello" in x.source  # the docstring is never mutated
    by = {x.description: x.source for x in made}
    assert "raise TypeError('no name')" in by["raise ValueError -> raise TypeError"]
    assert "and -> or" in by and "loud or len(name) > 1" in by["and -> or"]
    assert any("\\xe8" in s or "\u00e8" in s for s in sources)  # é -> è
    assert any("\U0001f600" in s for s in sources)
    renamed = next(x for x in made if "renamed" in x.description)
    assert "def greet(name_renamed: str, loud: bool)" in renamed.source
    assert renamed.param_types is not None and dict(renamed.param_types)["name_renamed"] == "str"


def test_defaults_are_mutated() -> None:
    item = BenchInput("t", "python", "clamp", CLAMP, CLAMP)
    made = m.mutants(item, 60, random.Random(1))
    defaults = [x for x in made if x.operator == "default"]
    assert any("hi: int=11" in x.source for x in defaults)


def test_a_long_run_finds_a_difference_on_an_edge_value() -> None:
    elif_ = CLAMP.replace("    if x > hi", "    elif x > hi")
    after = elif_.replace("return lo", "return 7 if x == -2 ** 63 else lo")
    run = m.long_run(CLAMP, after, "clamp", None, inputs=500, seed=0, time_s=3.0)
    assert run.counterexample is not None
    assert run.counterexample.args == ("-9223372036854775808",)
    same = m.long_run(CLAMP, elif_, "clamp", None, inputs=500, seed=0, time_s=2.0)
    assert same.counterexample is None and same.signature is None and same.inputs >= 500


def test_max_of_min_is_not_clamp_on_bools() -> None:
    # max(0, False) is 0, the first of two equal maxima: the long run finds the bool.
    run = m.long_run(CLAMP, CLAMP_MINMAX, "clamp", None, inputs=300, seed=0, time_s=2.0)
    assert run.counterexample is not None and run.counterexample.args[0] == "False"


def test_a_renamed_parameter_is_shown_by_a_keyword_call() -> None:
    renamed = CLAMP.replace("x", "value")
    sentence = m.signature_difference(CLAMP, renamed, "clamp")
    assert sentence is not None and "raises TypeError" in sentence
    assert "clamp(x=1, lo=1, hi=1)" in sentence
    assert m.signature_difference(CLAMP, CLAMP_MINMAX, "clamp") is None


def test_the_harness_runs_and_writes_its_records(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "mutants.jsonl"
    code = m.main(_parse([str(_write(tmp_path)), "--mutants-per-pair", "2", "--timeout", "5",
                          "--long-inputs", "300", "--out", str(out), "--seed", "3"]))
    assert code == 0
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(records) == 4
    assert {r["pair"] for r in records} == {"t/clamp", "t/greet"}
    for r in records:
        assert r["verdict"] in ("verified", "refuted", "inconclusive")
        assert {"operator", "mutation", "model_defect", "long_run",
                "verified_but_different"} <= set(r)
        if r["verdict"] == "verified":
            assert r["long_run"]["inputs"] >= 300
        else:
            assert r["long_run"] is None and r["verified_but_different"] is False
        if r["verified_but_different"]:
            assert "source" in r
    summary = capsys.readouterr().out
    assert "verified-but-different" in summary and "all" in summary
    assert (tmp_path / "mutants.jsonl.summary.txt").read_text().strip() in summary


def test_no_equivalent_pair_is_a_plain_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "diff.jsonl"
    path.write_text(json.dumps(RECORDS[2]) + "\n", encoding="utf-8")
    assert m.main(_parse([str(path)])) == 2
    assert "no pairs labelled equivalent" in capsys.readouterr().err


@pytest.mark.skipif(not (SHARED_DEV / "python.jsonl").exists(), reason="../shared is absent")
def test_a_slice_of_the_dev_set(tmp_path: Path) -> None:
    out = tmp_path / "dev.jsonl"
    code = m.main(_parse([str(SHARED_DEV / "python.jsonl"), "--limit", "2",
                          "--mutants-per-pair", "2", "--timeout", "5", "--long-inputs", "300",
                          "--out", str(out)]))
    assert code == 0
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert 1 <= len(records) <= 4
    assert all(r["pair"].startswith("refactory") or "/" in r["pair"] for r in records)
