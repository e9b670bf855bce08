"""Conformance of the Z3 model with CPython, on generated programs (``veribot bench-model``).

Each program from ``modelgen`` is executed symbolically exactly as the prover does it
(``Fresh.value`` of the declared parameter types, ``Executor.run``), then for each
concrete input the symbolic inputs are pinned to it, the one exit whose guard holds is
read off, and its outcome is compared with CPython's: the return value with its type
(floats bit for bit, NaN equal to NaN), or the exception type, and the final contents of
the list arguments. Any difference is a defect of the model.

An argument the declared domain does not hold in the model (``True`` for ``int`` while
the domain is plain ``int``; ``3`` for ``float``) is run against a model built for the
argument's own type, so the operators are still checked on it. Inputs that need more loop
iterations than the bound, characters beyond what Z3's strings hold, or a runaway loop in
CPython are counted, not compared. The programs are our own generated code, so CPython
runs them in this process, under a line-count guard.
"""

from __future__ import annotations

import argparse
import ast
import copy
import itertools
import math
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType, GeneratorType
from typing import Any, TextIO

import z3

from veribot.bench.modelgen import Program, generate, inputs
from veribot.checks.lang.pyexec import Executor, Limits, Result
from veribot.checks.lang.pymodule import Module
from veribot.checks.lang.pytypes import parse_type
from veribot.checks.lang.pyvalues import (
    FLOAT,
    MAX_CHAR,
    Fresh,
    OutOfTime,
    SBool,
    SFloat,
    SInt,
    SNone,
    SSeq,
    SStr,
    STuple,
    SUnion,
    Unsupported,
    V,
    concrete,
    reduce,
    str_val,
    wrap,
)
from veribot.checks.sandbox._child import MAX_YIELDS

LOOP_BOUND = 6  # the prover's default (Budget.loop_bound)
INPUT_S = 5.0  # seconds the model may take to evaluate one input
LINE_LIMIT = 20_000  # lines CPython may run per call before it counts as a runaway
FILENAME = "<bench-model>"

# What one run of a program gives: ("return", value) or ("raise", name), and the lists.
Behaviour = tuple[str, object, tuple[object, ...]]


@dataclass(frozen=True)
class Disagreement:
    """One input on which the model and CPython differ."""

    program: Program
    args: tuple[object, ...]
    model: Behaviour | str
    python: Behaviour

    def text(self) -> str:
        shown = ", ".join(_show(a) for a in self.args)
        return (
            f"{self.program.source}"
            f"# input: f({shown})\n# model:   {self.model}\n# CPython: {self.python}\n"
        )


@dataclass
class Tally:
    """Figures of one run."""

    programs: int = 0
    modelled: int = 0
    unsupported: dict[str, int] = field(default_factory=dict)
    timeouts: int = 0
    inputs: int = 0
    compared: int = 0
    beyond_bound: int = 0
    outside_domain: int = 0  # e.g. True stored in a list of int, characters past U+2FFFF
    runaway: int = 0
    slow: int = 0  # inputs left out because the program used up its time
    widened: int = 0  # compared on a model built for the argument's own type
    disagreements: list[Disagreement] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)  # programs on which Z3 itself failed
    seconds: float = 0.0

    def summary(self) -> str:
        frac = self.modelled / self.programs if self.programs else 0.0
        lines = [
            f"programs generated: {self.programs}",
            f"modelled:           {self.modelled} ({frac:.1%}); unsupported "
            f"{sum(self.unsupported.values())}, model timeouts {self.timeouts}, Z3 errors "
            f"{len(self.errors)}",
            f"inputs compared:    {self.compared} of {self.inputs} "
            f"({self.widened} on a model of the argument's own type; not compared: "
            f"{self.beyond_bound} beyond the loop bound, {self.outside_domain} of argument "
            f"types the model does not cover, {self.runaway} runaway in CPython, {self.slow} "
            "past the program's time)",
            f"disagreements:      {len(self.disagreements)}",
            f"time:               {self.seconds:.1f} s",
        ]
        if self.unsupported:
            top = sorted(self.unsupported.items(), key=lambda kv: -kv[1])[:8]
            lines.append("unsupported constructs: " + "; ".join(f"{k} ({n})" for k, n in top))
        return "\n".join(lines)


# -- CPython ------------------------------------------------------------------------------


class _Runaway(BaseException):
    """Raised by the line guard; a BaseException so the program cannot catch it."""


def compile_program(program: Program) -> Callable[..., object]:
    namespace: dict[str, Any] = {}
    exec(compile(program.source, FILENAME, "exec"), namespace)  # our own generated code
    fn: Callable[..., object] = namespace[program.name]
    return fn


def run_python(fn: Callable[..., object], args: Sequence[object]) -> Behaviour | None:
    """What CPython does on ``args`` (copied first); None for a runaway loop."""
    call_args = [copy.deepcopy(a) for a in args]
    count = 0

    def tracer(frame: FrameType, event: str, arg: object) -> Any:
        nonlocal count
        if frame.f_code.co_filename != FILENAME:
            return None
        if event == "line":
            count += 1
            if count > LINE_LIMIT:
                raise _Runaway
        return tracer

    old = sys.gettrace()
    sys.settrace(tracer)
    try:
        value = fn(*call_args)
        if isinstance(value, GeneratorType):
            # Drained as the sandbox does: what it yields, up to its end.
            value = Drained(itertools.islice(value, MAX_YIELDS + 1))
        outcome: tuple[str, object] = ("return", canon(value))
    except _Runaway:
        return None
    except Exception as exc:
        outcome = ("raise", type(exc).__name__)
    finally:
        sys.settrace(old)
    lists = tuple(canon(a) for a in call_args if isinstance(a, list))
    return (*outcome, lists)


class Drained(tuple[object, ...]):
    """The items a generator yielded."""

    __slots__ = ()


def canon(value: object) -> object:
    """A comparable form: the type with the value; floats by their bits, NaN as one NaN."""
    if isinstance(value, Drained):
        return ("generator", tuple(canon(v) for v in value))
    if isinstance(value, float):
        return ("float", "nan" if math.isnan(value) else value.hex())
    if isinstance(value, list | tuple):
        return (type(value).__name__, tuple(canon(v) for v in value))
    return (type(value).__name__, value)


# -- the model ----------------------------------------------------------------------------


@dataclass
class _Model:
    """The symbolic run of a program for one vector of argument types."""

    symbolic: list[V]
    result: Result


def build_model(program: Program, types: Sequence[str], deadline: float) -> _Model:
    """Execute the program symbolically as the prover does (may raise Unsupported)."""
    tree = ast.parse(program.source)
    (func,) = [
        n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == program.name
    ]
    fresh = Fresh()
    symbolic = [
        fresh.value(parse_type(t), name)
        for (name, _), t in zip(program.params, types, strict=True)
    ]
    limits = Limits(loop_bound=LOOP_BOUND, deadline=deadline)
    result = Executor(Module.of(tree), fresh, limits).run(func, symbolic)
    return _Model(symbolic, result)


def pin(v: V, a: object) -> z3.BoolRef | None:
    """The constraint that symbolic ``v`` is the concrete ``a``; None if it cannot be."""
    if isinstance(v, SUnion):
        options = []
        for g, alt in v.alts:
            c = pin(alt, a)
            if c is not None:
                options.append(z3.And(g, c))
        return z3.Or(options) if options else None
    if isinstance(v, SInt) and type(a) is int:
        return v.e == z3.IntVal(a)
    if isinstance(v, SBool) and type(a) is bool:
        return v.e == z3.BoolVal(a)
    if isinstance(v, SFloat) and type(a) is float:
        return z3.fpIsNaN(v.e) if math.isnan(a) else v.e == z3.FPVal(a, FLOAT)
    if isinstance(v, SStr) and type(a) is str:
        if any(ord(c) > MAX_CHAR for c in a):
            return None
        return v.e == str_val(a)
    if isinstance(v, SNone) and a is None:
        return z3.BoolVal(True)
    if isinstance(v, SSeq) and type(a) is (list if v.kind == "list" else tuple):
        assert isinstance(a, list | tuple)
        parts = [z3.Length(v.e) == len(a)]
        for i, x in enumerate(a):
            c = pin(wrap(v.elem, v.e[i]), x)
            if c is None:
                return None
            parts.append(c)
        return z3.And(parts)
    if isinstance(v, STuple) and type(a) is tuple and len(a) == len(v.items):
        cs = [pin(item, x) for item, x in zip(v.items, a, strict=True)]
        if any(c is None for c in cs):
            return None
        return z3.And([c for c in cs if c is not None] or [z3.BoolVal(True)])
    return None


def run_model(m: _Model, args: Sequence[object]) -> Behaviour | str:
    """The model's behaviour on ``args``, or why it has none: ``outside``, ``beyond``,
    or a description of a defect (no exit or several exits hold)."""
    constraints = [pin(v, a) for v, a in zip(m.symbolic, args, strict=True)]
    if any(c is None for c in constraints):
        return "outside"
    solver = z3.Solver()
    solver.add(*[c for c in constraints if c is not None])
    if solver.check() != z3.sat:
        return "defect: the input cannot be pinned"
    model = solver.model()

    def holds(e: z3.BoolRef) -> bool:
        value = model.eval(e, model_completion=True)
        if not (z3.is_true(value) or z3.is_false(value)):
            value = reduce(value)
        return bool(z3.is_true(value))

    if any(holds(x.guard) for x in m.result.exhausted):
        return "beyond"
    hits = [e for e in m.result.exits if holds(e.guard)]
    if len(hits) != 1:
        lines = sorted(e.line for e in hits)
        return f"defect: {len(hits)} exits hold (lines {lines})"
    (hit,) = hits
    lists = tuple(
        canon(concrete(model, SSeq("list", _elem_of(m, k), e)))
        for k, e in enumerate(hit.params)
    )
    if hit.value is None:
        return ("raise", hit.exc, lists)
    value = hit.value
    if isinstance(value, SUnion):
        value = next((alt for g, alt in value.alts if holds(g)), value)
    if isinstance(value, SSeq) and value.kind == "generator":
        items = concrete(model, SSeq("tuple", value.elem, value.e))
        assert isinstance(items, tuple)
        return ("return", canon(Drained(items)), lists)
    return ("return", canon(concrete(model, hit.value)), lists)


def _elem_of(m: _Model, k: int) -> Any:
    """The element type of the k-th list parameter (the order ``Executor.start`` uses)."""
    seqs = [v for v in m.symbolic if isinstance(v, SSeq) and v.kind == "list" and v.origin]
    return seqs[k].elem


def arg_types(declared: Sequence[str], args: Sequence[object]) -> tuple[str, ...]:
    """Each argument's own type where the declared one may not hold it in the model."""
    out = []
    for t, a in zip(declared, args, strict=True):
        if type(a) is bool and t in ("int", "float", "int | None"):
            out.append("bool")
        elif type(a) is int and t == "float":
            out.append("int")
        else:
            out.append(t)
    return tuple(out)


# -- the run ------------------------------------------------------------------------------


def check_program(
    program: Program, args_list: Sequence[tuple[object, ...]], tally: Tally, per_program_s: float
) -> None:
    """Compare model and CPython on every input of one program, adding to ``tally``."""
    tally.programs += 1
    declared = tuple(t for _, t in program.params)
    fn = compile_program(program)
    models: dict[tuple[str, ...], _Model | None] = {}
    deadline = time.monotonic() + per_program_s

    def model_for(types: tuple[str, ...]) -> _Model | None:
        if types not in models:
            try:
                models[types] = build_model(program, types, deadline)
            except Unsupported as err:
                models[types] = None
                if types == declared:
                    tally.unsupported[err.construct] = tally.unsupported.get(err.construct, 0) + 1
            except OutOfTime:
                models[types] = None
                if types == declared:
                    tally.timeouts += 1
            except z3.Z3Exception as err:  # Z3 failed while the model was built
                models[types] = None
                if types == declared:
                    tally.errors.append(f"{program.source}# Z3 error: {err}\n")
        return models[types]

    main = model_for(declared)
    if main is None:
        return
    tally.modelled += 1
    for args in args_list:
        tally.inputs += 1
        if time.monotonic() > deadline:
            tally.slow += 1
            continue
        try:
            got = _timed(run_model, main, args, deadline)
            widened = False
            if got == "outside":
                own = arg_types(declared, args)
                other = model_for(own) if own != declared else None
                if other is not None:
                    got = _timed(run_model, other, args, deadline)
                    widened = True
        except z3.Z3Exception:
            tally.slow += 1  # evaluating the model took longer than the input's share
            continue
        if got == "outside":
            tally.outside_domain += 1
            continue
        if got == "beyond":
            tally.beyond_bound += 1
            continue
        expected = run_python(fn, args)
        if expected is None:
            tally.runaway += 1
            continue
        tally.compared += 1
        tally.widened += widened
        if got != expected:
            tally.disagreements.append(Disagreement(program, args, got, expected))


def run(
    programs: int,
    seed: int = 0,
    inputs_per_program: int = 12,
    per_program_s: float = 20.0,
    progress: TextIO | None = None,
) -> Tally:
    """Generate ``programs`` programs and compare the model with CPython on each."""
    tally = Tally()
    start = time.monotonic()
    for index in range(programs):
        program = generate(seed, index)
        args_list = inputs(program, seed, index, inputs_per_program)
        check_program(program, args_list, tally, per_program_s)
        if progress is not None and (index + 1) % 50 == 0:
            progress.write(
                f"  {index + 1} programs, {len(tally.disagreements)} disagreements, "
                f"{time.monotonic() - start:.0f} s\n"
            )
            progress.flush()
    tally.seconds = time.monotonic() - start
    return tally


def _timed(
    fn: Callable[[_Model, Sequence[object]], Behaviour | str],
    m: _Model,
    args: Sequence[object],
    deadline: float,
) -> Behaviour | str:
    """``fn(m, args)``, interrupted (Z3Exception) after INPUT_S or at the deadline."""
    limit = max(0.1, min(INPUT_S, deadline - time.monotonic()))
    timer = threading.Timer(limit, z3.main_ctx().interrupt)
    timer.start()
    try:
        return fn(m, args)
    finally:
        timer.cancel()


def _show(a: object) -> str:
    if isinstance(a, float) and (math.isnan(a) or math.isinf(a)):
        return f"float('{a}')"
    return repr(a)


# -- command line -------------------------------------------------------------------------


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``veribot bench-model``."""
    def positive(text: str) -> int:
        value = int(text)
        if value < 1:
            raise argparse.ArgumentTypeError(f"must be at least 1: {text!r}")
        return value

    parser.add_argument(
        "--programs", type=positive, default=200, help="programs to generate (default 200)"
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of the generator (default 0)")
    parser.add_argument(
        "--inputs-per-program",
        type=positive,
        default=12,
        metavar="K",
        help="inputs per program (default 12)",
    )
    parser.add_argument(
        "--out", type=Path, default=None, metavar="FILE", help="also write the report here"
    )


def main(
    args: argparse.Namespace, stdout: TextIO | None = None, stderr: TextIO | None = None
) -> int:
    """Run the conformance benchmark; 0 when the model agreed with CPython everywhere."""
    out = stdout if stdout is not None else sys.stdout
    err = stderr if stderr is not None else sys.stderr
    tally = run(args.programs, args.seed, args.inputs_per_program, progress=err)
    parts = [tally.summary()]
    for d in tally.disagreements:
        parts.append("-" * 72 + "\n" + d.text())
    for error in tally.errors:
        parts.append("-" * 72 + "\n" + error)
    text = "\n".join(parts) + "\n"
    out.write(text)
    if args.out is not None:
        args.out.write_text(text, encoding="utf-8")
    return 0 if not tally.disagreements else 1
