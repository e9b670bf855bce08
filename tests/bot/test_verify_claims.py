"""``veribot verify-claims``: hints and facts from any source, checked against the code."""

from __future__ import annotations

import io
import json
import subprocess
from pathlib import Path

from tests.checks.test_hints import AFTER, BEFORE, INVARIANT
from veribot.bot.cli import main

WRONG = "before.s == after.s and before.i == after.j"


def claims(tmp_path: Path, *units: dict[str, object], name: str = "claims.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps({"version": 1, "units": list(units)}), encoding="utf-8")
    return path


def files(tmp_path: Path, after: str = AFTER) -> list[str]:
    (tmp_path / "before.py").write_text(BEFORE, encoding="utf-8")
    (tmp_path / "after.py").write_text(after, encoding="utf-8")
    return ["--files", str(tmp_path / "before.py"), str(tmp_path / "after.py")]


def cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), environ={}, stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def test_a_proven_invariant_from_a_file_verifies_the_pair(tmp_path: Path) -> None:
    path = claims(tmp_path, {"entry": "total", "hints": [{"kind": "invariant",
                                                          "expr": INVARIANT}]})
    code, out, err = cli("verify-claims", str(path), *files(tmp_path), "--no-execute")
    assert (code, err) == (0, "")
    assert out.startswith("verified     total  [proof]")
    assert "method: z3+hints: smt: induction" in out
    assert f"hint proven, used by the proof: invariant `{INVARIANT}`" in out


def test_an_unproven_hint_or_a_contradicted_fact_exits_1_and_says_which(tmp_path: Path) -> None:
    path = claims(tmp_path, {
        "entry": "total",
        "hints": [{"kind": "invariant", "expr": WRONG}, {"kind": "invariant", "expr": "eval(1)"},
                  {"kind": "nonsense"}],
        "facts": [{"pred": "def", "args": ["s", "before", 2]},
                  {"pred": "def", "args": ["i", "before", 2]}],  # i is defined on line 3
    })
    code, out, _ = cli("verify-claims", str(path), *files(tmp_path), "--no-execute")
    assert code == 1
    assert out.startswith("inconclusive total  [loop-bound]")
    assert f"hint refuted: invariant `{WRONG}`" in out
    assert "hint rejected: invariant `eval(1)`" in out and "not a function of both" in out
    assert "hint rejected: hint 3" in out and "unknown kind 'nonsense'" in out
    assert 'fact supported: def("s", "before", 2)' in out
    assert 'fact contradicted: def("i", "before", 2)' in out


def test_json_output_lists_every_hint_and_fact(tmp_path: Path) -> None:
    path = claims(tmp_path, {"entry": "total", "hints": [{"kind": "invariant",
                                                          "expr": INVARIANT}],
                             "facts": [{"pred": "def", "args": ["s", "before", 2]}]})
    code, out, _ = cli("verify-claims", str(path), *files(tmp_path), "--no-execute",
                       "--format", "json")
    assert code == 0
    (unit,) = json.loads(out)
    assert unit["verdict"] == "verified" and unit["method"].startswith("z3+hints")
    assert unit["hints"][0]["status"] == "proven" and unit["hints"][0]["used"]
    assert unit["facts"][0]["status"] == "supported"
    assert unit["all_proven"] is True


def test_a_revision_range_of_a_repository(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / "pkg").mkdir(parents=True)
    (repo / "pkg" / "__init__.py").write_text("", encoding="utf-8")

    def git(*args: str) -> None:
        subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True,
                       env={"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
                            "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com",
                            "HOME": str(tmp_path), "PATH": "/usr/bin:/bin"})

    git("init", "-q", "-b", "main")
    (repo / "pkg" / "sums.py").write_text(BEFORE, encoding="utf-8")
    git("add", ".")
    git("commit", "-qm", "before")
    (repo / "pkg" / "sums.py").write_text(AFTER, encoding="utf-8")
    git("commit", "-qam", "after")
    (repo / "pkg" / "sums.py").write_text("def total(:\n", encoding="utf-8")  # not read
    path = claims(tmp_path, {"entry": "total", "path": "pkg/sums.py",
                             "hints": [{"kind": "invariant", "expr": INVARIANT}]})
    code, out, err = cli("verify-claims", str(path), "--repo", str(repo), "--base", "HEAD~1",
                         "--timeout", "20")
    assert (code, err) == (0, ""), out
    assert out.startswith("verified     pkg/sums.py::total  [proof]")
    code, _, err = cli("verify-claims", str(path), "--repo", str(repo), "--base", "nope")
    assert code == 2 and "unknown revision 'nope'" in err


def test_input_errors_exit_2_with_one_sentence(tmp_path: Path) -> None:
    good = claims(tmp_path, {"entry": "total", "hints": [INVARIANT]})
    deep = tmp_path / "deep.json"
    deep.write_text('{"version": 1, "units": [{"entry": "total", "facts": '
                    + "[" * 100_000 + "]" * 100_000 + "}]}", encoding="utf-8")
    nested = tmp_path / "nested.json"
    nested.write_text('{"version": 1, "units": [{"entry": "total", "hints": [INV], "x": '
                      .replace("INV", json.dumps(INVARIANT))
                      + "[" * 100 + "]" * 100 + "}]}", encoding="utf-8")
    surrogate = tmp_path / "surrogate.json"
    surrogate.write_text('{"version": 1, "units": [{"entry": "tot\\ud800al", "hints": [INV]}]}'
                         .replace("INV", json.dumps(INVARIANT)), encoding="utf-8")
    many = claims(tmp_path, *[{"entry": "total", "hints": [INVARIANT]}] * 201, name="many.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{", encoding="utf-8")
    cases = [
        (["verify-claims", str(bad), *files(tmp_path)], "is not JSON"),
        (["verify-claims", str(claims(tmp_path, name="empty.json")), *files(tmp_path)],
         "non-empty list"),
        (["verify-claims", str(claims(tmp_path, {"entry": "nope", "hints": [INVARIANT]},
                                      name="n.json")), *files(tmp_path)], "no function `nope`"),
        # Nothing to check must not pass as "all proven" (a CI gate that checks nothing).
        (["verify-claims", str(claims(tmp_path, {"entry": "total", "hints": [], "facts": []},
                                      name="nothing.json")), *files(tmp_path)],
         "no hints and no facts: nothing to check"),
        (["verify-claims", str(deep), *files(tmp_path)], "nested too deeply"),
        (["verify-claims", str(nested), *files(tmp_path)], "nested more than 32 deep"),
        (["verify-claims", str(surrogate), *files(tmp_path)], "lone surrogate"),
        (["verify-claims", str(many), *files(tmp_path)], "201 units; at most 200"),
        (["verify-claims", str(good)], "either --files"),
        (["verify-claims", str(claims(tmp_path, {"entry": "total", "hints": {"hints": 1}},
                                      name="h.json")), *files(tmp_path)], "a JSON list"),
        (["verify-claims", str(tmp_path / "missing.json"), *files(tmp_path)], "cannot access"),
    ]
    for argv, message in cases:
        code, out, err = cli(*argv)
        assert code == 2, (argv, out, err)
        assert message in err and err.count("\n") == 1 and "Traceback" not in err


def test_the_documented_example_runs() -> None:
    root = Path(__file__).resolve().parents[2] / "benchmarks" / "hints"
    code, out, err = cli("verify-claims", str(root / "claims-example.json"), "--files",
                         str(root / "total_before.py"), str(root / "total_after.py"),
                         "--no-execute")
    assert (code, err) == (0, ""), out
    assert "hint proven, used by the proof: invariant" in out
    assert "hint proven: precondition `n <= 3`" in out
    assert 'fact supported: def("s", "before", 2)' in out


def test_hints_proven_by_verify_claims_complete_a_later_compare(tmp_path: Path) -> None:
    archive = tmp_path / "hints.sqlite3"
    pair = files(tmp_path)
    compare = ["compare", pair[1], pair[2], "--entry", "total", "--no-execute",
               "--hints", str(archive), "--format", "json"]
    code, out, _ = cli(*compare)
    (unit,) = [u for u in json.loads(out)["units"] if u["entry"] == "total"]
    assert unit["verdict"] == "inconclusive" and unit["reason"] == "loop-bound"
    path = claims(tmp_path, {"entry": "total", "hints": [
        {"kind": "invariant", "expr": INVARIANT}, {"kind": "invariant", "expr": WRONG}]})
    code, _, _ = cli("verify-claims", str(path), *pair, "--no-execute", "--archive", str(archive))
    assert code == 1  # the wrong one is refuted, and is not kept
    code, out, _ = cli(*compare)
    (unit,) = [u for u in json.loads(out)["units"] if u["entry"] == "total"]
    assert unit["verdict"] == "verified" and unit["method"].startswith("z3+hints")
    assert WRONG not in json.dumps(unit)
