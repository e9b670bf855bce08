"""What a module's code may read besides its arguments: files, its own source, line numbers.

Two questions, answered from the words of the code (names, attributes, imported names,
words of strings; docstrings left out), never by running it:

- *files* (``reads_files``): ``open``, ``importlib.resources``, ``pkgutil.get_data``,
  ``Path.read_text``, ``__file__``, a listing of a folder, a loader's ``get_data``, a
  library that opens a file by its name (``numpy.load``, ``toml.load``)... Such code may
  read a data file of its package (so a change of that file is a change of behaviour) and
  its own source (so is a change of its comments or docstrings).
- *source text or line numbers* (``reads_source``): what can find the module's own file
  (``__file__``, a loader, a code object's file, the package's resources; a path the code
  is given is an input, so a plain ``open(path)`` does not count), and what hands out
  line numbers or source lines: frames, code objects and tracebacks (``traceback``,
  ``sys.exc_info``, ``__traceback__``, ``inspect.stack``), ``linecache``, a loader's
  ``get_source``, a tracer (``sys.settrace``), ``faulthandler``, ``pdb``; a logging
  handler, filter or record the module makes itself (a record carries its line; the
  message of ``log.exception`` its traceback); what captures standard error (a shown
  warning or a printed traceback carries the line); an asyncio task, whose ``repr`` shows
  where its coroutine is defined or running. Logging to handlers the module does not make
  (standard error) and warnings it does not catch are not behaviour (``veribot``
  compares results, exceptions and arguments, not standard error).

Code of other modules that reads this module's source (a caller formatting a traceback
through it) is not seen here: a verdict of a docstring or layout change lists that
assumption.
"""

from __future__ import annotations

import ast
import dataclasses
import functools
import re
from collections.abc import Iterable

from veribot.checks.project.package import PairContext
from veribot.checks.verdict import BehaviourKind, Reason, Result, Verdict

__all__ = ["DATA_READ", "LAYOUT_READ", "names_a_file", "reads_files", "reads_source",
           "withheld", "words"]

# The reasons a verified result is withheld (``Reason.unsupported`` constructs).
DATA_READ = "a-data-file-change-read"
LAYOUT_READ = "a-layout-change-read"

# Listed on a proof that the versions are the same code, in a module that reads files.
GIVEN_PATHS = ("a path the function is given is not its own module's file (whose text "
               "differs between the versions)")

_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")

# Whole words of code that may read a file (by a name it is given or builds).
_FILE_WORDS = frozenset({
    "open", "read_text", "read_bytes", "get_data", "get_resource_reader", "files",
    "as_file", "open_text", "open_binary", "read_binary", "is_resource", "contents",
    "resources", "importlib_resources", "pkg_resources", "resource_string",
    "resource_stream", "resource_filename", "resource_listdir", "pkgutil",
    "__file__", "__cached__", "__loader__", "__spec__", "__path__", "get_filename",
    "getfile", "getsourcefile", "getabsfile", "co_filename",
    "listdir", "scandir", "walk", "fwalk", "glob", "iglob", "rglob", "iterdir",
    "stat", "lstat", "exists", "isfile", "isdir", "getsize", "getmtime", "samefile",
    "readlink", "fileinput", "mmap", "FileIO", "read_file", "ConfigParser",
    "RawConfigParser", "ElementTree", "iterparse", "minidom", "ZipFile", "TarFile",
    "zipfile", "tarfile", "shelve", "dbm", "sqlite3", "filecmp", "copyfile", "shutil",
    "load", "loadtxt", "genfromtxt", "fromfile", "imread", "read_csv", "read_json",
    "read_excel", "read_parquet", "read_table", "read_pickle", "load_dotenv",
    "dotenv_values", "run_path", "linecache", "tokenize", "netrc", "mimetypes",
})
# Whole words of code that can find its own module's file (to read its text): the
# module's file name and loader, a code object's file, the package's resources. A path
# the code is given (``open(path)``) is an input, not its source: that a caller passes
# the module's own file is a listed assumption of a layout proof.
_OWN_FILE_WORDS = frozenset({
    "__file__", "__cached__", "__loader__", "__spec__", "__path__", "get_filename",
    "getfile", "getsourcefile", "getabsfile", "getmodule", "co_filename", "get_data",
    "get_resource_reader", "resources", "importlib_resources", "pkg_resources", "pkgutil",
    "run_path",
})
# Whole words of what hands out line numbers or source text (besides the file readers):
# frames, code objects, tracebacks, tracers.
_LINE_WORDS = frozenset({
    "traceback", "__traceback__", "exc_info", "last_traceback", "last_exc",
    "tb_frame", "tb_next", "tb_lasti", "tb_lineno", "gi_frame", "cr_frame", "ag_frame",
    "f_back", "f_lasti", "f_lineno", "_getframe", "currentframe", "_current_frames",
    "_current_exceptions", "getinnerframes", "getouterframes", "getframeinfo", "getlineno",
    "get_source", "getsource", "getsourcelines", "findsource", "getblock", "getcomments",
    "settrace", "setprofile", "gettrace", "monitoring", "faulthandler", "pdb", "bdb",
    "cgitb", "showtraceback", "excepthook", "print_exception", "format_exception",
    "redirect_stderr", "dup2", "captureWarnings", "showwarning", "formatwarning",
    "catch_warnings", "__warningregistry__",
    # What `traceback` hands out, should it be imported by a name the code computes.
    "format_exc", "print_exc", "format_tb", "print_tb", "extract_tb", "extract_stack",
    "format_stack", "print_stack", "walk_tb", "walk_stack", "TracebackException",
    "StackSummary", "FrameSummary", "format_list",
    # A module imported by a name the code computes may be any of the above.
    "import_module",  # (`__import__` of a computed name: noise)
})
# What the relational check refuses in any code the function it proves runs (frames,
# tracebacks, `linecache`, `inspect`'s sources, modules by name: its ``_OBSERVING_*``): in
# code that function does not run, these cannot change its result.
RELATIONAL_REFUSES = frozenset({
    "traceback", "__traceback__", "exc_info", "tb_frame", "gi_frame", "cr_frame",
    "ag_frame", "f_back", "f_lineno", "_getframe", "currentframe", "_current_frames",
    "getinnerframes", "getouterframes", "getsource", "settrace", "setprofile",
    "import_module", "linecache", "pdb", "bdb", "extract_stack", "format_stack",
    "print_stack", "walk_stack",
})
# Logging carries line numbers and tracebacks only into handlers, filters and records the
# program makes (its last resort writes the message alone to standard error).
_LOGGING_WORDS = frozenset({
    "addHandler", "basicConfig", "dictConfig", "fileConfig", "addFilter", "LogRecord",
    "makeRecord", "setLogRecordFactory", "getLogRecordFactory", "Formatter",
    "formatException", "formatStack",
})
# What a read of a missing file raises.
_OS_ERRORS = frozenset({"OSError", "FileNotFoundError", "NotADirectoryError",
                        "IsADirectoryError", "PermissionError"})
_HANDLER = re.compile(r"Handler$")
# An asyncio task's `repr` shows where its coroutine is defined or running.
_TASK_WORDS = frozenset({"Task", "create_task", "ensure_future", "all_tasks",
                         "current_task", "wait", "as_completed", "TaskGroup", "get_stack",
                         "print_stack", "_source_traceback", "set_debug"})
# `inspect.stack()`, `inspect.trace()`: every frame's line and source line.
_INSPECT_FRAMES = frozenset({"stack", "trace"})


def words(tree: ast.AST) -> frozenset[str]:
    """The whole words of the code: names, attributes, imported names and modules, keyword
    argument names, and the words of its strings (docstrings left out)."""
    docs = {id(n.body[0].value) for n in ast.walk(tree)
            if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Module)
            and n.body and isinstance(n.body[0], ast.Expr)}
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            found.add(node.id)
        elif isinstance(node, ast.Attribute):
            found.add(node.attr)
        elif isinstance(node, ast.alias):
            found.update(_WORD.findall(f"{node.name} {node.asname or ''}"))
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.update(_WORD.findall(node.module))
        elif isinstance(node, ast.keyword) and node.arg:
            found.add(node.arg)
        elif isinstance(node, ast.MatchClass):
            found.update(node.kwd_attrs)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and (
                id(node) not in docs):
            found.update(_WORD.findall(node.value))
        elif isinstance(node, ast.BinOp | ast.JoinedStr | ast.Call):
            # A name built from pieces (`'format_' + 'exc'`, `''.join(['trace', 'back'])`)
            # is the word it spells.
            folded = _folded(node)
            if folded:
                found.update(_WORD.findall(folded))
    return frozenset(found)


def _folded(node: ast.AST, depth: int = 0) -> str | None:
    """The text a string expression of literals spells, or None."""
    if depth > 50:
        return None
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _folded(node.left, depth + 1), _folded(node.right, depth + 1)
        return None if left is None or right is None else left + right
    if isinstance(node, ast.FormattedValue) and node.format_spec is None and (
            node.conversion in (-1, ord("s"))):
        return _folded(node.value, depth + 1)
    if isinstance(node, ast.JoinedStr):
        parts = [_folded(v, depth + 1) for v in node.values]
        return None if None in parts else "".join(p for p in parts if p is not None)
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and node.func.attr == "join" and len(node.args) == 1 and not node.keywords
            and isinstance(node.args[0], ast.List | ast.Tuple)):
        glue = _folded(node.func.value, depth + 1)
        parts = [_folded(e, depth + 1) for e in node.args[0].elts]
        if glue is None or None in parts:
            return None
        return glue.join(p for p in parts if p is not None)
    return None


def reads_files(tree: ast.AST) -> bool:
    """Whether code of ``tree`` may read a file (see the module's docstring)."""
    return bool(words(tree) & _FILE_WORDS)


def reads_source(tree: ast.AST, seen: frozenset[str] = frozenset()) -> bool:
    """Whether code of ``tree`` may read source text or line numbers of its module.
    ``seen``: words a check already refuses wherever the code it proves reaches them
    (``RELATIONAL_REFUSES``), which do not count."""
    found = words(tree) - seen
    if found & (_OWN_FILE_WORDS | _LINE_WORDS | _LOGGING_WORDS):
        return True
    if any(_HANDLER.search(w) for w in found):
        return True
    if "asyncio" in found and found & _TASK_WORDS:
        return True
    if any(isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Store)
           and n.attr in ("stderr", "stdout") for n in ast.walk(tree)):
        return True  # a shown warning (file, line, source line) goes to standard error
    return "inspect" in found and bool(found & _INSPECT_FRAMES)


def names_a_file(tree: ast.AST, paths: Iterable[str]) -> bool:
    """Whether a string of the code names one of ``paths`` by its file name (a library
    that opens a file by a name given to it: ``Config("limit.toml")``)."""
    names = {p.rsplit("/", 1)[-1] for p in paths}
    return any(isinstance(n, ast.Constant) and isinstance(n.value, str)
               and any(name in n.value for name in names) for n in ast.walk(tree))


def withheld(result: Result, before: str, after: str,
             context: PairContext | None) -> Result:
    """``result``, unless it rests on something no check sees, then inconclusive:

    - a verified result where the package's data files differ between the revisions (or
      the caps left some out) and code of the package may read a file (or names one);
    - a refutation where the caps left data files out and such code may read them, or
      where a version raised ``OSError`` (``FileNotFoundError``...) and such code may read
      a file the sandbox does not hold (the repository's files outside the package): the
      missing file may be all that differs;
    - a proof that the two versions are the same code (the relational check: docstrings,
      layout and local names aside) where their texts differ and the module may read its
      source text or line numbers.
    """
    if result.verdict not in (Verdict.VERIFIED, Verdict.REFUTED):
        return result
    trees = _trees(before, after, context)
    why: tuple[str, str] | None = None
    if context is not None and context.before is not None and context.after is not None:
        a, b = context.before, context.after
        data = dict(a.data), dict(b.data)
        changed = {p for p in data[0].keys() | data[1].keys()
                   if data[0].get(p) != data[1].get(p)}
        left_out = a.data_left_out or b.data_left_out
        readers = trees is None or any(
            reads_files(t) or names_a_file(t, changed) for t in trees)
        if readers and left_out:
            why = (DATA_READ, "the size caps left data files of its package out of the "
                   "sandbox, and code of the package may read files")
        elif readers and result.counterexample is not None and any(
                b.kind is BehaviourKind.RAISED and str(b.value) in _OS_ERRORS
                for b in (result.counterexample.before, result.counterexample.after)):
            why = (DATA_READ, "a version raised an error of the file system, and code of "
                   "the package may read files the sandbox does not hold (the repository's "
                   "files outside the package)")
        elif readers and changed and result.verdict is Verdict.VERIFIED:
            shown = ", ".join(f"`{p}`" for p in sorted(changed)[:3])
            why = (DATA_READ, f"data files of its package changed ({shown}), and code of "
                   "the package may read files: what it reads no proof sees")
    if not why and result.verdict is Verdict.VERIFIED and before != after and (
            result.method.startswith("relational")):
        own = _trees(before, after, None)
        if own is None or any(reads_source(t, RELATIONAL_REFUSES) for t in own):
            why = (LAYOUT_READ, "the two versions are the same code, but their texts "
                   "differ and the module may read its source text or line numbers")
    if not why and result.verdict is Verdict.VERIFIED and before != after and (
            result.method.startswith("relational")):
        own = _trees(before, after, None) or []
        if any(reads_files(t) for t in own):
            return dataclasses.replace(result, assumptions=(
                *result.assumptions, GIVEN_PATHS))
    if not why:
        return result
    return Result(Verdict.INCONCLUSIVE, Reason.unsupported(why[0]), why[1],
                  assumptions=result.assumptions, line=result.line, time_s=result.time_s,
                  notes=(*result.notes, f"withheld: {result.verdict.value}, "
                         f"{result.detail}"))


def _trees(before: str, after: str, context: PairContext | None) -> list[ast.Module] | None:
    """The two versions of the module and the package's other modules (with
    ``context``); None where one does not parse."""
    texts = [before, after]
    if context is not None:
        texts += [text for p in (context.before, context.after) if p is not None
                  for path, text in p.files]
    trees = [_parse(t) for t in dict.fromkeys(texts)]
    return None if None in trees else [t for t in trees if t is not None]


@functools.lru_cache(maxsize=512)
def _parse(text: str) -> ast.Module | None:
    try:
        return ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
