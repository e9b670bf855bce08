"""The agent's view of a shown difference: is it what the pull request says it does?

After a refutation, the agent may read the pull request's title and description, the
function's docstring in both versions, and the distinguishing input with both outcomes,
and say whether the difference *matches* what they state, *contradicts* it, or is left
*unclear* by them. One call, answered through the ``judge_difference`` tool (its input
checked against the tool's schema; prose is never read as the answer).

This is the agent's view and is shown as such: it never changes a verdict, the policy's
outcome or the exit code. Everything from the pull request reaches the model as delimited
data (``prompts.data_block``), never as instructions.
"""

from __future__ import annotations

import ast
import logging
from dataclasses import dataclass

from veribot.checks.agent import prompts
from veribot.checks.agent.llm import LLM, LLMError, Message, ToolSpec
from veribot.checks.agent.tools import validate

log = logging.getLogger(__name__)

TOOL_NAME = "judge_difference"
VIEWS = ("matches", "contradicts", "unclear")
MAX_TEXT_CHARS = 4_000  # of the description, each docstring and each outcome
JUDGE_DIFFERENCE = ToolSpec(
    TOOL_NAME,
    "Say whether the shown difference is what the pull request or the docstring states.",
    {
        "type": "object",
        "properties": {
            "view": {"type": "string", "enum": list(VIEWS)},
            "explanation": {"type": "string", "minLength": 1},
        },
        "required": ["view", "explanation"],
        "additionalProperties": False,
    },
)


@dataclass(frozen=True)
class IntentView:
    """What the agent said of one difference ("" ``view`` when it could not say)."""

    view: str = ""
    explanation: str = ""
    error: str = ""

    def text(self) -> str:
        """One line for a report."""
        if not self.view:
            return f"the agent could not say whether this is meant: {self.error}"
        said = {"matches": "the pull request or docstring describes this change",
                "contradicts": "the pull request or docstring says otherwise",
                "unclear": "the pull request and docstring do not say"}[self.view]
        return f"the agent's view ({self.view}): {said}; {self.explanation}"


@dataclass(frozen=True)
class Difference:
    """What the agent is shown about one refuted function."""

    entry: str
    path: str
    call: str
    before: str  # the before version's outcome, as the report words it
    after: str
    before_source: str
    after_source: str


def ask_view(llm: LLM, pr_text: str, shown: Difference, *, max_tokens: int = 1024,
             temperature: float = 0.0) -> IntentView:
    """One model call; an ``LLMError`` (budget, unavailable, ...) or an answer without a
    valid ``judge_difference`` call becomes ``IntentView.error``."""
    text = prompts.render(
        "intent_user",
        pr=prompts.data_block("pull_request", (pr_text or "(no title or description)")[
            :MAX_TEXT_CHARS]),
        entry=shown.entry,
        path=prompts.data_block("path", shown.path),
        doc_before=prompts.data_block("docstring_before", _docstring(
            shown.before_source, shown.entry)),
        doc_after=prompts.data_block("docstring_after", _docstring(
            shown.after_source, shown.entry)),
        call=prompts.data_block("call", shown.call[:MAX_TEXT_CHARS]),
        before=prompts.data_block("before", shown.before[:MAX_TEXT_CHARS]),
        after=prompts.data_block("after", shown.after[:MAX_TEXT_CHARS]),
    )
    try:
        completion = llm.complete(
            prompts.load("intent_system"), [Message.user(text)], [JUDGE_DIFFERENCE],
            max_tokens=max_tokens, temperature=temperature, tool_choice=TOOL_NAME,
        )
    except LLMError as error:
        log.info("the agent's view of %s: %s", shown.entry, error)
        return IntentView(error=f"{type(error).__name__}: {error}")
    calls = [u for u in completion.tool_uses if u.name == TOOL_NAME]
    if completion.cut_off or completion.refused or len(calls) != 1:
        return IntentView(error=f"no single {TOOL_NAME} call (stop: {completion.stop_reason})")
    problems = validate(JUDGE_DIFFERENCE.input_schema, dict(calls[0].input))
    if problems:
        return IntentView(error="an invalid answer: " + "; ".join(problems[:3]))
    raw = calls[0].input
    return IntentView(str(raw["view"]), " ".join(str(raw["explanation"]).split())[:600])


def _docstring(source: str, entry: str) -> str:
    """The docstring of ``entry`` (``Class.method``) in ``source``, or a note of its
    absence."""
    try:
        scope: list[ast.stmt] = ast.parse(source).body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return "(the module does not parse)"
    node: ast.AST | None = None
    for part in entry.split("."):
        node = next((n for n in scope if isinstance(
            n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) and n.name == part),
            None)
        if node is None:
            return "(not found)"
        scope = node.body
    doc = ast.get_docstring(node) if isinstance(
        node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) else None
    return (doc or "(none)")[:MAX_TEXT_CHARS]
