"""The Z3 model of Python agrees with Python itself, value for value.

Each case is a small function over typed parameters; for many concrete inputs the test
substitutes the input into the model, finds the one exit whose guard holds, and compares
what it says (value and type, or exception type) with what CPython does. These functions
are the test's own code, so running them in-process is fine.
"""

from __future__ import annotations

import ast
import itertools
import math
import random
from collections.abc import Callable

import pytest
import z3

from veribot.checks.lang.pyexec import Executor, Limits
from veribot.checks.lang.pymodule import Module
from veribot.checks.lang.pytypes import parse_type
from veribot.checks.lang.pyvalues import Fresh, V, concrete, int_val, reduce, str_val

# Slow cases only `python -m pytest -m heavy` runs (tests/conftest.py); the default
# run keeps this module's other cases of each family.
HEAVY_CASES: dict[str, set[str]] = {
    "test_model_agrees_with_python": {
        "return xs[i], xs[i:], xs[:i]",
        "return xs.pop(i)",
        "return xs[i:j], xs[:j], xs[i:]",
        "return min(x, y), max(y, x)",
        "return len(range(a, b, c))",
        "return x + y, x * y, x - y",
        "return x / y",
        "return x < y, x == y, x >= y, abs(x), -x",
    },
}

INTS = [-7, -3, -2, -1, 0, 1, 2, 3, 5, 8]
FLOATS = [-2.5, -1.0, -0.0, 0.0, 0.5, 1.0, 3.0, 1e308, math.inf, -math.inf, math.nan]
STRS = ["", "a", "ab", "ba", "abc"]
# Escapes and characters beyond the BMP: a backslash must stay a backslash, an astral
# character one character, a lone surrogate a valid str.
ODD_STRS = ["", "\\u0041", "\\u{41}", "\U0001F600", "\ud800", "a\U0001FFFF\x00", "\xe9\\"]
HUGE = [0, 1, -1, 2, -3, 2**63 - 1, 2**63, -(2**63), -(2**63) - 1, 2**100, -(2**100)]


INT_PAIRS = [[a, b] for a in INTS for b in INTS]
FLOAT_PAIRS = [[x, y] for x in FLOATS for y in FLOATS]


def _lists(k: int) -> list[list[int]]:
    rng = random.Random(k)
    return [[rng.choice([-2, 0, 1, 3]) for _ in range(n)] for n in range(5) for _ in range(2)]


CASES: list[tuple[str, str, list[list[object]]]] = [
    ("a: int, b: int", "return a // b", INT_PAIRS),
    ("a: int, b: int", "return a % b", INT_PAIRS),
    ("a: int, b: int", "return a / b", INT_PAIRS),
    ("a: int, b: int", "return a ** 3 - b * a + (a < b) + (a == b)", INT_PAIRS),
    ("a: int, b: int", "return min(a, b, 2), max(a, True), abs(a - b)", INT_PAIRS),
    ("a: int, b: int", "return a if a > b > 0 else b or a", INT_PAIRS),
    ("a: int, b: int", "return a != 0 and b // a", INT_PAIRS),
    (
        "a: int, b: int, c: int",
        "return len(range(a, b, c))",
        [[a, b, c] for a in INTS[2:] for b in INTS[2:] for c in INTS if c],
    ),
    (
        "a: int, b: int, c: int",
        "return sum([i for i in range(a, b, c)])",
        [[a, b, c] for a in (-3, 0, 2) for b in (-3, 0, 4) for c in (-2, -1, 1, 3)],
    ),
    ("x: float, y: float", "return x + y, x * y, x - y", FLOAT_PAIRS),
    ("x: float, y: float", "return x / y", FLOAT_PAIRS),
    ("x: float, y: float", "return x < y, x == y, x >= y, abs(x), -x", FLOAT_PAIRS),
    (
        "x: float, n: int",
        "return x < n, n <= x, x == n, n + x",
        [[x, n] for x in FLOATS for n in INTS],
    ),
    (
        "s: str, t: str",
        "return s + t, s < t, s in t, len(s), s[1:], s[-1]",
        [[s, t] for s in STRS for t in STRS],
    ),
    ("s: str, i: int", "return s[i]", [[s, i] for s in STRS for i in INTS]),
    ("xs: list[int], i: int", "return xs[i]", [[xs, i] for xs in _lists(1) for i in INTS]),
    (
        "xs: list[int], i: int, j: int",
        "return xs[i:j], xs[:j], xs[i:]",
        [[xs, i, j] for xs in _lists(2) for i in INTS[::2] for j in INTS[1::2]],
    ),
    (
        "xs: list[int], v: int",
        "return v in xs, xs.index(v)",
        [[xs, v] for xs in _lists(3) for v in (0, 1, 3)],
    ),
    (
        "xs: list[int]",
        "return sum(xs), max(xs), min(xs), any(xs), all(xs), xs.count(0)",
        [[xs] for xs in _lists(4)],
    ),
    (
        "xs: list[int]",
        "xs.append(1)\n    ys = xs\n    ys.pop(0)\n    return xs",
        [[xs] for xs in _lists(5)],
    ),
    (
        "xs: list[int], v: int",
        "xs.insert(v, 9)\n    xs.remove(9)\n    xs[v] = 4\n    return xs",
        [[xs, v] for xs in _lists(6) for v in (-6, -1, 0, 2, 7)],
    ),
    (
        "xs: tuple[int, ...]",
        "return [x * 2 for x in xs if x], tuple(xs) + (1,)",
        [[tuple(xs)] for xs in _lists(7)],
    ),
    (
        "xs: list[int]",
        "out = []\n    for i, x in enumerate(xs):\n        if x < 0:\n"
        "            continue\n        if x > 2:\n            break\n        out.append(i)\n"
        "    else:\n        out.append(-1)\n    return out",
        [[xs] for xs in _lists(8)],
    ),
    ("n: int", "i = 0\n    while i * i < n:\n        i += 1\n    return i", [[n] for n in INTS]),
    ("a: int | None", "return a is None, a == 0", [[None], [0], [3]]),
    ("x: float, y: float", "return min(x, y), max(y, x)", FLOAT_PAIRS),
    ("a: int", "return a / 3, a + 0.5, a == a + 0.0", [[a] for a in [*INTS, 10**400, -(10**309)]]),
    (
        "s: str, t: str",
        "return s + t, s < t, s in t, len(s), s[1:], s[:1], s == '\\U0001F600', "
        "s < '\\ud800', '\\\\u0041' in s, len('\\N{GRINNING FACE}\\\\u{41}')",
        [[s, t] for s in ODD_STRS for t in ODD_STRS],
    ),
    (
        "s: str, t: str",
        "out = []\n    out.extend(s)\n    out += t\n    for c in s:\n        out.append(c)\n"
        "    out += ('x',)\n    return out, list(s), tuple(t)",
        [[s, t] for s in ODD_STRS for t in STRS],
    ),
    (
        "xs: list[int], t: tuple[int, ...], n: bool",
        "ys = xs\n    ys *= 2\n    return xs * 2, 3 * t, t * -1, xs * 0, t * n, (1, n) * 2, xs",
        [[xs, tuple(xs), n] for xs in _lists(9) for n in (False, True)],
    ),
    (
        "s: str, t: tuple[int, ...]",
        "return s * 3, s * -2, s * False, () * (2**63 - 1), '' * 2**62, t * 1",
        [[s, t] for s in STRS for t in ((), (1,))],
    ),
    ("xs: list[int], n: int", "return xs * 2**63", [[xs, 0] for xs in _lists(10)[:3]]),
    (
        "xs: list[int], i: int",
        "xs.insert(i, 5)\n    return xs.pop(i), xs",
        [[xs, i] for xs in _lists(11)[:4] for i in HUGE],
    ),
    (
        "xs: list[int], i: int",
        "return xs[i], xs[i:], xs[:i]",
        [[xs, i] for xs in _lists(12)[:4] for i in HUGE],
    ),
    ("xs: list[int], i: int", "return xs.pop(i)", [[xs, i] for xs in _lists(13)[:4] for i in HUGE]),
    (
        "a: int, b: int",
        "return len(range(a, b)), bool(range(a, b, 3)), 2**63 + 10**50 - a",
        [[a, b] for a in HUGE for b in HUGE],
    ),
    ("t: tuple[int, int], v: int", "return v in t, t[v], t + t", [[(1, 2), v] for v in INTS]),
    (
        "a: int, b: int",
        "if a > 0:\n        z = b\n    return z",
        [[a, b] for a in INTS for b in INTS[:3]],
    ),
]


@pytest.mark.parametrize(("params", "body", "inputs"), CASES, ids=[c[1][:40] for c in CASES])
def test_model_agrees_with_python(params: str, body: str, inputs: list[list[object]]) -> None:
    source = f"def f({params}):\n    {body}\n"
    namespace: dict[str, object] = {}
    exec(source, namespace)  # the test's own code, not untrusted input
    fn = namespace["f"]
    assert callable(fn)
    tree = ast.parse(source)
    func = tree.body[0]
    assert isinstance(func, ast.FunctionDef)
    types = [parse_type(ast.unparse(a.annotation)) for a in func.args.args if a.annotation]
    fresh = Fresh()
    symbolic = [fresh.value(t, a.arg) for t, a in zip(types, func.args.args, strict=True)]
    run = Executor(Module.of(tree), fresh, Limits(loop_bound=12)).run(func, symbolic)
    for args in inputs:
        expected = _python(fn, args)
        actual = _model(run, symbolic, args)
        assert actual == expected, f"f{tuple(args)}: model {actual}, Python {expected}"


def _python(fn: Callable[..., object], args: list[object]) -> tuple[str, object]:
    copies = [list(a) if isinstance(a, list) else a for a in args]
    try:
        value = fn(*copies)
    except Exception as exc:
        return ("raise", type(exc).__name__)
    return ("return", _canon(value))


def _model(run: object, symbolic: list[V], args: list[object]) -> tuple[str, object]:
    solver = z3.Solver()
    for v, a in zip(symbolic, args, strict=True):
        solver.add(_equals(v, a))
    assert solver.check() == z3.sat
    model = solver.model()
    hits = []
    for e in run.exits:  # type: ignore[attr-defined]
        if z3.is_true(reduce(model.eval(e.guard, model_completion=True))):
            hits.append(e)
    assert len(hits) == 1, f"{len(hits)} exits hold for {args}"
    (hit,) = hits
    if hit.value is None:
        return ("raise", hit.exc)
    return ("return", _canon(concrete(model, hit.value)))


def _equals(v: V, a: object) -> z3.BoolRef:
    from veribot.checks.lang.pyvalues import (
        FLOAT,
        SBool,
        SFloat,
        SInt,
        SSeq,
        SStr,
        STuple,
        SUnion,
    )

    if isinstance(v, SUnion):
        options = []
        for g, alt in v.alts:
            if a is None and type(alt).__name__ == "SNone":
                options.append(g)
            elif a is not None and type(alt).__name__ != "SNone":
                options.append(z3.And(g, _equals(alt, a)))
        return z3.Or(options)
    if isinstance(v, STuple):
        assert isinstance(a, tuple)
        return z3.And([_equals(item, x) for item, x in zip(v.items, a, strict=True)])
    if isinstance(v, SBool):
        assert isinstance(a, bool)
        return v.e == z3.BoolVal(a)
    if isinstance(v, SInt):
        assert isinstance(a, int)
        return v.e == int_val(a)
    if isinstance(v, SFloat):
        assert isinstance(a, float)
        return z3.fpIsNaN(v.e) if math.isnan(a) else v.e == z3.FPVal(a, FLOAT)
    if isinstance(v, SStr):
        assert isinstance(a, str)
        return v.e == str_val(a)
    if isinstance(v, SSeq):
        assert isinstance(a, list | tuple)
        if not a:
            return z3.Length(v.e) == 0
        units = [z3.Unit(z3.IntVal(x)) for x in a]
        return v.e == (units[0] if len(units) == 1 else z3.Concat(*units))
    raise AssertionError(type(v))


def _canon(value: object) -> object:
    if isinstance(value, float):
        return ("float", "nan" if math.isnan(value) else value + 0.0)
    if isinstance(value, list | tuple):
        return (type(value).__name__, tuple(_canon(v) for v in value))
    return (type(value).__name__, value)


def test_cases_cover_every_operator_family() -> None:
    bodies = " ".join(body for _, body, _ in CASES)
    for token in (
        "//",
        "%",
        "/",
        "**",
        "min",
        "max",
        "abs",
        "range",
        "sum",
        "[",
        ":",
        "in",
        "append",
        "pop",
        "insert",
        "remove",
        "index",
        "count",
        "enumerate",
        "while",
        "break",
        "continue",
        "is None",
        "extend",
        "+=",
        "*=",
        "* 2",
        "\\U0001F600",
    ):
        assert token in bodies, token
    assert len(list(itertools.chain.from_iterable(c[2] for c in CASES))) > 1000
