"""``try``/``except``/``else``/``finally`` in the symbolic executor.

Every exception the model raises goes through ``Executor.raise_if``. Inside a ``try`` it
is *captured* instead of ending the function: the path where it was raised (its guard, its
locals as the ``try``'s own frame sees them, the list arguments' contents) is kept with
the exception's class. After the ``try`` body, each captured exception goes to the first
handler whose classes match by CPython's class hierarchy (``except LookupError`` takes an
IndexError); the paths a handler takes are merged and its body runs once on them. What no
handler takes is raised again from where it was raised. A ``finally`` body runs on every
way the statement is left (normally, by an exception, by ``return``, ``break`` or
``continue``), once per way, and then that way resumes (a ``return`` in it overrides,
an exception in it replaces).

Only builtin exception classes that the module does not rebind are matched; the exception
object (``except E as e``) may only be raised again. MemoryError and RecursionError are
never raised by the model, so a handler naming them is unsupported, and every proof of
code with a ``try`` states that neither occurs.
"""

from __future__ import annotations

import ast
import builtins
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import z3

from veribot.checks.lang.pymodule import BUILTIN_EXCEPTIONS
from veribot.checks.lang.pyops import FALSE, TRUE
from veribot.checks.lang.pyvalues import SUnbound, Unsupported, V

if TYPE_CHECKING:
    from veribot.checks.lang.pyexec import Executor, Frame, State

# Raised by CPython where the model has no such exception (resources, the interpreter).
UNMODELLED = frozenset({
    "MemoryError", "RecursionError", "KeyboardInterrupt", "SystemExit", "GeneratorExit",
    "SystemError", "BaseExceptionGroup", "ExceptionGroup", "StopAsyncIteration",
})  # fmt: skip

NOT_RAISED = (
    "the code does not run out of memory or recursion depth inside a `try` (MemoryError "
    "and RecursionError are not modelled)"
)


@dataclass
class Caught:
    """An exception raised inside a ``try``: where, which, and the path's state there."""

    state: State
    exc: str
    exc_term: z3.ExprRef | None
    line: int


@dataclass
class Catcher:
    """A ``try`` being executed: the exceptions raised in it so far."""

    depth: int
    caught: list[Caught] = field(default_factory=list)
    # Whether it would catch the GeneratorExit that closing a generator raises at a yield
    # (a `finally`, a bare `except`, `except BaseException`).
    sees_close: bool = True


@dataclass
class Handling:
    """An ``except`` body being executed, for a bare ``raise`` (None: in a ``finally``)."""

    depth: int
    # Each exception it took: where it was raised, its class, a shared helper's outcome.
    caught: list[tuple[z3.BoolRef, str, z3.ExprRef | None]] | None
    name: str | None = None


@dataclass
class Final:
    """A ``try ... finally`` being executed: the returns made inside it."""

    returns: list[tuple[State, V, int]] = field(default_factory=list)


def capture(
    ex: Executor, guard: z3.BoolRef, exc: str, state: State, exc_term: z3.ExprRef | None
) -> None:
    """Keep an exception raised where ``guard`` holds for the innermost ``try``."""
    from veribot.checks.lang.pyexec import State

    catcher: Catcher = ex.catchers[-1]
    # The handler runs in the frame of the try: an exception raised in an inlined call
    # leaves that frame's locals as they were at the call.
    env = dict(ex.callers[catcher.depth].env if ex.depth > catcher.depth else state.env)
    for depth, targets, hidden in reversed(ex.comp_scopes):
        if depth == catcher.depth:
            for name in targets:
                env.pop(name, None)
            env.update(hidden)
    catcher.caught.append(Caught(State(guard, env, dict(state.objects)), exc, exc_term, ex.line))


def _reraise(ex: Executor, c: Caught) -> None:
    if z3.is_false(c.state.live):
        return
    saved = ex.line
    ex.line = c.line
    ex.raise_if(TRUE, c.exc, c.state, c.exc_term)
    ex.line = saved


def leave_generator(ex: Executor, catcher: Catcher) -> None:
    """Raise again what left a generator expression's frame (caught by ``catcher``).

    PEP 479: a StopIteration leaving a generator becomes RuntimeError. A shared helper's
    exception has a class the model does not know (it may be StopIteration): unsupported.
    """
    for c in catcher.caught:
        if z3.is_false(z3.simplify(c.state.live)):
            continue
        if c.exc_term is not None or c.exc not in BUILTIN_EXCEPTIONS:
            raise Unsupported(
                "a helper that may raise inside a generator expression", c.line
            )
        exc = "RuntimeError" if c.exc == "StopIteration" else c.exc
        _reraise(ex, Caught(c.state, exc, None, c.line))


def exec_try(ex: Executor, stmt: ast.Try, state: State, frame: Frame) -> None:
    if stmt.finalbody:
        _try_finally(ex, stmt, state, frame)
    else:
        _try_except(ex, stmt, state, frame)


def _handler_classes(
    ex: Executor, handler: ast.ExceptHandler, state: State
) -> list[type[BaseException]]:
    """The classes an ``except`` clause names (``BaseException`` for a bare one)."""
    node = handler.type
    if node is None:
        return [BaseException]
    names = node.elts if isinstance(node, ast.Tuple) else [node]
    classes: list[type[BaseException]] = []
    for n in names:
        if not isinstance(n, ast.Name) or n.id not in BUILTIN_EXCEPTIONS:
            raise Unsupported("an except clause naming a class that is not builtin", n.lineno)
        if ex._shadowed(n.id) or n.id in state.env:
            raise Unsupported(f"an except clause naming '{n.id}', a name the module binds",
                              n.lineno)
        if n.id in UNMODELLED:
            raise Unsupported(f"except {n.id} (the model never raises it)", n.lineno)
        cls = getattr(builtins, n.id)
        assert isinstance(cls, type) and issubclass(cls, BaseException)
        classes.append(cls)
    return classes


def _check_name_uses(handler: ast.ExceptHandler) -> None:
    """``except E as e``: the model has no exception objects; ``e`` may only be raised."""
    if handler.name is None:
        return
    allowed: set[int] = set()
    for node in ast.walk(ast.Module(body=handler.body, type_ignores=[])):
        if isinstance(node, ast.Raise):
            for part in (node.exc, node.cause):
                if isinstance(part, ast.Name) and part.id == handler.name:
                    allowed.add(id(part))
    for node in ast.walk(ast.Module(body=handler.body, type_ignores=[])):
        if isinstance(node, ast.Name) and node.id == handler.name and id(node) not in allowed:
            raise Unsupported(f"a use of the exception object '{handler.name}'", node.lineno)
        if isinstance(node, ast.FunctionDef | ast.Lambda | ast.ClassDef):
            raise Unsupported("a nested definition in an except clause", node.lineno)
        if isinstance(node, ast.ExceptHandler) and node.name == handler.name:
            # The inner clause deletes the name when it ends: a later `raise e` fails.
            raise Unsupported(f"nested except clauses binding '{handler.name}'", node.lineno)


def _try_except(ex: Executor, stmt: ast.Try, state: State, frame: Frame) -> None:
    from veribot.checks.lang.pyexec import merge_states

    if not stmt.handlers:
        ex.exec_block(stmt.body, state, frame)
        return
    classes = [_handler_classes(ex, h, state) for h in stmt.handlers]
    for h in stmt.handlers:
        _check_name_uses(h)
    catcher = Catcher(ex.depth, sees_close=any(BaseException in c for c in classes))
    ex.catchers.append(catcher)
    try:
        ex.exec_block(stmt.body, state, frame)
    finally:
        ex.catchers.pop()
    # `else` runs where the body completed; its exceptions are not the handlers'.
    ex.exec_block(stmt.orelse, state, frame)
    taken: list[list[Caught]] = [[] for _ in stmt.handlers]
    for c in catcher.caught:
        if z3.is_false(c.state.live):
            continue
        index = _first_match(c, classes)
        if index is None:
            _reraise(ex, c)
        else:
            taken[index].append(c)
    outs = [state]
    for handler, caught in zip(stmt.handlers, taken, strict=True):
        if not caught:
            continue
        hs = merge_states([c.state for c in caught], state)
        if handler.name is not None:
            hs.env[handler.name] = SUnbound()  # only `raise e` reads it (checked above)
        taken_here = [(c.state.live, c.exc, c.exc_term) for c in caught]
        ex.handling.append(Handling(ex.depth, taken_here, handler.name))
        try:
            ex.exec_block(handler.body, hs, frame)
        finally:
            ex.handling.pop()
        if handler.name is not None:
            hs.env[handler.name] = SUnbound()  # Python deletes the name after the clause
        outs.append(hs)
    joined = merge_states(outs, state)
    state.live, state.env, state.objects = joined.live, joined.env, joined.objects


def _first_match(c: Caught, classes: list[list[type[BaseException]]]) -> int | None:
    raised = getattr(builtins, c.exc, None) if c.exc in BUILTIN_EXCEPTIONS else None
    for index, handler in enumerate(classes):
        if raised is None:
            # An exception of a shared helper: its class is not known.
            if BaseException in handler:
                return index
            raise Unsupported("an except clause around a call whose exception is not known")
        assert isinstance(raised, type)
        if any(issubclass(raised, cls) for cls in handler):
            return index
    return None


def exec_raise(ex: Executor, stmt: ast.Raise, state: State) -> bool:
    """A bare ``raise``, ``raise e`` or ``raise X from Y``; False for a plain ``raise X``."""
    handling: Handling | None = ex.handling[-1] if ex.handling else None
    if stmt.cause is not None:
        cause = stmt.cause
        ok = (
            (isinstance(cause, ast.Constant) and cause.value is None)
            or (handling is not None and isinstance(cause, ast.Name)
                and cause.id == handling.name)
            or (isinstance(cause, ast.Name) and cause.id in BUILTIN_EXCEPTIONS
                and not ex._shadowed(cause.id) and cause.id not in state.env)
        )
        if not ok:
            raise Unsupported("raise ... from this expression", stmt.lineno)
        # The cause is evaluated after the exception; neither raises here. The cause is
        # not part of the behaviour compared.
    exc = stmt.exc
    reraise = exc is None or (
        handling is not None and isinstance(exc, ast.Name) and exc.id == handling.name
    )
    if not reraise:
        if stmt.cause is None:
            return False
        # `raise X from Y`: as `raise X`.
        ex.exec_raise(ast.copy_location(ast.Raise(exc=exc, cause=None), stmt), state)
        return True
    if handling is None or handling.caught is None or handling.depth != ex.depth:
        raise Unsupported("a bare raise outside an except clause", stmt.lineno)
    # Raise again the exception the handler took, on each path where it was taken.
    for where, exc_name, exc_term in handling.caught:
        if z3.is_false(z3.simplify(z3.And(state.live, where))):
            continue
        ex.raise_if(where, exc_name, state, exc_term)
    state.live = FALSE
    return True


def intercept_return(ex: Executor, value: V, state: State, frame: Frame, line: int) -> None:
    """A return inside ``try ... finally``: the ``finally`` runs before it returns."""
    final: Final = frame.finals[-1]
    ex._escape(value)  # the finally may mutate the returned list: unsupported then
    final.returns.append((state.fork(state.live), value, line))
    state.live = FALSE


def _try_finally(ex: Executor, stmt: ast.Try, state: State, frame: Frame) -> None:
    from veribot.checks.lang.pyexec import merge_states

    catcher = Catcher(ex.depth)
    final = Final()
    loops = bool(frame.breaks)
    ex.catchers.append(catcher)
    frame.finals.append(final)
    if loops:
        frame.breaks.append([])
        frame.continues.append([])
    breaks: list[State] = []
    continues: list[State] = []
    try:
        _try_except(ex, stmt, state, frame)
    finally:
        ex.catchers.pop()
        frame.finals.pop()
        if loops:
            breaks = frame.breaks.pop()
            continues = frame.continues.pop()

    def run_final(st: State) -> None:
        ex.handling.append(Handling(ex.depth, None))
        try:
            ex.exec_block(stmt.finalbody, st, frame)
        finally:
            ex.handling.pop()

    # Exceptions, one run of the finally per class raised.
    groups: dict[tuple[str, int | None], list[Caught]] = {}
    for c in catcher.caught:
        if z3.is_false(c.state.live):
            continue
        key = (c.exc, None if c.exc_term is None else c.exc_term.get_id())
        groups.setdefault(key, []).append(c)
    for members in groups.values():
        st = merge_states([m.state for m in members], state)
        run_final(st)
        first = members[0]
        _reraise(ex, Caught(st, first.exc, first.exc_term, first.line))
    # Returns: one run, the value chosen by the path.
    if final.returns:
        parts = []
        for st, value, _ in final.returns:
            st.env["$return"] = value
            parts.append(st)
        st = merge_states(parts, state)
        value = st.env.pop("$return")
        run_final(st)
        if not z3.is_false(st.live):
            ex._return(value, st, frame, final.returns[-1][2])
    for pending, target in ((breaks, frame.breaks), (continues, frame.continues)):
        if pending:
            st = merge_states(pending, state)
            run_final(st)
            if not z3.is_false(st.live):
                target[-1].append(st.fork(st.live))
    run_final(state)
