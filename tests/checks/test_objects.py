"""Objects of the project's classes as arguments: read how to build them, make them in the
sandbox with each version's own class, and search with them (never as a difference of a
class that changed, never with a class that is not the project's)."""

from __future__ import annotations

from veribot.checks.lang.pytypes import parse_type
from veribot.checks.project.package import Package, PairContext
from veribot.checks.sandbox import Limits, run_calls
from veribot.checks.search import construct, difftest
from veribot.checks.search.differential import examine
from veribot.checks.verdict import NO_INSTANCE, BehaviourKind

LIMITS = Limits(wall_s=20.0, call_s=2.0)
# Searches that must find a difference get a deadline a loaded machine cannot run out of
# (a found difference ends the search at once).
SURE_S = 40.0

HELP = '''
class Cmd:
    def __init__(self, name: str, help: str | None = None, deprecated: bool = False) -> None:
        self.name, self.help, self.deprecated = name, help, deprecated


class Ctx:
    def __init__(self, command: Cmd, width: int | None = None) -> None:
        self.command, self.width = command, width


def text(ctx: Ctx) -> str:
    t = ctx.command.help or ""
    if ctx.command.deprecated:
        t = f"{t} (DEPRECATED)"
    return t
'''
HELP_AFTER = HELP.replace('t = f"{t} (DEPRECATED)"',
                          't = f"{t} (DEPRECATED)" if t else "(DEPRECATED)"')


def test_a_parameter_of_a_class_of_the_module_gets_objects_its_constructor_builds() -> None:
    outcome = difftest.search(HELP, HELP_AFTER, "text", {"ctx": parse_type("Ctx")},
                              deadline_s=SURE_S, limits=LIMITS)
    cex = outcome.counterexample
    assert cex is not None, outcome.note
    assert cex.args[0].startswith("Ctx(Cmd(") and "deprecated=True" in cex.args[0]
    # The input reads as the call a person would write, and the sandbox runs it again.
    before, after = (run_calls(src, "text", [list(cex.args)], limits=LIMITS)[0]
                     for src in (HELP, HELP_AFTER))
    assert before.value != after.value
    assert before.built == after.built  # both versions made the same object


def test_a_changed_class_of_an_argument_is_no_difference_of_the_function() -> None:
    # Only the constructor of P changed: `get` reads what it was given, in both versions.
    before = ("class P:\n    def __init__(self, x: int) -> None:\n        self.x = x\n\n\n"
              "def get(p: P) -> int:\n    return p.x\n")
    after = before.replace("self.x = x", "self.x = x + 1")
    outcome = difftest.search(before, after, "get", {"p": parse_type("P")}, deadline_s=6,
                              limits=LIMITS)
    assert outcome.counterexample is None, outcome.counterexample
    seen = examine(before, after, "get", ["P(1)"], found_by="test", limits=LIMITS)
    assert seen.counterexample is None and "constructors built different objects" in seen.detail


def test_only_the_projects_classes_are_made() -> None:
    src = ("from collections import OrderedDict\nimport subprocess\nPopen = subprocess.Popen\n"
           "class P:\n    def __init__(self, x: int = 0) -> None:\n        self.x = x\n\n\n"
           "def f(v: object) -> str:\n    return type(v).__name__\n")
    calls = [["OrderedDict()"], ["Popen(['true'])"], ["print('x')"], ["P(2)"], ["int"], ["Q()"]]
    got = run_calls(src, "f", calls, limits=LIMITS)
    assert [b.value for b in got[:3]] == [NO_INSTANCE] * 3
    assert "not a class of the project" in got[0].text
    assert got[3].kind is BehaviourKind.RETURNED and got[3].value == ("str", "P")
    assert got[4].value == ("str", "type")  # a builtin class, by name, is a value
    assert got[5].value == NO_INSTANCE


def test_making_an_argument_that_hangs_is_stopped_by_the_call_timer() -> None:
    src = ("class Slow:\n    def __init__(self) -> None:\n        while True:\n"
           "            pass\n\n\ndef f(s: Slow) -> int:\n    return 1\n")
    got = run_calls(src, "f", [["Slow()"], ["1"]], limits=Limits(wall_s=10.0, call_s=0.5))
    assert got[0].value == NO_INSTANCE and got[1].value == ("int", 1)


def test_a_parameter_that_takes_any_object_is_given_builtin_classes_too() -> None:
    before = ("def isit(x: object) -> bool:\n    try:\n        iter(x)\n        return True\n"
              "    except TypeError:\n        return False\n")
    after = "def isit(x: object) -> bool:\n    return hasattr(x, '__iter__')\n"
    outcome = difftest.search(before, after, "isit", {"x": parse_type("object")},
                              deadline_s=SURE_S, limits=LIMITS)
    assert outcome.counterexample is not None, outcome.note
    assert outcome.counterexample.args[0] in ("int", "str", "list", "dict", "tuple")


PACKAGE_INIT = "from .core import Ctx\nfrom .formatting import Formatter as Formatter\n"
FORMATTING = ('class Formatter:\n    def __init__(self, width: int = 80, *, indent: str = "")'
              ' -> None:\n        self.width = width\n')
CORE = ("from .formatting import Formatter\nfrom . import formatting\n\n\n"
        "class Ctx:\n    def __init__(self, f: Formatter) -> None:\n        self.f = f\n")


def test_classes_are_found_in_the_module_and_through_the_packages_imports() -> None:
    files = {"src/pkg/__init__.py": PACKAGE_INIT, "src/pkg/formatting.py": FORMATTING}
    classes = construct.Classes(CORE, module="pkg.core", root="src", files=files)
    found = classes.find("Formatter")
    assert found is not None and [(p.name, p.required) for p in found.params] == [
        ("width", False), ("indent", False)]
    assert classes.find("Ctx") is not None
    assert classes.find("formatting") is None  # a module, not a class
    assert classes.find("Missing") is None
    # From the package's __init__, through its re-export.
    init = construct.Classes(PACKAGE_INIT, module="pkg", root="src", package=True,
                             files={**files, "src/pkg/core.py": CORE})
    assert init.find("Ctx") is not None and init.find("Formatter") is not None
    # A lone module knows only its own classes.
    assert construct.Classes(CORE).find("Formatter") is None


def test_an_argument_of_a_class_from_another_module_of_the_package() -> None:
    use = "from .formatting import Formatter\n\n\ndef wide(f: Formatter) -> bool:\n"
    before, after = use + "    return f.width > 80\n", use + "    return f.width >= 80\n"
    files = (("pkg/__init__.py", ""), ("pkg/formatting.py", FORMATTING))
    package = Package("pkg.use", "pkg/use.py", "", files)
    outcome = difftest.search(before, after, "wide", {"f": parse_type("Formatter")},
                              deadline_s=SURE_S, limits=LIMITS,
                              context=PairContext(package, package))
    assert outcome.counterexample is not None, outcome.note
    assert outcome.counterexample.args == ("Formatter()",)  # the default width, 80


def test_the_search_does_not_stop_at_an_attribute_the_after_class_adds() -> None:
    # Every object of the after version has one more attribute (no difference: it extends
    # the class); only for flag=True does an existing attribute change.
    before = ("class Opt:\n    def __init__(self, name: str, flag: bool = False) -> None:\n"
              "        self.name = name\n        self.default = () if flag else None\n")
    after = ("class Opt:\n    def __init__(self, name: str, flag: bool = False) -> None:\n"
             "        self.name = name\n        self.default = None\n        self.extra = 1\n")
    outcome = difftest.search(before, after, "Opt.__init__", {"name": parse_type("str"),
                              "flag": parse_type("bool")}, deadline_s=SURE_S, limits=LIMITS)
    assert outcome.counterexample is not None, outcome.note
    assert "flag=True" in outcome.counterexample.args or "True" in outcome.counterexample.args


def test_an_argument_left_different_is_named_with_its_attributes() -> None:
    src = ("class Buf:\n    def __init__(self) -> None:\n        self.lines: list[str] = []\n"
           "        self.width = 80\n\n\n"
           "def write(n: int, out: Buf) -> None:\n    out.lines.append(' x' * n)\n")
    after = src.replace("' x' * n", "'x' * n")
    seen = examine(src, after, "write", ["1", "Buf()"], found_by="test", limits=LIMITS)
    assert seen.counterexample is not None
    assert ("leave the arguments different: argument 2 (Buf): lines is [' x'] before, "
            "['x'] after") in seen.counterexample.difference
