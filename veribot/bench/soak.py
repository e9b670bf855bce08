"""A long differential run over the units a real-commit run verified.

``veribot bench-real`` says which changed functions of real commits are verified; this
harness tries to prove it wrong. For each verified unit of a records file it rebuilds the
pair from the commit (both files, each version's package, the repository's tests) and runs
both versions, in the sandbox, on many inputs:

- every call of the function found in the repository's tests and doctests;
- many rounds of the tripwire's edge, constant and random inputs, for parameters whose
  type is annotated or inferred from those calls and defaults.

Any difference reproduced in fresh children is a **wrong verdict** and is reported as
such. A unit on which no input could be built is reported as not exercised, with why:
the run never claims more than it did.
"""

from __future__ import annotations

import argparse
import ast
import json
import sys
import tempfile
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from veribot.bench.real import clone_bundle, repo_source
from veribot.bot import gitrepo
from veribot.bot.review import with_packages
from veribot.checks.lang import pyinfer, pysource
from veribot.checks.project.units import ChangedUnit, changed_units
from veribot.checks.sandbox import Limits, SandboxError
from veribot.checks.search import harvest, tripwire

__all__ = ["Soaked", "add_arguments", "main", "soak_unit"]


@dataclass
class Soaked:
    """What the long run did for one verified unit."""

    repo: str
    commit: str
    unit: str
    harvested: int = 0
    random: int = 0
    difference: str | None = None  # a reproduced difference: the verdict was wrong
    notes: list[str] = field(default_factory=list)

    @property
    def exercised(self) -> bool:
        return self.harvested + self.random > 0

    def record(self) -> dict[str, object]:
        return {"repo": self.repo, "commit": self.commit, "unit": self.unit,
                "harvested": self.harvested, "random": self.random,
                "wrong": self.difference is not None, "difference": self.difference,
                "notes": self.notes}


def verified_units(lines: Iterable[str]) -> dict[tuple[str, str], list[str]]:
    """The verified units of a ``bench-real`` records file, by (repo, commit)."""
    out: dict[tuple[str, str], list[str]] = {}
    for line in lines:
        if not line.strip():
            continue
        rec = json.loads(line)
        if rec.get("verdict") == "verified" and rec.get("unit"):
            out.setdefault((rec["repo"], rec["commit"]), []).append(rec["unit"])
    return out


def soak_unit(unit: ChangedUnit, *, rounds: int, inputs: int, seconds: float) -> Soaked:
    """Run both versions of ``unit`` on its harvested calls and on ``rounds`` rounds of
    ``inputs`` drawn inputs (``seconds`` each)."""
    assert unit.before_source is not None and unit.after_source is not None
    before, after, entry, context = (unit.before_source, unit.after_source, unit.entry,
                                     unit.context)
    done = Soaked("", "", unit.qualname)
    calls = harvest.calls_for(before, after, entry, context, limit=10_000)
    if calls:
        found, _ = harvest.first_difference(
            before, after, entry, calls, limits=Limits(wall_s=max(10.0, seconds), call_s=2.0),
            until=time.monotonic() + max(30.0, seconds * 3), context=context)
        done.harvested = len(calls)
        if found is not None:
            done.difference = (f"on the repository's call ({', '.join(found.args)}) "
                               f"{found.difference}")
            return done
    types = _types(before, after, entry, calls)
    for seed in range(rounds):
        try:
            wire = tripwire.check(before, after, entry, types, time_s=seconds,
                                  max_inputs=inputs, seed=seed, context=context)
        except SandboxError as exc:
            done.notes.append(f"round {seed}: not run ({exc})")
            continue
        if wire.inputs_run == 0:
            done.notes.append(wire.note)
            break
        done.random += wire.inputs_run
        if wire.counterexample is not None:
            cex = wire.counterexample
            done.difference = f"on input ({', '.join(cex.args)}) {cex.difference}"
            return done
        if wire.unstable is not None:
            done.notes.append(f"unstable in a batch, not reproduced: {wire.unstable[1]}")
    return done


def _types(before: str, after: str, entry: str,
           calls: Sequence[harvest.Call]) -> dict[str, str]:
    """The types inferred from ``calls`` and defaults for parameters annotated in neither
    version (the tripwire reads the annotations itself, and says when some parameter has
    no type at all)."""
    fn_a = pysource.definition(ast.parse(before), entry)
    fn_b = pysource.definition(ast.parse(after), entry)
    if not isinstance(fn_a, ast.FunctionDef) or not isinstance(fn_b, ast.FunctionDef):
        return {}
    return {name: i.search.text() for name, i in pyinfer.infer(fn_a, fn_b, calls).items()}


def run(records: Iterable[str], repos: Path, out: TextIO, *, rounds: int, inputs: int,
        seconds: float, progress: TextIO | None = None) -> list[Soaked]:
    wanted = verified_units(records)
    results: list[Soaked] = []
    with tempfile.TemporaryDirectory(prefix="veribot-soak-") as tmp:
        clones: dict[str, Path] = {}
        for (repo, commit), names in wanted.items():
            if repo not in clones:
                source = repo_source(repos, repo)
                if source is None:
                    raise OSError(f"no bundle or repository for {repo} in {repos}")
                clones[repo] = clone_bundle(source, Path(tmp) / repo)
            changes = gitrepo.read_changes(clones[repo], f"{commit}^", commit)
            units = [u for f in changes.files for u in changed_units(f)]
            by_name = {u.qualname: u for u in with_packages(units, changes)}
            for name in names:
                unit = by_name.get(name)
                if unit is None or unit.before_source is None or unit.after_source is None:
                    done = Soaked(repo, commit, name, notes=["unit not found again"])
                else:
                    done = soak_unit(unit, rounds=rounds, inputs=inputs, seconds=seconds)
                    done.repo, done.commit = repo, commit
                results.append(done)
                out.write(json.dumps(done.record()) + "\n")
                out.flush()
                if progress:
                    state = ("WRONG: " + (done.difference or "") if done.difference
                             else f"{done.harvested} harvested, {done.random} random"
                             if done.exercised else "not exercised: " + "; ".join(done.notes))
                    progress.write(f"{repo} {commit[:10]} {name}: {state}\n")
                    progress.flush()
    return results


def format_summary(results: Sequence[Soaked]) -> str:
    wrong = [r for r in results if r.difference is not None]
    exercised = [r for r in results if r.exercised]
    lines = [
        f"verified units: {len(results)}",
        f"exercised: {len(exercised)} ({sum(r.harvested for r in results)} harvested "
        f"calls, {sum(r.random for r in results)} random inputs)",
        f"not exercised: {len(results) - len(exercised)}",
        f"WRONG (a difference reproduced): {len(wrong)}",
    ]
    lines += [f"  WRONG {r.repo} {r.commit[:10]} {r.unit}: {r.difference}" for r in wrong]
    return "\n".join(lines)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("records", metavar="RECORDS.jsonl", type=Path,
                        help="unit records written by `veribot bench-real --out`")
    parser.add_argument("--repos", metavar="DIR", type=Path, required=True,
                        help="folder holding <repo>.bundle for each record's repo")
    parser.add_argument("--rounds", type=int, default=10, metavar="N",
                        help="rounds of random inputs per unit, each with its own seed "
                             "(default 10)")
    parser.add_argument("--inputs", type=int, default=300, metavar="N",
                        help="inputs per round (default 300)")
    parser.add_argument("--seconds", type=float, default=5.0, metavar="S",
                        help="time per round (default 5)")
    parser.add_argument("--out", metavar="FILE", type=Path,
                        help="one JSON record per unit (default: standard output only)")


def main(args: argparse.Namespace) -> int:
    """Exit 1 when a verified unit was shown wrong, 2 on unreadable input, else 0."""
    try:
        lines = args.records.read_text("utf-8").splitlines()
        verified_units(lines)
    except (OSError, ValueError, KeyError) as exc:
        print(f"veribot bench-soak: cannot read {args.records}: {exc}", file=sys.stderr)
        return 2
    with open(args.out or "/dev/null", "w", encoding="utf-8") as out:
        results = run(lines, args.repos, out, rounds=args.rounds, inputs=args.inputs,
                      seconds=args.seconds, progress=sys.stderr)
    print(format_summary(results))
    return 1 if any(r.difference is not None for r in results) else 0
