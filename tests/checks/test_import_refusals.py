"""What the sandbox refused while a package was imported is charged to a call only if the
call may observe what the refusal left (a version string versioneer could not ask git
for, say): a call that cannot is compared as usual; one that can stays undecided."""

from __future__ import annotations

from veribot.checks.equivalence import Budget, check_pair
from veribot.checks.project.package import Package, PairContext
from veribot.checks.sandbox import Limits, run_calls
from veribot.checks.verdict import Reason, Verdict

LIMITS = Limits(wall_s=20.0, call_s=2.0)

# Like versioneer: the package asks git for its version at import, and falls back.
VERSION = '''import subprocess


def get_versions():
    try:
        out = subprocess.run(["git", "describe"], capture_output=True, text=True).stdout
    except OSError:
        out = "0+unknown"
    return {"version": out}
'''
INIT = "from .mod import *\nfrom ._version import get_versions\n" \
       "__version__ = get_versions()['version']\n"


def package(extra: tuple[tuple[str, str], ...] = ()) -> Package:
    files = (("pkg/__init__.py", INIT), ("pkg/_version.py", VERSION), *extra)
    return Package("pkg.mod", "pkg/mod.py", "", files)


def refused(source: str, entry: str = "f", pkg: Package | None = None) -> tuple[str, ...]:
    [behaviour] = run_calls(source, entry, [["1"]], limits=LIMITS, package=pkg or package())
    return behaviour.refused


def test_a_call_that_cannot_see_the_refused_state_is_not_charged() -> None:
    assert refused("def f(x):\n    return x + 1\n") == ()


def test_a_call_that_reads_the_package_state_is_charged() -> None:
    reads = "import pkg\n\n\ndef f(x):\n    return pkg.__version__ + str(x)\n"
    assert refused(reads) == ("starting a process (subprocess.Popen)",)
    imports = "def f(x):\n    from pkg import __version__\n    return __version__ + str(x)\n"
    assert refused(imports) == ("starting a process (subprocess.Popen)",)


def test_a_call_that_runs_the_refused_modules_code_is_charged() -> None:
    runs = "from pkg._version import get_versions\n\n\ndef f(x):\n    return get_versions()\n"
    assert refused(runs) != ()


def test_a_call_through_another_module_that_imports_the_state_is_charged() -> None:
    helper = ("pkg/helper.py", "import pkg\n\n\ndef tag():\n    return pkg.__version__\n")
    source = "from pkg.helper import tag\n\n\ndef f(x):\n    return tag()\n"
    assert refused(source, pkg=package((helper,))) != ()


def test_reaching_modules_dynamically_is_charged() -> None:
    source = "import sys\n\n\ndef f(x):\n    return sys.modules['pkg'].__version__\n"
    assert refused(source) != ()


def test_a_refusal_in_the_module_under_review_is_every_calls() -> None:
    source = ("import subprocess\ntry:\n    subprocess.run(['true'])\n    MODE = 'a'\n"
              "except OSError:\n    MODE = 'b'\n\n\ndef f(x):\n    return x\n")
    assert refused(source) != ()


def test_a_difference_of_code_that_cannot_see_the_refusal_refutes() -> None:
    before, after = "def f(x):\n    return x + 1\n", "def f(x):\n    return x + 2\n"
    context = PairContext(package(), package())
    # A generous clock: a refutation ends the check at once.
    r = check_pair(before, after, "f", {"x": "int"}, budget=Budget(timeout_s=30),
                   context=context)
    assert r.verdict is Verdict.REFUTED, r.detail


def test_a_difference_resting_on_the_refused_state_is_undecided() -> None:
    # On a machine where git runs, the version is not "0+unknown": both return 1 there.
    before = ("import pkg\n\n\ndef f(x):\n"
              "    return 2 if pkg.__version__ == '0+unknown' else 1\n")
    after = "import pkg\n\n\ndef f(x):\n    return 1\n"
    context = PairContext(package(), package())
    r = check_pair(before, after, "f", {"x": "int"}, budget=Budget(timeout_s=8),
                   context=context)
    assert r.verdict is Verdict.INCONCLUSIVE and r.reason == Reason.SANDBOX_REFUSED, r.detail


def test_an_outcome_left_in_the_environment_is_every_calls() -> None:
    version = VERSION + "\n\nimport os\nos.environ['PKG_VERSION'] = get_versions()['version']\n"
    files = (("pkg/__init__.py", "from ._version import get_versions\n"),
             ("pkg/_version.py", version))
    source = "import os\n\n\ndef f(x):\n    return os.environ.get('PKG_VERSION')\n"
    assert refused(source, pkg=Package("pkg.mod", "pkg/mod.py", "", files)) != ()
