"""A module loaded as part of its package: what is collected, and real runs in the sandbox."""

from __future__ import annotations

from veribot.checks.equivalence import Budget, check_pair
from veribot.checks.project.package import PairContext, from_mapping, module_name
from veribot.checks.sandbox import Limits, run_calls
from veribot.checks.verdict import BehaviourKind, Verdict

QUICK = Limits(wall_s=8.0, call_s=1.0)
BUDGET = Budget(timeout_s=8.0)

OPS = "calc/ops.py"
BASE: dict[str, bytes] = {
    "calc/__init__.py": b"from .ops import scale\n",
    "calc/consts.py": b"FACTOR = 3\n",
    OPS: b"from .consts import FACTOR\nimport calc.consts\n\n\n"
         b"def scale(x: int) -> int:\n    return x * FACTOR\n",
    "README.md": b"# calc\n",
}


def _with_ops(body: bytes, **others: bytes) -> dict[str, bytes]:
    head = dict(BASE)
    head[OPS] = b"from .consts import FACTOR\nimport calc.consts\n\n\n" + body
    head.update({k.replace("__", "/") + ".py": v for k, v in others.items()})
    return head


def _pair(head: dict[str, bytes]) -> tuple[str, str, PairContext]:
    context = PairContext(from_mapping(OPS, BASE), from_mapping(OPS, head))
    return BASE[OPS].decode(), head[OPS].decode(), context


# ----------------------------------------------------------------------------- collecting


def test_module_names_follow_the_init_chain() -> None:
    files = {"src/pkg/__init__.py", "src/pkg/sub/__init__.py", "tools/run.py"}
    assert module_name("src/pkg/sub/mod.py", files.__contains__) == ("pkg.sub.mod", "src")
    assert module_name("src/pkg/sub/__init__.py", files.__contains__) == ("pkg.sub", "src")
    assert module_name("tools/run.py", files.__contains__) == ("run", "tools")
    # Names that cannot be imported as such, or that would shadow the standard library.
    assert module_name("my-tool.py", files.__contains__) is None
    assert module_name("json.py", files.__contains__) is None
    assert module_name("../outside.py", files.__contains__) is None
    assert module_name("notes.txt", files.__contains__) is None


def test_collect_takes_the_package_chain_first_and_respects_the_caps() -> None:
    tree = {
        "pkg/__init__.py": b"",
        "pkg/a.py": b"A = 1\n",
        "pkg/sub/__init__.py": b"",
        "pkg/sub/mod.py": b"from ..a import A\n",
        "pkg/sub/near.py": b"N = 2\n",
        "pkg/other/__init__.py": b"",
        "pkg/other/far.py": b"F = 3\n" * 1000,
        "pkg/data.json": b"{}",
        "setup.py": b"",
    }
    package = from_mapping("pkg/sub/mod.py", tree)
    assert package is not None
    assert package.module == "pkg.sub.mod" and package.root == ""
    names = [p for p, _ in package.files]
    # The folders from the module up to the top-level package first, then the rest.
    assert names[:4] == ["pkg/__init__.py", "pkg/a.py", "pkg/sub/__init__.py", "pkg/sub/near.py"]
    # Then the top-level modules beside the package, and its data files as bytes.
    assert set(names) == {p for p in tree if p.startswith("pkg/") and p.endswith(".py")} - {
        "pkg/sub/mod.py"
    } | {"setup.py"}
    assert names[-1] == "setup.py"
    assert package.data == (("pkg/data.json", b"{}"),)
    assert package.left_out == 0 and package.data_left_out == 0
    small = from_mapping("pkg/sub/mod.py", tree, max_files=3)
    assert small is not None and len(small.files) == 3 and small.left_out == 4
    assert small.data == () and small.data_left_out == 1
    assert "5 more left out" in small.note
    by_size = from_mapping("pkg/sub/mod.py", tree, max_bytes=100)
    assert by_size is not None
    assert "pkg/other/far.py" not in dict(by_size.files) and by_size.left_out >= 1
    alone = from_mapping("setup.py", {"setup.py": b"", "helper.py": b"", "pkg/x.py": b""})
    assert alone is not None and alone.module == "setup"
    assert [p for p, _ in alone.files] == ["helper.py"]


# ----------------------------------------------------------------------------- the sandbox


def test_the_module_runs_as_part_of_its_package_and_only_then() -> None:
    package = from_mapping(OPS, BASE)
    assert package is not None
    source = BASE[OPS].decode()
    alone = run_calls(source, "scale", [["2"]], limits=QUICK)
    assert alone[0].kind is BehaviourKind.RAISED and alone[0].value == "ImportError"
    inside = run_calls(source, "scale", [["2"], ["5"]], limits=QUICK, package=package)
    assert [b.value for b in inside] == [("int", 6), ("int", 15)]


def test_the_package_files_are_read_only_for_the_child() -> None:
    head = _with_ops(
        b"def scale(x: int) -> int:\n"
        b"    import os\n"
        b"    path = os.path.join(os.path.dirname(__file__), 'consts.py')\n"
        b"    try:\n"
        b"        with open(path, 'a') as handle:\n"
        b"            handle.write('FACTOR = 99\\n')\n"
        b"    except OSError as exc:\n"
        b"        return type(exc).__name__\n"
        b"    return 'written'\n"
    )
    package = from_mapping(OPS, head)
    assert package is not None
    [b] = run_calls(head[OPS].decode(), "scale", [["1"]], limits=QUICK, package=package)
    assert b.kind is BehaviourKind.RETURNED and b.value == ("str", "PermissionError")


# ----------------------------------------------------------------------------- check_pair


def test_a_change_that_needs_the_sibling_module_is_refuted_by_a_real_run() -> None:
    before, after, context = _pair(_with_ops(
        b"def scale(x: int) -> int:\n    return x * calc.consts.FACTOR + (x > 100)\n"
    ))
    alone = check_pair(before, after, "scale", budget=BUDGET)
    assert alone.verdict is Verdict.INCONCLUSIVE
    assert any("could not be loaded" in n for n in alone.notes)
    result = check_pair(before, after, "scale", budget=BUDGET, context=context)
    assert result.verdict is Verdict.REFUTED, result.detail
    assert result.counterexample is not None
    assert result.counterexample.before.value != result.counterexample.after.value


def test_an_equivalent_change_inside_a_package_is_not_refuted() -> None:
    before, after, context = _pair(_with_ops(
        b"def scale(x: int) -> int:\n    return x + x + x * (calc.consts.FACTOR - 2)\n"
    ))
    result = check_pair(before, after, "scale", budget=BUDGET, context=context)
    assert result.verdict is not Verdict.REFUTED, result.detail
    assert any("random testing tried" in n and "0 inputs" not in n.split("tried")[1][:3]
               for n in result.notes), result.notes


def test_each_version_loads_the_siblings_of_its_own_revision() -> None:
    # The function's text changes trivially; the constant it reads changes in the head.
    before, after, context = _pair(_with_ops(
        b"def scale(x: int) -> int:\n    return FACTOR * x\n", calc__consts=b"FACTOR = 4\n"
    ))
    result = check_pair(before, after, "scale", budget=BUDGET, context=context)
    assert result.verdict is Verdict.REFUTED, result.detail
    same = PairContext(context.before, context.before)
    kept = check_pair(before, after, "scale", budget=BUDGET, context=same)
    assert kept.verdict is not Verdict.REFUTED, kept.detail


def test_files_left_out_by_the_caps_are_named_in_the_notes() -> None:
    before, after, _ = _pair(_with_ops(b"def scale(x: int) -> int:\n    return x * 3\n"))
    full = from_mapping(OPS, BASE)
    capped = from_mapping(OPS, BASE, max_files=1)
    assert full is not None and capped is not None and capped.left_out == 1
    result = check_pair(before, after, "scale", budget=BUDGET,
                        context=PairContext(full, capped))
    assert any("after version was loaded as `calc.ops`" in n and "1 more left out" in n
               for n in result.notes), result.notes
    assert not any("before version" in n for n in result.notes)


def test_a_proof_stands_once_the_module_check_loads_the_package() -> None:
    # The function uses nothing imported; the module imports only as part of its package.
    inc = b"\n\ndef inc(x: int) -> int:\n    return x + 1\n"
    base = {**BASE, OPS: BASE[OPS] + inc}
    head = {**BASE, OPS: BASE[OPS] + inc.replace(b"x + 1", b"1 + x")}
    context = PairContext(from_mapping(OPS, base), from_mapping(OPS, head))
    before, after = base[OPS].decode(), head[OPS].decode()
    alone = check_pair(before, after, "inc", budget=BUDGET)
    assert alone.verdict is Verdict.INCONCLUSIVE and alone.reason == "import-failed"
    result = check_pair(before, after, "inc", budget=BUDGET, context=context)
    assert result.verdict is Verdict.VERIFIED, result.detail


def test_a_package_that_rewrites_the_function_at_import_is_never_verified() -> None:
    inc = b"\n\ndef inc(x: int) -> int:\n    return x + 1\n"
    base = {**BASE, OPS: BASE[OPS] + inc}
    # The head's __init__ replaces the function once its module is loaded.
    head = {**base, OPS: BASE[OPS] + inc.replace(b"x + 1", b"1 + x"),
            "calc/__init__.py": b"from . import ops\nops.inc = lambda x: x + 2\n"}
    context = PairContext(from_mapping(OPS, base), from_mapping(OPS, head))
    result = check_pair(base[OPS].decode(), head[OPS].decode(), "inc", budget=BUDGET,
                        context=context)
    assert result.verdict is Verdict.REFUTED, result.detail
