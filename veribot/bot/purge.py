"""Forget a removed installation: its repositories' git caches and the LLM cache.

When an account uninstalls the App (``installation`` event, action ``deleted``), nothing
of its code may stay in the data directory: the git cache folders of its repositories
(``repos/OWNER__NAME``, every one of the account's and every one the payload lists) are
deleted, and so is every row of the LLM cache, whose rows (keyed by a digest of the
request) name no installation, so that only clearing it all removes the account's code.
The deliveries table holds only delivery ids and times, no content.
"""

from __future__ import annotations

import logging
import shutil
import sqlite3
from collections.abc import Mapping
from contextlib import closing, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from veribot.bot.config import Settings

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Purged:
    """What was removed."""

    repositories: tuple[str, ...]  # git cache folders deleted
    llm_rows: int


def purge_installation(settings: Settings, payload: Mapping[str, Any]) -> Purged:
    """Delete what the data directory holds of the installation ``payload`` describes."""
    cache = settings.data_dir / "repos"
    names = set()
    account = payload.get("installation", {}).get("account", {}).get("login")
    if isinstance(account, str) and account and cache.is_dir():
        names |= {p.name for p in cache.iterdir() if p.name.startswith(f"{account}__")}
    for repo in payload.get("repositories") or ():
        full = repo.get("full_name") if isinstance(repo, Mapping) else None
        if isinstance(full, str) and "/" in full:
            names.add(full.replace("/", "__"))
    removed = []
    for name in sorted(names):
        folder = cache / name
        if name and "/" not in name and name not in (".", "..") and folder.is_dir():
            shutil.rmtree(folder)
            removed.append(name.replace("__", "/", 1))
    rows = _clear_llm_cache(settings.data_dir / "llm.sqlite3")
    _clear_hints(settings.data_dir / "hints.sqlite3", account)
    log.info("installation removed: purged %d repositories and %d LLM cache rows",
             len(removed), rows)
    return Purged(tuple(removed), rows)


def _clear_hints(path: Path, account: object) -> None:
    """The account's proven hints (the archive keeps them per ``owner/name``)."""
    if not isinstance(account, str) or not account or not path.is_file():
        return
    with closing(sqlite3.connect(path, timeout=30.0)) as db, db, suppress(sqlite3.OperationalError):
        db.execute("DELETE FROM hints WHERE substr(repo, 1, ?) = ?",
                   (len(account) + 1, f"{account}/"))


def _clear_llm_cache(path: Path) -> int:
    if not path.is_file():
        return 0
    with closing(sqlite3.connect(path, timeout=30.0)) as db, db:
        rows = 0
        for table in ("llm_answers", "llm_cache"):  # today's table, and the one before it
            with suppress(sqlite3.OperationalError):  # no such table
                rows += db.execute(f"DELETE FROM {table}").rowcount
        return rows
