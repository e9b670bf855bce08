"""The standard library calling methods of the project's classes by name.

An object of a class deriving from a builtin (or from any class outside the module) may
be handed to code outside the module, which calls the base's members on it by name:
`html.escape` calls `replace` of a `str` subclass, `string.capwords` its `split`,
`os.path.basename` its `rfind`, `json.loads` its `startswith`, `re.escape` its
`translate`, `ast.literal_eval` its `lstrip` (CPython 3.11, each by name, so an override
runs), `ExceptionGroup.split` and `subgroup` a subclass's `derive`. A changed override
is then reached, whether or not the module names it: the function's proof must not
stand on the assumption that code outside the module does not call it. A changed
method that overrides nothing of such a base keeps the proof.

Each differing pair differs only on rare inputs (or on objects no generated input is),
so what decides is the proof, not the tripwire run after it.
"""

from __future__ import annotations

import pytest

from veribot.checks.equivalence import Budget, check_pair
from veribot.checks.verdict import Verdict

BUDGET = Budget(timeout_s=10, search=False)

# A condition almost no generated string meets.
RARE = "sum(map(ord, self)) % 7919 == 4001"


def _override(module: str, method: str, params: str, args: str, changed: bool) -> str:
    body = (f"        if {RARE}:\n            return str.{method}(self, {args}) * 2\n"
            if changed else "")
    return (f"import {module}\nclass S(str):\n    def {method}(self, {params}):\n{body}"
            f"        return str.{method}(self, {args})\n")


def _calls(expr: str) -> tuple[str, str]:
    """A function handing `S(x)` to ``expr`` (in place of `@`), before and after a trivial edit."""
    return (f"def f(x: str) -> str:\n    y = x\n    return {expr.replace('@', 'S(y)')}\n",
            f"def f(x: str) -> str:\n    return {expr.replace('@', 'S(x)')}\n")


# (name, module, method, its parameters, its call of str's, the call handing it over)
STR_CALLERS = [
    ("html-escape-calls-replace", "html", "replace", "a, b, n=-1", "a, b, n",
     "html.escape(@)"),
    ("capwords-calls-split", "string", "split", "sep=None, maxsplit=-1", "sep, maxsplit",
     "string.capwords(@)"),
    ("basename-calls-rfind", "os.path", "rfind", "*a", "*a", "os.path.basename(@)"),
    ("json-loads-calls-startswith", "json", "startswith", "*a", "*a", "str(json.loads(@))"),
    ("re-escape-calls-translate", "re", "translate", "t", "t", "re.escape(@)"),
    ("literal-eval-calls-lstrip", "ast", "lstrip", "c=None", "c",
     "str(ast.literal_eval(@))"),
]

EG = "class G(ExceptionGroup):\n    def derive(self, excs):\n        return {}\n"
EG_SAME = "G(self.message, excs)"
EG_RARE = "ExceptionGroup(self.message, excs) if self.message == '4001' else G(self.message, excs)"
EG_CALL = ("def f(x: int) -> str:\n    g = G(str(x), [ValueError(x), TypeError(x)])\n"
           "    return type(g.{}(ValueError){}).__name__\n")
HELPER = ("import html\nclass S(str):\n    def replace(self, a, b, n=-1):\n"
          "        return self.tweak(str.replace(self, a, b, n))\n"
          "    def tweak(self, s):\n        return {}\n")
ANY_O = ("def f(o, x):\n    y = x\n    return html.escape(o) + y\n",
         "def f(o, x):\n    return html.escape(o) + x\n")
FORMATTER = ("import string\nclass F(string.Formatter):\n    def format_field(self, v, spec):\n"
             "        return {}\n")
FORMATS = ("def f(x: int) -> str:\n    y = x\n    return F().format('{0}', y)\n",
           "def f(x: int) -> str:\n    return F().format('{0}', x)\n")

NOT_VERIFIED = [
    *[(name, _override(module, method, params, args, False) + _calls(expr)[0],
       _override(module, method, params, args, True) + _calls(expr)[1])
      for name, module, method, params, args, expr in STR_CALLERS],
    ("exception-group-split-calls-derive", EG.format(EG_SAME) + EG_CALL.format("split", "[0]"),
     EG.format(EG_RARE) + EG_CALL.format("split", "[0]").replace("return", "return  ")),
    ("exception-group-subgroup-calls-derive", EG.format(EG_SAME) + EG_CALL.format(
        "subgroup", ""), EG.format(EG_RARE) + EG_CALL.format("subgroup", "").replace(
        "return", "return  ")),
    # `escape` runs the unchanged override, which calls the changed helper.
    ("an-unchanged-override-calls-a-changed-method", HELPER.format("s") + ANY_O[0],
     HELPER.format("s * 2") + ANY_O[1]),
    # An override added: `escape` now runs it.
    ("an-override-added", "import html\nclass S(str):\n    pass\n" + ANY_O[0],
     "import html\nclass S(str):\n    def replace(self, a, b, n=-1):\n        return 'x'\n"
     + ANY_O[1]),
    # A base imported from elsewhere may call any member: `Formatter.format` calls
    # `format_field` by name.
    ("an-imported-base-calls-any-member", FORMATTER.format("format(v, spec)") + FORMATS[0],
     FORMATTER.format("format(v, spec) * (2 if v == 4001 else 1)") + FORMATS[1]),
]


@pytest.mark.parametrize(("before", "after"), [(b, a) for _, b, a in NOT_VERIFIED],
                         ids=[n for n, _, _ in NOT_VERIFIED])
def test_an_override_the_standard_library_calls_is_reached(before: str, after: str) -> None:
    result = check_pair(before, after, "f", budget=BUDGET)
    assert result.verdict is not Verdict.VERIFIED, result.assumptions


DESCRIBE = ("import html\nclass S(str):\n    def replace(self, a, b, n=-1):\n"
            "        return str.replace(self, a, b, n)\n    def describe(self):\n"
            "        return {}\n")
ERROR = ("class E(Exception):\n    def hint(self):\n        return {}\n"
         "def f(x: int) -> str:\n    e = E(x)\n    return type(e).__name__\n")

# Changes code outside the module cannot reach: a method no base outside defines.
STILL_VERIFIED = [
    ("a-str-subclass-method-no-base-defines", DESCRIBE.format("'a'") + _calls(
        "html.escape(@)")[0], DESCRIBE.format("'b'") + _calls("html.escape(@)")[1]),
    ("an-exception-method-no-base-defines", ERROR.format("1"),
     ERROR.format("2").replace("return type", "return  type")),
]


@pytest.mark.parametrize(("before", "after"), [(b, a) for _, b, a in STILL_VERIFIED],
                         ids=[n for n, _, _ in STILL_VERIFIED])
def test_a_method_no_outside_base_defines_keeps_the_proof(before: str, after: str) -> None:
    result = check_pair(before, after, "f", budget=BUDGET)
    assert result.verdict is Verdict.VERIFIED, result.detail
    assert any("cannot reach" in a for a in result.assumptions)


# The same behaviour: an override rewritten equivalently is reached, never refuted.
EQUIVALENT = [
    ("replace-rewritten", _override("html", "replace", "a, b, n=-1", "a, b, n", False)
     + _calls("html.escape(@)")[0],
     "import html\nclass S(str):\n    def replace(self, a, b, n=-1):\n"
     "        r = str.replace(self, a, b, n)\n        return r\n" + _calls("html.escape(@)")[1]),
    ("derive-rewritten", EG.format(EG_SAME) + EG_CALL.format("split", "[0]"),
     EG.format("type(self)(self.message, excs)") + EG_CALL.format("split", "[0]")),
    ("capwords-split-rewritten", _override("string", "split", "sep=None, maxsplit=-1",
                                           "sep, maxsplit", False)
     + _calls("string.capwords(@)")[0],
     "import string\nclass S(str):\n    def split(self, sep=None, maxsplit=-1):\n"
     "        return str.split(self, sep, maxsplit)[:]\n" + _calls("string.capwords(@)")[1]),
]


@pytest.mark.parametrize(("before", "after"), [(b, a) for _, b, a in EQUIVALENT],
                         ids=[n for n, _, _ in EQUIVALENT])
def test_an_equivalent_override_is_not_refuted(before: str, after: str) -> None:
    result = check_pair(before, after, "f", budget=Budget(timeout_s=10))
    assert result.verdict is not Verdict.REFUTED, result.detail


MIXIN = ("import html\nclass M:\n    def replace(self, a, b, n=-1):\n        return {}\n"
         "class S(M, str):\n    pass\n")
LOCAL_BASE = ("import html\nclass T(str):\n    pass\nclass S(T):\n"
              "    def replace(self, a, b, n=-1):\n        return {}\n")
SAME = "str.replace(self, a, b, n)"


@pytest.mark.parametrize("module", [MIXIN, LOCAL_BASE], ids=["a-mixin-before-str",
                                                             "through-a-local-base"])
def test_an_override_reached_through_the_class_hierarchy(module: str) -> None:
    """The changed `replace` is the mixin's, which a subclass puts before `str`'s; or
    the class derives from `str` through a class of the module."""
    result = check_pair(module.format(SAME) + ANY_O[0], module.format("'x'") + ANY_O[1],
                        "f", budget=BUDGET)
    assert result.verdict is not Verdict.VERIFIED, result.assumptions
