"""Inputs from the repository: harvested calls refute, inferred types are listed as assumptions.

Each pair is a module under ``pkg/mod.py`` with a test file of the after revision; the
review must refute with the test's input (and say where it came from), never with a call
of a different function of the same name, and a proof over inferred types must say so.
"""

from __future__ import annotations

from veribot.checks.equivalence import Budget, check_pair
from veribot.checks.project.package import Package, PairContext, SourceFile
from veribot.checks.search import harvest
from veribot.checks.verdict import Result, Verdict

BUDGET = Budget(timeout_s=6.0)
# For pairs random testing must refute: a wall clock a loaded machine cannot run out of (a
# refutation ends the check at once, so it costs nothing when the machine is quiet).
SURE = Budget(timeout_s=30.0)


def context(test: str) -> PairContext:
    package = Package("pkg.mod", "pkg/mod.py", "", (("pkg/__init__.py", ""),))
    return PairContext(package, package, after_tests=(SourceFile("tests/test_mod.py", test),))


def check(before: str, after: str, test: str, entry: str = "f",
          budget: Budget = BUDGET) -> Result:
    return check_pair(before, after, entry, budget=budget, context=context(test))


# A difference neither the model nor a random draw reaches: one string by its checksum.
MAGIC_BEFORE = "import zlib\n\n\ndef f(key, n=1):\n    return n\n"
MAGIC_AFTER = (
    "import zlib\n\n\ndef f(key, n=1):\n"
    "    if zlib.crc32(key.encode()) in (2119306317, 238614722):\n        return -n\n"
    "    return n\n"
)


def test_a_call_in_the_test_file_refutes_and_is_named() -> None:
    test = ("from pkg.mod import f\n\n\ndef test_it():\n"
            "    key = 'release-2026.11-rc76'\n    assert f(key, 2) == -2\n")
    r = check(MAGIC_BEFORE, MAGIC_AFTER, test)
    assert r.verdict is Verdict.REFUTED, r.detail
    assert r.counterexample is not None
    assert r.counterexample.args == ("'release-2026.11-rc76'", "2")
    assert r.counterexample.found_by == "a call in tests/test_mod.py line 6 (after revision)"


def test_a_doctest_of_another_function_refutes() -> None:
    doc = '    """>>> f(\'release-2026.11-rc73\')\n    """\n'
    before = MAGIC_BEFORE + "\n\ndef g():\n" + doc + "    return 0\n"
    after = MAGIC_AFTER + "\n\ndef g():\n" + doc + "    return 0\n"
    r = check(before, after, "")
    assert r.verdict is Verdict.REFUTED, r.detail
    assert r.counterexample is not None
    assert r.counterexample.found_by.startswith("the doctest at line")


def test_a_local_function_of_the_same_name_is_not_the_unit() -> None:
    test = ("from pkg import mod\n\n\ndef f(key, n=1):\n    return n\n\n\n"
            "def test_it():\n    f('release-2026.11-rc76', 2)\n")
    r = check(MAGIC_BEFORE, MAGIC_AFTER, test)
    assert r.verdict is not Verdict.REFUTED or (
        r.counterexample is not None and "test_mod" not in r.counterexample.found_by)


def test_a_mutated_argument_is_part_of_the_behaviour() -> None:
    before = "def f(xs):\n    xs.append(0)\n    return len(xs)\n"
    after = "def f(xs):\n    return len(xs) + 1\n"
    test = "import pkg.mod\n\n\ndef test_it():\n    assert pkg.mod.f([1, 2]) == 3\n"
    r = check(before, after, test)
    assert r.verdict is Verdict.REFUTED, r.detail
    assert r.counterexample is not None and "arguments" in r.detail


def test_an_iterator_argument_from_a_test() -> None:
    before = "def f(it, start=0):\n    return list(it)[start:]\n"
    after = "def f(it, start=0):\n    return list(it)[start:] if start >= 0 else []\n"
    test = "from pkg.mod import f\n\n\ndef test_it():\n    f(iter('abc'), start=-1)\n"
    r = check(before, after, test)
    assert r.verdict is Verdict.REFUTED, r.detail
    assert r.counterexample is not None and r.counterexample.args == ("iter('abc')", "start=-1")


def test_a_proof_over_inferred_types_lists_them() -> None:
    # Equal for ints, not for floats (2.5 // 1 is 2.0): verified only under `x: int`.
    before = "def f(x=0):\n    return x + 0\n"
    after = "def f(x=0):\n    return x // 1\n"
    r = check(before, after, "from pkg.mod import f\n\n\ndef test_it():\n    f(5)\n")
    assert r.verdict is Verdict.VERIFIED, r.detail
    assert any("`x: int` (inferred from the default 0, a call in tests/test_mod.py)" in a
               for a in r.assumptions), r.assumptions
    # The verdict's own sentence (what the text and Markdown reports show) says so too,
    # and the type is not called "given".
    assert "only for the inferred parameter types `x: int`" in r.detail, r.detail
    assert "`x`: int (inferred)" in r.assumptions, r.assumptions


def test_a_harvested_call_outside_the_inferred_types_still_refutes() -> None:
    # `set()` gives no type, so the proof covers `x: int` only, where the two agree; the
    # test's call is run before the proof is reported, and shows the difference.
    before = "def f(x=0):\n    return x * 2\n"
    after = "def f(x=0):\n    return x << 1 if type(x) is int else len(x)\n"
    r = check(before, after, "from pkg.mod import f\n\n\ndef test_it():\n    f(set())\n")
    assert r.verdict is Verdict.REFUTED, r.detail
    assert r.counterexample is not None and r.counterexample.args == ("set()",)


# A class whose objects the search cannot build (its constructor takes `*args`): only the
# tests' own objects reach its methods.
RANGE = '''class Range:
    def __init__(self, *args):
        self.start, self.stop, self.step = (list(args) + [0, 0, 1])[:3]

    def __eq__(self, other):
        if not isinstance(other, Range):
            return False
        return (self.start, self.stop, self.step) == (other.start, other.stop, other.step)
'''
RANGE_TEST = ("import unittest\nfrom pkg.mod import Range\n\n\nclass T(unittest.TestCase):\n"
              "    def test_eq(self):\n"
              "        for a, b in [((2, 3, 1), (2, 3, 5)), ((0, 1), (0, 1))]:\n"
              "            self.assertEqual(Range(*a), Range(*b))\n")


def test_a_method_is_refuted_on_the_tests_own_objects() -> None:
    one_item = ("        if self.stop - self.start == 1:\n"
                "            return self.start == other.start\n")
    after = RANGE.replace("        return (self.start", one_item + "        return (self.start")
    r = check(RANGE, after, RANGE_TEST, entry="Range.__eq__")
    assert r.verdict is Verdict.REFUTED, r.detail
    assert r.counterexample is not None
    assert r.counterexample.receiver == "Range(2, 3, 1)"
    assert r.counterexample.args == ("Range(2, 3, 5)",)
    assert "on the object Range(2, 3, 1)" in r.detail


def test_a_changed_constructor_is_not_a_difference_of_the_method() -> None:
    # Only `__init__` changed: objects built differently are no input of `__eq__`, even
    # though the test's comparison now gives another answer.
    after = RANGE.replace("[:3]", "[:3]\n        self.step = self.step or 1")
    r = check(RANGE, after, RANGE_TEST, entry="Range.__eq__")
    assert r.verdict is not Verdict.REFUTED, r.detail


def test_a_test_object_of_a_class_from_elsewhere_is_not_the_units() -> None:
    # `Range` here is another module's class: its objects are no receivers of the unit.
    test = RANGE_TEST.replace("from pkg.mod import Range", "from other import Range")
    after = RANGE.replace("return False", "return True")
    calls = harvest.calls_for(RANGE, after, "Range.__eq__", context(test))
    assert calls == []


ISITERABLE = "def f(x):\n    try:\n        iter(x)\n        return True\n" \
             "    except TypeError:\n        return False\n"


def test_a_predicate_over_any_object_is_refuted_with_a_class() -> None:
    # Both versions take any object; a class has `__iter__` but is not iterable.
    after = "def f(x):\n    return hasattr(x, '__iter__')\n"
    r = check(ISITERABLE, after, "from pkg.mod import f\n\n\ndef test_it():\n    f([1])\n",
              budget=SURE)
    assert r.verdict is Verdict.REFUTED, r.detail
    assert r.counterexample is not None and r.counterexample.args[0] in (
        "str", "list", "dict", "tuple")
    assert any("every use of `x` in both versions accepts any object" in n for n in r.notes)


def test_a_function_that_stops_taking_any_object_is_not_refuted_with_one() -> None:
    # The after version no longer catches TypeError: it takes sequences only, and the
    # two agree on every sequence. An int would tell them apart, but is no input of it.
    before = ("def f(x, default=None):\n    try:\n        return x[-1]\n"
              "    except (IndexError, TypeError):\n        return default\n")
    after = before.replace("(IndexError, TypeError)", "IndexError")
    r = check(before, after, "from pkg.mod import f\n\n\ndef test_it():\n    f([1, 2], 0)\n")
    assert r.verdict is not Verdict.REFUTED, r.detail


def test_a_helper_no_test_calls_is_searched_with_what_its_caller_passes() -> None:
    # `_first` is private: its iterator comes from `first`, whose doctest gives ints.
    module = ('def first(items):\n    """>>> first([3, 4])\n    3\n    """\n'
              "    return _first(iter(items))\n\n\n"
              "def _first(iterator):\n    for x in iterator:\n        return x\n"
              "    return None\n")
    after = module.replace("    return None\n", "    return -1\n")
    r = check(module, after, "", entry="_first", budget=SURE)
    assert r.verdict is Verdict.REFUTED, r.detail
    assert r.counterexample is not None and r.counterexample.args == ("iter([])",)


def test_a_callers_negative_test_gives_the_helper_no_wrong_type() -> None:
    # `spread` is tested with an int, expecting TypeError: `_pairs` must not be searched
    # with ints (which would tell the versions apart by the exception they raise).
    module = ('def spread(items):\n    """>>> spread([1, 2])\n    """\n'
              "    return _pairs(items)\n\n\n"
              "def _pairs(iterable):\n    return list(zip(iterable, iterable))\n")
    after = module.replace("return list(zip(iterable, iterable))",
                           "if isinstance(iterable, int):\n        raise ValueError\n"
                           "    return list(zip(iterable, iterable))")
    test = ("import unittest\nfrom pkg.mod import spread\n\n\nclass T(unittest.TestCase):\n"
            "    def test_wrong(self):\n        self.assertRaises(TypeError, lambda: spread(1))\n")
    r = check(module, after, test, entry="_pairs")
    assert r.verdict is not Verdict.REFUTED, r.detail


RUNNING = '''def running_min(iterable, maxlen):
    """>>> list(running_min([4, 3, 7, 0, 8], 3))
    [4, 3, 3, 0, 0]
    """
    return _windowed(iter(iterable), maxlen)


def _windowed(iterator, maxlen):
    s = []
    for value in iterator:
        while s and not s[-1] <= value:
            s.pop()
        s.append(value)
        yield s[0]
'''


def test_ints_of_an_example_stand_for_numbers_nan_included() -> None:
    # more-itertools 7c17fc6: `not s[-1] <= value` became `value < s[-1]`, the same on
    # every int, not on NaN. The helper's type comes from the doctest of its caller.
    after = RUNNING.replace("not s[-1] <= value", "value < s[-1]")
    r = check(RUNNING, after, "", entry="_windowed", budget=SURE)
    assert r.verdict is Verdict.REFUTED, r.detail
    assert r.counterexample is not None and "nan" in r.counterexample.args[0]
    assert any("Iterator[int | float]" in n for n in r.notes), r.notes
