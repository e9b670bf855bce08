"""Build crash-site questions for `veribot bench-safety` from pyright's warnings on real code.

Re-runnable: pyright (installed with `npm install --prefix /work/wt/safety-tools pyright`)
is run on each project's package source under /work/corpus/<project>, with the
crash-relevant rules on; warnings inside a function or method body are kept; at most
PER_PROJECT are drawn at random with a fixed seed (per project: Random(f"{SEED}:{project}")).

    python benchmarks/safety/build_questions.py [--pyright PATH] [--cache DIR]

Writes questions-dev.jsonl and questions-heldout.jsonl next to this script (without
labels; `merge_labels.py` adds them from labels-*.jsonl) and build-stats.json.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import random
import subprocess
import sys
from pathlib import Path

SEED = 20261129
PER_PROJECT = 15
CORPUS = Path("/work/corpus")
# folders that are not the package's source (jsonschema ships tests and benchmarks inside)
NOT_SOURCE = {"tests", "test", "benchmarks"}
HERE = Path(__file__).resolve().parent

RULES = ["reportOptionalMemberAccess", "reportOptionalSubscript", "reportOptionalIterable",
         "reportOptionalCall", "reportOptionalOperand", "reportPossiblyUnbound",
         # pyright 1.1.414 names the rule reportPossiblyUnboundVariable
         "reportPossiblyUnboundVariable",
         "reportIndexIssue", "reportCallIssue", "reportAttributeAccessIssue",
         "reportOperatorIssue", "reportArgumentType"]

# project -> (half, source root relative to the clone, package folders under the root)
PROJECTS = {
    "arrow": ("dev", ".", ["arrow"]),
    "click": ("dev", "src", ["click"]),
    "dateutil": ("dev", "src", ["dateutil"]),
    "jinja": ("dev", "src", ["jinja2"]),
    "marshmallow": ("dev", "src", ["marshmallow"]),
    "more-itertools": ("dev", ".", ["more_itertools"]),
    "prettytable": ("dev", "src", ["prettytable"]),
    "structlog": ("dev", "src", ["structlog"]),
    "toolz": ("dev", ".", ["toolz"]),
    "werkzeug": ("dev", "src", ["werkzeug"]),
    "attrs": ("heldout", "src", ["attr", "attrs"]),
    "black": ("heldout", "src", ["black", "blackd", "blib2to3"]),
    "cli": ("heldout", ".", ["httpie"]),
    "isort": ("heldout", ".", ["isort"]),
    "jsonschema": ("heldout", ".", ["jsonschema"]),
    "loguru": ("heldout", ".", ["loguru"]),
    "pendulum": ("heldout", "src", ["pendulum"]),
    "pyparsing": ("heldout", ".", ["pyparsing"]),
    "python-sortedcontainers": ("heldout", "src", ["sortedcontainers"]),
    "rich": ("heldout", ".", ["rich"]),
}


def run_pyright(project: str, pyright: str, cache: Path) -> dict:
    out = cache / f"{project}.json"
    if out.exists():
        return json.loads(out.read_text())
    _half, root, pkgs = PROJECTS[project]
    src = (CORPUS / project / root).resolve()
    cfg_dir = cache / "cfg" / project
    cfg_dir.mkdir(parents=True, exist_ok=True)
    config = {
        "include": [os.path.relpath(src / p, cfg_dir) for p in pkgs],
        "exclude": ["**/tests", "**/test", "**/testing", "**/__pycache__", "**/node_modules"],
        "extraPaths": [str(src)],
        "pythonVersion": "3.11",
        "typeCheckingMode": "basic",
        **{rule: "error" for rule in RULES if rule != "reportPossiblyUnbound"},
    }
    cfg = cfg_dir / "pyrightconfig.json"
    cfg.write_text(json.dumps(config, indent=1))
    proc = subprocess.run([pyright, "--outputjson", "-p", str(cfg),
                           "--pythonpath", sys.executable],
                          capture_output=True, text=True, timeout=1800)
    data = json.loads(proc.stdout)
    out.write_text(json.dumps(data))
    return data


def enclosing(tree: ast.Module, line: int) -> tuple[str | None, str]:
    """The entry (`f`, `C.m`, `C.D.m`) whose body holds `line`, or (None, why)."""
    chain: list[ast.AST] = []

    def walk(body: list[ast.stmt]) -> None:
        for node in body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                if node.lineno <= line <= (node.end_lineno or node.lineno):
                    chain.append(node)
                    walk(node.body)
                    return
            elif node.lineno <= line <= (node.end_lineno or node.lineno):
                # definitions under if/try/with/for at module or class level
                for field in ("body", "orelse", "finalbody"):
                    walk(getattr(node, field, None) or [])
                for handler in getattr(node, "handlers", None) or []:
                    walk(handler.body)
                for case in getattr(node, "cases", None) or []:
                    walk(case.body)
                return

    walk(tree.body)
    fns = [i for i, n in enumerate(chain) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]
    if not fns:
        return None, "outside-function"
    inner = chain[fns[-1]]
    if len(fns) > 1 or any(isinstance(n, ast.ClassDef) for n in chain[fns[-1]:]):
        return None, "nested-function"
    body_start = inner.body[0].lineno  # type: ignore[attr-defined]
    if line < body_start:
        return None, "signature-or-decorator"
    return ".".join(n.name for n in chain[: fns[-1] + 1]), "ok"  # type: ignore[attr-defined]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--pyright", default="/work/wt/safety-tools/node_modules/.bin/pyright")
    ap.add_argument("--cache", type=Path, default=Path("/work/wt/safety-tools/pyright-out"))
    args = ap.parse_args(argv)
    args.cache.mkdir(parents=True, exist_ok=True)
    stats: dict[str, dict] = {}
    halves: dict[str, list[dict]] = {"dev": [], "heldout": []}
    for project, (half, root, _pkgs) in PROJECTS.items():
        data = run_pyright(project, args.pyright, args.cache)
        clone = (CORPUS / project).resolve()
        rev = subprocess.run(["git", "-C", str(clone), "rev-parse", "HEAD"],
                             capture_output=True, text=True).stdout.strip()
        st = {"warnings": 0, "in_rules": 0, "candidates": 0, "outside-function": 0,
              "nested-function": 0, "signature-or-decorator": 0, "duplicate-line": 0,
              "revision": rev}
        cands: dict[tuple[str, int], dict] = {}
        trees: dict[str, tuple[str, ast.Module]] = {}
        for d in data.get("generalDiagnostics", []):
            st["warnings"] += 1
            if d.get("rule") not in RULES:
                continue
            st["in_rules"] += 1
            path = Path(d["file"]).resolve()
            rel = str(path.relative_to(clone))
            if set(Path(rel).parts) & NOT_SOURCE:  # the config's excludes do not reach here
                st["tests-or-benchmarks"] = st.get("tests-or-benchmarks", 0) + 1
                continue
            if rel not in trees:
                text = path.read_text(encoding="utf-8")
                trees[rel] = (text, ast.parse(text))
            line = d["range"]["start"]["line"] + 1
            entry, why = enclosing(trees[rel][1], line)
            if entry is None:
                st[why] += 1
                continue
            key = (rel, line)
            if key in cands:
                st["duplicate-line"] += 1
                cands[key]["rule"] += "," + d["rule"]
                cands[key]["message"] += " | " + d["message"]
                continue
            cands[key] = {"project": project, "path": rel, "entry": entry, "line": line,
                          "rule": d["rule"], "message": d["message"]}
        st["candidates"] = len(cands)
        rng = random.Random(f"{SEED}:{project}")
        ordered = [cands[k] for k in sorted(cands)]
        drawn = rng.sample(ordered, min(PER_PROJECT, len(ordered)))
        st["drawn"] = len(drawn)
        for c in drawn:
            rec = {"id": f"{project}:{c['path']}:{c['line']}",
                   "module": trees[c["path"]][0], "entry": c["entry"], "line": c["line"],
                   "project": project, "path": c["path"], "source_root": root,
                   "revision": rev, "rule": c["rule"], "message": c["message"]}
            halves[half].append(rec)
        stats[project] = st
        print(project, half, {k: v for k, v in st.items() if k != "revision"}, file=sys.stderr)
    for half, recs in halves.items():
        with (HERE / f"questions-{half}.unlabelled.jsonl").open("w") as fh:
            for r in recs:
                fh.write(json.dumps(r) + "\n")
    (HERE / "build-stats.json").write_text(json.dumps(stats, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
