"""A review on a real git repository tries the calls of the commit's own new test."""

from __future__ import annotations

from pathlib import Path

from tests.bot.gitrepos import GitRepo
from veribot.bot.gitrepo import package_context
from veribot.bot.review import GitSource, ReviewRequest, review
from veribot.checks.equivalence import Budget
from veribot.checks.verdict import Verdict

# `label` changes for one key only, found by its checksum: neither the model nor a random
# draw reaches it, but the test the commit adds calls it with that key.
_BASE = b"""import zlib


def label(key, width=4):
    return key[:width]
"""
_HEAD = b"""import zlib


def label(key, width=4):
    if zlib.crc32(key.encode()) == 2119306317:
        return key
    return key[:width]
"""
_TEST = b"""import pkg.mod as m
from pkg.mod import label


def label_of(x):
    return x


def test_long_release_keys_are_kept():
    assert m.label('abc') == 'abc'
    key = 'release-2026.11-rc76'
    assert label(key) == key
"""


def test_the_commits_new_test_refutes_with_its_own_input(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "labels")
    repo.commit("initial", {"pkg/__init__.py": b"", "pkg/mod.py": _BASE,
                            "tests/test_mod.py": b"import pkg.mod\n"})
    repo.git("checkout", "-q", "-b", "feature")
    repo.commit("keep release keys", {"pkg/mod.py": _HEAD, "tests/test_mod.py": _TEST})

    report = review(ReviewRequest(GitSource(repo.path), budget=Budget(timeout_s=8.0)))
    found = {i.unit.qualname: i for i in report.items}
    result = found["pkg/mod.py::label"].result
    assert result.verdict is Verdict.REFUTED, result.detail
    assert result.counterexample is not None
    assert result.counterexample.args == ("'release-2026.11-rc76'",)
    assert result.counterexample.found_by == (
        "a call in tests/test_mod.py line 12 (after revision)")

    # The context carries the test file of each revision that mentions the function.
    context = package_context(repo.path, "main", "feature", "pkg/mod.py", "pkg/mod.py",
                              names=["label"])
    assert [f.path for f in context.after_tests] == ["tests/test_mod.py"]
    assert context.before_tests == ()  # the base's test file does not mention `label`
    assert package_context(repo.path, "main", "feature", "pkg/mod.py", "pkg/mod.py") \
        .after_tests == ()
