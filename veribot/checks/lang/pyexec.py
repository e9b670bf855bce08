"""Symbolic execution of one Python function into Z3: every way it can end, with guards.

The executor walks the AST once, merging paths at join points (values become ``If``
terms), so the result is a small set of *exits*: "returns V when G", "raises E when G",
each with the final contents of the list parameters. Loops are unrolled to a bound and
the inputs that would need more iterations are collected as *exhausted* guards, so a
bounded result is never mistaken for a complete one. Anything outside the model raises
``Unsupported`` with the construct and line; nothing is approximated silently.
"""

from __future__ import annotations

import ast
import builtins
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Any

import z3

from veribot.checks.lang import pygen, pytry
from veribot.checks.lang.pybuiltins import Builtins
from veribot.checks.lang.pymodule import BUILTIN_EXCEPTIONS, MODELLED_BUILTINS, Module
from veribot.checks.lang.pyops import (
    FALSE,
    MUTATING_METHODS,
    TRUE,
    common_elem_type,
)
from veribot.checks.lang.pytypes import (
    INT_OR_BOOL,
    IntT,
    PyType,
)
from veribot.checks.lang.pyvalues import (
    FLOAT,
    Fresh,
    OutOfTime,
    SBool,
    SFloat,
    SInt,
    SNone,
    SRange,
    SSeq,
    SStr,
    STuple,
    SUnbound,
    SUnion,
    Unsupported,
    V,
    alternatives,
    as_codes,
    as_int_or_bool,
    int_val,
    merge,
    merge_many,
    sort_of,
    str_val,
    term,
    wrap,
)

# A helper shared by both versions: argument values -> (value, returns normally, outcome),
# or None when it cannot be applied to these arguments (see pyshared).
SharedCall = Callable[[Sequence[V]], "tuple[V, z3.BoolRef, z3.ArithRef] | None"]

# Builtins a generator expression may be passed to, as the only argument.
CONSUMERS = frozenset({"any", "all", "sum", "min", "max", "list", "tuple"})




@dataclass(frozen=True)
class Exit:
    """One way the function ends: returns ``value`` or raises ``exc``, when ``guard``."""

    guard: z3.BoolRef
    value: V | None  # None when it raises
    exc: str | None
    params: tuple[z3.ExprRef, ...]  # final contents of the list parameters
    line: int
    exc_term: z3.ExprRef | None = None  # which way a shared helper ended, if it raised
    # Raised by a `raise` statement naming its class (the code raises it on purpose), not
    # by an operation, a builtin or a bare `raise` of what another one raised.
    on_purpose: bool = False


@dataclass(frozen=True)
class Exhausted:
    """Inputs on which the model stopped short (loop bound, recursion depth)."""

    guard: z3.BoolRef
    why: str  # "loop-bound" or "recursion-bound"
    line: int


@dataclass
class State:
    """The running path: where it is live, the locals, and the parameter lists' contents."""

    live: z3.BoolRef
    env: dict[str, V]
    objects: dict[int, z3.ExprRef]  # origin -> current contents, for the list parameters

    def fork(self, live: z3.BoolRef) -> State:
        return State(live, dict(self.env), dict(self.objects))


def merge_states(parts: Sequence[State], template: State) -> State:
    """Join states with disjoint ``live`` guards into one."""
    live_parts = [p for p in parts if not z3.is_false(p.live)]
    if not live_parts:
        return State(FALSE, dict(template.env), dict(template.objects))
    if len(live_parts) == 1:
        return live_parts[0]
    live = z3.Or([p.live for p in live_parts])
    names = set().union(*(p.env.keys() for p in live_parts))
    env: dict[str, V] = {}
    for name in names:
        vals = [(p.live, p.env.get(name, SUnbound())) for p in live_parts]
        env[name] = merge_many(vals[:-1], vals[-1][1])
    objects: dict[int, z3.ExprRef] = {}
    for origin in live_parts[0].objects:
        result = live_parts[-1].objects[origin]
        for p in live_parts[:-1]:
            other = p.objects[origin]
            if not other.eq(result):
                result = z3.If(p.live, other, result)
        objects[origin] = result
    return State(live, env, objects)


@dataclass
class Frame:
    """One function activation: its returns, and the loop context for break/continue."""

    returns: list[tuple[z3.BoolRef, V, int]] = field(default_factory=list)
    breaks: list[list[State]] = field(default_factory=list)
    continues: list[list[State]] = field(default_factory=list)
    locals: frozenset[str] = frozenset()
    depth: int = 0
    # Enclosing `try ... finally` statements of this activation (see pytry): a return
    # inside one runs its `finally` first.
    finals: list[Any] = field(default_factory=list)


@dataclass(frozen=True)
class Limits:
    loop_bound: int = 6
    inline_depth: int = 4
    max_nodes: int = 400_000  # a cap on the size of the model, to fail fast instead of slow
    deadline: float | None = None  # time.monotonic() after which building the model stops
    max_inlines: int = 24  # calls inlined in all: recursion fans out fast


@dataclass
class Result:
    """All exits of one execution, and where the model stopped short."""

    exits: list[Exit]
    exhausted: list[Exhausted]
    params: list[V]  # the parameters' initial values, in order


class Executor(Builtins):
    """Symbolically executes functions of one module version."""

    def __init__(
        self,
        module: Module,
        fresh: Fresh,
        limits: Limits,
        helpers: Mapping[str, SharedCall] | None = None,
    ) -> None:
        self.module = module
        self.helpers = dict(helpers or {})
        self.fresh = fresh
        self.limits = limits
        self.exits: list[Exit] = []
        self.exhausted: list[Exhausted] = []
        self.escaped: set[int] = set()
        self.mutated: set[int] = set()  # list objects mutated so far (read by induction)
        self.held: list[int] = []
        self.param_origins: list[int] = []
        # The item type each list parameter's contents are written in: the final contents
        # are compared term for term, so they must stay in that encoding.
        self.param_elems: dict[int, PyType] = {}
        self.steps = 0
        self.line = 0
        self.depth = 0  # inlining depth of the call being executed
        self.inlined = 0  # calls inlined so far
        # try/except and generators (pytry, pygen): the enclosing `try` statements that
        # catch what is raised, the caller's state at each inlining depth, the
        # comprehensions being evaluated (their variables hide outer names), the
        # exceptions being handled (for a bare `raise`), and whether the entry is a
        # generator.
        self.catchers: list[Any] = []
        self.callers: list[State] = []
        self.comp_scopes: list[tuple[int, frozenset[str], dict[str, V]]] = []
        self.handling: list[Any] = []
        self.generator = False
        self.on_purpose = False  # a `raise X` statement is raising (see ``Exit``)

    # -- entry points ---------------------------------------------------------------------

    def start(self, fn: ast.FunctionDef, params: Sequence[V]) -> State:
        """The state on entering ``fn`` with ``params``, the list parameters registered."""
        objects: dict[int, z3.ExprRef] = {}
        for p in params:
            if isinstance(p, SSeq) and p.kind == "list" and p.origin:
                (origin,) = p.origin
                if origin not in self.param_origins:
                    self.param_origins.append(origin)
                    self.param_elems[origin] = p.elem
                objects[origin] = p.e
            else:
                # Lists nested in other arguments are not compared after the call, so
                # mutating them is reported as unsupported.
                self._escape(p)
        if not pygen.is_generator(fn):
            _check_plain_function(fn)
        # The entry is called with every parameter: positional ones by position, then
        # `*args` as one tuple, the keyword-only ones by name (their defaults are part of
        # the domain, see pyprove).
        n_positional = len(fn.args.posonlyargs) + len(fn.args.args)
        n_star = 1 if fn.args.vararg is not None else 0
        kwonly = [p.arg for p in fn.args.kwonlyargs]
        if len(params) != n_positional + n_star + len(kwonly):
            raise Unsupported("a call with missing arguments", fn.lineno)
        kwargs = dict(zip(kwonly, params[n_positional + n_star:], strict=True))
        star = params[n_positional] if n_star else None
        return self._enter(fn, list(params[:n_positional]), kwargs, objects, star=star)

    def run(self, fn: ast.FunctionDef, params: Sequence[V]) -> Result:
        """Execute ``fn`` on ``params`` and collect every exit."""
        self.generator = pygen.is_generator(fn)
        state = self.start(fn, params)
        if self.generator:
            pygen.start(self, state)
        frame = Frame(locals=_local_names(fn), depth=0)
        self.exec_block(fn.body, state, frame)
        if not z3.is_false(state.live):
            end = fn.body[-1].end_lineno or fn.lineno
            self._return(SNone(), state, frame, end)
        if self.generator:
            # PEP 479: a StopIteration leaving a generator's frame is a RuntimeError.
            self.exits = [
                replace(e, exc="RuntimeError") if e.exc == "StopIteration" else e
                for e in self.exits
            ]
        return Result(self.exits, self.exhausted, list(params))

    def _snapshot(self, state: State) -> tuple[z3.ExprRef, ...]:
        return tuple(state.objects[o] for o in self.param_origins)

    # -- statements -----------------------------------------------------------------------

    def exec_block(self, body: Sequence[ast.stmt], state: State, frame: Frame) -> None:
        for stmt in body:
            if z3.is_false(state.live):
                return
            self.exec_stmt(stmt, state, frame)

    def exec_stmt(self, stmt: ast.stmt, state: State, frame: Frame) -> None:
        self.line = stmt.lineno
        self.steps += 1
        if self.limits.deadline is not None and time.monotonic() > self.limits.deadline:
            raise OutOfTime(f"building the model, at line {stmt.lineno}")
        if self.steps > self.limits.max_nodes // 100:
            raise Unsupported("a model this large", stmt.lineno, "too many statements unrolled")
        if isinstance(stmt, ast.Expr):
            if isinstance(stmt.value, ast.Constant):
                return  # docstring or bare constant
            if isinstance(stmt.value, ast.Yield | ast.YieldFrom):
                pygen.exec_yield(self, stmt.value, state)
                return
            self.ev(stmt.value, state)
        elif isinstance(stmt, ast.Assign):
            value = self.ev(stmt.value, state)
            if len(stmt.targets) > 1:
                self._escape(value)
            for target in stmt.targets:
                self.assign(target, value, state)
        elif isinstance(stmt, ast.AnnAssign):
            if stmt.value is not None:
                self.assign(stmt.target, self.ev(stmt.value, state), state)
        elif isinstance(stmt, ast.AugAssign):
            self.aug_assign(stmt, state)
        elif isinstance(stmt, ast.Return):
            value = self.ev(stmt.value, state) if stmt.value is not None else SNone()
            self._return(value, state, frame, stmt.lineno)
        elif isinstance(stmt, ast.If):
            self._if_chain(stmt, state, frame)
        elif isinstance(stmt, ast.For):
            if not pygen.exec_for_yield(self, stmt, state, frame):
                self.exec_for(stmt, state, frame)
        elif isinstance(stmt, ast.While):
            self.exec_while(stmt, state, frame)
        elif isinstance(stmt, ast.Break):
            if not frame.breaks:
                raise Unsupported("break outside a loop", stmt.lineno)
            frame.breaks[-1].append(state.fork(state.live))
            state.live = FALSE
        elif isinstance(stmt, ast.Continue):
            if not frame.continues:
                raise Unsupported("continue outside a loop", stmt.lineno)
            frame.continues[-1].append(state.fork(state.live))
            state.live = FALSE
        elif isinstance(stmt, ast.Pass):
            return
        elif isinstance(stmt, ast.Try):
            pytry.exec_try(self, stmt, state, frame)
        elif isinstance(stmt, ast.Raise):
            self.exec_raise(stmt, state)
        elif isinstance(stmt, ast.Assert):
            ok = self.truthy(self.ev(stmt.test, state), state)
            if stmt.msg is not None:
                # The message is evaluated only when the assertion fails; it may raise.
                with self.assuming(state, z3.Not(ok)):
                    self.ev(stmt.msg, state)
            self.raise_if(z3.Not(ok), "AssertionError", state)
        else:
            raise Unsupported(_construct_name(stmt), stmt.lineno)

    def _return(self, value: V, state: State, frame: Frame, line: int) -> None:
        if frame.finals:
            pytry.intercept_return(self, value, state, frame, line)
            return
        if frame.depth == 0:
            value = pygen.returned(self, value, state)
            state.live = pygen.bounded(self, state.live, state)
            self.exits.append(Exit(state.live, value, None, self._snapshot(state), line))
        else:
            frame.returns.append((state.live, value, line))
        state.live = FALSE

    def _if_chain(self, stmt: ast.If, state: State, frame: Frame) -> None:
        """An ``if``/``elif``/``else`` chain, arm by arm: a long chain must not recurse."""
        arms: list[State] = []
        node = stmt
        while True:
            self.line = node.lineno
            cond = z3.simplify(self.truthy(self.ev(node.test, state), state))
            taken = state.fork(z3.And(state.live, cond))
            if z3.is_false(cond):
                taken.live = FALSE
            else:
                self.exec_block(node.body, taken, frame)
            arms.append(taken)
            state.live = z3.And(state.live, z3.Not(cond))
            if z3.is_true(cond):
                state.live = FALSE
                break
            if len(node.orelse) == 1 and isinstance(node.orelse[0], ast.If):
                node = node.orelse[0]
                continue
            self.exec_block(node.orelse, state, frame)
            break
        joined = merge_states([*arms, state], state)
        state.live, state.env, state.objects = joined.live, joined.env, joined.objects

    def exec_raise(self, stmt: ast.Raise, state: State) -> None:
        if pytry.exec_raise(self, stmt, state):
            return
        exc = stmt.exc
        name = None
        call = exc if isinstance(exc, ast.Call) else None
        if call is not None:
            exc = call.func
        if isinstance(exc, ast.Name):
            name = exc.id
        # Only builtin exception classes: the module's own classes are not modelled, and
        # neither is a builtin name the module binds (`class ValueError(Exception): ...`).
        if name is None or name not in BUILTIN_EXCEPTIONS:
            raise Unsupported("raise of this expression", stmt.lineno)
        if self._shadowed(name) or name in state.env:
            raise Unsupported(f"raise of '{name}', a name the module binds", stmt.lineno)
        # Constructing the exception runs its constructor: only one that makes an
        # instance of exactly the class named, whatever the arguments, is modelled.
        if call is not None and (
            call.keywords or any(isinstance(a, ast.Starred) for a in call.args)
        ):
            raise Unsupported(
                f"keyword or * arguments to the exception class '{name}'", stmt.lineno
            )
        n_args = len(call.args) if call is not None else 0
        if not plain_constructor(name, n_args):
            raise Unsupported(
                f"the constructor of '{name}' with {n_args} argument(s)", stmt.lineno
            )
        if call is not None:
            self.ev_all(call.args, state)
        self.on_purpose = True
        try:
            self.raise_if(TRUE, name, state)
        finally:
            self.on_purpose = False

    def raise_if(
        self, cond: z3.BoolRef, exc: str, state: State, exc_term: z3.ExprRef | None = None
    ) -> None:
        """The current path raises ``exc`` where ``cond`` holds; it goes on where not."""
        cond = z3.simplify(cond)
        if z3.is_false(cond):
            return
        guard = z3.And(state.live, cond)
        if self.catchers:
            pytry.capture(self, guard, exc, state, exc_term)
        else:
            guard = pygen.bounded(self, guard, state, raising=True)
            self.exits.append(Exit(guard, None, exc, self._snapshot(state), self.line, exc_term,
                                   self.on_purpose))
        state.live = z3.And(state.live, z3.Not(cond))

    # -- assignment -----------------------------------------------------------------------

    def assign(self, target: ast.expr, value: V, state: State) -> None:
        if isinstance(target, ast.Name):
            state.env[target.id] = value
        elif isinstance(target, ast.Tuple | ast.List):
            items = self._unpack(value, len(target.elts), state)
            for t, v in zip(target.elts, items, strict=True):
                self.assign(t, v, state)
        elif isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name):
            self._store_item(target, value, state)
        else:
            raise Unsupported(f"assignment to {_construct_name(target)}", self.line)

    def _unpack(self, value: V, n: int, state: State) -> list[V]:
        if isinstance(value, STuple):
            if len(value.items) != n:
                self.raise_if(TRUE, "ValueError", state)
                return [SNone()] * n
            return list(value.items)
        if isinstance(value, SSeq):
            self.raise_if(z3.Length(value.e) != n, "ValueError", state)
            return [wrap(value.elem, value.e[i]) for i in range(n)]
        raise Unsupported(f"unpacking a {type(value).__name__}", self.line)

    def _store_item(
        self, target: ast.Subscript, value: V, state: State, index_v: V | None = None
    ) -> None:
        """``name[index] = value``; ``index_v`` when the index was evaluated already."""
        assert isinstance(target.value, ast.Name)
        seq = self.ev(target.value, state)
        if not (isinstance(seq, SSeq) and seq.kind == "list"):
            raise Unsupported("item assignment on this value", self.line)
        if isinstance(target.slice, ast.Slice):
            raise Unsupported("slice assignment", self.line)
        if index_v is None:
            with self.holding(seq):
                index_v = self.ev(target.slice, state)
        index = self._as_int(index_v, state)
        # The index (or the value of `+=`) may have mutated the list: store into its
        # contents as they are now.
        seq = self.ev(target.value, state)
        if not (isinstance(seq, SSeq) and seq.kind == "list"):
            raise Unsupported("item assignment on this value", self.line)
        n = z3.Length(seq.e)
        idx = z3.If(index < 0, index + n, index)
        self.raise_if(z3.Or(idx < 0, idx >= n), "IndexError", state)
        seq = self._adopt(seq, value)
        item = self._coerce_elem(value, seq.elem)
        new = z3.Concat(
            z3.SubSeq(seq.e, 0, idx), z3.Unit(term(item)), z3.SubSeq(seq.e, idx + 1, n - idx - 1)
        )
        self._mutate(target.value.id, seq, new, state)

    def aug_assign(self, stmt: ast.AugAssign, state: State) -> None:
        target = stmt.target
        if isinstance(target, ast.Name):
            current = self.ev(target, state)
            with self.holding(current):
                operand = self.ev(stmt.value, state)
            in_place = isinstance(stmt.op, ast.Add | ast.Mult)
            if in_place and isinstance(current, SSeq) and current.kind == "list":
                # list += iterable extends the same object in place; list *= n repeats it.
                if isinstance(stmt.op, ast.Add):
                    self._extend(target.id, current, operand, state)
                    return
                repeated = self.repeat(current, operand, state)
                if isinstance(repeated, SSeq):
                    self._mutate(target.id, current, repeated.e, state)
                return
            if in_place and any(
                isinstance(alt, SSeq) and alt.kind == "list" for _, alt in alternatives(current)
            ):
                raise Unsupported("an in-place operator on a value that may be a list", self.line)
            self.assign(target, self.binop(stmt.op, current, operand, state), state)
        elif isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name):
            if isinstance(target.slice, ast.Slice):
                raise Unsupported("slice assignment", self.line)
            # The object and the index are evaluated once, as Python does.
            seq = self.ev(target.value, state)
            with self.holding(seq):
                index_v = self.ev(target.slice, state)
            current = self.index(seq, index_v, state)
            operand = self.ev(stmt.value, state)
            if isinstance(stmt.op, ast.Add | ast.Mult) and any(
                isinstance(alt, SSeq) and alt.kind == "list" for _, alt in alternatives(current)
            ):
                # x[i] += ... mutates the list object x[i], which other names may hold.
                raise Unsupported("an in-place operator on a list item", self.line)
            new = self.binop(stmt.op, current, operand, state)
            self._store_item(target, new, state, index_v)
        else:
            raise Unsupported(f"augmented assignment to {_construct_name(target)}", self.line)

    def _mutate(self, name: str, seq: SSeq, new: z3.ExprRef, state: State) -> None:
        """Replace the contents of the list object that ``name`` denotes, for all aliases."""
        if seq.origin is None or len(seq.origin) != 1:
            raise Unsupported("mutation of a list whose identity is not known", self.line)
        (origin,) = seq.origin
        if origin in self.held:
            raise Unsupported(
                "a list mutated while the expression around it holds it", self.line
            )
        if origin in self.escaped:
            raise Unsupported("mutation of a list that is shared with another object", self.line)
        aliases = []
        for other_name, other in state.env.items():
            for _, alt in alternatives(other):
                if isinstance(alt, SSeq) and alt.origin is not None and origin in alt.origin:
                    if isinstance(other, SUnion) or alt.origin != seq.origin:
                        raise Unsupported(
                            "mutation of a list that another name may alias", self.line
                        )
                    aliases.append(other_name)
        if self.param_elems.get(origin, seq.elem) != seq.elem:
            raise Unsupported(
                f"a list argument of {self.param_elems[origin].text()} given items of "
                f"{seq.elem.text()}", self.line
            )
        self.mutated.add(origin)
        updated = SSeq("list", seq.elem, new, seq.origin)
        for other_name in aliases:
            state.env[other_name] = updated
        if origin in state.objects:
            state.objects[origin] = new

    def _escape(self, value: V) -> None:
        for _, alt in alternatives(value):
            if isinstance(alt, SSeq) and alt.origin is not None:
                self.escaped.update(alt.origin)
            elif isinstance(alt, STuple):
                for item in alt.items:
                    self._escape(item)

    # -- loops ----------------------------------------------------------------------------

    def iteration(self, node: ast.expr, state: State) -> tuple[z3.ArithRef, IterSource]:
        """The trip count and element source of iterating ``node``."""
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "enumerate"
            and not self._shadowed("enumerate")
        ):
            if len(node.args) != 1 or node.keywords:
                raise Unsupported("enumerate with a start", self.line)
            n, inner = self.iteration(node.args[0], state)
            return n, replace(inner, enumerate=True)
        value = self.ev(node, state)
        if isinstance(value, pygen.SIter) or any(
            isinstance(alt, pygen.SIter) for _, alt in alternatives(value)
        ):
            return pygen.iteration(self, value, state)
        if isinstance(value, SRange):
            return value.length(), IterSource(value)
        if isinstance(value, SSeq | SStr):
            return z3.Length(value.e), IterSource(value)
        if isinstance(value, STuple):
            return z3.IntVal(len(value.items)), IterSource(value)
        raise Unsupported(f"iterating over a {type(value).__name__}", self.line)

    def exec_for(self, stmt: ast.For, state: State, frame: Frame) -> None:
        n, source = self.iteration(stmt.iter, state)
        self._escape_if_mutated(stmt, source)

        def enter(k: int, st: State) -> None:
            if source.cursor is not None:
                # Iterating an iterator consumes it: item k taken, the cursor is past it.
                st.env[source.cursor] = SInt(source.start + k + 1)
            self.assign(stmt.target, source.at(z3.IntVal(k)), st)

        def condition(k: int, st: State) -> z3.BoolRef:
            if source.cursor is not None and k > 0:
                # The trip count was taken when the loop started: the body must leave
                # the iterator where the loop put it (no next() on it inside).
                for _, alt in alternatives(st.env.get(source.cursor, SUnbound())):
                    at = source.start + k
                    if not (isinstance(alt, SInt) and z3.is_true(z3.simplify(alt.e == at))):
                        raise Unsupported("advancing an iterator inside a loop over it",
                                          stmt.lineno)
            return z3.IntVal(k) < n

        self._unroll(stmt, state, frame, condition, enter)

    def exec_while(self, stmt: ast.While, state: State, frame: Frame) -> None:
        self._unroll(
            stmt,
            state,
            frame,
            lambda k, st: self.truthy(self.ev(stmt.test, st), st),
            lambda k, st: None,
        )

    def _unroll(
        self,
        stmt: ast.For | ast.While,
        state: State,
        frame: Frame,
        condition: Callable[[int, State], z3.BoolRef],
        enter: Callable[[int, State], None],
    ) -> None:
        """Unroll a loop up to the bound; inputs needing more iterations are exhausted."""
        exited: list[State] = []
        frame.breaks.append([])
        try:
            for k in range(self.limits.loop_bound + 1):
                if z3.is_false(state.live):
                    break
                more = z3.simplify(condition(k, state))
                exited.append(state.fork(z3.And(state.live, z3.Not(more))))
                if z3.is_false(more):
                    state.live = FALSE
                    break
                if k == self.limits.loop_bound:
                    self.exhausted.append(
                        Exhausted(z3.And(state.live, more), "loop-bound", stmt.lineno)
                    )
                    state.live = FALSE
                    break
                state.live = z3.And(state.live, more)
                enter(k, state)
                self._loop_body(stmt.body, state, frame)
        finally:
            breaks = frame.breaks.pop()
        normal = merge_states(exited, state)
        if stmt.orelse:
            self.exec_block(stmt.orelse, normal, frame)
        joined = merge_states([normal, *breaks], state)
        state.live, state.env, state.objects = joined.live, joined.env, joined.objects

    def _escape_if_mutated(self, stmt: ast.For, source: IterSource) -> None:
        # A list mutated while it is iterated would change the trip count under us: any
        # mutation in the body makes mutating the iterated list unsupported.
        value = source.value
        if not (isinstance(value, SSeq) and value.kind == "list" and value.origin):
            return
        for node in ast.walk(stmt):
            mutating_call = (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in MUTATING_METHODS
            )
            item_store = isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Store)
            if mutating_call or item_store or isinstance(node, ast.AugAssign):
                self.escaped.update(value.origin)
                return

    def _loop_body(self, body: Sequence[ast.stmt], state: State, frame: Frame) -> None:
        frame.continues.append([])
        try:
            self.exec_block(body, state, frame)
        finally:
            continues = frame.continues.pop()
        joined = merge_states([state, *continues], state)
        state.live, state.env, state.objects = joined.live, joined.env, joined.objects

    # -- expressions ----------------------------------------------------------------------

    def ev(self, node: ast.expr, state: State) -> V:
        if isinstance(node, ast.Constant):
            return constant(node.value, self.line)
        if isinstance(node, ast.Name):
            return self.lookup(node.id, state)
        if isinstance(node, ast.BinOp):
            left = self.ev(node.left, state)
            with self.holding(left):
                right = self.ev(node.right, state)
            return self.binop(node.op, left, right, state)
        if isinstance(node, ast.UnaryOp):
            return self.unaryop(node.op, self.ev(node.operand, state), state)
        if isinstance(node, ast.BoolOp):
            return self.boolop(node, state)
        if isinstance(node, ast.Compare):
            return self.compare(node, state)
        if isinstance(node, ast.IfExp):
            cond = self.truthy(self.ev(node.test, state), state)
            with self.assuming(state, cond):
                a = self.ev(node.body, state)
            with self.assuming(state, z3.Not(cond)):
                b = self.ev(node.orelse, state)
            return merge(cond, a, b)
        if isinstance(node, ast.Call):
            return self.call(node, state)
        if isinstance(node, ast.Subscript):
            return self.subscript(node, state)
        if isinstance(node, ast.Tuple):
            items = tuple(self.ev_all(node.elts, state))
            for item in items:
                self._escape(item)
            return STuple(items)
        if isinstance(node, ast.List):
            items_ = self.ev_all(node.elts, state)
            return self.make_list(items_, node.lineno)
        if isinstance(node, ast.ListComp):
            return self.comprehension(node, state)
        if isinstance(node, ast.GeneratorExp):
            # A generator runs only as far as its consumer pulls it (and only once): the
            # model evaluates one where it is consumed at once (see ``call``), nowhere else.
            raise Unsupported(
                "a generator expression other than the argument of "
                + ", ".join(f"{n}()" for n in sorted(CONSUMERS)),
                node.lineno,
            )
        raise Unsupported(_construct_name(node), getattr(node, "lineno", self.line))

    @contextmanager
    def assuming(self, state: State, cond: z3.BoolRef) -> Iterator[None]:
        """Evaluate under ``cond`` (short-circuit); raises there narrow the outer path."""
        saved = state.live
        saved_env, saved_objects = dict(state.env), dict(state.objects)
        state.live = z3.And(saved, cond)
        try:
            yield
        finally:
            inner = state.live
            state.live = z3.And(saved, z3.Or(z3.Not(cond), inner))
            # A mutation made under `cond` (say `x and xs.pop()`) happened only there.
            for origin, contents in state.objects.items():
                old = saved_objects.get(origin)
                if old is not None and not contents.eq(old):
                    state.objects[origin] = z3.If(cond, contents, old)
            for name, value in state.env.items():
                before = saved_env.get(name)
                if before is not None and value is not before:
                    state.env[name] = merge(cond, value, before)

    def lookup(self, name: str, state: State) -> V:
        value = state.env.get(name)
        if value is None:
            if name in self.module.constants:
                return constant(self.module.constants[name], self.line)
            raise Unsupported(f"the name '{name}'", self.line)
        unbound = [g for g, v in alternatives(value) if isinstance(v, SUnbound)]
        if unbound:
            # Before 3.12 a comprehension's body is a nested function: the enclosing
            # function's local is a free variable there, and reading it unbound is a
            # NameError.
            free = sys.version_info < (3, 12) and any(
                depth == self.depth and name not in targets
                for depth, targets, _ in self.comp_scopes
            )
            self.raise_if(z3.Or(unbound), "NameError" if free else "UnboundLocalError", state)
            bound = [(g, v) for g, v in alternatives(value) if not isinstance(v, SUnbound)]
            if not bound:
                return SNone()
            return merge_many(bound[:-1], bound[-1][1])
        return value

    def make_list(self, items: Sequence[V], line: int) -> V:
        if not items:
            return SSeq("list", IntT(), z3.Empty(z3.SeqSort(z3.IntSort())), self._new_origin())
        elem = common_elem_type(items, line)
        for item in items:
            self._escape(item)
        terms = [z3.Unit(term(self._coerce_elem(i, elem))) for i in items]
        e = terms[0] if len(terms) == 1 else z3.Concat(*terms)
        return SSeq("list", elem, e, self._new_origin())

    def _new_origin(self) -> frozenset[int]:
        return frozenset({self.fresh.origin()})

    def _coerce_elem(self, value: V, elem: PyType) -> V:
        """Fit ``value`` into a sequence of ``elem``; an empty list literal adopts the type."""
        if value.ty == elem:
            return value
        if elem == INT_OR_BOOL:
            coded = as_int_or_bool(value)
            if coded is not None:
                return coded
        raise Unsupported(f"a {value.ty.text()} stored in a list of {elem.text()}", self.line)

    # Lists created empty are typed int until something else is stored: see _adopt.
    def _adopt(self, seq: SSeq, item: V) -> SSeq:
        if item.ty == seq.elem:
            return seq
        number = as_int_or_bool(item) is not None
        if z3.is_app(seq.e) and seq.e.decl().kind() == z3.Z3_OP_SEQ_EMPTY:
            if isinstance(item, SUnion) and number:
                return SSeq(seq.kind, INT_OR_BOOL, z3.Empty(z3.SeqSort(z3.IntSort())), seq.origin)
            return SSeq(seq.kind, item.ty, z3.Empty(z3.SeqSort(_sort(item))), seq.origin)
        if number and seq.elem in (IntT(), INT_OR_BOOL):
            return as_codes(seq)
        raise Unsupported(f"a {item.ty.text()} stored in a list of {seq.elem.text()}", self.line)

    def comprehension(
        self, node: ast.ListComp | ast.GeneratorExp, state: State, lazy: str | None = None
    ) -> V:
        """The list a comprehension builds; with ``lazy`` ("any" or "all"), that builtin
        applied to the generator, which stops at the first item that decides it."""
        if len(node.generators) != 1 or node.generators[0].is_async:
            raise Unsupported("a comprehension with several 'for' clauses", node.lineno)
        gen = node.generators[0]
        n, source = self.iteration(gen.iter, state)
        if source.cursor is not None:
            raise Unsupported("a comprehension over an iterator", node.lineno)
        for sub in ast.walk(node):
            if (
                isinstance(sub, ast.Call)
                and isinstance(sub.func, ast.Attribute)
                and sub.func.attr in MUTATING_METHODS
            ):
                raise Unsupported("mutation inside a comprehension", node.lineno)
        # The comprehension's variables live in their own scope: restore what they hid.
        targets = {t.id for t in ast.walk(gen.target) if isinstance(t, ast.Name)}
        hidden = {name: state.env[name] for name in targets if name in state.env}
        # A generator expression's items are made by a generator: what leaves its frame is
        # caught here and raised again from the consumer (a StopIteration as RuntimeError).
        catcher = None
        if isinstance(node, ast.GeneratorExp):
            catcher = pytry.Catcher(self.depth, sees_close=False)
            self.catchers.append(catcher)
        self.comp_scopes.append((self.depth, frozenset(targets), hidden))
        try:
            result = self._comprehension_items(node, state, lazy, n, source, targets, hidden)
        finally:
            self.comp_scopes.pop()
            if catcher is not None:
                self.catchers.pop()
        if catcher is not None:
            pytry.leave_generator(self, catcher)
        return result

    def _comprehension_items(
        self,
        node: ast.ListComp | ast.GeneratorExp,
        state: State,
        lazy: str | None,
        n: z3.ArithRef,
        source: IterSource,
        targets: set[str],
        hidden: dict[str, V],
    ) -> V:
        gen = node.generators[0]
        parts: list[tuple[z3.BoolRef, V]] = []
        decided: z3.BoolRef = FALSE  # lazy: an item so far decided any() or all()
        for k in range(self.limits.loop_bound + 1):
            more = z3.simplify(z3.And(z3.IntVal(k) < n, z3.Not(decided)))
            if z3.is_false(more):
                break
            if k == self.limits.loop_bound:
                self.exhausted.append(
                    Exhausted(z3.And(state.live, more), "loop-bound", node.lineno)
                )
                state.live = z3.And(state.live, z3.Not(more))
                break
            with self.assuming(state, more):
                self.assign(gen.target, source.at(z3.IntVal(k)), state)
                keep: z3.BoolRef = TRUE
                for cond in gen.ifs:
                    with self.assuming(state, keep):
                        keep = z3.And(keep, self.truthy(self.ev(cond, state), state))
                with self.assuming(state, keep):
                    item = self.ev(node.elt, state)
                if lazy is not None:
                    truth = self.truthy(item, state)
                    hit = truth if lazy == "any" else z3.Not(truth)
                    decided = z3.Or(decided, z3.And(more, keep, hit))
                    continue
                self._escape(item)
                parts.append((z3.And(more, keep), item))
        for name in targets:
            state.env.pop(name, None)
        state.env.update(hidden)
        if lazy is not None:
            return SBool(decided if lazy == "any" else z3.Not(decided))
        elem_t: PyType = IntT()
        if parts:
            types = {item.ty for _, item in parts}
            elem_t = parts[0][1].ty
            if len(types) > 1 and all(as_int_or_bool(item) is not None for _, item in parts):
                elem_t = INT_OR_BOOL
        sort = z3.SeqSort(sort_of(elem_t))
        e: z3.ExprRef = z3.Empty(sort)
        for guard, item in parts:
            t = term(self._coerce_elem(item, elem_t))
            e = z3.If(guard, z3.Concat(e, z3.Unit(t)), e)
        return SSeq("list", elem_t, e, self._new_origin())

    # -- calls ------------------------------------------------------------------------------

    def _shadowed(self, name: str) -> bool:
        return (
            self.module.star_import
            or name in self.module.rebound
            or name in self.module.functions
        )

    def call(self, node: ast.Call, state: State) -> V:
        func = node.func
        if isinstance(func, ast.Attribute):
            return self.method_call(node, func, state)
        if not isinstance(func, ast.Name):
            raise Unsupported("a call of a computed function", node.lineno)
        name = func.id
        if name in state.env:
            raise Unsupported(f"a call of the local variable '{name}'", node.lineno)
        if name in ("iter", "next") and not self._shadowed(name):
            return pygen.call(self, name, node, state)
        if name in self.module.functions:
            if node.keywords or any(isinstance(a, ast.Starred) for a in node.args):
                raise Unsupported("keyword or * arguments in a call", node.lineno)
            args = self.ev_all(node.args, state)
            shared = self.helpers.get(name)
            applied = shared(args) if shared is not None else None
            if applied is not None:
                value, returns, outcome = applied
                self.raise_if(z3.Not(returns), f"{name}()", state, exc_term=outcome)
                return value
            return self.inline(self.module.functions[name], node, args, state)
        if self._shadowed(name) or name not in MODELLED_BUILTINS:
            if name in BUILTIN_EXCEPTIONS:
                raise Unsupported("exception objects as values", node.lineno)
            raise Unsupported(f"the function '{name}'", node.lineno)
        if node.keywords:
            raise Unsupported(f"keyword arguments to {name}()", node.lineno)
        if any(isinstance(a, ast.Starred) for a in node.args):
            raise Unsupported("*args in a call", node.lineno)
        if len(node.args) == 1 and isinstance(node.args[0], ast.GeneratorExp):
            gen = node.args[0]
            if name in ("any", "all"):
                return self.comprehension(gen, state, lazy=name)
            if name in CONSUMERS:
                # These pull every item before they can fail or observe anything, so the
                # items evaluated in advance behave the same.
                items = self.comprehension(gen, state)
                if name in ("list", "tuple"):
                    return self.builtin(name, [items], state, node.lineno)
                return self.reduce(name, items, state)
        if name in ("sum", "any", "all", "min", "max") and len(node.args) == 1:
            arg = self.ev(node.args[0], state)
            return self.reduce(name, arg, state)
        args = self.ev_all(node.args, state)
        return self.builtin(name, args, state, node.lineno)

    def inline(self, fn: ast.FunctionDef, node: ast.Call, args: list[V], state: State) -> V:
        """Call a function of the same module by executing its body in place."""
        depth = self.depth
        self.inlined += 1
        if depth >= self.limits.inline_depth or self.inlined > self.limits.max_inlines:
            self.exhausted.append(Exhausted(state.live, "recursion-bound", node.lineno))
            state.live = FALSE
            return SNone()
        if pygen.is_generator(fn):
            raise Unsupported("a call of a generator function", node.lineno)
        for a in args:
            pygen.check_argument(a, node.lineno)
            self._escape(a)
        callee_state = self._enter(fn, args, {}, state.objects, parent=state)
        frame = Frame(locals=_local_names(fn), depth=depth + 1)
        saved_line = self.line
        self.depth = depth + 1
        self.callers.append(state)
        try:
            self.exec_block(fn.body, callee_state, frame)
        finally:
            self.callers.pop()
            self.depth = depth
            self.line = saved_line
        returns = [(g, v) for g, v, _ in frame.returns]
        if not z3.is_false(callee_state.live):
            returns.append((callee_state.live, SNone()))
        # The caller goes on where the callee returned.
        live_after = z3.Or([g for g, _ in returns]) if returns else FALSE
        state.live = z3.And(state.live, live_after)
        if not returns:
            return SNone()
        return merge_many(returns[:-1], returns[-1][1])

    def _enter(
        self,
        fn: ast.FunctionDef,
        args: list[V],
        kwargs: dict[str, V],
        objects: dict[int, z3.ExprRef],
        parent: State | None = None,
        star: V | None = None,
    ) -> State:
        """The state on entering ``fn`` with these arguments; ``star`` is the entry's
        ``*args`` tuple (a call's extra positional arguments make it otherwise)."""
        a = fn.args
        if a.kwarg:
            raise Unsupported("**kwargs parameters", fn.lineno)
        if fn.decorator_list:
            raise Unsupported("a decorated function", fn.lineno)
        names = [p.arg for p in (*a.posonlyargs, *a.args)]
        if a.vararg is not None and star is None:
            extra = tuple(args[len(names):])
            for item in extra:
                self._escape(item)
            star, args = STuple(extra), args[:len(names)]
        if len(args) > len(names):
            raise Unsupported("a call with too many arguments", self.line)
        kwonly = [p.arg for p in a.kwonlyargs]
        if set(kwargs) - set(kwonly):
            raise Unsupported("keyword arguments in a call", self.line)
        defaults = a.defaults
        env: dict[str, V] = {n: SUnbound() for n in _local_names(fn)}
        for n, v in zip(names, args, strict=False):
            env[n] = v
        if a.vararg is not None and star is not None:
            env[a.vararg.arg] = star
        missing = names[len(args):]
        first_default = len(names) - len(defaults)
        for offset, n in enumerate(missing):
            pos = len(args) + offset
            if pos < first_default:
                raise Unsupported("a call with missing arguments", self.line)
            env[n] = _default_value(defaults[pos - first_default], fn.lineno)
        for n, d in zip(kwonly, a.kw_defaults, strict=True):
            if n in kwargs:
                env[n] = kwargs[n]
            elif d is None:
                raise Unsupported("a call with missing arguments", self.line)
            else:
                env[n] = _default_value(d, fn.lineno)
        live = parent.live if parent is not None else TRUE
        return State(live, env, dict(objects))


@dataclass(frozen=True)
class IterSource:
    """The k-th element of an iterated value."""

    value: V
    enumerate: bool = False
    # Iterating an iterator (pygen.SIter): the env key of its cursor, and where it started.
    cursor: str | None = None
    start: z3.ArithRef | int = 0

    def at(self, k: z3.ArithRef) -> V:
        item = self._item(k)
        if self.enumerate:
            return STuple((SInt(k), item))
        return item

    def _item(self, k: z3.ArithRef) -> V:
        v = self.value
        if isinstance(v, SRange):
            return SInt(v.at(k))
        if isinstance(v, SSeq):
            return wrap(v.elem, v.e[k])
        if isinstance(v, SStr):
            return SStr(z3.SubString(v.e, k, 1))
        if isinstance(v, STuple):
            k_s = z3.simplify(k)
            if z3.is_int_value(k_s):
                item: V = v.items[k_s.as_long()]
                return item
            parts = [(k == i, item) for i, item in enumerate(v.items)]
            return merge_many(parts[:-1], parts[-1][1])
        raise Unsupported(f"iterating a {type(v).__name__}")


def constant(value: object, line: int) -> V:
    if value is None:
        return SNone()
    if isinstance(value, bool):
        return SBool(z3.BoolVal(value))
    if isinstance(value, int):
        return SInt(int_val(value))
    if isinstance(value, float):
        return SFloat(z3.FPVal(value, FLOAT))
    if isinstance(value, str):
        return SStr(str_val(value, line))
    if isinstance(value, tuple):
        return STuple(tuple(constant(v, line) for v in value))
    raise Unsupported(f"a constant of type {type(value).__name__}", line)


def _default_value(node: ast.expr, line: int) -> V:
    """A default argument that is a literal (a constant the ``def`` evaluated once)."""
    try:
        value = constant(ast.literal_eval(node), line)
    except ValueError as err:
        raise Unsupported("a non-literal default argument", line) from err
    if isinstance(value, SSeq):
        raise Unsupported("a mutable default argument", line)
    return value


def _sort(v: V) -> z3.SortRef:
    return term(v).sort()



def _local_names(fn: ast.FunctionDef) -> frozenset[str]:
    """Names bound anywhere in ``fn``'s own body: Python makes them local throughout."""
    a = fn.args
    names = {p.arg for p in (*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg) if p}
    for node in _walk_own(fn.body):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store | ast.Del):
            names.add(node.id)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.alias):
            names.add((node.asname or node.name).split(".")[0])
        elif isinstance(node, ast.ExceptHandler) and node.name:
            names.add(node.name)
        elif isinstance(node, ast.Global | ast.Nonlocal):
            raise Unsupported("global or nonlocal declarations", node.lineno)
    return frozenset(names)


def _check_plain_function(fn: ast.FunctionDef) -> None:
    """A generator is not called like a function, even if its ``yield`` is never reached."""
    for node in _walk_own(fn.body):
        if isinstance(node, ast.Yield | ast.YieldFrom | ast.Await):
            raise Unsupported("a generator (yield)", getattr(node, "lineno", fn.lineno))




def _walk_own(body: Sequence[ast.stmt]) -> Iterator[ast.AST]:
    stack: list[ast.AST] = list(body)
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Lambda):
            continue
        if isinstance(node, ast.ListComp | ast.GeneratorExp | ast.SetComp | ast.DictComp):
            # Comprehension variables live in their own scope.
            continue
        stack.extend(ast.iter_child_nodes(node))


def plain_constructor(name: str, n_args: int) -> bool:
    """Whether ``name(a1, ..., an)`` (a builtin exception class, positional arguments)
    makes an instance of exactly that class for any arguments, without raising.

    ``OSError(errno, msg)`` (and its aliases) makes a subclass chosen by ``errno``, and
    the OSError classes check their arguments from two on; ``SyntaxError(msg, details)``
    checks ``details``; the Unicode errors and the exception groups take arguments of
    fixed types (``UnicodeDecodeError('x')`` raises TypeError).
    """
    cls = getattr(builtins, name, None)
    if not (isinstance(cls, type) and issubclass(cls, BaseException)):
        return False
    if cls is not UnicodeError and issubclass(cls, UnicodeError | BaseExceptionGroup):
        return False
    if issubclass(cls, OSError | SyntaxError):
        return n_args <= 1
    return True


def _construct_name(node: ast.AST) -> str:
    names = {
        "Try": "try/except", "With": "with", "Match": "match", "FunctionDef": "nested def",
        "ClassDef": "nested class", "Lambda": "lambda", "Dict": "dict", "Set": "set",
        "DictComp": "dict comprehension", "SetComp": "set comprehension", "JoinedStr": "f-string",
        "Attribute": "attribute access", "Yield": "yield", "Await": "await",
        "Global": "global", "Nonlocal": "nonlocal", "Delete": "del", "Import": "import",
        "ImportFrom": "import", "NamedExpr": "walrus", "Starred": "starred expression",
    }  # fmt: skip
    return names.get(type(node).__name__, type(node).__name__)


__all__ = [
    "Executor",
    "Exhausted",
    "Exit",
    "Limits",
    "Module",
    "Result",
    "State",
]
