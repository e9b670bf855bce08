"""Randomised differential testing: look for an input on which two versions differ.

This search can refute, never verify. Hypothesis runs inside one sandboxed child
(``sandbox.run_script``) that imports the two versions as separate modules, so a found
input is shrunk cheaply there; the parent only reads the candidate inputs the child
prints and confirms each with ``differential.confirm`` in fresh children. Only a
confirmed difference is returned. No code of either version runs in this process.

Strategies come from the parameter types (``lang.pytypes``), and every generated value
is of the declared type: a refutation on an input the annotations exclude would say
nothing about the code's callers. Where a type means "anything" (``Any``, ``object``,
the elements of a bare ``list``), small numbers, lists, the code's string constants and
builtin classes are tried. An iterator type (inferred: ``pyinfer``) gets ``iter([...])``,
a stream type (``TextIO``, ``IO[bytes]``) a fresh ``io.StringIO('...')`` /
``io.BytesIO(b'...')`` in each call of each version, compared after the call by its
contents, position and whether it is closed.
A parameter whose type is one of the project's classes (``ctx: Context``) gets objects
made in each version by its own class, called with generated arguments of the
constructor's parameter types (``construct.Classes``); objects the two versions make
differently are no input. An annotation beyond the type tree (``Iterable[str] | None``,
``datetime.date``, a ``TypeVar``, an alias bound under ``if TYPE_CHECKING:``) is read by the
child in the before module, by the typing rules, and its values are drawn with Hypothesis
(``for_type`` in ``DRIVER``; ``st.from_type`` for classes of the standard library), each
generated once and copied for each call, and written as a call's text that a fresh child
reads back as the same value (``sandbox._child.library_text``). Where no value of a
parameter's type can be drawn (a name the module does not bind, a Protocol, a class that
cannot be built), there is no search, and the outcome's ``note`` says which part and why.
For a method, ``self`` is built the same way, by calling its class; an object that cannot
be built is no input, and the object's state after the call is compared like the
arguments.
"""

from __future__ import annotations

import ast
import gzip
import importlib.metadata
import json
import logging
import math
import os
import posixpath
import subprocess
import sys
import tempfile
import threading
import time
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from veribot.checks.lang import pysource, pystrings
from veribot.checks.lang.pytypes import (
    BoolT,
    DictT,
    FloatT,
    IntT,
    IteratorT,
    ListT,
    NoneT,
    PyType,
    SetT,
    StreamT,
    StrT,
    TupleT,
    UnionT,
    Unknown,
    domain,
)
from veribot.checks.project.package import Package, PairContext
from veribot.checks.sandbox import DEFAULT_LIMITS, Limits, package_files, run_script
from veribot.checks.search import construct, differential
from veribot.checks.verdict import Counterexample

log = logging.getLogger(__name__)

FOUND_BY = "random-testing"
RESULT_MARKER = "@@veribot-search-result@@"

# Seconds kept back from the deadline for starting the child and confirming candidates.
_STARTUP_S = 0.7
_CONFIRM_RESERVE_S = 1.0
_MAX_CANDIDATES = 3



@dataclass(frozen=True)
class SearchOutcome:
    """What a search found: a confirmed counterexample, or none and why.

    ``undecided``: the first candidate that differed but did not refute for a reason the
    verdict should name (nondeterministic, the sandbox's refusal or limit), if any.
    """

    counterexample: Counterexample | None
    inputs_tried: int
    note: str
    undecided: differential.Confirmation | None = None


@dataclass(frozen=True)
class Candidate:
    """An input the child reported as distinguishing, not yet confirmed."""

    args: tuple[str, ...]
    before: str
    after: str


@dataclass(frozen=True)
class ChildReport:
    """The parsed result line of a search child."""

    status: str  # "found", "none", "error"
    candidates: tuple[Candidate, ...]
    tried: int
    message: str


# How deep objects of the project's classes are made inside each other's constructors.
_MAX_OBJECT_DEPTH = 2


def type_to_json(t: PyType, *, top: bool = True, classes: construct.Classes | None = None,
                 depth: int = 0, typed: bool = False, module: str = "") -> dict[str, object]:
    """Serialise a type tree for the child (which must not import veribot).

    ``{"k": "any"}`` is a type every value has (``Any``, ``object``, the elements of a bare
    ``list``); ``{"k": "unknown"}`` one the search cannot generate (and then does not run).
    With ``classes``, a type that is one of the project's classes is
    ``{"k": "object", "cls": name, "params": [[name, type, required, keyword], ...]}``:
    an object made by calling the class with generated arguments (see ``_object_json``).
    With ``typed``, an annotation the type tree does not know (``Iterable[str]``,
    ``datetime.date``, a ``TypeVar``) is ``{"k": "typed", "source": text}``: the search
    child reads it in the before module, by the typing rules, and draws its values with
    Hypothesis (``for_type`` in ``DRIVER``), or says why it cannot; with ``module`` (a
    project module's dotted name: the annotation of a class's constructor there), it is
    read in that module of the before revision.
    """
    def sub(x: PyType) -> dict[str, object]:
        return type_to_json(x, top=False, classes=classes, depth=depth, typed=typed,
                            module=module)

    if isinstance(t, BoolT):
        return {"k": "bool"}
    if isinstance(t, IntT):
        return {"k": "int"}
    if isinstance(t, FloatT):
        return {"k": "float"}
    if isinstance(t, StrT):
        return {"k": "str"}
    if isinstance(t, NoneT):
        return {"k": "none"}
    if isinstance(t, ListT):
        return {"k": "list", "elem": sub(t.elem)}
    if isinstance(t, IteratorT):
        return {"k": "iter", "elem": sub(t.elem)}
    if isinstance(t, StreamT):
        # A class of the project's own under the name (``class TextIO``) is what is meant.
        own = (_object_json(t.source, classes, depth, typed=typed) if classes is not None
               else None)
        return own or {"k": "stream", "binary": t.binary}
    if isinstance(t, SetT):
        return {"k": "frozenset" if t.frozen else "set", "elem": sub(t.elem)}
    if isinstance(t, TupleT):
        if t.homogeneous is not None:
            return {"k": "tuple", "homog": sub(t.homogeneous)}
        return {"k": "tuple", "items": [sub(i) for i in t.items]}
    if isinstance(t, DictT):
        return {"k": "dict", "key": sub(t.key), "value": sub(t.value)}
    if isinstance(t, UnionT):
        options = [sub(o) for o in t.options]
        # Values of the options it can generate are of the declared type too (a subset).
        known = [o for o in options if not _has_unknown(o)]
        return {"k": "union", "options": known or options}
    source = t.source if isinstance(t, Unknown) else "?"
    # No annotation at all (and none inferred): the parameter's domain is every value,
    # so any value is an input of it, at the top as inside a bare container.
    anything = source.rsplit(".", 1)[-1] in _ANYTHING or source == ""
    if not anything and classes is not None:
        made = _object_json(source, classes, depth, typed=typed)
        if made is not None:
            return made
    if typed and not anything and isinstance(t, Unknown) and source:
        return {"k": "typed", "source": source, **({"module": module} if module else {})}
    return {"k": "any" if anything else "unknown", "source": source}


def stream_note(types: Mapping[str, PyType]) -> str:
    """The note saying which parameters random testing gave streams ("" if none)."""
    parts = [f"`{name}: {s.text()}` searched as {s.searched_as()}"
             for name, t in types.items() for s in _streams(t)]
    return "; ".join(parts)


def _streams(t: PyType) -> list[StreamT]:
    if isinstance(t, StreamT):
        return [t]
    if isinstance(t, UnionT):
        return [s for o in t.options for s in _streams(o)]
    return []


def _object_json(name: str, classes: construct.Classes, depth: int, *,
                 typed: bool = False) -> dict[str, object] | None:
    """How the child makes an object of the project's class ``name``: each required
    constructor parameter gets a generated value, each optional one a value or its
    default; None if the class is not one of the project's or cannot be built so.
    ``typed``: see ``type_to_json`` (read in the module defining the class)."""
    if depth >= _MAX_OBJECT_DEPTH:
        return None
    found = classes.find(name)
    if found is None or found.why_not:
        return None
    params: list[list[object]] = []
    for p in found.params:
        tj = type_to_json(domain(p.type), classes=classes, depth=depth + 1, typed=typed,
                          module=found.module)
        if _has_unknown(tj):
            if p.required:
                return None
            continue  # its default is used
        params.append([p.name, tj, p.required, p.keyword])
    return {"k": "object", "cls": found.name, "params": params}


# Annotations under which every value is in the domain.
_ANYTHING = frozenset({"Any", "object"})


def _find_def(source: str, entry: str) -> tuple[ast.FunctionDef | ast.AsyncFunctionDef,
                                                 bool] | None:
    """The definition of ``entry`` and whether it is inside a class, read without running."""
    try:
        tree = pysource.parse(source)
    except SyntaxError:
        return None
    scope: list[ast.stmt] = tree.body
    parts = entry.split(".")
    for i, part in enumerate(parts):
        last = i == len(parts) - 1
        found: ast.stmt | None = None
        for node in scope:
            if last and isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                if node.name == part:
                    found = node
            elif not last and isinstance(node, ast.ClassDef) and node.name == part:
                found = node
        if found is None:
            return None
        if isinstance(found, ast.FunctionDef | ast.AsyncFunctionDef):
            return found, len(parts) > 1
        assert isinstance(found, ast.ClassDef)
        scope = found.body
    return None


def _decorators(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    names = set()
    for d in fn.decorator_list:
        node = d.func if isinstance(d, ast.Call) else d
        if isinstance(node, ast.Name):
            names.add(node.id)
        elif isinstance(node, ast.Attribute):
            names.add(node.attr)
    return names


def bound_parameter(source: str, entry: str) -> str | None:
    """The name of the parameter Python binds itself (``self``, ``cls``), if any."""
    found = _find_def(source, entry)
    if found is None or not found[1]:
        return None
    fn = found[0]
    if "staticmethod" in _decorators(fn):
        return None
    first = [*fn.args.posonlyargs, *fn.args.args][:1]
    return first[0].arg if first else None


def why_not_searched(source: str, entry: str, params: Sequence[tuple[str, PyType]],
                     classes: construct.Classes | None = None, *, typed: bool = False) -> str:
    """Why random search must not run on ``entry`` with these parameters ("" if it may).

    Only inputs of the declared types may be generated: an unknown type, or an instance
    method whose ``self`` cannot be built, means no search. (With ``typed``, annotations
    the child reads itself: it says why where it cannot.)
    """
    found = _find_def(source, entry)
    if found is not None and found[1]:
        why = _why_not_built(construct.member(source, entry), classes, typed=typed)
        if why:
            return f"random testing was not run: {why}"
    unknown = [
        f"`{name}` ({t.text() if not isinstance(t, Unknown) or t.source else 'no annotation'})"
        for name, t in params
        if _has_unknown(type_to_json(t, classes=classes, typed=typed))
    ]
    if unknown:
        return (f"random testing was not run: no usable type for {', '.join(unknown)}, and it "
                "only tries inputs of the declared types")
    return ""


def _why_not_built(m: construct.Member | None, classes: construct.Classes | None = None, *,
                   typed: bool = False) -> str:
    """Why the objects a method is called on cannot be built ("" if they can)."""
    if m is None or m.kind in (construct.STATIC, construct.INIT):
        return ""
    if m.why_not:
        return f"`{m.cls}` objects are not built: {m.why_not}"
    unknown = [p.name for p in m.params
               if p.required and _has_unknown(type_to_json(p.type, classes=classes,
                                                           typed=typed))]
    if unknown:
        names = ", ".join(f"`{n}`" for n in unknown)
        return (f"`{m.cls}` objects are not built: its constructor needs {names}, of a "
                "type random testing cannot generate")
    return ""


def receiver_spec(source: str, entry: str, classes: construct.Classes | None = None, *,
                  typed: bool = False) -> dict[str, object] | None:
    """How the search child builds the object a method is called on, or None.

    ``{"cls": "Point", "params": [[name, type, required, keyword], ...], "read": bool}``;
    constructor parameters with a default whose type cannot be generated are left out.
    For the constructor itself: ``{"init": true}`` (the class is called). With ``typed``,
    see ``type_to_json`` (the class's constructor is read in the same module).
    """
    m = construct.member(source, entry)
    if m is None or m.kind == construct.STATIC or _why_not_built(m, classes, typed=typed):
        return None
    if m.kind == construct.INIT:
        return {"init": True}
    params: list[list[object]] = []
    for p in m.params:
        tj = type_to_json(domain(p.type), classes=classes, typed=typed)
        if _has_unknown(tj):
            continue
        params.append([p.name, tj, p.required, p.keyword])
    return {"cls": m.cls, "params": params, "read": m.kind == construct.PROPERTY}


def entry_parameters(source: str, entry: str) -> list[str] | None:
    """The positional parameter names of ``entry`` in ``source``, read without running it.

    Parameters with a default are left out (the call uses the default), and so is the one
    Python binds itself (``self``, ``cls``). ``None`` if the source does not parse or has
    no such function.
    """
    found = _find_def(source, entry)
    if found is None:
        return None
    args = found[0].args
    positional = [a.arg for a in [*args.posonlyargs, *args.args]]
    with_default = len(args.defaults)
    names = positional[: len(positional) - with_default] if with_default else positional
    bound = bound_parameter(source, entry)
    if bound is not None and names and names[0] == bound:
        names = names[1:]
    return names


def code_constants(*sources: str) -> tuple[list[int], list[str]]:
    """Small int and str constants appearing in the sources: good values to try."""
    ints: set[int] = set()
    strs: set[str] = set()
    for source in sources:
        try:
            tree = pysource.parse(source)
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant):
                v = node.value
                if isinstance(v, bool):
                    continue
                if isinstance(v, int) and abs(v) <= 10**6:
                    ints.add(v)
                elif isinstance(v, str) and 0 < len(v) <= 8:
                    strs.add(v)
    return sorted(ints)[:24], sorted(strs)[:24]


# `re` functions whose first argument is a pattern.
_RE_FUNCTIONS = {"compile", "match", "search", "fullmatch", "sub", "subn", "split", "findall",
                 "finditer"}


def regex_patterns(*sources: str) -> list[str]:
    """String patterns the sources give to ``re`` (``re.compile(r"...")``, ``re.sub``): text
    matching them is worth trying, since random text rarely does (a changed module-level
    regular expression changes every function that uses it)."""
    found: list[str] = []
    for source in sources:
        try:
            tree = pysource.parse(source)
        except SyntaxError:
            continue
        names = {a.asname or a.name for n in ast.walk(tree) if isinstance(n, ast.Import)
                 for a in n.names if a.name == "re"}
        direct = {a.asname or a.name for n in ast.walk(tree)
                  if isinstance(n, ast.ImportFrom) and n.module == "re"
                  for a in n.names if a.name in _RE_FUNCTIONS}
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call) or not node.args:
                continue
            func = node.func
            is_re = (isinstance(func, ast.Attribute) and func.attr in _RE_FUNCTIONS
                     and isinstance(func.value, ast.Name) and func.value.id in names) or (
                isinstance(func, ast.Name) and func.id in direct)
            first = node.args[0]
            if is_re and isinstance(first, ast.Constant) and isinstance(first.value, str) and (
                len(first.value) <= 300 and first.value not in found
            ):
                found.append(first.value)
    return found[:8]


def build_spec(
    before_src: str,
    after_src: str,
    entry: str,
    param_types: Mapping[str, PyType],
    *,
    time_cap_s: float,
    call_s: float,
    max_examples: int = 5000,
    classes: construct.Classes | None = None,
    typed: bool = False,
) -> tuple[dict[str, object], list[str], str]:
    """The child's JSON spec; also the parameter names, and why not to search ("" if
    the search may run: see ``why_not_searched``). ``classes``: the project's classes
    whose objects may be made as arguments (see ``type_to_json``). ``typed``: other
    annotations are read by the child (``for_type`` in ``DRIVER``; that child only)."""
    names = entry_parameters(before_src, entry)
    bound = bound_parameter(before_src, entry)
    if names is None:
        names = [n for n in param_types if n != bound]
    # A type given for a parameter with a default still gets a value.
    for name in param_types:
        if name not in names and name != bound:
            names.append(name)
    declared = [(name, param_types.get(name, Unknown(""))) for name in names]
    # The typing rules widen each type: bools where int is declared, ints where float is.
    params: list[list[object]] = [
        [name, type_to_json(domain(t), classes=classes, typed=typed)] for name, t in declared]
    ints, strs = code_constants(before_src, after_src)
    strs = list(dict.fromkeys([*pystrings.seeds([before_src, after_src], entry), *strs]))[:48]
    spec: dict[str, object] = {
        "entry": entry,
        "params": params,
        "time_cap_s": time_cap_s,
        "call_s": call_s,
        "max_examples": max_examples,
        "int_constants": ints,
        "str_constants": strs,
        "regexes": regex_patterns(before_src, after_src),
        "max_candidates": _MAX_CANDIDATES,
        "receiver": receiver_spec(before_src, entry, classes, typed=typed),
    }
    if typed:
        spec["annotations"] = {name: t.text() for name, t in declared}
        if _has_typed(spec):
            spec["objects"] = _class_objects(before_src, classes)
            spec["type_checking"] = type_checking_imports(before_src)
    return spec, names, why_not_searched(before_src, entry, declared, classes, typed=typed)


def _has_typed(tj: object) -> bool:
    if isinstance(tj, dict):
        return tj.get("k") == "typed" or any(_has_typed(v) for v in tj.values())
    if isinstance(tj, list):
        return any(_has_typed(v) for v in tj)
    return False


# At most this many of the module's classes are offered to the child for typed annotations.
_MAX_TYPED_CLASSES = 40


def _class_objects(source: str, classes: construct.Classes | None) -> dict[str, object]:
    """For each name the module binds to a class of the project, how the child makes its
    objects (``_object_json``), or why they are not made (``{"why": ...}``): a class of
    the project met in a typed annotation (``Sequence[Item]``) gets objects made by each
    version's own class, never values drawn from the before version's class alone."""
    if classes is None:
        return {}
    found: dict[str, object] = {}
    for name in sorted(construct.class_names(source))[:_MAX_TYPED_CLASSES]:
        made = _object_json(name, classes, 0, typed=True)
        if made is not None:
            found[name] = made
            continue
        buildable = classes.find(name)
        if buildable is None:
            continue
        missing = [f"`{p.name}: {p.type.text()}`" for p in buildable.params if p.required
                   and _has_unknown(type_to_json(domain(p.type), classes=classes, depth=1,
                                                 typed=True, module=buildable.module))]
        found[name] = {"why": buildable.why_not or (
            f"its constructor needs {', '.join(missing) or 'a value'}, of a type random "
            "testing cannot generate")}
    return found


def type_checking_imports(source: str) -> dict[str, list[str]]:
    """The names the module binds under ``if TYPE_CHECKING:`` (its top level), as a type
    checker reads them, by how to import them: ``["from", ".models", "Item"]`` or
    ``["module", "a.b", "a"]`` (import the first, bind the second); ``["other", "", ""]``
    for a name bound there otherwise (a class, an assignment), which the search does not
    read. They come before the module's own names (``else: Bar = object`` is not the type
    the annotation means). The child imports one only when an annotation needs it."""
    try:
        tree = pysource.parse(source)
    except SyntaxError:
        return {}
    found: dict[str, list[str]] = {}
    for node in tree.body:
        if not (isinstance(node, ast.If) and _is_type_checking(node.test)):
            continue
        for stmt in node.body:
            if not isinstance(stmt, ast.Import | ast.ImportFrom):
                for name in construct.bound_names(stmt):
                    found[name] = ["other", "", ""]
            if isinstance(stmt, ast.ImportFrom):
                target = "." * stmt.level + (stmt.module or "")
                for alias in stmt.names:
                    if alias.name != "*":
                        found[alias.asname or alias.name] = ["from", target, alias.name]
            elif isinstance(stmt, ast.Import):
                for alias in stmt.names:
                    if alias.asname:
                        found[alias.asname] = ["module", alias.name, alias.name]
                    else:
                        top = alias.name.split(".")[0]
                        found[top] = ["module", alias.name, top]
    return found


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _has_unknown(tj: Mapping[str, object]) -> bool:
    if tj["k"] == "unknown":
        return True
    for key in ("elem", "homog", "key", "value"):
        sub = tj.get(key)
        if isinstance(sub, dict) and _has_unknown(sub):
            return True
    for key in ("items", "options"):
        subs = tj.get(key)
        if isinstance(subs, list) and any(_has_unknown(s) for s in subs):
            return True
    return False


def has_unknown(tj: Mapping[str, object]) -> bool:
    """Whether a serialised type (``type_to_json``) has a part no value can be drawn for."""
    return _has_unknown(tj)


def parse_report(stdout: str) -> ChildReport | None:
    """The last result line a child printed, or ``None`` if it printed none."""
    line = None
    for raw in stdout.splitlines():
        if raw.startswith(RESULT_MARKER):
            line = raw[len(RESULT_MARKER) :]
    if line is None:
        return None
    try:
        data = json.loads(line)
    except json.JSONDecodeError:
        return None
    if not isinstance(data, dict):
        return None
    candidates: list[Candidate] = []
    for c in data.get("candidates", []):
        if not isinstance(c, dict) or not isinstance(c.get("args"), list):
            continue
        if not all(isinstance(a, str) for a in c["args"]):
            continue
        candidates.append(
            Candidate(tuple(c["args"]), str(c.get("before", "")), str(c.get("after", "")))
        )
    tried = data.get("tried", 0)
    return ChildReport(
        status=str(data.get("status", "error")),
        candidates=tuple(candidates),
        tried=tried if isinstance(tried, int) else 0,
        message=str(data.get("message", "")),
    )


def confirm_candidates(
    before_src: str,
    after_src: str,
    entry: str,
    candidates: Sequence[Candidate],
    *,
    found_by: str,
    limits: Limits,
    until: float,
    context: PairContext | None = None,
) -> tuple[Counterexample | None, int, differential.Confirmation | None]:
    """Confirm candidates in order until one reproduces or time ``until`` passes.

    Returns the counterexample (or ``None``), how many candidates were run, and the
    first that was undecided for a reason the verdict should name (or ``None``).
    """
    run = 0
    undecided: differential.Confirmation | None = None
    for cand in candidates:
        if run and time.monotonic() >= until:
            break
        run += 1
        seen = differential.examine(
            before_src, after_src, entry, cand.args, found_by=found_by, limits=limits,
            context=context,
        )
        if seen.counterexample is not None:
            return seen.counterexample, run, undecided
        if seen.reason and undecided is None:
            undecided = seen
        log.info("candidate %s from %s did not reproduce: %s", cand.args, found_by,
                 seen.detail or "the versions behaved the same")
    return None, run, undecided


def search(
    before_src: str,
    after_src: str,
    entry: str,
    param_types: Mapping[str, PyType],
    *,
    deadline_s: float,
    limits: Limits = DEFAULT_LIMITS,
    context: PairContext | None = None,
) -> SearchOutcome:
    """Look for an input on which ``entry`` behaves differently in the two sources.

    ``param_types`` maps parameter names to types. Only inputs of those types are tried;
    with a parameter of unknown type, or an instance method, nothing is (the note says
    why). The whole search, confirmation included, aims to end within ``deadline_s``
    seconds (plus process start-up slack). With ``context``, each version is imported as
    part of its own revision's package (read-only folders of the child's workspace).
    """
    start = time.monotonic()
    report, tried, note = _run_search(before_src, after_src, entry, param_types,
                                      deadline_s=deadline_s, limits=limits, context=context)
    if report is None:
        return SearchOutcome(None, tried, note)
    if report.status != "found" or not report.candidates:
        return SearchOutcome(None, report.tried, report.message or "no difference found")
    cex, confirmed_runs, undecided = confirm_candidates(
        before_src,
        after_src,
        entry,
        report.candidates,
        found_by=FOUND_BY,
        limits=limits,
        until=start + deadline_s,
        context=context,
    )
    if cex is None:
        note = f"{confirmed_runs} candidate input(s) found by random testing did not reproduce"
        if undecided is not None:
            note += f" ({undecided.detail})"
        return SearchOutcome(None, report.tried, note, undecided)
    return SearchOutcome(cex, report.tried, report.message)


def _run_search(
    before_src: str,
    after_src: str,
    entry: str,
    param_types: Mapping[str, PyType],
    *,
    deadline_s: float,
    limits: Limits,
    context: PairContext | None,
    extra: Mapping[str, object] | None = None,
) -> tuple[ChildReport | None, int, str]:
    """Run the search child; its report, or None with the inputs tried and why."""
    time_cap = max(0.3, deadline_s - _STARTUP_S - _CONFIRM_RESERVE_S)
    call_s = min(limits.call_s, max(0.2, time_cap / 8))
    spec, _names, why_not = build_spec(
        before_src, after_src, entry, param_types, time_cap_s=time_cap, call_s=call_s,
        classes=project_classes(before_src, context.before if context else None), typed=True,
    )
    if why_not:
        return None, 0, why_not
    spec.update(extra or {})
    child_limits = Limits(
        wall_s=time_cap + _STARTUP_S + 2 * call_s + 1.0,
        call_s=call_s,
        cpu_s=max(limits.cpu_s, math.ceil(time_cap) + 5),
        memory_mb=limits.memory_mb,
        file_size_mb=limits.file_size_mb,
        processes=limits.processes,
    )
    files: dict[str, str | bytes] = {
        "before.py": before_src,
        "after.py": after_src,
        "canonical.py": canonical_source(),
        TABLES_FILE: hypothesis_tables(),
    }
    readonly: list[str] = []
    packages: dict[str, object] = {}
    for label, package, source in (("before", context and context.before, before_src),
                                   ("after", context and context.after, after_src)):
        if package:
            folder = f"__veribot_{label}__"
            tree, _ = package_files(folder, package, source)
            files.update(tree)
            readonly.append(folder)
            packages[label] = {"root": posixpath.join(folder, package.root),
                               "module": package.module}
    files["spec.json"] = json.dumps({**spec, "packages": packages})
    run = run_script(DRIVER, files, limits=child_limits, readonly=readonly)
    report = parse_report(run.stdout)
    if report is None:
        why = "timed out" if run.timed_out else f"exit code {run.returncode}"
        tail = run.stderr.strip().splitlines()[-1:] or [""]
        note = f"search child gave no result ({why}) {tail[0]}".strip()
        log.info("difftest child failed: %s", note)
        return None, 0, note
    return report, report.tried, report.message


def search_crash(
    source: str,
    entry: str,
    param_types: Mapping[str, PyType],
    crash: Mapping[str, object],
    *,
    deadline_s: float,
    limits: Limits = DEFAULT_LIMITS,
    package: Package | None = None,
) -> tuple[list[tuple[str, ...]], int, str]:
    """Look for inputs (of ``param_types``, drawn as for ``search``) on which ``entry``
    raises what ``crash`` counts (``checks.safety``: ``raise_lines``, ``documented``,
    ``environment``, optional ``line`` and ``exception``): the candidates' argument
    texts (shrunk first), the inputs tried, and a note. Nothing here is confirmed: the
    caller runs each candidate again in fresh children."""
    context = PairContext(before=package, after=package) if package is not None else None
    report, tried, note = _run_search(source, source, entry, param_types,
                                      deadline_s=deadline_s, limits=limits, context=context,
                                      extra={"crash": dict(crash)})
    if report is None or report.status != "found":
        return [], tried, note or "no crash found"
    return [c.args for c in report.candidates], tried, note


def project_classes(source: str, package: Package | None) -> construct.Classes:
    """The project's classes the module under review names (``construct.Classes``)."""
    if package is None:
        return construct.Classes(source)
    return construct.Classes(source, module=package.module, root=package.root,
                             files=dict(package.files),
                             package=package.path.endswith("/__init__.py"))


# Builds Hypothesis's Unicode tables in a storage folder of its own (HYPOTHESIS_STORAGE_DIRECTORY).
_TABLES_SCRIPT = """
from hypothesis.internal.charmap import charmap, intervals_from_codec
charmap()
intervals_from_codec("utf-8")
"""
TABLES_FILE = "hypothesis_tables.json"


_TABLES: dict[str, str] = {}  # "text": the tables, once read or built
_TABLES_LOCK = threading.Lock()


def hypothesis_tables() -> str:
    """Hypothesis's Unicode tables (its cache files under ``unicode_data/``, as JSON text
    by path), or "{}" while they are not ready (the search child then builds them itself,
    as Hypothesis does). Built by Hypothesis itself, once per machine and versions, in a
    plain child of this interpreter (the sandbox's) and a folder of its own, in the
    background, and kept in the user's cache folder.

    Hypothesis builds them at the first text it draws, and caches them in the current
    folder, which in the sandbox is new for every search: one to three seconds of every
    search child's time. The search child writes them back before it starts."""
    with _TABLES_LOCK:
        if "text" in _TABLES:
            return _TABLES["text"]
        kept = _read_tables()
        if kept is not None:
            _TABLES["text"] = kept
            return kept
        # Once per process (a forked one starts its own: its parent's thread is not in it).
        if _TABLES.get("building") != str(os.getpid()):
            _TABLES["building"] = str(os.getpid())
            threading.Thread(target=_build_tables, name="veribot-hypothesis-tables",
                             daemon=True).start()
    return "{}"


def _read_tables() -> str | None:
    try:
        text = _tables_path().read_text("utf-8")
        tables = json.loads(text)
    except (OSError, ValueError):
        return None
    if isinstance(tables, dict) and tables and all(
            isinstance(k, str) and isinstance(v, str) for k, v in tables.items()):
        return text
    return None


def _build_tables() -> None:
    text = _built_tables()
    with _TABLES_LOCK:
        _TABLES["text"] = text


def _built_tables() -> str:
    kept = _tables_path()
    try:
        with tempfile.TemporaryDirectory(prefix="veribot-hypothesis-") as home:
            subprocess.run([sys.executable, "-I", "-c", _TABLES_SCRIPT], cwd=home, timeout=60,
                           env={**os.environ, "HYPOTHESIS_STORAGE_DIRECTORY": home},
                           check=True, capture_output=True)
            found = {path.relative_to(home).as_posix():
                     gzip.decompress(path.read_bytes()).decode("utf-8")
                     for path in Path(home, "unicode_data").rglob("*.json.gz")}
    except (OSError, subprocess.SubprocessError, ValueError) as exc:
        log.info("Hypothesis's Unicode tables were not built here: %s", exc)
        return "{}"
    text = json.dumps(found)
    try:
        kept.parent.mkdir(parents=True, exist_ok=True)
        partial = kept.with_name(f"{kept.name}.{os.getpid()}.part")
        partial.write_text(text, "utf-8")
        os.replace(partial, kept)
    except OSError as exc:
        log.info("Hypothesis's Unicode tables were not kept: %s", exc)
    return text


def _tables_path() -> Path:
    """Where the tables are kept: the user's cache folder, by Python, Unicode and
    Hypothesis versions."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    try:
        hypothesis = importlib.metadata.version("hypothesis")
    except importlib.metadata.PackageNotFoundError:
        hypothesis = "none"
    python = f"{sys.version_info[0]}.{sys.version_info[1]}"
    return Path(base, "veribot", f"hypothesis-tables-{python}-{unicodedata.unidata_version}-"
                f"{hypothesis}.json")


def canonical_source() -> str:
    """The sandbox child's source, whose ``canonical`` and ``parse_literal`` the search
    child uses, so that "behaves the same" means exactly what ``differential`` means."""
    return resources.files("veribot.checks.sandbox").joinpath("_child.py").read_text("utf-8")


def _join(*parts: str) -> str:
    return "; ".join(p for p in parts if p)


# What every search child starts with: the result channel, and loading the two versions.
# It runs under `python -I` in the sandbox's temporary directory, next to before.py,
# after.py and spec.json, and imports neither veribot nor z3.
DRIVER_PRELUDE = r'''
import builtins, importlib, importlib.util, json, os, sys

MARKER = "@@veribot-search-result@@"
_real_stdout = sys.stdout
spec = json.load(open("spec.json"))


def emit(obj):
    _real_stdout.write("\n" + MARKER + json.dumps(obj) + "\n")
    _real_stdout.flush()


def load(name, path):
    mod_spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(mod_spec)
    sys.modules[name] = mod
    mod_spec.loader.exec_module(mod)
    return mod


def load_version(label):
    """One version: alone as "subject", or as part of its package (its own tree).

    The other version's package modules are dropped from sys.modules first. A function
    that imports at call time may then see the other version's modules: only a false
    candidate, which the confirmation in separate children rejects.
    """
    package = spec["packages"].get(label)
    if package is None:
        return load("subject", label + ".py")
    top = package["module"].split(".")[0]
    for name in [n for n in sys.modules if n == top or n.startswith(top + ".")]:
        del sys.modules[name]
    root = os.path.abspath(package["root"])
    sys.path.insert(0, root)
    try:
        return importlib.import_module(package["module"])
    finally:
        sys.path.remove(root)


def resolve(mod, entry):
    obj = mod
    for part in entry.split("."):
        obj = getattr(obj, part)
    return obj
'''

# The random-testing child (Hypothesis).
DRIVER = DRIVER_PRELUDE + r'''
import collections.abc, copy, io, math, signal, time

T0 = time.monotonic()
CAP = float(spec["time_cap_s"])
CALL_S = float(spec["call_s"])


class Hang(BaseException):
    pass


class OutOfTime(BaseException):
    pass


_armed = [False]
LAST_RAISED = [None]  # the exception the last call raised (crash mode reads it)


def _on_alarm(signum, frame):
    if _armed[0]:
        raise Hang()


signal.signal(signal.SIGALRM, _on_alarm)


import ast, builtins, typing


class NoStrategy(Exception):
    """No value of a type can be drawn: ``part`` (the type, as text) ``what`` (why)."""

    def __init__(self, part, what):
        super().__init__(part + " " + what)
        self.part, self.what = part, what


TYPED = {}  # an annotation's text -> the type it names in the before module, or NoStrategy
CHECKED = []  # what names bound only under `if TYPE_CHECKING:` were imported as
TYPE_CHECKING_NAMES = spec.get("type_checking", {})


def typed_sources(tj, out):
    if isinstance(tj, dict):
        if tj.get("k") == "typed":
            out.append((tj.get("module", ""), tj["source"]))
        for v in tj.values():
            typed_sources(v, out)
    elif isinstance(tj, list):
        for v in tj:
            typed_sources(v, out)
    return out


class Reader:
    """Reads an annotation's text as Python would in the module: its names in the
    module's namespace (then those bound under ``if TYPE_CHECKING:``, imported now, the
    builtins and ``typing``'s), string parts as forward references. Only names,
    attributes, subscripts, ``|``, constants and lists: no call is made."""

    def __init__(self, mod):
        self.mod, self.ns = mod, vars(mod)

    def text(self, source, depth=0):
        if depth > 20:
            raise NoStrategy("`" + source + "`", "nests forward references too deeply")
        try:
            node = ast.parse(source.strip(), mode="eval").body
        except SyntaxError:
            raise NoStrategy("`" + source + "`", "does not parse as an expression") from None
        return self.value(node, depth)

    def name(self, name):
        if name in TYPE_CHECKING_NAMES:  # what a type checker reads the name as
            return self.checking(name)
        if name in self.ns:
            return self.ns[name]
        if hasattr(builtins, name):
            return getattr(builtins, name)
        if name in typing.__all__:
            return getattr(typing, name)
        raise NoStrategy("`" + name + "`", "could not be resolved in the module")

    def checking(self, name):
        kind, target, attr = TYPE_CHECKING_NAMES[name]
        if kind == "other":
            raise NoStrategy("`" + name + "`", "is bound under `if TYPE_CHECKING:` by a "
                             "statement that does not run, not read by the search")
        root = None
        package = spec["packages"].get("before")
        if package is not None:
            root = os.path.abspath(package["root"])
            sys.path.insert(0, root)
        try:
            found = importlib.import_module(target, package=self.mod.__package__ or None)
            if kind == "module":
                value = importlib.import_module(attr)
            elif hasattr(found, attr):
                value = getattr(found, attr)
            else:
                value = importlib.import_module(found.__name__ + "." + attr)
            CHECKED.append(value)
            return value
        except Exception as exc:
            raise NoStrategy("`" + name + "`", "is bound under `if TYPE_CHECKING:`, and "
                             "importing it here failed (" + type(exc).__name__ + ")") from None
        finally:
            if root is not None:
                sys.path.remove(root)

    def value(self, node, depth, literal=False):
        shown = "`" + ast.unparse(node) + "`"
        if isinstance(node, ast.Constant):
            if isinstance(node.value, str) and not literal:
                return self.text(node.value, depth + 1)  # a forward reference
            return node.value
        if (literal and isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub)
                and isinstance(node.operand, ast.Constant)):
            return -node.operand.value
        if isinstance(node, ast.Name):
            return self.name(node.id)
        if isinstance(node, ast.Attribute):
            base = self.value(node.value, depth)
            try:
                return getattr(base, node.attr)
            except Exception:
                raise NoStrategy(shown, "could not be resolved in the module") from None
        if isinstance(node, ast.Subscript):
            base = self.value(node.value, depth)
            items = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
            if base is typing.Literal:
                args = [self.value(i, depth, literal=True) for i in items]
            elif base is typing.Annotated:
                args = [self.value(items[0], depth)] + [None for _ in items[1:]]
            else:
                args = [self.value(i, depth) for i in items]
            try:
                return base[tuple(args) if isinstance(node.slice, ast.Tuple) else args[0]]
            except Exception as exc:
                raise NoStrategy(shown, "is not a type Python accepts ("
                                 + type(exc).__name__ + ")") from None
        if isinstance(node, ast.List):  # the parameters of a Callable
            return [self.value(e, depth) for e in node.elts]
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
            left, right = self.value(node.left, depth), self.value(node.right, depth)
            try:
                return typing.Union[left, right]
            except Exception as exc:
                raise NoStrategy(shown, "is not a type Python accepts ("
                                 + type(exc).__name__ + ")") from None
        raise NoStrategy(shown, "is not a type expression the search reads")


def project_module(name):
    """A module of the before revision's package, imported as it is now."""
    root = None
    package = spec["packages"].get("before")
    if package is not None:
        root = os.path.abspath(package["root"])
        sys.path.insert(0, root)
    try:
        return importlib.import_module(name)
    finally:
        if root is not None:
            sys.path.remove(root)


def resolve_typed(reader):
    """Each typed annotation of the spec, read in the before module (``TYPED``), or in
    the project module defining the class whose constructor it annotates."""
    readers = {"": reader}
    wanted = [spec["params"], spec.get("receiver"), spec.get("objects")]
    for module, source in typed_sources(wanted, []):
        if (module, source) in TYPED:
            continue
        try:
            if module not in readers:
                readers[module] = Reader(project_module(module))
            TYPED[(module, source)] = readers[module].text(source)
        except NoStrategy as why:
            TYPED[(module, source)] = why
        except Exception as exc:  # the module's own code (a module __getattr__) may raise
            TYPED[(module, source)] = NoStrategy("`" + source + "`", "could not be read in "
                                                 "the module (" + type(exc).__name__ + ")")


canon = load("veribot_canonical", "canonical.py")
sys.stdout = io.StringIO()
fns = []
owners = []  # the class of a method, in each version
mods = []  # each version's module: the project's classes are made from it
RECV = spec.get("receiver")
NAME = spec["entry"].rsplit(".", 1)[-1]
for label in ("before", "after"):
    try:
        # Both load under one name, as in the sandbox, so their own types encode alike.
        loaded_mod = load_version(label)
        mods.append(loaded_mod)
        fns.append(resolve(loaded_mod, spec["entry"]))
        if RECV:
            owners.append(resolve(loaded_mod, spec["entry"].rsplit(".", 1)[0]))
    except BaseException as exc:
        emit({"status": "error", "tried": 0,
              "message": label + " version could not be loaded: "
                         + type(exc).__name__ + ": " + str(exc)[:200]})
        sys.exit(0)
    if label == "before":
        # Typed annotations name what the before module binds, read before the after
        # version replaces its package's modules.
        READER = Reader(loaded_mod)
        resolve_typed(READER)
OWNER_PARAMETERS = tuple(getattr(owners[0], "__parameters__", ()) or ()) if owners else ()


def unicode_tables():
    """Hypothesis's Unicode tables, as the parent built them (``hypothesis_tables``), in
    the folder where Hypothesis looks for them first: not built again here."""
    import gzip
    try:
        with open("hypothesis_tables.json") as tables_file:
            tables = json.load(tables_file)
    except (OSError, ValueError):
        return
    for name, text in tables.items():
        parts = name.split("/")
        if parts[0] != "unicode_data" or any(p in ("", ".", "..") for p in parts):
            continue
        path = os.path.join(".hypothesis", *parts)
        try:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with gzip.GzipFile(path, "wb", mtime=1) as table:
                table.write(text.encode("utf-8"))
        except OSError:
            return


unicode_tables()
from hypothesis import HealthCheck, find, settings, strategies as st
from hypothesis.errors import NoSuchExample, Unsatisfiable

INTS = spec["int_constants"]
STRS = spec["str_constants"]


def ints(bools=False):
    near = sorted({c + d for c in INTS for d in (-1, 0, 1)})
    edges = [0, 1, -1, 2, 255, 256, 2**31 - 1, -2**31, 2**63 - 1, -2**63, 2**64]
    parts = [st.integers(-10, 10), st.integers(-1000, 1000),
             st.sampled_from(edges + [True, False] if bools else edges)]
    if near:
        parts.append(st.sampled_from(near))
    return st.one_of(*parts)


def floats():
    return st.one_of(
        st.sampled_from([0.0, 1.0, -1.0, 0.5, -0.0, float("nan"), float("inf"), float("-inf"),
                         1e-300, 1e300]),
        st.floats(-100, 100),
        st.floats(),
    )


def _regex_texts():
    """Text containing a match of each pattern the code gives to `re`, where Hypothesis
    can generate one."""
    found = []
    for pattern in spec.get("regexes", []):
        try:
            strategy = st.from_regex(pattern)
            strategy.validate()
        except Exception:
            continue
        found.append(strategy)
    return found


REGEX_TEXTS = _regex_texts()


def texts():
    chars = "".join(sorted({ch for s in STRS for ch in s})) + "ab ()[]01-+.,"
    parts = [st.text(alphabet=chars, max_size=8), st.text(max_size=8)]
    if STRS:
        parts.insert(0, st.sampled_from(STRS))
        # What the code looks for, within other text: "x" + "\x1b[0m" + "y".
        piece = st.one_of(st.sampled_from(STRS), st.text(alphabet=chars, max_size=3))
        parts.insert(1, st.lists(piece, min_size=2, max_size=4).map("".join))
    return st.one_of(*REGEX_TEXTS, *parts)


# Builtin classes are values too, of a parameter that takes any object.
CLASSES = [int, str, list, dict, tuple, object]


def anything(top):
    """Values of a type that takes every value (Any, object, a bare list's elements)."""
    parts = [st.integers(-10, 10), st.floats(-10, 10, allow_nan=False), st.none()]
    if STRS:
        parts.append(st.sampled_from(STRS))
    if top:
        parts += [ints(), st.lists(ints(), max_size=8), texts(), st.sampled_from(CLASSES)]
    return st.one_of(*parts)


def made(tj):
    """Objects of one of the project's classes: the class called with generated arguments
    (a ``Build``, made in each version by its own class when the input is run). A typed
    parameter with no values: left out if it has a default, else no object is made."""
    def param(n, t, req):
        try:
            drawn = strat(t, top=True)
        except NoStrategy as why:
            if req:
                raise NoStrategy("`" + tj["cls"] + "`", "is a class of the project whose "
                                 "objects are not built: its constructor's `" + n + "`: "
                                 + why.part + " " + why.what) from None
            return st.just(OMIT)
        return drawn if req else st.one_of(st.just(OMIT), drawn)

    pos = [param(n, t, True) for n, t, req, kw in tj["params"] if not kw]
    kws = {n: param(n, t, req) for n, t, req, kw in tj["params"] if kw}
    return st.builds(
        lambda p, k: canon.Build(tj["cls"], list(p), {a: b for a, b in k.items() if b is not OMIT}),
        st.tuples(*pos), st.fixed_dictionaries(kws))


def hashable(tj):
    """Whether every value of the type is hashable (else a set or key of it is empty)."""
    return tj["k"] in ("int", "bool", "float", "str", "none", "frozenset") or (
        tj["k"] == "tuple"
        and all(hashable(i) for i in tj.get("items", []) or [tj["homog"]])
    ) or (tj["k"] == "union" and all(hashable(o) for o in tj["options"]))


# ---- typed annotations: a type read in the before module, drawn by the typing rules

import collections, enum, pathlib, re, types as pytypes

ABC = collections.abc
UNIONS = (typing.Union, pytypes.UnionType)
DROPPED = []  # NoStrategy of the union options left out (the search ran without them)
TOP_PACKAGE = ((spec["packages"].get("before") or {}).get("module") or "subject").split(".")[0]
OBJECTS = spec.get("objects", {})
# Builtin classes a value may be (a ``type[...]`` parameter): what ``parse_literal`` reads.
CLASS_VALUES = [int, str, float, bool, bytes, complex, list, tuple, dict, set, frozenset,
                object, type, range, bytearray]


class ConstFn:
    """A function argument by what it returns: each call gets a fresh
    ``lambda *args, **kwargs: value`` (a value of the declared return type)."""

    def __init__(self, value):
        self.value = value

    def make(self):
        value = self.value
        return lambda *args, **kwargs: fresh(copy.deepcopy(value))


def shown(tp):
    """A type as the notes write it."""
    if isinstance(tp, typing.TypeVar):
        return "`" + tp.__name__ + "`"
    if isinstance(tp, type):
        where = tp.__module__
        if where in ("builtins", "subject") or where.split(".")[0] == TOP_PACKAGE:
            return "`" + tp.__qualname__ + "`"
        return "`" + where + "." + tp.__qualname__ + "`"
    return "`" + repr(tp).replace("typing.", "").replace("collections.abc.", "") + "`"


def plain(v, depth=0):
    """Whether ``v`` holds only values written as literals (no object still to build, no
    iterator, stream or function argument): what a set, a key or a library container holds."""
    if depth > 50 or isinstance(v, (Items, Stream, ConstFn, canon.Build, Recv)):
        return False
    if isinstance(v, (list, tuple, set, frozenset, collections.deque)):
        return all(plain(x, depth + 1) for x in v)
    if isinstance(v, dict):
        return all(plain(k, depth + 1) and plain(x, depth + 1) for k, x in v.items())
    return True


def key_ok(v):
    if not plain(v):
        return False
    try:
        hash(v)
    except Exception:
        return False
    return True


def norm(v, depth=0):
    """``v`` with iterators, streams and function arguments replaced by what they hold,
    generated (``Items``) or read back from a call's text alike: to compare the two."""
    if depth > 50:
        return v
    if isinstance(v, Items):
        return ["\0iter", norm(list(v.items), depth + 1)]
    if isinstance(v, Stream):
        return v.open()
    if isinstance(v, ConstFn):
        return ["\0fn", norm(v.value, depth + 1)]
    if isinstance(v, pytypes.FunctionType):  # a constant function read back from its text
        return ["\0fn", norm(v(), depth + 1)]
    if isinstance(v, collections.abc.Iterator) and not isinstance(v, io.IOBase):
        return ["\0iter", norm(list(v), depth + 1)]
    if type(v) in (list, tuple):
        return type(v)(norm(x, depth + 1) for x in v)
    if type(v) is dict:
        return {k: norm(x, depth + 1) for k, x in v.items()}
    return v


def representable(v):
    """Whether a call's text can write ``v`` so that it reads back as the same value."""
    try:
        text = lit(v)
        back = canon.parse_literal(text, objects=True)
        return canon.canonical(norm(back)) == canon.canonical(norm(v))
    except Exception:
        return False


def accepts(tp, cls):
    """Whether every value of the builtin class ``cls`` is a value of type ``tp``."""
    if tp is typing.Any or tp is object or tp is cls:
        return True
    if cls is bool and tp in (int, float, complex):
        return True
    if cls is int and tp in (float, complex):
        return True
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin in UNIONS:
        return any(accepts(o, cls) for o in args)
    if origin is typing.Annotated:
        return accepts(args[0], cls)
    if isinstance(tp, typing.TypeVar):
        return not tp.__constraints__ and (tp.__bound__ is None or accepts(tp.__bound__, cls))
    return False


def project_class(tp):
    return isinstance(tp, type) and str(getattr(tp, "__module__", "")).split(".")[0] == TOP_PACKAGE


def project_objects(tp):
    """Objects of a class of the project: made by each version's own class (``made``);
    a member of an enumeration by calling it with the member's value (``Color(1)``)."""
    names = [n for n, v in vars(mods[0]).items() if v is tp]
    if names and issubclass(tp, enum.Enum):
        values = [m.value for m in tp if representable(m.value)]
        if not values:
            raise NoStrategy(shown(tp), "is an enumeration whose values are not literals, "
                             "not modelled yet")
        return st.sampled_from(values).map(lambda v: canon.Build(names[0], [v], {}))
    for name in names:
        found = OBJECTS.get(name)
        if found is None:
            continue
        if "why" in found:
            raise NoStrategy(shown(tp), "is a class of the project whose objects are not "
                             "built: " + found["why"])
        return made(found)
    if any(v is tp for v in CHECKED):
        raise NoStrategy(shown(tp), "is a class of the project that the module imports only "
                         "under `if TYPE_CHECKING:`, so no object of it is made (the module "
                         "binds no name to it when it runs)")
    raise NoStrategy(shown(tp), "is a class of the project that the module binds to no name "
                     "of its own, so its objects are not built")


def exception_classes(base):
    """The builtin exceptions of class ``base`` that take a message, ``base`` first."""
    found = []
    for name in sorted(dir(builtins)):
        c = getattr(builtins, name)
        if not (isinstance(c, type) and issubclass(c, base) and c.__name__ == name):
            continue
        try:
            if not representable(c("x")):
                continue
        except Exception:
            continue
        found.append(c)
    found.sort(key=lambda c: c is not base)
    return found


def paths(cls):
    parts = st.sampled_from(["a", "b.txt", "..", ".", "dir", "x.tar.gz", "~", " ", "é"])
    text = st.one_of(st.lists(parts, max_size=4).map("/".join),
                     st.lists(parts, min_size=1, max_size=3).map(lambda p: "/" + "/".join(p)),
                     texts())
    return text.map(cls)


def patterns(kinds):
    """Compiled patterns: the code's own regular expressions, and escaped text."""
    found = []
    if str in kinds:
        found += [st.sampled_from(spec.get("regexes", []))] if spec.get("regexes") else []
        found.append(texts().map(re.escape))
    if bytes in kinds:
        found.append(st.binary(max_size=6).map(re.escape))

    def compiled(p):
        try:
            return re.compile(p)
        except Exception:
            return None

    return st.one_of(*found).map(compiled).filter(lambda p: p is not None)


def from_hypothesis(tp):
    """Values Hypothesis draws for ``tp`` (``st.from_type``), where a call's text can
    write them; refused when it draws none such."""
    try:
        drawn = st.from_type(tp)
        drawn.validate()
    except Exception as exc:
        raise NoStrategy(shown(tp), "is not modelled yet (Hypothesis has no strategy for it: "
                         + type(exc).__name__ + ")") from None
    # Instances of the class, written as a call's text reads them back.
    drawn = drawn.filter(lambda v: isinstance(v, tp) and representable(v))
    probe = settings(database=None, max_examples=40, derandomize=True, deadline=None,
                     suppress_health_check=list(HealthCheck))
    try:
        find(drawn, lambda v: True, settings=probe)
    except Exception:
        raise NoStrategy(shown(tp), "is not modelled yet (no value Hypothesis draws for it "
                         "can be written as an input)") from None
    return drawn


def typevar(tp, top):
    if tp in OWNER_PARAMETERS:
        raise NoStrategy(shown(tp), "is a type parameter of the method's class, fixed by "
                         "the object it is called on, which is not modelled yet")
    if tp.__constraints__:
        # One constraint for every use of the variable in the call (``AnyStr``).
        options = tp.__constraints__
        choice = st.shared(st.sampled_from(range(len(options))), key="typevar:" + tp.__name__)
        each = [for_type(o, top) for o in options]
        return choice.flatmap(lambda i: each[i])
    if tp.__bound__ is not None:
        return for_type(tp.__bound__, top)
    return anything(top)


def one_of_types(options, top):
    made_ = []
    for o in options:
        try:
            made_.append(for_type(o, top))
        except NoStrategy as why:
            DROPPED.append(why)
            last = why
    if not made_:
        raise last
    return st.one_of(*made_)


NESTING = [0]
MAX_NESTING = 30
MADE = {}  # (type, top) -> its strategy, once made
MAKING = set()  # the types whose strategies are being made


def for_type(tp, top=False):
    """A strategy for the values of ``tp`` (a type object, as the module names it), by
    the typing rules; ``NoStrategy`` says which part has none and why. A recursive type
    (``JSON = Union[str, List['JSON']]``) refers to itself (``st.deferred``)."""
    try:
        key = (tp, top)
        hash(key)
    except TypeError:
        key = None
    if key is not None and key in MADE:
        return MADE[key]
    if key is not None and key in MAKING:
        return st.deferred(lambda: MADE[key])
    if NESTING[0] >= MAX_NESTING:
        raise NoStrategy(shown(tp), "nests too deeply")
    NESTING[0] += 1
    if key is not None:
        MAKING.add(key)
    try:
        made_ = read_type(tp, top)
    finally:
        NESTING[0] -= 1
        MAKING.discard(key)
    if key is not None:
        MADE[key] = made_
    return made_


def read_type(tp, top):
    if tp is None or tp is type(None):
        return st.none()
    if tp is typing.Any or tp is object:
        return anything(top)
    if repr(tp) in ("typing.Self", "typing_extensions.Self"):
        if not owners:
            raise NoStrategy("`Self`", "is used outside a method")
        return for_type(owners[0], top)  # an object of the method's class, as it is built
    if isinstance(tp, typing.TypeVar):
        return typevar(tp, top)
    if isinstance(tp, typing.ForwardRef):
        return for_type(READER.text(tp.__forward_arg__), top)
    if isinstance(tp, str):
        return for_type(READER.text(tp), top)
    if callable(tp) and hasattr(tp, "__supertype__"):  # typing.NewType
        return for_type(tp.__supertype__, top)
    if tp is bool:
        return st.booleans()
    if tp is int:
        return ints(bools=True)
    if tp is float:
        return st.one_of(floats(), ints(bools=True))
    if tp is complex:
        return st.one_of(st.complex_numbers(max_magnitude=1e6, allow_nan=False),
                         floats(), ints(bools=True))
    if tp is str:
        return texts()
    if tp is bytes:
        return st.binary(max_size=8)
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin is typing.Annotated:
        return for_type(args[0], top)
    if origin in UNIONS:
        return one_of_types(args, top)
    if origin is typing.Literal:
        values = [a for a in args if representable(a)]
        if not values:
            raise NoStrategy(shown(tp), "is not modelled yet (its values are not literals)")
        return st.sampled_from(values)
    if origin is typing.ClassVar or origin is typing.Final:
        return for_type(args[0], top)
    kind = origin or tp
    elem = args[0] if args else typing.Any
    if kind is type:
        wanted = object if elem is typing.Any else elem
        classes = [c for c in CLASS_VALUES if issubclass(c, wanted)] if isinstance(
            wanted, type) else []
        if not classes:
            raise NoStrategy(shown(tp), "is not modelled yet (only builtin classes are "
                             "given as class arguments)")
        return st.sampled_from(classes)
    if kind is ABC.Callable:
        # A function of any arguments returning a value of the declared result (written
        # as a literal: no object still to build inside it).
        returns = args[-1] if args else typing.Any
        return for_type(returns, True).filter(plain).map(ConstFn)
    if kind is list:
        return st.lists(for_type(elem), max_size=8)
    if kind is tuple:
        if not args:
            return st.lists(anything(False), max_size=8).map(tuple)
        if len(args) == 2 and args[1] is Ellipsis:
            return st.lists(for_type(args[0]), max_size=8).map(tuple)
        if args == ((),):
            return st.just(())
        return st.tuples(*[for_type(a) for a in args])
    if kind in (dict, ABC.Mapping, ABC.MutableMapping):
        key = args[0] if args else typing.Any
        value = args[1] if len(args) > 1 else typing.Any
        return st.dictionaries(for_type(key).filter(key_ok), for_type(value), max_size=5)
    if kind in (set, ABC.MutableSet):
        return st.sets(for_type(elem).filter(key_ok), max_size=6)
    if kind is frozenset:
        return st.frozensets(for_type(elem).filter(key_ok), max_size=6)
    if kind is ABC.Set:
        members = for_type(elem).filter(key_ok)
        return st.one_of(st.sets(members, max_size=6), st.frozensets(members, max_size=6))
    if kind in (ABC.Iterator, ABC.Iterable, ABC.Collection, ABC.Container, ABC.Sequence,
                ABC.MutableSequence, ABC.Reversible, ABC.Sized, collections.deque):
        return collections_of(kind, elem)
    if kind in (collections.OrderedDict, collections.Counter, collections.ChainMap):
        key = args[0] if args else typing.Any
        value = int if kind is collections.Counter else (args[1] if len(args) > 1
                                                         else typing.Any)
        dicts = st.dictionaries(for_type(key).filter(key_ok), for_type(value).filter(plain),
                                max_size=5)
        if kind is collections.OrderedDict:
            return dicts.map(lambda d: collections.OrderedDict(d.items()))
        return dicts.map(kind)
    if kind is os.PathLike and (not args or args[0] is str):
        return st.one_of(paths(pathlib.PurePosixPath), paths(pathlib.PosixPath))
    if kind is re.Pattern:
        return patterns([args[0]] if args and args[0] in (str, bytes) else [str, bytes])
    if kind is ABC.Hashable:
        return anything(top).filter(key_ok)
    if args and origin is not None:
        raise NoStrategy(shown(tp), "is not modelled yet")
    if not isinstance(tp, type):
        raise NoStrategy(shown(tp), "is not a type the search reads")
    if getattr(tp, "_is_protocol", False) and not (
            tp.__module__ == "typing" and tp.__name__.startswith("Supports")):
        raise NoStrategy(shown(tp), "is a Protocol, not modelled yet (a runtime check sees "
                         "only the names of its members, not their types)")
    if project_class(tp):
        return project_objects(tp)
    if tp in (pathlib.Path, pathlib.PosixPath):
        return paths(pathlib.PosixPath)
    if tp is pathlib.PurePosixPath:
        return paths(pathlib.PurePosixPath)
    if tp is pathlib.PurePath:
        return st.one_of(paths(pathlib.PurePosixPath), paths(pathlib.PosixPath))
    if tp.__module__ == "decimal" and tp.__name__ == "Decimal":
        # Finite numbers first, which shrinking prefers; NaN and infinities too.
        return st.one_of(st.decimals(allow_nan=False, allow_infinity=False, places=2),
                         st.decimals(allow_nan=False, allow_infinity=False), st.decimals())
    if issubclass(tp, BaseException) and tp.__module__ == "builtins":
        classes = exception_classes(tp)
        if not classes:
            raise NoStrategy(shown(tp), "is not modelled yet (no builtin exception of it "
                             "takes a message)")
        message = st.one_of(st.just(()), texts().map(lambda s: (s,)))
        return st.tuples(st.sampled_from(classes), message).map(lambda cm: cm[0](*cm[1]))
    return from_hypothesis(tp)


def collections_of(kind, elem):
    """The builtin collections (and iterators) that are a ``kind`` of ``elem``: lists,
    tuples, sets, strings of ``str``, bytes of ``int``, ``iter([...])``, as its ABC admits."""
    items = for_type(elem)
    lists = st.lists(items, max_size=8)
    # An iterator's items are written as literals (``iter([...])``): plain values only.
    iterators = st.lists(items.filter(plain), max_size=8).map(Items)
    if kind is ABC.Iterator:
        return iterators
    if kind is collections.deque:
        return st.lists(items.filter(plain), max_size=8).map(collections.deque)
    options = [lists]
    if kind is not ABC.MutableSequence:
        options.append(lists.map(tuple))
    if kind is not ABC.MutableSequence and accepts(elem, str):
        options.append(texts())
    if kind not in (ABC.MutableSequence,) and accepts(elem, int):
        options.append(st.binary(max_size=6))
        options.append(st.builds(range, st.integers(-3, 3), st.integers(-3, 8)))
    if kind in (ABC.Iterable, ABC.Collection, ABC.Container, ABC.Sized):
        members = items.filter(key_ok)
        options += [st.sets(members, max_size=6), st.frozensets(members, max_size=6),
                    st.dictionaries(members, anything(False), max_size=4)]
    if kind is ABC.Iterable:
        options.append(iterators)
    if kind is ABC.MutableSequence:
        options.append(st.lists(items.filter(plain), max_size=8).map(collections.deque))
    return st.one_of(*options)


def typed_strategy(tj, top):
    found = TYPED.get((tj.get("module", ""), tj["source"]))
    if found is None:
        raise NoStrategy("`" + tj["source"] + "`", "was not read in the module")
    if isinstance(found, NoStrategy):
        raise found
    return for_type(found, top)


def missing(name, why):
    """The note for a parameter no value is drawn for: "`x: Foo` could not be resolved..."."""
    annotation = spec.get("annotations", {}).get(name, "")
    head = "`" + name + (": " + annotation if annotation else "") + "`"
    if why.part == "`" + annotation + "`":
        return head + " " + why.what
    return head + ": " + why.part + " " + why.what


def strat(tj, top=False):
    k = tj["k"]
    if k == "int":
        return ints()
    if k == "bool":
        return st.booleans()
    if k == "float":
        return floats()
    if k == "str":
        return texts()
    if k == "none":
        return st.none()
    if k == "list":
        return st.lists(strat(tj["elem"]), max_size=8)
    if k == "iter":
        return st.lists(strat(tj["elem"]), max_size=8).map(Items)
    if k == "stream":
        return stream_contents(tj["binary"]).map(Stream)
    if k in ("set", "frozenset"):
        # Only hashable members exist: with a member type that is not, only the empty set.
        if tj["elem"]["k"] == "typed":
            sets = st.sets(strat(tj["elem"]).filter(key_ok), max_size=6)
        else:
            sets = st.sets(strat(tj["elem"]), max_size=6 if hashable(tj["elem"]) else 0)
        return sets.map(frozenset) if k == "frozenset" else sets
    if k == "tuple":
        if "homog" in tj:
            return st.lists(strat(tj["homog"]), max_size=8).map(tuple)
        return st.tuples(*[strat(i) for i in tj["items"]])
    if k == "dict":
        if tj["key"]["k"] == "typed":
            return st.dictionaries(strat(tj["key"]).filter(key_ok), strat(tj["value"]),
                                   max_size=5)
        size = 5 if hashable(tj["key"]) else 0
        return st.dictionaries(strat(tj["key"]), strat(tj["value"]), max_size=size)
    if k == "union":
        options = []
        for o in tj["options"]:
            try:
                options.append((o, strat(o)))
            except NoStrategy as why:  # a typed option: the others are values of the type
                DROPPED.append(why)
                last = why
        if not options:
            raise last
        kinds = [o["k"] for o, _ in options]
        if "int" in kinds and "bool" in kinds:
            # A bool where an int is declared is one more edge value of the int strategy.
            rest = [s for o, s in options if o["k"] not in ("int", "bool")]
            return st.one_of(*rest, ints(bools=True))
        return st.one_of(*[s for _, s in options])
    if k == "any":
        return anything(top)
    if k == "object":
        return made(tj)
    if k == "typed":
        return typed_strategy(tj, top)
    raise ValueError("no strategy for " + json.dumps(tj))  # the parent never sends one


class Items:
    """An iterator argument, by its items: each call gets a fresh ``iter(items)``."""

    def __init__(self, items):
        self.items = items


class Stream:
    """A stream argument, by its contents: each call gets a fresh stream at position 0."""

    def __init__(self, contents):
        self.contents = contents

    def open(self):
        return (io.BytesIO if isinstance(self.contents, bytes) else io.StringIO)(self.contents)


def stream_contents(binary):
    """What a stream holds: often nothing, else lines (non-ASCII too) or any text."""
    if binary:
        return st.one_of(st.just(b""), st.binary(max_size=12),
                         texts().map(lambda s: s.encode("utf-8", "surrogatepass")))
    line = st.text(alphabet="ab \té€", max_size=4)
    lines = st.lists(line, min_size=1, max_size=4).map("\n".join)
    return st.one_of(st.just(""), texts(), lines, lines.map(lambda s: s + "\n"))


def fresh(v):
    """``v`` with each ``Items`` turned into an iterator and each ``Stream`` into a
    stream (after the call's deep copy: no two calls share one)."""
    if isinstance(v, Items):
        return iter(v.items)
    if isinstance(v, Stream):
        return v.open()
    if isinstance(v, ConstFn):
        return v.make()
    if type(v) is dict:
        return {k: fresh(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return type(v)(fresh(x) for x in v)
    if isinstance(v, Recv):
        return Recv(fresh(v.args), {k: fresh(x) for k, x in v.kwargs.items()})
    if isinstance(v, canon.Build):
        return canon.Build(v.name, fresh(v.args), {k: fresh(x) for k, x in v.kwargs.items()})
    return v


class Recv:
    """The constructor arguments that build the object a method is called on."""

    def __init__(self, args, kwargs):
        self.args, self.kwargs = tuple(args), dict(kwargs)


OMIT = object()
DATA_TYPES = (bool, int, float, complex, str, bytes, bytearray, type(None), list, tuple,
              dict, set, frozenset)


def class_data(owner):
    """The data each class of ``owner``'s hierarchy holds (a list shared by instances)."""
    snapshot = []
    for klass in getattr(owner, "__mro__", ()):
        if klass.__module__ == "builtins":
            continue
        data = {k: copy.deepcopy(v) for k, v in vars(klass).items()
                if isinstance(v, DATA_TYPES) and not (k.startswith("__") and k.endswith("__"))}
        snapshot.append((klass, data))
    return snapshot


def restore(snapshot):
    """Each call starts from the class data as imported, as in a fresh sandbox child."""
    for klass, data in snapshot:
        try:
            for k in [k for k, v in vars(klass).items() if isinstance(v, DATA_TYPES)
                      and not (k.startswith("__") and k.endswith("__")) and k not in data]:
                delattr(klass, k)
            for k, v in data.items():
                setattr(klass, k, copy.deepcopy(v))
        except Exception:
            pass
BUILT = [None]  # the state of the object the last call was made on, as built


def receiver_strategy(r):
    def optional(tj):
        try:
            return st.one_of(st.just(OMIT), strat(tj, top=True))
        except NoStrategy:  # a typed parameter with a default: the default is used
            return st.just(OMIT)

    pos = [strat(tj, top=True) for _, tj, req, kw in r["params"] if not kw]
    kws = {n: strat(tj, top=True) if req else optional(tj)
           for n, tj, req, kw in r["params"] if kw}
    return st.builds(lambda p, k: Recv(p, {a: b for a, b in k.items() if b is not OMIT}),
                     st.tuples(*pos), st.fixed_dictionaries(kws))


def timed(thunk):
    """("ok", value), ("raise", exc) or ("hang", None): ``thunk`` under the call timer."""
    _armed[0] = True
    signal.setitimer(signal.ITIMER_REAL, CALL_S, 0.05)
    try:
        try:
            result = ("ok", thunk())
        except Hang:
            raise
        except BaseException as exc:
            result = ("raise", exc)
        finally:
            disarm()
    except Hang:
        disarm()
        return ("hang", None)
    return result


def make(mod, owner, recv, args):
    """The object a method is called on and the arguments, their ``Build`` objects made
    by ``mod``'s classes; and what was made, encoded (compared between the versions)."""
    obj = None
    parts = []
    if recv is not None:
        canon.note_classes(owner)
        init_args, init_kwargs, _ = canon._prepare(mod, list(recv.args), dict(recv.kwargs))
        obj = owner(*init_args, **init_kwargs)
        parts.append(canon.canonical(canon.Instance(obj, NAME, properties=False)))
    made_args, _, encoded = canon._prepare(mod, list(args), {})
    if encoded is not None:
        parts.append(encoded)
    return obj, tuple(made_args), parts


def call(fn, args, owner=None, mod=None):
    """Run one version on a deep copy of ``args``; its outcome encoded as the sandbox does.

    A method is called on an object built by ``owner`` (the class) from the receiver's
    arguments (``Recv``, the first of ``args``); objects among the arguments are made by
    ``mod``'s classes; an object not built is "noinstance".
    """
    args = fresh(copy.deepcopy(args))
    sys.stdout = io.StringIO()
    BUILT[0] = None
    recv = None
    if args and isinstance(args[0], Recv):
        recv, args = args[0], tuple(args[1:])
    if recv is not None or canon.has_builds(args):
        built = timed(lambda: make(mod, owner, recv, args))
        if built[0] != "ok":
            return ("noinstance", None, None, "")
        obj, args, BUILT[0] = built[1]
    state = args
    if recv is not None:
        state = (canon.Instance(obj, NAME), *args)
        if RECV["read"]:
            fn = lambda: getattr(obj, NAME)  # noqa: E731
        else:
            fn = lambda *a: getattr(obj, NAME)(*a)  # noqa: E731
    elif RECV and RECV.get("init"):
        fn = lambda *a: canon.Instance(owner(*a))  # noqa: E731
    _armed[0] = True
    signal.setitimer(signal.ITIMER_REAL, CALL_S, 0.05)
    try:
        try:
            value = canon.drain(fn(*args))
            kind, text = "return", None
        except Hang:
            raise
        except BaseException as exc:
            kind, value = "raise", type_name(type(exc))
            text = type(exc).__name__
            LAST_RAISED[0] = exc
        finally:
            disarm()
    except Hang:
        disarm()
        return ("timeout", None, None, "")
    try:
        if kind == "return":
            text = canon._safe_repr(value, 200)  # repr fails on an int beyond 4,300 digits
            value = canon.canonical(value)
        after = canon.canonical(tuple(state))
    except BaseException as exc:
        return ("unencodable", type(exc).__name__, None, "")
    return (kind, value, after, text)


def type_name(tp):
    if tp.__module__ in ("builtins", "subject"):
        return tp.__qualname__
    return tp.__module__ + "." + tp.__qualname__


def disarm():
    while True:
        try:
            _armed[0] = False
            signal.setitimer(signal.ITIMER_REAL, 0)
            return
        except Hang:
            continue


def extends(a, b):
    """Whether encoding ``b`` is ``a`` but for attributes only its objects have: an added
    attribute extends a class, which confirmation does not count as a difference
    (``differential``), so the search must not stop at it."""
    if a == b:
        return True
    if not (isinstance(a, list) and isinstance(b, list) and len(a) == len(b) and a):
        return False
    if len(a) == 4 and a[0] == b[0] == "self" and a[1] == b[1] and a[3] == b[3]:
        mine = {str(k): v for k, v in b[2]}
        return all(str(k) in mine and mine[str(k)] == v for k, v in a[2])
    if len(a) == 2 and a[0] == b[0] == "tuple" and len(a[1]) == len(b[1]):
        return all(extends(x, y) for x, y in zip(a[1], b[1]))
    return False


def same_outcome(x, y):
    if "noinstance" in (x[0], y[0]):
        return True  # no object to call the method on: not an input
    if x[0] != y[0]:
        return False
    if x[0] == "timeout":
        return True
    return extends(x[1], y[1]) and extends(x[2], y[2])


def lit(v, depth=0):
    if depth > 50:
        raise ValueError("too deep")
    if v is None or isinstance(v, (bool, int, str, bytes)):
        return repr(v)
    if isinstance(v, float):
        if math.isnan(v):
            return "float('nan')"
        if math.isinf(v):
            return "float('inf')" if v > 0 else "float('-inf')"
        return repr(v)
    if type(v) is complex or type(v) is range:
        return repr(v)
    if isinstance(v, ConstFn):
        return "lambda *args, **kwargs: " + lit(v.value, depth + 1)
    if type(v) not in (list, tuple, dict, set, frozenset):
        # A value of the standard library: datetime.date(2024, 1, 31), decimal.Decimal('1.5')
        text = canon.library_text(v, lambda x: lit(x, depth + 1))
        if text is not None:
            return text
    if isinstance(v, list):
        return "[" + ", ".join(lit(x, depth + 1) for x in v) + "]"
    if isinstance(v, tuple):
        inner = ", ".join(lit(x, depth + 1) for x in v)
        return "(" + inner + ("," if len(v) == 1 else "") + ")"
    if isinstance(v, dict):
        pairs = (lit(k, depth + 1) + ": " + lit(x, depth + 1) for k, x in v.items())
        return "{" + ", ".join(pairs) + "}"
    if isinstance(v, Recv):
        parts = [lit(x, depth + 1) for x in v.args]
        parts += [k + "=" + lit(x, depth + 1) for k, x in v.kwargs.items()]
        text = "@" + RECV["cls"] + "(" + ", ".join(parts) + ")"
        return text + "." + NAME if RECV["read"] else text
    if isinstance(v, Items):
        return "iter(" + lit(v.items, depth + 1) + ")"
    if isinstance(v, Stream):
        return canon.stream_text(v.open())
    if isinstance(v, canon.Build):
        parts = [lit(x, depth + 1) for x in v.args]
        parts += [k + "=" + lit(x, depth + 1) for k, x in v.kwargs.items()]
        return v.name + "(" + ", ".join(parts) + ")"
    if isinstance(v, type) and v in CLASS_VALUES:
        return v.__name__
    if isinstance(v, (set, frozenset)):
        items = ", ".join(sorted(lit(x, depth + 1) for x in v))
        if isinstance(v, frozenset):
            return "frozenset({" + items + "})" if v else "frozenset()"
        return "{" + items + "}" if v else "set()"
    raise ValueError("no literal for " + type(v).__name__)


def describe(o):
    if o[0] == "timeout":
        return "does not finish within %.2fs" % CALL_S
    if o[0] == "raise":
        return "raises " + o[3]
    if o[0] == "return":
        return "returns " + o[3]
    return "result could not be encoded (" + str(o[1]) + ")"


def literal_args(args):
    """The arguments as literals, or None if one does not read back as the same value."""
    lits = [lit(a) for a in args]
    values = list(args)
    if values and isinstance(values[0], Recv):
        values = [*values[0].args, *values[0].kwargs.values(), *values[1:]]
        parsed = canon.parse_receiver(lits[0], objects=True)
        back = [*parsed[0], *parsed[1].values()] + [canon.parse_literal(t, objects=True)
                                                    for t in lits[1:]]
    else:
        back = [canon.parse_literal(t, objects=True) for t in lits]
    if len(back) != len(values):
        return None
    for parsed_value, value in zip(back, values):
        # Iterators, streams and functions by what they hold (``norm``).
        if canon.canonical(norm(parsed_value)) != canon.canonical(norm(value)):
            return None
    return lits


tried = [0]
found = []  # (size, args) of every distinguishing input, in order found
CRASH = spec.get("crash")  # crash mode (``search_crash``): what counts as a crash


def crash_site(exc):
    """The innermost line of the module under test the exception passed through, whether
    it started there, and whether it started at a `raise` statement of the project's
    files (as the sandbox reports a raise)."""
    import linecache
    line, inner, last = None, False, None
    tb = exc.__traceback__
    where = getattr(mods[1], "__file__", None)
    while tb is not None:
        here = tb.tb_frame.f_code.co_filename == where
        if here:
            line = tb.tb_lineno
        inner = here
        last = tb
        tb = tb.tb_next
    raised = False
    if last is not None:
        name = os.path.abspath(last.tb_frame.f_code.co_filename)
        if name.startswith(os.getcwd() + os.sep):
            raised = linecache.getline(name, last.tb_lineno).lstrip().startswith("raise")
    return line, inner, raised


def crashes(args):
    """Crash mode: whether the function raises on ``args`` what the question counts."""
    if time.monotonic() - T0 > CAP:
        raise OutOfTime()
    tried[0] += 1
    if owners:
        restore(SNAPSHOTS[1])
    LAST_RAISED[0] = None
    outcome = call(fns[1], args, owners[1] if owners else None, mods[1])
    exc = LAST_RAISED[0]
    if outcome[0] != "raise" or exc is None:
        return False
    name = type(exc).__name__
    if name in CRASH["environment"] or any(
            isinstance(exc, getattr(builtins, d)) for d in CRASH["documented"]
            if isinstance(getattr(builtins, d, None), type)):
        return False
    line, inner, raised = crash_site(exc)
    if line is None or raised or (inner and line in CRASH["raise_lines"]):
        return False
    if CRASH.get("line") is not None and line != CRASH["line"]:
        return False
    wanted = CRASH.get("exception")
    if wanted and not isinstance(exc, getattr(builtins, wanted, BaseException)):
        return False
    try:
        lits = literal_args(args)
    except (ValueError, SyntaxError, RecursionError):
        return False
    if lits is None:
        return False
    found.append((len(", ".join(lits)), lits, name, str(line)))
    return True


def differs(args):
    if time.monotonic() - T0 > CAP:
        raise OutOfTime()
    tried[0] += 1
    if owners:
        restore(SNAPSHOTS[0])
    a = call(fns[0], args, owners[0] if owners else None, mods[0])
    built_a = BUILT[0]
    if owners:
        restore(SNAPSHOTS[1])
    b = call(fns[1], args, owners[1] if owners else None, mods[1])
    if built_a != BUILT[0]:
        return False  # the constructors built different objects: a difference of the class
    if same_outcome(a, b):
        return False
    try:
        lits = literal_args(args)
    except (ValueError, SyntaxError, RecursionError):
        return False
    if lits is None:
        return False
    key = len(", ".join(lits))
    found.append((key, lits, describe(a), describe(b)))
    return True


SNAPSHOTS = [class_data(o) for o in owners]
params = spec["params"]
drawn = []
for param_name, tj in params:
    try:
        drawn.append(strat(tj, top=True))
    except NoStrategy as why:  # a typed annotation with no values: said precisely
        emit({"status": "none", "tried": 0,
              "message": "random testing was not run: " + missing(param_name, why)})
        sys.exit(0)
strategy = st.tuples(*drawn)
if RECV and not RECV.get("init"):
    try:
        receiver = receiver_strategy(RECV)
    except NoStrategy as why:
        emit({"status": "none", "tried": 0,
              "message": "random testing was not run: `" + RECV["cls"] + "` objects are not "
                         "built: " + why.part + " " + why.what})
        sys.exit(0)
    strategy = st.tuples(receiver, strategy).map(lambda ra: (ra[0], *ra[1]))
conf = settings(database=None, deadline=None, derandomize=True,
                max_examples=int(spec["max_examples"]),
                suppress_health_check=list(HealthCheck))
message = ""
best = None
try:
    result = find(strategy, crashes if CRASH else differs, settings=conf)
    best = result
    message = "shrunk"
except (NoSuchExample, Unsatisfiable):
    message = ("no crash found in %d inputs" if CRASH else "no difference found in %d inputs") % (
        tried[0],)
except OutOfTime:
    message = "search time cap reached after %d inputs" % tried[0]
except Exception as exc:  # Hypothesis gave up (a flaky input): what was found still counts
    message = "search stopped after %d inputs (%s)" % (tried[0], type(exc).__name__)

candidates = []
seen = set()
ordered = []
shrunk = []
if best is not None:
    ordered.append(best)
for args in ordered:
    try:
        lits = literal_args(args)
    except (ValueError, SyntaxError, RecursionError):
        continue
    if lits is not None:
        shrunk.append(lits)
shrunk.extend(lits for _, lits, _, _ in sorted(found, key=lambda f: f[0]))
for lits in shrunk:
    key = tuple(lits)
    if key in seen:
        continue
    seen.add(key)
    desc = next(((b, a) for _, x, b, a in found if x == lits), ("", ""))
    candidates.append({"args": lits, "before": desc[0], "after": desc[1]})
    if len(candidates) >= int(spec["max_candidates"]):
        break
status = "found" if candidates else "none"
if status == "found" and message != "shrunk":
    message = "difference found, shrinking cut short (" + message + ")"
elif status == "found":
    message = "difference found and shrunk in %d inputs" % tried[0]
if DROPPED:
    message += "; searched without " + ", ".join(dict.fromkeys(
        w.part + " (" + w.what + ")" for w in DROPPED))
emit({"status": status, "tried": tried[0], "candidates": candidates, "message": message})
'''
