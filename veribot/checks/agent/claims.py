"""Check an agent's claims (facts) against the code's own facts.

Each agent fact is:

- **supported**: among the code facts, or derivable from them (a flow through a chain of
  flows; a varMap or exprEquiv the SMT prover proves);
- **contradicted**: the code facts exclude it: a def/use/flow/controldep/... at a line the
  code facts describe fully that they do not contain, or a varMap or exprEquiv the prover
  refutes with an executed counterexample;
- **unchecked**: beyond what the front end sees (an opaque line, a method of a library
  object, a helper whose definition is not in the sources). These are assumptions: a
  verdict resting on them cannot be "verified".

Claims about helpers (``exprEquiv``) are obligations, discharged with the prover
(``equivalence.check_pair`` without random search) when every helper they call is defined
in ``sources`` (name -> module source; the version labels name the two versions' files),
at most ``max_proofs`` of them per call; the rest stay unchecked, saying so.

Facts are compared modulo spelling (:func:`normalise`): a literal is compared by its value
(``"hi"`` and ``'hi'`` are one literal, ``1`` and ``True`` are two), and the temporaries
the agent introduced when normalising expressions (names neither version's code uses)
are renamed, consistently, to the front end's temporaries (``$t1`` ...) they match best.
A fact about a temporary that matches none of the code's stays unchecked: naming a value
the code does not name is not a claim the code can contradict.
"""

from __future__ import annotations

import ast
import builtins
import enum
import logging
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

from veribot.checks.agent.facts import VOCABULARY, Fact, FactSet
from veribot.checks.equivalence import Budget, check_pair
from veribot.checks.verdict import Result, Verdict

log = logging.getLogger(__name__)

PROOF_BUDGET = Budget(timeout_s=5.0, search=False)
_CLAIM_FN = "__veribot_claim"
_BEFORE, _AFTER = "before", "after"  # the version labels of facts (``pipeline.BEFORE``)
_BINARY = {"+", "-", "*", "/", "//", "%", "**", "<<", ">>", "|", "^", "&", "@", "==", "!=",
           "<", "<=", ">", ">=", "is", "is not", "in", "not in", "and", "or"}
_UNARY = {"not", "-", "+", "~"}
_VAR_ARGS = {"def": (0,), "use": (0,), "flow": (0, 3), "controldep": (0,), "defWithExpr": (0,),
             "watchVar": (0,), "varMap": (0, 3), "unaryFun": (1,), "binaryFun": (1, 2)}


class ClaimStatus(enum.Enum):
    SUPPORTED = "supported"
    CONTRADICTED = "contradicted"
    UNCHECKED = "unchecked"


@dataclass(frozen=True)
class Claim:
    """One agent fact, what the code says about it, and the line it concerns.

    ``checked`` is the fact as compared: literals in canonical spelling and the agent's
    temporaries renamed to the code's (equal to ``fact`` when nothing was renamed).
    """

    fact: Fact
    status: ClaimStatus
    line: int | None
    why: str
    checked: Fact | None = None


@dataclass
class ProverAllowance:
    """The prover checks one unit may still make, shared by its judgements, and the
    results of those made (a claim judged again is not proved again)."""

    left: int | None  # None: no cap
    done: dict[tuple[str, str], tuple[ClaimStatus, str]] = field(default_factory=dict)


def check_claims(
    agent: FactSet,
    code_before: FactSet,
    code_after: FactSet,
    sources: Mapping[str, str],
    *,
    budget: Budget = PROOF_BUDGET,
    max_proofs: int | ProverAllowance | None = None,
) -> list[Claim]:
    """The status of every agent fact, in the agent set's order.

    ``max_proofs``: how many claims may be sent to the prover (``None``: no cap), or a
    ``ProverAllowance`` shared with other judgements of the same unit.
    """
    code = canonical_facts(code_before | code_after)
    renamed, temporaries = normalise(agent, code, sources)
    allowance = (
        max_proofs if isinstance(max_proofs, ProverAllowance) else ProverAllowance(max_proofs)
    )
    checker = _Checker(code, sources, budget, allowance)
    claims: list[Claim] = []
    for fact in agent:
        checked = renamed[fact]
        stray = sorted(a for a in _var_args(checked) if a in temporaries)
        if stray:
            claim = checker.stray(fact, checked, set(stray))
        else:
            claim = checker.check(checked)
            why = claim.why
            names = [f"{a} is the code's {b}" for a, b in _renaming(fact, checked)]
            if names:
                why = f"{why} ({', '.join(names)})" if why else ", ".join(names)
            claim = Claim(fact, claim.status, claim.line, why)
        claims.append(Claim(claim.fact, claim.status, claim.line, claim.why, checked))
    return claims


# --- comparing modulo spelling ------------------------------------------------------------


def canonical_literal(text: str) -> str:
    """A literal's canonical spelling (``repr`` of its value); other text unchanged."""
    if len(text) > 10_000 or (text.isidentifier() and text not in ("True", "False", "None")):
        return text
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return text
    try:
        return repr(value)
    except ValueError:  # an int too long for repr
        return text


def _var_positions(fact: Fact) -> tuple[int, ...]:
    spec = VOCABULARY.get(fact.pred)
    if spec is None:
        return ()
    return tuple(i for i, (_, kind) in enumerate(spec.args) if kind == "var")


def _var_args(fact: Fact) -> list[str]:
    return [str(fact.args[i]) for i in _var_positions(fact) if i < len(fact.args)]


def _map_vars(fact: Fact, change: Callable[[str], str]) -> Fact:
    positions = _var_positions(fact)
    return Fact(
        fact.pred,
        tuple(
            change(a) if i in positions and isinstance(a, str) else a
            for i, a in enumerate(fact.args)
        ),
    )


def canonical_facts(facts: Iterable[Fact]) -> FactSet:
    """The facts with every literal in canonical spelling."""
    return FactSet(_map_vars(f, canonical_literal) for f in facts)


def _renaming(original: Fact, checked: Fact) -> list[tuple[str, str]]:
    """The agent's temporaries that ``checked`` names by the code's names."""
    pairs: list[tuple[str, str]] = []
    for i in _var_positions(original):
        a, b = original.args[i], checked.args[i]
        if a != b and str(b).startswith("$") and (str(a), str(b)) not in pairs:
            pairs.append((str(a), str(b)))
    return pairs


def code_names(sources: Mapping[str, str], code: FactSet) -> set[str]:
    """Every name either version's code uses: identifiers of the sources, the code facts'."""
    names = {a for f in code for a in _var_args(f)}
    for source in sources.values():
        try:
            tree = ast.parse(source)
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Name):
                names.add(node.id)
            elif isinstance(node, ast.arg):
                names.add(node.arg)
            elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                names.add(node.name)
            elif isinstance(node, ast.Attribute):
                names.add(node.attr)
            elif isinstance(node, ast.alias):
                names.add((node.asname or node.name).split(".")[0])
    return names


def normalise(
    agent: FactSet, code: FactSet, sources: Mapping[str, str]
) -> tuple[dict[Fact, Fact], set[str]]:
    """Each agent fact as compared (literals canonical, temporaries renamed), and the agent's
    temporaries left without a counterpart in the code.

    A temporary of the agent is an identifier in a variable position that neither version's
    code uses (or a name spelled like the front end's, ``$t...``, which the agent cannot
    know). It is
    renamed to a temporary of the front end (``$t...``) of the same version: the pairs are
    chosen greedily by how many of the agent's facts about it become code facts, each
    code temporary taken at most once, so the renaming is consistent.
    """
    literal = {f: _map_vars(f, canonical_literal) for f in agent}
    known = code_names(sources, code)

    def is_temporary(name: str) -> bool:
        if name.startswith("$t"):  # the front end's own temporaries' spelling: never known
            return True
        return name.isidentifier() and name not in known and not is_literal(name)

    mine: dict[tuple[str, str], list[Fact]] = {}  # (version, temporary) -> facts
    for fact in literal.values():
        version = fact.file() or ""
        for name in _var_args(fact):
            if is_temporary(name):
                mine.setdefault((version, name), []).append(fact)
    theirs: dict[str, set[str]] = {}
    for fact in code:
        for name in _var_args(fact):
            if name.startswith("$t"):
                theirs.setdefault(fact.file() or "", set()).add(name)
    scored: list[tuple[int, str, str, str]] = []
    for (version, name), facts in mine.items():
        for candidate in sorted(theirs.get(version, ())):
            swap = {name: candidate}.get
            score = sum(1 for f in facts if _map_vars(f, _renamer(swap)) in code)
            if score:
                scored.append((-score, version, name, candidate))
    chosen: dict[tuple[str, str], str] = {}
    taken: set[tuple[str, str]] = set()
    for _, version, name, candidate in sorted(scored):
        if (version, name) not in chosen and (version, candidate) not in taken:
            chosen[(version, name)] = candidate
            taken.add((version, candidate))

    def rename(fact: Fact) -> Fact:
        version = fact.file() or ""
        return _map_vars(fact, lambda a: chosen.get((version, a), a))

    unmatched = {name for (version, name) in mine if (version, name) not in chosen}
    return {f: rename(literal[f]) for f in agent}, unmatched


def _renamer(lookup: Callable[[str], str | None]) -> Callable[[str], str]:
    return lambda a: lookup(a) or a


def is_literal(text: str) -> bool:
    """Whether ``text`` is a Python literal (``ast.literal_eval`` reads it)."""
    try:
        ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return False
    return True


def unchecked(claims: Iterable[Claim]) -> list[Claim]:
    """The claims that stay assumptions."""
    return [c for c in claims if c.status is ClaimStatus.UNCHECKED]


def _base(name: str) -> str:
    """``s.size`` / ``cache->arr`` / ``xs[i]`` are definitions and uses of the object."""
    for sep in (".", "->", "["):
        if sep in name and not name.startswith(sep):
            name = name.split(sep, 1)[0]
    return name.strip()


class _Checker:
    def __init__(
        self,
        code: FactSet,
        sources: Mapping[str, str],
        budget: Budget,
        allowance: ProverAllowance,
    ) -> None:
        self.code = code
        self.sources = sources
        self.budget = budget
        self.allowance = allowance
        self.files = {str(f.args[1]) for f in code.by_pred("entry")}
        self.described = {(str(f.args[0]), int(f.args[1])) for f in code.by_pred("stmt")}
        for f in code.by_pred("entry"):
            self.described.add((str(f.args[1]), int(f.args[2])))
        for f in code.by_pred("watchVar"):
            self.described.add((str(f.args[1]), int(f.args[2])))
        self.flows: dict[tuple[object, ...], set[tuple[object, ...]]] = {}
        for f in code.by_pred("flow"):
            self.flows.setdefault(f.args[:3], set()).add(f.args[3:])

    def stray(self, fact: Fact, checked: Fact, names: set[str]) -> Claim:
        """A fact naming temporaries of the agent that match none of the code's: contradicted
        only when no value at all could stand for them (the line is fully described and no
        code fact fits with anything in their places), otherwise unchecked."""
        first = sorted(names)[0]
        file, line = checked.file(), checked.line()
        fits = any(
            len(f.args) == len(checked.args)
            and all(a in names or a == b for a, b in zip(checked.args, f.args, strict=True))
            for f in self.code.by_pred(checked.pred)
        )
        if not fits and file is not None and (file, line) in self.described:
            why = (
                f"{file} line {line} is fully described by the code facts, and nothing there "
                f"fits this, whatever {', '.join(sorted(names))} stand(s) for"
            )
            return Claim(fact, ClaimStatus.CONTRADICTED, fact.line(), why)
        why = f"{first} is a temporary of the agent's normalisation that matches none of the code's"
        return Claim(fact, ClaimStatus.UNCHECKED, fact.line(), why)

    def check(self, fact: Fact) -> Claim:
        line = fact.line()
        try:
            status, why = self._check(self._normalise(fact))
        except (SyntaxError, ValueError) as err:
            status, why = ClaimStatus.UNCHECKED, f"could not be checked: {err}"
        return Claim(fact, status, line, why)

    def _normalise(self, fact: Fact) -> Fact:
        positions = _VAR_ARGS.get(fact.pred, ())
        if fact.pred in ("unaryFun", "binaryFun"):
            return fact
        args = tuple(
            _base(a) if i in positions and isinstance(a, str) else a
            for i, a in enumerate(fact.args)
        )
        return Fact(fact.pred, args)

    def _check(self, fact: Fact) -> tuple[ClaimStatus, str]:
        if fact in self.code:
            return ClaimStatus.SUPPORTED, "in the code facts"
        pred = fact.pred
        if pred == "exprEquiv":
            return self._expr_equiv(str(fact.args[0]), str(fact.args[1]), str(fact.args[2]))
        if pred == "varMap":
            return self._var_map(fact)
        if pred == "isConstantValue":
            return self._constant(str(fact.args[0]))
        if pred == "flow" and self._reaches(fact.args[:3], fact.args[3:]):
            return ClaimStatus.SUPPORTED, "derivable: a chain of flows in the code facts"
        if pred == "controldep":
            found = self._controldep(fact)
            if found is not None:
                return found
        if pred in ("entryMap", "exitMap"):
            kind = "entry" if pred == "entryMap" else "exit"
            ends = [(fact.args[0], fact.args[1]), (fact.args[2], fact.args[3])]
            known = {(f.args[-2], f.args[-1]) for f in self.code.by_pred(kind)}
            if all(end in known for end in ends):
                return ClaimStatus.SUPPORTED, f"both are {kind} points of the code"
            if all(str(f) in self.files for f, _ in ends):
                return ClaimStatus.CONTRADICTED, f"not an {kind} point of the code"
            return ClaimStatus.UNCHECKED, "about code outside the two versions"
        file = fact.file()
        line = fact.line()
        if pred in ("unaryFun", "binaryFun") and not all(
            _is_name(str(a)) for a in fact.args[1:-2]
        ):
            why = "an operand is an expression; the code names it by a temporary"
            return ClaimStatus.UNCHECKED, why
        if file is None or file not in self.files:
            return ClaimStatus.UNCHECKED, f"not about the code of either version ({file})"
        if pred == "entry":
            return ClaimStatus.CONTRADICTED, "the function's entry is elsewhere"
        if line is not None and (file, line) in self.described:
            return (
                ClaimStatus.CONTRADICTED,
                f"{file} line {line} is fully described by the code facts, without this",
            )
        return ClaimStatus.UNCHECKED, f"{file} line {line} is not fully described by the front end"

    def _reaches(self, src: tuple[object, ...], dst: tuple[object, ...]) -> bool:
        seen = {src}
        todo = [src]
        while todo:
            for nxt in self.flows.get(todo.pop(), ()):
                if nxt == dst:
                    return True
                if nxt not in seen:
                    seen.add(nxt)
                    todo.append(nxt)
        return False

    def _controldep(self, fact: Fact) -> tuple[ClaimStatus, str] | None:
        """A condition given as expression text rather than the code's condition variable."""
        x, f1, l1, cond, choice, f2, l2 = fact.args
        text = self._condition_text(str(f2), int(l2))
        if text is None or _canonical(str(cond)) != text:
            return None
        for f in self.code.by_pred("controldep"):
            if (f.args[0], f.args[1], f.args[2], f.args[4], f.args[5], f.args[6]) == (
                x, f1, l1, choice, f2, l2
            ):
                return ClaimStatus.SUPPORTED, f"the code's condition at line {l2} is {text}"
        return None

    def _condition_text(self, file: str, line: int) -> str | None:
        source = self.sources.get(file)
        if source is None:
            return None
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.If | ast.While) and node.lineno == line:
                return ast.unparse(node.test)
        return None

    def _constant(self, name: str) -> tuple[ClaimStatus, str]:
        try:
            ast.literal_eval(name)
        except (ValueError, SyntaxError):
            pass
        else:
            return ClaimStatus.SUPPORTED, "a literal"
        if any(f.args[0] == name and f.args[2] != 0 for f in self.code.by_pred("def")):
            return ClaimStatus.CONTRADICTED, f"{name} is a variable the code assigns"
        return ClaimStatus.UNCHECKED, f"{name} is not a literal of the code"

    # --- obligations for the prover ---------------------------------------------------------

    def _var_map(self, fact: Fact) -> tuple[ClaimStatus, str]:
        x, f1, l1, y, f2, l2 = fact.args
        for var, file, line in ((x, f1, l1), (y, f2, l2)):
            if Fact("def", (var, file, line)) not in self.code:
                if (file, line) in self.described:
                    return ClaimStatus.CONTRADICTED, f"{var} is not defined at {file} line {line}"
                return ClaimStatus.UNCHECKED, f"{var} at {file} line {line} is not described"
        e1 = self._closed_form(str(x), str(f1), int(l1), 0)
        e2 = self._closed_form(str(y), str(f2), int(l2), 0)
        if e1 is None or e2 is None:
            return (
                ClaimStatus.UNCHECKED,
                "the definitions depend on more than the parameters along one path",
            )
        if e1 == e2 and self._same_context(e1):
            return ClaimStatus.SUPPORTED, f"both compute {e1}"
        sig1 = self._signature(str(f1))
        sig2 = self._signature(str(f2))
        if sig1 is None or sig2 is None:
            return ClaimStatus.UNCHECKED, "the version's source is not available to the prover"
        return self._prove(
            self.sources[str(f1)] + f"\n\ndef {_CLAIM_FN}({sig1}):\n    return {e1}\n",
            self.sources[str(f2)] + f"\n\ndef {_CLAIM_FN}({sig2}):\n    return {e2}\n",
            f"{x} = {e1} and {y} = {e2}",
        )

    def _same_context(self, expr: str) -> bool:
        """Whether the same text means the same in both versions: it does not call the
        function itself, and the two modules are the same once the function is left out
        (a helper it calls, or a method its operators dispatch to, may have changed: then
        ``helper(x)`` on both sides is a claim for the prover, not a match)."""
        keys = [self._context_key(file) for file in (_BEFORE, _AFTER)]
        if keys[0] is None or keys[0] != keys[1]:
            return False
        names = {n.id for n in ast.walk(ast.parse(expr, mode="eval")) if isinstance(n, ast.Name)}
        return not (names & {key[1] for key in keys if key is not None})

    def _context_key(self, file: str) -> tuple[str, str] | None:
        """The dump of ``file``'s module with the function under review left out, and the
        function's name; None when the source or the function is not found."""
        source = self.sources.get(file)
        entries = [int(f.args[2]) for f in self.code.by_pred("entry") if f.args[1] == file]
        if source is None or not entries:
            return None
        tree = ast.parse(source)
        for parent in ast.walk(tree):
            for body in ("body", "orelse", "finalbody", "handlers"):
                nodes = getattr(parent, body, None)
                if not isinstance(nodes, list):
                    continue
                for i, node in enumerate(nodes):
                    if (isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
                            and node.lineno == entries[0]):
                        nodes[i] = ast.Pass()
                        return ast.dump(tree), node.name
        return None

    def _prove(self, before: str, after: str, claim: str) -> tuple[ClaimStatus, str]:
        """One prover check, unless the cap on them is reached."""
        allowance = self.allowance
        known = allowance.done.get((before, after))
        if known is not None:
            return known
        if allowance.left is not None:
            if allowance.left <= 0:
                return ClaimStatus.UNCHECKED, f"not sent to the prover (cap reached): {claim}"
            allowance.left -= 1
        outcome = _from_result(check_pair(before, after, _CLAIM_FN, budget=self.budget), claim)
        allowance.done[(before, after)] = outcome
        return outcome

    def _closed_form(self, var: str, file: str, line: int, depth: int) -> str | None:
        """``var``'s value at its definition as an expression over parameters and constants,
        when it has one on every path (a single reaching definition, no conditions)."""
        if depth > 40:
            return None
        if line == 0:
            return var
        entry = {int(f.args[2]) for f in self.code.by_pred("entry") if f.args[1] == file}
        if line in entry:
            return var
        for f in self.code.by_pred("controldep"):
            if f.args[:3] == (var, file, line) and not str(f.args[3]).startswith("Entry"):
                return None
        for f in self.code.by_pred("unaryFunDef"):
            if (f.args[0], f.args[3], f.args[4]) == (var, file, line):
                a = self._operand(str(f.args[2]), file, line, depth)
                return None if a is None else _render(str(f.args[1]), [a])
        for f in self.code.by_pred("binaryFunDef"):
            if (f.args[0], f.args[4], f.args[5]) == (var, file, line):
                a = self._operand(str(f.args[2]), file, line, depth)
                b = self._operand(str(f.args[3]), file, line, depth)
                return None if a is None or b is None else _render(str(f.args[1]), [a, b])
        copies = [
            f.args[0]
            for f in self.code.by_pred("flow")
            if f.args[1:] == (file, line, var, file, line) and f.args[0] != var
        ]
        if len(copies) == 1:
            return self._operand(str(copies[0]), file, line, depth)
        return None

    def _operand(self, name: str, file: str, line: int, depth: int) -> str | None:
        reaching = [
            int(f.args[2])
            for f in self.code.by_pred("flow")
            if f.args[0] == name and f.args[3:] == (name, file, line) and f.args[1] == file
        ]
        if len(reaching) != 1:
            return None
        return self._closed_form(name, file, reaching[0], depth + 1)

    def _signature(self, file: str) -> str | None:
        source = self.sources.get(file)
        entries = [int(f.args[2]) for f in self.code.by_pred("entry") if f.args[1] == file]
        if source is None or not entries:
            return None
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.FunctionDef) and node.lineno == entries[0]:
                return ast.unparse(node.args)
        return None

    def _expr_equiv(self, e1: str, e2: str, params: str) -> tuple[ClaimStatus, str]:
        trees = [ast.parse(e, mode="eval") for e in (e1, e2)]
        for tree in trees:
            for node in ast.walk(tree):
                if isinstance(node, ast.Call) and not isinstance(node.func, ast.Name):
                    what = ast.unparse(node.func)
                    return ClaimStatus.UNCHECKED, f"{what}() cannot be resolved to a definition"
        defs, missing = self._helpers(trees)
        if missing:
            return (
                ClaimStatus.UNCHECKED,
                "assumption: no definition of " + ", ".join(sorted(missing)) + " in the sources",
            )
        # A helper the versions define differently: which one the claim means is not said
        # (the same call of a changed helper is no match, nor a contradiction).
        changed = sorted(name for name in defs if not self._same_definition(name))
        if changed:
            return (ClaimStatus.UNCHECKED,
                    f"{', '.join(changed)} differ(s) between the versions: the claim does not "
                    "say which version's it means")
        signature = params.strip() or self._guess_signature(trees, defs)
        module = "\n\n".join(defs.values())
        return self._prove(
            f"{module}\n\ndef {_CLAIM_FN}({signature}):\n    return {e1}\n",
            f"{module}\n\ndef {_CLAIM_FN}({signature}):\n    return {e2}\n",
            f"{e1} == {e2}",
        )

    def _helpers(self, trees: list[ast.Expression]) -> tuple[dict[str, str], set[str]]:
        """Definitions (with their imports) of every function the expressions call."""
        wanted = [n.func.id for t in trees for n in ast.walk(t)
                  if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)]
        defs: dict[str, str] = {}
        missing: set[str] = set()
        while wanted:
            name = wanted.pop()
            if name in defs or name in missing:
                continue
            found = self._find_def(name)
            if found is None:
                if not hasattr(builtins, name):
                    missing.add(name)
                continue
            node, text = found
            defs[name] = text
            wanted += [n.func.id for n in ast.walk(node)
                       if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)]
        return defs, missing

    def _find_def(self, name: str) -> tuple[ast.FunctionDef, str] | None:
        for source in self.sources.values():
            try:
                tree = ast.parse(source)
            except SyntaxError:
                continue
            for node in tree.body:
                if isinstance(node, ast.FunctionDef) and node.name == name:
                    text = ast.get_source_segment(source, node) or ast.unparse(node)
                    return node, text
        return None

    def _same_definition(self, name: str) -> bool:
        """Whether every version that defines the top-level function ``name`` defines it
        alike (compared as code, not text)."""
        found: set[str] = set()
        for source in self.sources.values():
            try:
                tree = ast.parse(source)
            except SyntaxError:
                return False
            found.update(ast.dump(node) for node in tree.body
                         if isinstance(node, ast.FunctionDef) and node.name == name)
        return len(found) <= 1

    def _guess_signature(self, trees: list[ast.Expression], defs: Mapping[str, str]) -> str:
        """Free names as parameters, typed like the unit's parameters of the same name."""
        called = {n.func.id for t in trees for n in ast.walk(t)
                  if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}
        names: list[str] = []
        for tree in trees:
            for node in ast.walk(tree):
                if (isinstance(node, ast.Name) and node.id not in called and node.id not in defs
                        and not hasattr(builtins, node.id) and node.id not in names):
                    names.append(node.id)
        annotations: dict[str, str] = {}
        for file in sorted(self.files):
            source = self.sources.get(file)
            sig = self._signature(file)
            if source is None or sig is None:
                continue
            for arg in ast.parse(f"def _({sig}): pass").body[0].args.args:  # type: ignore[attr-defined]
                if arg.annotation is not None:
                    annotations.setdefault(arg.arg, ast.unparse(arg.annotation))
        return ", ".join(f"{n}: {annotations[n]}" if n in annotations else n for n in names)


def _is_name(text: str) -> bool:
    """A variable, temporary or literal, not a compound expression."""
    if text.startswith("$") or text.isidentifier():
        return True
    try:
        ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return False
    return True


def _canonical(expr: str) -> str | None:
    try:
        return ast.unparse(ast.parse(expr, mode="eval"))
    except SyntaxError:
        return None


def _render(op: str, args: list[str]) -> str | None:
    """Python text for a normalised operation, or None for ones without a plain form."""
    if len(args) == 2 and op in _BINARY:
        return f"({args[0]} {op} {args[1]})"
    if len(args) == 1 and op in _UNARY:
        return f"({op} {args[0]})"
    if op == "[]" and len(args) == 2:
        return f"{args[0]}[{args[1]}]"
    if op.startswith(".") and op.endswith("()") and op[1:-2].isidentifier():
        return f"{args[0]}.{op[1:-2]}({', '.join(args[1:])})"
    if op.startswith(".") and op[1:].isidentifier() and len(args) == 1:
        return f"{args[0]}.{op[1:]}"
    if op.isidentifier():
        return f"{op}({'' if args == ['()'] else ', '.join(args)})"
    return None


def _from_result(result: Result, claim: str) -> tuple[ClaimStatus, str]:
    if result.verdict is Verdict.VERIFIED:
        return ClaimStatus.SUPPORTED, f"proved: {claim} ({result.method or 'smt'})"
    if result.verdict is Verdict.REFUTED and result.counterexample is not None:
        cx = result.counterexample
        return (
            ClaimStatus.CONTRADICTED,
            f"refuted: {claim} fails on input ({', '.join(cx.args)}): {cx.difference}",
        )
    return ClaimStatus.UNCHECKED, f"the prover could not decide {claim}: {result.detail}"
