"""CrossHair (0.0.113) as a peer: for each question's function, `crosshair cover` on the
REAL module (imported from its clone), 10 s per condition, examples as pytest code; every
example CrossHair says raises is re-run in plain CPython and counts as a find only where
it raises at the question's line an exception no `raise` statement of the module raises.

    python benchmarks/safety/run_crosshair.py questions-dev.unlabelled.jsonl OUT.jsonl [PROJECT...]

(resumes: ids already in OUT are skipped; with PROJECT names, those projects' records are
dropped from OUT and run again.)

`crosshair check` only checks contracts (asserts / PEP316 / icontract / deal) and reports
nothing for a plain function; `cover` is the command that reports the exceptions of plain
annotated functions (it generates inputs for paths, and writes `pytest.raises` for the
ones that raise). CrossHair never proves a function safe: no "safe" verdict exists.
"""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

CROSSHAIR = "/work/main/.venv/bin/crosshair"
PY = "/work/main/.venv/bin/python"
CORPUS = Path("/work/corpus")
DEPS = [("dateutil", "src"), ("click", "src"), ("attrs", "src"), ("jinja", "src"),
        ("werkzeug", "src"), ("marshmallow", "src"), ("toolz", "."),
        ("more-itertools", "."), ("python-sortedcontainers", "src"), ("rich", ".")]
EXTRA = "/work/wt/safety-tools/deps"

# prettytable's _version module is generated at build time (hatch-vcs): a stand-in is put
# into sys.modules before anything imports the package (the clone is not modified).
PRELOAD = ("import sys, types; _m = types.ModuleType('prettytable._version'); "
           "_m.__version__ = _m.version = '0+corpus'; _m.__version_tuple__ = (0,); "
           "sys.modules['prettytable._version'] = _m")
CROSSHAIR_MAIN = (PRELOAD + "; from crosshair.main import main; "
                  "sys.argv[0] = 'crosshair'; sys.exit(main())")

RERUN = r'''
import sys, traceback, json
exec(PRELOAD_CODE)
target, line, code, call = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
ns = {}
exec(code, ns)
try:
    eval(call, ns)
except BaseException as err:
    tb = traceback.extract_tb(err.__traceback__)
    own = [f for f in tb if f.filename == target]
    print(json.dumps({"raised": type(err).__name__, "message": str(err)[:200],
                      "module_line": own[-1].lineno if own else None,
                      "innermost": f"{tb[-1].filename}:{tb[-1].lineno}"}))
else:
    print(json.dumps({"raised": None}))
'''


def module_name(q: dict) -> tuple[str, Path, Path]:
    root = (CORPUS / q["project"] / q["source_root"]).resolve()
    path = (CORPUS / q["project"] / q["path"]).resolve()
    rel = path.relative_to(root).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts), root, path


def raise_lines(source: str) -> set[int]:
    tree = ast.parse(source)
    return {n for r in ast.walk(tree) if isinstance(r, ast.Raise)
            for n in range(r.lineno, (r.end_lineno or r.lineno) + 1)}


def parse_examples(text: str) -> tuple[str, list[tuple[str | None, str]]]:
    """The import lines and (exception or None, call) of each example."""
    imports = "\n".join(ln for ln in text.splitlines() if ln.startswith(("from ", "import ")))
    out: list[tuple[str | None, str]] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        m = re.match(r"\s+with pytest\.raises\((\w+)\):", lines[i])
        if m:
            out.append((m.group(1), lines[i + 1].strip()))
            i += 2
            continue
        m = re.match(r"\s+assert (.*) == ", lines[i])
        if m:
            out.append((None, m.group(1)))
        i += 1
    return imports, out


def main() -> int:
    src, dst = Path(sys.argv[1]), Path(sys.argv[2])
    done = set()
    only = set(sys.argv[3:])  # optional: re-run just these projects (their records replaced)
    if only and dst.exists():
        keep = [ln for ln in dst.read_text().splitlines()
                if ln.strip() and json.loads(ln)["id"].split(":")[0] not in only]
        dst.write_text("".join(k + "\n" for k in keep))
    if dst.exists():
        done = {json.loads(ln)["id"] for ln in dst.read_text().splitlines() if ln.strip()}
    with dst.open("a") as fh:
        for raw in src.read_text().splitlines():
            q = json.loads(raw)
            if q["id"] in done or (only and q["project"] not in only):
                continue
            mod, root, path = module_name(q)
            env = dict(os.environ)
            env["PYTHONPATH"] = os.pathsep.join(
                [str(root)] + [str((CORPUS / p / r).resolve()) for p, r in DEPS] + [EXTRA])
            target = f"{mod}.{q['entry']}"
            t0 = time.monotonic()
            cmd = [CROSSHAIR] if q["project"] != "prettytable" else [PY, "-c", CROSSHAIR_MAIN]
            try:
                proc = subprocess.run([*cmd, "cover", target, "--per_condition_timeout",
                                       "10", "--example_output_format", "pytest"],
                                      capture_output=True, text=True, timeout=90, env=env,
                                      cwd="/tmp")
                out, err, rc = proc.stdout, proc.stderr, proc.returncode
            except subprocess.TimeoutExpired as e:
                out = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
                err, rc = "wall timeout 90 s", None
            elapsed = time.monotonic() - t0
            imports, examples = parse_examples(out)
            raising = []
            rl = raise_lines(q["module"])
            for exc, call in examples:
                if exc is None:
                    continue
                try:
                    r = subprocess.run([PY, "-c", RERUN.replace("PRELOAD_CODE", repr(PRELOAD)),
                                        str(path), str(q["line"]), imports, call],
                                       capture_output=True, text=True, timeout=30, env=env,
                                       cwd="/tmp")
                    seen = json.loads(r.stdout.strip().splitlines()[-1]) if r.stdout.strip() \
                        else {"error": r.stderr[-300:]}
                except (subprocess.TimeoutExpired, json.JSONDecodeError) as e:
                    seen = {"error": type(e).__name__}
                hit = (seen.get("raised") is not None and seen.get("module_line") == q["line"]
                       and q["line"] not in rl)
                raising.append({"claimed": exc, "call": call, "rerun": seen,
                                "crash_at_line": hit})
            rec = {"id": q["id"], "target": target, "rc": rc, "time": round(elapsed, 1),
                   "examples": len(examples), "raising": raising,
                   "found_crash_at_line": any(r["crash_at_line"] for r in raising),
                   "stderr_tail": err[-400:] if (rc not in (0, None) or not examples) else ""}
            fh.write(json.dumps(rec) + "\n")
            fh.flush()
            print(q["id"], rc, len(examples), rec["found_crash_at_line"], f"{elapsed:.0f}s",
                  flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
