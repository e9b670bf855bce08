"""Confirm a candidate input by executing both versions in the sandbox, and compare.

Equivalence, as executed (the definition users read in the report):

* both versions **return** equal values: same type (``1``, ``1.0`` and ``True`` differ),
  equal by ``==`` except that NaN equals NaN, containers recursively, dicts and sets
  regardless of order; or both **raise** an exception of the same type (messages may
  differ);
* and the **arguments** are left equal after the call (in-place mutation of a list or
  dict argument is part of the behaviour).

Everything else is a difference only when it is shown:

* a version **hangs** (the per-call timer fires, ``call_s``, 2 s by default) while the
  other finished at least ten times sooner: a difference ("still running after 2 s,
  when the other returned in 0.001 s"). If both hang, nothing is shown.
* a version hits a **resource** limit (memory, CPU, file size) while the other finished
  at least ten times sooner than the call limit: a difference, and the sentence says
  it is one of resource use. ``confirm`` requires it to happen again in a second run.
* a **crash** of the interpreter (a signal, ``os._exit``) against a version that
  finished: a difference, reproduced by a second run in ``confirm``. Two crashes, a
  crash against a hang, or a call that was never run are never called equal: they
  are *undecided* (``same_behaviour`` is False and ``difference`` is None).

Each version runs in its own sandbox child, so one cannot affect the other.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from veribot.checks.sandbox import DEFAULT_LIMITS, Limits, run_calls
from veribot.checks.verdict import Behaviour, BehaviourKind, Counterexample

__all__ = [
    "Comparison",
    "compare",
    "confirm",
    "difference",
    "render",
    "run_both",
    "same_behaviour",
]

log = logging.getLogger(__name__)

# A hang or a resource failure is shown when the other version finished this many
# times sooner than the failing one ran.
_SHOWN_RATIO = 10.0
_FINISHED = (BehaviourKind.RETURNED, BehaviourKind.RAISED)
_NOT_FINISHED = (BehaviourKind.HUNG, BehaviourKind.RESOURCE)


@dataclass(frozen=True)
class Comparison:
    """The outcome of comparing two behaviours: same, a shown difference, or undecided."""

    same: bool
    difference: str | None = None  # set iff a difference is shown
    undecided: str | None = None  # why neither could be said


def same_behaviour(a: Behaviour, b: Behaviour) -> bool:
    """True iff the two behaviours are shown equal (see the module docstring)."""
    return compare(a, b).same


def difference(a: Behaviour, b: Behaviour) -> str | None:
    """A sentence saying how ``a`` (before) and ``b`` (after) differ, or None.

    None means no difference is shown: the behaviours are the same or undecided.
    """
    return compare(a, b).difference


def compare(a: Behaviour, b: Behaviour) -> Comparison:
    """Compare the before behaviour ``a`` with the after behaviour ``b``."""
    if "not-run" in (a.value, b.value):
        return Comparison(False, undecided="a call was not run")
    if a.kind in _FINISHED and b.kind in _FINISHED:
        return _compare_finished(a, b)
    if a.kind in _FINISHED or b.kind in _FINISHED:
        return _compare_one_finished(a, b)
    if a.kind is BehaviourKind.HUNG and b.kind is BehaviourKind.HUNG:
        return Comparison(False, undecided="both versions were still running at the time limit")
    return Comparison(
        False,
        undecided=f"neither version finished: the before version {a.describe()}, "
        f"the after version {b.describe()}",
    )


def _compare_finished(a: Behaviour, b: Behaviour) -> Comparison:
    if a.kind is not b.kind:
        return Comparison(False, f"the before version {a.describe()}, "
                                 f"the after version {b.describe()}")
    if a.value != b.value:
        if a.kind is BehaviourKind.RAISED:
            return Comparison(False, f"the before version raises {a.text}, "
                                     f"the after version raises {b.text}")
        before, after = a.text, b.text
        if before == after:  # same repr, different type or hidden detail
            before, after = render(a.value), render(b.value)
        if before == after:
            before, after = f"{before} ({_tag(a.value)})", f"{after} ({_tag(b.value)})"
        return Comparison(False, f"the before version returns {before}, "
                                 f"the after version returns {after}")
    if a.args_after != b.args_after:
        verb = "return" if a.kind is BehaviourKind.RETURNED else "raise"
        return Comparison(
            False,
            f"both {verb} {a.text}, but leave the arguments different: "
            f"{render(a.args_after)} after the before version, "
            f"{render(b.args_after)} after the after version",
        )
    return Comparison(True)


def _compare_one_finished(a: Behaviour, b: Behaviour) -> Comparison:
    done, other = (a, b) if a.kind in _FINISHED else (b, a)
    done_name, other_name = ("before", "after") if done is a else ("after", "before")
    verb = "returned" if done.kind is BehaviourKind.RETURNED else "raised"
    finished = f"when the {done_name} version {verb} in {_seconds(done.elapsed_s)}"
    quick = done.elapsed_s * _SHOWN_RATIO <= max(other.elapsed_s, 1e-3)
    if other.kind is BehaviourKind.HUNG:
        if not quick:
            return Comparison(False, undecided=f"the {other_name} version {other.describe()}, "
                                               f"but the {done_name} version was not much faster")
        return Comparison(False, f"the {other_name} version is {other.text}, {finished}")
    if other.kind is BehaviourKind.RESOURCE:
        if not quick and other.value not in ("memory", "file-size", "output"):
            return Comparison(False, undecided=f"the {other_name} version {other.describe()}, "
                                               f"but the {done_name} version was not much faster")
        return Comparison(
            False,
            f"the {other_name} version {other.describe()}, {finished} (a difference in "
            f"resource use: the limit was hit on one side only)",
        )
    return Comparison(False, f"the {other_name} version {other.describe()}, {finished}")


def _seconds(s: float) -> str:
    return f"{s:.3f} s" if s >= 0.001 else "under 0.001 s"


def _tag(encoded: object) -> str:
    if isinstance(encoded, tuple) and encoded and isinstance(encoded[0], str):
        return encoded[1] if encoded[0] == "object" and len(encoded) > 1 else encoded[0]
    return type(encoded).__name__


def render(encoded: object, limit: int = 200) -> str:
    """A Python-like text for a canonical encoding (for the sentences people read)."""
    text = _render(encoded)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _render(e: object) -> str:
    if not isinstance(e, tuple | list) or not e or not isinstance(e[0], str):
        return repr(e)
    tag, rest = e[0], tuple(e[1:])
    if tag == "None":
        return "None"
    if tag in ("bool", "int") and rest:
        value = rest[0]
        if isinstance(value, str) and tag == "int":
            number = int(value, 16)
            return str(number) if len(value) < 3000 else hex(number)  # str() stops at 4300 digits
        return repr(value)
    if tag == "float" and rest:
        return str(rest[0]) if isinstance(rest[0], str) else repr(rest[0])
    if tag in ("str", "bytes", "bytearray") and rest:
        if tag == "str" or not isinstance(rest[0], str):
            return repr(rest[0])
        data = bytes.fromhex(rest[0])
        return repr(data) if tag == "bytes" else repr(bytearray(data))
    if tag in ("list", "tuple", "set", "frozenset") and rest and isinstance(rest[0], tuple):
        items = ", ".join(_render(x) for x in rest[0])
        if tag == "list":
            return f"[{items}]"
        if tag == "tuple":
            return f"({items},)" if len(rest[0]) == 1 else f"({items})"
        if not rest[0]:
            return f"{tag}()"
        return f"frozenset({{{items}}})" if tag == "frozenset" else f"{{{items}}}"
    if tag == "dict" and rest and isinstance(rest[0], tuple):
        pairs = (kv for kv in rest[0] if isinstance(kv, tuple) and len(kv) == 2)
        return "{" + ", ".join(f"{_render(k)}: {_render(v)}" for k, v in pairs) + "}"
    if tag == "object" and len(rest) == 2:
        inner = rest[1] if isinstance(rest[1], str) else _render(rest[1])
        return f"{rest[0]}({inner})" if not isinstance(rest[1], str) else inner
    if tag == "sha256":
        return f"<a value of {rest[1] if len(rest) > 1 else '?'} encoded characters>"
    return f"<{tag}>"


def run_both(
    before_src: str,
    after_src: str,
    entry: str,
    calls: Sequence[Sequence[str]],
    *,
    limits: Limits = DEFAULT_LIMITS,
) -> list[tuple[Behaviour, Behaviour]]:
    """Run every call on both versions, each version in its own child (concurrently)."""
    with ThreadPoolExecutor(max_workers=2, thread_name_prefix="veribot-differential") as pool:
        before = pool.submit(run_calls, before_src, entry, calls, limits=limits)
        after = pool.submit(run_calls, after_src, entry, calls, limits=limits)
        return list(zip(before.result(), after.result(), strict=True))


def _rests_on_limits(b: Behaviour) -> bool:
    """A crash, a resource limit, or a MemoryError: may depend on the machine's state."""
    return b.kind in (BehaviourKind.CRASHED, BehaviourKind.RESOURCE) or (
        b.kind is BehaviourKind.RAISED and b.value == "MemoryError"
    )


def confirm(
    before_src: str,
    after_src: str,
    entry: str,
    args: Sequence[str],
    *,
    found_by: str,
    limits: Limits = DEFAULT_LIMITS,
) -> Counterexample | None:
    """Execute ``entry(*args)`` on both versions; a Counterexample only if they differ.

    A difference that rests on a crash or a resource limit must happen again in a
    second pair of runs; otherwise the input is not a counterexample.
    """
    call = [str(a) for a in args]
    [(before, after)] = run_both(before_src, after_src, entry, [call], limits=limits)
    sentence = difference(before, after)
    if sentence is None:
        return None
    if _rests_on_limits(before) or _rests_on_limits(after):
        [(before2, after2)] = run_both(before_src, after_src, entry, [call], limits=limits)
        if (before2.kind, after2.kind) != (before.kind, after.kind) or difference(
            before2, after2
        ) is None:
            log.info("differential: %s(%s) did not reproduce: %s", entry, ", ".join(call),
                     sentence)
            return None
        sentence += " (seen in two runs)"
    return Counterexample(
        args=tuple(call), before=before, after=after, found_by=found_by, difference=sentence
    )
