"""The Z3 model agrees with CPython on generated programs (a small run of ``bench-model``).

Every disagreement fails the test with the program and the input printed. The defects the
long runs found are kept below as fixed regression programs.
"""

from __future__ import annotations

import ast
import math

import pytest

from veribot.bench.model import Tally, canon, check_program, compile_program, run, run_python
from veribot.bench.modelgen import Program, generate, inputs


def _report(tally: Tally) -> str:
    return tally.summary() + "\n" + "\n".join(d.text() for d in tally.disagreements)


# The default run compares the first 30 programs of the seed (seconds); the next ten take
# far longer, so all 40 run under `pytest -m heavy`, and long runs are `bench-model`'s.
@pytest.mark.parametrize(
    "programs", [30, pytest.param(40, marks=pytest.mark.heavy)], ids=lambda n: f"{n}-programs"
)
def test_generated_programs_agree_with_cpython(programs: int) -> None:
    tally = run(programs, seed=0, inputs_per_program=10)
    assert not tally.disagreements, _report(tally)
    assert tally.modelled >= 0.7 * tally.programs, tally.summary()
    assert tally.compared >= 0.8 * tally.modelled * 10, tally.summary()


def test_the_generator_is_deterministic_per_seed() -> None:
    assert generate(3, 7) == generate(3, 7)
    assert inputs(generate(3, 7), 3, 7, 12) == inputs(generate(3, 7), 3, 7, 12)
    assert generate(3, 7) != generate(4, 7)
    assert generate(3, 7) != generate(3, 8)


def test_generated_programs_parse_and_annotate_every_parameter() -> None:
    for index in range(150):
        program = generate(11, index)
        tree = ast.parse(program.source)
        (fn,) = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "f"]
        assert [a.arg for a in fn.args.args] == [n for n, _ in program.params]
        assert all(a.annotation is not None for a in fn.args.args)
        compile_program(program)


def test_the_generator_reaches_every_construct_of_the_subset() -> None:
    text = "\n".join(generate(5, i).source for i in range(300))
    for token in (
        "while ", "for ", "break", "continue", "enumerate(", "elif ", "else:", "return ",
        ".append(", ".extend(", ".pop(", ".insert(", ".remove(", ".index(", ".count(",
        "raise ", "assert ", " for c", " if ", " and ", " or ", "not ", "len(", "abs(",
        "min(", "max(", "sum(", "any(", "all(", "range(", "list(", "tuple(", "[:", "//",
        "%", " / ", "**", "is None", " in ", "def g(", "K0 = ", "try:", "except ",
        "except (", "except:", "finally:", "        raise\n", "yield ", "yield from ",
    ):  # fmt: skip
        assert token in text, token


def test_inputs_include_the_edges_of_each_type() -> None:
    program = Program("def f(a: int, b: float, c: str):\n    return a\n", "f", (
        ("a", "int"), ("b", "float"), ("c", "str"),
    ))  # fmt: skip
    drawn = inputs(program, 0, 0, 40)
    assert any(a[0] is True for a in drawn)  # bool where int is declared
    assert any(type(a[1]) is int for a in drawn)  # int where float is declared
    assert any(isinstance(a[1], float) and math.isnan(a[1]) for a in drawn)
    assert any(a[2] == "\U0001f600" for a in drawn)


def test_the_comparison_sees_types_signs_and_mutations() -> None:
    assert canon(1) != canon(True)
    assert canon(0.0) != canon(-0.0)
    assert canon(math.nan) == canon(float("nan"))
    assert canon([1]) != canon((1,))
    fn = compile_program(Program("def f(xs: list[int]):\n    xs.append(1)\n", "f", ()))
    assert run_python(fn, [[]]) == ("return", ("NoneType", None), (("list", (("int", 1),)),))
    loop = compile_program(Program("def f(n: int):\n    while n:\n        n += 1\n", "f", ()))
    assert run_python(loop, [1]) is None  # a runaway is cut off, not waited for


# Programs on which the model once disagreed with CPython (found by bench-model).
# Each: the source, inputs, and whether the model covers it (else it must say unsupported).
REGRESSIONS: list[tuple[str, list[tuple[object, ...]], bool]] = [
    # An index that is a union (bool or int) was taken for a non-integer: TypeError.
    (
        "def f(a: int, c: list[int]):\n    return c[max(True, a)]\n",
        [(0, [5, 6]), (1, [5, 6]), (-1, [5]), (10**20, [1, 2])],
        True,
    ),
    # pop/insert with an index beyond a C ssize_t raise OverflowError, not IndexError.
    (
        "def f(a: int, c: list[int]):\n    c.insert(a, 9)\n    return c.pop(a)\n",
        [(10**20, [1]), (-(10**20), [1]), (2**63 - 1, []), (-(2**63), [1, 2]), (1, [3, 4])],
        True,
    ),
    # len() of a range longer than sys.maxsize raises OverflowError.
    (
        "def f(a: int, b: int):\n    return len(range(a, b, -3))\n",
        [(10**20, 1), (1, -(10**30)), (5, 1), (2**64, 0)],
        True,
    ),
    # A string constant with a backslash and "u{41}" is six characters, not "A".
    (
        "def f(s: str):\n    return len('\\\\u{41}'), s == '\\\\u{41}', s + '\\\\'\n",
        [("A",), ("\\u{41}",), ("",), ("\U0001f600",)],
        True,
    ),
    # list.extend(str) adds the characters, one item each.
    (
        "def f(a: list[str], s: str):\n    a.extend(s)\n    return a\n",
        [(["x"], "ab"), ([], "")],
        True,
    ),
    # `in` on a tuple compared a path-dependent (union) value as unequal to everything.
    (
        "def f(b: bool):\n    return (5 or b) in (3, (4, 5)[b]), (b and 2) in (0, 2, False)\n",
        [(True,), (False,)],
        True,
    ),
    # 0 / -7 is -0.0 in Python (the exact quotient rounded to +0.0 in the model).
    ("def f(a: int, b: int):\n    return a / b\n", [(0, -7), (0, 7), (-1, 10**400)], True),
    # A mutation under a short-circuit (`and`, `if else`, a chained comparison) happens
    # only where that operand is evaluated.
    (
        "def f(xs: list[int], x: int):\n    y = x > 0 and xs.pop()\n"
        "    z = xs.pop() if x > 1 else 7\n    w = 0 < x < xs.pop()\n    return y, z, w\n",
        [([1, 2, 3, 4], 0), ([1, 2, 3, 4], 1), ([1, 2, 3, 4], 2), ([5, 6], -1), ([1, 2], 5)],
        True,
    ),
    # An assert's message is evaluated when the assertion fails, and may raise instead.
    (
        "def f(x: int):\n    assert x > 0, 1 // x\n    assert x > 1, 'x'\n    return x\n",
        [(0,), (-1,), (1,), (2,)],
        True,
    ),
    # `a[i] += a.pop()`: a[i] is read before the pop, the store goes to the list after it.
    (
        "def f(a: list[int], i: int):\n    a[i] += a.pop()\n    return a\n",
        [([1, 2, 3], 0), ([1, 2, 3], 2), ([1, 2, 3], -1), ([4], 0), ([], 0)],
        True,
    ),
    # Python holds the list object, not its contents: `xs + [xs.pop()]` sees the pop.
    ("def f(xs: list[int]):\n    return xs + [xs.pop()]\n", [([1, 2, 3],)], False),
    ("def f(xs: list[int]):\n    xs.append(xs.pop())\n    return xs\n", [([1, 2],)], False),
    # A literal power of two constants (10**20) is folded, not unsupported.
    ("def f(a: int):\n    return a < 10**20, 3**3\n", [(10**20 - 1,), (10**20,)], True),
    # Before 3.12 a comprehension's body reads an unbound local as a free variable:
    # NameError; its first iterable is read in the function: UnboundLocalError.
    (
        "def f(a: int):\n    if a:\n        v = [1]\n    return sum([x + v[0] for x in (1,)])\n",
        [(0,), (1,)],
        True,
    ),
    ("def f(a: int):\n    if a:\n        v = [1]\n    return [x for x in v]\n", [(0,), (1,)],
     True),
    # try/except/finally and generators (yield, yield from a string) drained.
    (
        "def f(a: int, c: list[int]):\n    try:\n        return c[a]\n"
        "    except LookupError:\n        c.append(a)\n        raise\n"
        "    finally:\n        c.append(0)\n",
        [(0, []), (1, [1, 2]), (-3, [4]), (10**20, [1])],
        True,
    ),
    (
        "def f(a: int, s: str):\n    yield from s\n    if a:\n        yield 'x'\n"
        "        return\n    yield s[a]\n",
        [(0, ""), (0, "ab"), (1, "é")],
        True,
    ),
]


@pytest.mark.parametrize(
    ("source", "args_list", "modelled"), REGRESSIONS, ids=range(len(REGRESSIONS))
)
def test_former_disagreements_stay_fixed(
    source: str, args_list: list[tuple[object, ...]], modelled: bool
) -> None:
    fn = next(n for n in ast.parse(source).body if isinstance(n, ast.FunctionDef))
    params = tuple((a.arg, ast.unparse(a.annotation)) for a in fn.args.args if a.annotation)
    tally = Tally()
    check_program(Program(source, "f", params), args_list, tally, per_program_s=30)
    assert not tally.disagreements, _report(tally)
    assert tally.modelled == int(modelled), tally.summary()
    if modelled:
        assert tally.compared == len(args_list), tally.summary()
