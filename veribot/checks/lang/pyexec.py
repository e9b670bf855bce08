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
import time
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field

import z3

from veribot.checks.lang.pytypes import (
    BoolT,
    FloatT,
    IntT,
    ListT,
    PyType,
    StrT,
    TupleT,
)
from veribot.checks.lang.pyvalues import (
    FLOAT,
    RM,
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
    merge,
    merge_many,
    term,
    wrap,
)

# A helper shared by both versions: argument values -> (value, returns normally, outcome),
# or None when it cannot be applied to these arguments (see pyshared).
SharedCall = Callable[[Sequence[V]], "tuple[V, z3.BoolRef, z3.ArithRef] | None"]

TRUE = z3.BoolVal(True)
FALSE = z3.BoolVal(False)

# Exceptions a `raise` may name without a class definition in the module.
_BUILTIN_EXCEPTIONS = {
    name
    for name, obj in vars(builtins).items()
    if isinstance(obj, type) and issubclass(obj, BaseException)
}
_MODELLED_BUILTINS = {
    "len", "abs", "min", "max", "sum", "range", "enumerate", "list", "tuple", "bool",
    "int", "float", "any", "all", "isinstance", "print",
}  # fmt: skip
MUTATING_METHODS = {"append", "extend", "pop", "insert", "remove", "clear", "sort", "reverse"}


@dataclass(frozen=True)
class Exit:
    """One way the function ends: returns ``value`` or raises ``exc``, when ``guard``."""

    guard: z3.BoolRef
    value: V | None  # None when it raises
    exc: str | None
    params: tuple[z3.ExprRef, ...]  # final contents of the list parameters
    line: int
    exc_term: z3.ExprRef | None = None  # which way a shared helper ended, if it raised


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


@dataclass(frozen=True)
class Module:
    """What the executor may use from the module: its functions and constant globals."""

    functions: dict[str, ast.FunctionDef]
    constants: dict[str, object]
    rebound: frozenset[str]  # module-level names that shadow builtins or are not constants
    star_import: bool = False  # `from m import *` may shadow any builtin
    imports: tuple[str, ...] = ()  # the module's import statements, as source text
    active_code: tuple[int, ...] = ()  # lines of module-level code that run at import
    tampering: int | None = None  # line of module-level code that may rewrite definitions

    @staticmethod
    def of(tree: ast.Module) -> Module:
        # Every binding of every name, anywhere in the module (function bodies too: a
        # `global` there rebinds a module name; a local of the same name only makes this
        # more conservative). A function or constant must be bound exactly once.
        bindings: Counter[str] = Counter()
        for n in ast.walk(tree):
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store | ast.Del):
                bindings[n.id] += 1
            elif isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                bindings[n.name] += 1
            elif isinstance(n, ast.alias):
                bindings[(n.asname or n.name).split(".")[0]] += 1
        functions: dict[str, ast.FunctionDef] = {}
        constants: dict[str, object] = {}
        star = False
        imports: list[str] = []
        active: list[int] = []
        tampering: int | None = None
        for node in tree.body:
            if isinstance(node, ast.Import | ast.ImportFrom):
                imports.append(ast.unparse(node))
                star = star or any(a.name == "*" for a in node.names)
            elif not _inert(node):
                active.append(node.lineno)
                if tampering is None and _tampers(node):
                    tampering = node.lineno
            if isinstance(node, ast.FunctionDef) and bindings[node.name] == 1:
                functions[node.name] = node
            elif (
                isinstance(node, ast.Assign)
                and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name)
                and bindings[node.targets[0].id] == 1
            ):
                with suppress(ValueError):
                    constants[node.targets[0].id] = ast.literal_eval(node.value)
        rebound = frozenset(
            name
            for name in bindings
            if (name not in functions and name not in constants)
            or name in _MODELLED_BUILTINS
            or name in _BUILTIN_EXCEPTIONS
        )
        return Module(
            functions, constants, rebound, star, tuple(imports), tuple(active), tampering
        )


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


class Executor:
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
        self.param_origins: list[int] = []
        self.steps = 0
        self.line = 0
        self.depth = 0  # inlining depth of the call being executed
        self.inlined = 0  # calls inlined so far

    # -- entry points ---------------------------------------------------------------------

    def start(self, fn: ast.FunctionDef, params: Sequence[V]) -> State:
        """The state on entering ``fn`` with ``params``, the list parameters registered."""
        objects: dict[int, z3.ExprRef] = {}
        for p in params:
            if isinstance(p, SSeq) and p.kind == "list" and p.origin:
                (origin,) = p.origin
                if origin not in self.param_origins:
                    self.param_origins.append(origin)
                objects[origin] = p.e
            else:
                # Lists nested in other arguments are not compared after the call, so
                # mutating them is reported as unsupported.
                self._escape(p)
        _check_plain_function(fn)
        return self._enter(fn, list(params), {}, objects)

    def run(self, fn: ast.FunctionDef, params: Sequence[V]) -> Result:
        """Execute ``fn`` on ``params`` and collect every exit."""
        state = self.start(fn, params)
        frame = Frame(locals=_local_names(fn), depth=0)
        self.exec_block(fn.body, state, frame)
        if not z3.is_false(state.live):
            end = fn.body[-1].end_lineno or fn.lineno
            self.exits.append(Exit(state.live, SNone(), None, self._snapshot(state), end))
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
            cond = self.truthy(self.ev(stmt.test, state), state)
            self._branch(cond, stmt.body, stmt.orelse, state, frame)
        elif isinstance(stmt, ast.For):
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
        elif isinstance(stmt, ast.Raise):
            self.exec_raise(stmt, state)
        elif isinstance(stmt, ast.Assert):
            ok = self.truthy(self.ev(stmt.test, state), state)
            self.raise_if(z3.Not(ok), "AssertionError", state)
        else:
            raise Unsupported(_construct_name(stmt), stmt.lineno)

    def _return(self, value: V, state: State, frame: Frame, line: int) -> None:
        if frame.depth == 0:
            self.exits.append(Exit(state.live, value, None, self._snapshot(state), line))
        else:
            frame.returns.append((state.live, value, line))
        state.live = FALSE

    def _branch(
        self,
        cond: z3.BoolRef,
        then: Sequence[ast.stmt],
        orelse: Sequence[ast.stmt],
        state: State,
        frame: Frame,
    ) -> None:
        cond = z3.simplify(cond)
        a = state.fork(z3.And(state.live, cond))
        b = state.fork(z3.And(state.live, z3.Not(cond)))
        if not z3.is_false(cond):
            self.exec_block(then, a, frame)
        else:
            a.live = FALSE
        if not z3.is_true(cond):
            self.exec_block(orelse, b, frame)
        else:
            b.live = FALSE
        joined = merge_states([a, b], state)
        state.live, state.env, state.objects = joined.live, joined.env, joined.objects

    def exec_raise(self, stmt: ast.Raise, state: State) -> None:
        exc = stmt.exc
        name = None
        if isinstance(exc, ast.Call):
            for a in exc.args:
                self.ev(a, state)
            exc = exc.func
        if isinstance(exc, ast.Name):
            name = exc.id
        if name is None or not (name in _BUILTIN_EXCEPTIONS or self._is_module_exception(name)):
            raise Unsupported("raise of this expression", stmt.lineno)
        self.raise_if(TRUE, name, state)

    def _is_module_exception(self, name: str) -> bool:
        return False  # class definitions are not modelled yet

    def raise_if(
        self, cond: z3.BoolRef, exc: str, state: State, exc_term: z3.ExprRef | None = None
    ) -> None:
        """The current path raises ``exc`` where ``cond`` holds; it goes on where not."""
        cond = z3.simplify(cond)
        if z3.is_false(cond):
            return
        guard = z3.And(state.live, cond)
        self.exits.append(Exit(guard, None, exc, self._snapshot(state), self.line, exc_term))
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

    def _store_item(self, target: ast.Subscript, value: V, state: State) -> None:
        assert isinstance(target.value, ast.Name)
        seq = self.ev(target.value, state)
        if not (isinstance(seq, SSeq) and seq.kind == "list"):
            raise Unsupported("item assignment on this value", self.line)
        if isinstance(target.slice, ast.Slice):
            raise Unsupported("slice assignment", self.line)
        index = self._as_int(self.ev(target.slice, state), state)
        n = z3.Length(seq.e)
        idx = z3.If(index < 0, index + n, index)
        self.raise_if(z3.Or(idx < 0, idx >= n), "IndexError", state)
        item = self._coerce_elem(value, seq.elem)
        new = z3.Concat(
            z3.SubSeq(seq.e, 0, idx), z3.Unit(term(item)), z3.SubSeq(seq.e, idx + 1, n - idx - 1)
        )
        self._mutate(target.value.id, seq, new, state)

    def aug_assign(self, stmt: ast.AugAssign, state: State) -> None:
        target = stmt.target
        if isinstance(target, ast.Name):
            current = self.ev(target, state)
            operand = self.ev(stmt.value, state)
            if (
                isinstance(stmt.op, ast.Add)
                and isinstance(current, SSeq)
                and current.kind == "list"
            ):
                # list += iterable extends the same object in place.
                self._extend(target.id, current, operand, state)
                return
            self.assign(target, self.binop(stmt.op, current, operand, state), state)
        elif isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name):
            current = self.ev(target, state)
            operand = self.ev(stmt.value, state)
            self._store_item(target, self.binop(stmt.op, current, operand, state), state)
        else:
            raise Unsupported(f"augmented assignment to {_construct_name(target)}", self.line)

    def _mutate(self, name: str, seq: SSeq, new: z3.ExprRef, state: State) -> None:
        """Replace the contents of the list object that ``name`` denotes, for all aliases."""
        if seq.origin is None or len(seq.origin) != 1:
            raise Unsupported("mutation of a list whose identity is not known", self.line)
        (origin,) = seq.origin
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
            return n, IterSource(inner.value, enumerate=True)
        value = self.ev(node, state)
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
            self.assign(stmt.target, source.at(z3.IntVal(k)), st)

        self._unroll(stmt, state, frame, lambda k, st: z3.IntVal(k) < n, enter)

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
            items = tuple(self.ev(e, state) for e in node.elts)
            for item in items:
                self._escape(item)
            return STuple(items)
        if isinstance(node, ast.List):
            items_ = [self.ev(e, state) for e in node.elts]
            return self.make_list(items_, node.lineno)
        if isinstance(node, ast.ListComp | ast.GeneratorExp):
            return self.comprehension(node, state)
        raise Unsupported(_construct_name(node), getattr(node, "lineno", self.line))

    @contextmanager
    def assuming(self, state: State, cond: z3.BoolRef) -> Iterator[None]:
        """Evaluate under ``cond`` (short-circuit); raises there narrow the outer path."""
        saved = state.live
        state.live = z3.And(saved, cond)
        try:
            yield
        finally:
            inner = state.live
            state.live = z3.And(saved, z3.Or(z3.Not(cond), inner))

    def lookup(self, name: str, state: State) -> V:
        value = state.env.get(name)
        if value is None:
            if name in self.module.constants:
                return constant(self.module.constants[name], self.line)
            raise Unsupported(f"the name '{name}'", self.line)
        unbound = [g for g, v in alternatives(value) if isinstance(v, SUnbound)]
        if unbound:
            self.raise_if(z3.Or(unbound), "UnboundLocalError", state)
            bound = [(g, v) for g, v in alternatives(value) if not isinstance(v, SUnbound)]
            if not bound:
                return SNone()
            return merge_many(bound[:-1], bound[-1][1])
        return value

    def make_list(self, items: Sequence[V], line: int) -> V:
        if not items:
            return SSeq("list", IntT(), z3.Empty(z3.SeqSort(z3.IntSort())), self._new_origin())
        elem = _common_elem_type(items, line)
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
        raise Unsupported(f"a {value.ty.text()} stored in a list of {elem.text()}", self.line)

    # Lists created empty are typed int until something else is stored: see _adopt.
    def _adopt(self, seq: SSeq, item: V) -> SSeq:
        if item.ty == seq.elem:
            return seq
        if z3.is_app(seq.e) and seq.e.decl().kind() == z3.Z3_OP_SEQ_EMPTY:
            return SSeq(seq.kind, item.ty, z3.Empty(z3.SeqSort(_sort(item))), seq.origin)
        raise Unsupported(f"a {item.ty.text()} stored in a list of {seq.elem.text()}", self.line)

    def comprehension(self, node: ast.ListComp | ast.GeneratorExp, state: State) -> V:
        if len(node.generators) != 1 or node.generators[0].is_async:
            raise Unsupported("a comprehension with several 'for' clauses", node.lineno)
        gen = node.generators[0]
        n, source = self.iteration(gen.iter, state)
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
        parts: list[tuple[z3.BoolRef, z3.ExprRef]] = []
        elem_t: PyType | None = None
        for k in range(self.limits.loop_bound + 1):
            more = z3.simplify(z3.IntVal(k) < n)
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
                self._escape(item)
                if elem_t is None:
                    elem_t = item.ty
                item = self._coerce_elem(item, elem_t)
                parts.append((z3.And(more, keep), term(item)))
        for name in targets:
            state.env.pop(name, None)
        state.env.update(hidden)
        if elem_t is None:
            elem_t = IntT()
        sort = z3.SeqSort(_sort_of_type(elem_t))
        e: z3.ExprRef = z3.Empty(sort)
        for guard, t in parts:
            e = z3.If(guard, z3.Concat(e, z3.Unit(t)), e)
        return SSeq("list", elem_t, e, self._new_origin())

    # -- truthiness and operators -----------------------------------------------------------

    def truthy(self, v: V, state: State) -> z3.BoolRef:
        if isinstance(v, SBool):
            return v.e
        if isinstance(v, SInt):
            return v.e != 0
        if isinstance(v, SFloat):
            return z3.Not(z3.fpIsZero(v.e))
        if isinstance(v, SStr | SSeq):
            return z3.Length(v.e) > 0
        if isinstance(v, SNone):
            return FALSE
        if isinstance(v, STuple):
            return z3.BoolVal(bool(v.items))
        if isinstance(v, SRange):
            return v.length() > 0
        if isinstance(v, SUnion):
            return z3.Or([z3.And(g, self.truthy(a, state)) for g, a in v.alts])
        raise Unsupported(f"truth value of a {type(v).__name__}", self.line)

    def boolop(self, node: ast.BoolOp, state: State) -> V:
        result = self.ev(node.values[0], state)
        for operand in node.values[1:]:
            t = self.truthy(result, state)
            go_on = t if isinstance(node.op, ast.And) else z3.Not(t)
            with self.assuming(state, go_on):
                nxt = self.ev(operand, state)
            result = merge(go_on, nxt, result)
        return result

    def _as_int(self, v: V, state: State) -> z3.ArithRef:
        if isinstance(v, SInt):
            return v.e
        if isinstance(v, SBool):
            return z3.If(v.e, 1, 0)
        if isinstance(v, SUnion):
            result: z3.ArithRef = z3.IntVal(0)
            bad = []
            for g, a in v.alts:
                if isinstance(a, SInt | SBool):
                    result = z3.If(g, self._as_int(a, state), result)
                else:
                    bad.append(g)
            if bad:
                self.raise_if(z3.Or(bad), "TypeError", state)
            return result
        self.raise_if(TRUE, "TypeError", state)
        return z3.IntVal(0)

    def binop(self, op: ast.operator, a: V, b: V, state: State) -> V:
        if isinstance(a, SUnion) or isinstance(b, SUnion):
            parts: list[tuple[z3.BoolRef, V]] = []
            for ga, va in alternatives(a):
                for gb, vb in alternatives(b):
                    g = z3.And(ga, gb)
                    with self.assuming(state, g):
                        parts.append((g, self.binop(op, va, vb, state)))
            return merge_many(parts[:-1], parts[-1][1])
        if isinstance(a, SInt | SBool) and isinstance(b, SInt | SBool):
            return self.int_op(op, self._as_int(a, state), self._as_int(b, state), state)
        if isinstance(a, SInt | SBool | SFloat) and isinstance(b, SInt | SBool | SFloat):
            return self.float_op(op, self.to_float(a, state), self.to_float(b, state), state)
        if isinstance(op, ast.Add):
            if isinstance(a, SStr) and isinstance(b, SStr):
                return SStr(z3.Concat(a.e, b.e))
            if isinstance(a, SSeq) and isinstance(b, SSeq) and a.kind == b.kind:
                if a.elem != b.elem:
                    if _is_empty_literal(a.e):
                        a = SSeq(a.kind, b.elem, z3.Empty(b.e.sort()), a.origin)
                    elif _is_empty_literal(b.e):
                        b = SSeq(b.kind, a.elem, z3.Empty(a.e.sort()), b.origin)
                    else:
                        raise Unsupported("concatenating lists of different types", self.line)
                origin = self._new_origin() if a.kind == "list" else None
                return SSeq(a.kind, a.elem, z3.Concat(a.e, b.e), origin)
            if isinstance(a, STuple) and isinstance(b, STuple):
                return STuple(a.items + b.items)
            if (
                isinstance(a, STuple | SSeq)
                and isinstance(b, STuple | SSeq)
                and _kind(a) == _kind(b) == "tuple"
            ):
                return self.binop(op, self._as_seq(a), self._as_seq(b), state)
        if isinstance(op, ast.Mult) and (isinstance(a, SSeq | SStr) or isinstance(b, SSeq | SStr)):
            raise Unsupported("sequence repetition", self.line)
        if isinstance(op, ast.Mod) and isinstance(a, SStr):
            raise Unsupported("string formatting", self.line)
        self.raise_if(TRUE, "TypeError", state)
        return SNone()

    def _as_seq(self, v: STuple | SSeq) -> SSeq:
        if isinstance(v, SSeq):
            return v
        if not v.items:
            return SSeq("tuple", IntT(), z3.Empty(z3.SeqSort(z3.IntSort())))
        elem = _common_elem_type(v.items, self.line)
        units = [z3.Unit(term(i)) for i in v.items]
        return SSeq("tuple", elem, units[0] if len(units) == 1 else z3.Concat(*units))

    def int_op(self, op: ast.operator, x: z3.ArithRef, y: z3.ArithRef, state: State) -> V:
        if isinstance(op, ast.Add):
            return SInt(x + y)
        if isinstance(op, ast.Sub):
            return SInt(x - y)
        if isinstance(op, ast.Mult):
            return SInt(x * y)
        if isinstance(op, ast.FloorDiv | ast.Mod):
            self.raise_if(y == 0, "ZeroDivisionError", state)
            q = floor_div(x, y)
            return SInt(q if isinstance(op, ast.FloorDiv) else x - y * q)
        if isinstance(op, ast.Div):
            self.raise_if(y == 0, "ZeroDivisionError", state)
            r = z3.fpRealToFP(RM, z3.ToReal(x) / z3.ToReal(z3.If(y == 0, 1, y)), FLOAT)
            self.raise_if(z3.fpIsInf(r), "OverflowError", state)
            return SFloat(r)
        if isinstance(op, ast.Pow):
            y_s = z3.simplify(y)
            if z3.is_int_value(y_s) and 0 <= y_s.as_long() <= 8:
                result: z3.ArithRef = z3.IntVal(1)
                for _ in range(y_s.as_long()):
                    result = result * x
                return SInt(result)
            raise Unsupported("'**' with a symbolic or large exponent", self.line)
        raise Unsupported(f"the operator {type(op).__name__} on integers", self.line)

    def to_float(self, v: V, state: State) -> z3.FPRef:
        if isinstance(v, SFloat):
            return v.e
        r = z3.fpRealToFP(RM, z3.ToReal(self._as_int(v, state)), FLOAT)
        self.raise_if(z3.fpIsInf(r), "OverflowError", state)
        return r

    def float_op(self, op: ast.operator, x: z3.FPRef, y: z3.FPRef, state: State) -> V:
        if isinstance(op, ast.Add):
            return SFloat(z3.fpAdd(RM, x, y))
        if isinstance(op, ast.Sub):
            return SFloat(z3.fpSub(RM, x, y))
        if isinstance(op, ast.Mult):
            return SFloat(z3.fpMul(RM, x, y))
        if isinstance(op, ast.Div):
            self.raise_if(z3.fpIsZero(y), "ZeroDivisionError", state)
            return SFloat(z3.fpDiv(RM, x, y))
        raise Unsupported(f"the operator {type(op).__name__} on floats", self.line)

    def unaryop(self, op: ast.unaryop, v: V, state: State) -> V:
        if isinstance(op, ast.Not):
            return SBool(z3.Not(self.truthy(v, state)))
        if isinstance(v, SUnion):
            parts = []
            for g, a in v.alts:
                with self.assuming(state, g):
                    parts.append((g, self.unaryop(op, a, state)))
            return merge_many(parts[:-1], parts[-1][1])
        if isinstance(v, SInt | SBool):
            x = self._as_int(v, state)
            if isinstance(op, ast.USub):
                return SInt(-x)
            if isinstance(op, ast.UAdd):
                return SInt(x)
        if isinstance(v, SFloat):
            if isinstance(op, ast.USub):
                return SFloat(z3.fpNeg(v.e))
            if isinstance(op, ast.UAdd):
                return v
        if isinstance(op, ast.USub | ast.UAdd):
            self.raise_if(TRUE, "TypeError", state)
            return SNone()
        raise Unsupported(f"the operator {type(op).__name__}", self.line)

    def compare(self, node: ast.Compare, state: State) -> V:
        left = self.ev(node.left, state)
        result: z3.BoolRef = TRUE
        for op, right_node in zip(node.ops, node.comparators, strict=True):
            with self.assuming(state, result):
                right = self.ev(right_node, state)
                part = self.compare_op(op, left, right, state)
            result = z3.And(result, part)
            left = right
        return SBool(z3.simplify(result))

    def compare_op(self, op: ast.cmpop, a: V, b: V, state: State) -> z3.BoolRef:
        if isinstance(op, ast.In | ast.NotIn):
            inside = self.contains(b, a, state)
            return inside if isinstance(op, ast.In) else z3.Not(inside)
        if isinstance(op, ast.Is | ast.IsNot):
            if isinstance(a, SNone) or isinstance(b, SNone) or _is_none_union(a, b):
                other = b if isinstance(a, SNone) else a
                is_none = z3.Or(
                    [g for g, v in alternatives(other) if isinstance(v, SNone)] or [FALSE]
                )
                if isinstance(a, SNone) and isinstance(b, SNone):
                    is_none = TRUE
                return is_none if isinstance(op, ast.Is) else z3.Not(is_none)
            raise Unsupported("'is' between values other than None", self.line)
        if isinstance(a, SUnion) or isinstance(b, SUnion):
            parts = []
            for ga, va in alternatives(a):
                for gb, vb in alternatives(b):
                    g = z3.And(ga, gb)
                    with self.assuming(state, g):
                        parts.append(z3.And(g, self.compare_op(op, va, vb, state)))
            return z3.Or(parts)
        if isinstance(op, ast.Eq):
            return self.py_eq(a, b, state)
        if isinstance(op, ast.NotEq):
            return z3.Not(self.py_eq(a, b, state))
        return self.order(op, a, b, state)

    def py_eq(self, a: V, b: V, state: State) -> z3.BoolRef:
        """Python's ``==`` (not the behaviour equality: here 1 == 1.0 == True)."""
        if isinstance(a, SInt | SBool) and isinstance(b, SInt | SBool):
            if isinstance(a, SBool) and isinstance(b, SBool):
                return a.e == b.e
            return self._as_int(a, state) == self._as_int(b, state)
        if isinstance(a, SInt | SBool | SFloat) and isinstance(b, SInt | SBool | SFloat):
            return self._num_cmp(ast.Eq(), a, b, state)
        if isinstance(a, SStr) and isinstance(b, SStr):
            return a.e == b.e
        if isinstance(a, SNone) and isinstance(b, SNone):
            return TRUE
        if isinstance(a, SSeq | STuple) and isinstance(b, SSeq | STuple):
            if _kind(a) != _kind(b):
                return FALSE
            sa = self._as_seq(a) if isinstance(a, STuple) else a
            sb = self._as_seq(b) if isinstance(b, STuple) else b
            if _is_empty_literal(sa.e) or _is_empty_literal(sb.e):
                return z3.And(z3.Length(sa.e) == 0, z3.Length(sb.e) == 0)
            if sa.elem == sb.elem and isinstance(sa.elem, IntT | BoolT | StrT):
                return sa.e == sb.e
            raise Unsupported(f"== between sequences of {sa.elem.text()}", self.line)
        if type(a) is type(b) and isinstance(a, SRange):
            raise Unsupported("== between ranges", self.line)
        return FALSE

    def _num_cmp(self, op: ast.cmpop, a: V, b: V, state: State) -> z3.BoolRef:
        if isinstance(a, SFloat) and isinstance(b, SFloat):
            x, y = a.e, b.e
            table = {
                ast.Eq: z3.fpEQ, ast.Lt: z3.fpLT, ast.LtE: z3.fpLEQ,
                ast.Gt: z3.fpGT, ast.GtE: z3.fpGEQ,
            }  # fmt: skip
            return table[type(op)](x, y)
        if isinstance(a, SFloat):
            flipped = {ast.Lt: ast.Gt, ast.LtE: ast.GtE, ast.Gt: ast.Lt, ast.GtE: ast.LtE}
            op2 = flipped.get(type(op), type(op))()
            return self._num_cmp(op2, b, a, state)
        assert isinstance(b, SFloat)
        # Exact comparison of an integer with a float, as Python does it.
        i = z3.ToReal(self._as_int(a, state))
        f = b.e
        finite = z3.And(z3.Not(z3.fpIsNaN(f)), z3.Not(z3.fpIsInf(f)))
        r = z3.fpToReal(f)
        exact = {
            ast.Eq: i == r, ast.Lt: i < r, ast.LtE: i <= r, ast.Gt: i > r, ast.GtE: i >= r,
        }[type(op)]  # fmt: skip
        pos_inf = z3.And(z3.fpIsInf(f), z3.fpIsPositive(f))
        neg_inf = z3.And(z3.fpIsInf(f), z3.fpIsNegative(f))
        if isinstance(op, ast.Eq):
            return z3.And(finite, exact)
        if isinstance(op, ast.Lt | ast.LtE):
            return z3.Or(z3.And(finite, exact), pos_inf)
        return z3.Or(z3.And(finite, exact), neg_inf)

    def order(self, op: ast.cmpop, a: V, b: V, state: State) -> z3.BoolRef:
        if isinstance(a, SInt | SBool) and isinstance(b, SInt | SBool):
            x, y = self._as_int(a, state), self._as_int(b, state)
            return {ast.Lt: x < y, ast.LtE: x <= y, ast.Gt: x > y, ast.GtE: x >= y}[type(op)]
        if isinstance(a, SInt | SBool | SFloat) and isinstance(b, SInt | SBool | SFloat):
            return self._num_cmp(op, a, b, state)
        if isinstance(a, SStr) and isinstance(b, SStr):
            x_s, y_s = a.e, b.e
            return {
                ast.Lt: x_s < y_s, ast.LtE: x_s <= y_s, ast.Gt: y_s < x_s, ast.GtE: y_s <= x_s,
            }[type(op)]  # fmt: skip
        if isinstance(a, SSeq | STuple) and isinstance(b, SSeq | STuple) and _kind(a) == _kind(b):
            raise Unsupported("ordering comparison of sequences", self.line)
        self.raise_if(TRUE, "TypeError", state)
        return FALSE

    def contains(self, container: V, item: V, state: State) -> z3.BoolRef:
        if isinstance(container, SUnion):
            parts = []
            for g, c in container.alts:
                with self.assuming(state, g):
                    parts.append(z3.And(g, self.contains(c, item, state)))
            return z3.Or(parts)
        if isinstance(container, SStr):
            if isinstance(item, SStr):
                return z3.Contains(container.e, item.e)
            self.raise_if(TRUE, "TypeError", state)
            return FALSE
        if isinstance(container, SSeq):
            if _is_empty_literal(container.e):
                return FALSE
            elem = container.elem
            if item.ty == elem and isinstance(item, SInt | SStr | SBool):
                return z3.Contains(container.e, z3.Unit(item.e))
            numeric = (IntT, BoolT, FloatT)
            if not (isinstance(item.ty, numeric) and isinstance(elem, numeric)) and isinstance(
                item, SInt | SBool | SFloat | SStr | SNone
            ) and isinstance(elem, IntT | BoolT | FloatT | StrT):
                return FALSE  # == between these types is always False
            raise Unsupported(
                f"'in' for a {item.ty.text()} in a sequence of {elem.text()}", self.line
            )
        if isinstance(container, STuple):
            return z3.Or([self.py_eq(x, item, state) for x in container.items] or [FALSE])
        if isinstance(container, SRange):
            raise Unsupported("'in' on a range", self.line)
        self.raise_if(TRUE, "TypeError", state)
        return FALSE

    # -- indexing ---------------------------------------------------------------------------

    def subscript(self, node: ast.Subscript, state: State) -> V:
        value = self.ev(node.value, state)
        if isinstance(node.slice, ast.Slice):
            return self.slice(value, node.slice, state)
        index = self.ev(node.slice, state)
        return self.index(value, index, state)

    def index(self, value: V, index: V, state: State) -> V:
        if isinstance(value, SUnion):
            parts = []
            for g, a in value.alts:
                with self.assuming(state, g):
                    parts.append((g, self.index(a, index, state)))
            return merge_many(parts[:-1], parts[-1][1])
        if isinstance(value, STuple):
            i = self._as_int(index, state)
            n = len(value.items)
            idx = z3.If(i < 0, i + n, i)
            self.raise_if(z3.Or(idx < 0, idx >= n), "IndexError", state)
            if not value.items:
                return SNone()
            parts_t = [(idx == k, item) for k, item in enumerate(value.items)]
            return merge_many(parts_t[:-1], parts_t[-1][1])
        if not isinstance(index, SInt | SBool):
            if isinstance(value, SSeq | SStr):
                self.raise_if(TRUE, "TypeError", state)
                return SNone()
            raise Unsupported(f"indexing a {type(value).__name__}", self.line)
        if isinstance(value, SSeq | SStr):
            i = self._as_int(index, state)
            n = z3.Length(value.e)
            idx = z3.If(i < 0, i + n, i)
            self.raise_if(z3.Or(idx < 0, idx >= n), "IndexError", state)
            if isinstance(value, SStr):
                return SStr(z3.SubString(value.e, idx, 1))
            return wrap(value.elem, value.e[idx])
        if isinstance(value, SRange):
            raise Unsupported("indexing a range", self.line)
        self.raise_if(TRUE, "TypeError", state)
        return SNone()

    def slice(self, value: V, sl: ast.Slice, state: State) -> V:
        if sl.step is not None:
            step = self.ev(sl.step, state)
            if not (isinstance(step, SInt) and z3.is_int_value(z3.simplify(step.e))
                    and z3.simplify(step.e).as_long() == 1):
                raise Unsupported("a slice with a step", self.line)
        if isinstance(value, STuple):
            value = self._as_seq(value)
        if not isinstance(value, SSeq | SStr):
            raise Unsupported(f"slicing a {type(value).__name__}", self.line)
        n = z3.Length(value.e)

        def bound(node: ast.expr | None, default: z3.ArithRef) -> z3.ArithRef:
            if node is None:
                return default
            v = self.ev(node, state)
            if isinstance(v, SNone):
                return default
            i = self._as_int(v, state)
            i = z3.If(i < 0, i + n, i)
            return z3.If(i < 0, 0, z3.If(i > n, n, i))

        lo = bound(sl.lower, z3.IntVal(0))
        hi = bound(sl.upper, n)
        length = z3.If(hi > lo, hi - lo, 0)
        if isinstance(value, SStr):
            return SStr(z3.SubString(value.e, lo, length))
        origin = self._new_origin() if value.kind == "list" else None
        return SSeq(value.kind, value.elem, z3.SubSeq(value.e, lo, length), origin)

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
        if name in self.module.functions:
            if node.keywords or any(isinstance(a, ast.Starred) for a in node.args):
                raise Unsupported("keyword or * arguments in a call", node.lineno)
            args = [self.ev(a, state) for a in node.args]
            shared = self.helpers.get(name)
            applied = shared(args) if shared is not None else None
            if applied is not None:
                value, returns, outcome = applied
                self.raise_if(z3.Not(returns), f"{name}()", state, exc_term=outcome)
                return value
            return self.inline(self.module.functions[name], node, args, state)
        if self._shadowed(name) or name not in _MODELLED_BUILTINS:
            if name in _BUILTIN_EXCEPTIONS:
                raise Unsupported("exception objects as values", node.lineno)
            raise Unsupported(f"the function '{name}'", node.lineno)
        if node.keywords:
            raise Unsupported(f"keyword arguments to {name}()", node.lineno)
        if any(isinstance(a, ast.Starred) for a in node.args):
            raise Unsupported("*args in a call", node.lineno)
        if name in ("sum", "any", "all", "min", "max") and len(node.args) == 1:
            arg = self.ev(node.args[0], state)
            return self.reduce(name, arg, state)
        args = [self.ev(a, state) for a in node.args]
        return self.builtin(name, args, state, node.lineno)

    def builtin(self, name: str, args: list[V], state: State, line: int) -> V:
        if name == "len" and len(args) == 1:
            (v,) = args
            if isinstance(v, SSeq | SStr):
                return SInt(z3.Length(v.e))
            if isinstance(v, STuple):
                return SInt(z3.IntVal(len(v.items)))
            if isinstance(v, SRange):
                return SInt(v.length())
            if isinstance(v, SInt | SBool | SFloat | SNone):
                self.raise_if(TRUE, "TypeError", state)
                return SInt(z3.IntVal(0))
            raise Unsupported(f"len of a {type(v).__name__}", line)
        if name == "abs" and len(args) == 1:
            (v,) = args
            if isinstance(v, SInt | SBool):
                x = self._as_int(v, state)
                return SInt(z3.If(x < 0, -x, x))
            if isinstance(v, SFloat):
                return SFloat(z3.fpAbs(v.e))
            raise Unsupported(f"abs of a {type(v).__name__}", line)
        if name in ("min", "max") and len(args) >= 2:
            result = args[0]
            for other in args[1:]:
                # min keeps the first of equal items, max too: replace only on strict order.
                op: ast.cmpop = ast.Lt() if name == "min" else ast.Gt()
                better = self.compare_op(op, other, result, state)
                result = merge(better, other, result)
            return result
        if name == "range" and 1 <= len(args) <= 3:
            ints = [self._as_int(a, state) for a in args]
            if len(ints) == 1:
                return SRange(z3.IntVal(0), ints[0], z3.IntVal(1))
            step = ints[2] if len(ints) == 3 else z3.IntVal(1)
            self.raise_if(step == 0, "ValueError", state)
            return SRange(ints[0], ints[1], step)
        if name == "bool" and len(args) == 1:
            return SBool(self.truthy(args[0], state))
        if name in ("list", "tuple") and len(args) == 1:
            (v,) = args
            if isinstance(v, STuple):
                v = self._as_seq(v)
            if isinstance(v, SSeq):
                origin = self._new_origin() if name == "list" else None
                return SSeq(name, v.elem, v.e, origin)
            raise Unsupported(f"{name}() of a {type(v).__name__}", line)
        if name in ("list", "tuple") and not args:
            empty = z3.Empty(z3.SeqSort(z3.IntSort()))
            return SSeq(name, IntT(), empty, self._new_origin() if name == "list" else None)
        if name == "float" and len(args) == 1 and isinstance(args[0], SInt | SBool | SFloat):
            return SFloat(self.to_float(args[0], state))
        if name == "int" and len(args) == 1 and isinstance(args[0], SInt | SBool):
            return SInt(self._as_int(args[0], state))
        if name == "isinstance":
            raise Unsupported("isinstance", line)
        if name == "print":
            raise Unsupported("print (output is not compared)", line)
        raise Unsupported(f"{name}() with these arguments", line)

    def reduce(self, name: str, v: V, state: State) -> V:
        """``sum``/``min``/``max``/``any``/``all`` over one iterable."""
        if isinstance(v, STuple):
            v = self._as_seq(v)
        if isinstance(v, SRange):
            raise Unsupported(f"{name}() of a range", self.line)
        if not isinstance(v, SSeq):
            raise Unsupported(f"{name}() of a {type(v).__name__}", self.line)
        elem_sort = _sort_of_type(v.elem)
        acc_i = z3.Int(self.fresh.name("acc"))
        x = z3.Const(self.fresh.name("x"), elem_sort)
        n = z3.Length(v.e)
        if name == "sum":
            if isinstance(v.elem, IntT):
                f = z3.Lambda([acc_i, x], acc_i + x)
                return SInt(z3.SeqFoldLeft(f, z3.IntVal(0), v.e))
            if isinstance(v.elem, BoolT):
                f = z3.Lambda([acc_i, x], acc_i + z3.If(x, 1, 0))
                return SInt(z3.SeqFoldLeft(f, z3.IntVal(0), v.e))
            if isinstance(v.elem, FloatT):
                acc_f = z3.FP(self.fresh.name("acc"), FLOAT)
                f = z3.Lambda([acc_f, x], z3.fpAdd(RM, acc_f, x))
                total = z3.SeqFoldLeft(f, z3.FPVal(0.0, FLOAT), v.e)
                return merge(n == 0, SInt(z3.IntVal(0)), SFloat(total))
            raise Unsupported(f"sum() of {v.elem.text()} items", self.line)
        if name in ("any", "all"):
            if isinstance(v.elem, IntT):
                truth: z3.BoolRef = x != 0
            elif isinstance(v.elem, BoolT):
                truth = x
            else:
                raise Unsupported(f"{name}() of {v.elem.text()} items", self.line)
            acc_b = z3.Bool(self.fresh.name("acc"))
            if name == "any":
                f = z3.Lambda([acc_b, x], z3.Or(acc_b, truth))
                return SBool(z3.SeqFoldLeft(f, FALSE, v.e))
            f = z3.Lambda([acc_b, x], z3.And(acc_b, truth))
            return SBool(z3.SeqFoldLeft(f, TRUE, v.e))
        # min / max
        self.raise_if(n == 0, "ValueError", state)
        if isinstance(v.elem, IntT):
            first = v.e[0]
            if name == "min":
                f = z3.Lambda([acc_i, x], z3.If(x < acc_i, x, acc_i))
            else:
                f = z3.Lambda([acc_i, x], z3.If(x > acc_i, x, acc_i))
            rest = z3.SubSeq(v.e, 1, n - 1)
            return SInt(z3.SeqFoldLeft(f, first, rest))
        raise Unsupported(f"{name}() of {v.elem.text()} items", self.line)

    def method_call(self, node: ast.Call, func: ast.Attribute, state: State) -> V:
        if node.keywords or any(isinstance(a, ast.Starred) for a in node.args):
            raise Unsupported(f"keyword or * arguments to .{func.attr}()", node.lineno)
        obj = self.ev(func.value, state)
        args = [self.ev(a, state) for a in node.args]
        method = func.attr
        if isinstance(obj, SSeq) and obj.kind == "list" and method in MUTATING_METHODS:
            if not isinstance(func.value, ast.Name):
                raise Unsupported(f".{method}() on an expression", node.lineno)
            return self.list_mutation(func.value.id, obj, method, args, state)
        if isinstance(obj, SSeq) and method == "index" and len(args) == 1:
            item = args[0]
            if item.ty != obj.elem or not isinstance(item, SInt | SStr | SBool):
                raise Unsupported(f".index() of a {item.ty.text()}", node.lineno)
            pos = z3.IndexOf(obj.e, z3.Unit(term(item)), 0)
            self.raise_if(pos < 0, "ValueError", state)
            return SInt(pos)
        if isinstance(obj, SSeq) and method == "count" and len(args) == 1:
            item = args[0]
            if item.ty != obj.elem or not isinstance(item, SInt | SStr | SBool):
                raise Unsupported(f".count() of a {item.ty.text()}", node.lineno)
            acc = z3.Int(self.fresh.name("acc"))
            x = z3.Const(self.fresh.name("x"), _sort_of_type(obj.elem))
            f = z3.Lambda([acc, x], acc + z3.If(x == term(item), 1, 0))
            return SInt(z3.SeqFoldLeft(f, z3.IntVal(0), obj.e))
        raise Unsupported(f"the method .{method}() on a {type(obj).__name__}", node.lineno)

    def list_mutation(self, name: str, seq: SSeq, method: str, args: list[V], state: State) -> V:
        if method == "append" and len(args) == 1:
            seq = self._adopt(seq, args[0])
            item = self._coerce_elem(args[0], seq.elem)
            self._escape(item)
            self._mutate(name, seq, z3.Concat(seq.e, z3.Unit(term(item))), state)
            return SNone()
        if method == "extend" and len(args) == 1:
            self._extend(name, seq, args[0], state)
            return SNone()
        if method == "pop" and len(args) <= 1:
            n = z3.Length(seq.e)
            if args:
                i = self._as_int(args[0], state)
                idx = z3.If(i < 0, i + n, i)
            else:
                idx = n - 1
            self.raise_if(z3.Or(idx < 0, idx >= n), "IndexError", state)
            item = wrap(seq.elem, seq.e[idx])
            rest = z3.Concat(z3.SubSeq(seq.e, 0, idx), z3.SubSeq(seq.e, idx + 1, n - idx - 1))
            self._mutate(name, seq, rest, state)
            return item
        if method == "clear" and not args:
            self._mutate(name, seq, z3.Empty(seq.e.sort()), state)
            return SNone()
        if method == "insert" and len(args) == 2:
            n = z3.Length(seq.e)
            i = self._as_int(args[0], state)
            idx = z3.If(i < 0, i + n, i)
            idx = z3.If(idx < 0, 0, z3.If(idx > n, n, idx))
            seq = self._adopt(seq, args[1])
            item = self._coerce_elem(args[1], seq.elem)
            new = z3.Concat(
                z3.SubSeq(seq.e, 0, idx), z3.Unit(term(item)), z3.SubSeq(seq.e, idx, n - idx)
            )
            self._mutate(name, seq, new, state)
            return SNone()
        if method == "remove" and len(args) == 1:
            item = args[0]
            if item.ty != seq.elem or not isinstance(item, SInt | SStr | SBool):
                raise Unsupported(f".remove() of a {item.ty.text()}", self.line)
            n = z3.Length(seq.e)
            pos = z3.IndexOf(seq.e, z3.Unit(term(item)), 0)
            self.raise_if(pos < 0, "ValueError", state)
            rest = z3.Concat(z3.SubSeq(seq.e, 0, pos), z3.SubSeq(seq.e, pos + 1, n - pos - 1))
            self._mutate(name, seq, rest, state)
            return SNone()
        raise Unsupported(f"the list method .{method}()", self.line)

    def _extend(self, name: str, seq: SSeq, other: V, state: State) -> None:
        if isinstance(other, STuple):
            other = self._as_seq(other)
        if isinstance(other, SSeq):
            if other.elem != seq.elem:
                if _is_empty_literal(other.e):
                    return
                if _is_empty_literal(seq.e):
                    seq = SSeq(seq.kind, other.elem, z3.Empty(other.e.sort()), seq.origin)
                else:
                    raise Unsupported("extending a list with items of another type", self.line)
            self._mutate(name, seq, z3.Concat(seq.e, other.e), state)
            return
        if isinstance(other, SRange):
            raise Unsupported("extending a list with a range", self.line)
        self.raise_if(TRUE, "TypeError", state)

    def inline(self, fn: ast.FunctionDef, node: ast.Call, args: list[V], state: State) -> V:
        """Call a function of the same module by executing its body in place."""
        depth = self.depth
        self.inlined += 1
        if depth >= self.limits.inline_depth or self.inlined > self.limits.max_inlines:
            self.exhausted.append(Exhausted(state.live, "recursion-bound", node.lineno))
            state.live = FALSE
            return SNone()
        for a in args:
            self._escape(a)
        callee_state = self._enter(fn, args, {}, state.objects, parent=state)
        frame = Frame(locals=_local_names(fn), depth=depth + 1)
        saved_line = self.line
        self.depth = depth + 1
        try:
            self.exec_block(fn.body, callee_state, frame)
        finally:
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
    ) -> State:
        a = fn.args
        if a.vararg or a.kwarg or a.kwonlyargs or a.posonlyargs:
            raise Unsupported("*args, **kwargs or keyword-only parameters", fn.lineno)
        if fn.decorator_list:
            raise Unsupported("a decorated function", fn.lineno)
        names = [p.arg for p in a.args]
        if len(args) > len(names):
            raise Unsupported("a call with too many arguments", self.line)
        defaults = a.defaults
        env: dict[str, V] = {n: SUnbound() for n in _local_names(fn)}
        for n, v in zip(names, args, strict=False):
            env[n] = v
        missing = names[len(args):]
        first_default = len(names) - len(defaults)
        for offset, n in enumerate(missing):
            pos = len(args) + offset
            if pos < first_default:
                raise Unsupported("a call with missing arguments", self.line)
            d = defaults[pos - first_default]
            try:
                env[n] = constant(ast.literal_eval(d), fn.lineno)
            except ValueError as err:
                raise Unsupported("a non-literal default argument", fn.lineno) from err
            if isinstance(env[n], SSeq):
                raise Unsupported("a mutable default argument", fn.lineno)
        live = parent.live if parent is not None else TRUE
        return State(live, env, dict(objects))


@dataclass(frozen=True)
class IterSource:
    """The k-th element of an iterated value."""

    value: V
    enumerate: bool = False

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


def floor_div(x: z3.ArithRef, y: z3.ArithRef) -> z3.ArithRef:
    """Python's ``//`` (rounds toward minus infinity); Z3's ``div`` is Euclidean."""
    return z3.If(y > 0, x / y, z3.If(y < 0, (-x) / (-y), 0))


def constant(value: object, line: int) -> V:
    if value is None:
        return SNone()
    if isinstance(value, bool):
        return SBool(z3.BoolVal(value))
    if isinstance(value, int):
        return SInt(z3.IntVal(value))
    if isinstance(value, float):
        return SFloat(z3.FPVal(value, FLOAT))
    if isinstance(value, str):
        return SStr(z3.StringVal(value))
    if isinstance(value, tuple):
        return STuple(tuple(constant(v, line) for v in value))
    raise Unsupported(f"a constant of type {type(value).__name__}", line)


def _sort(v: V) -> z3.SortRef:
    return term(v).sort()


def _sort_of_type(t: PyType) -> z3.SortRef:
    from veribot.checks.lang.pyvalues import sort_of

    return sort_of(t)


def _common_elem_type(items: Sequence[V], line: int) -> PyType:
    types = {i.ty for i in items}
    if len(types) != 1:
        raise Unsupported("a list with items of different types", line)
    (t,) = types
    if not isinstance(t, IntT | BoolT | FloatT | StrT | ListT | TupleT) or (
        isinstance(t, TupleT) and t.homogeneous is None
    ):
        raise Unsupported(f"a list of {t.text()}", line)
    return t


def _is_empty_literal(e: z3.ExprRef) -> bool:
    return bool(z3.is_app(e) and e.decl().kind() == z3.Z3_OP_SEQ_EMPTY)


def _kind(v: V) -> str:
    if isinstance(v, STuple):
        return "tuple"
    if isinstance(v, SSeq):
        return v.kind
    return type(v).__name__


def _is_none_union(a: V, b: V) -> bool:
    return any(isinstance(x, SNone) for v in (a, b) for _, x in alternatives(v))


def _local_names(fn: ast.FunctionDef) -> frozenset[str]:
    """Names bound anywhere in ``fn``'s own body: Python makes them local throughout."""
    names = {a.arg for a in fn.args.args}
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


_TAMPERING_NAMES = {
    "exec", "eval", "compile", "setattr", "delattr", "globals", "vars", "locals",
    "__import__", "builtins", "__builtins__", "sys", "importlib", "inspect", "types",
}  # fmt: skip


def _tampers(node: ast.stmt) -> bool:
    """Whether module-level code may rewrite functions, constants or builtins in place.

    Binding a plain name is visible statically (the name stops being a constant); writes
    through attributes or subscripts, ``del``, ``global`` and the reflective builtins are
    not, so they make every proof in the module unsupported.
    """
    for sub in ast.walk(node):
        if isinstance(sub, ast.Attribute | ast.Subscript) and isinstance(
            sub.ctx, ast.Store | ast.Del
        ):
            return True
        if isinstance(sub, ast.Delete | ast.Global | ast.Nonlocal):
            return True
        if isinstance(sub, ast.Name) and sub.id in _TAMPERING_NAMES:
            return True
        if isinstance(sub, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) and (
            sub.decorator_list
        ):
            return True
    return False


def _inert(node: ast.stmt) -> bool:
    """Module-level code that defines things without running anything of its own."""
    if isinstance(node, ast.FunctionDef):
        return not node.decorator_list and all(
            d is None or isinstance(d, ast.Constant) for d in node.args.defaults
        )
    if isinstance(node, ast.Expr):
        return isinstance(node.value, ast.Constant)
    if isinstance(node, ast.Assign | ast.AnnAssign):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        if not all(isinstance(t, ast.Name) for t in targets):
            return False  # X.attr = ..., X[k] = ... change other objects at import
        value = node.value
        if value is None:
            return True
        try:
            ast.literal_eval(value)
        except ValueError:
            return False
        return True
    if isinstance(node, ast.ClassDef):
        return (
            not node.decorator_list
            and not node.keywords
            and all(isinstance(b, ast.Name) for b in node.bases)
            and all(_inert(s) for s in node.body)
        )
    if isinstance(node, ast.If):  # `if __name__ == "__main__":` does not run on import
        test = node.test
        return (
            isinstance(test, ast.Compare)
            and isinstance(test.left, ast.Name)
            and test.left.id == "__name__"
            and len(test.comparators) == 1
            and isinstance(test.comparators[0], ast.Constant)
            and test.comparators[0].value == "__main__"
            and isinstance(test.ops[0], ast.Eq)
            and not node.orelse
        )
    return isinstance(node, ast.Pass)


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
    "floor_div",
]
