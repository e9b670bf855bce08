"""Pairing the functions of two versions of a file into changed units."""

from __future__ import annotations

import textwrap

import pytest

from veribot.checks.project.units import (
    CLASS_DOCSTRING,
    LAYOUT_READ,
    MODULE_ENTRY,
    REPLACED,
    ChangedUnit,
    FileChange,
    UnitKind,
    UnitLevel,
    changed_units,
    function_entries,
    is_binary,
)


def src(text: str) -> bytes:
    return textwrap.dedent(text).lstrip().encode()


def units(
    before: str | None, after: str | None, path: str = "pkg/mod.py", **kw: bool
) -> dict[str, ChangedUnit]:
    change = FileChange(
        path if before is not None else None,
        path if after is not None else None,
        src(before) if before is not None else None,
        src(after) if after is not None else None,
    )
    found = changed_units(change, **kw)
    by_name = {u.entry: u for u in found}
    assert len(by_name) == len(found), "one unit per entry"
    return by_name


def kinds(found: dict[str, ChangedUnit]) -> dict[str, str]:
    return {entry: u.kind.value for entry, u in found.items()}


BEFORE = textwrap.dedent(
    """
    import math

    RATE = 3

    def area(r: float) -> float:
        return math.pi * r * r

    class Cart:
        currency = "EUR"

        def total(self, prices: list[int]) -> int:
            return sum(prices)

        @staticmethod
        def tax(x: int) -> int:
            return x // 5

        class Line:
            def cost(self, qty: int, unit: int) -> int:
                return qty * unit

    async def fetch(n: int) -> int:
        return n
    """
)


def test_formatting_and_comments_are_a_noise_change() -> None:
    after = BEFORE.replace("return sum(prices)", "return sum( prices )  # same")
    found = units(BEFORE, after)
    assert kinds(found) == {"Cart.total": "changed"}
    assert found["Cart.total"].noise == "formatting"
    every = units(BEFORE, after, include_unchanged=True)
    assert set(every) == {"area", "Cart.total", "Cart.tax", "Cart.Line.cost", "fetch"}
    assert {e for e, u in every.items() if u.kind is UnitKind.UNCHANGED} == {
        "area", "Cart.tax", "Cart.Line.cost", "fetch"
    }


def test_formatting_in_code_that_reads_line_numbers_is_not_noise() -> None:
    before = "import inspect\ndef f() -> int:\n    return inspect.currentframe().f_lineno\n"
    after = before.replace("    return", "    return (\n       ").replace("f_lineno", "f_lineno)")
    # Reported, and not compared: its code is the same, what differs no model sees.
    found = units(before, after)
    assert kinds(found) == {"f": "changed"} and found["f"].noise == LAYOUT_READ


def test_formatting_next_to_a_docstring_reader_is_unchanged() -> None:
    # A layout change leaves docstrings as they are: code reading `__doc__` cannot see it.
    before = "def f() -> object:\n    return f.__doc__\n\ndef g() -> int:\n    return 1\n"
    after = before.replace("return 1", "return (\n        1)") + "X = 1\n"
    assert "g" not in units(before, after)


def test_formatting_next_to_warnings_caught_by_line_is_not_noise() -> None:
    # A warning repeated from one line is shown once, from two lines twice.
    before = ("import warnings\ndef f() -> int:\n"
              "    with warnings.catch_warnings(record=True) as seen:\n"
              "        warnings.warn('w'); warnings.warn('w')\n    return len(seen)\n")
    after = before.replace("; warnings", "\n        warnings")
    assert units(before, after)["f"].noise == LAYOUT_READ


def test_lines_moving_is_not_a_change() -> None:
    after = "\n\n# a comment at the top\n" + BEFORE
    assert units(BEFORE, after) == {}


def test_formatting_with_a_real_change_elsewhere_is_unchanged() -> None:
    after = BEFORE.replace("return sum(prices)", "return sum( prices )").replace(
        "return x // 5", "return x // 6"
    )
    found = units(BEFORE, after)
    assert kinds(found) == {"Cart.tax": "changed"}
    assert found["Cart.tax"].noise == ""


def test_methods_nested_classes_and_async_paired_by_qualified_name() -> None:
    after = (
        BEFORE.replace("return sum(prices)", "return sum(prices) + 0")
        .replace("return qty * unit", "return unit * qty")
        .replace("return n", "return n + 0")
    )
    found = units(BEFORE, after)
    assert kinds(found) == {
        "Cart.total": "changed",
        "Cart.Line.cost": "changed",
        "fetch": "changed",
    }
    cost = found["Cart.Line.cost"]
    assert cost.qualname == "pkg/mod.py::Cart.Line.cost"
    assert cost.level is UnitLevel.FUNCTION
    assert cost.before_source is not None and "qty * unit" in cost.before_source
    assert cost.after_source is not None and "unit * qty" in cost.after_source
    assert cost.after_lines is not None and cost.line == cost.after_lines[0]


def test_decorator_change_is_a_change_and_lines_include_decorators() -> None:
    after = BEFORE.replace("@staticmethod", "@classmethod")
    found = units(BEFORE, after)
    assert kinds(found) == {"Cart.tax": "changed"}
    lines = src(after).decode().splitlines()
    start, end = found["Cart.tax"].after_lines or (0, 0)
    assert lines[start - 1].strip() == "@classmethod"
    assert lines[end - 1].strip() == "return x // 5"


def test_rename_with_identical_code_is_renamed_not_added_and_deleted() -> None:
    after = BEFORE.replace("def area(", "def disc_area(")
    found = units(BEFORE, after)
    assert kinds(found) == {"disc_area": "renamed"}
    assert found["disc_area"].before_entry == "area"
    assert found["disc_area"].before_lines is not None


def test_rename_with_changed_code_is_added_plus_deleted() -> None:
    after = BEFORE.replace(
        "def area(r: float) -> float:\n    return math.pi * r * r",
        "def disc_area(r: float) -> float:\n    return math.pi * r ** 2",
    )
    assert kinds(units(BEFORE, after)) == {"disc_area": "added", "area": "deleted"}


def test_added_and_deleted_methods_and_classes() -> None:
    after = BEFORE.replace(
        "    @staticmethod", "    def count(self) -> int:\n        return 0\n\n    @staticmethod"
    ).replace(
        "    class Line:\n        def cost(self, qty: int, unit: int) -> int:\n"
        "            return qty * unit\n",
        "",
    )
    found = units(BEFORE, after)
    assert kinds(found) == {
        "Cart.count": "added",
        "Cart.Line": "deleted",
        "Cart.Line.cost": "deleted",
    }
    assert found["Cart.Line"].level is UnitLevel.CLASS
    assert found["Cart.Line.cost"].after_lines is None


def test_changes_outside_functions_are_their_own_units() -> None:
    after = BEFORE.replace("RATE = 3", "RATE = 4").replace('currency = "EUR"', 'currency = "USD"')
    found = units(BEFORE, after)
    assert kinds(found) == {MODULE_ENTRY: "outside-functions", "Cart": "outside-functions"}
    module = found[MODULE_ENTRY]
    assert module.level is UnitLevel.FILE
    assert module.qualname == "pkg/mod.py::<module>"
    assert module.line == 3  # RATE = 4
    assert found["Cart"].level is UnitLevel.CLASS


def test_import_change_is_outside_functions() -> None:
    after = BEFORE.replace("import math", "import math\nimport os")
    assert kinds(units(BEFORE, after)) == {MODULE_ENTRY: "outside-functions"}


def test_functions_inside_functions_belong_to_their_enclosing_function() -> None:
    before = """
        def outer(x: int) -> int:
            def inner(y: int) -> int:
                return y + 1
            return inner(x)
    """
    after = before.replace("y + 1", "1 + y")
    assert kinds(units(before, after)) == {"outer": "changed"}
    assert function_entries(src(before).decode()) == ("outer",)


def test_syntax_error_in_after_version_reports_the_line_and_keeps_changed_functions() -> None:
    before = """
        def a(x: int) -> int:
            return x

        def b(x: int) -> int:
            return x * 2
    """
    after = """
        def a(x: int) -> int:
            return x

        def b(x: int) -> int:
            return x * 3 +
    """
    found = units(before, after)
    assert kinds(found) == {MODULE_ENTRY: "parse-error", "b": "parse-error"}
    file_unit = found[MODULE_ENTRY]
    assert file_unit.line == 5
    assert "does not parse" in file_unit.detail and "line 5" in file_unit.detail
    assert file_unit.in_after
    assert found["b"].before_lines == (4, 5)


def test_syntax_error_in_before_version() -> None:
    found = units("def a(:\n    pass\n", "def a() -> int:\n    return 1\n")
    assert kinds(found) == {MODULE_ENTRY: "parse-error", "a": "parse-error"}
    assert "before version does not parse" in found[MODULE_ENTRY].detail


def test_new_and_deleted_files() -> None:
    new = units(None, "X = 1\n\ndef f() -> int:\n    return X\n")
    assert kinds(new) == {MODULE_ENTRY: "added", "f": "added"}
    gone = units("def f() -> int:\n    return 1\n", None)
    assert kinds(gone) == {MODULE_ENTRY: "deleted", "f": "deleted"}


def test_file_rename_is_reported_and_functions_pair_across_it() -> None:
    before = "def f(x: int) -> int:\n    return x\n"
    change = FileChange(
        "old/a.py", "new/b.py", before.encode(), before.replace("x\n", "x + 1\n").encode()
    )
    found = {u.entry: u for u in changed_units(change)}
    assert kinds(found) == {MODULE_ENTRY: "renamed", "f": "changed"}
    assert found["f"].qualname == "new/b.py::f"
    assert found["f"].before_path == "old/a.py"
    assert "old/a.py" in found[MODULE_ENTRY].detail


@pytest.mark.parametrize(
    ("path", "before", "after", "kind"),
    [
        ("img/logo.png", b"\x89PNG\x00", b"\x89PNG\x01", UnitKind.NOT_PYTHON),
        ("README.md", b"hello", b"hello world", UnitKind.NOT_PYTHON),
        ("pkg/blob.py", b"x = 1\n", b"x = 1\n\x00\x00", UnitKind.BINARY),
    ],
)
def test_binary_and_non_python_files_are_reported_not_dropped(
    path: str, before: bytes, after: bytes, kind: UnitKind
) -> None:
    (unit,) = changed_units(FileChange(path, path, before, after))
    assert unit.kind is kind
    assert unit.entry == MODULE_ENTRY
    assert "not checked" in unit.detail


def test_git_binary_flag_is_respected() -> None:
    (unit,) = changed_units(FileChange("a.py", "a.py", b"x = 1\n", b"x = 2\n", binary=True))
    assert unit.kind is UnitKind.BINARY


def test_undecodable_source_is_a_parse_error() -> None:
    change = FileChange("a.py", "a.py", b"x = 1\n", b"x = '\xff\xfe'\n")
    found = {u.entry: u for u in changed_units(change)}
    assert found[MODULE_ENTRY].kind is UnitKind.PARSE_ERROR
    assert "decode" in found[MODULE_ENTRY].detail


def test_is_binary_uses_gits_heuristic() -> None:
    assert is_binary(b"abc\x00")
    assert not is_binary(b"abc")
    assert not is_binary(b"a" * 9000 + b"\x00")


DOCS = textwrap.dedent(
    '''
    """The module."""

    LIMIT = 3


    def f(x: int) -> int:
        """Old words."""
        return x + 1


    def helper(s: str) -> bool:
        return len(s) > LIMIT


    def h(s: str) -> bool:
        return helper(s)


    def k(x: int) -> int:
        return x


    class Box:
        """A box."""

        def size(self) -> int:
            """Its size."""
            return 1
    '''
)


def test_docstring_only_change_is_a_noise_change() -> None:
    after = DOCS.replace("Old words.", "New words.").replace("Its size.", "How big.")
    found = units(DOCS, after)
    assert kinds(found) == {"f": "changed", "Box.size": "changed"}
    assert {u.noise for u in found.values()} == {"docstring"}
    assert found["f"].detail == "only the docstring changed"


def test_docstring_change_with_a_code_change_elsewhere_is_checked_as_usual() -> None:
    after = DOCS.replace("Old words.", "New words.").replace("return x\n", "return x + 0\n")
    found = units(DOCS, after)
    assert kinds(found) == {"f": "changed", "k": "changed"}
    assert found["f"].noise == "" and found["k"].noise == ""


@pytest.mark.parametrize(
    ("before", "after"),
    [
        # A string that is not the first statement is not a docstring.
        ("def f(x: int) -> int:\n    x = x + 1\n    'a'\n    return x\n",
         "def f(x: int) -> int:\n    x = x + 1\n    'b'\n    return x\n"),
        # The docstring gone, and a `pass` in its place: not only the docstring changed.
        ("def f() -> None:\n    'a'\n", "def f() -> None:\n    pass\n"),
        # The module reads docstrings.
        ("def f() -> str:\n    'a'\n    return f.__doc__ or ''\n",
         "def f() -> str:\n    'b'\n    return f.__doc__ or ''\n"),
        ("import inspect\ndef f() -> None:\n    'a'\nX = inspect.getdoc(f)\n",
         "import inspect\ndef f() -> None:\n    'b'\nX = inspect.getdoc(f)\n"),
        # A decorator that may read it (click's command uses it as help text).
        ("@command()\ndef f() -> None:\n    'a'\n", "@command()\ndef f() -> None:\n    'b'\n"),
        # A base from elsewhere may read a method's docstring (`cmd.Cmd` prints it as help).
        ("import cmd\nclass Shell(cmd.Cmd):\n    def f(self) -> None:\n        'a'\n",
         "import cmd\nclass Shell(cmd.Cmd):\n    def f(self) -> None:\n        'b'\n"),
        # A metaclass may read a method's docstring.
        ("class A(metaclass=M):\n    def f(self) -> None:\n        'a'\n",
         "class A(metaclass=M):\n    def f(self) -> None:\n        'b'\n"),
        # The code reads line numbers: a longer docstring shifts them.
        ("import sys\ndef f() -> int:\n    'a'\n    return sys._getframe().f_lineno\n",
         "import sys\ndef f() -> int:\n    \"\"\"a\n    b\"\"\"\n"
         "    return sys._getframe().f_lineno\n"),
        # A bytes literal is not a docstring.
        ("def f() -> None:\n    b'a'\n", "def f() -> None:\n    b'b'\n"),
    ],
)
def test_not_only_a_docstring(before: str, after: str) -> None:
    found = units(before, after)
    entry = next(e for e in ("f", "A.f", "Shell.f") if e in found)
    assert found[entry].kind is UnitKind.CHANGED
    assert all(u.noise != "docstring" for u in found.values())


def test_docstring_under_known_decorators_is_noise() -> None:
    before = "class A:\n    @staticmethod\n    def f() -> None:\n        'a'\n"
    found = units(before, before.replace("'a'", "'b'"))
    assert found["A.f"].noise == "docstring"
    before = "import contextlib\n@contextlib.contextmanager\ndef f() -> None:\n    'a'\n    yield\n"
    assert units(before, before.replace("'a'", "'b'"))["f"].noise == "docstring"


# A decorator is known by where its name comes from, not by the name alone: a project's own
# `cache` (or one of a star import, or a rebound `property`) may return the docstring.
@pytest.mark.parametrize("head", [
    "from pkg.helpers import cache\n",
    "from functools import *\nfrom functools import cache\n",
    "from functools import cache\ncache = print\n",
    "import helpers as functools\n",
])
def test_a_decorator_known_only_by_its_name_keeps_the_check(head: str) -> None:
    deco = "@functools.cache" if "as functools" in head else "@cache"
    before = f"{head}\n{deco}\ndef f(x: int) -> int:\n    'a'\n    return x\n"
    found = units(before, before.replace("'a'", "'b'"))
    assert found["f"].kind is UnitKind.CHANGED and found["f"].noise == "", found["f"].detail


def test_known_decorators_are_bound_where_python_keeps_them() -> None:
    for head, deco in (("from functools import cache\n", "@cache"),
                       ("import functools\n", "@functools.lru_cache(maxsize=2)"),
                       ("from functools import cache as memo\n", "@memo")):
        before = f"{head}\n{deco}\ndef f(x: int) -> int:\n    'a'\n    return x\n"
        assert units(before, before.replace("'a'", "'b'"))["f"].noise == "docstring", head
    prop = ("class A:\n    @property\n    def x(self) -> int:\n        return 1\n\n"
            "    @x.setter\n    def x(self, v: int) -> None:\n        'a'\n")
    assert units(prop, prop.replace("'a'", "'b'"))["A.x"].noise == "docstring"
    # `x` of the class is not a property: `x.setter` may be anything.
    other = prop.replace("    @property\n", "    @staticmethod\n")
    assert units(other, other.replace("'a'", "'b'"))["A.x"].noise == ""
    rebound = "property = print\n" + prop
    assert units(rebound, rebound.replace("'a'", "'b'"))["A.x"].noise == ""


def test_names_only_type_checking_imports_bind_do_not_change() -> None:
    head = ("from __future__ import annotations\nimport typing as t\n\n"
            "if t.TYPE_CHECKING:\n    from .a import A\n{extra}\n"
            "def f(x: A) -> A:\n    return (x, A)\n\n\ndef g() -> int:\n    return 1\n")
    # (`g` changes too, so the module is not noise as a whole.)
    found = units(head.format(extra=""), head.format(
        extra="    from .b import Self\n").replace("return 1", "return 2"))
    assert "f" not in found, found["f"].detail
    assert kinds(found)["g"] == "changed"
    # Bound at run time in one version, the name changes.
    moved = head.format(extra="").replace("if t.TYPE_CHECKING:\n    from .a import A\n",
                                          "from .a import A\n")
    assert kinds(units(head.format(extra=""), moved))["f"] == "changed"
    # A module that sets the flag runs the block.
    setter = "t.TYPE_CHECKING = True\n"
    found = units(setter + head.format(extra=""), setter + head.format(
        extra="    A = int\n"))
    assert kinds(found)["f"] == "changed"


# click 9a2d169: TypedDicts moved into `if t.TYPE_CHECKING: ... else: ...`, read by
# functions only in their annotations; their fields (`min`, `max`) are no module names.
INFO = ("{future}import typing as t\n\n{block}\n\n"
        "def f(x: int, y: Info | None = None) -> Info:\n    return min(x, 1)\n{tail}")
INFO_BEFORE = "class Info(t.TypedDict):\n    min: int\n"
INFO_AFTER = ("if t.TYPE_CHECKING:\n    class Info(t.TypedDict):\n        min: int\nelse:\n"
              "    class Info(t.TypedDict):\n        min: t.Any\n")


def test_a_name_read_only_in_postponed_annotations_does_not_change_a_function() -> None:
    postponed = "from __future__ import annotations\n\n"
    found = units(INFO.format(future=postponed, block=INFO_BEFORE, tail=""),
                  INFO.format(future=postponed, block=INFO_AFTER, tail=""))
    assert "f" not in found, found["f"].detail
    # Evaluated when `f` is defined, or read by code of the module: `f` reads it.
    for future, tail in (("", ""), (postponed, "\n\ndef g() -> object:\n"
                                              "    return t.get_type_hints(f)\n")):
        found = units(INFO.format(future=future, block=INFO_BEFORE, tail=tail),
                      INFO.format(future=future, block=INFO_AFTER, tail=tail))
        assert kinds(found)["f"] == "changed" and "`Info`" in found["f"].detail
        assert "`min`" not in found["f"].detail


def test_a_global_declared_in_a_nested_definition_is_a_module_name() -> None:
    before = ("import sys\n\nif sys.argv:\n    def setup() -> None:\n"
              "        global LIMIT\n        LIMIT = 1\n\n\n"
              "def f() -> int:\n    return LIMIT\n")
    found = units(before, before.replace("LIMIT = 1", "LIMIT = 2"))
    assert kinds(found)["f"] == "changed"


def test_functions_reading_a_changed_constant_are_changed_units() -> None:
    found = units(DOCS, DOCS.replace("LIMIT = 3", "LIMIT = 4"))
    assert kinds(found) == {MODULE_ENTRY: "outside-functions", "helper": "changed", "h": "changed"}
    assert "`LIMIT`" in found["helper"].detail and "`LIMIT`" in found["h"].detail
    assert "read a changed name are checked" in found[MODULE_ENTRY].detail


def test_a_changed_import_makes_its_readers_changed_units() -> None:
    before = "from math import floor as r\n\ndef f(x: float) -> int:\n    return r(x)\n\n" \
        "def g(x: int) -> int:\n    return x\n"
    found = units(before, before.replace("floor", "ceil"))
    assert kinds(found) == {MODULE_ENTRY: "outside-functions", "f": "changed"}


def test_doctest_directives_in_docstrings_do_not_block_the_noise_shortcut() -> None:
    before = "def f() -> int:\n    '''>>> f()  # doctest: +SKIP'''\n    return 1\n"
    found = units(before, before.replace("+SKIP", "+ELLIPSIS"))
    assert found["f"].noise == "docstring"


def test_a_docstring_read_through_getattr_blocks_the_shortcut() -> None:
    before = "def f() -> str:\n    'a'\n    return getattr(f, '__doc__')\n"
    found = units(before, before.replace("'a'", "'b'"))
    assert found["f"].noise == ""


def test_copying_an_unchanged_docstring_does_not_block_the_shortcut() -> None:
    # more-itertools: `batched.__doc__ = _batched.__doc__` while `convolve`'s docstring
    # changes: what is read is the docstring of `_batched`, the same in both versions.
    before = ("def _batched() -> None:\n    'doc of batched'\n\n"
              "def batched() -> None:\n    pass\n\n"
              "batched.__doc__ = _batched.__doc__\n\n"
              "def convolve() -> None:\n    'old words'\n")
    found = units(before, before.replace("old words", "new words"))
    assert found["convolve"].noise == "docstring"


@pytest.mark.parametrize(
    "code",
    [
        # The changed docstring is the one copied.
        "def g() -> None:\n    'old words'\n\nX = g.__doc__\n",
        # `g` is also bound otherwise (an assignment), so `g.__doc__` may be another's.
        "def g() -> None:\n    'old words'\n\ndef h() -> None:\n    'h'\n\n"
        "if X:\n    h = g\nY = h.__doc__\n",
        # A parameter named like an unchanged function may hold the changed one.
        "def g() -> None:\n    'old words'\n\ndef h() -> None:\n    'h'\n\n"
        "def k(h: object) -> object:\n    return h.__doc__\n",
        # A nested definition of the same name.
        "def h() -> None:\n    'h'\n\ndef k() -> object:\n"
        "    def h() -> None:\n        'old words'\n    return h.__doc__\n",
        # `help` prints docstrings.
        "def g() -> None:\n    'old words'\n\ndef k() -> None:\n    help(g)\n",
        # `__doc__` reached through a string.
        "def g() -> None:\n    'old words'\n\nX = getattr(g, '__doc__')\n",
        # ... or through a computed name.
        "def g() -> None:\n    'old words'\n\nX = getattr(g, '__d' + 'oc__')\n",
        # ... or through code given as text.
        "def g() -> None:\n    'old words'\n\nX = eval('g.__d' + 'oc__')\n",
        # The docstring of `h` is copied from `g`'s by `functools.wraps` or a decorator.
        "import functools\ndef g() -> None:\n    'old words'\n\n"
        "@functools.wraps(g)\ndef h() -> None:\n    'h'\n\nX = h.__doc__\n",
        "import functools\ndef g() -> None:\n    'old words'\n\n"
        "def h() -> None:\n    'h'\n\nfunctools.update_wrapper(h, g)\nX = h.__doc__\n",
        "def g() -> None:\n    'old words'\n\ndef same(f):\n    return g\n\n"
        "@same\ndef h() -> None:\n    'h'\n\nX = h.__doc__\n",
        # `inspect.getmembers` hands out `__doc__` too.
        "import inspect\ndef g() -> None:\n    'old words'\n\nX = inspect.getmembers(g)\n",
        # A namespace read by a computed key: the function type's `__doc__` descriptor.
        "def g() -> str:\n    'old words'\n"
        "    return type(g).__dict__['__d' + 'oc__'].__get__(g)\n",
        "class C:\n    'old words'\n\ndef k() -> object:\n    return vars(C).get('__d' + 'oc__')\n",
        # ... or wholesale.
        "class C:\n    'old words'\n\ndef k() -> object:\n    return list(vars(C).values())\n",
        # A lookup function handed to other code.
        "import functools\ndef g() -> None:\n    'old words'\n\n"
        "X = functools.reduce(getattr, ['__d' + 'oc__'], g)\n",
        # A format string that is not written out looks attributes up by name.
        "def g() -> str:\n    'old words'\n    return ('{0.__d' + 'oc__}').format(g)\n",
        "import string\ndef g() -> str:\n    'old words'\n"
        "    return string.Formatter().format('{0.__doc__}', g)\n",
        # A function called `_` that is not gettext's may return any format string.
        "def _(s: str) -> str:\n    return s.replace('x', '__doc__')\n"
        "def g() -> str:\n    'old words'\n    return _('{0.x}').format(g)\n",
        # unittest describes a test by its docstring's first line.
        "import unittest\ndef g() -> str:\n    'old words'\n"
        "    return unittest.FunctionTestCase(g).shortDescription()\n",
        # `+=` and `%=` read the docstring they write.
        "def g() -> int:\n    'old words %s'\n    g.__doc__ %= ()\n    return 1\n",
        # `N.__doc__` of an unchanged `N` is kept only while nothing can bind `N` otherwise.
        "def N() -> None:\n    'same'\n\ndef g() -> object:\n    'old words'\n"
        "    return N.__doc__\n\nglobals()['N'] = g\n",
        "import pkg.m as me\ndef N() -> None:\n    'same'\n\ndef g() -> object:\n"
        "    'old words'\n    return N.__doc__\n\nme.N = g\n",
        # The garbage collector hands out what a function refers to, its docstring too.
        "import gc\ndef g() -> list:\n    'old words'\n    return gc.get_referents(g)\n",
    ],
)
def test_reading_a_changed_docstring_still_blocks_the_shortcut(code: str) -> None:
    found = units(code, code.replace("old words", "new words"))
    assert found, "the docstring change is a unit"
    assert all(u.noise != "docstring" for u in found.values())


CLASS_DOC = ("def helper(n: int) -> int:\n    return n\n\n"
             "class C:\n    'old words'\n    def m(self) -> int:\n        return 1\n")


def test_a_class_docstring_next_to_other_changes_is_noise() -> None:
    # click 0f4738d: `PowerShellComplete`'s docstring, while `split_arg_string` changed.
    after = CLASS_DOC.replace("old words", "new words").replace("return n", "return n + 1")
    found = units(CLASS_DOC, after)
    assert found["C"].noise == CLASS_DOCSTRING and found["helper"].noise == ""


@pytest.mark.parametrize(
    "code",
    [
        # A class-level statement calls what changed: a module-level helper, ...
        CLASS_DOC + "    Y = helper(1)\n",
        # ... a function of the class body, ...
        CLASS_DOC + "    def mk(n: int) -> int:\n        return n\n    Y = mk(1)\n",
        # ... or a decorator or default of a method.
        CLASS_DOC + "    @helper\n    def k(self) -> None:\n        pass\n",
        CLASS_DOC + "    def k(self, n: int = helper(1)) -> None:\n        pass\n",
        # A base that changed.
        CLASS_DOC.replace("class C:", "class B:\n    def n(self) -> int:\n        return 0\n"
                          "\nclass C(B):"),
        # ... through a function that did not change, a lambda, or a namespace.
        "def via() -> int:\n    return helper(1)\n\n" + CLASS_DOC + "    Y = via()\n",
        CLASS_DOC + "    Y = (lambda: helper(1))()\n",
        CLASS_DOC + "    Y = globals()['helper'](1)\n",
        # A base that did not change, whose `__init_subclass__` calls what changed.
        CLASS_DOC.replace("class C:", "class B:\n    def __init_subclass__(cls) -> None:\n"
                          "        cls.tag = helper(1)\n\nclass C(B):"),
        # A constant a changed function sets (`global K`) or a list it fills.
        "K = 1\n\ndef setup() -> None:\n    global K\n    K = helper(1)\n\nsetup()\n\n"
        + CLASS_DOC + "    Y = K\n",
        "CACHE = []\n\ndef fill() -> None:\n    CACHE.append(helper(1))\n\nfill()\n\n"
        + CLASS_DOC + "    Y = CACHE\n",
    ],
)
def test_a_class_docstring_next_to_what_its_making_reads_is_not_noise(code: str) -> None:
    after = code.replace("old words", "new words").replace("return n", "return n + 1").replace(
        "return 0", "return 2")
    assert units(code, after)["C"].noise == ""


def test_a_changed_property_getter_before_its_setter_is_a_unit() -> None:
    # Units were keyed by the last definition of a name: the getter's change was lost.
    before = ("class C:\n    @property\n    def x(self) -> int:\n        return 1\n"
              "    @x.setter\n    def x(self, v: int) -> None:\n        pass\n")
    found = units(before, before.replace("return 1", "return 2"))
    assert kinds(found) == {"C.x": "changed"} and found["C.x"].noise == ""


def test_a_changed_definition_replaced_later_is_reported_not_compared() -> None:
    before = ("def f() -> int:\n    return 1\n\ng = f\n\n"
              "def f() -> int:\n    return 3\n")
    found = units(before, before.replace("return 1", "return 2"))
    assert kinds(found) == {"f": "changed"} and found["f"].noise == REPLACED


def test_unchanged_functions_of_a_moved_module_with_relative_imports_are_units() -> None:
    # `from .b import K` in pkg/sub/a.py reads pkg/sub/b.py, not pkg/b.py.
    code = src("from .b import K\n\ndef g() -> int:\n    return K\n")
    found = {u.entry: u for u in changed_units(FileChange("pkg/a.py", "pkg/sub/a.py", code, code))}
    assert found["g"].kind is UnitKind.CHANGED and "moved" in found["g"].detail
    plain = src("def g() -> int:\n    return 1\n")
    moved = {u.entry for u in changed_units(FileChange("pkg/a.py", "pkg/sub/a.py", plain, plain))}
    assert moved == {MODULE_ENTRY}


def test_overload_stubs_are_not_definitions_replaced_later() -> None:
    # click a1d8785 changed the `@t.overload` stubs of `edit`: for type checkers only.
    before = ("import typing as t\n@t.overload\ndef edit(x: int) -> int: ...\n"
              "@t.overload\ndef edit(x: str) -> str: ...\n"
              "def edit(x: t.Any) -> t.Any:\n    return x\n")
    after = before.replace("x: str) -> str", "x: bytes) -> bytes")
    assert all(u.noise != REPLACED for u in units(before, after).values())
    changed = units(before, after.replace("return x", "return x * 2"))
    assert kinds(changed) == {"edit": "changed"} and changed["edit"].noise == ""


def test_gettext_messages_written_out_keep_the_shortcut() -> None:
    # click formats its messages as `_("...").format(...)` with gettext's `_`.
    before = ("from gettext import gettext as _\nfrom gettext import ngettext\n"
              "def g(n: int) -> str:\n    'old words'\n"
              "    return _('{n} items').format(n=n) + ngettext('{n} a', '{n} b', n).format(n=n)\n")
    assert units(before, before.replace("old words", "new"))["g"].noise == "docstring"


def test_a_parameter_named_help_is_not_the_builtin() -> None:
    before = "def f(help: str) -> str:\n    'old words'\n    return help\n"
    assert units(before, before.replace("old words", "new"))["f"].noise == "docstring"


def test_adding_a_name_to_an_import_changes_only_that_name() -> None:
    before = "from math import floor\n\ndef f(x: float) -> int:\n    return floor(x)\n"
    after = before.replace("import floor", "import ceil, floor")
    assert kinds(units(before, after)) == {MODULE_ENTRY: "outside-functions"}


def test_a_moved_file_gets_no_noise_shortcut() -> None:
    before = "from . import a\n\ndef f() -> int:\n    'x'\n    return a.N\n"
    change = FileChange("pkg/m.py", "other/m.py", src(before), src(before.replace("'x'", "'y'")))
    found = {u.entry: u for u in changed_units(change)}
    assert found["f"].kind is UnitKind.CHANGED and found["f"].noise == ""


POSTPONED = "from __future__ import annotations\n"


def test_an_annotation_only_change_is_a_noise_change() -> None:
    # click a1d8785: `filenames: cabc.Iterable[str]` became `Iterable[str | PathLike[str]]`.
    before = POSTPONED + (
        "import os\nclass Editor:\n    def edit_files(self, filenames: list[str]) -> None:\n"
        "        'Open files.'\n        print(filenames)\n")
    after = before.replace("list[str]", "list[str | os.PathLike[str]]")
    found = units(before, after)
    assert kinds(found) == {"Editor.edit_files": "changed"}
    assert found["Editor.edit_files"].noise == "annotations"
    assert found["Editor.edit_files"].detail == "only the annotations changed"
    both = units(before, after.replace("'Open files.'", "'Open the files.'"))
    assert both["Editor.edit_files"].detail == "only the annotations and the docstring changed"


def test_string_annotations_need_no_postponed_evaluation() -> None:
    before = "def f(x: 'int') -> 'int':\n    return x\n"
    assert units(before, before.replace("'int'", "'str'"))["f"].noise == "annotations"


@pytest.mark.parametrize(
    ("before", "after"),
    [
        # Without postponed evaluation the annotation runs when the module does.
        ("def f(x: int) -> int:\n    return x\n", "def f(x: g()) -> int:\n    return x\n"),
        ("def f(x: int) -> int:\n    return x\n", "def f(x: str) -> int:\n    return x\n"),
        # The module reads annotations.
        (POSTPONED + "import typing\ndef f(x: int) -> int:\n    return x\n"
         "H = typing.get_type_hints(f)\n", None),
        (POSTPONED + "def f(x: int) -> int:\n    return x\nA = f.__annotations__\n", None),
        (POSTPONED + "import inspect\ndef f(x: int) -> int:\n    return x\n"
         "S = inspect.signature(f)\n", None),
        (POSTPONED + "def f(x: int) -> int:\n    return x\n"
         "A = getattr(f, '__annot' + 'ations__')\n", None),
        (POSTPONED + "def f(x: int) -> int:\n    return x\nA = eval('f.__annot' + 'ations__')\n",
         None),
        # singledispatch dispatches on a registered function's annotation.
        (POSTPONED + "import functools\n@functools.singledispatch\ndef g(x: object) -> str:\n"
         "    return 'o'\n@g.register\ndef f(x: int) -> str:\n    return 'i'\n", None),
        # inspect's Signature reads them.
        (POSTPONED + "import inspect\ndef f(x: int) -> str:\n"
         "    return str(inspect.Signature.from_callable(f))\n", None),
        # ... registered through a namespace read by a computed key.
        (POSTPONED + "import functools\n@functools.singledispatch\ndef g(x: object) -> str:\n"
         "    return 'o'\ndef f(x: int) -> str:\n    return 'i'\n"
         "g.__dict__['regi' + 'ster'](f)\n", None),
        # A decorator that may read them (a CLI or validation library).
        (POSTPONED + "@command()\ndef f(x: int) -> int:\n    return x\n", None),
        # A base class from elsewhere may read its subclasses' methods in __init_subclass__.
        (POSTPONED + "from lib import Base\nclass A(Base):\n    def f(self, x: int) -> int:\n"
         "        return x\n", None),
        (POSTPONED + "class A(metaclass=M):\n    def f(self, x: int) -> int:\n        return x\n",
         None),
        # A local base that a decorator may replace by anything.
        (POSTPONED + "@wrap\nclass B:\n    pass\nclass A(B):\n    def f(self, x: int) -> int:\n"
         "        return x\n", None),
        # A function inside a function: its annotations are evaluated at each call.
        ("def f() -> int:\n    def g(x: int) -> int:\n        return x\n    return g(1)\n", None),
        # What never runs still shapes the function as Python compiles it: a `yield` makes
        # a generator, a `:=` a local.
        ("def f() -> int:\n    x: int = 1\n    return 5\n",
         "def f() -> int:\n    x: (yield) = 1\n    return 5\n"),
        ("y = 5\ndef f() -> int:\n    x: int = 2\n    return y\n",
         "y = 5\ndef f() -> int:\n    x: (y := 1) = 2\n    return y\n"),
        (POSTPONED + "from typing import TYPE_CHECKING\ndef f() -> int:\n    return 5\n",
         POSTPONED + "from typing import TYPE_CHECKING\ndef f() -> int:\n"
         "    if TYPE_CHECKING:\n        yield\n    return 5\n"),
        # `p.a: T` loads `p`, which `except E as p` deleted.
        (POSTPONED + "def f(p: int) -> int:\n    try:\n        pass\n"
         "    except Exception as p:\n        pass\n    return 1\n",
         POSTPONED + "def f(p: int) -> int:\n    try:\n        pass\n"
         "    except Exception as p:\n        pass\n    p.a: int\n    return 1\n"),
        # The parser lets through what the compiler refuses.
        ("def f() -> int:\n    global x\n    x = 1\n    return x\n",
         "def f() -> int:\n    global x\n    x: int = 1\n    return x\n"),
        (POSTPONED + "def f(a: int) -> int:\n    return a\n",
         POSTPONED + "def f(a: (b := int)) -> int:\n    return a\n"),
        # A real change next to the annotation change.
        (POSTPONED + "def f(x: int) -> int:\n    return x\n",
         POSTPONED + "def f(x: str) -> int:\n    return x + 1\n"),
    ],
)
def test_not_only_annotations(before: str, after: str | None) -> None:
    if after is None:
        after = before.replace("x: int", "x: str")
    assert after != before
    found = units(before, after)
    assert found, "the change is a unit"
    assert all(u.noise not in ("annotations", "docstring", "formatting")
               for u in found.values()), found


def test_annotation_change_under_plain_bases_and_known_decorators_is_noise() -> None:
    before = POSTPONED + (
        "import typing as t\nclass B(Exception):\n    pass\n"
        "class A(B, t.Generic[T]):\n    @staticmethod\n    def f(x: int) -> int:\n"
        "        return x\n")
    found = units(before, before.replace("x: int", "x: str"))
    assert found["A.f"].noise == "annotations"


# click aef225d: instance attributes annotated in the class body instead of in `__init__`.
TYPED_BOX = POSTPONED + (
    "class Box:\n{notes}    def __init__(self, width: int) -> None:\n"
    "        self.width{local} = width\n        self.items{local_items} = []\n\n"
    "    def size(self) -> int:\n        return self.width\n")


def test_annotated_assignments_moved_to_the_class_body_are_noise() -> None:
    before = TYPED_BOX.format(notes="", local=": int", local_items=": list[int]")
    after = TYPED_BOX.format(notes="    width: int\n    items: list[int]\n\n", local="",
                             local_items="")
    found = units(before, after)
    assert found["Box.__init__"].noise == "annotations", found
    assert found["Box.__init__"].detail == "only the annotations changed"
    # Without postponed evaluation the class-level annotations run: not noise there, but a
    # local's annotation never runs.
    plain = units(before.replace(POSTPONED, ""), after.replace(POSTPONED, ""))
    assert all(u.noise != "annotations" for u in plain.values()), plain
    local_only = units(before.replace(POSTPONED, ""),
                       before.replace(POSTPONED, "").replace("self.width: int", "self.width"))
    assert local_only["Box.__init__"].noise == "annotations", local_only


CLASS_NOTES_READ = [
    # `__annotations__` of the class is read, or handed out with the rest of its namespace.
    "B = vars(Box)\n",
    "B = Box.__dict__\n",
    "B = dir(Box)\n",
    "import typing\nH = typing.get_type_hints(Box)\n",
]


@pytest.mark.parametrize("tail", CLASS_NOTES_READ)
def test_class_annotations_that_code_may_read_are_not_noise(tail: str) -> None:
    before = TYPED_BOX.format(notes="", local=": int", local_items="") + tail
    after = TYPED_BOX.format(notes="    width: int\n\n", local="", local_items="") + tail
    found = units(before, after)
    assert all(u.noise != "annotations" for u in found.values()), found


@pytest.mark.parametrize(("head", "deco", "bases"), [
    # Each makes something of a class's annotations.
    ("import dataclasses\n", "@dataclasses.dataclass\n", ""),
    ("import typing\n", "@typing.runtime_checkable\n", "(typing.Protocol)"),
    ("import typing\n", "", "(typing.NamedTuple)"),
    ("import enum\n", "", "(enum.Enum)"),
    ("", "", "(metaclass=Meta)"),
])
def test_class_annotations_of_classes_that_read_them_are_not_noise(
        head: str, deco: str, bases: str) -> None:
    box = TYPED_BOX.replace("class Box:", deco + "class Box" + bases + ":").replace(
        POSTPONED, POSTPONED + head)
    # `__init__` changes too (a local's annotation only), so its verdict hangs on the class.
    before = box.format(notes="    depth: int = 0\n", local=": int", local_items="")
    after = box.format(notes="    depth: str = 0\n", local="", local_items="")
    found = units(before, after)
    assert "Box.__init__" in found
    assert all(u.noise != "annotations" for u in found.values()), found
    # The same change in a plain class is noise.
    plain = TYPED_BOX.format(notes="    depth: int = 0\n", local=": int", local_items="")
    noisy = units(plain, plain.replace("depth: int", "depth: str").replace(
        "self.width: int", "self.width"))
    assert noisy["Box.__init__"].noise == "annotations", noisy


def test_a_bare_local_annotation_is_not_noise() -> None:
    # `x: int` alone makes `x` local to the function: removing it reads the global.
    before = "x = 1\ndef f():\n    x: int\n    return x\n"
    after = "x = 1\ndef f():\n    return x\n"
    found = units(before, after)
    assert found["f"].noise == "", found


def test_type_checking_imports_and_bare_attribute_annotations_are_noise() -> None:
    before = POSTPONED + (
        "import typing as t\nimport abc\n\nclass Box(abc.ABC):\n"
        "    def __init__(self, width: int) -> None:\n        self.width: int\n"
        "        self.width = width\n\n    def me(self) -> 'Box':\n        return self\n")
    after = POSTPONED + (
        "import typing as t\nimport abc\nif t.TYPE_CHECKING:\n    from x import Self\n\n"
        "class Box(abc.ABC):\n    width: int\n\n"
        "    def __init__(self, width: int) -> None:\n        self.width = width\n\n"
        "    def me(self) -> Self:\n        return self\n")
    found = units(before, after)
    assert found["Box.__init__"].noise == "annotations", found
    assert found["Box.me"].noise == "annotations", found
    # Code that runs in the block, or a bare annotation of a name that may be unbound
    # (it raises), is no annotation.
    runs = after.replace("if t.TYPE_CHECKING:", "if True:")
    assert all(u.noise != "annotations" for u in units(before, runs).values())
    for setter in ("t.TYPE_CHECKING = True\n", "setattr(t, 'TYPE_CHECKING', True)\n"):
        forced = after.replace("import abc\n", "import abc\n" + setter)
        assert all(u.noise != "annotations" for u in units(
            before.replace("import abc\n", "import abc\n" + setter), forced).values())
    unbound = before.replace("self.width: int\n", "other.width: int\n")
    assert units(before, unbound)["Box.__init__"].noise == "", units(before, unbound)


def test_an_import_by_literal_name_does_not_block_the_docstring_shortcut() -> None:
    # more-itertools imports `concurrent.futures` lazily with `__import__`.
    code = "def f(x):\n    '{doc}'\n    return x\n\ndef g():\n    return {imp}.futures\n"
    literal = "__import__('concurrent.futures')"
    found = units(code.format(doc="a", imp=literal), code.format(doc="b", imp=literal))
    assert found["f"].noise == "docstring", found
    # A name computed, or more arguments, may import anything: `__import__` runs code.
    for imp in ("__import__('concurrent.' + n)", "__import__(n)",
                "__import__('x', globals())"):
        found = units(code.format(doc="a", imp=imp), code.format(doc="b", imp=imp))
        assert found["f"].noise == "", (imp, found)


def test_class_and_module_units_of_a_noise_change_are_noise_too() -> None:
    before = TYPED_BOX.format(notes="", local=": int", local_items="").replace(
        POSTPONED, POSTPONED + "import typing\n")
    after = TYPED_BOX.format(notes="    width: int\n\n", local="", local_items="").replace(
        POSTPONED, POSTPONED + "import typing\nif typing.TYPE_CHECKING:\n    import os\n")
    found = units(before, after)
    assert found["Box"].kind is UnitKind.OUTSIDE_FUNCTIONS
    assert found["Box"].noise == "annotations", found
    assert found[MODULE_ENTRY].noise == "annotations", found
    # A base from elsewhere may read the class's own annotations: not noise.
    based = units(before.replace("class Box:", "class Box(Base):"),
                  after.replace("class Box:", "class Box(Base):"))
    assert based["Box"].noise == "", based
    # A real change outside functions is no noise.
    real = units(before, after.replace("import os", "import os\nX = 1"))
    assert real[MODULE_ENTRY].noise == "", real
