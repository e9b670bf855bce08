"""Pairs where a function is the same relative to its calls, but a class it never names
changed: any object it handles may be an instance of that class (a subclass of its own
class, an argument), so what it calls on the object runs the changed code.

The function's own change must not be verified on callees' word when one of them is a
changed method of the same pull request; it is verified relative to that method only if
the method, decided on its own, is verified too (it is not, in these pairs). Changes the
function cannot reach (a docstring, a class attribute it never reads, a constructor when
it makes no object from another, `class E(object)` to `class E`) keep the proof.
"""

from __future__ import annotations

import pytest

from veribot.checks.equivalence import Budget, check_pair
from veribot.checks.verdict import Verdict

BUDGET = Budget(timeout_s=10, search=False)

F_A = "def f(o, x):\n    y = x\n    return o.go(y)\n"
F_B = "def f(o, x):\n    return o.go(x)\n"
E = ("class E:\n    'doc {}'\n    k = {}\n    def __init__(self):\n        self.v = {}\n"
     "    def run(self, v):\n        return v\n")

NOT_VERIFIED = [
    ("a-subclass-overrides-a-called-method",
     "class C:\n    def run(self, v):\n        return v\n    def m(self, x):\n        y = x\n"
     "        return self.run(y)\nclass D(C):\n    def run(self, v):\n        return 1\n",
     "class C:\n    def run(self, v):\n        return v\n    def m(self, x):\n"
     "        return self.run(x)\nclass D(C):\n    def run(self, v):\n        return 2\n",
     "C.m"),
    ("any-object-may-be-one",
     "class E:\n    def go(self, v):\n        return v\n" + F_A,
     "class E:\n    def go(self, v):\n        return v + 1\n" + F_B, "f"),
    ("an-operator-dispatches",
     "class E:\n    def __add__(self, v):\n        return 1\n"
     "def f(o, x):\n    y = x\n    return o + y\n",
     "class E:\n    def __add__(self, v):\n        return 2\n"
     "def f(o, x):\n    return o + x\n", "f"),
    ("the-same-code-calls-a-changed-method",
     "class E:\n    def go(self, v):\n        return v\n" + F_B,
     "class E:\n    def go(self, v):\n        return v + 1\n" + F_B.replace(
         "return", "return  "), "f"),
    ("a-class-attribute-it-reads",
     E.format(1, 1, 1) + "def f(o, x):\n    y = x\n    return o.k + y\n",
     E.format(1, 2, 1) + "def f(o, x):\n    return o.k + x\n", "f"),
    ("a-constructor-and-type-of-an-object",
     E.format(1, 1, 1) + "def f(o, x):\n    y = x\n    return type(o)().go(y)\n",
     E.format(1, 1, 2) + "def f(o, x):\n    return type(o)().go(x)\n", "f"),
    ("a-base-changed",
     "class B:\n    def go(self, v):\n        return 1\nclass E:\n    pass\n" + F_A,
     "class B:\n    def go(self, v):\n        return 1\nclass E(B):\n    pass\n" + F_B, "f"),
    ("reached-through-an-unchanged-method",
     "class E:\n    def go(self, v):\n        return self.h(v)\n    def h(self, v):\n"
     "        return v\n" + F_A,
     "class E:\n    def go(self, v):\n        return self.h(v)\n    def h(self, v):\n"
     "        return v + 1\n" + F_B, "f"),
    # `go` of an unchanged base runs the changed `h` of a subclass.
    ("reached-through-an-inherited-method",
     "class H:\n    def go(self, v):\n        return self.h(v)\nclass E(H):\n"
     "    def h(self, v):\n        return v\n" + F_A,
     "class H:\n    def go(self, v):\n        return self.h(v)\nclass E(H):\n"
     "    def h(self, v):\n        return v + 1\n" + F_B, "f"),
    ("a-class-defined-twice",
     "if True:\n    class E:\n        def go(self, v):\n            return v\nelse:\n"
     "    class E:\n        pass\n" + F_A,
     "if True:\n    class E:\n        def go(self, v):\n            return v + 1\nelse:\n"
     "    class E:\n        pass\n" + F_B, "f"),
    ("object-is-another-class-here",
     "class B:\n    def go(self, v):\n        return 1\nobject = B\nclass E(object):\n"
     "    pass\n" + F_A,
     "class B:\n    def go(self, v):\n        return 1\nobject = B\nclass E:\n    pass\n"
     + F_B, "f"),
    ("a-changed-attribute-a-reached-method-reads",
     "class E:\n    k = 1\n    def go(self, v):\n        return self.k\n" + F_A,
     "class E:\n    k = 2\n    def go(self, v):\n        return self.k\n" + F_B, "f"),
    ("a-constructor-and-class-of-an-object",
     E.format(1, 1, 1) + "def f(o, x):\n    y = x\n    return o.__class__().run(y)\n",
     E.format(1, 1, 2) + "def f(o, x):\n    return o.__class__().run(x)\n", "f"),
    # `type(self)` in a method of a base of the changed class makes one of it.
    ("a-constructor-and-type-of-self-in-a-base",
     "class H:\n    def fresh(self):\n        return type(self)()\n"
     + E.format(1, 1, 1).replace("class E:", "class E(H):")
     + "def f(o, x):\n    y = x\n    return o.fresh().v + y\n",
     "class H:\n    def fresh(self):\n        return type(self)()\n"
     + E.format(1, 1, 2).replace("class E:", "class E(H):")
     + "def f(o, x):\n    return o.fresh().v + x\n", "f"),
    # `type(self)` in a method of a class unrelated to `E`: called through the class,
    # `H.fresh(o)`, `self` is any object.
    ("a-constructor-and-type-of-self-called-through-the-class",
     "class H:\n    def fresh(self):\n        return type(self)()\n" + E.format(1, 1, 1)
     + "def f(o, x):\n    y = x\n    return H.fresh(o).v + y\n",
     "class H:\n    def fresh(self):\n        return type(self)()\n" + E.format(1, 1, 2)
     + "def f(o, x):\n    return H.fresh(o).v + x\n", "f"),
    # `builtins.type` is the builtin, though no name `type` is stored anywhere.
    ("a-constructor-and-the-builtins-type",
     "import builtins\n" + E.format(1, 1, 1)
     + "def f(o, x):\n    y = x\n    return builtins.type(o)().v + y\n",
     "import builtins\n" + E.format(1, 1, 2)
     + "def f(o, x):\n    return builtins.type(o)().v + x\n", "f"),
    # A method named `replace` of the class itself may make one.
    ("a-constructor-and-a-replace-method",
     E.format(1, 1, 1) + "    def replace(self):\n        return E()\n"
     "def f(o, x):\n    y = x\n    return o.replace().v + y\n",
     E.format(1, 1, 2) + "    def replace(self):\n        return E()\n"
     "def f(o, x):\n    return o.replace().v + x\n", "f"),
    ("a-repr-changed", "class E:\n    def __repr__(self):\n        return 'a'\n"
     "def f(o, x):\n    y = x\n    return repr(o) + y\n",
     "class E:\n    def __repr__(self):\n        return 'b'\n"
     "def f(o, x):\n    return repr(o) + x\n", "f"),
]


@pytest.mark.parametrize(("before", "after", "entry"), [c[1:] for c in NOT_VERIFIED],
                         ids=[c[0] for c in NOT_VERIFIED])
def test_a_changed_class_the_function_reaches_keeps_it_from_verifying(
        before: str, after: str, entry: str) -> None:
    result = check_pair(before, after, entry, budget=BUDGET)
    assert result.verdict is not Verdict.VERIFIED, result.detail


VERIFIED = [
    # The changes are named in the assumptions: the class `E` differs in members the
    # function cannot reach, and its constructor is not run by code outside the module.
    ("docstring-attribute-and-constructor-it-cannot-reach",
     E.format(1, 1, 1) + F_A, E.format(2, 2, 2) + F_B, "`E`"),
    # `k` changed, and only a method the function never names reads it.
    ("a-changed-attribute-only-an-unreached-method-reads",
     "class E:\n    k = 1\n    def size(self):\n        return self.k\n" + F_A,
     "class E:\n    k = 2\n    def size(self):\n        return self.k\n" + F_B, "`E`"),
    # `x.replace` on a string, `o.type` (an attribute: the module never stores the
    # builtin `type`), a parameter named `type`, and a class's name read: none makes an `E`.
    ("a-constructor-and-words-that-make-no-object",
     "class H:\n"
     "    def label(self):\n        return type(self).__name__ + self.__class__.__qualname__\n"
     + E.format(1, 1, 1) + "def f(o, x, type=None):\n    y = x\n"
     "    return o.go(y.replace('a', 'b'), type, o.type, H().label())\n",
     "class H:\n"
     "    def label(self):\n        return type(self).__name__ + self.__class__.__qualname__\n"
     + E.format(1, 1, 2) + "def f(o, x, type=None):\n"
     "    return o.go(x.replace('a', 'b'), type, o.type, H().label())\n", "`E`"),
    # `class E(object)` is `class E`: nothing to say.
    ("object-base-dropped", "class E(object):\n    pass\n" + F_A,
     "class E:\n    pass\n" + F_B, ""),
]


@pytest.mark.parametrize(("before", "after", "named"), [c[1:] for c in VERIFIED],
                         ids=[c[0] for c in VERIFIED])
def test_a_changed_class_the_function_cannot_reach_keeps_the_proof(
        before: str, after: str, named: str) -> None:
    result = check_pair(before, after, "f", budget=BUDGET)
    assert result.verdict is Verdict.VERIFIED, result.detail
    assert not named or any(named in a for a in result.assumptions), result.assumptions


@pytest.mark.parametrize("shape", ["reached-through-an-inherited-method",
                                   "a-constructor-and-type-of-self-in-a-base",
                                   "a-constructor-and-type-of-self-called-through-the-class"])
def test_what_an_inherited_method_reaches_is_a_real_difference(shape: str) -> None:
    # Run: `f(E(), 1)` is 1 before and 2 after (the base's method runs the changed code).
    before, after, _ = next(c[1:] for c in NOT_VERIFIED if c[0] == shape)
    seen = []
    for text in (before, after):
        space: dict[str, object] = {}
        exec(text, space)  # our own test text
        seen.append(space["f"](space["E"](), 1))  # type: ignore[operator]
    assert seen[0] != seen[1]


# Another module of the package, which the function calls, calls the changed method on the
# object it is handed, or makes an object of a class whose constructor changed: reached,
# though this module never names them.
PACKAGED = {
    "an-attribute": (
        "from pkg.b import helper\n\n\nclass C:\n    def m(self):\n        return {}\n\n\n"
        "def f():\n{f}", ("    x = C()\n    return helper(x)\n", "    return helper(C())\n"),
        "def helper(o):\n    return o.m()\n"),
    "a-constructor": (
        "from pkg.b import make\n\n\nclass C:\n    def __init__(self):\n        self.v = {}"
        "\n\n\ndef f(o):\n{f}", ("    x = make()\n    return x.v\n", "    return make().v\n"),
        "def make():\n    from pkg.mod import C\n    return C()\n"),
}


@pytest.mark.parametrize("elsewhere", sorted(PACKAGED))
def test_a_member_another_module_of_the_package_names_is_reached(elsewhere: str) -> None:
    from veribot.checks.project.package import Package, PairContext

    shape, body, helper = PACKAGED[elsewhere]
    before, after = shape.format(1, f=body[0]), shape.format(2, f=body[1])
    files = (("pkg/__init__.py", ""), ("pkg/b.py", helper))
    package = Package(module="pkg.mod", path="pkg/mod.py", root="", files=files)
    result = check_pair(before, after, "f", budget=BUDGET, context=PairContext(package, package))
    assert result.verdict is not Verdict.VERIFIED, result
    # Alone (no package around it), the assumption says what it cannot see.
    alone = check_pair(before, after, "f", budget=BUDGET)
    assert alone.verdict is not Verdict.VERIFIED or any(
        "code outside the module" in a for a in alone.assumptions), alone.assumptions


def test_modules_the_size_caps_left_unread_may_name_any_member() -> None:
    from veribot.checks.project.package import Package, PairContext

    shape, body, _ = PACKAGED["an-attribute"]
    before, after = shape.format(1, f=body[0]), shape.format(2, f=body[1])
    # `helper` here never calls `m`: only what was left out might.
    files = (("pkg/__init__.py", ""), ("pkg/b.py", "def helper(o):\n    return o\n"))
    read = Package(module="pkg.mod", path="pkg/mod.py", root="", files=files)
    capped = Package(module="pkg.mod", path="pkg/mod.py", root="", files=files, left_out=1)
    result = check_pair(before, after, "f", budget=BUDGET, context=PairContext(read, read))
    assert result.verdict is Verdict.VERIFIED, result.detail
    assert any("nor does other code of the package" in a for a in result.assumptions)
    result = check_pair(before, after, "f", budget=BUDGET, context=PairContext(capped, capped))
    assert result.verdict is not Verdict.VERIFIED, result


# Module-level code after a class may change it: any object the function is handed may be
# an instance of it, though the class's own code is the same.
MUTATED = [
    ("an-attribute-assigned", "class P:\n    k = 1\n\n\n{stmt}def f(o):\n{f}", "P.k = 2\n\n\n",
     ("    y = o.k\n    return y\n", "    return o.k\n")),
    ("setattr", "class P:\n    k = 1\n\n\n{stmt}def f(o):\n{f}", "setattr(P, 'k', 2)\n\n\n",
     ("    y = o.k\n    return y\n", "    return o.k\n")),
    ("a-virtual-subclass-registered",
     "from abc import ABC\n\n\nclass P(ABC):\n    pass\n\n\n{stmt}def f(o, x):\n{f}",
     "P.register(int)\n\n\n", ("    y = isinstance(x, o)\n    return y\n",
                               "    return isinstance(x, o)\n")),
]


@pytest.mark.parametrize(("shape", "stmt", "body"), [m[1:] for m in MUTATED],
                         ids=[m[0] for m in MUTATED])
def test_module_level_code_that_changes_a_class_is_not_unreached(
        shape: str, stmt: str, body: tuple[str, str]) -> None:
    before, after = shape.format(stmt="", f=body[0]), shape.format(stmt=stmt, f=body[1])
    result = check_pair(before, after, "f", budget=BUDGET)
    assert result.verdict is not Verdict.VERIFIED, result.detail
    seen = []
    for text in (before, after):
        space: dict[str, object] = {}
        exec(text, space)  # our own test text
        args = (space["P"], 3) if "isinstance" in text else (space["P"](),)
        seen.append(space["f"](*args))  # type: ignore[operator]
    assert seen[0] != seen[1]


def test_module_level_code_that_only_binds_names_keeps_the_proof() -> None:
    # A type alias, a `TypeVar` and a constant added: they bind names the function never
    # reads.
    # (`sys` imported twice, as in toolz's `functoolz.py`, is still the standard library's)
    shape = ("import sys\nimport typing as t\nimport sys\n\n\nclass P:\n    k = 1\n\n\n"
             "{stmt}def f(o):\n{f}")
    stmt = ("T = t.TypeVar('T')\nAlias = t.Optional[P]\nLIMIT = (1, 2)\n__all__ = ['f']\n"
            "PYPY = hasattr(sys, 'pypy_version_info')\n\n\n")
    before = shape.format(stmt="", f="    y = o.k\n    return y\n")
    after = shape.format(stmt=stmt, f="    return o.k\n")
    result = check_pair(before, after, "f", budget=BUDGET)
    assert result.verdict is Verdict.VERIFIED, result.detail


def test_module_level_code_that_reaches_the_module_by_name_changes_it() -> None:
    # Only the standard library is named, but `sys.modules[__name__]` is this module.
    shape = "import sys\n\n\nclass P:\n    k = 1\n\n\n{stmt}def f(o):\n{f}"
    stmt = "X = setattr(sys.modules[__name__].P, 'k', 2)\n\n\n"
    before = shape.format(stmt="", f="    y = o.k\n    return y\n")
    after = shape.format(stmt=stmt, f="    return o.k\n")
    result = check_pair(before, after, "f", budget=BUDGET)
    assert result.verdict is not Verdict.VERIFIED, result.detail
