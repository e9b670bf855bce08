"""Code that reads a docstring under no word the docstring shortcut knew: never noise."""

from __future__ import annotations

import textwrap

import pytest

from veribot.checks.project.units import ChangedUnit, FileChange, changed_units


def units(before: str, after: str, path: str = "pkg/mod.py") -> dict[str, ChangedUnit]:
    b = textwrap.dedent(before).lstrip().encode()
    a = textwrap.dedent(after).lstrip().encode()
    return {u.entry: u for u in changed_units(FileChange(path, path, b, a))}


def docstring_changed(code: str) -> dict[str, ChangedUnit]:
    """The units of ``code`` (with ``OLD`` in a docstring) against itself with ``NEW``."""
    return units(code, code.replace("OLD", "NEW"))


def assert_checked(code: str, entry: str = "g") -> None:
    found = docstring_changed(code)
    assert entry in found, found
    assert found[entry].noise not in ("docstring", "annotations"), found[entry]


# 11: a class pattern's keyword names are attribute reads.
@pytest.mark.parametrize("pattern", ["object(__doc__=d)", "type(g)(__doc__=d)".replace(
    "type(g)", "C"), "object(__code__=d)"])
def test_a_match_class_pattern_reads_its_keyword_attributes(pattern: str) -> None:
    assert_checked(f"""
        class C:
            pass
        def g():
            'OLD'
        def f():
            match g:
                case {pattern}:
                    return d
    """)


def test_a_match_class_pattern_getting_a_lookup_function_by_name() -> None:
    assert_checked("""
        import builtins
        def g():
            'OLD'
        def f():
            match builtins:
                case object(getattr=lookup):
                    return lookup(g, "__d" + "oc__")
    """)


# 12: a lookup function under another name.
@pytest.mark.parametrize("imports, call", [
    ("from builtins import getattr as lookup", 'lookup(g, "__d" + "oc__")'),
    ("from operator import attrgetter as ag", 'ag("__d" + "oc__")(g)'),
    ("from inspect import getattr_static as gs", 'gs(g, "__d" + "oc__")'),
    ("from builtins import vars as v", 'v(C)["__d" + "oc__"]'),
    ("from builtins import eval as run", 'run("g.__d" + "oc__")'),
    ("import builtins", 'getattr(builtins, "getattr")(g, "__d" + "oc__")'),
    ("import builtins", 'vars(builtins)["getattr"](g, "__d" + "oc__")'),
])
def test_a_lookup_function_under_another_name(imports: str, call: str) -> None:
    assert_checked(f"""
        {imports}
        class C:
            'OLD class'
        def g():
            'OLD'
        def f():
            return {call}
    """)


# 13: code objects reached without `__code__`.
@pytest.mark.parametrize("read", [
    "gen().gi_code.co_consts[0]",
    "sys._xx().f_code.co_consts[0]".replace("sys._xx()", "frame"),
    "dis.code_info(gen)",
])
def test_a_code_object_reached_without_dunder_code(read: str) -> None:
    assert_checked(f"""
        import dis
        def gen():
            'OLD'
            yield 1
        def f(frame):
            return {read}
    """, "gen")


def test_a_generator_code_object_without_dis() -> None:
    assert_checked("""
        def gen():
            'OLD'
            yield 1
        def f():
            return gen().gi_code.co_consts[0]
    """, "gen")


# 14: a function attached to a class whose base may read its members' docstrings.
def test_cmd_help_of_a_function_attached_after_the_class() -> None:
    assert_checked("""
        import cmd
        def do_greet(self, arg):
            'OLD'
        class Shell(cmd.Cmd):
            pass
        Shell.do_greet = do_greet
    """, "do_greet")


@pytest.mark.parametrize("attach", [
    "Shell.do_greet = do_greet",
    "setattr(Shell, 'do_greet', do_greet)",
    "def make():\n    s = Shell()\n    s.do_greet = do_greet\n    return s",
])
def test_a_function_attached_to_a_class_with_a_base_from_elsewhere(attach: str) -> None:
    code = textwrap.dedent("""
        from framework import Base
        def do_greet(self, arg):
            'OLD'
        class Shell(Base):
            pass
    """) + attach + "\n"
    assert_checked(code, "do_greet")


def test_a_function_bound_in_the_body_of_a_class_with_a_base_from_elsewhere() -> None:
    assert_checked("""
        from framework import Base
        def greet(self, arg):
            'OLD'
        class Shell(Base):
            do_greet = greet
    """, "greet")
    assert_checked("""
        from framework import Base
        def greet(self, arg):
            'OLD'
        Shell = type("Shell", (Base,), {"do_greet": greet})
    """.replace("greet(self", "g(self").replace('": greet', '": g'))


def test_self_of_a_plain_base_of_an_open_class_is_not_exempt() -> None:
    assert_checked("""
        from framework import Base
        def g(self, arg):
            'OLD'
        class Mixin:
            def attach(self):
                self.do_greet = g
        class Shell(Mixin, Base):
            pass
    """)


def test_plain_classes_writing_their_own_attributes_keep_the_shortcut() -> None:
    found = docstring_changed("""
        import enum
        class Color(enum.Enum):
            RED = enum.auto()
            BLUE = 2
        class Box:
            def __init__(self, x):
                self.x = x
                setattr(self, "y", x)
        def g():
            'OLD'
            return Box(1).x
    """)
    assert found["g"].noise == "docstring"


# 15: a message catalog bound by the module may translate a message to any format.
def test_a_gettext_message_where_the_module_binds_a_catalog() -> None:
    assert_checked("""
        import gettext
        from gettext import gettext as _
        gettext.bindtextdomain("messages", "locale")
        def g():
            'OLD'
        def f():
            return _("{f.__name__}").format(f=g)
    """)


def test_a_gettext_message_without_a_catalog_keeps_the_shortcut() -> None:
    found = docstring_changed("""
        from gettext import gettext as _
        def g(n):
            'OLD'
            return _("{n} items").format(n=n)
    """)
    assert found["g"].noise == "docstring"


# secondary 01: only typing's `overload` makes a stub.
def test_a_decorator_named_overload_not_typings_keeps_the_definition() -> None:
    code = """
        REG = []
        def overload(fn):
            REG.append(fn)
            return fn
        @overload
        def f(x):
            return {value}
        def f(x):
            return REG[0](x)
        def h(x):
            return f(x)
    """
    found = units(code.format(value=1), code.format(value=2))
    assert found, "the changed definition is not dropped"
    assert all(u.noise not in ("docstring", "annotations") for u in found.values())


def test_typings_overload_under_an_alias_is_a_stub() -> None:
    code = """
        import typing as t
        @t.overload
        def f(x: int) -> int: ...
        @t.overload
        def f(x: str) -> str: ...
        def f(x):
            return x
    """
    found = units(code, code.replace("x: str) -> str", "x: bytes) -> bytes"))
    assert all(u.noise != "replaced" for u in found.values())


def test_self_of_a_class_with_a_base_from_elsewhere_is_not_exempt() -> None:
    assert_checked("""
        from framework import Base
        def g(self, arg):
            'OLD'
        class Shell(Base):
            def __init__(self):
                self.do_greet = g
    """)


def test_stdlib_bases_that_read_no_docstrings_keep_the_shortcut() -> None:
    found = docstring_changed("""
        import io
        import typing as t
        from collections import abc
        class Stream(io.TextIOWrapper):
            def __init__(self, stream, color):
                super().__init__(stream)
                self.color = color
        class View(abc.Sequence, t.Generic[t.Any]):
            def __init__(self, items):
                self._items = items
        def h(t):
            return t
        def g():
            'OLD'
    """)
    assert found["g"].noise == "docstring"
