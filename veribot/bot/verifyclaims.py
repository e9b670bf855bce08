"""``veribot verify-claims CLAIMS.json``: check hints and facts from any source.

The same hints the agent proposes (``veribot.checks.hints.format``) and the same facts
its formalizer gives (``veribot.checks.agent.facts``), written by another model or a person,
are checked against two versions of the code: a pair of files, or a file in a git
revision range. Nothing needs Anthropic. The file::

    {
      "version": 1,
      "units": [
        {"entry": "total", "path": "pkg/sums.py",
         "hints": [{"kind": "invariant", "expr": "before.s == after.s"}],
         "facts": [{"pred": "varMap", "args": ["s", "before", 3, "s", "after", 3]}]}
      ]
    }

``path`` is the file in the repository (with ``--repo``; ignored with two files).
For each unit the engine runs with the hints (``hints.check``), each fact is checked
against the code's own facts (``claims``), and the report says which hints were proven,
refuted, unproven or rejected, which facts are supported, contradicted or unchecked, and
the resulting verdict. With ``--archive FILE`` the proven hints are kept there, and a
review run with ``--hints FILE`` reuses them.

Exit codes: 0 every hint proven and every fact supported; 1 some hint or fact was not
(the verdict is printed either way); 2 a usage or input error (the claims file does not
parse, nests too deeply or holds a string that is not text, has more than ``MAX_UNITS``
units or a unit with nothing to check, a file or revision cannot be read, an entry is not
in the code).
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from veribot.bot import gitrepo
from veribot.checks.agent.claims import Claim, ClaimStatus, check_claims
from veribot.checks.agent.facts import FactSet, parse_facts
from veribot.checks.agent.pipeline import AFTER, BEFORE
from veribot.checks.equivalence import Budget
from veribot.checks.hints.archive import Archive, unit_keys
from veribot.checks.hints.check import Checked, check_hints
from veribot.checks.hints.format import HintError, Parsed, parse_hints
from veribot.checks.hints.model import Status
from veribot.checks.lang.pyfacts import FunctionNotFound, code_facts
from veribot.checks.lang.pyprove import find_function
from veribot.checks.lang.pysource import parse
from veribot.checks.project.package import PairContext

EXIT_ALL_PROVEN = 0
EXIT_NOT_ALL = 1
MAX_CLAIMS_BYTES = 5_000_000
# Each unit runs the engine within --timeout: a file of more units than a CI step can wait
# for is an input error, not a run that never ends.
MAX_UNITS = 200
MAX_DEPTH = 32  # how deeply the file's values may nest (a fact's arguments are flat)


class ClaimsError(Exception):
    """The claims file or the code it is about cannot be read; the message says why."""


@dataclass(frozen=True)
class ClaimUnit:
    """One unit of the claims file."""

    entry: str
    path: str
    hints: Parsed
    facts: FactSet
    fact_errors: tuple[str, ...] = ()


@dataclass(frozen=True)
class UnitReport:
    """What became of one unit's claims."""

    unit: ClaimUnit
    checked: Checked
    claims: tuple[Claim, ...]
    facts_problem: str = ""

    @property
    def all_proven(self) -> bool:
        hints_ok = (all(r.status is Status.PROVEN for r in self.checked.hints)
                    and not self.checked.rejected)
        facts_ok = all(c.status is ClaimStatus.SUPPORTED for c in self.claims)
        return (hints_ok and facts_ok and not self.unit.fact_errors
                and not self.facts_problem)


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The options of ``verify-claims``."""
    p.add_argument("claims", type=Path, metavar="CLAIMS.json")
    p.add_argument("--files", nargs=2, type=Path, metavar=("BEFORE.py", "AFTER.py"),
                   help="the two versions of one file")
    p.add_argument("--repo", type=Path, default=None, help="a git repository (with --base)")
    p.add_argument("--base", default=None, metavar="REV", help="the before revision")
    p.add_argument("--head", default="HEAD", metavar="REV", help="the after revision")
    p.add_argument("--timeout", type=float, default=30.0,
                   help="time budget per unit in seconds (default 30)")
    p.add_argument("--no-execute", action="store_true",
                   help="proof only: never run the code, not even sandboxed")
    p.add_argument("--format", choices=("text", "json"), default="text")
    p.add_argument("--archive", type=Path, default=None, metavar="FILE",
                   help="keep the proven hints in this SQLite archive, for reviews run with "
                   "--hints FILE")


def read_claims(path: Path) -> list[ClaimUnit]:
    """The units of a claims file; ``ClaimsError`` for a file that cannot be used."""
    data = path.read_bytes()
    if len(data) > MAX_CLAIMS_BYTES:
        raise ClaimsError(f"{path} is larger than {MAX_CLAIMS_BYTES} bytes.")
    try:
        raw = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as err:
        raise ClaimsError(f"{path} is not JSON: {err}.") from None
    except RecursionError:
        raise ClaimsError(f"{path}: its values are nested too deeply.") from None
    _plain(raw, path)
    if not isinstance(raw, dict) or raw.get("version", 1) != 1:
        raise ClaimsError(f"{path}: expected an object with \"version\": 1 and \"units\".")
    units = raw.get("units")
    if not isinstance(units, list) or not units:
        raise ClaimsError(f"{path}: \"units\" must be a non-empty list.")
    if len(units) > MAX_UNITS:
        raise ClaimsError(f"{path} has {len(units)} units; at most {MAX_UNITS} are checked "
                          "in one run (split the file).")
    out: list[ClaimUnit] = []
    for n, item in enumerate(units, 1):
        if not isinstance(item, dict) or not isinstance(item.get("entry"), str):
            raise ClaimsError(f"{path}: unit {n} needs an \"entry\" (a function name).")
        if not item.get("hints") and not item.get("facts"):
            # Nothing to check would pass as "all proven": a gate that checks nothing.
            raise ClaimsError(f"{path}: unit {n} (`{item['entry']}`) has no hints and no "
                              "facts: nothing to check.")
        try:
            hints = parse_hints(item.get("hints", []))
        except HintError as err:
            raise ClaimsError(f"{path}: unit {n}: {err}.") from None
        facts, errors = parse_facts(item.get("facts", [])) if "facts" in item else (FactSet(),
                                                                                   [])
        path_in_repo = item.get("path", "")
        out.append(ClaimUnit(item["entry"], path_in_repo if isinstance(path_in_repo, str) else "",
                             hints, facts, tuple(errors)))
    return out


def _plain(raw: object, path: Path) -> None:
    """Every value nests at most ``MAX_DEPTH`` deep and every string is text (JSON's
    ``"\\ud800"`` decodes to a lone surrogate, which no file or report can hold)."""
    stack: list[tuple[object, int]] = [(raw, 0)]
    while stack:
        value, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise ClaimsError(f"{path}: its values are nested more than {MAX_DEPTH} deep.")
        if isinstance(value, dict):
            stack += [(k, depth + 1) for k in value] + [(v, depth + 1) for v in value.values()]
        elif isinstance(value, list):
            stack += [(v, depth + 1) for v in value]
        elif isinstance(value, str):
            try:
                value.encode("utf-8")
            except UnicodeEncodeError:
                raise ClaimsError(f"{path}: a string holds a lone surrogate "
                                  f"({value[:40]!r}).") from None


def run(args: argparse.Namespace, stdout: TextIO) -> int:
    """The command: check every unit, print the report, return the exit code."""
    units = read_claims(args.claims)
    if (args.files is None) == (args.repo is None):
        raise ClaimsError("give either --files BEFORE.py AFTER.py or --repo PATH --base REV.")
    budget = Budget(timeout_s=args.timeout, execute=not args.no_execute)
    reports = []
    for u in units:
        before, after, context = _sources(u, args)
        report = verify(u, before, after, context, budget=budget)
        keys = unit_keys(before, after, u.entry) if args.archive is not None else None
        if keys is not None:
            Archive(args.archive).store("", keys, report.checked.archivable())
        reports.append(report)
    if args.format == "json":
        stdout.write(json.dumps([_as_json(r) for r in reports], indent=2) + "\n")
    else:
        stdout.write("".join(_as_text(r) for r in reports))
    stdout.flush()
    return EXIT_ALL_PROVEN if all(r.all_proven for r in reports) else EXIT_NOT_ALL


def verify(unit: ClaimUnit, before: str, after: str, context: PairContext | None = None, *,
           budget: Budget) -> UnitReport:
    """Check one unit's hints (with the engine) and facts (against the code's facts)."""
    for label, source in ((BEFORE, before), (AFTER, after)):
        try:
            tree = parse(source)
        except SyntaxError as err:
            raise ClaimsError(f"the {label} version of {unit.path or 'the file'} does not parse "
                              f"(line {err.lineno}).") from None
        if find_function(tree, unit.entry) is None:
            raise ClaimsError(f"no function `{unit.entry}` in the {label} version.")
    checked = check_hints(before, after, unit.entry, unit.hints, budget=budget, context=context)
    claims: list[Claim] = []
    problem = ""
    if len(unit.facts):
        try:
            code = (code_facts(before, unit.entry, BEFORE), code_facts(after, unit.entry, AFTER))
            claims = check_claims(unit.facts, code[0], code[1], {BEFORE: before, AFTER: after})
        except (SyntaxError, FunctionNotFound, ValueError) as err:
            problem = f"the facts could not be checked: {err}"
    return UnitReport(unit, checked, tuple(claims), problem)


def _sources(unit: ClaimUnit, args: argparse.Namespace) -> tuple[str, str, PairContext | None]:
    if args.files is not None:
        before, after = (p.read_text(encoding="utf-8") for p in args.files)
        return before, after, None
    if not unit.path:
        raise ClaimsError(f"unit `{unit.entry}` needs a \"path\" with --repo.")
    if args.base is None:
        raise ClaimsError("--repo needs --base REV.")
    repo = gitrepo.open_repo(args.repo)
    texts = []
    for rev in (args.base, args.head):
        commit = repo.commit(gitrepo.resolve(repo, rev))
        try:
            blob = commit.tree / unit.path
        except KeyError:
            raise ClaimsError(f"{unit.path} is not in revision {rev}.") from None
        texts.append(blob.data_stream.read().decode("utf-8", errors="replace"))
    root = Path(repo.working_tree_dir or args.repo)
    context = gitrepo.package_context(root, args.base, args.head, unit.path, unit.path,
                                      names=(unit.entry,))
    return texts[0], texts[1], context


def _as_text(report: UnitReport) -> str:
    r = report.checked.result
    where = f"{report.unit.path}::" if report.unit.path else ""
    lines = [f"{r.verdict.value:<12} {where}{report.unit.entry}  [{r.reason}] {r.detail}"]
    if r.method:
        lines.append(f"  method: {r.method}")
    lines += [f"  hint {line}" for line in report.checked.lines()]
    lines += [f"  fact {c.status.value}: {c.fact}" + (f" ({c.why})" if c.why else "")
              for c in report.claims]
    lines += [f"  fact rejected: {e}" for e in report.unit.fact_errors]
    if report.facts_problem:
        lines.append(f"  {report.facts_problem}")
    return "\n".join(lines) + "\n"


def _as_json(report: UnitReport) -> dict[str, object]:
    r = report.checked.result
    return {
        "path": report.unit.path,
        "entry": report.unit.entry,
        "verdict": r.verdict.value,
        "reason": r.reason,
        "detail": r.detail,
        "method": r.method,
        "hints": [{"hint": h.hint.as_json(), "status": h.status.value, "reason": h.reason,
                   "used": h.used} for h in report.checked.hints]
        + [{"index": x.index, "status": "rejected", "reason": x.reason, "text": x.text}
           for x in report.checked.rejected],
        "facts": [{"fact": str(c.fact), "status": c.status.value, "why": c.why,
                   "line": c.line} for c in report.claims]
        + [{"status": "rejected", "why": e} for e in report.unit.fact_errors],
        "all_proven": report.all_proven,
    }


def main_args(argv: Sequence[str]) -> argparse.Namespace:
    """Parse ``verify-claims`` arguments alone (for tests and scripts)."""
    p = argparse.ArgumentParser(prog="veribot verify-claims")
    add_arguments(p)
    return p.parse_args(list(argv))
