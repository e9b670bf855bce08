"""Run one call against the REAL module of a question, in plain CPython, and say where it
raised: the evidence behind an "unsafe" label (and the re-run of veribot's inputs).

    python benchmarks/safety/probe.py QUESTION_ID 'CALL' [--setup 'CODE'] [--file F.jsonl]

CALL is evaluated in the namespace of the imported module (so `f(None)` or
`C(...).m(1)` work); --setup runs first in that namespace. The module is imported from
/work/corpus/<project>/<source_root> (put first on sys.path). Prints the exception, the
innermost frame of the module's own file, and whether it is the question's line; exit 0
when it raised at that line.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
import traceback
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEPS = [("dateutil", "src"), ("click", "src"), ("attrs", "src"), ("jinja", "src"),
        ("werkzeug", "src"), ("marshmallow", "src"), ("toolz", "."),
        ("more-itertools", "."), ("python-sortedcontainers", "src"), ("rich", ".")]


def find(qid: str, files: list[Path]) -> dict:
    for f in files:
        for raw in f.read_text().splitlines():
            rec = json.loads(raw)
            if rec["id"] == qid:
                return rec
    raise SystemExit(f"no question {qid}")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("qid")
    ap.add_argument("call")
    ap.add_argument("--setup", default="")
    ap.add_argument("--file", type=Path, action="append")
    a = ap.parse_args()
    files = a.file or sorted(HERE.glob("questions-*.jsonl"))
    q = find(a.qid, files)
    root = Path("/work/corpus") / q["project"] / q["source_root"]
    sys.path.insert(0, str(root.resolve()))
    # the other clones serve as dependencies (arrow needs dateutil, black needs click...)
    sys.path += [str((Path("/work/corpus") / p / r).resolve()) for p, r in DEPS]
    sys.path.append("/work/wt/safety-tools/deps")  # pip install --target: six, wcwidth, ...
    modpath = Path(q["path"])
    rel = (Path("/work/corpus") / q["project"] / modpath).resolve().relative_to(root.resolve())
    name = ".".join(rel.with_suffix("").parts)
    if name.endswith(".__init__"):
        name = name[: -len(".__init__")]
    mod = importlib.import_module(name)
    ns = dict(vars(mod))
    if a.setup:
        exec(a.setup, ns)
    try:
        value = eval(a.call, ns)
    except BaseException as err:
        tb = traceback.extract_tb(err.__traceback__)
        target = str((Path("/work/corpus") / q["project"] / modpath).resolve())
        own = [fr for fr in tb if str(Path(fr.filename).resolve()) == target]
        where = own[-1] if own else None
        print(f"raised {type(err).__name__}: {err}")
        print("".join(traceback.format_list(tb[-4:])).rstrip())
        if where is None:
            print("not raised through the module's file")
            return 1
        hit = where.lineno == q["line"]
        innermost = tb[-1]
        print(f"module frame: {q['path']}:{where.lineno} {where.line!r} "
              f"(question line {q['line']}: {'HIT' if hit else 'other line'}); "
              f"innermost frame {Path(innermost.filename).name}:{innermost.lineno}")
        return 0 if hit else 1
    print(f"returned {value!r:.200}")
    return 1


if __name__ == "__main__":
    sys.exit(main())
