"""The order in which questions were examined for labels: a seeded shuffle of all ids
(both halves), so the labelled subset is a random one, not a hand-picked one.

    python benchmarks/safety/label_order.py [--show N] [--start K]
"""
import argparse
import ast
import json
import random
from pathlib import Path

HERE = Path(__file__).resolve().parent
SEED = 20261129


def questions():
    out = []
    for h in ("dev", "heldout"):
        for raw in (HERE / f"questions-{h}.unlabelled.jsonl").read_text().splitlines():
            r = json.loads(raw)
            r["half"] = h
            out.append(r)
    return out


def order():
    qs = questions()
    rng = random.Random(f"{SEED}:label-order")
    idx = list(range(len(qs)))
    rng.shuffle(idx)
    return [qs[i] for i in idx]


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--show", type=int, default=5)
    ap.add_argument("--start", type=int, default=0)
    ap.add_argument("--ctx", type=int, default=60)
    a = ap.parse_args()
    for k, q in enumerate(order()[a.start:a.start + a.show], a.start):
        lines = q["module"].splitlines()
        tree = ast.parse(q["module"])
        node = None
        for n in ast.walk(tree):
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) \
                    and n.name == q["entry"].split(".")[-1] \
                    and n.lineno <= q["line"] <= n.end_lineno:
                node = n
        lo = node.lineno if node else q["line"] - 10
        hi = node.end_lineno if node else q["line"] + 5
        if hi - lo > a.ctx:
            lo = max(lo, q["line"] - a.ctx * 2 // 3)
            hi = min(hi, q["line"] + a.ctx // 3)
        print(f"#### [{k}] {q['id']}  entry={q['entry']}  {q['rule']}: {q['message'][:300]}")
        for i in range(lo, hi + 1):
            print(f"{'>>' if i == q['line'] else '  '}{i:5d} {lines[i-1]}")
