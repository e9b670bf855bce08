"""Rendering reports: text, JSON (own schema), Markdown, SARIF (the official 2.1.0 schema)."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from tests.bot.schema_check import validate_report_json, validate_sarif
from veribot.bot.render import SUMMARY_MARKER, render, render_markdown, to_json, to_sarif
from veribot.bot.review import Report, UnitResult
from veribot.checks.agent.llm import UsageReport
from veribot.checks.agent.pipeline import Answer
from veribot.checks.agent.verdict import AgentFinding, AgentOutcome, ClaimReport, Status
from veribot.checks.project.units import MODULE_ENTRY, ChangedUnit, UnitKind, UnitLevel
from veribot.checks.verdict import (
    Behaviour,
    BehaviourKind,
    Counterexample,
    Reason,
    Result,
    Verdict,
)


def unit(
    kind: UnitKind, entry: str, lines: tuple[int, int] | None = (3, 4), **kw: Any
) -> ChangedUnit:
    return ChangedUnit(
        kind,
        "shop/pricing.py",
        entry,
        before_path="shop/pricing.py",
        after_path=None if kind is UnitKind.DELETED else "shop/pricing.py",
        before_lines=(1, 2),
        after_lines=None if kind is UnitKind.DELETED else lines,
        **kw,
    )


REFUTATION = Counterexample(
    args=("9", "[1, 2]"),
    before=Behaviour(BehaviourKind.RETURNED, 9, "9"),
    after=Behaviour(BehaviourKind.RAISED, "IndexError", "IndexError: list index out of range"),
    found_by="z3",
    difference="the after version raises",
)

REPORT = Report(
    items=(
        UnitResult(
            unit(UnitKind.CHANGED, "discount"),
            Result(Verdict.REFUTED, Reason.COUNTEREXAMPLE, "behaviours differ", REFUTATION),
        ),
        UnitResult(
            unit(UnitKind.CHANGED, "Cart.total", (10, 12)),
            Result(Verdict.VERIFIED, Reason.PROOF, "proven", method="smt", assumptions=("x: int",)),
        ),
        UnitResult(
            unit(UnitKind.CHANGED, "net", (20, 21)),
            Result(Verdict.INCONCLUSIVE, Reason.unsupported("while-else"), "while-else at line 20"),
        ),
        UnitResult(
            unit(UnitKind.ADDED, "tip", (30, 31)),
            Result(Verdict.INCONCLUSIVE, Reason.ADDED, "function added | piped"),
        ),
        UnitResult(
            unit(UnitKind.DELETED, "old"),
            Result(Verdict.INCONCLUSIVE, Reason.DELETED, "function deleted"),
        ),
        UnitResult(
            unit(UnitKind.OUTSIDE_FUNCTIONS, MODULE_ENTRY, (1, 1), level=UnitLevel.FILE),
            Result(Verdict.INCONCLUSIVE, Reason.NOT_A_FUNCTION, "module-level code changed"),
        ),
    ),
    skipped=(
        ChangedUnit(
            UnitKind.NOT_PYTHON,
            "README.md",
            MODULE_ENTRY,
            level=UnitLevel.FILE,
            detail="not a Python file: not checked",
        ),
    ),
    unchanged=2,
    root=Path("/tmp/repo"),
    base="a" * 40,
    head="b" * 40,
    base_label="main",
    head_label="HEAD",
)


def test_plain_text_has_one_line_per_unit_with_the_refutation() -> None:
    text = render(REPORT, "text")
    lines = text.splitlines()
    assert lines[0] == f"veribot review main ({'a' * 10})..HEAD ({'b' * 10})"
    refuted = lines[1]
    assert refuted.startswith("refuted")
    assert "shop/pricing.py::discount" in refuted and "[counterexample]" in refuted
    assert "discount(9, [1, 2])" in refuted
    assert "before returns 9" in refuted and "after raises IndexError" in refuted
    assert sum(1 for line in lines if "shop/pricing.py::" in line) == len(REPORT.items)
    assert "skipped       README.md" in text
    assert lines[-1].startswith("6 units: 1 verified, 1 refuted, 4 inconclusive (3 not compared)")
    assert "\x1b[" not in text


def test_terminal_text_is_a_table_and_honours_no_color() -> None:
    coloured = render(REPORT, "text", terminal=True, width=120)
    colour_code = re.compile(r"\x1b\[(?:[0-9;]*;)?(?:3[0-7]|9[0-7])m")
    assert "┃" in coloured and colour_code.search(coloured)
    assert "discount(9, [1, 2])" in coloured
    plain = render(REPORT, "text", terminal=True, color=False, width=120)
    assert "┃" in plain and not colour_code.search(plain)


def test_json_matches_its_schema_and_carries_the_counterexample() -> None:
    doc = json.loads(render(REPORT, "json"))
    validate_report_json(doc)
    assert doc["version"] == "1.0"
    assert doc["summary"]["refuted"] == 1 and doc["summary"]["not_compared"] == 3
    first = doc["units"][0]
    assert first["counterexample"]["call"] == "discount(9, [1, 2])"
    assert first["counterexample"]["after"]["kind"] == "raise"
    assert doc["units"][1]["assumptions"] == ["x: int"]


def test_a_method_counterexample_shows_the_object_it_was_called_on() -> None:
    cex = replace(REFUTATION, args=("2",), receiver="Cart(3, 'a')")
    report = replace(
        REPORT,
        items=(
            UnitResult(
                unit(UnitKind.CHANGED, "Cart.total"),
                Result(Verdict.REFUTED, Reason.COUNTEREXAMPLE, "behaviours differ", cex),
            ),
        ),
    )
    doc = json.loads(render(report, "json"))
    validate_report_json(doc)
    shown = doc["units"][0]["counterexample"]
    assert shown["call"] == "Cart(3, 'a').total(2)" and shown["receiver"] == "Cart(3, 'a')"
    assert "Cart(3, 'a').total(2)" in render(report, "text")


def test_a_difference_under_one_hash_seed_names_the_seed() -> None:
    cex = replace(REFUTATION, hash_seed=1234)
    report = replace(REPORT, items=(UnitResult(
        unit(UnitKind.CHANGED, "names"),
        Result(Verdict.REFUTED, Reason.COUNTEREXAMPLE, "behaviours differ", cex)),))
    doc = json.loads(render(report, "json"))
    validate_report_json(doc)
    assert doc["units"][0]["counterexample"]["hash_seed"] == 1234
    plain = json.loads(render(REPORT, "json"))
    assert plain["units"][0]["counterexample"]["hash_seed"] is None


def test_json_schema_rejects_a_refuted_unit_without_counterexample() -> None:
    doc = to_json(REPORT)
    doc["units"][0]["counterexample"] = None
    with pytest.raises(jsonschema.ValidationError):
        validate_report_json(doc)


def test_sarif_is_valid_against_the_official_schema() -> None:
    validate_sarif(json.loads(render(REPORT, "sarif")))


def test_sarif_levels_rules_and_locations() -> None:
    log = to_sarif(REPORT)
    (run,) = log["runs"]
    results = {r["ruleId"]: r for r in run["results"]}
    # verified and deleted units are not results
    assert set(results) == {
        "refuted/counterexample",
        "inconclusive/unsupported",
        "inconclusive/added",
        "inconclusive/outside-functions",
    }
    assert results["refuted/counterexample"]["level"] == "error"
    assert results["inconclusive/unsupported"]["level"] == "warning"
    assert results["inconclusive/added"]["level"] == "note"
    loc = results["refuted/counterexample"]["locations"][0]["physicalLocation"]
    assert loc["artifactLocation"] == {"uri": "shop/pricing.py", "uriBaseId": "%SRCROOT%"}
    assert loc["region"]["startLine"] == 3
    rules = run["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == sorted(results)
    for r in run["results"]:
        assert rules[r["ruleIndex"]]["id"] == r["ruleId"]
    assert run["tool"]["driver"]["name"] == "veribot"
    assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"] == "file:///tmp/repo/"


def test_sarif_of_an_empty_report_is_valid() -> None:
    empty = to_sarif(Report(items=()))
    validate_sarif(empty)
    assert empty["runs"][0]["results"] == []


def test_sarif_carries_the_agents_answer_and_claims_as_properties() -> None:
    finding = AgentFinding(
        AgentOutcome.WRONG_CAUGHT,
        "the agent said equivalent, but on input (9, [1, 2]) the versions behave differently",
        answer=Answer.EQUIVALENT,
        claims=(
            ClaimReport('entryMap("before", 1, "after", 3)', Status.SUPPORTED, 3),
            ClaimReport(
                'varMap("t", "before", 2, "u", "after", 4)', Status.CONTRADICTED, 4, "no u"
            ),
        ),
    )
    first = replace(REPORT.items[0], agent=finding)
    report = replace(
        REPORT,
        items=(first, *REPORT.items[1:]),
        agent_model="claude-test",
        agent_usage=UsageReport(calls=3, input_tokens=100, output_tokens=10),
    )
    log = to_sarif(report)
    validate_sarif(log)
    (run,) = log["runs"]
    assert run["properties"]["veribot/agent"] == {
        "asked": True,
        "model": "claude-test",
        "usage": report.agent_usage.as_dict() if report.agent_usage else None,
    }
    refuted = next(r for r in run["results"] if r["ruleId"] == "refuted/counterexample")
    agent = refuted["properties"]["veribot/agent"]
    assert (agent["outcome"], agent["answer"]) == ("agent wrong, caught", "equivalent")
    assert agent["claimCounts"] == {"supported": 1, "contradicted": 1, "unchecked": 0}
    assert agent["claims"][1] == {
        "fact": 'varMap("t", "before", 2, "u", "after", 4)',
        "status": "contradicted",
        "line": 4,
        "why": "no u",
    }
    others = [r for r in run["results"] if r is not refuted]
    assert all("properties" not in r for r in others)  # no finding: nothing claimed
    not_asked = to_sarif(replace(REPORT, agent_reason="no Anthropic API key is configured"))
    assert not_asked["runs"][0]["properties"]["veribot/agent"] == {
        "asked": False,
        "summary": "agent not asked (no Anthropic API key is configured)",
    }


def test_markdown_summary_comment() -> None:
    md = render(REPORT, "markdown")
    assert md.startswith(SUMMARY_MARKER)
    assert "### veribot: 1 refuted, 1 verified, 4 inconclusive" in md
    assert ("| ❌ | `shop/pricing.py::discount` | **refuted** (untested behaviour change) | "
            "`counterexample` |") in md
    # No test of the change makes the call: the test that pins the new behaviour, to paste.
    assert ("    from shop.pricing import discount\n\n    with pytest.raises(IndexError):\n"
            "        discount(9, [1, 2])\n") in md
    assert "discount(9, [1, 2])\n# before: returns 9\n# after:  raises IndexError" in md
    assert "`README.md`" in md
    # Decided units first; the undecided folded; what was not compared in one line.
    assert md.index("::discount`") < md.index("::Cart.total`") < md.index("left undecided")
    assert "<details><summary>1 changed function left undecided (1 unsupported)" in md
    assert "| `shop/pricing.py::net` | `unsupported:while-else` | while-else at line 20 |" in md
    assert ("Not compared: 1 added (`shop/pricing.py::tip`); 1 deleted "
            "(`shop/pricing.py::old`); 1 outside functions (`shop/pricing.py::<module>`).") in md
    piped = replace(REPORT.items[2], result=replace(REPORT.items[2].result, detail="a | b"))
    md = render(replace(REPORT, items=(piped,)), "markdown")
    assert "| a \\| b |" in md  # table cells are escaped


def test_changed_tests_are_one_line_not_one_row_each() -> None:
    def test_unit(name: str, path: str, verdict: Verdict) -> UnitResult:
        reason = Reason.COUNTEREXAMPLE if verdict is Verdict.REFUTED else Reason.TIMEOUT
        cex = REFUTATION if verdict is Verdict.REFUTED else None
        return UnitResult(replace(unit(UnitKind.CHANGED, name), path=path),
                          Result(verdict, reason, "differs", cex))

    tests = [test_unit(f"test_{k}", f"tests/test_{k % 2}.py",
                       Verdict.REFUTED if k == 0 else Verdict.INCONCLUSIVE) for k in range(7)]
    md = render(replace(REPORT, items=(*REPORT.items, *tests)), "markdown")
    assert ("Tests: 7 test functions changed in `tests/test_0.py`, `tests/test_1.py` "
            "(1 refuted, 6 inconclusive)") in md
    assert "test_0`" not in md.replace("tests/test_0.py`", "")  # no row of its own
    assert md.count("| ❌ |") == 1  # only the code's refutation is a row


def test_unknown_format_is_an_error() -> None:
    with pytest.raises(ValueError, match="unknown format"):
        render(REPORT, "html")


# A custom __repr__ in the code under review, and a model's answer, written by an attacker.
HOSTILE = "```\n[click](http://evil) @org/team <img src=x> #1 www.evil.com ``"


def _hostile_report() -> Report:
    cex = replace(
        REFUTATION,
        before=Behaviour(BehaviourKind.RETURNED, 1, HOSTILE),
        after=Behaviour(BehaviourKind.RETURNED, 2, "2 " + HOSTILE),
    )
    finding = AgentFinding(
        AgentOutcome.WRONG_CAUGHT,
        HOSTILE,
        answer=Answer.EQUIVALENT,
        claims=(ClaimReport("f(1)", Status.CONTRADICTED, 3, HOSTILE),),
    )
    items = (
        UnitResult(
            unit(UnitKind.CHANGED, "discount"),
            Result(Verdict.REFUTED, Reason.COUNTEREXAMPLE, HOSTILE, cex),
            agent=finding,
        ),
        UnitResult(
            unit(UnitKind.CHANGED, "net", (20, 21)),
            Result(Verdict.INCONCLUSIVE, Reason.TIMEOUT, HOSTILE),
        ),
    )
    hostile_file = replace(REPORT.skipped[0], path="<img src=x>@org/team.md")
    return replace(REPORT, items=items, skipped=(hostile_file,), agent_model="claude-test")


def _outside_code(markdown: str) -> str:
    """The HTML a Markdown renderer (raw HTML allowed, as on GitHub) makes of ``markdown``,
    with code blocks and code spans removed."""
    from markdown_it import MarkdownIt

    rendered = MarkdownIt("commonmark", {"html": True}).enable("table").render(markdown)
    return re.sub(r"<pre>.*?</pre>|<code>.*?</code>", "", rendered, flags=re.DOTALL)


def _assert_inert(markdown: str) -> None:
    html = _outside_code(markdown)
    assert "<a " not in html and "<img" not in html  # no link, no HTML injected
    assert "@org" not in html  # no mention GitHub would notify
    assert "://evil" not in html and "www.evil" not in html  # nothing GitHub autolinks
    assert "#1" not in html  # no cross-reference to issue #1


def test_text_from_the_code_or_the_model_cannot_break_out_or_mention() -> None:
    from veribot.bot.worker import inline_comments, summary_markdown

    report = _hostile_report()
    md = render(report, "markdown")
    _assert_inert(md)
    # Our own: the refutation's input, the agent's answer, the folded undecided unit.
    assert md.count("<pre>") == 0 and _outside_code(md).count("<details>") == 3
    from markdown_it import MarkdownIt

    blocks = MarkdownIt("commonmark", {"html": True}).render(md).count("<pre>")
    assert blocks == 1  # the distinguishing input stays in its one code block
    comments = inline_comments(report, {})
    assert comments
    for comment in comments:
        _assert_inert(comment.body)
    _assert_inert(summary_markdown(report, "c" * 40, (), comments))


def test_one_huge_value_does_not_crowd_the_other_units_out() -> None:
    from veribot.bot.render import utf8_size

    huge = replace(
        REFUTATION, before=Behaviour(BehaviourKind.RETURNED, 1, "[" + "1, " * 40_000 + "]")
    )
    first = replace(
        REPORT.items[0],
        result=Result(Verdict.REFUTED, Reason.COUNTEREXAMPLE, "behaviours differ", huge),
    )
    report = replace(REPORT, items=(first, *REPORT.items[1:]))
    md = render_markdown(report, max_bytes=20_000)
    assert utf8_size(md) <= 20_000
    assert "more unit" not in md  # every unit is listed, the huge value cut short
    assert all(f"::{name}`" in md for name in ("discount", "net", "tip", "old"))
    assert "a distinguishing input" in md


def test_two_long_values_are_shown_from_where_they_part() -> None:
    """Two ``__dir__`` lists cut at the same prefix would show nothing: the cell and the
    details show each from a little before the first difference."""
    names = [f"name_{k:03}" for k in range(300)]
    before = Behaviour(BehaviourKind.RETURNED, 0, repr(names))
    after = Behaviour(BehaviourKind.RETURNED, 0, repr([*names[:250], "other", *names[250:]]))
    cex = replace(REFUTATION, before=before, after=after)
    item = replace(REPORT.items[0], result=replace(REPORT.items[0].result, counterexample=cex))
    md = render(replace(REPORT, items=(item,)), "markdown")
    row = next(line for line in md.splitlines() if line.startswith("| ❌ |"))
    assert "'other'" in row and "… 'name_24" in row and len(row) < 900
    assert "'name_001'" not in row  # not the common start
    block = md[md.index("```python"):]
    assert "'other'" in block
