"""`veribot review/compare --no-execute`: proof-only, nothing of the code under review runs."""

from __future__ import annotations

import io
import json
from pathlib import Path

from tests.bot.gitrepos import GitRepo
from veribot.bot.cli import EXIT_FAILED, EXIT_OK, main

ADD = "def add(a: int, b: int) -> int:\n    return {}\n"
BEFORE = "def neg(x: int) -> int:\n    return -x\n\n\n" + ADD.format("a + b")
AFTER = "def neg(x: int) -> int:\n    return x\n\n\n" + ADD.format("b + a")


def verdicts(*argv: str) -> tuple[int, dict[str, tuple[str, str]]]:
    out, err = io.StringIO(), io.StringIO()
    code = main([*argv, "--format", "json"], environ={"CI": "1"}, stdout=out, stderr=err)
    assert code in (EXIT_OK, EXIT_FAILED), err.getvalue()
    units = json.loads(out.getvalue())["units"]
    return code, {u["entry"]: (u["verdict"], u["reason"]) for u in units}


def test_compare_no_execute_never_refutes(tmp_path: Path) -> None:
    (tmp_path / "before.py").write_text(BEFORE)
    (tmp_path / "after.py").write_text(AFTER)
    files = (str(tmp_path / "before.py"), str(tmp_path / "after.py"))
    code, found = verdicts("compare", *files)
    assert code == EXIT_FAILED and found["neg"][0] == "refuted"
    code, found = verdicts("compare", *files, "--no-execute")
    assert code == EXIT_OK
    assert found == {"neg": ("inconclusive", "not-executed"), "add": ("verified", "proof")}


def test_review_no_execute(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "repo")
    base = repo.commit("base", {"m.py": BEFORE.encode()})
    repo.commit("change", {"m.py": AFTER.encode()})
    code, found = verdicts("review", "--repo", str(repo.path), "--base", base, "--no-execute")
    assert code == EXIT_OK
    assert found["neg"] == ("inconclusive", "not-executed")
