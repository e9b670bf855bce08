"""Merge labels-*.jsonl (labels.jsonl: one record per question, a later record for the same
id overrides an earlier one: relabels are kept in the file as history) into the question
files: questions-{dev,heldout}.jsonl = questions-*.unlabelled.jsonl + label, label_status,
label_why, label_input. `label` is "safe" | "unsafe" | null (null: "unknown", kept out of
the labelled figures; label_status says "unknown")."""
import json
from pathlib import Path

HERE = Path(__file__).resolve().parent
labels = {}
for raw in (HERE / "labels.jsonl").read_text().splitlines():
    r = json.loads(raw)
    labels[r["id"]] = r
for half in ("dev", "heldout"):
    out = []
    for raw in (HERE / f"questions-{half}.unlabelled.jsonl").read_text().splitlines():
        q = json.loads(raw)
        lab = labels.get(q["id"])
        q["label"] = lab["label"] if lab else None
        q["label_status"] = lab["status"] if lab else "unexamined"
        q["label_why"] = lab["label_why"] if lab else ""
        q["label_input"] = lab["label_input"] if lab else None
        out.append(json.dumps(q))
    (HERE / f"questions-{half}.jsonl").write_text("\n".join(out) + "\n")
    print(half, len(out))
