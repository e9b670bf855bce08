"""Figures per half from the labelled questions and the three tools' outputs.

    python benchmarks/safety/evaluate.py            # prints the tables used in RESULTS.md

Reads questions-{dev,heldout}.jsonl (labels), results-veribot-{half}.jsonl (bench-safety),
results-crosshair-{half}.jsonl (run_crosshair.py). Every veribot "unsafe" input is re-run in
plain CPython against the real module (probe.py) before it is counted right.
"""
import collections
import json
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
PY = "/work/main/.venv/bin/python"


def load(name):
    p = HERE / name
    if not p.exists():
        return []
    return [json.loads(line) for line in p.read_text().splitlines() if line.strip()]


def rerun(qid, call, half):
    """Re-run a veribot input in plain CPython (the call is `entry(args)`)."""
    q = next(q for q in load(f"questions-{half}.jsonl") if q["id"] == qid)
    entry = q["entry"]
    expr = f"{entry}({call})" if "." not in entry else None
    if expr is None:  # a method: veribot does not build objects (object-not-built)
        return "method: not re-run"
    r = subprocess.run([PY, str(HERE / "probe.py"), qid, expr, "--file",
                        str(HERE / f"questions-{half}.jsonl")], capture_output=True, text=True,
                       timeout=60, env={"PATH": "/usr/bin:/bin"})
    return ("crashes at the line" if r.returncode == 0 else "does NOT crash at the line") + \
        " | " + r.stdout.strip().splitlines()[0] if r.stdout.strip() else r.stderr[-200:]


def main():
    all_reasons = collections.Counter()
    rows = []
    for half in ("dev", "heldout"):
        qs = {q["id"]: q for q in load(f"questions-{half}.jsonl")}
        vb = {r["id"]: r for r in load(f"results-veribot-{half}.jsonl")}
        ch = {r["id"]: r for r in load(f"results-crosshair-{half}.jsonl")}
        lab = collections.Counter(q["label_status"] for q in qs.values())
        labelled = lab["safe"] + lab["unsafe"]
        v = collections.Counter(r["verdict"] for r in vb.values())
        wrong = []
        agree = 0
        for qid, r in vb.items():
            label = qs[qid]["label"]
            if r["verdict"] in ("safe", "unsafe") and label and r["verdict"] != label:
                wrong.append((qid, label, r["verdict"]))
            if r["verdict"] == label:
                agree += 1
            if r["verdict"] == "unsafe":
                res = rerun(qid, r["input"] or "", half)
                print(f"veribot unsafe {qid}: {r['input']} -> {res}")
                if "NOT" in res:
                    wrong.append((qid, label, "unsafe input does not crash"))
            if r["verdict"] == "inconclusive":
                all_reasons[r["reason"]] += 1
        # CrossHair
        ch_find = [qid for qid, r in ch.items() if r["found_crash_at_line"]]
        ch_find_lab = collections.Counter(qs[q]["label_status"] for q in ch_find)
        ch_raising_elsewhere = sum(
            1 for r in ch.values() if r["raising"] and not r["found_crash_at_line"])
        ch_rc = collections.Counter(str(r["rc"]) for r in ch.values())
        ch_no_examples = sum(1 for r in ch.values() if r["examples"] == 0)
        rows.append({
            "half": half, "questions": len(qs), "labelled": labelled, "safe": lab["safe"],
            "unsafe": lab["unsafe"], "unknown": lab["unknown"],
            "pyright_real": (f"{lab['unsafe']}/{labelled} ({100*lab['unsafe']/labelled:.0f}%)"
                             if labelled else "-"),
            "veribot": f"safe {v['safe']}, unsafe {v['unsafe']}, inconclusive {v['inconclusive']}",
            "decided": (f"{v['safe']+v['unsafe']}/{len(vb)} "
                        f"({100*(v['safe']+v['unsafe'])/max(1,len(vb)):.0f}%)"),
            "agree": agree, "WRONG": len(wrong), "wrong_list": wrong,
            "crosshair_runs": len(ch), "crosshair_finds": len(ch_find),
            "crosshair_finds_by_label": dict(ch_find_lab), "crosshair_find_ids": ch_find,
            "crosshair_raising_elsewhere": ch_raising_elsewhere,
            "crosshair_rc": dict(ch_rc), "crosshair_no_examples": ch_no_examples,
        })
    for r in rows:
        print(json.dumps(r, indent=1))
    print("top inconclusive reasons (both halves):")
    for reason, n in all_reasons.most_common(10):
        print(f"  {n:3d} {reason}")


if __name__ == "__main__":
    sys.exit(main())
