"""How fairly the agent is judged on a benchmark set, with recordings written as a model would.

For every pair of a benchmark file (``../shared/bench/dev/python.jsonl``) this writes,
deterministically, the recorded conversation of two agents and replays each through the
real pipeline (``agent.verdict.ask_and_assess``: the ``submit_answer`` and forced
``record_facts`` tool calls, the claim check, the relative check, the extra formalizer
round), against the engine's verdict for the pair taken from a ``veribot bench`` results
file:

- an **honest** agent answers the pair's label (equivalent, or not equivalent for a
  ``different`` pair) with the facts of the code as a model writes them: its temporaries
  named ``t1``, ``t2`` ... (not the front end's ``$t1``), string literals in double quotes,
  and its first formalizer round leaving out one control dependence of a changed line,
  which it gives when asked again;
- a **wrong** agent (``different`` pairs only) answers "equivalent" and carries the facts
  of the original version's changed lines over to the modified version, as the agent of
  the seed paper's Fig. 19 does.

A false accusation is an honest agent judged "agent wrong, caught"; a catch is the wrong
agent judged so. Run::

    veribot bench ../shared/bench/dev/python.jsonl --timeout 5 --out engine.jsonl
    python -m veribot.bench.agentfair ../shared/bench/dev/python.jsonl engine.jsonl \\
        [--recordings DIR]

The replay is in-process (:class:`ScriptedLLM` serves the recorded responses in order and,
like the API, holds a forced ``tool_choice`` to its word); the tests replay the same
shape of recordings through the real ``anthropic`` client and the fake Messages API.
"""

from __future__ import annotations

import argparse
import ast
import json
import sys
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from veribot.checks.agent.facts import VOCABULARY, Fact
from veribot.checks.agent.llm import (
    Completion,
    LLMError,
    Message,
    ToolSpec,
    completion_from_api,
)
from veribot.checks.agent.pipeline import FORMALIZER_PREDICATES, AgentLimits, Question
from veribot.checks.agent.verdict import AgentOutcome, ask_and_assess, changed_lines
from veribot.checks.agent.view import MemoryRevision, SourceView
from veribot.checks.lang.pyfacts import FunctionNotFound, code_facts
from veribot.checks.lang.pyprove import find_function
from veribot.checks.verdict import Behaviour, BehaviourKind, Counterexample, Result, Verdict

LIMITS = AgentLimits(max_prover_checks=4)


class ScriptedLLM:
    """An ``LLM`` answering with recorded Messages API responses, in order."""

    model = "recorded"

    def __init__(self, responses: Sequence[Mapping[str, object]]) -> None:
        self._responses = list(responses)
        self.calls = 0

    def complete(
        self,
        system: str,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec],
        *,
        max_tokens: int,
        temperature: float,
        tool_choice: str | None = None,
    ) -> Completion:
        if self.calls >= len(self._responses):
            raise LLMError("the recording has no answer left")
        completion = completion_from_api(self._responses[self.calls])
        self.calls += 1
        if tool_choice is not None and tool_choice not in {u.name for u in completion.tool_uses}:
            raise LLMError(f"the recorded answer does not call the forced tool {tool_choice}")
        return completion


@dataclass(frozen=True)
class Pair:
    id: str
    label: str
    entry: str
    before: str
    after: str


def _span(source: str, entry: str) -> tuple[int, int] | None:
    node = find_function(ast.parse(source), entry)
    if node is None:
        return None
    first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
    return first, node.end_lineno or node.lineno


def _model_name(name: str, code_names: set[str]) -> str:
    """A front-end temporary (``$t3``) as a model names it (``t3``); literals in the
    spelling a model tends to use (double quotes)."""
    if name.startswith("$t") and name[2:].isdigit():
        candidate = f"t{name[2:]}"
        return candidate if candidate not in code_names else f"tmp_{name[2:]}"
    try:
        value = ast.literal_eval(name)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return name
    return json.dumps(value, ensure_ascii=False) if isinstance(value, str) else name


def _as_model_writes(fact: Fact, code_names: set[str]) -> Fact:
    spec = VOCABULARY[fact.pred]
    return Fact(
        fact.pred,
        tuple(
            _model_name(a, code_names) if kind == "var" and isinstance(a, str) else a
            for (_, kind), a in zip(spec.args, fact.args, strict=True)
        ),
    )


def honest_facts(pair: Pair) -> tuple[list[Fact], list[Fact]]:
    """The facts an honest model gives (first round, and what it adds when asked again)."""
    try:
        before = code_facts(pair.before, pair.entry, "before")
        after = code_facts(pair.after, pair.entry, "after")
    except (SyntaxError, FunctionNotFound, ValueError):
        return [], []
    changed = changed_lines(pair.before, pair.after)
    allowed = set(FORMALIZER_PREDICATES)
    names = {str(a) for f in before | after for a in f.args if isinstance(a, str)}
    chosen: list[Fact] = []
    for fact in before | after:
        if fact.pred not in allowed:
            continue
        file, line = fact.file(), fact.line()
        frame = fact.pred in ("entry", "exit", "watchVar")
        if frame or (file is not None and line in changed.get(file, frozenset())):
            chosen.append(_as_model_writes(fact, names))
    entry = {f.file(): f.line() for f in chosen if f.pred == "entry"}
    exit_ = {f.file(): f.line() for f in chosen if f.pred == "exit"}
    for pred, where in (("entryMap", entry), ("exitMap", exit_)):
        first, second = where.get("before"), where.get("after")
        if first is not None and second is not None:
            chosen.append(Fact(pred, ("before", first, "after", second)))
    withheld = [
        f for f in chosen if f.pred == "controldep" and not str(f.args[3]).startswith("Entry:")
    ][:1]
    return [f for f in chosen if f not in withheld], withheld


def mirrored_facts(pair: Pair, honest: Sequence[Fact]) -> list[Fact]:
    """The wrong agent's facts: the original's changed lines claimed of the modified version."""
    extra = [
        Fact(f.pred, tuple("after" if a == "before" else a for a in f.args))
        for f in honest
        if f.file() == "before" and f.pred in ("def", "controldep", "binaryFunDef", "unaryFunDef")
    ]
    return [*honest, *[f for f in extra if f not in honest][:6]]


def recording(answer: str, first: Sequence[Fact], later: Sequence[Fact]) -> list[dict[str, object]]:
    """The conversation: the analyzer's answer, then two formalizer rounds."""

    def message(n: int, name: str, tool_input: dict[str, object]) -> dict[str, object]:
        call = {"type": "tool_use", "id": f"toolu_{n}", "name": name, "input": tool_input}
        return {
            "type": "message",
            "role": "assistant",
            "model": "recorded",
            "content": [call],
            "stop_reason": "tool_use",
            "usage": {"input_tokens": 0, "output_tokens": 0},
        }

    def facts(items: Sequence[Fact]) -> dict[str, object]:
        return {"facts": [{"pred": f.pred, "args": list(f.args)} for f in items], "complete": True}

    explanation = f"I read both versions; they are {answer}."
    return [
        message(1, "submit_answer", {"answer": answer, "explanation": explanation}),
        message(2, "record_facts", facts(first)),
        message(3, "record_facts", facts(later)),
    ]


def engine_result(record: Mapping[str, object]) -> Result:
    """The engine's verdict for a pair, from a ``veribot bench`` record."""
    verdict = Verdict(str(record["verdict"]))
    cex = record.get("counterexample")
    counterexample = None
    if verdict is Verdict.REFUTED and isinstance(cex, dict):
        shown = Behaviour(BehaviourKind.RETURNED, None, "(see the bench record)")
        args = tuple(str(a) for a in cex.get("args", []))
        counterexample = Counterexample(args, shown, shown, "bench")
    if verdict is Verdict.REFUTED and counterexample is None:
        verdict = Verdict.INCONCLUSIVE
    return Result(verdict, str(record.get("reason", "")), str(record.get("detail", "")),
                  counterexample)


def judge(pair: Pair, result: Result, responses: Sequence[Mapping[str, object]]) -> str:
    """The outcome of one recorded agent on one pair."""
    before_span, after_span = _span(pair.before, pair.entry), _span(pair.after, pair.entry)
    if before_span is None or after_span is None:
        return "no function"
    lines_b, lines_a = pair.before.splitlines(), pair.after.splitlines()
    question = Question(
        "m.py",
        pair.entry,
        "\n".join(lines_b[before_span[0] - 1 : before_span[1]]),
        "\n".join(lines_a[after_span[0] - 1 : after_span[1]]),
        before_lines=before_span,
        after_lines=after_span,
    )
    view = SourceView(MemoryRevision({"m.py": pair.before}), MemoryRevision({"m.py": pair.after}))
    finding = ask_and_assess(
        ScriptedLLM(responses), question, view, result, pair.before, pair.after, pair.entry,
        LIMITS, timeout_s=5.0,
    )
    return finding.outcome.value


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m veribot.bench.agentfair")
    parser.add_argument("pairs", type=Path, help="a benchmark JSONL file")
    parser.add_argument("engine", type=Path, help="a `veribot bench` results JSONL file")
    parser.add_argument("--recordings", type=Path, help="write the recordings here")
    parser.add_argument("--limit", type=int)
    args = parser.parse_args(argv)
    engine = {}
    for line in args.engine.read_text(encoding="utf-8").splitlines():
        if line.strip():
            record = json.loads(line)
            if isinstance(record, dict) and "id" in record and "verdict" in record:
                engine[str(record["id"])] = record
    pairs = [
        Pair(str(r["id"]), str(r["label"]), str(r["entry"]), str(r["before"]), str(r["after"]))
        for r in map(json.loads, args.pairs.read_text(encoding="utf-8").splitlines())
        if r.get("language", "python") == "python" and str(r["id"]) in engine
    ][: args.limit]
    table: Counter[tuple[str, str, str, str]] = Counter()
    for pair in pairs:
        result = engine_result(engine[pair.id])
        first, later = honest_facts(pair)
        different = pair.label == "different"
        agents = [("honest", "not equivalent" if different else "equivalent", first)]
        if different:
            agents.append(("wrong", "equivalent", mirrored_facts(pair, first)))
        for who, answer, facts in agents:
            responses = recording(answer, facts, later)
            if args.recordings is not None:
                args.recordings.mkdir(parents=True, exist_ok=True)
                name = f"{pair.id.replace('/', '__')}.{who}.json"
                doc = {"description": f"{who} agent on {pair.id}",
                       "exchanges": [{"response": r} for r in responses]}
                (args.recordings / name).write_text(json.dumps(doc, indent=1) + "\n")
            outcome = judge(pair, result, responses)
            kind = "different" if different else "equivalent"
            table[(kind, who, result.verdict.value, outcome)] += 1
    print("pairs  agent   engine        judged                      count")
    for (kind, who, verdict, outcome), count in sorted(table.items()):
        print(f"{kind:<10} {who:<7} {verdict:<13} {outcome:<27} {count}")
    wrong, refuted = AgentOutcome.WRONG_CAUGHT.value, Verdict.REFUTED.value
    accused = sum(
        c for (_, w, v, o), c in table.items() if w == "honest" and o == wrong and v != refuted
    )
    shown = sum(
        c for (_, w, v, o), c in table.items() if w == "honest" and o == wrong and v == refuted
    )
    honest = sum(c for (_, w, _, _), c in table.items() if w == "honest")
    caught = sum(c for (_, w, _, o), c in table.items() if w == "wrong" and o == wrong)
    liars = sum(c for (_, w, _, _), c in table.items() if w == "wrong")
    print(f"false accusations: {accused} of {honest} agents answering the label")
    print(
        f"(and {shown} agents answering an `equivalent*` label caught by a reproduced "
        "difference: the label is wrong there, not the judgement)"
    )
    print(f"catches: {caught} of {liars} wrong agents on different pairs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
