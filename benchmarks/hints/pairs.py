"""Loop pairs where the engine stops at the loop bound and a hint can finish the proof.

Each pair is (id, label, entry, before, after). The ``equivalent`` pairs are equivalent by
construction, and their loops run in lock step, but the relation between their variables
is not one of the engine's own candidate equalities (``i + j == n``, ``acc2 == 2 * acc``,
``t == -s``, an offset counter), or a helper is an arbitrary function without a lemma.
The ``different`` pairs differ only beyond the unrolling bound (or in a way random testing
rarely draws), so a plausible-but-wrong hint is their only way to a wrong "verified":
``python -m veribot.bench.hints benchmarks/hints/python.jsonl`` must report WRONG 0.
Run ``python benchmarks/hints/pairs.py`` to rewrite ``python.jsonl`` beside it.
"""

# ruff: noqa: E501  (pairs are code written out on one line)
from __future__ import annotations

import json
from pathlib import Path

D, E = "different", "equivalent"

UP = "def total(n: int) -> int:\n    s = 0\n    i = 0\n    while i < n:\n        s += i\n        i += 1\n    return s\n"
DOWN = "def total(n: int) -> int:\n    s = 0\n    j = n\n    while j > 0:\n        j -= 1\n        s += n - 1 - j\n    return s\n"
SUM = "def acc(xs: list[int]) -> int:\n    a = 0\n    for x in xs:\n        a += x\n    return a\n"
SQ = "def sq(x: int) -> int:\n    return x * x\n\n\n"

PAIRS: list[tuple[str, str, str, str, str]] = [
    ("count-down", E, "total", UP, DOWN),
    ("count-down/far", D, "total", UP,  # total(41)
     DOWN.replace("        s += n - 1 - j\n", "        s += n - 1 - j\n        if j == 40:\n            s += 1\n")),
    ("count-down/off-by-one-far", D, "total", UP,  # total(60)
     DOWN.replace("s += n - 1 - j", "s += n - 1 - j if n < 60 else n - j")),
    ("doubled", E, "acc", SUM,
     "def acc(xs: list[int]) -> int:\n    b = 0\n    for x in xs:\n        b += 2 * x\n    return b // 2\n"),
    ("doubled/divided-wrong", D, "acc", SUM,  # acc([77])
     "def acc(xs: list[int]) -> int:\n    b = 0\n    for x in xs:\n        b += 2 * x + (1 if x == 77 else 0)\n    return b // 2 + (1 if b % 2 else 0)\n"),
    ("negated", E, "acc", SUM,
     "def acc(xs: list[int]) -> int:\n    t = 0\n    for x in xs:\n        t -= x\n    return -t\n"),
    ("negated/far", D, "acc", SUM,  # a list of 30 items
     "def acc(xs: list[int]) -> int:\n    t = 0\n    c = 0\n    for x in xs:\n        t -= x\n        c += 1\n        if c == 30:\n            t -= 1\n    return -t\n"),
    ("offset", E, "total",
     UP,
     "def total(n: int) -> int:\n    s = 0\n    i = 1\n    while i <= n:\n        s += i - 1\n        i += 1\n    return s\n"),
    ("offset/far", D, "total", UP,  # total(51)
     "def total(n: int) -> int:\n    s = 0\n    i = 1\n    while i <= n:\n        s += i - 1\n        i += 1\n        if i == 50:\n            s -= 1\n    return s\n"),
    ("lemma/square", E, "f",
     SQ + "def f(x: int) -> int:\n    return max(sq(x + 1), 0)\n",
     SQ + "def f(x: int) -> int:\n    return sq(x + 1)\n"),
    ("lemma/shifted", D, "f",  # f(-1): sq(0) - 1 == -1
     SQ + "def f(x: int) -> int:\n    return max(sq(x + 1) - 1, 0)\n",
     SQ + "def f(x: int) -> int:\n    return sq(x + 1) - 1\n"),
]


def records() -> list[dict[str, object]]:
    out = []
    for pair_id, label, entry, before, after in PAIRS:
        compile(before, pair_id, "exec")
        compile(after, pair_id, "exec")
        out.append({"id": f"hints/{pair_id}", "language": "python", "label": label,
                    "entry": entry, "before": before, "after": after})
    return out


if __name__ == "__main__":
    target = Path(__file__).with_name("python.jsonl")
    with target.open("w", encoding="utf-8") as fh:
        for record in records():
            fh.write(json.dumps(record) + "\n")
    print(f"wrote {len(PAIRS)} pairs to {target}")
