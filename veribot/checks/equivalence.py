"""The equivalence check: decide whether two versions of a function behave the same."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from veribot.checks.verdict import Reason, Result, Verdict


@dataclass(frozen=True)
class Budget:
    """Limits for one pair: wall time overall, loop unrolling and inlining depth."""

    timeout_s: float = 10.0
    loop_bound: int = 6
    inline_depth: int = 4
    solver_timeout_ms: int = 4000
    solver_rlimit: int = 50_000_000


def check_pair(
    before: str,
    after: str,
    entry: str,
    param_types: Mapping[str, str] | None = None,
    *,
    budget: Budget = Budget(),
) -> Result:
    """Decide whether ``entry`` behaves the same in two module sources.

    ``entry`` is a qualified name within the module (``func`` or ``Class.method``).
    ``param_types`` overrides the annotations of ``entry``'s parameters.
    """
    return Result(Verdict.INCONCLUSIVE, Reason.INTERNAL_ERROR, "the prover is not built yet")
