"""The predicate vocabulary of equivalence claims; Fact, FactSet and their (de)serialisation.

The vocabulary is data (``rules/vocabulary.json``, versioned): seed 000's Table 2 (def, use,
flow, controldep, defWithExpr, condWithExpr, unaryFun, binaryFun, entry, exit,
isConstantValue, watchVar, varMap, entryMap, exitMap) and veribot's extensions. The
formalizer's output is validated against :func:`fact_schema` and read with
:func:`parse_facts`, which never raises on bad model output: it keeps the valid facts and
says what was wrong with the rest.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from importlib import resources

Arg = str | int

KINDS = ("var", "file", "line", "op", "fun", "bool", "expr", "text")


@dataclass(frozen=True)
class Fact:
    """One predicate instance, e.g. ``Fact("def", ("x", "before", 3))``."""

    pred: str
    args: tuple[Arg, ...]

    def __str__(self) -> str:
        return f"{self.pred}({', '.join(json.dumps(a) for a in self.args)})"

    def line(self) -> int | None:
        """The line this fact concerns (per the vocabulary), if it has one."""
        spec = VOCABULARY.get(self.pred)
        if spec is None or spec.line_arg is None or spec.line_arg >= len(self.args):
            return None
        value = self.args[spec.line_arg]
        return value if isinstance(value, int) else None

    def file(self) -> str | None:
        """The version label this fact concerns: its first ``file`` argument."""
        spec = VOCABULARY.get(self.pred)
        if spec is None:
            return None
        for (_, kind), value in zip(spec.args, self.args, strict=False):
            if kind == "file" and isinstance(value, str):
                return value
        return None


@dataclass(frozen=True)
class PredicateSpec:
    """A predicate signature: argument names and kinds, the line it concerns, its meaning."""

    name: str
    args: tuple[tuple[str, str], ...]
    meaning: str
    line_arg: int | None

    @property
    def arity(self) -> int:
        return len(self.args)

    def signature(self) -> str:
        """``def(x: var, file: file, line: line)``, for prompts."""
        return f"{self.name}({', '.join(f'{n}: {k}' for n, k in self.args)})"


class FactSet:
    """An immutable set of facts with lookup by predicate."""

    __slots__ = ("_by_pred", "_facts")

    def __init__(self, facts: Iterable[Fact] = ()) -> None:
        self._facts: frozenset[Fact] = frozenset(facts)
        by_pred: dict[str, list[Fact]] = {}
        for fact in sorted(self._facts, key=_sort_key):
            by_pred.setdefault(fact.pred, []).append(fact)
        self._by_pred = {k: tuple(v) for k, v in by_pred.items()}

    def __contains__(self, fact: object) -> bool:
        return fact in self._facts

    def __iter__(self) -> Iterator[Fact]:
        for pred in sorted(self._by_pred):
            yield from self._by_pred[pred]

    def __len__(self) -> int:
        return len(self._facts)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, FactSet) and self._facts == other._facts

    def __hash__(self) -> int:
        return hash(self._facts)

    def __repr__(self) -> str:
        return f"FactSet({len(self)} facts)"

    def __or__(self, other: FactSet) -> FactSet:
        return self.union(other)

    def by_pred(self, name: str) -> tuple[Fact, ...]:
        """The facts of one predicate, in a stable order."""
        return self._by_pred.get(name, ())

    def preds(self) -> frozenset[str]:
        return frozenset(self._by_pred)

    def union(self, *others: Iterable[Fact]) -> FactSet:
        facts = set(self._facts)
        for other in others:
            facts.update(other)
        return FactSet(facts)

    def difference(self, other: Iterable[Fact]) -> FactSet:
        return FactSet(self._facts - frozenset(other))

    def filter(self, keep: Callable[[Fact], bool]) -> FactSet:
        """The facts for which ``keep(fact)`` is true."""
        return FactSet(f for f in self._facts if keep(f))

    def to_json(self) -> dict[str, list[dict[str, object]]]:
        """``{"facts": [{"pred": ..., "args": [...]}]}``, the schema's shape, sorted."""
        return {"facts": [{"pred": f.pred, "args": list(f.args)} for f in self]}

    @staticmethod
    def from_json(obj: object) -> FactSet:
        """The inverse of :meth:`to_json`; raises ``ValueError`` on anything invalid."""
        facts, errors = parse_facts(obj)
        if errors:
            raise ValueError("; ".join(errors))
        return facts

    def to_lines(self) -> str:
        """One fact a line (`pred(args).`), for people and prompts."""
        return "\n".join(f"{f}." for f in self)


def _sort_key(fact: Fact) -> tuple[str, tuple[tuple[int, str], ...]]:
    return fact.pred, tuple((0, f"{a:012d}") if isinstance(a, int) else (1, a) for a in fact.args)


@functools.cache
def _load_vocabulary() -> tuple[int, dict[str, PredicateSpec]]:
    rules = resources.files("veribot.checks.agent.rules")
    text = rules.joinpath("vocabulary.json").read_text("utf-8")
    data = json.loads(text)
    specs: dict[str, PredicateSpec] = {}
    for name, spec in data["predicates"].items():
        args = tuple((str(a[0]), str(a[1])) for a in spec["args"])
        for _, kind in args:
            if kind not in KINDS:
                raise ValueError(f"vocabulary: {name} has an argument of unknown kind {kind}")
        line_arg = spec.get("line_arg")
        specs[name] = PredicateSpec(name, args, str(spec["meaning"]), line_arg)
    return int(data["version"]), specs


VOCABULARY_VERSION, VOCABULARY = _load_vocabulary()

# The paper's Table 2, which the formalizer is asked for; the rest are veribot's extensions.
TABLE_2 = (
    "def", "use", "flow", "controldep", "defWithExpr", "condWithExpr", "unaryFun",
    "binaryFun", "entry", "exit", "isConstantValue", "watchVar", "varMap", "entryMap",
    "exitMap",
)


def vocabulary_text(preds: Iterable[str] | None = None) -> str:
    """One line per predicate, ``signature: meaning``, for the formalizer's prompt."""
    names = list(preds) if preds is not None else list(VOCABULARY)
    return "\n".join(f"{VOCABULARY[n].signature()}: {VOCABULARY[n].meaning}" for n in names)


def _arg_schema(kind: str) -> dict[str, object]:
    if kind == "line":
        return {"type": "integer", "minimum": 0}
    if kind == "bool":
        return {"enum": ["true", "false", True, False]}
    if kind == "text":
        return {"type": "string"}
    return {"type": "string", "minLength": 1}


def fact_schema(preds: Iterable[str] | None = None) -> dict[str, object]:
    """The JSON Schema of the formalizer's output, checking each predicate's arity and kinds.

    ``{"facts": [{"pred": "def", "args": ["x", "before", 3]}, ...]}``.
    """
    names = list(preds) if preds is not None else list(VOCABULARY)
    variants: list[dict[str, object]] = []
    for name in names:
        spec = VOCABULARY[name]
        variants.append(
            {
                "type": "object",
                "properties": {
                    "pred": {"const": name},
                    "args": {
                        "type": "array",
                        "prefixItems": [_arg_schema(k) for _, k in spec.args],
                        "items": False,
                        "minItems": spec.arity,
                        "maxItems": spec.arity,
                    },
                },
                "required": ["pred", "args"],
                "additionalProperties": False,
            }
        )
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": f"veribot facts (vocabulary version {VOCABULARY_VERSION})",
        "type": "object",
        "properties": {"facts": {"type": "array", "items": {"oneOf": variants}}},
        "required": ["facts"],
    }


def _coerce(kind: str, value: object) -> Arg | None:
    """The argument in canonical form, or None when it is not of the kind."""
    if kind == "line":
        if isinstance(value, bool):
            return None
        if isinstance(value, int):
            return value if value >= 0 else None
        if isinstance(value, str) and value.strip().isdigit():
            return int(value.strip())
        return None
    if kind == "bool":
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, str) and value.strip().lower() in ("true", "false"):
            return value.strip().lower()
        return None
    if not isinstance(value, str):
        return None
    if kind != "text" and not value.strip():
        return None
    return value if kind in ("expr", "text") else value.strip()


def make_fact(pred: str, args: Iterable[object]) -> Fact:
    """A validated fact; raises ``ValueError`` if it does not fit the vocabulary."""
    fact, error = _check(pred, list(args))
    if fact is None:
        raise ValueError(error)
    return fact


def _check(pred: object, args: object) -> tuple[Fact | None, str]:
    if not isinstance(pred, str) or pred not in VOCABULARY:
        return None, f"unknown predicate {pred!r}"
    spec = VOCABULARY[pred]
    if not isinstance(args, list | tuple):
        return None, f"{pred}: args must be a list"
    if len(args) != spec.arity:
        wanted = f"{spec.arity} arguments ({spec.signature()})"
        return None, f"{pred}: expected {wanted}, got {len(args)}"
    out: list[Arg] = []
    for (name, kind), value in zip(spec.args, args, strict=True):
        coerced = _coerce(kind, value)
        if coerced is None:
            return None, f"{pred}: argument {name} must be a {kind}, got {value!r}"
        out.append(coerced)
    return Fact(pred, tuple(out)), ""


def parse_facts(obj: object) -> tuple[FactSet, list[str]]:
    """Read facts from model output: the valid ones, and one error per rejected item.

    Accepts the schema's shape (``{"facts": [...]}``), a bare list of items, or a JSON
    string of either. Items may be ``{"pred": p, "args": [...]}`` or ``[p, arg, ...]``.
    Never raises.
    """
    errors: list[str] = []
    if isinstance(obj, str | bytes):
        try:
            obj = json.loads(obj)
        except ValueError as err:
            return FactSet(), [f"not JSON: {err}"]
    items: object
    if isinstance(obj, dict):
        if "facts" not in obj:
            return FactSet(), ["expected an object with a 'facts' list"]
        items = obj["facts"]
    else:
        items = obj
    if not isinstance(items, list):
        return FactSet(), ["'facts' must be a list"]
    facts: list[Fact] = []
    for index, item in enumerate(items):
        if isinstance(item, dict):
            fact, error = _check(item.get("pred"), item.get("args"))
        elif isinstance(item, list) and item:
            fact, error = _check(item[0], item[1:])
        else:
            fact, error = None, "expected {'pred': ..., 'args': [...]}"
        if fact is None:
            errors.append(f"fact {index}: {error}")
        else:
            facts.append(fact)
    return FactSet(facts), errors
