"""What the job queue keeps beside huey's queue: leases of running jobs, and entries that expire.

huey takes a task off the queue when a worker starts it, so a worker that dies mid-job
(SIGKILL, out of memory, a lost machine) would take the job with it. A running job therefore
holds a :class:`Lease` on its pull request, which carries the job itself and lapses unless
its worker renews it (the heartbeat); a live worker finds lapsed leases
(:meth:`JobState.lapsed`), takes them (:meth:`JobState.take`, which only one worker wins)
and queues their jobs again. A lease also keeps a pull request's jobs one at a time: it is
granted only while no live lease on the same name exists.

Entries (:meth:`JobState.put`) are bytes with a time to live: the newest head of each pull
request, and the results of a review not yet all posted. Nothing is kept longer than it is
read.

Two stores behind one interface, beside the queue they serve: :class:`SqliteJobState` in
the queue's SQLite file (synchronous=FULL: what is written survives a power loss), and
:class:`RedisJobState` on the queue's Redis server (the leases' time is the server's, so
workers on several machines agree).
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable, Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from veribot.bot.config import private_file


@dataclass(frozen=True)
class Lease:
    """A running job's hold on ``name`` (its pull request), granted to ``holder``, one run."""

    name: str
    holder: str  # unique per run
    worker: str  # which process runs it (host and pid), for the log
    job: bytes  # the job, serialised: what to run again if the holder dies


class JobState(Protocol):
    """Leases and expiring entries shared by every worker of one queue."""

    def claim(self, lease: Lease, ttl: float) -> bool:
        """Grant ``lease`` for ``ttl`` seconds unless a live lease on its name exists."""
        ...

    def renew(self, lease: Lease, ttl: float) -> bool:
        """Extend ``lease`` by ``ttl`` from now; False if it lapsed or was taken."""
        ...

    def release(self, lease: Lease) -> None:
        """Give ``lease`` up (its job ended, or was queued again)."""
        ...

    def leases(self) -> list[Lease]:
        """Every lease held or lapsed but not yet taken."""
        ...

    def lapsed(self) -> list[Lease]:
        """The leases whose holders stopped renewing them."""
        ...

    def take(self, lease: Lease, ttl: float) -> bool:
        """Hold a lapsed ``lease`` for ``ttl`` seconds to queue its job again: True for
        exactly one caller, who then queues the job and releases the lease. A caller that
        stops in between leaves it to lapse again and be taken by another: a job is never
        lost between the lease and the queue."""
        ...

    def put(self, key: str, value: bytes, ttl: float) -> None: ...

    def get(self, key: str) -> bytes | None: ...

    def delete(self, key: str) -> None: ...

    def count(self) -> int:
        """How many entries (not leases) are kept."""
        ...


class SqliteJobState:
    """:class:`JobState` in tables of the queue's SQLite file."""

    def __init__(self, path: Path, *, clock: Callable[[], float] = time.time) -> None:
        self.path = private_file(path)
        self.clock = clock
        with self._db() as db:
            db.execute(
                "CREATE TABLE IF NOT EXISTS veribot_leases (holder TEXT PRIMARY KEY, "
                "name TEXT NOT NULL, worker TEXT NOT NULL, job BLOB NOT NULL, "
                "expires_at REAL NOT NULL)"
            )
            db.execute("CREATE INDEX IF NOT EXISTS veribot_leases_name ON veribot_leases (name)")
            db.execute(
                "CREATE TABLE IF NOT EXISTS veribot_entries (key TEXT PRIMARY KEY, "
                "value BLOB NOT NULL, expires_at REAL NOT NULL)"
            )
            db.execute(
                "CREATE INDEX IF NOT EXISTS veribot_entries_expiry ON veribot_entries (expires_at)"
            )

    @contextmanager
    def _db(self, write: bool = False) -> Iterator[sqlite3.Connection]:
        with closing(sqlite3.connect(self.path, timeout=30, isolation_level=None)) as db:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=FULL")
            if not write:
                yield db
                return
            db.execute("BEGIN IMMEDIATE")
            try:
                yield db
            except BaseException:
                db.execute("ROLLBACK")
                raise
            db.execute("COMMIT")

    def claim(self, lease: Lease, ttl: float) -> bool:
        now = self.clock()
        with self._db(write=True) as db:
            live = db.execute(
                "SELECT 1 FROM veribot_leases WHERE name = ? AND expires_at >= ?",
                (lease.name, now),
            ).fetchone()
            if live:
                return False
            db.execute(
                "INSERT INTO veribot_leases VALUES (?, ?, ?, ?, ?)",
                (lease.holder, lease.name, lease.worker, lease.job, now + ttl),
            )
            return True

    def renew(self, lease: Lease, ttl: float) -> bool:
        now = self.clock()
        with self._db(write=True) as db:
            cursor = db.execute(
                "UPDATE veribot_leases SET expires_at = ? WHERE holder = ? AND expires_at >= ?",
                (now + ttl, lease.holder, now),
            )
            return cursor.rowcount == 1

    def release(self, lease: Lease) -> None:
        with self._db(write=True) as db:
            db.execute("DELETE FROM veribot_leases WHERE holder = ?", (lease.holder,))

    def _select(self, where: str = "", *args: Any) -> list[Lease]:
        with self._db() as db:
            rows = db.execute(
                f"SELECT name, holder, worker, job FROM veribot_leases {where}", args
            ).fetchall()
        return [Lease(str(n), str(h), str(w), bytes(j)) for n, h, w, j in rows]

    def leases(self) -> list[Lease]:
        return self._select()

    def lapsed(self) -> list[Lease]:
        return self._select("WHERE expires_at < ?", self.clock())

    def take(self, lease: Lease, ttl: float) -> bool:
        now = self.clock()
        with self._db(write=True) as db:
            cursor = db.execute(
                "UPDATE veribot_leases SET expires_at = ? WHERE holder = ? AND expires_at < ?",
                (now + ttl, lease.holder, now),
            )
            return cursor.rowcount == 1

    def put(self, key: str, value: bytes, ttl: float) -> None:
        now = self.clock()
        with self._db(write=True) as db:
            db.execute("DELETE FROM veribot_entries WHERE expires_at < ?", (now,))
            db.execute(
                "INSERT OR REPLACE INTO veribot_entries VALUES (?, ?, ?)", (key, value, now + ttl)
            )

    def get(self, key: str) -> bytes | None:
        with self._db() as db:
            row = db.execute(
                "SELECT value FROM veribot_entries WHERE key = ? AND expires_at >= ?",
                (key, self.clock()),
            ).fetchone()
        return bytes(row[0]) if row else None

    def delete(self, key: str) -> None:
        with self._db(write=True) as db:
            db.execute("DELETE FROM veribot_entries WHERE key = ?", (key,))

    def count(self) -> int:
        with self._db(write=True) as db:
            db.execute("DELETE FROM veribot_entries WHERE expires_at < ?", (self.clock(),))
            (n,) = db.execute("SELECT COUNT(*) FROM veribot_entries").fetchone()
        return int(n)


# A lease is a key holding its holder's id, expiring on the server; its record (name,
# worker, job) sits in one hash by holder, so lapsed leases are the records whose key no
# longer names their holder.
_CLAIM = """
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  redis.call('HSET', KEYS[2], ARGV[1], ARGV[3])
  return 1
end
return 0
"""
_RENEW = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0
"""
_RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('DEL', KEYS[1])
end
redis.call('DEL', KEYS[3])
return redis.call('HDEL', KEYS[2], ARGV[1])
"""
# A lapsed lease is taken by a key of its own (its name's key may hold a newer run), which
# keeps it out of `lapsed` until it expires; its record stays until the taker releases it.
_TAKE = """
if redis.call('GET', KEYS[1]) ~= ARGV[1] and redis.call('HEXISTS', KEYS[2], ARGV[1]) == 1 then
  if redis.call('SET', KEYS[3], ARGV[1], 'NX', 'PX', ARGV[2]) then
    return 1
  end
end
return 0
"""


class RedisJobState:
    """:class:`JobState` on a Redis server (``client`` from the ``redis`` package)."""

    PREFIX = "veribot:"

    def __init__(self, client: Any) -> None:
        self.redis = client
        self._records = self.PREFIX + "leases"
        self._claim = client.register_script(_CLAIM)
        self._renew = client.register_script(_RENEW)
        self._release = client.register_script(_RELEASE)
        self._take = client.register_script(_TAKE)

    def _key(self, name: str) -> str:
        return f"{self.PREFIX}lease:{name}"

    @staticmethod
    def _ms(ttl: float) -> int:
        return max(1, int(ttl * 1000))

    def claim(self, lease: Lease, ttl: float) -> bool:
        record = _pack(lease)
        keys = [self._key(lease.name), self._records]
        return bool(self._claim(keys=keys, args=[lease.holder, self._ms(ttl), record]))

    def renew(self, lease: Lease, ttl: float) -> bool:
        keys = [self._key(lease.name)]
        return bool(self._renew(keys=keys, args=[lease.holder, self._ms(ttl)]))

    def _taken(self, holder: str) -> str:
        return f"{self.PREFIX}taken:{holder}"

    def release(self, lease: Lease) -> None:
        self._release(keys=[self._key(lease.name), self._records, self._taken(lease.holder)],
                      args=[lease.holder])

    def leases(self) -> list[Lease]:
        return [_unpack(v) for v in self.redis.hgetall(self._records).values()]

    def lapsed(self) -> list[Lease]:
        found = self.leases()
        if not found:
            return []
        holders = self.redis.mget([self._key(lease.name) for lease in found])
        taken = self.redis.mget([self._taken(lease.holder) for lease in found])
        return [
            lease
            for lease, holder, taker in zip(found, holders, taken, strict=True)
            if (holder is None or holder.decode() != lease.holder) and taker is None
        ]

    def take(self, lease: Lease, ttl: float) -> bool:
        keys = [self._key(lease.name), self._records, self._taken(lease.holder)]
        return bool(self._take(keys=keys, args=[lease.holder, self._ms(ttl)]))

    def put(self, key: str, value: bytes, ttl: float) -> None:
        self.redis.set(f"{self.PREFIX}entry:{key}", value, px=self._ms(ttl))

    def get(self, key: str) -> bytes | None:
        value = self.redis.get(f"{self.PREFIX}entry:{key}")
        return bytes(value) if value is not None else None

    def delete(self, key: str) -> None:
        self.redis.delete(f"{self.PREFIX}entry:{key}")

    def count(self) -> int:
        return sum(1 for _ in self.redis.scan_iter(match=f"{self.PREFIX}entry:*", count=500))


def _pack(lease: Lease) -> bytes:
    fields = (lease.name, lease.holder, lease.worker)
    return b"\x00".join(f.encode() for f in fields) + b"\x00" + lease.job


def _unpack(record: bytes) -> Lease:
    name, holder, worker, job = record.split(b"\x00", 3)
    return Lease(name.decode(), holder.decode(), worker.decode(), job)
