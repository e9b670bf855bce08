"""The engine: pure analysis of code, no network, no GitHub, no environment reads.

The public names are gathered here; everything else is an implementation detail of its
module.
"""

from veribot.checks.equivalence import Budget, check_pair
from veribot.checks.verdict import (
    Behaviour,
    BehaviourKind,
    Counterexample,
    Reason,
    Result,
    Verdict,
)

__all__ = [
    "Behaviour",
    "BehaviourKind",
    "Budget",
    "Counterexample",
    "Reason",
    "Result",
    "Verdict",
    "check_pair",
]
