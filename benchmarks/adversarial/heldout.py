"""A second adversarial batch, held out while the soundness work of issue 7 was built.

Same format as ``pairs.py``. ``python benchmarks/adversarial/heldout.py`` rewrites
``heldout.jsonl`` beside it; ``veribot bench benchmarks/adversarial/heldout.jsonl`` runs it.
"""
# ruff: noqa: E501  (pairs are code written out on one line)
from __future__ import annotations

import json
from pathlib import Path

D, E = "different", "equivalent"
PAIRS: list[tuple[str, str, str, str, str]] = [
    ("sig2/added-param-default", D, "f",  # f(1, 2, 3) raises before
     "def f(a: int, b: int = 1) -> int:\n    return a + b\n",
     "def f(a: int, b: int = 1, c: int = 0) -> int:\n    return a + b + c\n"),
    ("sig2/default-int-to-float", D, "f",  # f(1): 2 vs 2.0
     "def f(a: int, b: float = 1) -> float:\n    return a + b\n",
     "def f(a: int, b: float = 1.0) -> float:\n    return a + b\n"),
    ("sig2/default-1-to-true", D, "f",  # f(): 1 vs True
     "def f(b: int = 1) -> int:\n    return b\n",
     "def f(b: int = True) -> int:\n    return b\n"),
    ("sig2/varargs-added", D, "f",  # f(1, 2)
     "def f(a: int) -> int:\n    return a\n",
     "def f(a: int, *rest: int) -> int:\n    return a\n"),
    ("sig2/kwonly-renamed", D, "f",
     "def f(a: int, *, scale: int = 1) -> int:\n    return a * scale\n",
     "def f(a: int, *, factor: int = 1) -> int:\n    return a * factor\n"),
    ("sig2/default-const-changed", D, "f",
     "K = 2\n\n\ndef f(a: int, k: int = K) -> int:\n    return a * k\n",
     "K = 3\n\n\ndef f(a: int, k: int = K) -> int:\n    return a * k\n"),
    ("sig2/annotation-only", E, "f",
     "def f(a: int, b: int = 1) -> int:\n    return a + b\n",
     "def f(a: 'int', b: 'int' = 1) -> 'int':\n    return a + b\n"),
    ("dom2/abs-bool", D, "f",  # f(True): 1 vs True
     "def f(x: int) -> int:\n    return abs(x)\n",
     "def f(x: int) -> int:\n    return x if x >= 0 else -x\n"),
    ("dom2/max-bool", D, "f",  # f(False): False vs 0
     "def f(x: int) -> int:\n    return max(x, 0)\n",
     "def f(x: int) -> int:\n    return x if x > 0 else 0\n"),
    ("dom2/float-of-int", D, "f",  # f(1): 1.0 vs 1
     "def f(x: float) -> float:\n    return float(x)\n",
     "def f(x: float) -> float:\n    return x\n"),
    ("dom2/float-int-huge", D, "f",  # f(10**400): OverflowError vs int
     "def f(x: float) -> float:\n    return x * 1.0\n",
     "def f(x: float) -> float:\n    return x * 1\n"),
    ("dom2/tuple-float-int-elem", D, "f",  # f((1,))
     "def f(t: tuple[float, ...]) -> float:\n    return t[0] if t else 0.0\n",
     "def f(t: tuple[float, ...]) -> float:\n    return t[0] * 1.0 if t else 0.0\n"),
    ("dom2/neg-bool", D, "f",  # f(True): -(-True) is 1, not True
     "def f(x: int) -> int:\n    return -(-x)\n",
     "def f(x: int) -> int:\n    return x\n"),
    ("dom2/optional-in", D, "f",  # f(None, 1)
     "from typing import Optional\n\n\ndef f(xs: Optional[list[int]], v: int) -> bool:\n"
     "    return xs is not None and v in xs\n",
     "from typing import Optional\n\n\ndef f(xs: Optional[list[int]], v: int) -> bool:\n"
     "    return v in xs\n"),
    ("dom2/optional-slice", D, "f",
     "from typing import Optional\n\n\ndef f(s: Optional[str]) -> str:\n    return (s or '')[:2]\n",
     "from typing import Optional\n\n\ndef f(s: Optional[str]) -> str:\n    return s[:2]\n"),
    ("dom2/bool-equiv", E, "f",
     "def f(x: int) -> int:\n    return x * 2\n",
     "def f(x: int) -> int:\n    return x + x\n"),
    ("str2/surrogate-pair", D, "f",
     "def f(s: str) -> bool:\n    return s == '\\U0001F600'\n",
     "def f(s: str) -> bool:\n    return s == '\\ud83d\\ude00'\n"),
    ("str2/astral-len", D, "f",  # f('\U00030000')
     "def f(s: str) -> int:\n    return len(s)\n",
     "def f(s: str) -> int:\n    return len(s) if s < '\\U00030000' else 0\n"),
    ("str2/nul", D, "f",
     "def f(s: str) -> str:\n    return s + '\\x00'\n",
     "def f(s: str) -> str:\n    return s + '\\x01'\n"),
    ("str2/astral-index", D, "f",
     "def f(s: str) -> str:\n    return '\\U00010000abc'[1]\n",
     "def f(s: str) -> str:\n    return 'a'\n" .replace("'a'", "'b'")),
    ("seq2/list-neg-repeat", D, "f",  # f([1], -1): [] vs [1]
     "def f(xs: list[int], n: int) -> list[int]:\n    return xs * n\n",
     "def f(xs: list[int], n: int) -> list[int]:\n    return xs * abs(n)\n"),
    ("seq2/insert-neg-huge", D, "f",
     "def f(xs: list[int], i: int) -> list[int]:\n    xs.insert(i, 0)\n    return xs\n",
     "def f(xs: list[int], i: int) -> list[int]:\n    if i < -len(xs):\n        return xs\n"
     "    xs.insert(i, 0)\n    return xs\n"),
    ("seq2/extend-tuple", D, "f",
     "def f(xs: list[int], t: tuple[int, ...]) -> int:\n    xs.extend(t)\n    return len(xs)\n",
     "def f(xs: list[int], t: tuple[int, ...]) -> int:\n    return len(xs) + len(t)\n"),
    ("seq2/range-huge-index", D, "f",
     "def f(n: int) -> int:\n    return range(n)[-1] if n > 0 else 0\n",
     "def f(n: int) -> int:\n    return n - 1 if n > 0 else 0\n"),
    ("seq2/index-huge", D, "f",  # f([1], -2): -1 before, IndexError after
     "def f(xs: list[int], i: int) -> int:\n    return xs[i] if -len(xs) <= i < len(xs) else -1\n",
     "def f(xs: list[int], i: int) -> int:\n    return xs[i] if i < len(xs) else -1\n"),
    ("ident2/min-nan", D, "f",
     "def f(a: float, b: float) -> float:\n    return min(a, b)\n",
     "def f(a: float, b: float) -> float:\n    return min(b, a)\n"),
    ("ident2/tuple-lt-nan", D, "f",
     "def f(x: float) -> bool:\n    return (x, 1) < (x, 2)\n",
     "def f(x: float) -> bool:\n    return x < x or (x == x and 1 < 2)\n"),
    ("ident2/list-index-nan", D, "f",
     "def f(xs: list[float]) -> int:\n    if not xs:\n        return -1\n    return xs.index(xs[-1])\n",
     "def f(xs: list[float]) -> int:\n    if not xs:\n        return -1\n"
     "    for i, y in enumerate(xs):\n        if y == xs[-1]:\n            return i\n    return -2\n"),
    ("lazy2/all-gen-raise", D, "f",
     "def f(xs: list[int]) -> bool:\n    return all(x > 0 and 100 // x > 1 for x in xs)\n",
     "def f(xs: list[int]) -> bool:\n    return all([x > 0 for x in xs]) and all([100 // x > 1 for x in xs])\n"),
    ("lazy2/any-index", D, "f",
     "def f(xs: list[int]) -> bool:\n    return any(xs[i] > 0 for i in range(len(xs) + 1))\n",
     "def f(xs: list[int]) -> bool:\n    return any([xs[i] > 0 for i in range(len(xs) + 1)])\n"),
    ("mod2/import-as", D, "f",
     "K = 1\n\n\ndef f(x: int) -> int:\n    return x + K\n",
     "K = 1\nimport math as K\n\n\ndef f(x: int) -> int:\n    return x + K\n"),
    ("mod2/for-target", D, "f",
     "K = 1\n\n\ndef f(x: int) -> int:\n    return x + K\n",
     "K = 1\nfor K in range(3):\n    pass\n\n\ndef f(x: int) -> int:\n    return x + K\n"),
    ("mod2/del-name", D, "f",
     "K = 1\n\n\ndef f(x: int) -> int:\n    return x + K\n",
     "K = 1\ndel K\n\n\ndef f(x: int) -> int:\n    return x + K\n"),
    ("mod2/aug-assign", D, "f",
     "K = 1\n\n\ndef f(x: int) -> int:\n    return x + K\n",
     "K = 1\nK += 1\n\n\ndef f(x: int) -> int:\n    return x + K\n"),
    ("mod2/try-except", D, "f",
     "K = 1\n\n\ndef f(x: int) -> int:\n    return x + K\n",
     "K = 1\ntry:\n    1 / 0\nexcept ZeroDivisionError:\n    K = 2\n\n\ndef f(x: int) -> int:\n    return x + K\n"),
    ("mod2/walrus", D, "f",
     "K = 1\n\n\ndef f(x: int) -> int:\n    return x + K\n",
     "K = 1\nprint((K := 5))\n\n\ndef f(x: int) -> int:\n    return x + K\n"),
    ("mod2/decorator-replaces", D, "f",
     "def f(x: int) -> int:\n    return x\n",
     "def deco(fn):\n    return lambda x: 0\n\n\n@deco\ndef f(x: int) -> int:\n    return x\n"),
    ("mod2/builtin-shadow", D, "f",
     "def f(xs: list[int]) -> int:\n    return len(xs)\n",
     "def len(xs):\n    return 0\n\n\ndef f(xs: list[int]) -> int:\n    return len(xs)\n"),
    ("mod2/later-rebind", D, "f",
     "K = 1\n\n\ndef f(x: int) -> int:\n    return x + K\n",
     "K = 1\n\n\ndef f(x: int) -> int:\n    return x + K\n\n\nK = 2\n"),
    ("mod2/exception-subclass", D, "f",
     "def f(x: int) -> int:\n    try:\n        return 1 // x\n    except ArithmeticError:\n        return 0\n",
     "class ArithmeticError(Exception):\n    pass\n\n\ndef f(x: int) -> int:\n    try:\n"
     "        return 1 // x\n    except ArithmeticError:\n        return 0\n"),
    ("mod2/equiv-docstring", E, "f",
     "def f(x: int) -> int:\n    return x + 1\n",
     "def f(x: int) -> int:\n    \"\"\"Add one.\"\"\"\n    return x + 1\n"),
    ("loop2/while-alias", D, "f",
     "def f(xs: list[int]) -> int:\n    n = 0\n    i = 0\n    while i < len(xs):\n"
     "        n += xs[i]\n        i += 1\n    return n\n",
     "def f(xs: list[int]) -> int:\n    n = 0\n    i = 0\n    ys = xs\n    while i < len(xs):\n"
     "        n += xs[i]\n        if i == 0:\n            ys[i] = 5\n        i += 1\n    return n\n"),
    ("loop2/iterate-and-append", D, "f",
     "def f(xs: list[int]) -> int:\n    c = 0\n    for x in xs:\n        c += 1\n    return c\n",
     "def f(xs: list[int]) -> int:\n    c = 0\n    for x in xs:\n        c += 1\n"
     "        if x == 3 and c < 5:\n            xs.append(4)\n    return c\n"),
    ("exc2/raise-class-vs-instance", E, "f",
     "def f(x: int) -> int:\n    if x < 0:\n        raise ValueError\n    return x\n",
     "def f(x: int) -> int:\n    if x < 0:\n        raise ValueError('negative')\n    return x\n"),
    ("exc2/raise-type", D, "f",
     "def f(x: int) -> int:\n    if x < 0:\n        raise ValueError\n    return x\n",
     "def f(x: int) -> int:\n    if x < 0:\n        raise TypeError\n    return x\n"),
    ("num2/float-div-equiv", E, "f",
     "def f(x: float) -> float:\n    return x / 2\n",
     "def f(x: float) -> float:\n    return x * 0.5\n"),
    ("num2/int-truediv-huge", D, "f",  # f(2**53 + 1): exact halving vs a rounded float
     "def f(x: int) -> int:\n    return x // 2\n",
     "def f(x: int) -> int:\n    return int(x / 2)\n"),
    ("noise2/hash-order", E, "f",
     "def f(x: int) -> int:\n    return len({'a', 'b', str(x)})\n",
     "def f(x: int) -> int:\n    return len(set(['b', 'a', str(x)]))\n"),
    ("noise2/id", E, "f",
     "def f(x: int) -> bool:\n    return id(x) > 0\n",
     "def f(x: int) -> bool:\n    return True\n"),
]
out = Path(__file__).with_name("heldout.jsonl")
with out.open("w") as fh:
    for pid, label, entry, b, a in PAIRS:
        compile(b, pid, "exec")
        compile(a, pid, "exec")
        fh.write(json.dumps({"id": f"held/{pid}", "language": "python", "label": label,
                             "entry": entry, "before": b, "after": a}) + "\n")
print(len(PAIRS))
