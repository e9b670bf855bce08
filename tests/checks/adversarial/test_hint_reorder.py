"""Adversarial pairs for the relational check with a statement correspondence (a hint).

The hint proposes which statement of ``before`` is which of ``after``; the relational check
compares ``before`` with its statements in that order, and only where every pair of
statements moved past each other provably commutes (``hints.reorder``). A wrong or unsafe
correspondence on a pair that differs must never verify; a right one on a reordering of
inert assignments does.
"""

from __future__ import annotations

import ast
import contextlib
import gc
import io

import pytest

from veribot.checks.equivalence import Budget, check_pair
from veribot.checks.hints.check import check_hints
from veribot.checks.hints.format import parse_hints
from veribot.checks.hints.model import Status
from veribot.checks.hints.reorder import NotShown, reorder
from veribot.checks.relational import check as relational
from veribot.checks.verdict import Verdict

BUDGET = Budget(timeout_s=20, search=False)
SWAP = {"3": 4, "4": 3}  # the statements at lines 3 and 4 swap places

# (name, before, after, entry, statements: before line -> after line)
EQUIVALENT: list[tuple[str, str, str, str, dict[str, int]]] = [
    ("builtin-containers", "import json\ndef keys(text):\n    seen = set()\n    out = []\n"
     "    for k in json.loads(text):\n        if k not in seen:\n            seen.add(k)\n"
     "            out.append(k)\n    return out\n",
     "import json\ndef keys(text):\n    out = []\n    seen = set()\n"
     "    for k in json.loads(text):\n        if k not in seen:\n            seen.add(k)\n"
     "            out.append(k)\n    return out\n", "keys", {"3": 4, "4": 3}),
    ("rotation-in-a-loop-body", "import os\ndef f(xs):\n    for x in xs:\n        a = 1\n"
     "        b = []\n        c = (1, 'k')\n        os.fspath(str((a, b, c, x)))\n"
     "    return xs\n",
     "import os\ndef f(xs):\n    for x in xs:\n        c = (1, 'k')\n        a = 1\n"
     "        b = []\n        os.fspath(str((a, b, c, x)))\n    return xs\n", "f",
     {"4": 5, "5": 6, "6": 4}),
    ("parameter-read-and-renamed", "import os\ndef f(p, q):\n    a = p\n    b = [q, 0]\n"
     "    return os.path.join(a, *b)\n",
     "import os\ndef f(p, q):\n    rest = [q, 0]\n    head = p\n"
     "    return os.path.join(head, *rest)\n", "f", SWAP),
]

# Pairs that differ (or may differ), each with the correspondence a careless model proposes.
DIFFERENT: list[tuple[str, str, str, str, dict[str, int]]] = [
    # `b` reads the `a` the other statement assigns.
    ("reads-what-the-other-assigns", "import os\ndef f(p):\n    a = p\n    b = a\n"
     "    return os.fspath(b)\n",
     "import os\ndef f(p):\n    b = a\n    a = p\n    return os.fspath(b)\n", "f", SWAP),
    # Two external calls whose order is the behaviour.
    ("external-calls", "import os\ndef f(p):\n    a = os.getcwd()\n    b = os.chdir(p)\n"
     "    return a\n",
     "import os\ndef f(p):\n    b = os.chdir(p)\n    a = os.getcwd()\n    return a\n", "f",
     SWAP),
    # An operator calls `__add__` of whatever the caller passes: its side effects move.
    ("operators-call-code", "import os\ndef f(x, y):\n    a = x + 1\n    b = y * 2\n"
     "    return os.fspath(str((a, b)))\n",
     "import os\ndef f(x, y):\n    b = y * 2\n    a = x + 1\n    return os.fspath(str((a, b)))\n",
     "f", SWAP),
    # Both may raise UnboundLocalError: which name the error names would change.
    ("two-reads-that-may-raise", "import os\ndef f(c):\n    if c:\n        x = 1\n"
     "        y = 2\n    a = x\n    b = y\n    return os.fspath(str(a + b))\n",
     "import os\ndef f(c):\n    if c:\n        x = 1\n        y = 2\n    b = y\n    a = x\n"
     "    return os.fspath(str(a + b))\n", "f", {"6": 7, "7": 6}),
    # One may raise, and the handler reads what the other binds.
    ("handler-reads-the-other", "import os\ndef f(c):\n    if c:\n        x = 1\n    try:\n"
     "        a = x\n        b = 2\n    except NameError:\n        return os.fspath(str(b))\n"
     "    return os.fspath(str(a))\n",
     "import os\ndef f(c):\n    if c:\n        x = 1\n    try:\n        b = 2\n        a = x\n"
     "    except NameError:\n        return os.fspath(str(b))\n    return os.fspath(str(a))\n",
     "f", {"6": 7, "7": 6}),
    # One may raise, and a closure that escaped reads what the other binds.
    ("closure-reads-the-other", "import os\ndef f(c, out):\n    if c:\n        x = 1\n"
     "    out.append(lambda: b)\n    a = x\n    b = 2\n    return os.fspath(str(a))\n",
     "import os\ndef f(c, out):\n    if c:\n        x = 1\n    out.append(lambda: b)\n"
     "    b = 2\n    a = x\n    return os.fspath(str(a))\n", "f", {"6": 7, "7": 6}),
    # `set` and `list` are the module's own functions here, with side effects.
    ("shadowed-builtins", "import os\ndef set():\n    print('s')\n    return 1\n"
     "def list():\n    print('l')\n    return 2\ndef f(p):\n    a = set()\n    b = list()\n"
     "    return os.fspath(p)\n",
     "import os\ndef set():\n    print('s')\n    return 1\n"
     "def list():\n    print('l')\n    return 2\ndef f(p):\n    b = list()\n    a = set()\n"
     "    return os.fspath(p)\n", "f", {"9": 10, "10": 9}),
    # In a loop each store drops the previous iteration's object: `__del__` order moves.
    ("a-store-drops-an-object", "class D:\n    def __init__(self, n):\n        self.n = n\n"
     "    def __del__(self):\n        print(self.n)\n"
     "def f(k):\n    for i in range(k):\n        a = D(i)\n        b = D(-i)\n"
     "        x = a\n        y = b\n    return k\n",
     "class D:\n    def __init__(self, n):\n        self.n = n\n"
     "    def __del__(self):\n        print(self.n)\n"
     "def f(k):\n    for i in range(k):\n        a = D(i)\n        b = D(-i)\n"
     "        y = b\n        x = a\n    return k\n", "f", {"10": 11, "11": 10}),
    # A parameter rebound: the store drops the caller's object (maybe its last reference).
    ("a-parameter-rebound", "import os\ndef f(p, q):\n    p = 1\n    q = 2\n"
     "    return os.fspath(str(p + q))\n",
     "import os\ndef f(p, q):\n    q = 2\n    p = 1\n    return os.fspath(str(p + q))\n",
     "f", SWAP),
    # The right statements, but the after version also changed a value.
    ("reordered-and-changed", "import json\ndef keys(text):\n    seen = set()\n    out = []\n"
     "    for k in json.loads(text):\n        out.append(k)\n    return (out, seen)\n",
     "import json\ndef keys(text):\n    out = [0]\n    seen = set()\n"
     "    for k in json.loads(text):\n        out.append(k)\n    return (out, seen)\n", "keys",
     {"3": 4, "4": 3}),
    # A correspondence naming lines where no statement starts.
    ("lines-that-are-no-statement", "import json\ndef keys(text):\n    seen = set()\n"
     "    out = []\n    return json.dumps((out, seen))\n",
     "import json\ndef keys(text):\n    out = [1]\n    seen = set()\n"
     "    return json.dumps((out, seen))\n", "keys", {"1": 4, "40": 3}),
    # The same assignment moved past a statement the hint did not name: a print (a call).
    ("moved-past-a-call", "def f(p):\n    a = p\n    print('x')\n    b = 1\n    return (a, b)\n",
     "def f(p):\n    b = 1\n    a = p\n    print('x')\n    return (a, b)\n", "f",
     {"2": 3, "3": 4, "4": 2}),
]


# Why each is refused: the reordering check (or the relational comparison) itself.
WHY = {
    "reads-what-the-other-assigns": "one reads the name the other assigns",
    "external-calls": "`os.getcwd()` may call code",
    "operators-call-code": "`x + 1` may call code",
    "two-reads-that-may-raise": "both read a name that may be unbound",
    "handler-reads-the-other": "the function catches or handles exceptions",
    "closure-reads-the-other": "a nested scope (line 5) reads what they assign",
    "shadowed-builtins": "`set` is bound in the module",
    "reordered-and-changed": "the code differs beyond renaming and resolved names, with the "
                             "statements reordered as proposed",
    "lines-that-are-no-statement": "no statement of `keys` starts at line 1 of before",
    "moved-past-a-call": "lines 3 and 4 of before: only assignments of one local name",
    "a-store-drops-an-object": "in a loop, a store may drop the object of the previous",
    "a-parameter-rebound": "`p` is bound elsewhere too",
}


# The reorderings the relational check relative to callees verifies without the hint, and
# the assumption its verdict then lists for the difference.
RELATIVE_ONLY = {
    "a-store-drops-an-object": "finalized in either order among themselves",
    "a-parameter-rebound": "finalized in either order among themselves",
    "moved-past-a-call": "does not read local variables' names",
}


def statements_hint(moves: dict[str, int]) -> list[dict[str, object]]:
    return [{"kind": "correspondence", "statements": moves}]


@pytest.mark.parametrize(("name", "before", "after", "entry", "moves"), EQUIVALENT,
                         ids=[c[0] for c in EQUIVALENT])
def test_a_reordering_of_inert_assignments_is_verified_with_the_hint(
    name: str, before: str, after: str, entry: str, moves: dict[str, int]
) -> None:
    alone = relational.plan  # without the hint the relational check refuses
    with pytest.raises(relational.Refused):
        alone(ast.parse(before), ast.parse(after), entry)
    checked = check_hints(before, after, entry, parse_hints(statements_hint(moves)),
                          budget=BUDGET)
    assert checked.result.verdict is Verdict.VERIFIED, checked.result.detail
    assert checked.result.method == relational.METHOD_REORDERED
    assert checked.proven_with_hints
    (hint,) = checked.hints
    assert hint.status is Status.PROVEN and hint.used


@pytest.mark.parametrize(("name", "before", "after", "entry", "moves"), DIFFERENT,
                         ids=[c[0] for c in DIFFERENT])
def test_a_wrong_or_unsafe_correspondence_never_verifies(
    name: str, before: str, after: str, entry: str, moves: dict[str, int]
) -> None:
    checked = check_hints(before, after, entry, parse_hints(statements_hint(moves)),
                          budget=BUDGET)
    # Never by the hint. The relational check relative to callees may verify a pair whose
    # only difference it lists as an assumption (objects let go of between the same two
    # operations finalized in either order; callees not reading the caller's frame).
    if checked.result.verdict is Verdict.VERIFIED:
        assert name in RELATIVE_ONLY, checked.result
        assert checked.result.method == relational.METHOD_RELATIVE
        assert any(RELATIVE_ONLY[name] in a for a in checked.result.assumptions)
    (hint,) = checked.hints
    assert hint.status is not Status.PROVEN and not hint.used
    assert hint.reason.startswith("the relational check did not accept it")
    assert WHY[name] in hint.reason


def test_the_differences_are_real() -> None:
    """Three of the unsafe reorderings do change behaviour, seen by running them."""
    def run(src: str, *args: object) -> object:
        space: dict[str, object] = {}
        exec(compile(src, "<pair>", "exec"), space)
        fn = space["f"]
        try:
            return fn(*args)  # type: ignore[operator]
        except Exception as err:
            return f"{type(err).__name__}: {err}"

    cases = {c[0]: c for c in DIFFERENT}
    _, before, after, _, _ = cases["two-reads-that-may-raise"]
    assert run(before, False) != run(after, False)
    _, before, after, _, _ = cases["handler-reads-the-other"]
    assert run(before, False) != run(after, False)
    _, before, after, _, _ = cases["closure-reads-the-other"]
    out_a: list[object] = []
    out_b: list[object] = []
    run(before, False, out_a)
    run(after, False, out_b)
    assert run_closure(out_a) != run_closure(out_b)
    _, before, after, _, _ = cases["a-store-drops-an-object"]
    printed = []
    for src in (before, after):
        buffer = io.StringIO()
        with contextlib.redirect_stdout(buffer):
            run(src, 3)
            gc.collect()
        printed.append(buffer.getvalue())
    assert printed[0] != printed[1]


def run_closure(out: list[object]) -> object:
    try:
        return out[0]()  # type: ignore[operator]
    except NameError as err:
        return f"NameError: {err}"


def test_the_reordering_itself_says_why_it_is_refused() -> None:
    tree = ast.parse("def f(p):\n    a = p\n    b = a\n")
    fn = tree.body[0]
    assert isinstance(fn, ast.FunctionDef)
    with pytest.raises(NotShown, match="reads the name the other assigns"):
        reorder(fn, tree, {2: 3, 3: 2})
    with pytest.raises(NotShown, match="moves no statement"):
        reorder(fn, tree, {2: 2, 3: 3})
    with pytest.raises(NotShown, match="no statement of `f` starts at line 9"):
        reorder(fn, tree, {9: 1})


def test_without_hints_the_engine_did_not_verify_the_reorderings() -> None:
    """Not by the same code in the same environment: only relative to the callees."""
    for name, before, after, entry, _ in EQUIVALENT[:1]:
        result = check_pair(before, after, entry, budget=BUDGET)
        assert result.verdict is Verdict.INCONCLUSIVE or (
            result.method == relational.METHOD_RELATIVE), name


def test_the_statements_of_a_correspondence_are_read_and_checked() -> None:
    from veribot.checks.hints.format import parse_hint

    hint = parse_hint({"kind": "correspondence", "statements": {"6": 5, "5": 6}})
    assert hint.statements == ((5, 6), (6, 5)) and not hint.variables
    assert hint.invariants() == ()  # nothing for loop induction
    assert parse_hint(hint.as_json()) == hint
    parsed = parse_hints([
        {"kind": "correspondence", "statements": {"x": 1}},
        {"kind": "correspondence", "statements": {"3": "4"}},
        {"kind": "correspondence", "statements": {"-3": 4}},
        {"kind": "correspondence", "statements": [3, 4]},
        {"kind": "correspondence", "statements": {}},
        {"kind": "correspondence", "statements": {str(i): i for i in range(1, 70)}},
    ])
    assert not parsed.hints
    reasons = [r.reason for r in parsed.rejected]
    assert all("not a pair of line numbers" in r for r in reasons[:3])
    assert "must be an object" in reasons[3]
    assert "needs `variables`" in reasons[4]
    assert "at most 64" in reasons[5]
