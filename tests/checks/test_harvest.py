"""Calls harvested from doctests and test files; types inferred from them; string seeds."""

from __future__ import annotations

import ast

import pytest

from veribot.checks.lang import pyinfer, pystrings
from veribot.checks.lang.pytypes import (
    BoolT,
    DictT,
    FloatT,
    IntT,
    IteratorT,
    ListT,
    NoneT,
    StrT,
    TupleT,
    UnionT,
)
from veribot.checks.project.package import Package, PairContext, SourceFile
from veribot.checks.sandbox._child import parse_literal, split_arguments
from veribot.checks.search import construct
from veribot.checks.search.harvest import (
    Call,
    calls_for,
    from_doctests,
    from_test_file,
    target_of,
)

MODULE = '''"""A module.

>>> chunk([1, 2, 3], 2)
[[1, 2], [3]]
"""


def chunk(items, n=2, strict=False):
    """Split.

    >>> list(chunk('abc', n=1))
    ['a', 'b', 'c']
    >>> chunk(helper(), 3)
    """
    return items


def other(x):
    """>>> chunk((1, 2), 5)"""
    return x
'''


def args_of(calls: list[Call]) -> list[tuple[str, ...]]:
    return [c.args for c in calls]


def test_doctests_of_every_docstring_give_literal_calls_with_their_lines() -> None:
    calls = from_doctests(MODULE, "chunk", "the after version")
    assert args_of(calls) == [("[1, 2, 3]", "2"), ("'abc'", "n=1"), ("(1, 2)", "5")]
    assert calls[0].origin == "the doctest at line 3 of the after version"
    assert calls[1].origin == "the doctest at line 11 of the after version"


TEST_FILE = '''import pytest
import pkg as p
from pkg.mod import chunk as ch
from other import thing


SEQ = 'ABCDEFG'


def test_plain():
    seq = [1, 2, 3]
    assert list(ch(seq, -1)) == []
    assert p.chunk(SEQ, 3, strict=True)
    with pytest.raises(ValueError):
        list(p.mod.chunk(iter([1, 2]), n=range(3)))


def test_not_literal():
    n = 1
    n = 2
    ch([1], n)              # n bound twice: not a literal
    ch(thing, 1)            # a name from elsewhere
    ch(*[1, 2])             # a literal spread: ch(1, 2)
    ch(*thing)              # spread of a name from elsewhere
    ch([1], key=lambda x: x)


class TestIt:
    def test_lambda(self):
        self.assertRaises(ValueError, lambda: list(ch('AB', 0)))
'''


def test_test_file_calls_through_imports_with_local_literals_resolved() -> None:
    calls = from_test_file(TEST_FILE, "chunk", "pkg.mod", "tests/test_mod.py", "after")
    assert args_of(calls) == [
        ("[1, 2, 3]", "-1"),
        ("'ABCDEFG'", "3", "strict=True"),
        ("iter([1, 2])", "n=range(3)"),
        ("1", "2"),
        ("'AB'", "0"),
    ]
    assert calls[0].origin == "a call in tests/test_mod.py line 12 (after revision)"
    for call in calls:
        split_arguments(call.args)  # the sandbox reads every one


def test_a_function_of_the_same_name_defined_in_the_test_file_is_not_the_unit() -> None:
    text = '''from pkg.mod import *
import pkg.mod


def chunk(items, n):
    return []


def test_local():
    chunk([1, 2], -1)          # the local function, not the unit
    pkg.mod.chunk([3], -2)     # the unit
'''
    calls = from_test_file(text, "chunk", "pkg.mod", "t.py", "after")
    assert args_of(calls) == [("[3]", "-2")]
    # An unrelated module's function of that name is not the unit either.
    assert from_test_file("from elsewhere import chunk\nchunk([1], 2)\n", "chunk", "pkg.mod",
                          "t.py", "after") == []


def test_calls_only_in_the_after_revision_come_first() -> None:
    ctx = PairContext(
        Package("pkg.mod", "pkg/mod.py", ""),
        Package("pkg.mod", "pkg/mod.py", ""),
        before_tests=(SourceFile("tests/t.py", "from pkg.mod import f\nf(1)\n"),),
        after_tests=(SourceFile("tests/t.py", "from pkg.mod import f\nf(1)\nf(-1)\n"),),
    )
    src = "def f(x):\n    return x\n"
    calls = calls_for(src, src, "f", ctx)
    assert args_of(calls) == [("-1",), ("1",)]
    assert "(after revision)" in calls[0].origin
    assert calls_for(src, src, "C.f", ctx) == []  # no such class in the tests
    assert calls_for(src, src, "A.B.f", ctx) == []  # a nested class: not harvested
    assert calls_for("def f(:", src, "f", None) == []


def test_the_sandbox_reads_range_and_iter_of_literals_only() -> None:
    assert parse_literal("range(1, 7, 2)") == range(1, 7, 2)
    assert list(parse_literal("iter('ab')")) == ["a", "b"]  # type: ignore[call-overload]
    for bad in ("range(1.5)", "iter(x)", "range(True)", "iter(open('f'))", "list(range(3))"):
        try:
            parse_literal(bad)
        except ValueError:
            continue
        raise AssertionError(f"{bad} was accepted")


def fn(src: str) -> ast.FunctionDef:
    node = ast.parse(src).body[0]
    assert isinstance(node, ast.FunctionDef)
    return node


def test_types_are_inferred_from_defaults_and_calls_and_say_from_where() -> None:
    f = fn("def f(items, n=2, strict=False, key=None, *, tag: str = ''):\n    pass\n")
    calls = [Call(("'abc'", "3"), "a call in tests/t.py line 3 (after revision)"),
             Call(("[1, 2]", "n=None"), "a call in tests/t.py line 4 (after revision)"),
             Call(("iter([1])",), "the doctest at line 9 of the after version")]
    got = pyinfer.infer(f, f, calls)
    assert got["items"].type == UnionT((StrT(), ListT(IntT())))
    assert got["n"].type == UnionT((IntT(), NoneT()))
    assert got["strict"].type == BoolT()
    assert "key" not in got  # None alone says nothing
    assert "tag" not in got  # annotated
    # The iterator of the doctest is for random testing only (the model has no such type),
    # which draws the items seen as ints as floats too.
    num = UnionT((IntT(), FloatT()))
    assert got["items"].search == UnionT((StrT(), ListT(num), IteratorT(num)))
    assert got["n"].search == UnionT((IntT(), NoneT()))  # an argument that is an int stays one
    assert got["items"].sources == ("2 call(s) in tests/t.py", "a call in doctests")
    assert got["strict"].sources == ("the default False",)
    text = pyinfer.assumption(got)
    assert "`items: str | list[int]` (inferred from 2 call(s) in tests/t.py" in text


def test_ints_seen_inside_containers_are_drawn_as_floats_too() -> None:
    num = UnionT((IntT(), FloatT()))
    assert pyinfer.widened(IntT()) == IntT()
    assert pyinfer.widened(ListT(IntT())) == ListT(num)
    assert pyinfer.widened(DictT(StrT(), TupleT((IntT(), StrT())))) == DictT(
        StrT(), TupleT((num, StrT())))
    assert pyinfer.widened(ListT(UnionT((IntT(), FloatT())))) == ListT(num)
    assert pyinfer.widened(ListT(BoolT())) == ListT(BoolT())


def test_nothing_is_inferred_when_the_parameters_differ_or_an_annotation_exists() -> None:
    a, b = fn("def f(x=1):\n    pass\n"), fn("def f(y=1):\n    pass\n")
    assert pyinfer.infer(a, b, []) == {}
    c = fn("def f(x: float = 1):\n    pass\n")
    assert pyinfer.infer(a, c, []) == {}


def test_string_seeds_come_from_the_regular_expression_a_function_reads() -> None:
    src = '''import re
_ansi = re.compile(r"\\033\\[[0-?]*[ -/]*[@-~]")
OTHER = "unrelated"


def strip(value):
    return _ansi.sub("", value)


def length(value):
    return len(strip(value))
'''
    assert pystrings.regex_samples(r"\033\[[0-?]*[ -/]*[@-~]") == [
        "\x1b[@", "\x1b[0 @", "\x1b[?/~"]
    for entry in ("strip", "length"):
        seeds = pystrings.seeds([src], entry)
        assert "\x1b[@" in seeds and "unrelated" not in seeds, seeds
    assert pystrings.regex_samples("(") == []


PARAMETRIZED = '''import pytest
from pkg.mod import strip

ESC = "\\033"
EMITTED = [f"{ESC}[1m", f"{ESC}[0m"]
FOREIGN = [f"{ESC}[38:5:1m"]


@pytest.mark.parametrize("seq", EMITTED + FOREIGN)
def test_removed(seq):
    assert strip(f"a{seq}b") == "ab"


@pytest.mark.parametrize(("text", "n"), [("x", 1), pytest.param("y", 2, id="y"), ("z",)])
@pytest.mark.parametrize("flag", [True])
def test_rows(text, n, flag):
    strip(text, n, flag=flag)


@pytest.mark.parametrize("seq", make_rows())
def test_not_literal(seq):
    strip(seq)
'''


def test_parametrize_rows_and_f_strings_of_literals_give_calls() -> None:
    calls = from_test_file(PARAMETRIZED, "strip", "pkg.mod", "t.py", "after")
    assert args_of(calls) == [
        ("'a\\x1b[1mb'",), ("'a\\x1b[0mb'",), ("'a\\x1b[38:5:1mb'",),
        ("'x'", "1", "flag=True"), ("'y'", "2", "flag=True"),
    ]


def test_names_used_twice_in_a_chain_do_not_build_huge_values() -> None:
    lines = ["from pkg.mod import f", "a0 = 'xxxxxxxxxx'"]
    lines += [f"a{i + 1} = [a{i}, a{i}]" for i in range(19)]
    lines += [f"b{i + 1} = f'{{b{i}}}{{b{i}}}'" for i in range(19)]
    lines += ["b0 = 'yyyyyyyyyy'", "f(a19)", "f(b19)", "f(a3)"]
    calls = from_test_file("\n".join(lines) + "\n", "f", "pkg.mod", "t.py", "after")
    assert [len(c.args[0]) for c in calls] == [len(str([[["xxxxxxxxxx"] * 2] * 2] * 2))]


def test_doc_files_give_calls_only_through_imports_of_the_module() -> None:
    readme = """Usage
=====

    >>> from pkg import chunk
    >>> chunk([1, 2, 3], 2)
    [[1, 2], [3]]

Elsewhere a function of that name is another one:

    >>> from other import chunk as c
    >>> c([4], 1)
"""
    calls = from_doctests(readme, "chunk", "README.rst (after revision)", docs=True,
                          module="pkg.mod")
    assert args_of(calls) == [("[1, 2, 3]", "2")]
    assert calls[0].origin == "the doctest at line 5 of README.rst (after revision)"
    assert from_doctests(readme.replace("from pkg import", "from nowhere import"), "chunk",
                         "README.rst", docs=True, module="pkg.mod") == []


LOOPS = '''import pytest
from pkg.mod import find


def test_cases():
    iterable = 'AABCA'
    cases = [(dict(start=-3), [4]), (dict(stop=-2), [0, 1])]
    for kwargs, expected in cases:
        for wrapper in (list, iter):
            assert list(find(wrapper(iterable), 'A', **kwargs)) == expected


def test_indexes():
    for i in range(2):
        find('AB', 'A', start=i + 1)
    for args in [('x', 'y'), ('z',)]:
        find(*args)
    for args in make_cases():
        find(*args)             # not a literal sequence: nothing


def test_rebound_per_loop():
    for s in ['ab']:
        seq = s * 2             # not a literal
        find(seq, 'a')
    for s in ['cd']:
        seq = s
        find(seq, 'c')
    find(seq, 'z')              # after the loops `seq` is bound twice: not a literal
'''


def test_loops_over_literal_cases_stars_and_wrappers_give_one_call_per_row() -> None:
    calls = from_test_file(LOOPS, "find", "pkg.mod", "t.py", "after")
    assert args_of(calls) == [
        ("['A', 'A', 'B', 'C', 'A']", "'A'", "start=-3"),
        ("iter('AABCA')", "'A'", "start=-3"),
        ("['A', 'A', 'B', 'C', 'A']", "'A'", "stop=-2"),
        ("iter('AABCA')", "'A'", "stop=-2"),
        ("'AB'", "'A'", "start=1"),
        ("'AB'", "'A'", "start=2"),
        ("'x'", "'y'"),
        ("'z'",),
        ("'cd'", "'c'"),
    ]
    for call in calls:
        split_arguments(call.args)


CLASSES = '''import unittest
import pkg as p
from pkg.mod import Range, Other
from elsewhere import Range as Foreign


class RangeTests(unittest.TestCase):
    def test_eq(self):
        for args1, args2 in [((2, 3, 1), (2, 3, 5)), ((0, 5, 2), (0, 6, 2))]:
            r1 = p.mod.Range(*args1)
            r2 = Range(*args2)
            self.assertEqual(r1, r2)
            self.assertEqual(hash(r1), hash(r2))
        self.assertNotEqual(7, Range(7.0))       # reflected: Range(7.0).__eq__(7)
        assert Range(1) == Other(2)               # an object of another class as argument
        assert Foreign(1) == Range(9)             # not the module's class: `Range(9) == ?`
        r = Range(4)
        r.shift(2, by=Other(1))
        r.size                                    # a property read
        Range.make(3)                             # a static method
        assert 2 in r and r[1] == 1
'''
MODULE_WITH_CLASSES = '''class Other:
    def __init__(self, x): self.x = x


class Range:
    def __init__(self, *args): self.args = args
    def __eq__(self, other): return True
    def __hash__(self): return 1
    def __contains__(self, x): return True
    def __getitem__(self, i): return i
    def shift(self, n, by=None): return self
    @property
    def size(self): return 1
    @staticmethod
    def make(n): return Range(n)
'''


def test_methods_are_called_on_objects_the_test_builds_and_through_operations() -> None:
    def calls(entry: str) -> list[tuple[str, ...]]:
        target = target_of(entry, MODULE_WITH_CLASSES)
        assert target is not None
        found = from_test_file(CLASSES, target, "pkg.mod", "t.py", "after",
                               classes=construct.class_names(MODULE_WITH_CLASSES))
        for call in found:
            split_arguments(call.args[1:] if call.args[0].startswith("@") else call.args,
                            objects=True)
        return args_of(found)

    assert calls("Range.__eq__") == [
        ("@Range(2, 3, 1)", "Range(2, 3, 5)"), ("@Range(0, 5, 2)", "Range(0, 6, 2)"),
        ("@Range(7.0)", "7"), ("@Range(1)", "Other(2)")]
    assert calls("Range.__hash__") == [("@Range(2, 3, 1)",), ("@Range(2, 3, 5)",),
                                       ("@Range(0, 5, 2)",), ("@Range(0, 6, 2)",)]
    assert calls("Range.shift") == [("@Range(4)", "2", "by=Other(1)")]
    assert calls("Range.size") == [("@Range(4).size",)]
    assert calls("Range.make") == [("3",)]
    assert calls("Range.__contains__") == [("@Range(4)", "2")]
    assert calls("Range.__getitem__") == [("@Range(4)", "1")]
    assert ("9",) in calls("Range.__init__") and ("*args1",) not in calls("Range.__init__")
    # Without the module's class names, an object of another class is no literal.
    target = target_of("Range.shift", MODULE_WITH_CLASSES)
    assert target is not None
    assert from_test_file(CLASSES, target, "pkg.mod", "t.py", "after") == []


def test_doctest_sessions_keep_names_between_examples() -> None:
    source = '''class Range:
    """A range.

    >>> r = Range(1, 4)
    >>> r == Range(1, 5)
    False
    >>> len(r)
    3
    """
    def __init__(self, *args): pass
    def __eq__(self, other): return False
    def __len__(self): return 3
'''
    target = target_of("Range.__eq__", source)
    assert target is not None
    calls = from_doctests(source, target, "the after version", classes={"Range"})
    assert args_of(calls) == [("@Range(1, 4)", "Range(1, 5)")]
    assert calls[0].origin == "the doctest at line 5 of the after version"
    len_calls = from_doctests(source, "Range.__len__", "the after version")
    assert args_of(len_calls) == [("@Range(1, 4)",)]


def test_an_iterator_argument_is_a_type_for_the_search_only() -> None:
    f = fn("def f(it, n=2):\n    pass\n")
    calls = [Call(("iter([1, 2])",), "a call in tests/t.py line 3 (after revision)"),
             Call(("[3]",), "a call in tests/t.py line 4 (after revision)")]
    got = pyinfer.infer(f, f, calls)
    num = UnionT((IntT(), FloatT()))
    assert got["it"].search == UnionT((IteratorT(num), ListT(num)))
    assert got["it"].type == ListT(IntT())  # what the model may assume
    assert "Iterator" not in pyinfer.assumption(got)


HELPERS = '''def window(items, n=None):
    """>>> list(window([4, 3, 7], n=2))"""
    it = iter(items)
    if n is None:
        return list(it)
    return _window(it, n)


def _window(iterator, maxlen):
    return list(iterator)[:maxlen]


def other(k: str):
    return _window(iter(k), 3)
'''


def test_a_helper_gets_types_from_what_the_modules_functions_pass_it() -> None:
    tree = ast.parse(HELPERS)
    helper = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "_window")
    callers = pyinfer.Callers([tree], "_window",
                              lambda name: calls_for(HELPERS, HELPERS, name, None))
    got = pyinfer.infer(helper, helper, [], callers=callers)
    # `window` passes `iter(items)` (items: list[int] from its doctest) and its `n`;
    # `other` passes `iter(k)` (k: str, annotated) and 3.
    num = UnionT((IntT(), FloatT()))
    assert got["iterator"].search == UnionT((IteratorT(num), IteratorT(StrT())))
    assert got["iterator"].type is None  # no type the model knows
    assert got["maxlen"].search == UnionT((NoneT(), IntT()))
    assert got["iterator"].sources == ("the call in `window`, the call in `other`",)
    note = pyinfer.search_note(got)
    assert "`iterator: Iterator[int | float] | Iterator[str]` (from the call in `window`" in note


@pytest.mark.parametrize(("body", "anything"), [
    ("    try:\n        iter(x)\n        return True\n    except TypeError:\n"
     "        return False\n", True),
    ("    return hasattr(x, '__iter__')\n", True),
    ("    return isinstance(x, int) or x is None or getattr(x, 'k', 0) == 1\n", True),
    ("    try:\n        return x[-1]\n    except (IndexError, StopIteration):\n"
     "        return None\n", False),                      # a TypeError is not caught
    ("    return hasattr(x, 'a') and x.a\n", False),       # x.a needs an attribute
    ("    x = 1\n    return hasattr(x, 'a')\n", False),   # rebound
    ("    return len(x)\n", False),
    ("    return x + 1 if isinstance(x, int) else 0\n", False),  # x + 1 needs a number
    ("    try:\n        pass\n    except TypeError:\n        pass\n    return x.k\n", False),
    ("    return lambda: hasattr(x, 'a')\n", False),      # a closure: not read
    ("    return 1\n", False),                             # never used
])
def test_a_parameter_takes_any_object_only_if_every_use_allows_any(body: str,
                                                                   anything: bool) -> None:
    f = fn("def f(x):\n" + body)
    assert (pyinfer.takes_anything(f) == {"x"}) is anything


def test_any_object_is_inferred_only_when_both_versions_take_it() -> None:
    before = fn("def f(x):\n    try:\n        iter(x)\n        return True\n"
                "    except TypeError:\n        return False\n")
    after = fn("def f(x):\n    return hasattr(x, '__iter__')\n")
    narrow = fn("def f(x):\n    iter(x)\n    return True\n")
    assert pyinfer.infer(before, after, [])["x"].search == pyinfer.ANYTHING
    assert pyinfer.infer(before, after, [])["x"].type is None
    assert pyinfer.infer(before, narrow, []) == {}


NEGATIVE = '''import pytest
import unittest
from pkg.mod import join


class T(unittest.TestCase):
    def test_types(self):
        self.assertRaises(TypeError, lambda: join('x', 1))
        with self.assertRaises((ValueError, TypeError)):
            join('y', None)
        with pytest.raises(ValueError):
            join('z', [1], n=0)
        with pytest.raises(errors.Custom):
            join('w', [2])
        join('v', [3])
'''


def test_calls_a_test_expects_to_raise_say_what() -> None:
    calls = from_test_file(NEGATIVE, "join", "pkg.mod", "t.py", "after")
    assert [(c.args, c.raises) for c in calls] == [
        (("'x'", "1"), ("TypeError",)),
        (("'y'", "None"), ("ValueError", "TypeError")),
        (("'z'", "[1]", "n=0"), ("ValueError",)),
        (("'w'", "[2]"), ("Custom",)),
        (("'v'", "[3]"), ()),
    ]
    doc = '''def join(e, xs):
    """Join.

    >>> join('a', 5)
    Traceback (most recent call last):
    TypeError: not iterable
    >>> join('b', [1])
    """
'''
    got = from_doctests(doc, "join", "the after version")
    assert [(c.args, c.raises) for c in got] == [(("'a'", "5"), ("TypeError",)),
                                                 (("'b'", "[1]"), ())]


def test_no_type_is_inferred_from_a_call_that_must_raise_a_type_error() -> None:
    f = fn("def join(e, xs, n=1):\n    pass\n")
    calls = from_test_file(NEGATIVE, "join", "pkg.mod", "t.py", "after")
    got = pyinfer.infer(f, f, calls)
    # `1` and `None` come from TypeError tests; `[1]` from a ValueError test still counts.
    assert got["xs"].type == ListT(IntT())
    assert got["xs"].search == ListT(UnionT((IntT(), FloatT())))
