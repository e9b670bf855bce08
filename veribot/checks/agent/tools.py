"""The agent's tools: the answer tool, the registry of extra tools, and input validation.

The analyzer ends its work by calling ``submit_answer`` (never by writing tags in prose), so
its answer is one field of a JSON object checked against a schema: text the model quotes
from the code under review, whatever it says, cannot become the answer. The formalizer
answers with ``record_facts`` (``agent.record_facts_tool``). Every tool input the model
sends is checked against the tool's ``input_schema`` by :func:`validate` before it is used;
an invalid one goes back to the model as an error tool result.

Another module can give the analyzer more tools: an :class:`AgentTool` pairs a
``ToolSpec`` with the function that answers it, and ``agent.ask(..., tools=[...])`` offers
it beside ``cat`` and ``code_search``. Its input is validated against its schema first; it
raises ``agent.view.ToolError`` to send an error message back to the model.

Pure: no network, no files.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from veribot.checks.agent.llm import ToolSpec

SUBMIT_ANSWER = "submit_answer"
ANSWERS = ("equivalent", "not equivalent", "unknown")

ANSWER_TOOL = ToolSpec(
    name=SUBMIT_ANSWER,
    description=(
        "Give your final answer to the equivalence question. Call it exactly once, when you "
        "are done reading code. 'answer' alone decides what you answered."
    ),
    input_schema={
        "type": "object",
        "properties": {
            "answer": {"type": "string", "enum": list(ANSWERS)},
            "explanation": {
                "type": "string",
                "minLength": 1,
                "description": "why, with the variables, functions and line numbers relied on",
            },
            "original_code": {
                "type": "string",
                "description": "the relevant original code, `12: code` lines, `# file:` headers",
            },
            "modified_code": {"type": "string", "description": "the relevant modified code"},
            "common_code": {
                "type": "string",
                "description": "code both versions use (helpers read), with line numbers",
            },
        },
        "required": ["answer", "explanation"],
        "additionalProperties": False,
    },
)


@dataclass(frozen=True)
class AgentTool:
    """A tool offered to the analyzer: its definition and the function that answers a call."""

    spec: ToolSpec
    run: Callable[[Mapping[str, object]], str] = field(hash=False, compare=False)


def validate(schema: Mapping[str, object], value: object, where: str = "input") -> list[str]:
    """What is wrong with ``value`` under a JSON Schema (empty when it is valid).

    The subset of JSON Schema our tools use: ``type``, ``enum``, ``const``, ``properties``,
    ``required``, ``additionalProperties`` (false), ``items``, ``prefixItems``,
    ``minItems``, ``maxItems``, ``minLength``, ``minimum``, ``oneOf``. A keyword outside it
    is an error, so a schema cannot silently check less than it says.
    """
    problems: list[str] = []
    known = {
        "type", "enum", "const", "properties", "required", "additionalProperties", "items",
        "prefixItems", "minItems", "maxItems", "minLength", "minimum", "oneOf", "description",
        "title", "$schema",
    }  # fmt: skip
    unknown = set(schema) - known
    if unknown:
        return [f"{where}: the schema uses unsupported keywords {sorted(unknown)}"]
    kind = schema.get("type")
    if isinstance(kind, str) and not _is_type(kind, value):
        return [f"{where}: must be of type {kind}, got {_type_name(value)}"]
    enum = schema.get("enum")
    if isinstance(enum, list) and not any(_same(value, e) for e in enum):
        problems.append(f"{where}: must be one of {enum}, got {value!r}"[:300])
    if "const" in schema and not _same(value, schema["const"]):
        problems.append(f"{where}: must be {schema['const']!r}")
    if isinstance(value, str):
        minimum = schema.get("minLength")
        if isinstance(minimum, int) and len(value) < minimum:
            problems.append(f"{where}: must have at least {minimum} character(s)")
    if isinstance(value, int | float) and not isinstance(value, bool):
        least = schema.get("minimum")
        if isinstance(least, int | float) and value < least:
            problems.append(f"{where}: must be at least {least}")
    if isinstance(value, Mapping):
        problems += _object(schema, value, where)
    if isinstance(value, list):
        problems += _array(schema, value, where)
    variants = schema.get("oneOf")
    if isinstance(variants, list):
        fitting = [v for v in variants if isinstance(v, Mapping) and not validate(v, value, where)]
        if len(fitting) != 1:
            problems.append(f"{where}: must match exactly one of {len(variants)} forms")
    return problems


def _object(schema: Mapping[str, object], value: Mapping[str, object], where: str) -> list[str]:
    problems: list[str] = []
    properties = schema.get("properties")
    props = properties if isinstance(properties, Mapping) else {}
    required = schema.get("required")
    for key in required if isinstance(required, list) else []:
        if key not in value:
            problems.append(f"{where}.{key}: required")
    if schema.get("additionalProperties") is False:
        problems += [f"{where}.{k}: not allowed" for k in value if k not in props]
    for key, sub in props.items():
        if key in value and isinstance(sub, Mapping):
            problems += validate(sub, value[key], f"{where}.{key}")
    return problems


def _array(schema: Mapping[str, object], value: list[object], where: str) -> list[str]:
    problems: list[str] = []
    low, high = schema.get("minItems"), schema.get("maxItems")
    if isinstance(low, int) and len(value) < low:
        problems.append(f"{where}: must have at least {low} item(s)")
    if isinstance(high, int) and len(value) > high:
        problems.append(f"{where}: must have at most {high} item(s)")
    prefix = schema.get("prefixItems")
    heads: Sequence[object] = prefix if isinstance(prefix, list) else []
    for i, (sub, item) in enumerate(zip(heads, value, strict=False)):
        if isinstance(sub, Mapping):
            problems += validate(sub, item, f"{where}[{i}]")
    items = schema.get("items")
    rest = value[len(heads) :]
    if items is False and rest:
        problems.append(f"{where}: must have at most {len(heads)} item(s)")
    elif isinstance(items, Mapping):
        for i, item in enumerate(rest, start=len(heads)):
            problems += validate(items, item, f"{where}[{i}]")
    return problems


def _is_type(kind: str, value: object) -> bool:
    if kind == "object":
        return isinstance(value, Mapping)
    if kind == "array":
        return isinstance(value, list)
    if kind == "string":
        return isinstance(value, str)
    if kind == "boolean":
        return isinstance(value, bool)
    if kind == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "number":
        return isinstance(value, int | float) and not isinstance(value, bool)
    if kind == "null":
        return value is None
    return False


def _same(a: object, b: object) -> bool:
    """JSON equality: ``True`` is not ``1``."""
    return type(a) is type(b) and a == b if isinstance(a, bool) or isinstance(b, bool) else a == b


def _type_name(value: object) -> str:
    for kind in ("boolean", "integer", "number", "string", "array", "object", "null"):
        if _is_type(kind, value):
            return kind
    return type(value).__name__
