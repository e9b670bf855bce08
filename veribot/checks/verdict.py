"""Verdicts, their reasons and the evidence each one carries.

The contract (see README, "The three verdicts"):

- ``verified``: the claim holds for every input in the stated domain; carries the proof
  method and every assumption it rests on.
- ``refuted``: carries a concrete input on which both versions were really executed (in
  the sandbox) and behaved differently.
- ``inconclusive``: carries a specific reason code and a sentence saying what was not
  shown and why.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field


class Verdict(enum.Enum):
    """The three possible answers; there is no fourth."""

    VERIFIED = "verified"
    REFUTED = "refuted"
    INCONCLUSIVE = "inconclusive"


class Reason:
    """Machine-readable reason codes (the ``reason`` field of result records).

    Codes with a detail take the form ``code:detail``, e.g. ``unsupported:while-else``.
    """

    PROOF = "proof"
    COUNTEREXAMPLE = "counterexample"
    TIMEOUT = "timeout"
    SOLVER_UNKNOWN = "solver-unknown"
    LOOP_BOUND = "loop-bound"
    RECURSION_BOUND = "recursion-bound"
    UNSUPPORTED = "unsupported"
    UNKNOWN_TYPE = "unknown-type"
    PARSE_ERROR = "parse-error"
    NOT_FOUND = "entry-not-found"
    NOT_REPRODUCED = "not-reproduced"
    NOT_EXECUTED = "not-executed"  # candidates exist, but running the code is not allowed
    IMPORT_FAILED = "import-failed"  # the module's own code fails when it is imported
    NO_DIFFERENCE_FOUND = "no-difference-found"
    ADDED = "added"
    DELETED = "deleted"
    RENAMED = "renamed"
    BINARY = "binary-file"
    NOT_A_FUNCTION = "outside-functions"
    BUDGET = "budget"
    INTERNAL_ERROR = "internal-error"
    # An input on which the versions differed, but not in a way that counts:
    NONDETERMINISTIC = "nondeterministic"  # a version behaves differently from run to run
    SANDBOX_REFUSED = "sandbox-refused"  # the sandbox refused an operation (file, socket, ...)
    SANDBOX_LIMIT = "sandbox-limit"  # a limit of the sandbox (time, memory, file size) hit

    @staticmethod
    def unsupported(construct: str) -> str:
        return f"{Reason.UNSUPPORTED}:{construct}"


# ``Behaviour.value`` of a HUNG call seen repeating a state in a loop (a proven hang).
ENDLESS = "endless-loop"
# ``Behaviour.value`` (kind HUNG) of a method never called: its object could not be built
# (the constructor raised or hung on the generated arguments). Not an input of the method.
NO_INSTANCE = "no-instance"


class BehaviourKind(enum.Enum):
    """How one execution of one version ended."""

    RETURNED = "return"
    RAISED = "raise"
    HUNG = "timeout"
    RESOURCE = "resource"  # killed for exceeding memory, processes or file size
    CRASHED = "crash"  # the interpreter itself died (signal, abort)


@dataclass(frozen=True)
class Behaviour:
    """What one version did on one input, as observed in the sandbox.

    ``value`` is a canonical, comparable encoding of the return value (or the exception's
    type name); ``text`` is what a person reads (``repr`` of the value, or
    ``ValueError: bad input``). ``args_after`` is the canonical encoding of the arguments
    after the call, so that in-place mutation is part of the behaviour.
    """

    kind: BehaviourKind
    value: object
    text: str
    args_after: object = None
    elapsed_s: float = 0.0
    # What the sandbox refused during the call (a write outside its directory, a socket,
    # a process or thread): the behaviour may be the sandbox's doing, not the code's.
    refused: tuple[str, ...] = ()
    # For a method: the state of the object it was called on, as the constructor built it
    # (before the call). Objects built differently are no input of the method.
    built: object = None
    # The module itself failed while it was imported: the call was never made.
    at_import: bool = False
    # RAISED: the innermost line of the module under test the exception passed through
    # (None: it never did), whether it started there rather than in code called from that
    # line (a builtin, a library, another module), and whether it started at a `raise`
    # statement of the project's own files.
    site: tuple[int | None, bool, bool] | None = field(default=None, compare=False)

    def describe(self) -> str:
        if self.kind is BehaviourKind.RETURNED:
            return f"returns {self.text}"
        if self.kind is BehaviourKind.RAISED:
            return f"raises {self.text}"
        if self.kind is BehaviourKind.HUNG and self.value == NO_INSTANCE:
            return self.text
        if self.kind is BehaviourKind.HUNG:
            return f"never finishes ({self.text})" if self.value == ENDLESS else (
                f"does not finish ({self.text})")
        if self.kind is BehaviourKind.RESOURCE:
            return f"exceeds a resource limit ({self.text})"
        return f"crashes ({self.text})"


@dataclass(frozen=True)
class Counterexample:
    """An input on which the two versions were executed and behaved differently."""

    args: tuple[str, ...]  # each argument as a Python literal (repr), `name=literal` by keyword
    before: Behaviour
    after: Behaviour
    found_by: str  # "z3", "random-testing", "crosshair", ...
    difference: str = ""  # a sentence: what differs (value, exception, mutation, hang)
    # Calls made first, in the same freshly imported module: state kept between calls
    # (a default object) made the last call differ.
    prior: tuple[tuple[str, ...], ...] = ()
    # For a method: the object it was called on, as the constructor call that built it in
    # each version (``Point(3, 'a')``), or that call with the property read
    # (``Point(3, 'a').norm``). Empty for a function.
    receiver: str = ""
    # The PYTHONHASHSEED both versions ran with, when the difference shows under one seed
    # only (a version's result follows the hash seed: the order of a set of strings).
    hash_seed: int | None = None

    def call(self, name: str) -> str:
        """The call as Python code, ``f(1, k=2)`` or ``Point(3, 'a').move(2)``, after the
        calls that came first."""
        text = _one_call(name, self.receiver, self.args)
        if self.prior:
            first = "; ".join(_one_call(name, self.receiver, c) for c in self.prior)
            text += f" after {first}"
        return text

    def literals(self) -> tuple[str, ...]:
        """The call in the sandbox's call format (``sandbox.run_calls``)."""
        return (f"@{self.receiver}", *self.args) if self.receiver else self.args


def _one_call(name: str, receiver: str, args: tuple[str, ...]) -> str:
    if receiver and not receiver.endswith(")"):
        return receiver  # a property read
    if receiver:
        return f"{receiver}.{name}({', '.join(args)})"
    return f"{name}({', '.join(args)})"


@dataclass(frozen=True)
class Result:
    """The decision for one pair of versions of one function."""

    verdict: Verdict
    reason: str
    detail: str
    counterexample: Counterexample | None = None
    assumptions: tuple[str, ...] = ()
    method: str = ""  # how the verdict was reached, e.g. "smt: loop induction (lock-step)"
    line: int | None = None  # the line a reason concerns, in the after version if known
    time_s: float = 0.0
    notes: tuple[str, ...] = field(default=())  # what else was tried, for people

    def __post_init__(self) -> None:
        if self.verdict is Verdict.REFUTED and self.counterexample is None:
            raise ValueError("a refuted result needs a reproduced counterexample")
        if self.verdict is Verdict.VERIFIED and self.reason != Reason.PROOF:
            raise ValueError("a verified result needs a proof")
