"""Adversarial pairs written against the definition of "equivalent" (docs/equivalence.md).

Each pair is (id, label, entry, before, after). ``different`` pairs behave differently on
some input the annotations allow (the comment says which); ``equivalent`` pairs do not.
Run ``python benchmarks/adversarial/pairs.py`` to rewrite ``python.jsonl`` beside it, then
``veribot bench benchmarks/adversarial/python.jsonl``: a ``verified`` on a ``different``
pair is a WRONG result, and a refutation of an ``equivalent`` pair is one too (these pairs
are equivalent by construction, not by tests).
"""

# ruff: noqa: E501  (pairs are code written out on one line)
from __future__ import annotations

import json
from pathlib import Path

D, E = "different", "equivalent"

PAIRS: list[tuple[str, str, str, str, str]] = [
    # -- the signature -------------------------------------------------------------------
    ("sig/default-changed", D, "scale",  # scale(1)
     "def scale(x: int, k: int = 2) -> int:\n    return x * k\n",
     "def scale(x: int, k: int = 3) -> int:\n    return x * k\n"),
    ("sig/renamed-param", D, "inc",  # inc(x=1)
     "def inc(x: int) -> int:\n    return x + 1\n",
     "def inc(y: int) -> int:\n    return y + 1\n"),
    ("sig/swapped-params", D, "sub",  # sub(a=1, b=0)
     "def sub(a: int, b: int) -> int:\n    return a - b\n",
     "def sub(b: int, a: int) -> int:\n    return b - a\n"),
    ("sig/shared-default", D, "collect",  # two calls
     "def collect(x: int, acc: list[int] | None = None) -> list[int]:\n"
     "    if acc is None:\n        acc = []\n    acc.append(x)\n    return acc\n",
     "def collect(x: int, acc: list[int] = []) -> list[int]:\n"
     "    acc.append(x)\n    return acc\n"),
    ("sig/kwonly-default", D, "f",
     "def f(x: int, *, k: int = 1) -> int:\n    return x + k\n",
     "def f(x: int, *, k: int = 2) -> int:\n    return x + k\n"),
    ("sig/default-none-outside-type", D, "g",  # g(1): k is None
     "def g(x: int, k: int = None) -> int:\n    if k is None:\n        return 0\n    return x + k\n",
     "def g(x: int, k: int = None) -> int:\n    if k is None:\n        return 1\n    return x + k\n"),
    ("sig/posonly-to-normal", D, "h",  # h(x=1) raises before
     "def h(x: int, /) -> int:\n    return x\n",
     "def h(x: int) -> int:\n    return x\n"),
    ("sig/same-defaults", E, "scale",
     "def scale(x: int, k: int = 2) -> int:\n    return x * k\n",
     "def scale(x: int, k: int = 2) -> int:\n    return k * x\n"),
    # -- the domain: typing rules ------------------------------------------------------------
    ("domain/int-accepts-bool", D, "ident",  # ident(True)
     "def ident(x: int) -> int:\n    return x\n",
     "def ident(x: int) -> int:\n    return x + 0\n"),
    ("domain/int-accepts-bool-str", D, "show",  # show(True)
     "def show(x: int) -> str:\n    return str(x)\n",
     "def show(x: int) -> str:\n    return str(x * 1)\n"),
    ("domain/float-accepts-int", D, "half",  # half(1) -> 1 vs 1.0
     "def half(x: float) -> float:\n    return x\n",
     "def half(x: float) -> float:\n    return x * 1.0\n"),
    ("domain/float-accepts-int-big", D, "twice",  # twice(2**60+1)
     "def twice(x: float) -> float:\n    return x + x\n",
     "def twice(x: float) -> float:\n    return 2.0 * x\n"),
    ("domain/list-int-bool-element", D, "first",  # first([True])
     "def first(xs: list[int]) -> int:\n    return xs[0]\n",
     "def first(xs: list[int]) -> int:\n    return xs[0] + 0\n"),
    ("domain/optional-indexing", D, "head",  # head(None)
     "from typing import Optional\n\ndef head(xs: Optional[list[int]]) -> int:\n"
     "    if not xs:\n        return 0\n    return xs[0]\n",
     "from typing import Optional\n\ndef head(xs: Optional[list[int]]) -> int:\n"
     "    if len(xs) == 0:\n        return 0\n    return xs[0]\n"),
    ("domain/sequence-tuple", D, "last",  # last((1,)) tuple has no pop
     "from typing import Sequence\n\ndef last(xs: Sequence[int]) -> int:\n    return xs[-1]\n",
     "from typing import Sequence\n\ndef last(xs: Sequence[int]) -> int:\n"
     "    ys = xs\n    return ys.pop()\n"),
    ("domain/sequence-str", D, "count_a",  # count_a("aa")
     "from typing import Sequence\n\ndef count_a(xs: Sequence[str]) -> int:\n"
     "    return len([x for x in xs if x == 'a'])\n",
     "from typing import Sequence\n\ndef count_a(xs: Sequence[str]) -> int:\n"
     "    return len(xs) if xs == ['a'] * len(xs) else 0\n"),
    ("domain/bool-and", D, "both",  # both(True, True) True vs 1
     "def both(a: int, b: int) -> int:\n    return a & b\n",
     "def both(a: int, b: int) -> int:\n    return (a & b) + 0\n"),
    ("domain/int-equiv", E, "double",
     "def double(x: int) -> int:\n    return x + x\n",
     "def double(x: int) -> int:\n    return 2 * x\n"),
    # -- strings ---------------------------------------------------------------------------
    ("str/u-escape", D, "mark",
     "def mark(s: str) -> str:\n    return s + '\\u00e9'\n",
     "def mark(s: str) -> str:\n    return s + '\\u00e8'\n"),
    ("str/U-escape-len", D, "width",
     "def width(s: str) -> int:\n    return len(s + '\\U0001F600')\n",
     "def width(s: str) -> int:\n    return len(s) + 2\n"),
    ("str/N-escape", D, "sign",
     "def sign(s: str) -> bool:\n    return s == '\\N{GREEK SMALL LETTER ALPHA}'\n",
     "def sign(s: str) -> bool:\n    return s == '\\N{GREEK SMALL LETTER BETA}'\n"),
    ("str/astral-compare", D, "big",  # big('\U00030000')
     "def big(s: str) -> bool:\n    return s > '\\U0002FFFF'\n",
     "def big(s: str) -> bool:\n    return False\n"),
    ("str/astral-slice", D, "cut",
     "def cut(s: str) -> str:\n    t = '\\U0001F600x'\n    return t[1:]\n",
     "def cut(s: str) -> str:\n    return 'x'\n" .replace("'x'", "'\\udE00x'")),
    ("str/escape-equiv", E, "mark",
     "def mark(s: str) -> str:\n    return s + '\\u00e9'\n",
     "def mark(s: str) -> str:\n    return s + '\\xe9'\n"),
    # -- sequences -------------------------------------------------------------------------
    ("seq/extend-str", D, "grow",  # grow([], 'ab'): ['a','b'] vs ['ab']
     "def grow(xs: list[str], s: str) -> list[str]:\n    xs.extend(s)\n    return xs\n",
     "def grow(xs: list[str], s: str) -> list[str]:\n    xs.append(s)\n    return xs\n"),
    ("seq/iadd-str", D, "grow2",
     "def grow2(xs: list[str], s: str) -> int:\n    xs += s\n    return len(xs)\n",
     "def grow2(xs: list[str], s: str) -> int:\n    return len(xs) + 1\n"),
    ("seq/tuple-repeat-neg", D, "rep",  # rep(-1): () both... n=-1 -> () vs raises
     "def rep(n: int) -> tuple[int, ...]:\n    return (1, 2) * n\n",
     "def rep(n: int) -> tuple[int, ...]:\n    return tuple([1, 2] * n) if n >= 0 else (1,)\n"),
    ("seq/pop-huge", D, "popit",  # popit([1], 2**64)
     "def popit(xs: list[int], i: int) -> int:\n    if i >= len(xs):\n        return -1\n"
     "    return xs.pop(i)\n",
     "def popit(xs: list[int], i: int) -> int:\n    if i >= len(xs):\n        return -1\n"
     "    if i < -len(xs):\n        return -2\n    return xs.pop(i)\n"),
    ("seq/insert-huge", D, "put",  # insert clamps
     "def put(xs: list[int], i: int) -> list[int]:\n    xs.insert(i, 7)\n    return xs\n",
     "def put(xs: list[int], i: int) -> list[int]:\n    if i > len(xs):\n        return xs\n"
     "    xs.insert(i, 7)\n    return xs\n"),
    ("seq/range-len-overflow", D, "span",  # span(2**63)
     "def span(n: int) -> int:\n    return len(range(n))\n",
     "def span(n: int) -> int:\n    return max(n, 0)\n"),
    ("seq/list-repeat-equiv", E, "rep2",
     "def rep2(n: int) -> list[int]:\n    return [0] * n\n",
     "def rep2(n: int) -> list[int]:\n    return [0 for _ in range(n)]\n"),
    # -- identity before equality ----------------------------------------------------------
    ("ident/nan-in-list", D, "has",  # has(nan, [nan]) with the same object
     "def has(x: float, xs: list[float]) -> bool:\n    return x in xs\n",
     "def has(x: float, xs: list[float]) -> bool:\n    return any(y == x for y in xs)\n"),
    ("ident/nan-tuple-eq", D, "same",
     "def same(x: float) -> bool:\n    return (x,) == (x,)\n",
     "def same(x: float) -> bool:\n    return x == x\n"),
    ("ident/nan-list-count", D, "cnt",
     "def cnt(xs: list[float]) -> int:\n    return xs.count(xs[0]) if xs else 0\n",
     "def cnt(xs: list[float]) -> int:\n    return len([y for y in xs if y == xs[0]]) if xs else 0\n"),
    # -- laziness ---------------------------------------------------------------------------
    ("lazy/any-gen", D, "anyinv",  # anyinv([1, 0])
     "def anyinv(ys: list[int]) -> bool:\n    return any(1 // y for y in ys)\n",
     "def anyinv(ys: list[int]) -> bool:\n    return any([1 // y for y in ys])\n"),
    ("lazy/all-gen", D, "allinv",  # allinv([0, 0])
     "def allinv(ys: list[int]) -> bool:\n    return all(10 // y > 100 for y in ys)\n",
     "def allinv(ys: list[int]) -> bool:\n    return all([10 // y > 100 for y in ys])\n"),
    ("lazy/any-equiv", E, "anypos",
     "def anypos(ys: list[int]) -> bool:\n    return any(y > 0 for y in ys)\n",
     "def anypos(ys: list[int]) -> bool:\n    return any([y > 0 for y in ys])\n"),
    # -- the module around the function ----------------------------------------------------
    ("mod/shadowed-exception", D, "check",  # check(-1): ValueError is KeyError
     "def check(x: int) -> int:\n    if x < 0:\n        raise ValueError('neg')\n    return x\n",
     "ValueError = KeyError\n\n\ndef check(x: int) -> int:\n    if x < 0:\n"
     "        raise ValueError('neg')\n    return x\n"),
    ("mod/bad-annotation", D, "ok",
     "def ok(x: int) -> int:\n    return x\n",
     "def ok(x: int) -> 'int':\n    return x\n\n\ndef other(y: undefined_name) -> int:\n"
     "    return 0\n"),
    ("mod/kwdefaults-tamper", D, "f",
     "def f(x: int, *, k: int = 1) -> int:\n    return x + k\n",
     "def f(x: int, *, k: int = 1) -> int:\n    return x + k\n\n\nf.__kwdefaults__ = {'k': 5}\n"),
    ("mod/defaults-tamper", D, "f",
     "def f(x: int, k: int = 1) -> int:\n    return x + k\n",
     "def f(x: int, k: int = 1) -> int:\n    return x + k\n\n\nf.__defaults__ = (5,)\n"),
    ("mod/globals-tamper", D, "f",
     "K = 1\n\n\ndef f(x: int) -> int:\n    return x + K\n",
     "K = 1\n\n\ndef f(x: int) -> int:\n    return x + K\n\n\nglobals()['K'] = 2\n"),
    ("mod/star-import-after-const", D, "f",
     "pi = 3\n\n\ndef f(x: int) -> int:\n    return x + pi\n",
     "pi = 3\nfrom math import *\n\n\ndef f(x: int) -> int:\n    return x + pi\n"),
    ("mod/match-rebinds", D, "f",
     "K = 1\n\n\ndef f(x: int) -> int:\n    return x + K\n",
     "K = 1\nmatch 5:\n    case K:\n        pass\n\n\ndef f(x: int) -> int:\n    return x + K\n"),
    ("mod/class-getitem", D, "f",
     "K = 1\n\n\ndef f(x: int) -> int:\n    return x + K\n",
     "K = 1\n\n\nclass C:\n    def __class_getitem__(cls, item):\n        global K\n"
     "        K = 9\n        return cls\n\n\nC[int]\n\n\ndef f(x: int) -> int:\n"
     "    return x + K\n"),
    ("mod/init-subclass", D, "f",
     "K = 1\n\n\ndef f(x: int) -> int:\n    return x + K\n",
     "K = 1\n\n\nclass B:\n    def __init_subclass__(cls):\n        global K\n        K = 7\n\n\n"
     "class C(B):\n    pass\n\n\ndef f(x: int) -> int:\n    return x + K\n"),
    ("mod/bad-base", D, "f",
     "def f(x: int) -> int:\n    return x\n",
     "class C(3):\n    pass\n\n\ndef f(x: int) -> int:\n    return x\n"),
    ("mod/harmless-equiv", E, "f",
     "import logging\nlog = logging.getLogger(__name__)\nK = 1\n\n\ndef f(x: int) -> int:\n"
     "    return x + K\n",
     "import logging\nlog = logging.getLogger(__name__)\nK = 1\n\n\ndef f(x: int) -> int:\n"
     "    return K + x\n"),
    # -- loop induction with aliasing --------------------------------------------------------
    ("loop/alias-append", D, "total",
     "def total(xs: list[int]) -> int:\n    s = 0\n    for x in xs:\n        s += x\n    return s\n",
     "def total(xs: list[int]) -> int:\n    s = 0\n    ys = xs\n    for x in xs:\n        s += x\n"
     "        if x > 5 and len(ys) < 10:\n            ys.append(0)\n    return s\n"),
    ("loop/alias-mutate-arg", D, "zero",
     "def zero(xs: list[int]) -> int:\n    n = 0\n    for i in range(len(xs)):\n        n += 1\n"
     "    return n\n",
     "def zero(xs: list[int]) -> int:\n    n = 0\n    ys = xs\n    for i in range(len(xs)):\n"
     "        n += 1\n        ys[i] = 0\n    return n\n"),
    # -- assert ---------------------------------------------------------------------------
    ("assert/removed", D, "pos",  # differs only under -O... as written, differs on -1
     "def pos(x: int) -> int:\n    assert x >= 0\n    return x\n",
     "def pos(x: int) -> int:\n    return x\n"),
    ("assert/equiv", E, "pos",
     "def pos(x: int) -> int:\n    assert x >= 0\n    return x\n",
     "def pos(x: int) -> int:\n    assert not x < 0\n    return x\n"),
    # -- crashes ----------------------------------------------------------------------------
    ("crash/long-elif", D, "grade",
     "def grade(x: int) -> int:\n" + "".join(
         f"    {'if' if i == 0 else 'elif'} x == {i}:\n        return {i}\n" for i in range(300))
     + "    return -1\n",
     "def grade(x: int) -> int:\n" + "".join(
         f"    {'if' if i == 0 else 'elif'} x == {i}:\n        return {i if i != 150 else 0}\n"
         for i in range(300)) + "    return -1\n"),
    ("crash/huge-literal", D, "big",
     "def big(x: int) -> bool:\n    return x > " + "9" * 4000 + "\n",
     "def big(x: int) -> bool:\n    return x >= " + "9" * 4000 + "\n"),
    ("crash/huge-hex-literal", D, "big2",
     "def big2(x: int) -> int:\n    return x * 0x" + "f" * 5000 + "\n",
     "def big2(x: int) -> int:\n    return x * 0x" + "f" * 4999 + "e\n"),
    # -- refutations must be real -----------------------------------------------------------
    ("noise/random", E, "roll",
     "import random\n\n\ndef roll(x: int) -> int:\n    return x + random.randint(0, 1000)\n",
     "import random\n\n\ndef roll(x: int) -> int:\n    return random.randint(0, 1000) + x\n"),
    ("noise/time", E, "stamp",
     "import time\n\n\ndef stamp(x: int) -> float:\n    return time.time() + x\n",
     "import time\n\n\ndef stamp(x: int) -> float:\n    return x + time.time()\n"),
    ("noise/environ", E, "env",
     "import os\n\n\ndef env(x: int) -> str:\n    return os.environ.get('HOME', '') + str(x)\n",
     "import os\n\n\ndef env(x: int) -> str:\n    return os.environ.get('HOME', '') + f'{x}'\n"),
    ("noise/sleep", E, "slow",
     "import time\n\n\ndef slow(x: int) -> int:\n    return x + 1\n",
     "import time\n\n\ndef slow(x: int) -> int:\n    time.sleep(2.5)\n    return x + 1\n"),
    ("noise/big-temp", E, "fat",
     "def fat(x: int) -> int:\n    return x * 2\n",
     "def fat(x: int) -> int:\n    tmp = [0] * 60_000_000\n    return x * 2 + tmp[0]\n"),
    ("noise/scratch-file", E, "logged",
     "def logged(x: int) -> int:\n    return x - 1\n",
     "def logged(x: int) -> int:\n    with open('/tmp/veribot-scratch.log', 'a') as f:\n"
     "        f.write(str(x))\n    return x - 1\n"),
    ("noise/thread-pool", E, "pooled",
     "def pooled(x: int) -> int:\n    return x * x\n",
     "from concurrent.futures import ThreadPoolExecutor\n\n\ndef pooled(x: int) -> int:\n"
     "    with ThreadPoolExecutor(4) as pool:\n        return pool.submit(lambda: x * x).result()\n"),
]


def records() -> list[dict[str, object]]:
    out = []
    for pair_id, label, entry, before, after in PAIRS:
        compile(before, pair_id, "exec")
        compile(after, pair_id, "exec")
        out.append({"id": f"adv/{pair_id}", "language": "python", "label": label,
                    "entry": entry, "before": before, "after": after})
    return out


if __name__ == "__main__":
    target = Path(__file__).with_name("python.jsonl")
    with target.open("w", encoding="utf-8") as fh:
        for record in records():
            fh.write(json.dumps(record) + "\n")
    print(f"wrote {len(PAIRS)} pairs to {target}")
