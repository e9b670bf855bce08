"""The predicate vocabulary, the formalizer's schema and reading facts from model output."""

from __future__ import annotations

import json

import jsonschema
import pytest

from veribot.checks.agent.facts import (
    TABLE_2,
    VOCABULARY,
    VOCABULARY_VERSION,
    Fact,
    FactSet,
    fact_schema,
    make_fact,
    parse_facts,
    vocabulary_text,
)


def test_vocabulary_holds_table_2_with_the_papers_arities() -> None:
    arity = {name: VOCABULARY[name].arity for name in TABLE_2}
    assert arity == {
        "def": 3, "use": 3, "flow": 6, "controldep": 7, "defWithExpr": 3,
        "condWithExpr": 2, "unaryFun": 4, "binaryFun": 5, "entry": 3, "exit": 2,
        "isConstantValue": 1, "watchVar": 3, "varMap": 6, "entryMap": 4, "exitMap": 4,
    }
    assert VOCABULARY_VERSION == 1
    assert "controldep(x: var, f1: file, l1: line, cond: var, choice: bool" in vocabulary_text()


def test_round_trip_through_json_and_the_schema() -> None:
    facts = FactSet(
        [
            Fact("def", ("x", "before", 3)),
            Fact("controldep", ("x", "before", 3, "c", "true", "before", 2)),
            Fact("exprEquiv", ("has_value(x)", "not is_empty(x)", "")),
            Fact("isConstantValue", ("0",)),
        ]
    )
    data = json.loads(json.dumps(facts.to_json()))
    jsonschema.validate(data, fact_schema())
    assert FactSet.from_json(data) == facts
    assert facts.by_pred("def") == (Fact("def", ("x", "before", 3)),)
    assert Fact("def", ("x", "before", 3)).line() == 3
    assert Fact("flow", ("a", "before", 1, "a", "before", 4)).line() == 4


def test_schema_rejects_wrong_arity_and_kinds() -> None:
    schema = fact_schema()
    for bad in (
        {"facts": [{"pred": "def", "args": ["x", "before"]}]},
        {"facts": [{"pred": "def", "args": ["x", "before", "three"]}]},
        {"facts": [{"pred": "invented", "args": []}]},
        {"facts": [{"pred": "def", "args": ["x", "before", 3], "why": "extra"}]},
    ):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(bad, schema)


@pytest.mark.parametrize(
    "raw",
    [
        "not json at all {",
        '{"facts": "def(x, 1)"}',
        '{"predicates": []}',
        "42",
        None,
        [None, 3, "def", {}, {"pred": 7}, {"pred": "def", "args": "x"}],
        {"facts": [{"pred": "def", "args": ["x", "before", -1]}]},
        {"facts": [{"pred": "use", "args": [["x"], "before", 2]}]},
        {"facts": [{"pred": "controldep", "args": ["x", "b", 1, "c", "maybe", "b", 2]}]},
        {"facts": [{"pred": "def", "args": ["", "before", 1]}]},
        {"facts": [{"pred": "def", "args": ["x", "before", True]}]},
    ],
)
def test_parse_facts_never_raises_on_malformed_output(raw: object) -> None:
    facts, errors = parse_facts(raw)
    assert len(facts) == 0
    assert errors


def test_parse_facts_keeps_the_valid_part_and_normalises() -> None:
    raw = {
        "facts": [
            {"pred": "def", "args": ["x", "before", 3]},
            {"pred": "def", "args": ["x", "before"]},
            ["use", "x", "before", "4"],
            {"pred": "controldep", "args": ["x", "before", 3, "c", True, "before", 2]},
            {"pred": "fancy", "args": [1]},
        ]
    }
    facts, errors = parse_facts(json.dumps(raw))
    assert set(facts) == {
        Fact("def", ("x", "before", 3)),
        Fact("use", ("x", "before", 4)),
        Fact("controldep", ("x", "before", 3, "c", "true", "before", 2)),
    }
    assert len(errors) == 2
    assert any("expected 3 arguments" in e for e in errors)
    assert any("unknown predicate 'fancy'" in e for e in errors)


def test_make_fact_validates() -> None:
    assert make_fact("exit", ["after", 9]) == Fact("exit", ("after", 9))
    with pytest.raises(ValueError, match="unknown predicate"):
        make_fact("nope", [])
