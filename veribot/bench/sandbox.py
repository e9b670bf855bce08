"""Per-child overhead of the sandbox: ``python -m veribot.bench.sandbox [--rounds N]``.

Times, on this machine, (1) one ``run_calls`` child (start-up, isolation, import of a
tiny module, one call), (2) the extra cost of a call in a child already running (100
calls in one child), and (3) one ``run_script`` child. Prints the median of ``--rounds``.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

from veribot.checks.sandbox import run_calls, run_script

SOURCE = "def f(x):\n    return x * 2\n"


def _fastest_s(action: Callable[[], object], rounds: int) -> float:
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        action()
        times.append(time.perf_counter() - start)
    return min(times)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=20)
    args = parser.parse_args(argv)
    one = _fastest_s(lambda: run_calls(SOURCE, "f", [["1"]]), args.rounds)
    many = _fastest_s(lambda: run_calls(SOURCE, "f", [[str(i)] for i in range(100)]),
                     args.rounds)
    script = _fastest_s(lambda: run_script("print(1)"), args.rounds)
    print(f"run_calls, 1 call (one child):     {one * 1000:7.1f} ms")
    print(f"run_calls, 100 calls (one child):  {many * 1000:7.1f} ms "
          f"({(many - one) / 99 * 1000:.2f} ms per extra call)")
    print(f"run_script, print(1):              {script * 1000:7.1f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
