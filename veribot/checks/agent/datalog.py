"""Run verification-condition rules (data files) over facts with Z3's Fixedpoint engine.

The rules are a Soufflé subset (``.decl`` lines, Horn rules with stratified ``!``
negation, ``!=``, string and number constants, ``_``), loaded by name from
``veribot/checks/agent/rules``. Z3's fixedpoint engine can crash or hang on some inputs, so it
runs in a separate process (``python -m veribot.checks.agent.datalog``) with a wall-clock timeout
and a memory limit: a crash, a hang or an error gives ``holds=None`` with the reason and
never takes the calling process down.
"""

from __future__ import annotations

import json
import logging
import re
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from importlib import resources

from veribot.checks.agent.facts import FactSet

log = logging.getLogger(__name__)

EQUIVALENCE_RULES = "equivalence.dl"


@dataclass(frozen=True)
class DatalogResult:
    """Whether the query is derivable; ``None`` when the engine could not decide.

    ``answers`` holds, for each relation asked to be explained, its derived tuples.
    """

    holds: bool | None
    detail: str
    answers: dict[str, tuple[tuple[str | int, ...], ...]] = field(default_factory=dict)


def load_rules(name: str) -> str:
    """The text of a rules file in ``veribot/checks/agent/rules`` (e.g. ``equivalence.dl``)."""
    return resources.files("veribot.checks.agent.rules").joinpath(name).read_text("utf-8")


def run_rules(
    rules: str,
    facts: FactSet,
    query: str,
    *,
    timeout_s: float,
    explain: Sequence[str] = (),
    memory_mb: int = 1024,
) -> DatalogResult:
    """Whether relation ``query`` has a derivable tuple from ``rules`` and ``facts``.

    Runs in a child process, killed after ``timeout_s`` seconds; ``memory_mb`` caps its
    address space. ``explain`` names further relations whose tuples are returned.
    """
    request = {
        "rules": rules,
        "facts": [[f.pred, list(f.args)] for f in facts],
        "query": query,
        "explain": list(explain),
        "memory_mb": memory_mb,
    }
    try:
        proc = subprocess.run(
            [sys.executable, "-I", "-m", "veribot.checks.agent.datalog"],
            input=json.dumps(request),
            capture_output=True,
            text=True,
            timeout=timeout_s,
            check=False,
        )
    except subprocess.TimeoutExpired:
        log.info("datalog query %s timed out after %.1fs", query, timeout_s)
        return DatalogResult(None, f"the Datalog engine timed out after {timeout_s:g}s")
    if proc.returncode != 0:
        tail = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        log.warning("datalog child exited with %s: %s", proc.returncode, tail)
        return DatalogResult(
            None, f"the Datalog engine failed (exit status {proc.returncode}): {tail}"
        )
    try:
        reply = json.loads(proc.stdout)
    except ValueError:
        return DatalogResult(None, "the Datalog engine gave an unreadable reply")
    if "error" in reply:
        return DatalogResult(None, f"the Datalog engine could not run: {reply['error']}")
    answers = {
        k: tuple(sorted((tuple(t) for t in v), key=lambda t: [(str(type(a)), a) for a in t]))
        for k, v in reply.get("answers", {}).items()
    }
    holds = bool(reply["holds"])
    return DatalogResult(holds, f"{query} {'holds' if holds else 'does not hold'}", answers)


def equivalence_condition(facts: FactSet, *, timeout_s: float) -> DatalogResult:
    """Seed 000 eq. 4: every watched variable at an exit of one version has an equivalent
    counterpart at the corresponding exit of the other (rules in ``equivalence.dl``).

    ``holds`` is False when the facts do not show it, with what was missing or unmatched.
    """
    # "Entry:<function>" conditions are true everywhere and carry no information.
    usable = facts.filter(
        lambda f: not (f.pred == "controldep" and str(f.args[3]).startswith("Entry"))
    )
    result = run_rules(
        load_rules(EQUIVALENCE_RULES),
        usable,
        "equivalent",
        timeout_s=timeout_s,
        explain=("missing", "unmatchedWatch"),
    )
    if result.holds is not False:
        return result
    missing = [str(t[0]) for t in result.answers.get("missing", ())]
    unmatched = [f"{t[0]} at {t[1]}:{t[2]}" for t in result.answers.get("unmatchedWatch", ())]
    parts = []
    if missing:
        parts.append("facts missing: " + ", ".join(missing))
    if unmatched:
        parts.append("no equivalent counterpart for " + ", ".join(unmatched))
    detail = "; ".join(parts) or "the watched variables are not shown equivalent"
    return DatalogResult(False, detail, result.answers)


# --- the rules dialect --------------------------------------------------------------------

_TOKEN = re.compile(r'\s*(?:(?P<str>"(?:[^"\\]|\\.)*")|(?P<num>-?\d+)|(?P<id>[A-Za-z_$][\w$]*)'
                    r"|(?P<op>:-|!=|[(),.!=]))")


@dataclass(frozen=True)
class Term:
    """A variable (``is_var``), or a constant string or number."""

    value: str | int
    is_var: bool


@dataclass(frozen=True)
class Atom:
    rel: str
    terms: tuple[Term, ...]
    negated: bool = False


@dataclass(frozen=True)
class Compare:
    left: Term
    right: Term
    equal: bool


@dataclass(frozen=True)
class Rule:
    head: Atom
    body: tuple[Atom | Compare, ...]


def _strip_comments(text: str) -> str:
    out = []
    for line in text.splitlines():
        if line.lstrip().startswith(".decl"):
            continue
        cut = line.find("//")
        out.append(line if cut < 0 else line[:cut])
    return "\n".join(out)


def parse_rules(text: str) -> list[Rule]:
    """Parse the rules of a ``.dl`` file (``.decl`` lines are documentation only).

    Raises ``ValueError`` on text outside the dialect.
    """
    try:
        return _parse_rules(text)
    except IndexError:
        raise ValueError("rules: unexpected end of text") from None


def _parse_rules(text: str) -> list[Rule]:
    tokens: list[tuple[str, str]] = []
    source = _strip_comments(text)
    pos = 0
    while pos < len(source):
        if source[pos:].strip() == "":
            break
        m = _TOKEN.match(source, pos)
        if m is None or m.end() == pos:
            raise ValueError(f"rules: cannot read {source[pos:pos + 30].strip()!r}")
        kind = m.lastgroup or ""
        tokens.append((kind, m.group(kind)))
        pos = m.end()
    rules: list[Rule] = []
    i = 0
    anon = 0
    projections: dict[tuple[str, tuple[bool, ...]], Atom] = {}

    def term(tok: tuple[str, str]) -> Term:
        nonlocal anon
        kind, text = tok
        if kind == "str":
            return Term(json.loads(text), False)
        if kind == "num":
            return Term(int(text), False)
        if kind == "id":
            if text == "_":
                anon += 1
                return Term(f"_anon{anon}", True)
            return Term(text, True)
        raise ValueError(f"rules: unexpected {text!r}")

    def atom(negated: bool) -> Atom:
        nonlocal i
        kind, name = tokens[i]
        if kind != "id" or tokens[i + 1][1] != "(":
            raise ValueError(f"rules: expected a relation, got {name!r}")
        i += 2
        terms: list[Term] = []
        while tokens[i][1] != ")":
            terms.append(term(tokens[i]))
            i += 1
            if tokens[i][1] == ",":
                i += 1
        i += 1
        return Atom(name, tuple(terms), negated)

    while i < len(tokens):
        head = atom(False)
        body: list[Atom | Compare] = []
        if tokens[i][1] == ":-":
            i += 1
            while True:
                if tokens[i][1] == "!":
                    i += 1
                    body.append(atom(True))
                elif tokens[i + 1][1] in ("!=", "="):
                    left, op, right = term(tokens[i]), tokens[i + 1][1], term(tokens[i + 2])
                    body.append(Compare(left, right, op == "="))
                    i += 3
                else:
                    body.append(atom(False))
                if tokens[i][1] == ",":
                    i += 1
                    continue
                break
        if tokens[i][1] != ".":
            raise ValueError(f"rules: expected '.' after the rule for {head.rel}")
        i += 1
        rules.append(Rule(head, tuple(_project(b, projections) for b in body)))
    for proj_head in projections.values():
        rules.append(_projection_rule(proj_head))
    return rules


def _is_anon(t: Term) -> bool:
    return t.is_var and str(t.value).startswith("_anon")


def _project(b: Atom | Compare, seen: dict[tuple[str, tuple[bool, ...]], Atom]) -> Atom | Compare:
    """``!r(x, _)`` means "no r(x, y) for any y": negate a projection ``r_p(x)`` instead."""
    if not isinstance(b, Atom) or not b.negated or not any(_is_anon(t) for t in b.terms):
        return b
    mask = tuple(_is_anon(t) for t in b.terms)
    name = f"{b.rel}__proj_{''.join('_' if m else 'x' for m in mask)}"
    generic = tuple(Term("_anon" if m else f"v{k}", True) for k, m in enumerate(mask))
    seen[(b.rel, mask)] = Atom(b.rel, generic)
    kept = tuple(t for t, m in zip(b.terms, mask, strict=True) if not m)
    return Atom(name, kept, negated=True)


def _projection_rule(source: Atom) -> Rule:
    mask = "".join("_" if _is_anon(t) else "x" for t in source.terms)
    terms = tuple(
        Term(f"_anon_p{k}", True) if _is_anon(t) else t for k, t in enumerate(source.terms)
    )
    kept = tuple(t for t in terms if not _is_anon(t))
    return Rule(Atom(f"{source.rel}__proj_{mask}", kept), (Atom(source.rel, terms),))


# --- the child process ----------------------------------------------------------------------


def _solve(request: dict[str, object]) -> dict[str, object]:
    import z3

    rules = parse_rules(str(request["rules"]))
    raw_facts = request["facts"]
    assert isinstance(raw_facts, list)
    query = str(request["query"])
    explain = [str(e) for e in request.get("explain", []) or []]  # type: ignore[attr-defined]

    symbols: dict[tuple[str, str | int], int] = {}

    def sym(value: str | int) -> int:
        key = ("i" if isinstance(value, int) else "s", value)
        return symbols.setdefault(key, len(symbols))

    arity: dict[str, int] = {}
    for rule in rules:
        for a in (rule.head, *rule.body):
            if isinstance(a, Atom):
                known = arity.setdefault(a.rel, len(a.terms))
                if known != len(a.terms):
                    raise ValueError(f"relation {a.rel} used with {known} and {len(a.terms)} args")
            else:
                for t in (a.left, a.right):
                    if not t.is_var:
                        sym(t.value)
            for t in a.terms if isinstance(a, Atom) else ():
                if not t.is_var:
                    sym(t.value)
    ground: list[tuple[str, list[str | int]]] = []
    for pred, args in raw_facts:
        if pred in arity and len(args) == arity[pred]:
            ground.append((pred, args))
            for v in args:
                sym(v)
    for name in (query, *explain):
        arity.setdefault(name, 0)

    bits = max(2, len(symbols).bit_length() + 1)
    sort = z3.BitVecSort(bits)
    fp = z3.Fixedpoint()
    fp.set(engine="datalog")
    rels = {
        name: z3.Function(name, *([sort] * n), z3.BoolSort()) for name, n in sorted(arity.items())
    }
    for rel in rels.values():
        fp.register_relation(rel)
    variables: dict[str, z3.ExprRef] = {}

    def expr(t: Term) -> z3.ExprRef:
        if t.is_var:
            if t.value not in variables:
                variables[str(t.value)] = z3.Const(str(t.value), sort)
                fp.declare_var(variables[str(t.value)])
            return variables[str(t.value)]
        return z3.BitVecVal(sym(t.value), bits)

    def apply(a: Atom) -> z3.ExprRef:
        return rels[a.rel](*[expr(t) for t in a.terms])

    for pred, args in ground:
        fp.fact(rels[pred](*[z3.BitVecVal(sym(v), bits) for v in args]))
    for rule in rules:
        body = []
        for b in rule.body:
            if isinstance(b, Atom):
                body.append(z3.Not(apply(b)) if b.negated else apply(b))
            else:
                eq = expr(b.left) == expr(b.right)
                body.append(eq if b.equal else z3.Not(eq))
        if body:
            fp.rule(apply(rule.head), body)
        else:
            fp.fact(apply(rule.head))

    def ask(name: str) -> tuple[bool, list[list[str | int]]]:
        n = arity[name]
        qvars = [z3.Const(f"q{k}", sort) for k in range(n)]
        if qvars:
            fp.declare_var(*qvars)
        status = fp.query(rels[name](*qvars)) if n else fp.query(rels[name]())
        if status == z3.unknown:
            raise RuntimeError(f"fixedpoint answered unknown for {name}")
        if status != z3.sat:
            return False, []
        return True, _tuples(fp.get_answer(), n, {v: k for k, v in symbols.items()})

    holds, _ = ask(query)
    answers = {name: ask(name)[1] for name in explain}
    return {"holds": holds, "answers": answers}


def _tuples(
    answer: object, n: int, names: dict[int, tuple[str, str | int]]
) -> list[list[str | int]]:
    """Ground tuples from a fixedpoint answer (a disjunction of conjunctions of Var = k)."""
    import z3

    assert isinstance(answer, z3.ExprRef)
    if n == 0:
        return [[]]
    disjuncts = answer.children() if z3.is_or(answer) else [answer]
    out: list[list[str | int]] = []
    for d in disjuncts:
        eqs = d.children() if z3.is_and(d) else [d]
        row: dict[int, str | int] = {}
        for eq in eqs:
            if not z3.is_eq(eq):
                continue
            lhs, rhs = eq.children()
            if z3.is_var(lhs) and z3.is_bv_value(rhs):
                row[z3.get_var_index(lhs)] = names[rhs.as_long()][1]
        if len(row) == n:
            out.append([row[k] for k in range(n)])
    return out


def _child_main() -> int:
    request = json.loads(sys.stdin.read())
    memory_mb = int(request.get("memory_mb", 1024))
    try:
        import resource

        limit = memory_mb * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    except (ImportError, ValueError, OSError) as err:
        log.debug("no memory limit for the datalog child: %s", err)
    try:
        reply = _solve(request)
    except (ValueError, RuntimeError, KeyError, TypeError) as err:
        reply = {"error": str(err)}
    sys.stdout.write(json.dumps(reply))
    return 0


if __name__ == "__main__":
    raise SystemExit(_child_main())
