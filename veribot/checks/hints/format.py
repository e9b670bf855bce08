"""The hint format: what an agent (or a person) may propose, parsed without ever running it.

A hint is JSON. A list of hints, or a document ``{"version": 1, "hints": [...]}``; each
hint is an object with a ``kind`` and, optionally, ``why`` (free text, only displayed):

``invariant``
    ``{"kind": "invariant", "expr": "before.total == after.acc and before.i == after.j"}``:
    a relational loop invariant. It holds at the head of every lock-step iteration of the
    two versions' loops (before the loop test), where ``k`` is the number of iterations
    both loops have run so far. ``before.NAME`` / ``after.NAME`` are the variables (and
    parameters) of each version at that point.
``correspondence``
    ``{"kind": "correspondence", "variables": {"total": "acc"}, "loops": [3, 4]}``: the
    before version's variable ``total`` corresponds to the after version's ``acc`` (each
    pair becomes the invariant ``before.total == after.acc``); ``loops`` optionally names
    the line of each version's loop that corresponds (the engine pairs a version's single
    loop with the other's, so these must be those loops).
    ``{"kind": "correspondence", "statements": {"3": 4, "4": 3}}``: the statement starting
    at line 3 of the before version is the one at line 4 of the after version, and so on
    (a matching for the relational check, which then compares the before version with
    its statements in that order; ``hints.reorder`` says which reorderings it accepts).
    ``variables`` or ``statements`` or both.
``lemma``
    ``{"kind": "lemma", "function": "h", "requires": "x >= 0", "ensures": "result >= 0"}``:
    about a helper ``h`` of the module: for every input of its parameters' declared types
    satisfying ``requires`` (over the parameter names; optional), whenever ``h`` returns
    normally, ``ensures`` holds (over the parameter names and ``result``). An equation
    with another helper is an ``ensures`` too: ``"ensures": "result == g(x)"``.
``precondition``
    ``{"kind": "precondition", "expr": "n >= 0"}``: what the old code relied on, over the
    parameters. The solver checks whether the versions agree on every input satisfying
    it; that is shown, never reported as verified: it narrows the domain that "verified"
    promises.

Expressions are a small, safe subset of Python, checked on the syntax tree (``ast``):
names (the parameters of a lemma, ``result``, ``k``), ``before.NAME`` / ``after.NAME``
(for invariants), integer, boolean, string and ``None`` constants, arithmetic, comparisons,
``and`` / ``or`` / ``not``, conditional expressions, subscripts, and calls of ``len``,
``abs``, ``min``, ``max`` and of the module's own functions. Anything else (attributes
other than ``before.``/``after.``, dunder names, lambdas, comprehensions, keyword
arguments, f-strings ...) rejects the hint with the reason. The text is never evaluated:
the engine reads the tree into its own symbolic model (``hints.model``).
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

KINDS = ("invariant", "correspondence", "lemma", "precondition")
MAX_HINTS = 32  # per unit: a flood of hints is cut off here, saying so
MAX_EXPR_CHARS = 400
MAX_NODES = 120
SIDES = ("before", "after")
BUILTINS = frozenset({"len", "abs", "min", "max"})
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,63}$")

_ALLOWED = (
    ast.Expression, ast.BoolOp, ast.And, ast.Or, ast.UnaryOp, ast.Not, ast.USub, ast.UAdd,
    ast.BinOp, ast.Add, ast.Sub, ast.Mult, ast.FloorDiv, ast.Mod, ast.Compare, ast.Eq,
    ast.NotEq, ast.Lt, ast.LtE, ast.Gt, ast.GtE, ast.In, ast.NotIn, ast.IfExp, ast.Call,
    ast.Name, ast.Load, ast.Attribute, ast.Constant, ast.Subscript, ast.Tuple,
)  # fmt: skip


class HintError(ValueError):
    """A hint that cannot be read: the message says why, in one sentence."""


@dataclass(frozen=True)
class Expr:
    """A checked expression: its text and its syntax tree (never compiled, never run)."""

    text: str
    tree: ast.expr = field(compare=False, hash=False, repr=False)

    def conjuncts(self) -> tuple[Expr, ...]:
        """The top-level ``and`` split into its parts (each checked on its own)."""
        if isinstance(self.tree, ast.BoolOp) and isinstance(self.tree.op, ast.And):
            return tuple(Expr(ast.unparse(v), v) for v in self.tree.values)
        return (self,)

    def tautology(self) -> bool:
        """Whether it holds by its form alone: each conjunct a true constant or a
        comparison of an expression with itself (``before.n == before.n``)."""
        for part in self.conjuncts():
            node = part.tree
            if isinstance(node, ast.Constant) and node.value is True:
                continue
            if not (isinstance(node, ast.Compare)
                    and all(isinstance(op, ast.Eq | ast.LtE | ast.GtE | ast.Is)
                            for op in node.ops)
                    and len({ast.dump(e) for e in (node.left, *node.comparators)}) == 1):
                return False
        return True


@dataclass(frozen=True)
class Hint:
    """One hint as proposed. ``exprs`` are the invariants it stands for (invariant,
    correspondence), the condition (precondition), or ``requires``/``ensures`` (lemma)."""

    kind: str
    text: str  # how it reads in a report
    expr: Expr | None = None  # invariant, precondition
    variables: tuple[tuple[str, str], ...] = ()  # correspondence
    loops: tuple[int, int] | None = None  # correspondence
    statements: tuple[tuple[int, int], ...] = ()  # correspondence: before line, after line
    function: str = ""  # lemma
    requires: Expr | None = None  # lemma
    ensures: Expr | None = None  # lemma
    why: str = ""

    def vacuous(self) -> bool:
        """Whether it says nothing: its invariant, condition or lemma's ``ensures`` holds
        by its form alone (a correspondence is never vacuous)."""
        said = self.ensures if self.kind == "lemma" else self.expr
        return said is not None and said.tautology()

    def invariants(self) -> tuple[Expr, ...]:
        """The relational invariants this hint proposes (none for lemmas, preconditions)."""
        if self.kind == "invariant" and self.expr is not None:
            return self.expr.conjuncts()
        if self.kind == "correspondence":
            return tuple(
                parse_expr(f"before.{a} == after.{b}", sides=True) for a, b in self.variables
            )
        return ()

    def as_json(self) -> dict[str, object]:
        """The hint in the documented JSON shape (what the archive stores)."""
        out: dict[str, object] = {"kind": self.kind}
        if self.kind in ("invariant", "precondition") and self.expr is not None:
            out["expr"] = self.expr.text
        if self.kind == "correspondence":
            if self.variables:
                out["variables"] = dict(self.variables)
            if self.statements:
                out["statements"] = {str(a): b for a, b in self.statements}
            if self.loops is not None:
                out["loops"] = list(self.loops)
        if self.kind == "lemma":
            out["function"] = self.function
            if self.requires is not None:
                out["requires"] = self.requires.text
            if self.ensures is not None:
                out["ensures"] = self.ensures.text
        if self.why:
            out["why"] = self.why
        return out


@dataclass(frozen=True)
class Rejected:
    """A hint that could not be read, and why."""

    index: int  # position in the list as given (0-based)
    text: str  # the raw hint, shortened
    reason: str


@dataclass(frozen=True)
class Parsed:
    """The readable hints and the rejected ones, in the order given."""

    hints: tuple[Hint, ...]
    rejected: tuple[Rejected, ...] = ()


def parse_hints(raw: object) -> Parsed:
    """Read hints from decoded JSON (a list, or ``{"hints": [...]}``); never raises for a
    bad hint, only collects it as rejected. A wrong top-level shape raises ``HintError``."""
    if isinstance(raw, Mapping):
        version = raw.get("version", 1)
        if version != 1:
            raise HintError(f"unknown hint format version {version!r} (expected 1)")
        if "hints" not in raw:
            raise HintError("a hints document needs \"hints\": a list of hints (a single "
                            "hint goes inside a list)")
        raw = raw.get("hints")
    if not isinstance(raw, list):
        raise HintError("hints must be a JSON list of objects")
    hints: list[Hint] = []
    rejected: list[Rejected] = []
    for i, item in enumerate(raw):
        if i >= MAX_HINTS:
            rejected.append(Rejected(i, _short(item), f"more than {MAX_HINTS} hints"))
            continue
        try:
            hints.append(parse_hint(item))
        except HintError as err:
            rejected.append(Rejected(i, _short(item), str(err)))
    return Parsed(tuple(hints), tuple(rejected))


def parse_hint(item: object) -> Hint:
    """One hint from its JSON object; ``HintError`` says what is wrong with it."""
    if not isinstance(item, Mapping):
        raise HintError("a hint must be a JSON object")
    kind = item.get("kind")
    if kind not in KINDS:
        raise HintError(f"unknown kind {kind!r} (expected one of {', '.join(KINDS)})")
    why = item.get("why", "")
    why = why[:500] if isinstance(why, str) else ""
    if kind in ("invariant", "precondition"):
        expr = parse_expr(_text(item, "expr"), sides=kind == "invariant",
                          names=() if kind == "invariant" else None)
        return Hint(kind, f"{kind} `{expr.text}`", expr=expr, why=why)
    if kind == "correspondence":
        variables = item.get("variables", {})
        moves = _statements(item.get("statements", {}))
        if not isinstance(variables, Mapping) or not (variables or moves):
            raise HintError("a correspondence needs `variables`: an object of before -> after "
                            "variable names (or `statements`: before line -> after line)")
        pairs: list[tuple[str, str]] = []
        for a, b in variables.items():
            if not (isinstance(b, str) and _plain_name(a) and _plain_name(b)):
                raise HintError(f"`{_short(a)}` -> `{_short(b)}` is not a pair of variable names")
            pairs.append((a, b))
        loops = item.get("loops")
        lines: tuple[int, int] | None = None
        if loops is not None:
            if not (isinstance(loops, list) and len(loops) == 2
                    and all(type(n) is int and n > 0 for n in loops)):
                raise HintError("`loops` must be two line numbers: [before, after]")
            lines = (loops[0], loops[1])
        shown = ", ".join([*(f"{a} ~ {b}'" for a, b in pairs),
                           *(f"line {a} ~ line {b}'" for a, b in moves)])
        return Hint(kind, f"correspondence {shown}", variables=tuple(pairs), loops=lines,
                    statements=moves, why=why)
    function = item.get("function")
    if not isinstance(function, str) or not _plain_name(function):
        raise HintError("a lemma needs `function`: the name of a function of the module")
    requires = item.get("requires")
    pre = None if requires in (None, "") else parse_expr(_text(item, "requires"), names=None)
    post = parse_expr(_text(item, "ensures"), names=None)
    for e in (pre, post):
        if e is not None and function in called(e):
            raise HintError(f"a lemma about `{function}` may not call `{function}` itself")
    text = f"lemma on `{function}`: " + (f"requires `{pre.text}`, " if pre else "")
    return Hint("lemma", text + f"ensures `{post.text}`", function=function, requires=pre,
                ensures=post, why=why)


def parse_expr(text: str, *, sides: bool = False, names: Sequence[str] | None = ()) -> Expr:
    """Check ``text`` against the safe subset. ``sides``: ``before.X`` / ``after.X`` are
    allowed (invariants). ``names``: the bare names allowed besides ``k`` and function
    names in calls (``None``: any plain name; the model checks it exists)."""
    if len(text) > MAX_EXPR_CHARS:
        raise HintError(f"the expression is longer than {MAX_EXPR_CHARS} characters")
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError as err:
        raise HintError(f"`{_short(text)}` is not a Python expression ({err.msg})") from None
    nodes = list(ast.walk(tree))
    if len(nodes) > MAX_NODES:
        raise HintError(f"the expression has more than {MAX_NODES} parts")
    calls = {id(n.func) for n in nodes if isinstance(n, ast.Call)}
    sided = {id(n.value) for n in nodes if isinstance(n, ast.Attribute)}
    for node in nodes:
        if not isinstance(node, _ALLOWED):
            raise HintError(f"`{_short(text)}`: {type(node).__name__} is not allowed in a hint")
        if isinstance(node, ast.Attribute):
            if not (sides and isinstance(node.value, ast.Name) and node.value.id in SIDES):
                raise HintError(f"`{_short(text)}`: only before.NAME and after.NAME may be "
                                "read with a dot")
            if not _plain_name(node.attr):
                raise HintError(f"`{_short(text)}`: `{node.attr}` is not a variable name")
        elif isinstance(node, ast.Name):
            if not _plain_name(node.id):
                raise HintError(f"`{_short(text)}`: the name `{node.id}` is not allowed")
            if id(node) in sided:
                continue
            if id(node) not in calls and node.id in SIDES:
                raise HintError(f"`{_short(text)}`: `{node.id}` must be followed by "
                                ".VARIABLE")
            if id(node) not in calls and names is not None and node.id != "k" and (
                node.id not in names
            ):
                raise HintError(f"`{_short(text)}`: `{node.id}` is neither before.NAME, "
                                "after.NAME nor k")
        elif isinstance(node, ast.Call):
            if not isinstance(node.func, ast.Name) or node.keywords or any(
                isinstance(a, ast.Starred) for a in node.args
            ):
                raise HintError(f"`{_short(text)}`: only plain calls of named functions, "
                                "with positional arguments")
        elif isinstance(node, ast.Constant):
            if not (node.value is None or type(node.value) in (int, bool, str)):
                raise HintError(f"`{_short(text)}`: the constant {node.value!r} is not "
                                "allowed (integers, booleans, strings and None are)")
            if type(node.value) is int and abs(node.value) > 10**18:
                raise HintError(f"`{_short(text)}`: the constant is too large")
    return Expr(ast.unparse(tree.body), tree.body)


def called(expr: Expr) -> set[str]:
    """The functions an expression calls."""
    return {n.func.id for n in ast.walk(expr.tree)
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}


def loads(text: str) -> Parsed:
    """Hints from JSON text; ``HintError`` if it is not JSON of the right shape."""
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as err:
        raise HintError(f"the hints are not valid JSON ({err.msg}, line {err.lineno})") from None
    return parse_hints(raw)


def _text(item: Mapping[str, object], key: str) -> str:
    value = item.get(key)
    if not isinstance(value, str) or not value.strip():
        raise HintError(f"`{key}` must be a non-empty string holding an expression")
    return value.strip()


def _plain_name(name: object) -> bool:
    return (isinstance(name, str) and bool(_NAME.match(name)) and not name.startswith("__")
            and not name.startswith("_vb"))


def _short(value: object, limit: int = 80) -> str:
    text = value if isinstance(value, str) else json.dumps(value, default=str)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _statements(raw: object) -> tuple[tuple[int, int], ...]:
    """``{"3": 4}`` (JSON object keys are strings) as ``((3, 4),)``, checked."""
    if not isinstance(raw, Mapping):
        raise HintError("`statements` must be an object: before line -> after line")
    if len(raw) > 64:
        raise HintError("`statements` may map at most 64 lines")
    out: list[tuple[int, int]] = []
    for a, b in raw.items():
        line = int(a) if isinstance(a, str) and a.isascii() and a.isdigit() and len(a) < 7 else 0
        if line <= 0 or type(b) is not int or not 0 < b < 1_000_000:
            raise HintError(f"`{_short(a)}` -> `{_short(b)}` is not a pair of line numbers")
        out.append((line, b))
    return tuple(sorted(out))
