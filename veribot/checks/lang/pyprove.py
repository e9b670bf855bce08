"""The Z3 side of the Python equivalence check: a proof, a candidate input, or why neither.

Both versions are executed symbolically on the same inputs (``pyexec``). The solver is
asked for an input on which their exits differ; ``unsat`` with no input left beyond the
unrolling bound is a proof. When loops could run longer than the bound, ``pyinduct``
tries to prove them for every trip count. Candidates are only candidates: the caller
executes them before anything is called refuted.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import z3

from veribot.checks.lang import (
    pygen,
    pyimports,
    pyobject,
    pyprobe,
    pyshared,
    pysignature,
    pytry,
)
from veribot.checks.lang.pyexec import Executor, Exhausted, Exit, Limits, SharedCall
from veribot.checks.lang.pyinterfere import interference, reads
from veribot.checks.lang.pymodule import Module
from veribot.checks.lang.pysignature import Signature
from veribot.checks.lang.pytypes import (
    ListT,
    PyType,
    TupleT,
    domain,
    from_annotation,
    is_known,
)
from veribot.checks.lang.pyvalues import Fresh, Unsupported, V, literal, merge_many, same_value
from veribot.checks.smt import SolverLimits, Status, check

# `python -O` drops assert statements: a proof over code with asserts holds with them on.
ASSERTS_ENABLED = "asserts are enabled (not run with python -O)"


@dataclass(frozen=True)
class Outcome:
    """What the prover established.

    ``kind`` is one of: ``proved``, ``candidates`` (inputs to execute), ``bounded`` (no
    difference up to the bound, nothing beyond it shown), ``unsupported``,
    ``unknown-type``, ``solver-unknown``.
    """

    kind: str
    detail: str
    method: str = ""
    candidates: tuple[tuple[str, ...], ...] = ()
    line: int | None = None
    construct: str = ""
    assumptions: tuple[str, ...] = ()
    shared_helpers: bool = False  # candidates came from a model with arbitrary helpers
    runs_at_import: bool = False  # a proof that rests on module-level code importing fine


@dataclass
class Problem:
    """Both versions executed on the same symbolic inputs."""

    names: list[str]
    types: list[PyType]
    inputs: list[V]
    exits_a: list[Exit]
    exits_b: list[Exit]
    exhausted: list[Exhausted]
    assumptions: list[str] = field(default_factory=list)
    fn_a: ast.FunctionDef | None = None
    fn_b: ast.FunctionDef | None = None
    module_a: Module | None = None
    module_b: Module | None = None
    helpers: dict[str, SharedCall] = field(default_factory=dict)
    runs_at_import: bool = False  # module-level code runs: check the modules import
    # A method lowered to a function of its attributes (pyobject): the inputs are attribute
    # values, not a call that can be executed.
    method: bool = False


def find_function(tree: ast.Module, entry: str) -> ast.FunctionDef | None:
    """The top-level function named ``entry``; methods are addressed as ``Class.method``."""
    parts = entry.split(".")
    body: list[ast.stmt] = tree.body
    node: ast.AST | None = None
    for i, part in enumerate(parts):
        node = None
        for stmt in body:
            is_last = i == len(parts) - 1
            wanted = ast.FunctionDef if is_last else ast.ClassDef
            if isinstance(stmt, wanted) and stmt.name == part:
                node = stmt
        if node is None:
            return None
        if isinstance(node, ast.ClassDef):
            body = node.body
    return node if isinstance(node, ast.FunctionDef) else None


def parameter_types(
    fn_a: ast.FunctionDef,
    fn_b: ast.FunctionDef,
    given: Mapping[str, PyType] | None,
    module_a: Module,
    module_b: Module,
) -> tuple[list[str], list[PyType], list[str]]:
    """Parameter names and types, and the assumptions they rest on (as sentences).

    The signatures must be the same (names, kinds, defaults: see ``pysignature``); every
    parameter is listed, keyword-only ones included. A call may leave a defaulted
    parameter out, so its domain is widened by its default's value (``k: int = None``
    ranges over ``int | None``).
    """
    sig_a, sig_b = Signature.of(fn_a, module_a), Signature.of(fn_b, module_b)
    if pysignature.changes(sig_a, sig_b):
        raise Unsupported(f"a change of signature ({pysignature.describe(sig_a, sig_b)})",
                          fn_b.lineno)
    names: list[str] = []
    types: list[PyType] = []
    notes: list[str] = []
    annotations_b = {p.name: p.annotation for p in sig_b.params}
    for p in sig_a.params:
        if p.kind == pysignature.VAR_KEYWORD:
            raise Unsupported(f"{p.kind} parameters", fn_b.lineno)
        if p.kind == pysignature.VAR_POSITIONAL:
            # `*args: T` is a tuple of T of any length (its annotation names the items).
            item = from_annotation(p.annotation)
            if not is_known(item):
                item = from_annotation(annotations_b.get(p.name))
            t = TupleT(homogeneous=item) if is_known(item) else item
            names.append(p.name)
            types.append(t)
            if is_known(t):
                notes.append(f"`*{p.name}`: {t.text()}, of any length (annotation of its "
                             "items)")
            continue
        if given is not None and p.name in given:
            t = given[p.name]
            source = "given"
        else:
            t = from_annotation(p.annotation)
            if not is_known(t):
                t = from_annotation(annotations_b.get(p.name))
            source = "annotation"
        if p.default is not None:
            if not p.default.known:
                raise Unsupported(
                    f"the default of `{p.name}` ({p.default.text}: {p.default.why})",
                    fn_b.lineno,
                )
            value_t = pysignature.type_of_default(p.default)
            if value_t is None:
                raise Unsupported(
                    f"the default of `{p.name}` ({p.default.text}), a value outside the model",
                    fn_b.lineno,
                )
            if is_known(t) and not pysignature.fits(p.default.value, t):
                t = pysignature.widen(t, value_t)
                source += f", widened by its default {p.default.text}"
        names.append(p.name)
        types.append(t)
        if is_known(t):
            notes.append(f"`{p.name}`: {t.text()} ({source})")
    return names, types, notes


def build(
    tree_a: ast.Module,
    tree_b: ast.Module,
    entry: str,
    given: Mapping[str, PyType] | None,
    limits: Limits,
    *,
    shared: bool = True,
    wrap_helper: Callable[[pyshared.Helper, Module, SharedCall], SharedCall] | None = None,
) -> Problem:
    """Both versions executed on the same inputs. ``wrap_helper`` may narrow a shared
    helper's arbitrary model (``checks.hints``: by a lemma proven on its body)."""
    fn_a = find_function(tree_a, entry)
    fn_b = find_function(tree_b, entry)
    if fn_a is None or fn_b is None:
        raise LookupError(entry)
    method_notes: tuple[str, ...] = ()
    trusted: list[str] = []  # assumptions the interference check made
    if "." in entry:
        # Code of the module that may change the class after import (`type(self).k = 5`
        # in another method, `C.k = 5` in a helper): read on the modules as written,
        # with the class as what the method reads.
        for tree in (tree_a, tree_b):
            found = interference(tree, None, entry.split(".")[0], trusted)
            if found is not None:
                raise Unsupported(
                    f"code that may change what the method reads ({found.what})", found.line
                )
        # `self` as an object of its class: the method as a module function (pyobject).
        lowered = pyobject.lower(tree_a, tree_b, entry)
        tree_a, tree_b, entry = lowered.tree_a, lowered.tree_b, lowered.entry
        method_notes = lowered.assumptions
        fn_a, fn_b = find_function(tree_a, entry), find_function(tree_b, entry)
        if fn_a is None or fn_b is None:
            raise LookupError(entry)
    module_a, module_b = Module.of(tree_a), Module.of(tree_b)
    names, types, notes = parameter_types(fn_a, fn_b, given, module_a, module_b)
    if method_notes:  # the attributes' types are in the method's own assumption
        notes[:] = [*method_notes, *(n for n in notes if not n.startswith("`_vb_self_"))]
    unknown = [(n, t) for n, t in zip(names, types, strict=True) if not is_known(t)]
    if unknown:
        raise UnknownTypes([n for n, _ in unknown], [t for _, t in unknown])
    fresh = Fresh()
    # The typing rules widen each annotation: an int parameter also takes True and False.
    inputs = [fresh.value(domain(t), n) for n, t in zip(names, types, strict=True)]
    if "." not in entry and (
        entry not in module_a.functions or entry not in module_b.functions
    ):
        raise Unsupported("a function name that is bound more than once in its module")
    if module_a.imports != module_b.imports:
        changed = pyimports.change(tree_a, tree_b, reads(tree_a, entry) | reads(tree_b, entry))
        if changed is not None:
            raise Unsupported(f"a change in the module's imports ({changed})", fn_b.lineno)
        shown = ", ".join(f"`{n}`" for n in pyimports.changed_names(tree_a, tree_b))
        notes.append(f"the imports differ only in names this function does not read ({shown})"
                     "; they run the same modules in the same order")
    if module_a.imports or module_b.imports:
        notes.append(
            "the module's imports do not change this module's functions and constants, or "
            "the builtins, when they run"
        )
    active_lines = sorted(set(module_a.active_code) | set(module_b.active_code))
    if active_lines:
        where = ", ".join(str(n) for n in active_lines[:5])
        notes.append(
            f"the module-level code (line {where}) runs without error and changes nothing "
            "this function uses"
        )
    helpers = pyshared.shared_helpers(tree_a, tree_b, module_a, module_b) if shared else {}
    calls: dict[str, SharedCall] = {
        name: functools.partial(pyshared.call, h) for name, h in helpers.items()
    }
    if wrap_helper is not None:
        calls = {name: wrap_helper(helpers[name], module_a, c) for name, c in calls.items()}
    ex_a = Executor(module_a, fresh, limits, calls)
    ex_b = Executor(module_b, fresh, limits, calls)
    result_a = ex_a.run(fn_a, inputs)
    result_b = ex_b.run(fn_b, inputs)
    # After the model ran: where it stops on the code itself, that is the better reason.
    for tree, module in ((tree_a, module_a), (tree_b, module_b)):
        found = interference(tree, module, entry, trusted)
        if found is not None:
            raise Unsupported(
                f"code that may change what the function reads ({found.what})", found.line
            )
    notes += [t for t in trusted if t not in notes]
    if any(isinstance(t, ListT) for t in types):
        notes.append("list arguments are distinct objects (they do not alias each other)")
    if any(isinstance(n, ast.Assert) for tree in (tree_a, tree_b) for n in ast.walk(tree)):
        notes.append(ASSERTS_ENABLED)
    trees = (tree_a, tree_b)
    if any(isinstance(n, ast.Try) for tree in trees for n in ast.walk(tree)):
        notes.append(pytry.NOT_RAISED)
    if any(pygen.is_generator(f) or pygen.uses_iterators(f) for f in (fn_a, fn_b)):
        notes.append(pygen.DRIVEN)
    if names:
        notes.append(DOMAIN_ASSUMPTION)
    for name in sorted(helpers):
        notes.append(
            f"`{name}` is the same in both versions and was taken as an arbitrary function "
            "of its arguments"
        )
    exits_a, exits_b = result_a.exits, result_b.exits
    if pygen.is_generator(fn_a) != pygen.is_generator(fn_b):
        # A generator function raises when it is consumed, never when it is called: the
        # model runs its body inside the call, so its raises are told apart here.
        exits_a, exits_b = pygen.consumed_raises(fn_a, exits_a), pygen.consumed_raises(
            fn_b, exits_b)
    return Problem(
        names,
        types,
        inputs,
        exits_a,
        exits_b,
        result_a.exhausted + result_b.exhausted,
        notes,
        fn_a,
        fn_b,
        module_a,
        module_b,
        calls,
        bool(active_lines),
        bool(method_notes),
    )


DOMAIN_ASSUMPTION = (
    "arguments are instances of the builtin types as the typing rules admit them (a bool "
    "where int is declared, an int or a bool where float is, a list or a tuple, or a str, "
    "where Sequence is), not of user subclasses that override operators (an IntEnum, "
    "`class I(int)`) nor other sequence types (range, bytes, deque)"
)


class UnknownTypes(Exception):
    """Parameters whose types the model does not know (``types``: as read, by name)."""

    def __init__(self, names: list[str], types: Sequence[PyType] = ()) -> None:
        self.names = names
        self.types = tuple(types)
        super().__init__(", ".join(names))


def exits_differ(exits_a: Sequence[Exit], exits_b: Sequence[Exit]) -> z3.BoolRef:
    """Inputs on which the two sets of exits disagree (value, exception or mutation)."""
    cases = []
    for a in _grouped(exits_a):
        for b in _grouped(exits_b):
            cases.append(z3.And(a.guard, b.guard, z3.Not(same_exit(a, b))))
    return z3.Or(cases) if cases else z3.BoolVal(False)


def _grouped(exits: Sequence[Exit]) -> list[Exit]:
    """Raises of the same exception with the same argument contents, as one exit; returns
    with the same argument contents, as one exit whose value is chosen by the guards.

    Exits have disjoint guards. Grouping keeps the difference formula linear in the number
    of exits (a long ``elif`` chain of returns) instead of quadratic.
    """
    groups: dict[tuple[object, ...], list[Exit]] = {}
    returns: dict[tuple[int, ...], list[Exit]] = {}
    kept: list[Exit] = []
    for e in exits:
        if z3.is_false(e.guard):
            continue
        if e.value is not None:
            returns.setdefault(tuple(p.get_id() for p in e.params), []).append(e)
            continue
        key = (
            e.exc,
            None if e.exc_term is None else e.exc_term.get_id(),
            tuple(p.get_id() for p in e.params),
        )
        groups.setdefault(key, []).append(e)
    for members in groups.values():
        first = members[0]
        guard = z3.Or([m.guard for m in members]) if len(members) > 1 else first.guard
        kept.append(Exit(guard, None, first.exc, first.params, first.line, first.exc_term))
    for members in returns.values():
        first = members[0]
        if len(members) == 1:
            kept.append(first)
            continue
        parts = [(m.guard, m.value) for m in members if m.value is not None]
        value = merge_many(parts[:-1], parts[-1][1])
        guard = z3.Or([m.guard for m in members])
        kept.append(Exit(guard, value, None, first.params, first.line))
    return kept


def same_exit(a: Exit, b: Exit) -> z3.BoolRef:
    if (a.value is None) != (b.value is None):
        return z3.BoolVal(False)
    if a.value is None:
        same = z3.BoolVal(a.exc == b.exc)
        if a.exc_term is not None or b.exc_term is not None:
            if a.exc_term is None or b.exc_term is None:
                return z3.BoolVal(False)
            same = z3.And(same, a.exc_term == b.exc_term)
    else:
        assert b.value is not None
        same = same_value(a.value, b.value)
    params = [x == y for x, y in zip(a.params, b.params, strict=True)]
    return z3.And(same, *params)


def search_bounded(problem: Problem, solver: SolverLimits, tries: int = 3) -> Outcome:
    """Ask for differing inputs within the bound; prove if nothing lies beyond it."""
    differ = exits_differ(problem.exits_a, problem.exits_b)
    beyond = z3.Or([e.guard for e in problem.exhausted]) if problem.exhausted else None
    within = [z3.Not(beyond)] if beyond is not None else []
    candidates: list[tuple[str, ...]] = []
    blocked: list[z3.BoolRef] = []
    constants = _int_constants(problem)
    sampled = pyprobe.probe(z3.And(differ, *within), problem.inputs, constants=constants)
    if sampled is not None:
        return Outcome(
            "candidates", "a sample input tells the versions apart in the model",
            candidates=(call_texts(problem, sampled),),
        )
    # Small inputs first: a counterexample a person can read at a glance.
    small = pyprobe.small_inputs(problem.inputs)
    for _ in range(tries):
        facts = [differ, *within, *blocked]
        answer = check([*facts, *small], _share(solver, 0.3)) if small else None
        if answer is None or answer.status is not Status.SAT:
            small = []  # nothing small: look everywhere from now on
            answer = check(facts, solver)
        if answer.status is Status.SAT:
            assert answer.model is not None
            args = tuple(literal(answer.model, v) for v in problem.inputs)
            candidates.append(call_texts(problem, args))
            blocked.append(block(answer.model, problem.inputs))
            continue
        if answer.status is Status.UNKNOWN:
            if candidates:
                break
            timeout = "timeout" in answer.why or "canceled" in answer.why
            return Outcome(
                "solver-unknown",
                f"the solver gave up ({answer.why})",
                construct="timeout" if timeout else "",
            )
        break  # unsat: no (more) differences within the bound
    if candidates:
        return Outcome("candidates", "the solver found inputs that tell the versions apart",
                       candidates=tuple(candidates))
    gap = uncovered(problem.exits_a, within, solver) or uncovered(problem.exits_b, within, solver)
    if gap:
        return Outcome("solver-unknown", f"the model could not account for every input ({gap})")
    if beyond is None:
        return Outcome("proved", "no input tells the versions apart", method="smt: complete model",
                       assumptions=tuple(problem.assumptions))
    answer = check([beyond], solver)
    if answer.status is Status.UNSAT:
        return Outcome("proved", "no input tells the versions apart; every loop ends within "
                       "the unrolled iterations for all inputs",
                       method="smt: loops fully unrolled (trip count bounded by the domain)",
                       assumptions=tuple(problem.assumptions))
    first = min(problem.exhausted, key=lambda e: e.line)
    what = "loop" if first.why == "loop-bound" else "recursion"
    return Outcome(
        "bounded",
        f"no difference for inputs that need at most the unrolled iterations, but the {what} "
        f"at line {first.line} can run longer",
        line=first.line,
        construct=first.why,
        assumptions=tuple(problem.assumptions),
    )


def call_texts(problem: Problem, literals: Sequence[str]) -> tuple[str, ...]:
    """The arguments of a call passing ``literals``, one per input: the items of a
    ``*args`` tuple spread after the positional ones, keyword-only ones by name. (For a
    method the inputs are attribute values, shown as they are.)"""
    fn = problem.fn_a
    if fn is None or problem.method:
        return tuple(literals)
    a = fn.args
    n_positional = len(a.posonlyargs) + len(a.args)
    out = list(literals[:n_positional])
    rest = list(literals[n_positional:])
    if a.vararg is not None and rest:
        star = ast.parse(rest.pop(0), mode="eval").body
        if not isinstance(star, ast.Tuple):
            raise ValueError(f"a *args value that is not a tuple: {ast.unparse(star)}")
        out += [ast.unparse(e) for e in star.elts]
    out += [f"{p.arg}={text}" for p, text in zip(a.kwonlyargs, rest, strict=False)]
    return tuple(out)


def _share(limits: SolverLimits, fraction: float) -> SolverLimits:
    return SolverLimits(max(100, int(limits.timeout_ms * fraction)), limits.rlimit)


def _int_constants(problem: Problem) -> list[int]:
    """Integer literals of both functions, and their neighbours: likely boundaries."""
    found: set[int] = set()
    for fn in (problem.fn_a, problem.fn_b):
        for node in ast.walk(fn) if fn is not None else ():
            value = node.value if isinstance(node, ast.Constant) else None
            if type(value) is int and abs(value) < 10**6:
                found.update((value - 1, value, value + 1))
    return sorted(found)


def uncovered(exits: Sequence[Exit], facts: Sequence[z3.BoolRef], solver: SolverLimits) -> str:
    """Why some input satisfying ``facts`` has no exit, or "" if every input has one.

    A proof over exits is only a proof if the exits cover every input; this guards against
    a path the model dropped.
    """
    none = z3.Not(z3.Or([e.guard for e in exits])) if exits else z3.BoolVal(True)
    answer = check([*facts, none], solver)
    if answer.status is Status.UNSAT:
        return ""
    return "an input reaches no exit" if answer.status is Status.SAT else answer.why


def block(model: z3.ModelRef, inputs: Sequence[V]) -> z3.BoolRef:
    """A constraint that excludes the concrete input of ``model``."""
    from veribot.checks.lang.pyvalues import (
        SBool,
        SFloat,
        SInt,
        SIntB,
        SSeq,
        SStr,
        STuple,
        SUnion,
    )

    terms: list[z3.ExprRef] = []

    def collect(v: V) -> None:
        if isinstance(v, SInt | SIntB | SBool | SFloat | SStr | SSeq):
            terms.append(v.e)
        elif isinstance(v, STuple):
            for i in v.items:
                collect(i)
        elif isinstance(v, SUnion):
            for g, a in v.alts:
                terms.append(g)
                collect(a)

    for v in inputs:
        collect(v)
    if not terms:
        return z3.BoolVal(False)
    return z3.Or([t != model.eval(t, model_completion=True) for t in terms])
