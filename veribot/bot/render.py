"""Render a review report as text, JSON, Markdown or SARIF 2.1.0.

- ``text``: one line per unit (verdict, qualified name, reason, and for a refutation the
  input and both behaviours); a ``rich`` table when shown on a terminal.
- ``json``: the document described by ``schemas/report.schema.json`` (``version`` field).
- ``markdown``: what a pull-request comment shows.
- ``sarif``: SARIF 2.1.0 for GitHub code scanning. Verified units are not results;
  refuted units are errors, undecided changed functions warnings, and units with no earlier
  version (added, renamed, outside functions) notes. Deleted units have no place in the
  head revision and are left out of SARIF (they stay in every other format). When the
  agent was asked, each result's property bag holds its answer, the judgement and its
  claims with their statuses (``veribot/agent``); the run's holds the model and its usage,
  or why the agent was not asked.

Every function returns a string; printing is the command line's business.

Text that comes from the code under review or from the model (a ``__repr__``, a file name,
an agent's answer) is made inert before it reaches Markdown: :func:`md_text` for prose (no
HTML, link, mention, issue reference or formatting), :func:`md_code` for an inline code
span and :func:`md_fence` for a code block, each fenced by more backticks than any run
inside, so nothing can close them early.

What goes to GitHub must fit GitHub's limits, counted in bytes of UTF-8 (a check run's
summary and text hold 65,535 bytes, a comment 65,536 characters): :func:`clip_bytes` cuts a
text and says so, and :func:`render_markdown` with ``max_bytes`` lists the most important
units first and ends with how many more there are and where to find them.
"""

from __future__ import annotations

import hashlib
import html
import io
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

import veribot
from veribot.bot.intent import Intent, IntentFinding, intents
from veribot.bot.review import Report, UnitResult
from veribot.bot.safetyreview import answer_text
from veribot.bot.safetyreview import as_json as safety_json
from veribot.checks.agent.llm import UsageReport
from veribot.checks.agent.verdict import AgentFinding, AgentOutcome, Status
from veribot.checks.project.units import UnitKind, is_test_path
from veribot.checks.verdict import Counterexample, Reason, Verdict

FORMATS = ("text", "json", "markdown", "sarif")
JSON_FORMAT_VERSION = "1.0"
SARIF_SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
SCHEMA_DIR = Path(__file__).parent / "schemas"
SUMMARY_MARKER = "<!-- veribot:summary -->"

# GitHub's limits. A check run's output.summary and output.text hold 65,535 bytes; a comment
# body 65,536 characters, which 65,535 bytes always fit. An annotation's title holds 255
# characters and its message 64 KiB.
GITHUB_TEXT_MAX_BYTES = 65_535
ANNOTATION_TITLE_MAX_CHARS = 255
ANNOTATION_MESSAGE_MAX_BYTES = 64 * 1024
CUT_NOTE = "\n\n… (cut to GitHub's size limit)"
# One unit's share of a summary: a huge value must not crowd the other units out.
CELL_MAX_CHARS = 600
TEXT_VALUE_CHARS = 2000  # a behaviour on a line of the text report
UNDECIDED_CELL_CHARS = 200  # an undecided unit's reason, in its folded table
SUMMARY_NAMES = 5  # names listed in a summary line before "and N more"
DETAIL_MAX_BYTES = 4096

_VERDICT_STYLE = {
    Verdict.VERIFIED: "bold green",
    Verdict.REFUTED: "bold red",
    Verdict.INCONCLUSIVE: "yellow",
}
# A behaviour change a test of the change shows is intended: not the red of a regression.
_INTENT_ICON = {Intent.TESTED: "☑️", Intent.INTERNAL: "☑️", Intent.UNTESTED: "❌",
                Intent.REFACTORING: "❌"}
_VERDICT_ICON = {
    Verdict.VERIFIED: "✅",
    Verdict.REFUTED: "❌",
    Verdict.INCONCLUSIVE: "❔",
}

# What each reason code means, for people (SARIF rule descriptions, Markdown legend).
REASON_TEXT: dict[str, str] = {
    Reason.PROOF: "Proven equivalent for every input in the stated domain.",
    Reason.COUNTEREXAMPLE: "An input on which the two versions, really executed, behave "
    "differently.",
    Reason.TIMEOUT: "The time budget ran out before a decision.",
    Reason.SOLVER_UNKNOWN: "The solver answered 'unknown'.",
    Reason.LOOP_BOUND: "Equal up to the loop unrolling bound only, which is not a proof.",
    Reason.RECURSION_BOUND: "Equal up to the recursion/inlining depth only.",
    Reason.UNSUPPORTED: "The code uses a construct the prover does not model.",
    Reason.UNKNOWN_TYPE: "A parameter's type is missing or not one the prover can use.",
    Reason.PARSE_ERROR: "A version of the file does not parse.",
    Reason.NOT_FOUND: "The function was not found in one of the versions.",
    Reason.NOT_REPRODUCED: "A candidate difference did not reproduce when executed.",
    Reason.NO_DIFFERENCE_FOUND: "No difference was found, but no proof either.",
    Reason.ADDED: "A new function or file: there is no earlier version to compare with.",
    Reason.DELETED: "A function or file that was removed.",
    Reason.RENAMED: "Renamed with its code unchanged: callers change too, not compared.",
    Reason.BINARY: "The file content is binary.",
    Reason.NOT_A_FUNCTION: "Code outside functions (imports, constants, class attributes) "
    "changed; it is not compared.",
    Reason.BUDGET: "The review's budget was spent before this unit.",
    Reason.INTERNAL_ERROR: "veribot itself failed on this unit; the rest of the review ran.",
    Reason.NONDETERMINISTIC: "The versions differed, but a version behaves differently from "
    "run to run on the same input (random numbers, the clock, the environment, ...).",
    Reason.SANDBOX_REFUSED: "The versions differed, but the sandbox refused an operation "
    "(a write outside its directory, a socket, a process or thread), so the difference "
    "may be the sandbox's.",
    Reason.SANDBOX_LIMIT: "The versions differed, but only by hitting a limit of the sandbox "
    "(memory, file size, or a call still running at its timer) that a normal machine may "
    "not have.",
}


def render(
    report: Report, fmt: str, *, terminal: bool = False, color: bool = True, width: int = 100
) -> str:
    """Render ``report`` in ``fmt`` (one of :data:`FORMATS`).

    ``terminal``: the text goes to a terminal (a table; ``color`` unless NO_COLOR).
    """
    renderers: dict[str, Callable[[Report], str]] = {
        "text": lambda r: render_text(r, terminal=terminal, color=color, width=width),
        "json": lambda r: json.dumps(to_json(r), indent=2, ensure_ascii=False) + "\n",
        "markdown": render_markdown,
        "sarif": lambda r: json.dumps(to_sarif(r), indent=2, ensure_ascii=False) + "\n",
    }
    if fmt not in renderers:
        raise ValueError(f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}")
    return renderers[fmt](report)


def reason_base(reason: str) -> str:
    """``unsupported:while-else`` -> ``unsupported``."""
    return reason.split(":", 1)[0]


def describe_call(entry: str, cex: Counterexample) -> str:
    """``f(3, k=[1])``: the function applied to the counterexample's arguments (after the
    calls made first, when state kept between calls is what differs); a method on the
    object it was called on, ``Point(3, 'a').move(2)``; a constructor as ``Point(3)``."""
    owner, _, name = entry.rpartition(".")
    if name == "__init__" and owner:
        return cex.call(owner)
    return cex.call(name)


def explain(item: UnitResult, width: int = CELL_MAX_CHARS // 3) -> str:
    """The sentence after the reason: the detail, and for a refutation input and behaviours
    (two long behaviours from where they part, ``width`` characters each)."""
    r = item.result
    cex = r.counterexample
    if cex is None:
        return r.detail
    before, after = differing(cex.before.describe(), cex.after.describe(), width)
    text = f"on {describe_call(item.unit.entry, cex)}: before {before}, after {after}"
    if cex.difference and cex.before.describe() == cex.after.describe():
        # Same result, so the difference is elsewhere (arguments left changed, timing).
        text += f" ({cex.difference})"
    return text


def differing(a: str, b: str, width: int) -> tuple[str, str]:
    """``a`` and ``b`` whole when each fits ``width`` characters; else each from a little
    before where they part (two long lists cut at the same prefix would show nothing)."""
    if len(a) <= width and len(b) <= width:
        return a, b
    common = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y),
                  min(len(a), len(b)))
    start = max(0, min(common - width // 4, max(len(a), len(b)) - width))
    start = 0 if start < 8 else start

    def view(text: str) -> str:
        cut = text[start:start + width]
        return ("…" if start else "") + cut + ("…" if start + width < len(text) else "")

    return view(a), view(b)


def summary_line(report: Report) -> str:
    """``5 units: 1 verified, 1 refuted, 3 inconclusive (2 not compared); ...``."""
    n = len(report.items)
    not_compared = sum(1 for i in report.items if not i.compared)
    parts = [
        f"{n} unit{'s' if n != 1 else ''}: "
        f"{report.count(Verdict.VERIFIED)} verified, "
        f"{report.count(Verdict.REFUTED)} refuted, "
        f"{report.count(Verdict.INCONCLUSIVE)} inconclusive"
        + (f" ({not_compared} not compared)" if not_compared else "")
    ]
    if report.unchanged:
        n = report.unchanged
        parts.append(f"{n} unchanged function{'s' if n != 1 else ''} in changed files")
    if report.skipped:
        n = len(report.skipped)
        parts.append(f"{n} file{'s' if n != 1 else ''} skipped (not Python, or left out)")
    return "; ".join(parts)


# --- inert Markdown for text from the code or the model --------------------------------

_WORD_JOINER = "\u2060"  # invisible; breaks what GitHub would turn into a mention or link
# What can open a link, an image, a code span or a table cell, and the escape itself.
_MD_PUNCTUATION = re.compile(r"([\\`\[\]|])")
_LINKABLE = re.compile(r"(@|#(?=\w)|://|(?i:www)\.)")


def md_text(text: str) -> str:
    """``text`` as inert Markdown prose on one line: HTML escaped, what opens a link, an
    image, a code span or a table cell escaped, and a word joiner after ``@``, ``#``, the
    ``:`` of ``://`` and ``www``, so GitHub makes no mention, reference or link of it."""
    flat = " ".join(text.splitlines())
    escaped = _MD_PUNCTUATION.sub(r"\\\1", html.escape(flat, quote=False))
    return _LINKABLE.sub(lambda m: _join(m.group(1)), escaped)


def html_text(text: str) -> str:
    """``text`` as inert HTML text (inside a raw HTML element such as ``<summary>``)."""
    flat = " ".join(text.splitlines())
    return _LINKABLE.sub(lambda m: _join(m.group(1)), html.escape(flat, quote=False))


def _join(found: str) -> str:
    if found == "://":
        return ":" + _WORD_JOINER + "//"
    if found.endswith("."):
        return found[:-1] + _WORD_JOINER + "."
    return found + _WORD_JOINER


def _fence_for(text: str, shortest: int) -> str:
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    return "`" * max(shortest, longest + 1)


def md_code(text: str, *, in_table: bool = False) -> str:
    """``text`` as an inline code span on one line, whatever backticks it holds
    (``in_table``: its pipes escaped, as a table cell needs)."""
    flat = " ".join(text.splitlines()) or " "
    fence = _fence_for(flat, 1)
    pad = " " if flat[0] in "` " or flat[-1] in "` " else ""
    span = f"{fence}{pad}{flat}{pad}{fence}"
    return span.replace("|", "\\|") if in_table else span


def md_fence(text: str, lang: str = "") -> str:
    """``text`` as a fenced code block whose fence no line of it can close."""
    fence = _fence_for(text, 3)
    return f"{fence}{lang}\n{text}\n{fence}"


# --- GitHub's size limits --------------------------------------------------------------


def utf8_size(text: str) -> int:
    """The size of ``text`` in bytes of UTF-8 (what GitHub counts)."""
    return len(text.encode("utf-8"))


def clip_bytes(text: str, max_bytes: int, note: str = CUT_NOTE) -> str:
    """``text`` if it fits ``max_bytes`` of UTF-8; else its start and ``note``, within them.

    Never cuts inside a character; ends at a line break when one is near the cut.
    """
    data = text.encode("utf-8")
    if len(data) <= max_bytes:
        return text
    room = max_bytes - utf8_size(note)
    if room <= 0:
        return note.encode("utf-8")[:max_bytes].decode("utf-8", errors="ignore")
    kept = data[:room].decode("utf-8", errors="ignore")
    line_end = kept.rfind("\n")
    if line_end >= len(kept) * 3 // 4:
        kept = kept[:line_end]
    return kept + note


def clip_chars(text: str, max_chars: int) -> str:
    """``text`` cut to ``max_chars`` characters, the last one an ellipsis when cut."""
    return text if len(text) <= max_chars else text[: max_chars - 1] + "…"


def fit_blocks(
    blocks: list[str], max_bytes: int, more: Callable[[int], str], sep: str = "\n"
) -> tuple[list[str], int]:
    """The first ``blocks`` that fit ``max_bytes`` (joined by ``sep``), then ``more(n)``
    for the ``n`` left out, if any, and how many blocks were kept; the whole stays within
    ``max_bytes`` when ``more`` is short."""
    total = sum(utf8_size(b) + utf8_size(sep) for b in blocks)
    if total <= max_bytes:
        return list(blocks), len(blocks)
    kept: list[str] = []
    used = utf8_size(more(len(blocks))) + utf8_size(sep)
    for block in blocks:
        size = utf8_size(block) + utf8_size(sep)
        if used + size > max_bytes:
            break
        kept.append(block)
        used += size
    return [*kept, more(len(blocks) - len(kept))], len(kept)


# --- text -----------------------------------------------------------------------------


def _range(report: Report) -> str:
    """``main (1a2b3c4d5e)..HEAD (5e6f...)`` for git, ``before.py..after.py`` for files."""
    if report.root is None:
        return f"{report.base_label}..{report.head_label}"
    return f"{report.base_label} ({report.base[:10]})..{report.head_label} ({report.head[:10]})"


def render_text(
    report: Report, *, terminal: bool = False, color: bool = True, width: int = 100
) -> str:
    """One line per unit; a ``rich`` table when ``terminal``."""
    if terminal:
        return _render_rich(report, width, color)
    lines = [f"veribot review {_range(report)}"]
    if not report.items:
        lines.append("no changed Python functions")
    found = intents(report, report.declared)
    for n, item in enumerate(report.items):
        r = item.result
        lines.append(
            f"{r.verdict.value:<13} {item.unit.qualname}  [{r.reason}] "
            f"{explain(item, TEXT_VALUE_CHARS)}".rstrip()
        )
        if n in found:
            lines.append(f"{'':<14}{found[n].intent.value}: {found[n].why}")
        if item.view is not None:
            lines.append(f"{'':<14}{item.view.text()}")
        if item.safety is not None:
            lines.append(f"{'':<14}{item.safety.text()}")
            lines.extend(f"{'':<14}{line}" for line in item.safety.warning_lines())
        if item.examples:
            lines.append(f"{'':<14}{_examples_line(item)}")
        if report.agent_model:
            lines.extend(f"{'':<14}{line}" for line in agent_lines(item.agent))
    lines.extend(f"skipped       {u.path}  {u.detail}" for u in report.skipped)
    lines.extend(f"test run      {r.test.nodeid}  before: {r.before.describe()}; "
                 f"after: {r.after.describe()}" for r in report.tests)
    if report.tests_note:
        lines.append(f"test run      {report.tests_note}")
    if report.safety_note:
        lines.append(f"safety        {report.safety_note}")
    lines.append(f"{summary_line(report)}; {agent_line(report)}")
    return "\n".join(lines) + "\n"


# --- the agent ------------------------------------------------------------------------


def usage_text(usage: UsageReport, rounds: int | None = None) -> str:
    """``3 LLM calls, 1200+300 tokens, 2 cache hits, 2 formalizer rounds``."""
    text = (
        f"{usage.calls} LLM call{'s' if usage.calls != 1 else ''}, "
        f"{usage.input_tokens}+{usage.output_tokens} tokens, {usage.cache_hits} cache hits"
    )
    if rounds is not None:
        text += f", {rounds} formalizer round{'s' if rounds != 1 else ''}"
    return text


def agent_lines(finding: AgentFinding | None) -> list[str]:
    """What the agent answered about one unit, each claim with its status, and the cost."""
    if finding is None:
        return []
    if finding.outcome in (AgentOutcome.NOT_ASKED, AgentOutcome.UNAVAILABLE):
        return [f"agent: {finding.summary}"]
    answer = finding.answer.value if finding.answer is not None else "no answer"
    out = [f"agent: {finding.outcome.value}: {finding.summary}", f"  agent answered: {answer}"]
    for c in finding.claims:
        where = f" (line {c.line})" if c.line is not None else ""
        why = f": {c.why}" if c.why else ""
        out.append(f"  claim {c.status.value:<12} {c.fact}{where}{why}")
    out.extend(f"  left out: {fact}" for fact in finding.omitted)
    if finding.condition is not None:
        held = {True: "holds", False: "does not hold", None: "undecided"}[finding.condition.holds]
        if finding.condition.relative_to:
            held = "holds only relative to changed code"
        out.append(f"  relative check (same calls, same order): {held}: {finding.condition.detail}")
    out.extend(f"  proof assumes: {a}" for a in finding.assumptions)
    out.append(f"  cost: {usage_text(finding.usage, finding.formalizer_rounds)}")
    return out


def agent_line(report: Report) -> str:
    """The review's agent line: the model and its total usage, or that it was not asked."""
    if not report.agent_model:
        return f"agent not asked ({report.agent_reason or 'no model configured; --llm'})"
    usage = report.agent_usage or UsageReport()
    text = f"agent {report.agent_model}: {usage_text(usage)}"
    if usage.refused:
        text += (
            f"; {usage.refused} call{'s' if usage.refused != 1 else ''} refused by the LLM "
            "budget (those units were not fully asked)"
        )
    return text


def _finding_json(finding: AgentFinding | None) -> dict[str, Any] | None:
    if finding is None:
        return None
    cond = finding.condition
    return {
        "outcome": finding.outcome.value,
        "summary": finding.summary,
        "answer": finding.answer.value if finding.answer is not None else None,
        "explanation": finding.explanation,
        "claims": [
            {"fact": c.fact, "status": c.status.value, "line": c.line, "why": c.why}
            for c in finding.claims
        ],
        "condition": None
        if cond is None
        else {True: "holds", False: "does not hold", None: "undecided"}[cond.holds]
        + (f": {cond.detail}" if cond.detail else ""),
        "omitted": list(finding.omitted),
        "assumptions": list(finding.assumptions),
        "formalizer_rounds": finding.formalizer_rounds,
        "formalizer_complete": finding.formalizer_complete,
        "steps": finding.steps,
        "tool_calls": finding.tool_calls,
        "usage": finding.usage.as_dict(),
        "error": finding.error,
    }


def _render_rich(report: Report, width: int, color: bool) -> str:
    buf = io.StringIO()
    console = Console(
        file=buf, force_terminal=True, width=width, highlight=False, no_color=not color
    )
    table = Table(title=f"veribot review {_range(report)}")
    table.add_column("verdict", no_wrap=True)
    table.add_column("unit", overflow="fold")
    table.add_column("reason", no_wrap=True)
    table.add_column("details", overflow="fold")
    for item in report.items:
        r = item.result
        table.add_row(
            Text(r.verdict.value, style=_VERDICT_STYLE[r.verdict]),
            item.unit.qualname,
            r.reason,
            explain(item, TEXT_VALUE_CHARS),
        )
    for u in report.skipped:
        table.add_row(Text("skipped", style="dim"), u.path, "", u.detail)
    console.print(table)
    console.print(summary_line(report))
    return buf.getvalue()


# --- JSON -----------------------------------------------------------------------------


def to_json(report: Report) -> dict[str, Any]:
    """The report as a JSON document (see ``schemas/report.schema.json``)."""
    found = intents(report, report.declared)
    return {
        "version": JSON_FORMAT_VERSION,
        "tool": {"name": "veribot", "version": veribot.__version__},
        "base": {"rev": report.base, "label": report.base_label},
        "head": {"rev": report.head, "label": report.head_label},
        "root": str(report.root) if report.root else None,
        "summary": {
            "units": len(report.items),
            "verified": report.count(Verdict.VERIFIED),
            "refuted": report.count(Verdict.REFUTED),
            "inconclusive": report.count(Verdict.INCONCLUSIVE),
            "not_compared": sum(1 for i in report.items if not i.compared),
            "unchanged_functions": report.unchanged,
            "skipped_files": len(report.skipped),
            "elapsed_s": round(report.elapsed_s, 3),
        },
        "declared": report.declared or None,
        "units": [_unit_json(i, found.get(n)) for n, i in enumerate(report.items)],
        "tests_run": [{
            "test": r.test.nodeid, "added": r.test.added, "names": sorted(r.test.names),
            "before": {"kind": r.before.kind, "detail": r.before.detail},
            "after": {"kind": r.after.kind, "detail": r.after.detail},
            "observes": r.observes} for r in report.tests],
        "tests_note": report.tests_note or None,
        "safety_note": report.safety_note or None,
        "agent": None
        if not report.agent_model
        else {
            "model": report.agent_model,
            "usage": report.agent_usage.as_dict() if report.agent_usage is not None else None,
        },
        "skipped": [{"path": u.path, "detail": u.detail} for u in report.skipped],
    }


def _lines(lines: tuple[int, int] | None) -> list[int] | None:
    return list(lines) if lines else None


def _unit_json(item: UnitResult, intent: IntentFinding | None = None) -> dict[str, Any]:
    u, r = item.unit, item.result
    cex = r.counterexample
    return {
        "intent": None if intent is None else {
            "kind": intent.intent.value, "why": intent.why, "test": intent.test or None},
        "agent_view": None if item.view is None else {
            "view": item.view.view or None, "explanation": item.view.explanation,
            "error": item.view.error},
        "qualname": u.qualname,
        "path": u.path,
        "entry": u.entry,
        "kind": u.kind.value,
        "level": u.level.value,
        "before_path": u.before_path,
        "after_path": u.after_path,
        "before_entry": u.before_entry,
        "before_lines": _lines(u.before_lines),
        "after_lines": _lines(u.after_lines),
        "verdict": r.verdict.value,
        "reason": r.reason,
        "detail": r.detail,
        "compared": item.compared,
        "method": r.method,
        "assumptions": list(r.assumptions),
        "notes": list(r.notes),
        "line": r.line,
        "time_s": round(r.time_s, 3),
        "agent": _finding_json(item.agent),
        "safety": safety_json(item.safety),
        "examples": [{"source": e.source, "want": e.want,
                      "after": {"kind": e.after[0], "got": e.after[1]},
                      "before": None if e.before is None else {
                          "kind": e.before[0], "got": e.before[1]}} for e in item.examples],
        "counterexample": None
        if cex is None
        else {
            "call": describe_call(u.entry, cex),
            "args": list(cex.args),
            # The object a method was called on, as the constructor call that built it.
            "receiver": cex.receiver or None,
            "prior": [list(c) for c in cex.prior],
            "before": {"kind": cex.before.kind.value, "text": cex.before.text},
            "after": {"kind": cex.after.kind.value, "text": cex.after.text},
            "found_by": cex.found_by,
            "difference": cex.difference,
            "hash_seed": cex.hash_seed,
        },
    }


# --- Markdown -------------------------------------------------------------------------


_SEVERITY = {Verdict.REFUTED: 0, Verdict.INCONCLUSIVE: 1, Verdict.VERIFIED: 3}


def _by_importance(item: UnitResult) -> int:
    """Refuted first, then undecided changed functions, then what was not compared."""
    rank = _SEVERITY[item.result.verdict]
    return rank + 1 if rank == 1 and not item.compared else rank


def render_markdown(
    report: Report, *, max_bytes: int | None = None, rest: str = "the full report"
) -> str:
    """The pull-request summary comment (with a hidden marker to find it again).

    Decided units come first, as a table with each refutation's input; the changed
    functions left undecided follow, folded; what was not compared (added, deleted,
    renamed, outside functions) and the changed tests are summarised in a line each. With
    ``max_bytes``, the text stays within that many bytes of UTF-8: when every unit does not
    fit, the most important are listed first and a line says how many more there are and
    that they are in ``rest`` (Markdown, e.g. a link to the check run).
    """
    head = [
        SUMMARY_MARKER,
        f"### veribot: {report.count(Verdict.REFUTED)} refuted, "
        f"{report.count(Verdict.VERIFIED)} verified, "
        f"{report.count(Verdict.INCONCLUSIVE)} inconclusive",
        "",
        summary_line(report) + ".",
        "",
    ]
    tail = [md_text(agent_line(report)) + ".", ""]
    if report.skipped:
        skipped = "Not checked: " + ", ".join(md_code(u.path) for u in report.skipped) + "."
        tail += [clip_bytes(skipped, 4096), ""]
    tail.append(
        "<sub>verified = proven for every input of the stated types; refuted = an input "
        "that really behaves differently; inconclusive = neither, with the reason.</sub>"
    )
    tests = [i for i in report.items if is_test_path(i.unit.path)]
    code = [i for i in report.items if not is_test_path(i.unit.path)]
    decided = sorted((i for i in code if i.result.verdict is not Verdict.INCONCLUSIVE),
                     key=_by_importance)
    undecided = [i for i in code if i.result.verdict is Verdict.INCONCLUSIVE and i.compared]
    others = [i for i in code if not i.compared]
    summaries = [line for line in (_not_compared_line(others), _tests_line(tests, report))
                 if line]
    folded = _undecided_block(undecided)
    meant = {id(report.items[n]): f for n, f in intents(report, report.declared).items()}
    safety = _safety_block(code, note=report.safety_note) + _examples_block(code)
    whole = "\n".join([*head, *_unit_blocks(report, decided, meant), *safety,
                       *_agent_blocks(report, undecided + others),
                       *folded, *summaries, *([""] if summaries else []), *tail]) + "\n"
    if max_bytes is None or utf8_size(whole) <= max_bytes:
        return whole
    # Too long: the decided units' rows first, as many as fit, then their details; the
    # undecided ones only counted, by reason.
    lines = [*summaries, _undecided_count(undecided), ""]
    safety = (_safety_block(code, max_bytes // 4, note=report.safety_note)
              + _examples_block(code, max_bytes // 8))
    lines = [*safety, *lines]
    room = max_bytes - utf8_size("\n".join([*head, *lines, *tail]) + "\n") - 512
    table_header = "| | unit | verdict | reason | details |\n|---|---|---|---|---|"
    rows, listed = fit_blocks(
        [_table_row(i, meant.get(id(i))) for i in decided],
        room * 2 // 3 - utf8_size(table_header),
        lambda n: f"\n… {n} more decided unit{'s' if n != 1 else ''}: see {rest}.",
    )
    shown = decided[:listed]
    body = [table_header, *rows, ""] if decided else []
    used = utf8_size("\n".join(body))
    details, _ = fit_blocks(
        _detail_blocks(report, shown, meant) + _agent_blocks(report, undecided + others),
        room - used,
        lambda n: f"… the details of {n} more unit{'s' if n != 1 else ''}: see {rest}.\n",
    )
    folded = _undecided_block(undecided, max(0, room - used - utf8_size("\n".join(details))),
                              rest)
    return "\n".join([*head, *body, *details, *folded, *lines, *tail]) + "\n"


_SAFETY_ICON = {"unsafe": "💥", "safe": "✅", "inconclusive": "❔"}
_SAFETY_ORDER = {"unsafe": 0, "safe": 1, "inconclusive": 2}


def _safety_block(items: list[UnitResult], max_bytes: int | None = None,
                  note: str = "") -> list[str]:
    """The crash-safety verdicts: a row per unsafe or safe function (unsafe first, an
    added crash first of all), the inconclusive ones counted by reason; then the type
    checker's warnings in those functions, each with its answer."""
    asked = sorted((i for i in items if i.safety is not None), key=_safety_rank)
    if not asked:
        return []
    warned = [(i, w, a) for i in asked if i.safety is not None for w, a in i.safety.warnings]
    counts = {v: sum(1 for i in asked if i.safety and i.safety.result.verdict == v)
              for v in ("unsafe", "safe", "inconclusive")}
    out = [f"**Crash safety** (added functions, and changed ones not proven to behave as "
           f"before): {counts['unsafe']} unsafe, {counts['safe']} safe, "
           f"{counts['inconclusive']} inconclusive.", ""]
    rows = []
    for item in asked:
        finding = item.safety
        assert finding is not None
        r = finding.result
        if r.verdict == "inconclusive":
            continue
        verdict = f"**{r.verdict}**"
        detail = r.detail
        if finding.added_crash is True:
            verdict += " (an added crash)"
            detail += f"; before the change it {finding.before}"
        elif finding.added_crash is False:
            verdict += " (there before)"
        if finding.callers_safe:
            verdict += " (its callers never reach it)"
            detail += ("; its callers here, each proven safe with it: "
                       + ", ".join(f"`{c}`" for c in finding.callers_safe))
        rows.append(f"| {_SAFETY_ICON[r.verdict]} | {md_code(item.unit.qualname, in_table=True)}"
                    f" | {verdict} | {md_text(clip_chars(detail, CELL_MAX_CHARS))} |")
    if rows:
        header = "| | function | safety | details |\n|---|---|---|---|"
        shown, _ = fit_blocks(rows, (max_bytes or 10**9) - utf8_size(header) - 256,
                              lambda n: f"\n… {n} more: see the full report.")
        out += [header, *shown, ""]
    undecided = [i.safety.result.reason for i in asked
                 if i.safety is not None and i.safety.result.verdict == "inconclusive"]
    if undecided:
        by_reason: dict[str, int] = {}
        for reason in undecided:
            by_reason[reason] = by_reason.get(reason, 0) + 1
        out += [clip_bytes("Crash safety not decided: " + ", ".join(
            f"{n} {md_code(reason)}" for reason, n in sorted(
                by_reason.items(), key=lambda kv: -kv[1])) + ".", 2048), ""]
    if warned:
        real = sum(1 for _, _, a in warned if a.verdict == "unsafe")
        alarms = sum(1 for _, _, a in warned if a.verdict == "safe")
        out += [f"**Type-checker warnings** (mypy) in these functions: {len(warned)}: "
                f"{real} real, {alarms} false alarm{'s' if alarms != 1 else ''} proven safe, "
                f"{len(warned) - real - alarms} not decided.", ""]
        shown, _ = fit_blocks(
            [f"- {md_code(i.unit.qualname)} line {w.line} {md_code(w.code)}: "
             f"{md_text(clip_chars(w.message, 160))}: **{md_text(answer_text(a)[:240])}**"
             for i, w, a in warned],
            (max_bytes or 10**9) // 2, lambda n: f"- … {n} more: see the full report.")
        out += [*shown, ""]
    if note:
        out += [md_text(note) + ".", ""]
    return out


def _examples_line(item: UnitResult) -> str:
    """The docstring examples of one unit: how many ran, and each that fails."""
    runs = item.examples
    failing = [e for e in runs if e.fails]
    head = (f"docstring examples: {len(runs)} run, {len(failing)} fail"
            f"{'s' if len(failing) == 1 else ''} on the head revision")
    return head + "".join(f"; {e.text()}" for e in failing[:3])


def _examples_block(items: list[UnitResult], max_bytes: int | None = None) -> list[str]:
    """The docstring examples that fail on the head revision, a line each."""
    rows = [f"- {md_code(i.unit.qualname)}: {md_text(clip_chars(e.text(), 400))}"
            for i in items for e in i.examples if e.fails]
    if not rows:
        return []
    ran = sum(len(i.examples) for i in items)
    shown, _ = fit_blocks(rows, max_bytes or 10**9,
                          lambda n: f"- … {n} more: see the full report.")
    return [f"**Docstring examples** that fail on the head revision: {len(rows)} of {ran} "
            "run (the head docstring's `>>>` lines, beside each revision's code):", "",
            *shown, ""]


def _safety_rank(item: UnitResult) -> tuple[int, bool]:
    found = item.safety
    if found is None:
        return (len(_SAFETY_ORDER), True)
    return (_SAFETY_ORDER[found.result.verdict], found.added_crash is not True)


def _undecided_block(items: list[UnitResult], max_bytes: int | None = None,
                     rest: str = "the full report") -> list[str]:
    """The changed functions left undecided, folded: a reviewer opens them if they wish.
    With ``max_bytes``, the rows that fit, then how many more there are and where."""
    if not items:
        return []
    n = len(items)
    rows = [f"| {md_code(i.unit.qualname, in_table=True)} | "
            f"{md_code(i.result.reason, in_table=True)} | "
            f"{md_text(clip_chars(i.result.detail, UNDECIDED_CELL_CHARS))} |" for i in items]
    opening = [f"<details><summary>{n} changed function{'s' if n != 1 else ''} left "
               f"undecided ({html_text(_by_reason(items))})</summary>", "",
               "| unit | reason | why |", "|---|---|---|"]
    closing = ["", "</details>", ""]
    left = ""
    if max_bytes is not None:
        room = max_bytes - utf8_size("\n".join([*opening, *closing])) - 200
        fitted, kept = fit_blocks(rows, room, lambda k: "")
        if kept < n:
            rows = fitted[:kept]
            left = f"… {n - kept} more undecided unit{'s' if n - kept != 1 else ''}: see {rest}."
    return [*opening, *rows, *(["", left] if left else []), *closing]


def _undecided_count(items: list[UnitResult]) -> str:
    if not items:
        return ""
    n = len(items)
    return (f"{n} changed function{'s' if n != 1 else ''} left undecided: "
            f"{md_text(_by_reason(items))}.")


def _by_reason(items: list[UnitResult]) -> str:
    """``3 timeout, 1 unknown-type``: how many of ``items`` have each reason (its base)."""
    counts: dict[str, int] = {}
    for i in items:
        counts[reason_base(i.result.reason)] = counts.get(reason_base(i.result.reason), 0) + 1
    return ", ".join(f"{n} {reason}" for reason, n in sorted(counts.items(), key=lambda c: -c[1]))


_NOT_COMPARED_WORDS = {Reason.ADDED: "added", Reason.DELETED: "deleted",
                       Reason.RENAMED: "renamed", Reason.NOT_A_FUNCTION: "outside functions"}


def _not_compared_line(items: list[UnitResult]) -> str:
    """One line for the units that had no two versions to compare, grouped by why."""
    if not items:
        return ""
    groups: dict[str, list[str]] = {}
    for i in items:
        word = _NOT_COMPARED_WORDS.get(reason_base(i.result.reason), reason_base(i.result.reason))
        groups.setdefault(word, []).append(i.unit.qualname)
    parts = []
    for word, names in groups.items():
        shown = ", ".join(md_code(n) for n in names[:SUMMARY_NAMES])
        more = f" and {len(names) - SUMMARY_NAMES} more" if len(names) > SUMMARY_NAMES else ""
        parts.append(f"{len(names)} {word} ({shown}{more})")
    return clip_bytes("Not compared: " + "; ".join(parts) + ".", 4096)


def _tests_line(items: list[UnitResult], report: Report) -> str:
    """One line for the changed test functions: how many, where, and what became of them
    (their calls of the code are inputs for it, not verdicts of their own), and what the
    ones naming a refuted function did when run on both revisions."""
    runs = _runs_sentence(report)
    if not items:
        return clip_bytes(f"Tests: {runs}", 4096) if runs else ""
    files = list(dict.fromkeys(i.unit.path for i in items))
    shown = ", ".join(md_code(f) for f in files[:SUMMARY_NAMES])
    more = f" and {len(files) - SUMMARY_NAMES} more" if len(files) > SUMMARY_NAMES else ""
    verdicts = ", ".join(f"{n} {v.value}" for v in Verdict
                         if (n := sum(1 for i in items if i.result.verdict is v)))
    n = len(items)
    return clip_bytes(
        f"Tests: {n} test function{'s' if n != 1 else ''} changed in {shown}{more} "
        f"({verdicts}); their calls of the changed code were tried as inputs, and each is in "
        f"the full report.{' ' + runs if runs else ''}", 4096)


def _runs_sentence(report: Report) -> str:
    """What the changed tests naming a refuted function did on each revision, counted."""
    if not report.tests:
        return md_text(report.tests_note + ".") if report.tests_note else ""
    groups: dict[tuple[str, str], list[str]] = {}
    for r in report.tests:
        key = (("fails before and passes after", "fail before and pass after") if r.observes
               else ("passes on both revisions", "pass on both revisions")
               if r.before.kind == r.after.kind == "passed"
               else ("could not run here", "could not run here")
               if {r.before.kind, r.after.kind}.isdisjoint({"passed", "failed"})
               else (f"{r.before.kind} before, {r.after.kind} after",) * 2)
        groups.setdefault(key, []).append(r.test.nodeid)
    parts = []
    for (one, many), ids in groups.items():
        names = ", ".join(md_code(i) for i in ids[:SUMMARY_NAMES]) + (
            f" and {len(ids) - SUMMARY_NAMES} more" if len(ids) > SUMMARY_NAMES else "")
        parts.append(f"{len(ids)} {one if len(ids) == 1 else many} ({names})")
    n = len(report.tests)
    note = f" ({md_text(report.tests_note)})" if report.tests_note else ""
    return (f"Run on both revisions, the {n} changed test{'s' if n != 1 else ''} naming a "
            f"refuted function: {'; '.join(parts)}{note}.")


def _table_row(item: UnitResult, intent: IntentFinding | None = None) -> str:
    r = item.result
    icon, verdict = _VERDICT_ICON[r.verdict], f"**{r.verdict.value}**"
    if intent is not None:
        icon = _INTENT_ICON[intent.intent]
        verdict += f" ({intent.intent.value})"
    return (
        f"| {icon} | {md_code(item.unit.qualname, in_table=True)} | "
        f"{verdict} | {md_code(r.reason, in_table=True)} | "
        f"{md_text(clip_chars(explain(item), CELL_MAX_CHARS))} |"
    )


def _unit_blocks(report: Report, items: list[UnitResult],
                 meant: dict[int, IntentFinding]) -> list[str]:
    """The table of ``items`` and their details, as lines."""
    out: list[str] = []
    if items:
        out += ["| | unit | verdict | reason | details |", "|---|---|---|---|---|"]
        out += [_table_row(item, meant.get(id(item))) for item in items]
        out.append("")
    return out + _detail_blocks(report, items, meant)


def _detail_blocks(report: Report, items: list[UnitResult],
                   meant: dict[int, IntentFinding]) -> list[str]:
    """A ``<details>`` block (with its trailing blank line) per refutation and agent answer."""
    blocks = []
    for item in items:
        cex = item.result.counterexample
        if cex is None:
            continue
        shown = differing(cex.before.describe(), cex.after.describe(), DETAIL_MAX_BYTES // 3)
        blocks.append(
            "\n".join(
                [
                    f"<details><summary><code>{html.escape(item.unit.qualname)}</code>: "
                    f"a distinguishing input</summary>",
                    "",
                    md_fence(
                        clip_bytes(
                            f"{describe_call(item.unit.entry, cex)}\n"
                            f"# before: {shown[0]}\n"
                            f"# after:  {shown[1]}",
                            DETAIL_MAX_BYTES,
                            "\n# … (cut to keep the summary within GitHub's limits)",
                        ),
                        "python",
                    ),
                    f"Found by {md_text(cex.found_by)}, reproduced by running both versions.",
                    *_intent_lines(meant.get(id(item))),
                    *([] if item.view is None else ["", md_text(item.view.text())]),
                    "</details>",
                    "",
                ]
            )
        )
    return blocks + _agent_blocks(report, items)


def _intent_lines(intent: IntentFinding | None) -> list[str]:
    """What the difference means for the pull request, and for an untested one the test
    that pins the new behaviour, to paste."""
    if intent is None:
        return []
    out = ["", f"**{md_text(intent.intent.value.capitalize())}**: {md_text(intent.why)}."]
    if intent.test:
        out += ["", "If the new behaviour is meant, this test pins it:", "",
                md_fence(clip_bytes(intent.test, DETAIL_MAX_BYTES, "\n# … (cut)"), "python")]
    return out


def _agent_blocks(report: Report, items: list[UnitResult]) -> list[str]:
    """A ``<details>`` block per agent answer about ``items``."""
    blocks = []
    asked = [i for i in items if i.agent is not None and report.agent_model]
    for item in asked:
        lines = agent_lines(item.agent)
        blocks.append(
            "\n".join(
                [
                    f"<details><summary><code>{html.escape(item.unit.qualname)}</code>: "
                    f"{html_text(lines[0])}</summary>",
                    "",
                    *[f"- {md_text(line.strip())}" for line in lines[1:]],
                    "</details>",
                    "",
                ]
            )
        )
    return blocks


# --- SARIF ----------------------------------------------------------------------------


def rule_id(item: UnitResult) -> str:
    """``refuted/counterexample``, ``inconclusive/timeout``: one rule per verdict and reason."""
    return f"{item.result.verdict.value}/{reason_base(item.result.reason)}"


def sarif_level(item: UnitResult) -> str:
    """error for refuted, warning for an undecided change, note for what is not compared."""
    if item.result.verdict is Verdict.REFUTED:
        return "error"
    if item.result.verdict is Verdict.VERIFIED:
        return "none"
    return "warning" if item.compared else "note"


def _sarif_uri(report: Report, path: str) -> tuple[str, str | None]:
    """The artifact URI, relative to the repository root (``%SRCROOT%``) when there is one."""
    if report.root is not None:
        return path, "%SRCROOT%"
    p = Path(path)
    if p.is_absolute():
        return p.as_uri(), None
    return p.as_posix(), None


def to_sarif(report: Report) -> dict[str, Any]:
    """A SARIF 2.1.0 log with one run (see the module docstring for what is included)."""
    items = [
        i
        for i in report.items
        if i.result.verdict is not Verdict.VERIFIED
        and i.unit.kind is not UnitKind.DELETED
        and i.unit.after_path is not None
    ]
    rule_ids = sorted({rule_id(i) for i in items})
    index = {r: n for n, r in enumerate(rule_ids)}
    results = []
    for item in items:
        u = item.unit
        assert u.after_path is not None
        uri, base = _sarif_uri(report, u.after_path)
        artifact: dict[str, Any] = {"uri": uri}
        if base:
            artifact["uriBaseId"] = base
        start, end = u.after_lines or (1, 1)
        rid = rule_id(item)
        results.append(
            {
                "ruleId": rid,
                "ruleIndex": index[rid],
                "level": sarif_level(item),
                "message": {
                    "text": f"{u.qualname}: {item.result.verdict.value} "
                    f"[{item.result.reason}] {explain(item)}".rstrip()
                },
                "locations": [
                    {
                        "physicalLocation": {
                            "artifactLocation": artifact,
                            "region": {"startLine": start, "endLine": max(start, end)},
                        },
                        "logicalLocations": [{"fullyQualifiedName": u.qualname, "kind": "function"}]
                        if u.is_function
                        else [],
                    }
                ],
                "partialFingerprints": {
                    "veribotUnit/v1": hashlib.sha256(f"{u.qualname}|{rid}".encode()).hexdigest()
                },
            }
        )
        if report.agent_model and item.agent is not None:
            results[-1]["properties"] = {"veribot/agent": _agent_properties(item.agent)}
    run: dict[str, Any] = {
        "tool": {
            "driver": {
                "name": "veribot",
                "version": veribot.__version__,
                "semanticVersion": veribot.__version__,
                "rules": [_sarif_rule(r) for r in rule_ids],
            }
        },
        "results": results,
        "columnKind": "unicodeCodePoints",
    }
    if report.root is not None:
        run["originalUriBaseIds"] = {"%SRCROOT%": {"uri": report.root.as_uri() + "/"}}
    run["properties"] = {"veribot/agent": _agent_run_properties(report)}
    return {"$schema": SARIF_SCHEMA_URI, "version": "2.1.0", "runs": [run]}


def _agent_properties(finding: AgentFinding) -> dict[str, Any]:
    """A SARIF result's agent properties: answer, judgement, claim counts and claims."""
    return {
        "outcome": finding.outcome.value,
        "answer": finding.answer.value if finding.answer is not None else None,
        "summary": finding.summary,
        "claimCounts": {status.value: finding.count(status) for status in Status},
        "claims": [
            {"fact": c.fact, "status": c.status.value, "line": c.line, "why": c.why}
            for c in finding.claims
        ],
        "omitted": list(finding.omitted),
    }


def _agent_run_properties(report: Report) -> dict[str, Any]:
    """The run's agent properties: the model and its usage, or why it was not asked."""
    if not report.agent_model:
        return {"asked": False, "summary": agent_line(report)}
    usage = report.agent_usage or UsageReport()
    return {"asked": True, "model": report.agent_model, "usage": usage.as_dict()}


def _sarif_rule(rid: str) -> dict[str, Any]:
    verdict, reason = rid.split("/", 1)
    text = REASON_TEXT.get(reason, f"Reason code {reason}.")
    level = "error" if verdict == Verdict.REFUTED.value else "warning"
    if reason in (Reason.ADDED, Reason.RENAMED, Reason.NOT_A_FUNCTION):
        level = "note"
    return {
        "id": rid,
        "name": "".join(p.capitalize() for p in rid.replace("/", "-").split("-")),
        "shortDescription": {"text": f"{verdict}: {reason}"},
        "fullDescription": {"text": text},
        "help": {"text": f"{text} The verdict is {verdict}."},
        "defaultConfiguration": {"level": level},
        "properties": {"tags": ["equivalence", verdict]},
    }
