"""The agent-fairness harness: recordings written as a model would, judged end to end."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from veribot.bench.agentfair import Pair, ScriptedLLM, honest_facts, main, recording
from veribot.checks.agent.llm import LLMError, Message

BEFORE = (
    'def tag(a: int, loud: bool) -> str:\n    s = "hi"\n    if loud:\n'
    '        s = s + "!" + "!"\n    return s\n'
)
SAME = BEFORE.replace('s + "!" + "!"', 's + "!!"')
OTHER = BEFORE.replace('s + "!" + "!"', 's + "?"')


def test_the_honest_agent_writes_like_a_model() -> None:
    first, later = honest_facts(Pair("p", "equivalent", "tag", BEFORE, SAME))
    text = " ".join(str(f) for f in first)
    assert '"t1"' in text and "$t1" not in text  # its own temporary names
    assert '"\\"!\\""' in text  # double-quoted literals
    assert [f.pred for f in later] == ["controldep"]  # withheld from the first round
    assert later[0] not in first


def test_the_scripted_model_holds_a_forced_tool_to_its_word() -> None:
    llm = ScriptedLLM(recording("equivalent", [], []))
    ask = [Message.user("?")]
    with pytest.raises(LLMError, match="forced tool record_facts"):
        llm.complete("", ask, [], max_tokens=1, temperature=0.0, tool_choice="record_facts")


def test_no_false_accusation_and_the_wrong_agent_caught(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pairs = tmp_path / "pairs.jsonl"
    engine = tmp_path / "engine.jsonl"
    rows = [("same", "equivalent", SAME), ("other", "different", OTHER)]
    pairs.write_text(
        "".join(
            json.dumps({"id": i, "label": label, "entry": "tag", "before": BEFORE, "after": a})
            + "\n"
            for i, label, a in rows
        )
    )
    engine.write_text(
        "".join(
            json.dumps({"id": i, "verdict": "inconclusive", "reason": "timeout"}) + "\n"
            for i, _, _ in rows
        )
    )
    assert main([str(pairs), str(engine), "--recordings", str(tmp_path / "rec")]) == 0
    out = capsys.readouterr().out
    assert "false accusations: 0 of 2 agents answering the label" in out
    assert "catches: 1 of 1 wrong agents on different pairs" in out
    assert len(list((tmp_path / "rec").glob("*.json"))) == 3
