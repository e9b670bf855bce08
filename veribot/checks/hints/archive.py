"""Proven hints kept per repository, keyed by the exact code they are about.

A hint the solver proved is stored under a key derived from the code it speaks of:

- an invariant or a correspondence: the unit's entry, both versions' function code and
  the code of every function of the module they call (transitively);
- a lemma: the helper's code and that of the functions it calls.

The code is compared as syntax trees (``pysource.code_key``: formatting and comments do
not count, everything else does). A later review of the same code finds the hints here
and does not ask the model again. Nothing here is trusted: an archived hint is proven
again, like any other, before the engine uses it (the archive saves model calls, never a
proof).

Storage: one SQLite file (``hints.sqlite3`` in the data directory), safe for several
processes (each write is one transaction).
"""

from __future__ import annotations

import ast
import hashlib
import json
import sqlite3
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path

from veribot.checks.hints.format import Hint, HintError, parse_hint
from veribot.checks.lang import pysource
from veribot.checks.lang.pymodule import Module
from veribot.checks.lang.pyprove import find_function

FILE_NAME = "hints.sqlite3"
SCHEMA_VERSION = 1
MAX_PER_KEY = 16  # the newest are kept
MAX_AGE_S = 180 * 24 * 3600.0  # a hint not stored again for this long is dropped

_SCHEMA = """
CREATE TABLE IF NOT EXISTS hints (
    repo TEXT NOT NULL,
    code_key TEXT NOT NULL,
    hint TEXT NOT NULL,
    stored REAL NOT NULL,
    PRIMARY KEY (repo, code_key, hint)
)
"""


@dataclass(frozen=True)
class UnitKeys:
    """The archive keys of one unit: its loops (invariants), and each helper (lemmas)."""

    unit: str
    helpers: tuple[tuple[str, str], ...]  # (helper name, key)

    def key_for(self, hint: Hint) -> str | None:
        """The key a proven ``hint`` is stored under (None: a lemma on another function)."""
        if hint.kind == "lemma":
            return dict(self.helpers).get(hint.function)
        return self.unit

    def all(self) -> list[str]:
        return [self.unit, *(k for _, k in self.helpers)]


def unit_keys(before: str, after: str, entry: str) -> UnitKeys | None:
    """The keys for ``entry`` in the two module sources (None if either does not parse or
    lacks the function)."""
    try:
        tree_a, tree_b = pysource.parse(before), pysource.parse(after)
    except SyntaxError:
        return None
    fn_a, fn_b = find_function(tree_a, entry), find_function(tree_b, entry)
    if fn_a is None or fn_b is None:
        return None
    module_a, module_b = Module.of(tree_a), Module.of(tree_b)
    unit = _digest("unit", entry, _closure(fn_a, module_a), _closure(fn_b, module_b))
    helpers: list[tuple[str, str]] = []
    names = _callees(fn_a, module_a) | _callees(fn_b, module_b)
    for name in sorted(names):
        fa, fb = module_a.functions.get(name), module_b.functions.get(name)
        if fa is None or fb is None or pysource.code_key(fa) != pysource.code_key(fb):
            continue  # a lemma is about a helper that is the same in both versions
        helpers.append((name, _digest("lemma", name, _closure(fa, module_a))))
    return UnitKeys(unit, tuple(helpers))


class Archive:
    """The SQLite archive of proven hints."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        with self._connect() as db:
            db.execute(_SCHEMA)

    @classmethod
    def in_data_dir(cls, data_dir: Path) -> Archive:
        return cls(data_dir / FILE_NAME)

    def lookup(self, repo: str, keys: Iterable[str]) -> list[Hint]:
        """The hints stored for any of ``keys``, oldest first, each read again (a row that
        no longer parses is skipped)."""
        wanted = list(dict.fromkeys(keys))
        if not wanted:
            return []
        marks = ",".join("?" for _ in wanted)
        with self._connect() as db:
            rows = db.execute(
                f"SELECT hint FROM hints WHERE repo = ? AND code_key IN ({marks}) "
                "ORDER BY stored, rowid", (repo, *wanted),
            ).fetchall()
        found: list[Hint] = []
        for (text,) in rows:
            try:
                found.append(parse_hint(json.loads(text)))
            except (HintError, json.JSONDecodeError):
                continue
        return found

    def store(self, repo: str, keys: UnitKeys, hints: Sequence[Hint],
              now: float | None = None) -> int:
        """Store proven ``hints`` (only what the solver checks: a hint's free-text ``why``,
        as the model or a person wrote it, is not kept); how many were new. A key keeps its
        ``MAX_PER_KEY`` newest hints, and no hint outlives ``MAX_AGE_S``."""
        now = time.time() if now is None else now
        added = 0
        with self._connect() as db:
            db.execute("DELETE FROM hints WHERE stored < ?", (now - MAX_AGE_S,))
            for hint in hints:
                key = keys.key_for(hint)
                if key is None:
                    continue
                text = json.dumps(replace(hint, why="").as_json(), sort_keys=True)
                known = db.execute(
                    "UPDATE hints SET stored = ? WHERE repo = ? AND code_key = ? AND hint = ?",
                    (now, repo, key, text)).rowcount
                if not known:
                    db.execute("INSERT INTO hints (repo, code_key, hint, stored) "
                               "VALUES (?, ?, ?, ?)", (repo, key, text, now))
                    added += 1
                db.execute(
                    "DELETE FROM hints WHERE repo = ? AND code_key = ? AND rowid NOT IN ("
                    "SELECT rowid FROM hints WHERE repo = ? AND code_key = ? "
                    "ORDER BY stored DESC, rowid DESC LIMIT ?)",
                    (repo, key, repo, key, MAX_PER_KEY),
                )
        return added

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        db = sqlite3.connect(self.path, timeout=30.0)
        try:
            with db:  # one transaction, committed or rolled back
                yield db
        finally:
            db.close()


def _digest(*parts: str) -> str:
    h = hashlib.sha256(f"v{SCHEMA_VERSION}".encode())
    for p in parts:
        h.update(b"\0" + p.encode("utf-8", errors="surrogatepass"))
    return h.hexdigest()


def _closure(fn: ast.FunctionDef, module: Module) -> str:
    """The function's code and that of every module function it reaches, and the module
    constants these read."""
    seen: dict[str, ast.FunctionDef] = {}
    stack = [fn]
    while stack:
        f = stack.pop()
        if f.name in seen and seen[f.name] is f:
            continue
        seen[f.name] = f
        stack.extend(module.functions[n] for n in _callees(f, module) if n not in seen)
    names = {n.id for f in seen.values() for n in ast.walk(f) if isinstance(n, ast.Name)}
    constants = {n: repr(module.constants[n]) for n in sorted(names & module.constants.keys())}
    return "\0".join([pysource.code_key(fn), *(pysource.code_key(seen[n]) for n in sorted(seen)
                                              if seen[n] is not fn), json.dumps(constants)])


def _callees(fn: ast.FunctionDef, module: Module) -> set[str]:
    return {n.func.id for n in ast.walk(fn)
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
            and n.func.id in module.functions}
