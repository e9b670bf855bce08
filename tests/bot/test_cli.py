"""The ``veribot`` command line on real git repositories, in-process and as a subprocess."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.bot.gitrepos import GitRepo, calc_repo, shop_repo
from tests.bot.schema_check import validate_report_json, validate_sarif
from veribot.bot.cli import EXIT_FAILED, EXIT_OK, EXIT_USAGE, build_settings, main

CI_ENV = {"CI": "true"}
# The shop's reviews run the real engine on each unit; Cart.count (a loop, left
# inconclusive) searches for a difference until its budget ends, 10 s by default. The
# tests of the command line's output and exit codes give each function 3 s: which
# verdicts the units get is the review tests' business (tests/bot/test_review.py).
QUICK = ("--timeout", "3")


@pytest.fixture(scope="module")
def shop(tmp_path_factory: pytest.TempPathFactory) -> GitRepo:
    return shop_repo(tmp_path_factory.mktemp("shop"))


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), environ=CI_ENV, stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def test_review_text_lists_every_unit_and_passes_without_refutations(shop: GitRepo) -> None:
    code, out, err = run("review", "--repo", str(shop.path), *QUICK)
    assert code == EXIT_OK, err
    assert err == ""
    lines = out.splitlines()
    for name in (
        "shop/helpers.py::<module>",
        "shop/pricing.py::discount",
        "shop/pricing.py::tip",
        "shop/pricing.py::Cart",
        "shop/pricing.py::Cart.count",
        "shop/shapes.py::rect_area",
    ):
        assert any(f" {name}  [" in line for line in lines), name
    assert any(line.startswith("inconclusive  shop/pricing.py::tip  [added]") for line in lines)
    assert any("[parse-error]" in line and "line 2" in line for line in lines)
    assert "skipped       assets/logo.png" in out
    assert lines[-1].startswith("8 units:")


def test_review_from_inside_the_repository_by_default(
    shop: GitRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(shop.path / "shop")
    code, out, _ = run("review", "--base", "main", "--format", "json", *QUICK)
    assert code == EXIT_OK
    doc = json.loads(out)
    validate_report_json(doc)
    assert doc["base"]["label"] == "main"
    assert doc["summary"]["units"] == 8


def test_fail_on_sets_the_exit_code(shop: GitRepo) -> None:
    repo = str(shop.path)
    assert run("review", "--repo", repo, "--fail-on", "inconclusive", *QUICK)[0] == EXIT_FAILED
    assert run("review", "--repo", repo, "--fail-on", "never", *QUICK)[0] == EXIT_OK
    assert run("review", "--repo", repo, "--fail-on", "refuted", *QUICK)[0] == EXIT_OK


def test_sarif_and_json_written_to_files_are_valid(shop: GitRepo, tmp_path: Path) -> None:
    sarif_file, json_file = tmp_path / "out.sarif", tmp_path / "out.json"
    repo = str(shop.path)
    code, out, _ = run("review", "--repo", repo, "--format", "sarif", "--output", str(sarif_file),
                       *QUICK)
    assert code == EXIT_OK and out == ""
    log = json.loads(sarif_file.read_text(encoding="utf-8"))
    validate_sarif(log)
    uris = {
        r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
        for r in log["runs"][0]["results"]
    }
    assert uris == {"shop/helpers.py", "shop/pricing.py", "shop/shapes.py"}
    assert run("review", "--repo", repo, "--format", "json", "-o", str(json_file),
               *QUICK)[0] == EXIT_OK
    validate_report_json(json.loads(json_file.read_text(encoding="utf-8")))


def test_markdown_output(shop: GitRepo) -> None:
    code, out, _ = run("review", "--repo", str(shop.path), "--format", "markdown", *QUICK)
    assert code == EXIT_OK
    assert out.startswith("<!-- veribot:summary -->\n### veribot:")
    assert "`shop/shapes.py::rect_area`" in out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["review", "--repo", "{shop}", "--base", "nope"], "unknown revision 'nope'."),
        (["review", "--repo", "{shop}", "--head", "HEAD~9"], "unknown revision 'HEAD~9'."),
        (["review", "--repo", "{tmp}"], "is not a git repository"),
        (["review", "--repo", "{tmp}/missing"], "does not exist"),
        (["review", "--format", "html"], "invalid choice: 'html'"),
        (["review", "--timeout", "-1"], "must be positive"),
        (["frobnicate"], "invalid choice: 'frobnicate'"),
        ([], "the following arguments are required: COMMAND"),
        (["compare", "{tmp}/a.py", "{tmp}/b.py"], "cannot read"),
        (["review", "--repo", "{shop}", "-o", "{tmp}/no/such/dir/out.txt", *QUICK],
         "cannot access"),
    ],
)
def test_errors_are_one_plain_sentence_and_exit_2(
    shop: GitRepo, tmp_path: Path, argv: list[str], message: str
) -> None:
    args = [a.format(shop=shop.path, tmp=tmp_path) for a in argv]
    code, out, err = run(*args)
    assert code == EXIT_USAGE
    assert out == ""
    assert err.startswith("veribot: error: ")
    assert message in err
    assert "Traceback" not in err


def test_compare_two_files(tmp_path: Path) -> None:
    before, after = tmp_path / "before.py", tmp_path / "after.py"
    before.write_text(
        "def f(x: int) -> int:\n    return x * 2\n\n\ndef g(x: int) -> int:\n    return x\n"
    )
    after.write_text(
        "def f(x: int) -> int:\n    return x + x\n\n\ndef g(x: int) -> int:\n    return x\n"
    )
    code, out, err = run("compare", str(before), str(after), "--format", "json")
    assert code == EXIT_OK, err
    doc = json.loads(out)
    validate_report_json(doc)
    assert {u["entry"]: u["kind"] for u in doc["units"]} == {"f": "changed", "g": "unchanged"}
    assert doc["root"] is None

    code, out, _ = run("compare", str(before), str(after), "--entry", "f")
    assert code == EXIT_OK
    assert [line.split()[1] for line in out.splitlines()[1:-1]] == [f"{after.as_posix()}::f"]

    code, _, err = run("compare", str(before), str(after), "--entry", "nope")
    assert code == EXIT_USAGE
    assert "no function 'nope' in BEFORE file" in err


def test_help_and_version_exit_0(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--version"], environ={}) == EXIT_OK
    assert "veribot 0." in capsys.readouterr().out
    assert main(["review", "--help"], environ={}) == EXIT_OK
    help_text = capsys.readouterr().out
    assert "--fail-on" in help_text and "exit codes:" in help_text


def test_progress_only_on_a_terminal_outside_ci() -> None:
    master, slave = os.openpty()
    try:
        with open(slave, "w", closefd=True) as tty:
            assert build_settings({}, tty, tty).show_progress
            assert build_settings({}, tty, tty).stdout_is_terminal
            assert not build_settings({"CI": "true"}, tty, tty).show_progress
            assert build_settings({"NO_COLOR": "1"}, tty, tty).no_color
    finally:
        os.close(master)
    pipe = io.StringIO()
    assert not build_settings({}, pipe, pipe).show_progress


def test_real_subprocess_of_the_module(shop: GitRepo) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR",)}
    env["CI"] = "true"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "veribot.bot.cli",
            "review",
            "--repo",
            str(shop.path),
            "--format",
            "json",
            "--fail-on",
            "inconclusive",
            *QUICK,
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert done.returncode == EXIT_FAILED, done.stderr  # the parse error stays undecided
    validate_report_json(json.loads(done.stdout))
    bad = subprocess.run(
        [
            sys.executable,
            "-m",
            "veribot.bot.cli",
            "review",
            "--repo",
            str(shop.path),
            "--base",
            "xyz",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )
    assert bad.returncode == EXIT_USAGE
    assert bad.stderr == "veribot: error: unknown revision 'xyz'.\n"
    assert bad.stdout == ""


def test_the_shipped_demo_runs_a_real_review(tmp_path: Path) -> None:
    root = Path(__file__).resolve().parents[2]
    wrapper = tmp_path / "veribot"
    wrapper.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m veribot.bot.cli "$@"\n')
    wrapper.chmod(0o755)
    env = {**os.environ, "CI": "true", "VERIBOT": str(wrapper), "TMPDIR": str(tmp_path)}
    done = subprocess.run(
        ["bash", str(root / "examples" / "demo.sh"), "--timeout", "2", "--jobs", "2"],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    out = done.stdout
    for line in (
        "coupons.py::<module>  [parse-error]",
        "pricing.py::<module>  [outside-functions]",
        "pricing.py::loyalty_points  [added]",
        "shapes.py::<module>  [renamed]",
        "shapes.py::rect_area  [renamed]",
    ):
        assert line in out
    for changed in ("with_vat", "bulk_discount", "shipping", "describe", "Cart.total"):
        assert f"pricing.py::{changed}  [" in out
    assert "veribot exited with" in out
    assert not any(p.name.startswith("veribot-demo.") for p in tmp_path.iterdir())


def test_review_of_a_package_refutes_with_the_sibling_modules(tmp_path: Path) -> None:
    repo = calc_repo(tmp_path / "calc")
    code, out, err = run("review", "--repo", str(repo.path), "--timeout", "8",
                         "--format", "json")
    assert code == EXIT_FAILED, err  # a refutation fails the review by default
    doc = json.loads(out)
    validate_report_json(doc)
    verdicts = {u["qualname"]: u["verdict"] for u in doc["units"]}
    assert verdicts["src/calc/ops.py::scale"] == "refuted", out
    assert verdicts["src/calc/ops.py::triple"] != "refuted", out
