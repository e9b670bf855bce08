"""The relational check on methods of real classes: overload stubs, `with` items, classes
that changed elsewhere.

Each pair that must verify goes through ``relational.check`` (the sandbox loads both
modules); each pair an attacker writes to look the same must not verify.
"""

from __future__ import annotations

import ast

import pytest

from veribot.checks.equivalence import Budget, check_pair
from veribot.checks.relational import check as relational
from veribot.checks.verdict import Verdict


def verified(before: str, after: str, entry: str) -> bool:
    result = relational.check(before, after, ast.parse(before), ast.parse(after), entry,
                              relational.Limits(), relative=True)
    assert result is None or result.verdict is Verdict.VERIFIED
    return result is not None


def refusal(before: str, after: str, entry: str) -> str:
    why: list[str] = []
    assert relational.check(before, after, ast.parse(before), ast.parse(after), entry,
                            relational.Limits(), refusal=why, relative=True) is None
    return " ".join(why)


# ----------------------------------------------------------------------------- overload stubs

STUBS = """\
{imports}
class C:
    {deco}
    def m(self, x: int) -> int: ...
    {deco}
    def m(self, x: str) -> str:
        '''A stub may carry a docstring.'''
    def m(self, x):
{body}
"""
EXTRACTED = "        y = self.g(x)\n        return y.strip()"
INLINED = "        return self.g(x).strip()"


@pytest.mark.parametrize(("imports", "deco"), [
    ("import typing as t", "@t.overload"),
    ("import typing", "@typing.overload"),
    ("from typing import overload", "@overload"),
    ("from typing import overload as ov", "@ov"),
])
def test_overload_stubs_before_the_method_are_replaced_by_it(imports: str, deco: str) -> None:
    before = STUBS.format(imports=imports, deco=deco, body=EXTRACTED)
    after = STUBS.format(imports=imports, deco=deco, body=INLINED)
    assert verified(before, after, "C.m")


def test_overload_stubs_of_a_module_function_are_replaced_by_it() -> None:
    src = ("from typing import overload\n@overload\ndef f(x: int) -> int: ...\n"
           "@overload\ndef f(x: str) -> str: ...\ndef f(x):\n{body}\n")
    body_a, body_b = "    y = x.strip()\n    return y.upper()", "    return x.strip().upper()"
    assert verified(src.format(body=body_a), src.format(body=body_b), "f")


def test_a_stub_decorated_by_a_local_function_named_overload_is_a_binding() -> None:
    imports = "def overload(f):\n    return f"
    before = STUBS.format(imports=imports, deco="@overload", body=EXTRACTED)
    after = STUBS.format(imports=imports, deco="@overload", body=INLINED)
    assert "bound more than once" in refusal(before, after, "C.m")


def test_typing_overload_rebound_in_the_class_is_not_typing_s() -> None:
    src = ("from typing import overload\nclass C:\n    overload = staticmethod(lambda f: f)\n"
           "    @overload\n    def m(self, x: int) -> int: ...\n    def m(self, x):\n{body}\n")
    assert "bound more than once" in refusal(src.format(body=EXTRACTED),
                                             src.format(body=INLINED), "C.m")


def test_a_stub_after_the_method_is_what_the_name_holds() -> None:
    src = ("import typing as t\nclass C:\n    def m(self, x):\n{body}\n"
           "    @t.overload\n    def m(self, x: int) -> int: ...\n")
    before, after = src.format(body=EXTRACTED), src.format(body="        return x")
    assert "bound more than once" in refusal(before, after, "C.m")
    mod = ("import typing as t\ndef f(x):\n{body}\n@t.overload\ndef f(x: int) -> int: ...\n")
    assert not verified(mod.format(body="    return x"), mod.format(body="    return 1"), "f")


def test_changed_stubs_are_a_changed_class() -> None:
    before = STUBS.format(imports="import typing as t", deco="@t.overload", body=EXTRACTED)
    after = before.replace("x: int) -> int", "x: float) -> float").replace(
        EXTRACTED, INLINED)
    assert not verified(before, after, "C.m")


# ----------------------------------------------------------------------------- with items


def test_with_several_items_is_nested_with_in_a_method() -> None:
    src = ("class C:\n    def m(self, a, b, g):\n{body}\n")
    nested = ("        with a(self):\n            with b as y:\n                return g(y)")
    combined = "        with a(self), b as y:\n            return g(y)"
    assert verified(src.format(body=nested), src.format(body=combined), "C.m")


def test_three_items_are_three_nested_withs() -> None:
    nested = ("def f(a, b, c):\n    with a:\n        with b:\n            with c as z:\n"
              "                return z\n")
    combined = "def f(a, b, c):\n    with a, b, c as z:\n        return z\n"
    assert verified(nested, combined, "f")
    half = "def f(a, b, c):\n    with a:\n        with b, c as z:\n            return z\n"
    assert verified(half, combined, "f")


@pytest.mark.parametrize(("before", "after"), [
    # The items' order is the order of entry.
    ("def f(a, b, g):\n    with a, b:\n        return g()\n",
     "def f(a, b, g):\n    with b, a:\n        return g()\n"),
    # The second manager is made inside the first.
    ("def f(a, b, g):\n    with a(), b():\n        return g()\n",
     "def f(a, b, g):\n    m = b()\n    with a(), m:\n        return g()\n"),
    # One with after the other is not one inside the other.
    ("def f(a, b, g):\n    with a, b:\n        return g()\n",
     "def f(a, b, g):\n    with a:\n        pass\n    with b:\n        return g()\n"),
    # The body stays inside both.
    ("def f(a, b, g):\n    with a, b:\n        r = g()\n    return r\n",
     "def f(a, b, g):\n    with a:\n        with b:\n            pass\n        r = g()\n"
     "    return r\n"),
])
def test_with_items_reordered_or_split_are_not_verified(before: str, after: str) -> None:
    assert not verified(before, after, "f")


def test_a_renamed_local_read_in_a_second_with_item_is_guarded() -> None:
    """`b(x)` in `with a, b(x):` runs inside `a`, whose `__exit__` sees the NameError."""
    before = "def f(a, b):\n    with a, b(x) as y:\n        return y\n    x = 1\n"
    after = "def f(a, b):\n    with a, b(z) as y:\n        return y\n    z = 1\n"
    assert not verified(before, after, "f")


# ----------------------------------------------------------------------------- a changed class

KLASS = """\
from __future__ import annotations
class Base:
    def run(self):
        return self.step()
class C(Base):
    x: int
    def step(self):
        return 1
    def m(self, g):
{body}
    def other(self):
        return 2
"""
M_BEFORE = "        y = g(self)\n        return y.strip()"
M_AFTER = "        return g(self).strip()"


def pair(*edits: tuple[str, str], header: str = "") -> tuple[str, str]:
    before, after = header + KLASS.format(body=M_BEFORE), header + KLASS.format(body=M_AFTER)
    for old, new in edits:
        assert old in after, old
        after = after.replace(old, new)
    return before, after


OTHER = ("def other(self):\n        return 2", "def other(self):\n        return 3")


@pytest.mark.parametrize("edits", [
    [OTHER],  # another method's body
    [("    x: int\n", "    x: str\n    z: int\n")],  # bare annotations
    [("    def other", "    @staticmethod\n    def new(v):\n        return v\n    def other")],
    # A constructor runs only when an object is made, which nothing the method runs does.
    [("def other(self):\n        return 2", "def __init__(self):\n        self.a = 1")],
    [("    def other(self):\n        return 2\n", "")],  # a method removed
    [OTHER, ("    x: int\n", "")],
    [("    def other(self)", "    @property\n    def other(self)")],  # now a property
    [OTHER, ("def other(self)", "def __other(self)")],  # a private method (then mangled)
    # An annotation that becomes a property (a bare annotation binds nothing).
    [("    x: int\n", "    @property\n    def x(self):\n        return 0\n")],
    # An annotated class attribute whose annotation alone changed.
    [("    x: int\n", "    x: str = 'a'\n"), ("    x: int\n", "    x: int = 'a'\n")],
])
def test_a_method_whose_class_changed_where_it_cannot_reach(
    edits: list[tuple[str, str]],
) -> None:
    before, after = pair(*edits[:1])
    for old, new in edits[1:]:  # the same edit in both, then what changes
        before, after = before.replace(old, new), after.replace(old, new)
    assert verified(before, after, "C.m")


def test_the_verdict_names_the_members_it_assumes_unreached() -> None:
    before, after = pair(OTHER, ("    x: int\n", "    x: str\n"))
    result = relational.check(before, after, ast.parse(before), ast.parse(after), "C.m",
                              relational.Limits(), relative=True)
    assert result is not None
    assumed = " ".join(result.assumptions)
    assert "differs in `other`" in assumed and "annotations of the class `C`" in assumed


@pytest.mark.parametrize(("edits", "why"), [
    # A method the entry calls (through a method of the base class it calls).
    ([("return 1", "return 5")], "not verified the same way"),
    # Dunders run by themselves (`==`, `hash`, construction).
    ([("def other(self):\n        return 2", "def __eq__(self, o):\n        return True")],
     "`__eq__`"),
    ([("def other(self):\n        return 2", "def __getattr__(self, n):\n        return 3")],
     "`__getattr__`"),
    # A method decorated otherwise, or a property with a setter (which reads its name).
    ([("    def other(self)", "    @functools.cache\n    def other(self)")],
     "changed other than"),
    ([("    def other(self):\n        return 2", "    @property\n    def other(self):\n"
       "        return 2\n    @other.setter\n    def other(self, v):\n        pass")],
     "changed other than"),
    # A class attribute the method could read through `self`.
    ([("    x: int\n", "    x: int = 2\n")], "changed other than"),
    ([("    x: int\n", "    x = 2\n")], "changed other than"),
    ([("    x: int\n", "    x: int = 2\n"), ("    x: int\n", "    x: int = 1\n")],
     "changed other than"),
    # A changed base, decorator, keyword or `__slots__`.
    ([("class C(Base)", "class C(Base, object)")], "decorators, bases or keywords"),
    ([OTHER, ("class C(Base):", "@staticmethod\nclass C(Base):")],
     "decorators, bases or keywords"),
    ([("    x: int\n", "    __slots__ = ()\n    x: int\n")], "changed other than"),
    # A member read at class level (an alias made from it).
    ([OTHER, ("    def m(self", "    alias = other\n    def m(self")], "changed other than"),
    # `keys` is called by `dict(x)` and `**x` without being named.
    ([("def other(self)", "def keys(self)")], "`keys`"),
])
def test_a_changed_class_the_method_may_see_is_not_verified(
    edits: list[tuple[str, str]], why: str
) -> None:
    before, after = pair(*edits[:1])
    for old, new in edits[1:]:  # the same edit in `before`
        before = before.replace(old, new)
    reason = refusal(before, after, "C.m")
    # A statement of the class body that runs otherwise is found first where it is one.
    assert why in reason or (why == "changed other than" and "runs when it is made" in reason)


def test_the_verdict_names_a_changed_constructor_it_assumes_unused() -> None:
    before, after = pair(("def other(self):\n        return 2",
                          "def __init__(self):\n        self.a = 1"))
    result = relational.check(before, after, ast.parse(before), ast.parse(after), "C.m",
                              relational.Limits(), relative=True)
    assert result is not None
    assert any("constructor of the class `C` changed" in a for a in result.assumptions)


@pytest.mark.parametrize(("made", "why"), [
    ("return C().step()", "names it"),
    ("return type(self)().step()", "uses `type`"),
    ("return self.__class__().step()", "uses `__class__`"),
    ("return D().step()", "names it"),  # a subclass made runs the changed constructor
])
def test_a_changed_constructor_where_the_method_may_make_an_object(made: str,
                                                                   why: str) -> None:
    before, after = pair(("def other(self):\n        return 2",
                          "def __init__(self):\n        self.a = 1"))
    before = before.replace("return self.step()", made) + "class D(C):\n    pass\n"
    after = after.replace("return self.step()", made) + "class D(C):\n    pass\n"
    assert why in refusal(before, after, "C.m")


def test_a_method_read_by_name_elsewhere_in_the_class_is_reached() -> None:
    # `run` (which `m` may reach through `self`) names `other` by a string.
    before, after = pair(OTHER, ("return self.step()", "return getattr(self, 'other')()"))
    before = before.replace("return self.step()", "return getattr(self, 'other')()")
    assert "not verified the same way" in refusal(before, after, "C.m")
    # ... or by a name it computes.
    comp = "return getattr(self, 'oth' + 'er')()"
    before, after = pair(OTHER, ("return self.step()", comp))
    why = refusal(before.replace("return self.step()", comp), after, "C.m")
    assert "uses `getattr`" in why or "looked up by a computed name" in why
    # ... or through the namespace.
    ns = "return self.__dict__"
    before, after = pair(OTHER, ("return self.step()", ns))
    assert not verified(before.replace("return self.step()", ns), after, "C.m")


def test_a_private_method_read_by_its_mangled_name_is_reached() -> None:
    mangled = ("def other(self):\n        return 2",
               "def __other(self):\n        return 2\n    def run2(self):\n"
               "        return getattr(self, '_C__other')")
    before, after = pair(mangled)
    before = before.replace(*mangled)
    after = after.replace("return 2\n    def run2", "return 3\n    def run2")
    assert "not verified the same way" in refusal(before, after, "C.m")


def test_the_method_reading_a_changed_method_on_another_object_is_refused() -> None:
    body = "        y = g(self).other()\n        return y"
    before = KLASS.format(body=body)
    after = KLASS.format(body="        return g(self).other()").replace(*OTHER)
    assert "not verified the same way" in refusal(before, after, "C.m")
    sup = "        y = super().other()\n        return y"
    before = KLASS.format(body=sup)
    after = KLASS.format(body="        return super().other()").replace(*OTHER)
    assert not verified(before, after, "C.m")


@pytest.mark.parametrize("reader", [
    "import dataclasses\n", "import typing\nHINTS = typing.get_type_hints\n",
    "def show(c):\n    return c.__annotations__\n",
])
def test_changed_annotations_that_code_of_the_module_may_read(reader: str) -> None:
    before, after = pair(("    x: int\n", "    x: str\n"))
    before, after = before + reader, after + reader
    assert not verified(before, after, "C.m")


def test_changed_annotations_evaluated_when_the_class_is_made() -> None:
    before, after = pair(("    x: int\n", "    x: print('made')\n"))
    drop = "from __future__ import annotations\n"
    reason = refusal(before.replace(drop, ""), after.replace(drop, ""), "C.m")
    assert "evaluated when it is made" in reason or "runs when it is made" in reason


def test_a_dataclass_whose_annotations_changed_is_not_verified() -> None:
    header = "import dataclasses as dc\n"
    before, after = pair(("    x: int\n", "    x: int\n    y: int\n"))
    before = before.replace("class C(Base):", "@dc.dataclass\nclass C(Base):")
    after = after.replace("class C(Base):", "@dc.dataclass\nclass C(Base):")
    assert not verified(header + before, header + after, "C.m")


def test_a_class_it_reads_changed_where_the_method_reaches() -> None:
    """Another class of the module, read by name, follows the same rules as its own."""
    before, after = pair()
    d = "class D:\n    def k(self):\n        return {}\n    def j(self):\n        return {}\n"
    before = before.replace("return 1", "return D().k()") + d.format(1, 1)
    # `D.j` changed: `m` reaches `D` (through `step`), but not `j`.
    assert verified(before, after.replace("return 1", "return D().k()") + d.format(1, 2),
                    "C.m")
    # `D.k` changed, and `m` may call it: relative to it, which does not verify.
    after = after.replace("return 1", "return D().k()") + d.format(2, 1)
    assert "not verified the same way" in refusal(before, after, "C.m")
    result = check_pair(before, after, "C.m", budget=Budget(timeout_s=6, search=False))
    assert result.verdict is not Verdict.VERIFIED, result
    # A dunder of `D` changed.
    dunder = d.format(1, 1).replace("def j(self)", "def __hash__(self)")
    assert "`__hash__`" in refusal(before, after.replace(d.format(2, 1), dunder), "C.m")


@pytest.mark.parametrize("reader", [
    "'{0.other}'.format(self)",  # a format string reads attributes by name
    "self._C__other",  # a private name, mangled by hand
    "print(self, file=self)",  # `print` calls `write` on its file
])
def test_names_read_without_an_attribute_node_are_reached(reader: str) -> None:
    before = KLASS.format(body=f"        y = {reader}\n        return y")
    after = KLASS.format(body=f"        return {reader}")
    edits = {"'{0.other}'.format(self)": OTHER,
             "self._C__other": ("def other(self):\n        return 2",
                                "def __other(self):\n        return 3"),
             "print(self, file=self)": ("def other(self):\n        return 2",
                                        "def write(self, s):\n        return 3")}[reader]
    if reader == "self._C__other":
        before = before.replace(edits[0], "def __other(self):\n        return 2")
    assert not verified(before, after.replace(*edits), "C.m")


def test_a_class_pattern_may_read_a_changed_member() -> None:
    matcher = ("    def step(self):\n        match self:\n            case C(other=v):\n"
               "                return v\n        return 1\n")
    before, after = pair(OTHER)
    before = before.replace("    def step(self):\n        return 1\n", matcher)
    after = after.replace("    def step(self):\n        return 1\n", matcher)
    assert not verified(before, after, "C.m")


# A method the entry reaches, changed in both versions: the entry is relative to it.
REACHED = """\
class C:
    def helper(self, v):
{helper}
    def m(self, x):
{body}
"""
HELPER = "        w = v.strip()\n        return w"


@pytest.mark.parametrize("helper", [HELPER, "        return v.strip()"])
def test_a_reached_method_that_changed_as_the_same_calls_carries_the_caller(
    helper: str,
) -> None:
    before = REACHED.format(helper=HELPER, body="        y = self.helper(x)\n        return y")
    after = REACHED.format(helper=helper, body="        return self.helper(x)")
    result = check_pair(before, after, "C.m", budget=Budget(timeout_s=6, search=False))
    assert result.verdict is Verdict.VERIFIED, result
    if helper != HELPER:
        assert any("`C.helper` changed too and was verified" in a
                   for a in result.assumptions), result.assumptions


@pytest.mark.parametrize("helper", [
    "        return v.lstrip()",  # another call
    "        return v",  # one call fewer
    "        return v.strip().strip()",  # one call more
])
def test_a_reached_method_that_changed_otherwise_leaves_the_caller_unverified(
    helper: str,
) -> None:
    before = REACHED.format(helper=HELPER, body="        y = self.helper(x)\n        return y")
    after = REACHED.format(helper=helper, body="        return self.helper(x)")
    result = check_pair(before, after, "C.m", budget=Budget(timeout_s=6, search=False))
    assert result.verdict is not Verdict.VERIFIED, result


def test_a_reached_method_added_in_one_version_is_refused() -> None:
    base = "class Base:\n    def helper(self, v):\n        return v\n"
    before = base + "class C(Base):\n    def m(self, x):\n        y = self.helper(x)\n" \
        "        return y\n"
    after = base + ("class C(Base):\n    def helper(self, v):\n        return v.strip()\n"
                    "    def m(self, x):\n        return self.helper(x)\n")
    assert "changed other than as a method both versions define" in refusal(before, after, "C.m")


# ----------------------------------------------------------------------------- names a class reads

ANNOTATED = """\
{future}
Foo = {foo}
def register(f):
    return f
class C:
    {deco}
    def k(self, x: Foo) -> Foo:
        return x
    def m(self, g):
{body}
"""


def annotated(future: bool, deco: str, foo_after: int = 2) -> tuple[str, str]:
    head = "from __future__ import annotations" if future else ""
    before = ANNOTATED.format(future=head, foo=1, deco=deco, body=M_BEFORE)
    after = ANNOTATED.format(future=head, foo=foo_after, deco=deco, body=M_AFTER)
    return before, after


def test_names_in_annotations_bound_only_for_type_checkers_are_not_read() -> None:
    """`if TYPE_CHECKING:` binds nothing when the code runs: whoever evaluates the
    annotation (`get_type_hints`) fails the same way in both versions."""
    head = "import typing\nif typing.TYPE_CHECKING:\n    from fractions import Fraction as Foo\n"
    for deco in ("", "@register"):
        before, after = annotated(future=True, deco=deco)
        before = before.replace("Foo = 1\n", head)
        after = after.replace("Foo = 2\n", head.replace("fractions", "decimal").replace(
            "Fraction", "Decimal"))
        assert verified(before, after, "C.m")


@pytest.mark.parametrize(("future", "deco"), [
    (False, ""),  # evaluated when the method is defined
    (True, ""),  # evaluated by whoever reads the annotations (`get_type_hints`)
    (True, "@register"),
])
def test_names_in_annotations_bound_when_the_code_runs_are_read(
    future: bool, deco: str
) -> None:
    assert "`Foo`" in refusal(*annotated(future, deco), "C.m")


def test_type_hints_read_by_the_function_differ_with_the_names_they_name() -> None:
    """The reason: the same annotation text names another object."""
    src = ("from __future__ import annotations\nimport typing\nFoo = {}\nclass C:\n"
           "    def k(self, x: Foo) -> None:\n        pass\n"
           "def f():\n{}\n")
    before = src.format(1, "    h = typing.get_type_hints(C.k)\n    return h")
    after = src.format(2, "    return typing.get_type_hints(C.k)")
    assert not verified(before, after, "f")


LOCALS = """\
import json
json = json
class C:
    def k(self, v):
{k}
    def m(self, g):
{body}
"""


def test_a_method_s_own_local_is_no_module_name() -> None:
    k = "        import json\n        return json.dumps(v)"
    before, after = (LOCALS.format(k=k, body=b) for b in (M_BEFORE, M_AFTER))
    assert verified(before, after, "C.m")


@pytest.mark.parametrize("k", [
    "        global json\n        json = v\n        return json",  # the module's name
    "        def inner():\n            return json\n        return inner()",  # a free name
])
def test_a_name_a_method_does_not_bind_itself_is_the_module_s(k: str) -> None:
    before, after = (LOCALS.format(k=k, body=b) for b in (M_BEFORE, M_AFTER))
    assert "json" in refusal(before, after, "C.m")


def test_a_function_reading_a_class_that_changed_where_it_cannot_reach() -> None:
    d = "class D:\n    def k(self):\n        return {}\n"
    f = "def f(g):\n{body}\n"
    before = d.format(1) + f.format(body="    y = g(D())\n    return y")
    after = d.format(2) + f.format(body="    return g(D())")
    assert verified(before, after, "f")
    reading = "    y = g(D().k)\n    return y"
    assert not verified(d.format(1) + f.format(body=reading),
                        d.format(2) + f.format(body="    return g(D().k)"), "f")


def test_a_docstring_naming_a_changed_member_does_not_reach_it() -> None:
    doc = '        """Unlike :meth:`other`, ..."""\n'
    before, after = pair(OTHER)
    before = before.replace("    def m(self, g):\n", "    def m(self, g):\n" + doc)
    after = after.replace("    def m(self, g):\n", "    def m(self, g):\n" + doc)
    assert verified(before, after, "C.m")
    # A string used as a value may be an attribute's name.
    used = "        name = 'other'\n"
    before, after = pair(OTHER)
    before = before.replace("    def m(self, g):\n", "    def m(self, g):\n" + used)
    after = after.replace("    def m(self, g):\n", "    def m(self, g):\n" + used)
    assert not verified(before, after, "C.m")


def test_a_class_read_through_a_helper_follows_the_same_rules() -> None:
    d = "class D:\n    def k(self):\n        return 1\n    def j(self):\n        return {}\n"
    helper = "def make():\n    return D().k()\n"
    f = "def f(g):\n{body}\n"
    before = d.format(1) + helper + f.format(body="    y = g(make())\n    return y")
    after = d.format(2) + helper + f.format(body="    return g(make())")
    result = relational.check(before, after, ast.parse(before), ast.parse(after), "f",
                              relational.Limits(), relative=True)
    assert result is not None and any("differs in `j`" in a for a in result.assumptions)
    reaching = helper.replace("k()", "j()")
    before = d.format(1) + reaching + f.format(body="    y = g(make())\n    return y")
    after = d.format(2) + reaching + f.format(body="    return g(make())")
    assert not verified(before, after, "f")


@pytest.mark.parametrize(("name", "use", "ok"), [
    ("code", "        return code + 1", True),  # a parameter named like a module
    ("inspect", "        return inspect.getsourcelines(self.m)", False),
    ("inspect", "        return inspect.cleandoc(self.m.__doc__)", True),  # a string's work
    ("traceback", "        return traceback.format_exc()", False),
])
def test_a_method_reading_a_name_of_an_observing_module(name: str, use: str, ok: bool) -> None:
    head = f"import {name}\n" if name != "code" else ""
    src = head + "class C:\n    def k(self, code=0):\n{use}\n    def m(self, g):\n{body}\n"
    before = src.format(use=use, body=M_BEFORE)
    after = src.format(use=use, body=M_AFTER)
    assert verified(before, after, "C.m") is ok


def test_a_type_checking_block_that_runs_binds_its_names() -> None:
    head = "TYPE_CHECKING = True\nif TYPE_CHECKING:\n    from fractions import Fraction as Foo\n"
    before, after = annotated(future=True, deco="")
    before = before.replace("Foo = 1\n", head)
    after = after.replace("Foo = 2\n", head.replace("fractions", "decimal").replace(
        "Fraction", "Decimal"))
    assert "binds `Foo`" in refusal(before, after, "C.m")


# ----------------------------------------------------------------------------- type variables

TYPEVAR = ("from __future__ import annotations\nimport typing as t\n"
           "F = t.TypeVar('F', bound=t.Callable[..., t.Any])\n")
USES_F = ("def f(g, x):\n    y = x\n    return g(y), F\n",
          "def f(g, x):\n    return g(x), F\n")


def test_a_type_variable_made_by_the_same_statement_is_the_same() -> None:
    before, after = TYPEVAR + USES_F[0], TYPEVAR + USES_F[1]
    assert verified(before, after, "f")


@pytest.mark.parametrize(("old", "new"), [
    ("'F'", "'G'"),  # another name
    ("t.Any]", "Foo]"),  # a name of the module, which may be anything
    ("t.TypeVar", "t.NewType"),  # not a type variable
    ("bound=t.Callable[..., t.Any]", "bound=t.cast(t.Any, print('x'))"),  # a call
])
def test_a_type_variable_otherwise_is_no_constant(old: str, new: str) -> None:
    header = TYPEVAR.replace(old, new)
    if old == "'F'":  # the name differs between the versions
        before, after = TYPEVAR + USES_F[0], header + USES_F[1]
    else:
        before, after = header + USES_F[0], header + USES_F[1]
    assert "`F` differs or is not a plain literal" in refusal(before, after, "f")
