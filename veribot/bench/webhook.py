"""Webhook acknowledgement latency: bursts of signed deliveries against a real `veribot serve`.

Starts ``veribot serve`` (the production path: the Flask app under waitress) as its own
process on a free 127.0.0.1 port, with a throw-away data directory, so the job queue is a
real SqliteHuey file and the delivery store a real SQLite file. Then it sends ``rounds``
bursts of ``deliveries`` concurrent POSTs, each a real GitHub example payload (cycled from
``--payloads``), signed with the server's secret, with its own ``X-GitHub-Delivery`` id, on
a fresh connection. Latency is measured per request from the connect to the last byte of
the answer; a request that gets no answer within ``--timeout`` counts as status 0. The
server is stopped at the end, whatever happens; nothing leaves the loopback interface.

Prints p50, p99 and max latency overall and per status code, and the count of non-2xx
answers. Run: ``veribot bench-webhook`` or ``python -m veribot.bench.webhook``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import secrets
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

DEFAULT_PAYLOADS = Path(__file__).resolve().parents[2] / "tests" / "fakes" / "webhooks"
STARTUP_TIMEOUT_S = 30.0


class BenchError(Exception):
    """The benchmark cannot run (no payloads, the server did not start); says why."""


@dataclass(frozen=True)
class BenchConfig:
    """What to send: ``rounds`` bursts of ``deliveries`` concurrent signed requests."""

    deliveries: int = 50
    rounds: int = 10
    threads: int = 8  # the server's request threads (`veribot serve --threads`)
    payloads: Path = DEFAULT_PAYLOADS
    timeout_s: float = 10.0


@dataclass(frozen=True)
class Delivery:
    """One signed request, built before the clock starts."""

    event: str
    body: bytes
    headers: tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class Sample:
    """What one request got, and how long it took."""

    event: str
    status: int  # 0: no answer (timeout or connection error)
    latency_s: float


@dataclass(frozen=True)
class BenchResult:
    """Every request's sample, in the order they were sent."""

    config: BenchConfig
    samples: tuple[Sample, ...]
    elapsed_s: float

    @property
    def non_2xx(self) -> int:
        """Requests answered with anything but 2xx, or not answered."""
        return sum(1 for s in self.samples if not 200 <= s.status < 300)


def percentile(values: Sequence[float], p: float) -> float:
    """Nearest-rank percentile (``p`` in 0..100) of ``values``."""
    if not values:
        raise ValueError("no values")
    ordered = sorted(values)
    rank = max(1, math.ceil(p / 100 * len(ordered)))
    return ordered[rank - 1]


def load_payloads(folder: Path) -> list[tuple[str, bytes]]:
    """(event, raw JSON body) of each ``<event>.<action>.<n>.json`` example in ``folder``."""
    found = []
    for path in sorted(folder.glob("*.json")):
        body = path.read_bytes()
        json.loads(body)  # a broken example is an error here, not a 400 in the figures
        found.append((path.name.split(".", 1)[0], body))
    if not found:
        raise BenchError(f"no webhook example payloads (*.json) in {folder}")
    return found


def build_deliveries(
    payloads: Sequence[tuple[str, bytes]], secret: str, count: int, start: int
) -> list[Delivery]:
    """``count`` signed deliveries, cycling through ``payloads`` from index ``start``."""
    from veribot.bot.webhooks import signature  # not at import: the CLI's parser loads us

    made = []
    for i in range(count):
        event, body = payloads[(start + i) % len(payloads)]
        headers = (
            ("Content-Type", "application/json"),
            ("User-Agent", "GitHub-Hookshot/veribot-bench"),
            ("X-GitHub-Event", event),
            ("X-GitHub-Delivery", str(uuid.uuid4())),
            ("X-Hub-Signature-256", signature(secret.encode("utf-8"), body)),
        )
        made.append(Delivery(event, body, headers))
    return made


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/healthz", timeout=1) as answer:
            return bool(answer.status == 200)
    except (urllib.error.URLError, OSError):
        return False


@contextmanager
def running_server(data_dir: Path, secret: str, threads: int) -> Iterator[tuple[str, int]]:
    """``veribot serve`` on a free loopback port: yields (host, port); always stopped."""
    port = _free_port()
    env = dict(os.environ)
    env |= {"VERIBOT_WEBHOOK_SECRET": secret, "VERIBOT_DATA_DIR": str(data_dir)}
    env.pop("VERIBOT_REDIS_URL", None)  # the embedded SQLite queue
    log_path = data_dir / "serve.log"
    command = [sys.executable, "-m", "veribot.bot.cli", "serve"]
    command += ["--host", "127.0.0.1", "--port", str(port), "--threads", str(threads)]
    with log_path.open("wb") as log:
        server = subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + STARTUP_TIMEOUT_S
        while not _healthy(f"http://127.0.0.1:{port}"):
            if server.poll() is not None or time.monotonic() > deadline:
                tail = log_path.read_text(errors="replace")[-2000:]
                raise BenchError(f"veribot serve did not come up on port {port}:\n{tail}")
            time.sleep(0.05)
        yield "127.0.0.1", port
    finally:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait(timeout=10)


async def _send(host: str, port: int, delivery: Delivery, timeout: float) -> Sample:
    request = [f"POST /webhook HTTP/1.1\r\nHost: {host}:{port}\r\nConnection: close\r\n"]
    request += [f"{name}: {value}\r\n" for name, value in delivery.headers]
    request.append(f"Content-Length: {len(delivery.body)}\r\n\r\n")
    data = "".join(request).encode("latin-1") + delivery.body
    started = time.perf_counter()
    try:
        async with asyncio.timeout(timeout):
            reader, writer = await asyncio.open_connection(host, port)
            writer.write(data)
            await writer.drain()
            answer = await reader.read()  # the server closes after the answer
            writer.close()
            await writer.wait_closed()
    except (TimeoutError, OSError):
        return Sample(delivery.event, 0, time.perf_counter() - started)
    elapsed = time.perf_counter() - started
    status_line = answer.split(b"\r\n", 1)[0].split()
    status = int(status_line[1]) if len(status_line) >= 2 and status_line[1].isdigit() else 0
    return Sample(delivery.event, status, elapsed)


async def _burst(host: str, port: int, batch: Sequence[Delivery], timeout: float) -> list[Sample]:
    return list(await asyncio.gather(*(_send(host, port, d, timeout) for d in batch)))


def run(config: BenchConfig) -> BenchResult:
    """Start the server, send the bursts, stop the server; the samples of every request."""
    payloads = load_payloads(config.payloads)
    secret = secrets.token_hex(16)
    samples: list[Sample] = []
    with (
        tempfile.TemporaryDirectory(prefix="veribot-bench-webhook-") as data_dir,
        running_server(Path(data_dir), secret, config.threads) as (host, port),
    ):
        started = time.perf_counter()
        for round_number in range(config.rounds):
            first = round_number * config.deliveries
            batch = build_deliveries(payloads, secret, config.deliveries, first)
            samples += asyncio.run(_burst(host, port, batch, config.timeout_s))
        elapsed = time.perf_counter() - started
    return BenchResult(config, tuple(samples), elapsed)


def _line(label: str, samples: Sequence[Sample]) -> str:
    ms = [s.latency_s * 1000 for s in samples]
    return (
        f"{label:<10} n={len(ms):<5} p50 {percentile(ms, 50):7.1f} ms   "
        f"p99 {percentile(ms, 99):7.1f} ms   max {max(ms):7.1f} ms"
    )


def summary(result: BenchResult) -> str:
    """The printed report: latency overall and per status code, and the non-2xx count."""
    config = result.config
    total = len(result.samples)
    lines = [
        f"webhook acknowledgement latency: {total} signed deliveries "
        f"({config.rounds} rounds x {config.deliveries} concurrent) to veribot serve "
        f"(waitress, {config.threads} threads, SqliteHuey queue) on 127.0.0.1",
        _line("all", result.samples),
    ]
    for status in sorted({s.status for s in result.samples}):
        lines.append(_line(f"status {status}", [s for s in result.samples if s.status == status]))
    lines.append(f"non-2xx: {result.non_2xx}")
    lines.append(f"wall time {result.elapsed_s:.2f} s ({total / result.elapsed_s:.0f} requests/s)")
    return "\n".join(lines)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The benchmark's options (shared by ``veribot bench-webhook`` and ``-m``)."""

    def positive(text: str) -> int:
        value = int(text)
        if value < 1:
            raise argparse.ArgumentTypeError(f"must be at least 1: {text!r}")
        return value

    defaults = BenchConfig()
    parser.add_argument(
        "--deliveries",
        type=positive,
        default=defaults.deliveries,
        help=f"concurrent deliveries per round (default {defaults.deliveries})",
    )
    parser.add_argument(
        "--rounds", type=positive, default=defaults.rounds, help="bursts sent one after another"
    )
    parser.add_argument(
        "--threads", type=positive, default=defaults.threads, help="the server's request threads"
    )
    parser.add_argument(
        "--payloads",
        type=Path,
        default=defaults.payloads,
        help="folder of GitHub example payloads, <event>.<action>.<n>.json",
    )
    parser.add_argument(
        "--timeout", type=float, default=defaults.timeout_s, help="seconds per request"
    )


def main(args: argparse.Namespace) -> int:
    """Run the benchmark and print its summary; 0 when every delivery got a 2xx, else 1."""
    config = BenchConfig(
        deliveries=args.deliveries,
        rounds=args.rounds,
        threads=args.threads,
        payloads=args.payloads,
        timeout_s=args.timeout,
    )
    try:
        result = run(config)
    except BenchError as error:
        sys.stderr.write(f"veribot bench-webhook: error: {error}\n")
        return 2
    sys.stdout.write(summary(result) + "\n")
    return 0 if result.non_2xx == 0 else 1


if __name__ == "__main__":
    parser = argparse.ArgumentParser(prog="python -m veribot.bench.webhook", description=__doc__)
    add_arguments(parser)
    sys.exit(main(parser.parse_args()))
