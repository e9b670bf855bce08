"""Real git repositories in temporary folders, built with the git command line."""

from __future__ import annotations

import subprocess
from pathlib import Path

# The history every CLI/review test reviews: `main` has the base, `feature` the change.
BASE_FILES: dict[str, bytes] = {
    "shop/pricing.py": b'''"""Prices."""

RATE = 20


def net(gross: int) -> int:
    return gross - gross * RATE // 120


def discount(total: int, n: int) -> int:
    if n >= 10:
        return total - total // 10
    return total


class Cart:
    currency = "EUR"

    def count(self, items: list[int]) -> int:
        return len(items)

    def add(self, items: list[int], x: int) -> None:
        items.append(x)
''',
    "shop/geometry.py": b"""def area(w: int, h: int) -> int:
    return w * h


def perimeter(w: int, h: int) -> int:
    return 2 * (w + h)
""",
    "shop/helpers.py": b"""def clamp(x: int, lo: int, hi: int) -> int:
    return max(lo, min(x, hi))
""",
    "assets/logo.png": b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR",
    "README.md": b"# shop\n",
}

# The feature branch: equivalent refactorings only (so no verdict can be "refuted"),
# a renamed function, a renamed file, an added function, a class attribute change,
# a syntax error, a binary change and a non-Python change.
FEATURE_FILES: dict[str, bytes] = {
    "shop/pricing.py": b'''"""Prices."""

RATE = 20


def net(gross: int) -> int:
    # same arithmetic, reformatted
    return gross - (gross * RATE) // 120


def discount(total: int, n: int) -> int:
    if n < 10:
        return total
    return total - total // 10


def tip(total: int) -> int:
    return total // 10


class Cart:
    currency = "USD"

    def count(self, items: list[int]) -> int:
        n = 0
        for _ in items:
            n += 1
        return n

    def add(self, items: list[int], x: int) -> None:
        items.append(x)
''',
    "shop/shapes.py": b"""def rect_area(w: int, h: int) -> int:
    return w * h


def perimeter(w: int, h: int) -> int:
    return 2 * (w + h)
""",
    "shop/helpers.py": b"""def clamp(x: int, lo: int, hi: int) -> int:
    return max(lo, min(x, hi)
""",
    "assets/logo.png": b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x01",
    "README.md": b"# shop\n\nNow with tips.\n",
}


class GitRepo:
    """A git repository in ``path``, committed to with a fixed identity."""

    def __init__(self, path: Path, branch: str = "main") -> None:
        self.path = path
        path.mkdir(parents=True, exist_ok=True)
        self.git("init", "-q", "-b", branch)

    def git(self, *args: str) -> str:
        done = subprocess.run(
            [
                "git",
                "-c",
                "user.name=Test",
                "-c",
                "user.email=test@example.com",
                "-c",
                "commit.gpgsign=false",
                *args,
            ],
            cwd=self.path,
            check=True,
            capture_output=True,
            text=True,
        )
        return done.stdout.strip()

    def write(self, files: dict[str, bytes]) -> None:
        for name, data in files.items():
            target = self.path / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)

    def commit(self, message: str, files: dict[str, bytes] | None = None) -> str:
        if files:
            self.write(files)
        self.git("add", "-A")
        self.git("commit", "-q", "--allow-empty", "-m", message)
        return self.git("rev-parse", "HEAD")


def shop_repo(path: Path) -> GitRepo:
    """main: the base; feature (checked out): a rename of geometry.py, the edits above."""
    repo = GitRepo(path)
    repo.commit("initial", BASE_FILES)
    repo.git("checkout", "-q", "-b", "feature")
    repo.git("mv", "shop/geometry.py", "shop/shapes.py")
    repo.commit("refactor", FEATURE_FILES)
    return repo


# A package in a `src` layout whose module needs its siblings: a relative import and an
# absolute import of its own package. `scale` changes behaviour (x > 100), `triple` is
# an equivalent rewrite given the sibling's FACTOR = 3.
_OPS_HEAD = b"from .consts import FACTOR\nimport calc.consts\n\n\n"
CALC_BASE: dict[str, bytes] = {
    "src/calc/__init__.py": b"from .ops import scale, triple\n",
    "src/calc/consts.py": b"FACTOR = 3\n",
    "src/calc/ops.py": _OPS_HEAD
    + b"def scale(x: int) -> int:\n    return x * FACTOR\n\n\n"
    + b"def triple(x: int) -> int:\n    return x * FACTOR\n",
}
CALC_FEATURE: dict[str, bytes] = {
    "src/calc/ops.py": _OPS_HEAD
    + b"def scale(x: int) -> int:\n    return x * calc.consts.FACTOR + (x > 100)\n\n\n"
    + b"def triple(x: int) -> int:\n    return x + x + x\n",
}


def calc_repo(path: Path) -> GitRepo:
    """main: the base; feature (checked out): CALC_FEATURE, and an uncommitted edit of the
    sibling module in the working tree, which a review of the commits must not read."""
    repo = GitRepo(path)
    repo.commit("initial", CALC_BASE)
    repo.git("checkout", "-q", "-b", "feature")
    repo.commit("change ops", CALC_FEATURE)
    repo.write({"src/calc/consts.py": b"FACTOR = 1000\n"})
    return repo
