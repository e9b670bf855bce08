"""Solver calls with both a timeout and a resource limit; ``unknown`` is never a pass.

The timeout alone is soft (Z3 checks it between steps), so every query also gets an
``rlimit``: a deterministic budget of solver work that makes a query give up the same way
on every machine.
"""

from __future__ import annotations

import enum
import time
from collections.abc import Sequence
from dataclasses import dataclass

import z3


class Status(enum.Enum):
    SAT = "sat"
    UNSAT = "unsat"
    UNKNOWN = "unknown"


@dataclass(frozen=True)
class Answer:
    """What the solver said, why if it did not know, and the model if satisfiable."""

    status: Status
    model: z3.ModelRef | None = None
    why: str = ""  # the solver's reason for unknown ("timeout", "canceled", ...)
    seconds: float = 0.0


@dataclass(frozen=True)
class SolverLimits:
    timeout_ms: int = 4000
    rlimit: int = 50_000_000


def check(facts: Sequence[z3.BoolRef], limits: SolverLimits) -> Answer:
    """Is the conjunction of ``facts`` satisfiable? Within the limits, or ``UNKNOWN``."""
    solver = z3.Solver()
    solver.set("timeout", max(1, int(limits.timeout_ms)))
    solver.set("rlimit", int(limits.rlimit))
    solver.add(*facts)
    start = time.perf_counter()
    try:
        result = solver.check()
    except z3.Z3Exception as err:  # raised by some theories on malformed or huge input
        return Answer(Status.UNKNOWN, why=f"solver error: {err}")
    seconds = time.perf_counter() - start
    if result == z3.sat:
        return Answer(Status.SAT, solver.model(), seconds=seconds)
    if result == z3.unsat:
        return Answer(Status.UNSAT, seconds=seconds)
    return Answer(Status.UNKNOWN, why=solver.reason_unknown() or "unknown", seconds=seconds)
