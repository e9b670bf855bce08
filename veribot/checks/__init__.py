"""The engine: pure analysis of code, no network, no GitHub, no environment reads.

The public names are gathered here. They are imported on first use, so that a child
process started as ``python -m veribot.checks.<module>`` pays only for what it needs.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from veribot.checks.equivalence import Budget, check_pair
    from veribot.checks.verdict import (
        Behaviour,
        BehaviourKind,
        Counterexample,
        Reason,
        Result,
        Verdict,
    )

_HOMES = {
    "Budget": "veribot.checks.equivalence",
    "check_pair": "veribot.checks.equivalence",
    "Behaviour": "veribot.checks.verdict",
    "BehaviourKind": "veribot.checks.verdict",
    "Counterexample": "veribot.checks.verdict",
    "Reason": "veribot.checks.verdict",
    "Result": "veribot.checks.verdict",
    "Verdict": "veribot.checks.verdict",
}

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


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'veribot.checks' has no attribute {name!r}")
    return getattr(importlib.import_module(home), name)
