"""Validate our JSON output against its schema, and SARIF against the official 2.1.0 one."""

from __future__ import annotations

import json
from typing import Any

import jsonschema

from veribot.bot.render import SCHEMA_DIR


def load_schema(name: str) -> dict[str, Any]:
    schema: dict[str, Any] = json.loads((SCHEMA_DIR / name).read_text(encoding="utf-8"))
    return schema


def validate_report_json(doc: object) -> None:
    """Raise jsonschema.ValidationError unless ``doc`` is a valid veribot JSON report."""
    schema = load_schema("report.schema.json")
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.Draft202012Validator(schema).validate(doc)


def validate_sarif(doc: object) -> None:
    """Raise jsonschema.ValidationError unless ``doc`` is valid SARIF 2.1.0 (OASIS schema)."""
    schema = load_schema("sarif-schema-2.1.0.json")
    assert schema["id"].startswith("https://docs.oasis-open.org/sarif/sarif/v2.1.0/")
    jsonschema.Draft4Validator(schema).validate(doc)
