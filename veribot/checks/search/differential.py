"""Confirm a candidate input by executing both versions in the sandbox, and compare.

Equivalence, as executed (the definition users read in the report):

* both versions **return** equal values: same type (``1``, ``1.0`` and ``True`` differ),
  equal by ``==`` except that NaN equals NaN, containers recursively, dicts and sets
  regardless of order; or both **raise** an exception of the same type (messages may
  differ);
* and the **arguments** are left equal after the call (in-place mutation of a list or
  dict argument is part of the behaviour).

A **method** is called on an object its class builds in each version (the call starts
with its receiver, ``@Point(3, 'a')``: see ``sandbox.parse_receiver``). The object's
state after the call is compared like an argument: its attributes and slots, what its
properties read, and what changed in the data its classes hold (a list shared by all
instances) since before the first object was built, read without its ``__eq__`` or
``__repr__``. If the constructor fails in either version, or the two constructors build
different objects (compared before the call, without running properties), the input is
not one of the method: undecided, never a difference of the method (the constructor,
``Class.__init__``, is its own unit, which compares the objects it builds). The same
holds for objects of the project's classes among the arguments (``Point(1, 2)``, made
by each version's own class before the call).

Everything else is a difference only when it is shown, and never when it may be the
sandbox's doing rather than the code's:

* a version **hangs** where the other finished: a difference only when the hang is
  proven, i.e. the version was seen to repeat a state in a simple loop (the sandbox's
  "watch" run, ``BehaviourKind.HUNG`` with value ``ENDLESS``). A call the per-call timer
  stopped (``call_s``, 2 s by default) may just be slow or waiting (``time.sleep``):
  *undecided*, reason ``sandbox-limit``.
* a version hits a **resource** limit (memory, CPU, file size, the result channel) or
  raises ``MemoryError``: undecided (``sandbox-limit``); a normal machine may have more.
* the sandbox **refused** an operation during either call (a write outside its
  directory, a socket, a process or thread start: ``Behaviour.refused``): undecided
  (``sandbox-refused``), whatever the behaviours were.
* a version raises ``ImportError`` or ``ModuleNotFoundError``: undecided
  (``sandbox-limit``); the sandbox may lack files or packages the project has.
* returned objects of other types are compared by their attributes (and slots) where
  their ``repr`` shows only their address, leaving out dunder bookkeeping such as the
  ``__doc__`` a ``@contextmanager`` object copies, and otherwise by their ``repr``.
  Addresses (``<Tag object at 0x7f...>``) are never compared, in a ``repr`` or in a
  string: where an object is differs from run to run, so an address would make any
  version look nondeterministic and any two versions different. A returned coroutine
  is awaited (``asyncio.run``) and compared by what that gives. An object
  (returned, or ``self`` after a method call) whose only difference is attributes that
  the after version has and the before version lacks is undecided: an added attribute
  extends the class (code written for the before version cannot read it), so it is
  neither a difference nor the same. A removed or changed attribute is a difference.
* a **crash** of the interpreter (a signal, ``os._exit``) against a version that
  finished: a difference. Two crashes, a crash against a hang, or a call that was never
  run are never called equal: they are *undecided* (``same_behaviour`` is False and
  ``difference`` is None).

A difference found once is only a candidate. ``examine`` (and ``confirm``) runs each
version twice more, in fresh children with other hash seeds, and the difference refutes
only if each version behaved the same in all its runs and the difference held in each;
a version that did not is *nondeterministic* (random numbers, the clock, the
environment, object ids) and the input is undecided, unless its behaviour follows the
hash seed (the order of a set of strings): then each version runs again under each seed,
and if each behaves the same every time under each seed, a difference under one seed
refutes, with that seed (``Counterexample.hash_seed``).

Each version runs in its own sandbox child, so one cannot affect the other.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from veribot.checks.project.package import PairContext
from veribot.checks.sandbox import DEFAULT_LIMITS, Limits, run_calls
from veribot.checks.verdict import (
    ENDLESS,
    NO_INSTANCE,
    Behaviour,
    BehaviourKind,
    Counterexample,
    Reason,
)

__all__ = [
    "Comparison",
    "Confirmation",
    "compare",
    "confirm",
    "difference",
    "examine",
    "render",
    "run_both",
    "same_behaviour",
]

log = logging.getLogger(__name__)

_FINISHED = (BehaviourKind.RETURNED, BehaviourKind.RAISED)
# Runs of each version on a candidate input that differed, the first one included: a
# coin flip drawn otherwise by each version repeats its value in all of them, and passes
# for a difference, once in 2 * 2**(2 * (RUNS - 1)) tries (1 in 512 with 5).
RUNS = 5
# Runs of each version under each hash seed, where its behaviour followed the seed.
SEEDED_RUNS = 3


@dataclass(frozen=True)
class Comparison:
    """The outcome of comparing two behaviours: same, a shown difference, or undecided."""

    same: bool
    difference: str | None = None  # set iff a difference is shown
    undecided: str | None = None  # why neither could be said
    reason: str | None = None  # with ``undecided``: a Reason code worth reporting, if any


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
    if NO_INSTANCE in (a.value, b.value):
        # The object could not be built: no input of the method (and constructors that
        # differ are a difference of the class, reported for the constructor).
        return Comparison(False, undecided="the object was not built: "
                          + (a.text if a.value == NO_INSTANCE else b.text))
    if a.built != b.built:
        # Only when the constructors of the two versions built the same object does a
        # difference belong to the method.
        return Comparison(False, undecided="the two versions' constructors built different "
                          f"objects ({_state_difference(a.built, b.built)}): a difference of "
                          "the class, not of the method")
    if _opaque(a.built):
        return Comparison(False, undecided="the objects the constructors built hold values "
                          "known only by their repr (a function, a lambda): whether the two "
                          "versions built the same object is not known")
    if a.kind in _FINISHED and b.kind in _FINISHED:
        found = _compare_finished(a, b)
    elif a.kind in _FINISHED or b.kind in _FINISHED:
        found = _compare_one_finished(a, b)
    elif a.kind is BehaviourKind.HUNG and b.kind is BehaviourKind.HUNG:
        return Comparison(False, undecided="both versions were still running at the time limit")
    else:
        return Comparison(
            False,
            undecided=f"neither version finished: the before version {a.describe()}, "
            f"the after version {b.describe()}",
        )
    if found.same:
        return found
    refusal = _refusal(a, b)
    if refusal is not None:
        return Comparison(False, undecided=refusal, reason=Reason.SANDBOX_REFUSED)
    missing = _import_failure(a, b)
    if missing is not None:
        return Comparison(False, undecided=missing, reason=Reason.SANDBOX_LIMIT)
    for x, name in ((a, "before"), (b, "after")):
        if x.at_import:  # (the function was never called)
            return Comparison(False, undecided=f"the {name} version's module {x.describe()} "
                              "when it is imported, so the function was never called",
                              reason=Reason.IMPORT_FAILED)
    return found


# A module the sandbox could not import says more about what the sandbox was given (the
# files copied beside the module, the packages installed) than about the code.
_IMPORT_ERRORS = ("ImportError", "ModuleNotFoundError")


def _import_failure(a: Behaviour, b: Behaviour) -> str | None:
    for x, name in ((a, "before"), (b, "after")):
        if x.kind is BehaviourKind.RAISED and x.value in _IMPORT_ERRORS:
            return (
                f"the {name} version {x.describe()}: an import failed in the sandbox, which "
                "may lack files or packages the project has, so this is not taken as a "
                "difference of the code"
            )
    return None


def _refusal(a: Behaviour, b: Behaviour) -> str | None:
    parts = [
        f"{', '.join(x.refused)} in the {name} version"
        for x, name in ((a, "before"), (b, "after"))
        if x.refused
    ]
    if not parts:
        return None
    return (
        f"the sandbox refused {'; and '.join(parts)}, so the difference seen may be the "
        "sandbox's doing, not the code's"
    )


def _out_of_memory(b: Behaviour) -> bool:
    return b.kind is BehaviourKind.RAISED and b.value == "MemoryError"


def _compare_finished(a: Behaviour, b: Behaviour) -> Comparison:
    if (a.value != b.value or a.kind is not b.kind) and (_out_of_memory(a) or _out_of_memory(b)):
        name = "before" if _out_of_memory(a) else "after"
        return Comparison(
            False,
            undecided=f"the {name} version ran out of memory in the sandbox (its memory "
            "limit is smaller than a normal machine's), so the difference is not shown",
            reason=Reason.SANDBOX_LIMIT,
        )
    if a.kind is not b.kind:
        return Comparison(False, f"the before version {a.describe()}, "
                                 f"the after version {b.describe()}")
    if a.value != b.value:
        if a.kind is BehaviourKind.RAISED:
            before, after = (a.text, b.text) if a.text != b.text else (a.value, b.value)
            return Comparison(False, f"the before version raises {before}, "
                                     f"the after version raises {after}")
        before, after = a.text, b.text
        if _is_state(a.value) and _is_state(b.value):
            added = _only_added(a.value, b.value)
            if added:
                return Comparison(False, undecided=_ADDED.format(", ".join(added)))
            return Comparison(False, "the versions build different objects: "
                              + _state_difference(a.value, b.value))
        if before == after:  # same repr, different type or hidden detail
            before, after = render(a.value), render(b.value)
        if before == after:
            before, after = f"{before} ({_tag(a.value)})", f"{after} ({_tag(b.value)})"
        return Comparison(False, f"the before version returns {before}, "
                                 f"the after version returns {after}")
    if a.args_after != b.args_after:
        verb = "return" if a.kind is BehaviourKind.RETURNED else "raise"
        state_a, state_b = _self_state(a.args_after), _self_state(b.args_after)
        added = _only_added(state_a, state_b) if state_a != state_b else None
        if added and _without_self(a.args_after) == _without_self(b.args_after):
            return Comparison(False, undecided=_ADDED.format(", ".join(added)))
        if state_a != state_b:
            return Comparison(
                False,
                f"both {verb} {a.text}, but leave the object (`self`) different: "
                + _state_difference(state_a, state_b),
            )
        return Comparison(
            False,
            f"both {verb} {a.text}, but leave the arguments different: "
            + _arguments_difference(a.args_after, b.args_after),
        )
    return Comparison(True)


_ADDED = ("the after version's object has attributes the before version's lacks ({}) and "
          "is otherwise the same: an added attribute extends the class (code written for "
          "the before version cannot use it), so it is neither a difference nor the same")


def _table(pairs: object) -> dict[str, object]:
    if not isinstance(pairs, tuple):
        return {}
    return {str(kv[0]): kv[1] for kv in pairs if isinstance(kv, tuple) and len(kv) == 2}


def _only_added(a: object, b: object) -> list[str] | None:
    """The attributes only the after state has, when that is all that differs; else None.

    A removed or changed attribute, another class, or changed class data is a difference.
    """
    if not (_is_state(a) and _is_state(b)):
        return None
    assert isinstance(a, tuple) and isinstance(b, tuple)
    if a[1] != b[1] or a[3] != b[3]:
        return None
    x, y = _table(a[2]), _table(b[2])
    if any(key not in y or y[key] != value for key, value in x.items()):
        return None
    return sorted(y.keys() - x.keys()) or None


def _without_self(args_after: object) -> object:
    """The arguments after a method call, without the state of ``self``."""
    if _self_state(args_after) is None:
        return args_after
    assert isinstance(args_after, tuple)
    return args_after[1][1:]


def _self_state(args_after: object) -> object:
    """The state of ``self`` in the arguments after a method call, if they hold it."""
    if isinstance(args_after, tuple) and len(args_after) == 2 and args_after[0] == "tuple":
        items = args_after[1]
        if isinstance(items, tuple) and items and isinstance(items[0], tuple) \
                and items[0][:1] == ("self",):
            return items[0]
    return None


def _is_state(encoded: object) -> bool:
    return isinstance(encoded, tuple) and encoded[:1] == ("self",) and len(encoded) == 4


# The mark the sandbox puts on an object state holding values known only by their masked
# ``repr`` (``_child.OPAQUE_STATE``).
_OPAQUE_STATE = "opaque-state"


def _opaque(built: object, depth: int = 0) -> bool:
    """Whether a built object's state holds values known only by their ``repr``."""
    if depth > 3 or not isinstance(built, tuple | list) or not built:
        return False
    return built[0] == _OPAQUE_STATE or any(_opaque(x, depth + 1) for x in built)


def _state_difference(a: object, b: object) -> str:
    """Which attributes of two object states differ, before -> after (for people)."""
    if not (_is_state(a) and _is_state(b)):
        return f"{render(a)} in the before version, {render(b)} in the after version"
    assert isinstance(a, tuple) and isinstance(b, tuple)
    parts: list[str] = []
    if a[1] != b[1]:
        parts.append(f"of class {a[1]} before, {b[1]} after")

    def changes(x: dict[str, object], y: dict[str, object], owner: str) -> None:
        for key in sorted(x.keys() | y.keys()):
            if x.get(key) != y.get(key):
                old = render(x[key], 80) if key in x else "<absent>"
                new = render(y[key], 80) if key in y else "<absent>"
                parts.append(f"{owner}{key} is {old} before, {new} after")

    changes(_table(a[2]), _table(b[2]), "")
    shared_a, shared_b = _table(a[3]), _table(b[3])
    for owner in sorted(shared_a.keys() | shared_b.keys()):
        changes(_table(shared_a.get(owner, ())), _table(shared_b.get(owner, ())),
                f"the class attribute {owner}.")
    return "; ".join(parts[:6]) + ("; ..." if len(parts) > 6 else "") or "states differ"


def _arguments_difference(a: object, b: object) -> str:
    """Which arguments differ after the call, and for an object which attributes (for
    people; the arguments as encoded, ``('tuple', (first, second, ...))``)."""
    items_a, items_b = _items(a), _items(b)
    if items_a is None or items_b is None or len(items_a) != len(items_b):
        return f"{render(a)} after the before version, {render(b)} after the after version"
    parts = []
    # After a method call the first is `self` (told apart by the caller): not counted.
    first = 0 if items_a and _is_state(items_a[0]) else 1
    for i, (x, y) in enumerate(zip(items_a, items_b, strict=True), start=first):
        if x == y or _is_state(x):
            continue
        fields_x, fields_y = _fields(x), _fields(y)
        if fields_x is not None and fields_y is not None and x[1] == y[1]:  # type: ignore[index]
            changed = [f"{k} is {render(fields_x.get(k, ('unset',)), 80)} before, "
                       f"{render(fields_y.get(k, ('unset',)), 80)} after"
                       for k in sorted(fields_x.keys() | fields_y.keys())
                       if fields_x.get(k) != fields_y.get(k)]
            parts.append(f"argument {i} ({str(x[1]).rsplit('.', 1)[-1]}): "  # type: ignore[index]
                         + "; ".join(changed[:4]) + ("; ..." if len(changed) > 4 else ""))
        else:
            parts.append(f"argument {i} is {render(x, 120)} after the before version, "
                         f"{render(y, 120)} after the after version")
    return "; ".join(parts) or "the arguments' encodings differ"


def _items(encoded: object) -> tuple[object, ...] | None:
    if isinstance(encoded, tuple) and len(encoded) == 2 and encoded[0] == "tuple" \
            and isinstance(encoded[1], tuple):
        return encoded[1]
    return None


def _fields(encoded: object) -> dict[str, object] | None:
    """The attributes of an object encoded by its state (``('object', name, ('dict',
    ...))``), by name; None for anything else."""
    if not (isinstance(encoded, tuple) and len(encoded) == 3 and encoded[0] == "object"):
        return None
    state = encoded[2]
    if not (isinstance(state, tuple) and len(state) == 2 and state[0] == "dict"):
        return None
    out: dict[str, object] = {}
    for kv in state[1]:
        if isinstance(kv, tuple) and len(kv) == 2 and isinstance(kv[0], tuple) \
                and len(kv[0]) == 2 and kv[0][0] == "str":
            out[str(kv[0][1])] = kv[1]
    return out


def _compare_one_finished(a: Behaviour, b: Behaviour) -> Comparison:
    done, other = (a, b) if a.kind in _FINISHED else (b, a)
    done_name, other_name = ("before", "after") if done is a else ("after", "before")
    verb = "returned" if done.kind is BehaviourKind.RETURNED else "raised"
    finished = f"when the {done_name} version {verb} in {_seconds(done.elapsed_s)}"
    if other.kind is BehaviourKind.HUNG and other.value == ENDLESS:
        return Comparison(False, f"the {other_name} version is {other.text}, {finished}")
    if other.kind is BehaviourKind.HUNG:
        return Comparison(
            False,
            undecided=f"the {other_name} version {other.describe()}, {finished}; a slow or "
            "waiting computation is not a difference, and no endless loop was seen",
            reason=Reason.SANDBOX_LIMIT,
        )
    if other.kind is BehaviourKind.RESOURCE:
        return Comparison(
            False,
            undecided=f"the {other_name} version {other.describe()}, {finished}; the "
            "sandbox's limits are smaller than a normal machine's, so this is not shown to "
            "be a difference",
            reason=Reason.SANDBOX_LIMIT,
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
    if tag == "self" and len(rest) >= 2 and isinstance(rest[1], tuple):
        attrs = ", ".join(f"{kv[0]}={_render(kv[1])}" for kv in rest[1]
                          if isinstance(kv, tuple) and len(kv) == 2)
        shared = rest[2] if len(rest) > 2 and isinstance(rest[2], tuple) else ()
        text = f"{str(rest[0]).rsplit('.', 1)[-1]}({attrs})"
        for owner in shared:
            if isinstance(owner, tuple) and len(owner) == 2 and isinstance(owner[1], tuple):
                fields = ", ".join(f"{kv[0]}={_render(kv[1])}" for kv in owner[1]
                                 if isinstance(kv, tuple) and len(kv) == 2)
                text += f" with class {owner[0]!s}({fields})"
        return text
    if tag == "coroutine" and len(rest) == 2:
        said = f"returns {_render(rest[1])}" if rest[0] == "return" else f"raises {rest[1]}"
        return f"<coroutine: awaiting it {said}>"
    if tag == "unset":
        return "<unset>"
    if tag == "raises" and rest:
        return f"<reading it raises {rest[0]}>"
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
    hash_seed: int | None = None,
    context: PairContext | None = None,
) -> list[tuple[Behaviour, Behaviour]]:
    """Run every call on both versions, each version in its own child (concurrently).

    ``hash_seed``: the same ``PYTHONHASHSEED`` for both children (default: each its own).
    ``context``: each version is imported as part of its own revision's package.
    """
    pa, pb = (context.before, context.after) if context is not None else (None, None)
    with ThreadPoolExecutor(max_workers=2, thread_name_prefix="veribot-differential") as pool:
        before = pool.submit(run_calls, before_src, entry, calls, limits=limits,
                             hash_seed=hash_seed, package=pa)
        after = pool.submit(run_calls, after_src, entry, calls, limits=limits,
                            hash_seed=hash_seed, package=pb)
        return list(zip(before.result(), after.result(), strict=True))


@dataclass(frozen=True)
class Confirmation:
    """What executing a candidate input showed: a counterexample, or why not.

    ``reason`` and ``detail`` are set when the input was undecided for a cause the
    verdict should name (``Reason.NONDETERMINISTIC``, ``SANDBOX_REFUSED``,
    ``SANDBOX_LIMIT``); both empty when the versions simply behaved the same.
    """

    counterexample: Counterexample | None
    reason: str = ""
    detail: str = ""


def _seeds(n: int) -> list[int]:
    seeds: list[int] = []
    while len(seeds) < n:
        seed = 1 + secrets.randbelow(2**32 - 1)  # 0 would turn hash randomisation off
        if seed not in seeds:
            seeds.append(seed)
    return seeds


def _alike(x: Behaviour, y: Behaviour) -> bool:
    """Whether two runs of one version behaved the same (a hang is alike any hang)."""
    if x.kind in _FINISHED or y.kind in _FINISHED:
        return x.kind is y.kind and compare(x, y).same
    return x.kind is y.kind and (x.kind is BehaviourKind.HUNG or x.value == y.value)


def _unstable(name: str, runs: Sequence[Behaviour]) -> Confirmation | None:
    """Why the runs of one version did not all behave alike, or None if they did."""
    for other in runs[1:]:
        first = runs[0]
        if _alike(first, other):
            continue
        stopped = [x for x in (first, other) if x.kind is BehaviourKind.HUNG]
        if stopped and stopped[0].value != ENDLESS and (
            first.kind in _FINISHED or other.kind in _FINISHED
        ):
            return Confirmation(
                None,
                Reason.SANDBOX_LIMIT,
                f"the {name} version finished in one run and was stopped by the sandbox's "
                "per-call timer in another: it is slow there, which is not a difference",
            )
        return Confirmation(
            None,
            Reason.NONDETERMINISTIC,
            f"the {name} version {first.describe()} in one run and {other.describe()} "
            "in another on the same input: it depends on something besides its input "
            "(random numbers, the clock, the environment, object ids, the order of a set "
            "of strings), so the difference is not a stable one",
        )
    return None


def _may_be_endless(a: Behaviour, b: Behaviour) -> bool:
    """One version finished, the other was stopped by the per-call timer."""
    hung = [x for x in (a, b) if x.kind is BehaviourKind.HUNG and x.value == "timeout"]
    return len(hung) == 1 and (a.kind in _FINISHED or b.kind in _FINISHED)


def examine(
    before_src: str,
    after_src: str,
    entry: str,
    args: Sequence[str],
    *,
    found_by: str,
    limits: Limits = DEFAULT_LIMITS,
    prior: Sequence[Sequence[str]] = (),
    context: PairContext | None = None,
    hash_seed: int | None = None,
) -> Confirmation:
    """Execute ``entry(*args)`` on both versions; a Counterexample only if they differ stably.

    ``hash_seed``: run every time under this ``PYTHONHASHSEED`` (to reproduce a
    difference shown under one seed) instead of fresh seeds.

    The first pair of runs shares one hash seed. If the versions differ (or one did not
    finish), each version runs ``RUNS - 1`` more times in fresh children, each pair with
    a new hash seed, and a version that did not finish is watched for an endless loop.
    The input refutes only if every version behaved alike in all its runs and a
    difference was shown; otherwise it is undecided, with the reason.
    """
    call = [str(a) for a in args]
    calls = [*([str(a) for a in c] for c in prior), call]
    seeds = _seeds(RUNS) if hash_seed is None else [hash_seed] * RUNS
    before, after = run_both(before_src, after_src, entry, calls, limits=limits,
                             hash_seed=seeds[0], context=context)[-1]
    first = compare(before, after)
    if first.same:
        return Confirmation(None)
    if first.difference is None and not _may_be_endless(before, after):
        return Confirmation(None, first.reason or "", first.undecided or "")
    pa, pb = (context.before, context.after) if context is not None else (None, None)
    jobs = [
        (source, package, seed, first_run.kind is BehaviourKind.HUNG)
        for seed in seeds[1:]
        for source, package, first_run in ((before_src, pa, before), (after_src, pb, after))
    ]
    with ThreadPoolExecutor(max_workers=len(jobs), thread_name_prefix="veribot-rerun") as pool:
        futures = [
            pool.submit(run_calls, source, entry, calls, limits=limits, hash_seed=seed,
                        watch=watch, package=package)
            for source, package, seed, watch in jobs
        ]
        reruns = [f.result()[-1] for f in futures]
    befores, afters = [before, *reruns[0::2]], [after, *reruns[1::2]]
    for name, runs in (("before", befores), ("after", afters)):
        unstable = _unstable(name, runs)
        if unstable is not None and unstable.reason == Reason.NONDETERMINISTIC:
            # Perhaps it follows the hash seed (the order of a set of strings): compared
            # under one seed, the two versions may still differ reproducibly.
            seeded = _under_one_seed(before_src, after_src, entry, calls, seeds, befores,
                                     afters, limits=limits, context=context,
                                     found_by=found_by)
            if seeded is not None:
                return seeded
        if unstable is not None:
            log.info("differential: %s(%s): %s", entry, ", ".join(call), unstable.detail)
            return unstable
    comparisons = [compare(b, a) for b, a in zip(befores, afters, strict=True)]
    refused = next((c for c in comparisons if c.reason == Reason.SANDBOX_REFUSED), None)
    if refused is not None:  # in a later run only
        return Confirmation(None, Reason.SANDBOX_REFUSED, refused.undecided or "")
    for (b, a), shown in zip(zip(befores, afters, strict=True), comparisons, strict=True):
        if shown.difference is not None:
            sentence = f"{shown.difference} (seen in each of {RUNS} runs of each version)"
            receiver = call[0][1:] if call and call[0].startswith("@") else ""
            return Confirmation(Counterexample(
                args=tuple(call[1:] if receiver else call), before=b, after=a,
                found_by=found_by, difference=sentence,
                prior=tuple(tuple(c[1:] if c and c[0].startswith("@") else c)
                            for c in calls[:-1]),
                receiver=receiver, hash_seed=hash_seed,
            ))
    undecided = next((c for c in comparisons if c.reason), comparisons[0])
    return Confirmation(None, undecided.reason or "", undecided.undecided or "")


def _under_one_seed(
    before_src: str, after_src: str, entry: str, calls: Sequence[Sequence[str]],
    seeds: Sequence[int], befores: Sequence[Behaviour], afters: Sequence[Behaviour], *,
    limits: Limits, context: PairContext | None, found_by: str,
) -> Confirmation | None:
    """A difference shown under one ``PYTHONHASHSEED``, when a version's behaviour changed
    with the seed (the order of a set of strings follows it).

    Each version runs ``SEEDED_RUNS - 1`` more times in fresh children under each seed it ran
    with; only if every version behaved the same every time under each seed (its
    behaviour is a function of the seed: random numbers or the clock would not repeat)
    is the first seed under which the versions differed taken. The seed is part of the
    environment, as a fixed one is in a deployment or a test run: two versions that
    behave differently under one seed, each reproducibly, are different code.
    """
    pa, pb = (context.before, context.after) if context is not None else (None, None)
    jobs = [(i, source, package) for i, _ in enumerate(seeds) for _ in range(SEEDED_RUNS - 1)
            for source, package in ((before_src, pa), (after_src, pb))]
    with ThreadPoolExecutor(max_workers=min(len(jobs), 6),
                            thread_name_prefix="veribot-seeded") as pool:
        futures = [pool.submit(run_calls, source, entry, calls, limits=limits,
                               hash_seed=seeds[i], package=package)
                   for i, source, package in jobs]
        reruns = [f.result()[-1] for f in futures]
    for (i, source, _), again in zip(jobs, reruns, strict=True):
        first = befores[i] if source is before_src else afters[i]
        if again.kind not in _FINISHED or not _alike(first, again):
            return None  # not a function of the seed: nondeterministic
    for seed, b, a in zip(seeds, befores, afters, strict=True):
        shown = compare(b, a)
        if shown.difference is None:
            continue
        call = [str(x) for x in calls[-1]]
        receiver = call[0][1:] if call and call[0].startswith("@") else ""
        sentence = (f"{shown.difference} (with PYTHONHASHSEED={seed}; under each of "
                    f"{len(seeds)} seeds each version behaved the same in {SEEDED_RUNS} runs, and "
                    "differently from one seed to another)")
        return Confirmation(Counterexample(
            args=tuple(call[1:] if receiver else call), before=b, after=a,
            found_by=found_by, difference=sentence,
            prior=tuple(tuple(c[1:] if c and c[0].startswith("@") else c)
                        for c in calls[:-1]),
            receiver=receiver, hash_seed=seed,
        ))
    return None


def confirm(
    before_src: str,
    after_src: str,
    entry: str,
    args: Sequence[str],
    *,
    found_by: str,
    limits: Limits = DEFAULT_LIMITS,
    prior: Sequence[Sequence[str]] = (),
    context: PairContext | None = None,
    hash_seed: int | None = None,
) -> Counterexample | None:
    """Execute ``entry(*args)`` on both versions; a Counterexample only if they differ.

    ``args`` may hold keyword arguments (``name=literal``). ``prior`` are calls made first
    in the same module (state kept between calls); only the last call is compared.
    The difference must be stable and not the sandbox's doing (see ``examine``, which
    also says why an input did not refute).
    """
    return examine(
        before_src, after_src, entry, args, found_by=found_by, limits=limits, prior=prior,
        context=context, hash_seed=hash_seed,
    ).counterexample
