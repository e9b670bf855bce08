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

Some words say nothing by what the code does with them (``inert``): a frame got by
``sys._getframe(n)`` or ``inspect.currentframe()`` whose line, code and source nothing
reaches (only its ``f_back`` steps, the namespace its code runs in, ``f_globals``, read
by a key: ``sys._getframe(1).f_globals.get("__name__")``, the module of the caller); a
string only compared (``name in ("__cause__", "__traceback__")``), which selects no name
to look up; a string statement, which Python drops. A frame handed on, kept, returned,
formatted or read for ``f_lineno``/``f_code``/``f_locals``, and a string passed to a call,
kept in a container or a dict (``**kwargs`` make keys keyword names), bound to a name or
compared with a name that is also looked up, keep their words.

Code of other modules that reads this module's source (a caller formatting a traceback
through it) is not seen here: a verdict of a docstring or layout change lists that
assumption. So is a library that finds a frame or a traceback from something else it is
handed (an exception it formats, say): only the words of this module are seen.
"""

from __future__ import annotations

import ast
import dataclasses
import functools
import re
from collections.abc import Iterable

from veribot.checks.lang import pylookups
from veribot.checks.project.package import PairContext
from veribot.checks.verdict import BehaviourKind, Reason, Result, Verdict

__all__ = ["DATA_READ", "LAYOUT_READ", "inert", "module_inert", "names_a_file", "reads_files",
           "reads_source", "withheld", "words"]

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
# Every word of these lists (what an attribute set by a compared name must not be named).
_ALL_WORDS = (_FILE_WORDS | _OWN_FILE_WORDS | _LINE_WORDS | _LOGGING_WORDS | _TASK_WORDS
              | _INSPECT_FRAMES | {"asyncio", "inspect"})


def words(tree: ast.AST, quiet: frozenset[int] | None = None) -> frozenset[str]:
    """The whole words of the code: names, attributes, imported names and modules, keyword
    argument names, and the words of its strings (docstrings left out), but those of the
    nodes in ``quiet`` (``inert``: by default, for a module, its own; a function or a
    statement alone, none: give it its module's)."""
    if quiet is None:
        quiet = inert(tree) if isinstance(tree, ast.Module) else frozenset()
    docs = {id(n.body[0].value) for n in ast.walk(tree)
            if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Module)
            and n.body and isinstance(n.body[0], ast.Expr)}
    found: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in quiet:
            continue
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


# The functions that hand out a frame of the running code, by the module defining them.
_FRAME_GETTERS = {"_getframe": "sys", "currentframe": "inspect"}
# What a frame hands out that holds no line, code or source of it: the namespace its code
# runs in, and its builtins (a caller's locals may hold a frame or a traceback).
_FRAME_NAMESPACES = frozenset({"f_globals", "f_builtins"})
_FRAME, _NAMESPACE, _TESTED = "frame", "namespace", "tested"
# Words of code that looks up a name it is given (what may receive a compared string).
_LOOKUP_WORDS = frozenset({
    "getattr", "getattr_static", "attrgetter", "methodcaller", "__getattribute__",
    "__getattr__", "import_module", "__import__", "resolve_name", "eval", "exec",
    "compile", "globals", "vars", "locals", "__dict__", "__globals__", "modules",
    "f_globals", "f_locals", "f_builtins", "__builtins__",
})
# The builtins that set or delete an attribute by its name (``setattr(o, name, v)``), and
# the classes whose own ``__setattr__``/``__delattr__`` do only that.
_SETTERS = frozenset({"setattr", "delattr"})
_PLAIN_SETTERS = frozenset({"object", "type", "BaseException"})
# An attribute that may be set by a compared name: an exception's traceback (which hands
# nothing out when assigned).
_SET_HARMLESS = frozenset({"__traceback__"})
# The streams a shown warning or a printed traceback goes to.
_STREAMS = ("stderr", "stdout")
_Scope = ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | ast.ClassDef


def module_inert(trees: Iterable[ast.Module | None]) -> frozenset[int]:
    """``inert`` of each of ``trees``, together (for a function of one of them)."""
    return frozenset().union(*(inert(t) for t in trees if t is not None))


@functools.lru_cache(maxsize=256)
def inert(module: ast.Module) -> frozenset[int]:
    """The nodes of ``module`` whose words say nothing of what it reads (by ``id``):

    - a string statement (not a docstring: those ``words`` leaves out anyway), which
      Python drops;
    - a frame got by ``sys._getframe(n)``/``inspect.currentframe()`` whose line, code
      and source nothing can reach (``_frame_flows``): the getter's name and the
      ``f_back`` steps, and the import of the getter where every use is such;
    - a string compared with a name (``name in ("__cause__", "__traceback__")``,
      ``key == "x"``) whose every use is a comparison, or the name of an attribute set
      (``_only_compared``): a comparison looks nothing up by the string. Where the module
      looks up a name it does not spell out (``noise.looks_up_computed_names``), what the
      comparison selects may be looked up, so only a string naming nothing that reads
      but ``__traceback__`` (a traceback shows its lines one read further);
    - an exception's traceback assigned or deleted (``_traceback_writes``).

    Anything else keeps its words (a string passed to a call, kept in a container or a
    dict, bound to a name: any of those may become a name looked up)."""
    parents = {id(c): n for n in ast.walk(module) for c in ast.iter_child_nodes(n)}
    scopes = _scopes(module)
    bindings: dict[str, list[ast.AST]] = {}
    star = False
    for n in ast.walk(module):
        star = star or (isinstance(n, ast.alias) and n.name == "*")
        for name in pylookups.bound_names(n):
            bindings.setdefault(name, []).append(n)
    quiet = {id(n.value) for n in ast.walk(module) if isinstance(n, ast.Expr)
             and isinstance(n.value, ast.Constant) and isinstance(n.value.value, str)}
    quiet |= _traceback_writes(module, bindings)
    # A comparison selects a name (`if k == "f_lineno"`, or a function saying so of its
    # argument): where a name the code computes is looked up, the selected name may be
    # (`for k in dir(fr): if is_line(k): getattr(fr, k)`), and the string is as good as
    # looked up. Not so for `__traceback__` alone: a traceback found by it holds its lines
    # one read further, by a word (seen) or by a name computed from what the traceback
    # lists (`dir(tb)`), which the words of a module never show, selected or not; a
    # traceback handed to other code is read there (the listed assumption of a layout
    # verdict). `noise` imports this module.
    from veribot.checks.project import noise

    selects = noise.looks_up_computed_names(module)
    if star:  # `from m import *` may bind `sys`, `setattr`... to anything
        return frozenset(quiet | _inert_comparisons(module, parents, scopes, None, selects))
    for name, source in _FRAME_GETTERS.items():
        for n in ast.walk(module):
            if not (isinstance(n, ast.Call) and _frame_getter(
                    n.func, name, source, bindings, parents)):
                continue
            flow = _Flow(parents, scopes)
            if _frame_flows(n, _FRAME, flow):
                quiet.add(id(n.func))
                quiet.update(flow.found)
        loads = [n for n in ast.walk(module) if isinstance(n, ast.Name) and n.id == name
                 and isinstance(n.ctx, ast.Load)]
        if name in bindings and _imported_from(bindings[name], source, name, parents) and (
                all(id(n) in quiet for n in loads)):
            quiet.update(id(b) for b in bindings[name])  # `from sys import _getframe`
    quiet |= _inert_comparisons(module, parents, scopes, bindings, selects)
    return frozenset(quiet)


def _traceback_writes(module: ast.Module, bindings: dict[str, list[ast.AST]]) -> set[int]:
    """The assignments and deletions of an exception's traceback (``err.__traceback__ =
    None``), which read nothing: where the module defines no ``__setattr__`` or
    ``__delattr__`` naming what looks a name up (the name set is handed to it), nor
    anything named ``__traceback__`` (a property). The value assigned keeps its words."""
    if "__traceback__" in bindings or any(
            isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)
            and n.name in ("__setattr__", "__delattr__") and _names(n) & _LOOKUP_WORDS
            for n in ast.walk(module)):
        return set()
    return {id(n) for n in ast.walk(module) if isinstance(n, ast.Attribute)
            and n.attr == "__traceback__" and isinstance(n.ctx, ast.Store | ast.Del)}


def _scopes(module: ast.Module) -> dict[int, ast.AST]:
    """Each node's innermost enclosing function, lambda or class (with its defaults and
    decorators), or the module."""
    out: dict[int, ast.AST] = {}
    stack: list[tuple[ast.AST, ast.AST]] = [(module, module)]
    while stack:
        node, scope = stack.pop()
        out[id(node)] = scope
        inner = node if isinstance(node, _Scope) else scope
        stack.extend((c, inner) for c in ast.iter_child_nodes(node))
    return out


def _imported_from(bindings: list[ast.AST], source: str, name: str,
                   parents: dict[int, ast.AST]) -> bool:
    """Whether every binding of a name is ``import source`` (``name`` is ``source``) or
    ``from source import name``, unrenamed."""
    for b in bindings:
        statement = parents.get(id(b))
        if not isinstance(b, ast.alias) or b.asname not in (None, b.name):
            return False
        if name == source and isinstance(statement, ast.Import) and b.name == source:
            continue
        if (isinstance(statement, ast.ImportFrom) and statement.module == source
                and not statement.level and b.name == name):
            continue
        return False
    return bool(bindings)


def _frame_getter(func: ast.expr, name: str, source: str,
                  bindings: dict[str, list[ast.AST]], parents: dict[int, ast.AST]) -> bool:
    """Whether ``func`` is ``source.name`` (``sys._getframe``) or ``name`` imported from
    ``source``, the module (or the name) bound by nothing but that import."""
    if isinstance(func, ast.Attribute):
        return func.attr == name and isinstance(func.value, ast.Name) and (
            func.value.id == source) and _imported_from(
                bindings.get(source, []), source, source, parents)
    return isinstance(func, ast.Name) and func.id == name and _imported_from(
        bindings.get(name, []), source, name, parents)


class _Flow:
    """Where a frame's value goes (``_frame_flows``): the module's parents and scopes, the
    locals being followed, and the ``f_back`` steps and locals found on the way."""

    def __init__(self, parents: dict[int, ast.AST], scopes: dict[int, ast.AST]) -> None:
        self.parents, self.scopes = parents, scopes
        self.following: set[tuple[int, str, str]] = set()
        self.found: list[int] = []


def _frame_flows(node: ast.AST, kind: str, flow: _Flow) -> bool:
    """Whether the value of ``node`` (a frame, a frame's namespace, or a value only
    tested) reaches nothing that reads a line, code or source of a frame: from a frame,
    ``f_back`` (a frame) and ``f_globals``/``f_builtins`` only; from a namespace, a
    subscript, ``.get(...)`` or ``in``; from either, a test (``if frame``, ``is None``),
    a comparison with a constant, a plain local of a function whose every read is such,
    or nothing (an expression statement). A call it is passed to, a return, a yield, a
    container, an attribute kept (``self.frame = ...``), ``f_code``, ``f_lineno``,
    ``f_locals``, a format (its ``repr`` shows the line) are not."""
    parent = flow.parents.get(id(node))
    if isinstance(parent, ast.If | ast.While | ast.IfExp | ast.Assert) and (
            parent.test is node):
        return True
    if isinstance(parent, ast.UnaryOp) and isinstance(parent.op, ast.Not):
        return True
    if isinstance(parent, ast.comprehension) and any(t is node for t in parent.ifs):
        return True
    if isinstance(parent, ast.Expr):
        return True
    if isinstance(parent, ast.BoolOp):
        return _frame_flows(parent, _TESTED, flow)
    if isinstance(parent, ast.IfExp):
        return _frame_flows(parent, kind, flow)
    if isinstance(parent, ast.Compare):
        others = [e for e in (parent.left, *parent.comparators) if e is not node]
        if all(isinstance(op, ast.Is | ast.IsNot) for op in parent.ops):
            return True
        if all(isinstance(op, ast.Eq | ast.NotEq) for op in parent.ops) and all(
                isinstance(e, ast.Constant) for e in others):
            return True
        return kind == _NAMESPACE and len(parent.ops) == 1 and isinstance(
            parent.ops[0], ast.In | ast.NotIn) and parent.comparators[0] is node
    if kind == _TESTED:
        return False
    if isinstance(parent, ast.Attribute) and parent.value is node and isinstance(
            parent.ctx, ast.Load):
        if kind == _FRAME and parent.attr == "f_back":
            flow.found.append(id(parent))
            return _frame_flows(parent, _FRAME, flow)
        if kind == _FRAME and parent.attr in _FRAME_NAMESPACES:
            return _frame_flows(parent, _NAMESPACE, flow)
        call = flow.parents.get(id(parent))
        return kind == _NAMESPACE and parent.attr == "get" and isinstance(
            call, ast.Call) and call.func is parent
    if isinstance(parent, ast.Subscript) and parent.value is node:
        return kind == _NAMESPACE and isinstance(parent.ctx, ast.Load)
    target = None
    if isinstance(parent, ast.Assign) and parent.value is node and len(parent.targets) == 1:
        target = parent.targets[0]
    elif isinstance(parent, ast.AnnAssign) and parent.value is node and parent.simple:
        target = parent.target
    if isinstance(target, ast.Name):
        return _local_flows(target, kind, flow)
    return False


def _local_flows(target: ast.Name, kind: str, flow: _Flow) -> bool:
    """Whether a local ``target`` of a function, given a value of ``kind``, passes it to
    nothing but what ``_frame_flows`` lets through: every read of the name in the
    function is such; no nested function, lambda or class mentions it, nor ``global`` or
    ``nonlocal``; the function names no ``locals``/``vars`` (which hand its locals out)."""
    fn = flow.scopes.get(id(target))
    if not isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
        return False
    key = (id(fn), target.id, kind)
    if key in flow.following:
        return True
    names = []
    for n in ast.walk(fn):
        if isinstance(n, ast.Global | ast.Nonlocal) and target.id in n.names:
            return False
        if isinstance(n, ast.Name) and n.id in ("locals", "vars"):
            return False
        if isinstance(n, ast.AugAssign) and isinstance(n.target, ast.Name) and (
                n.target.id == target.id):
            return False
        if isinstance(n, ast.Name) and n.id == target.id:
            if flow.scopes.get(id(n)) is not fn:
                return False
            names.append(n)
    flow.following.add(key)
    if not all(_frame_flows(n, kind, flow) for n in names
               if isinstance(n.ctx, ast.Load)):
        return False
    flow.found.extend(id(n) for n in names)
    return True


def _inert_comparisons(module: ast.Module, parents: dict[int, ast.AST],
                       scopes: dict[int, ast.AST],
                       bindings: dict[str, list[ast.AST]] | None,
                       selects: bool) -> set[int]:
    """The strings compared (``==``, ``!=``, ``in``, ``is`` and negations; alone or as
    items of a literal tuple, list or set on the right of ``in``) with a constant or a
    local name the comparison looks nothing up by (``_only_compared``; ``bindings`` None,
    where a star import may bind any name: no setter is known). Where the module
    defines ``__eq__``, ``__ne__`` or ``__contains__`` naming what looks a name up (a
    compared string is handed to it), none. Where the module looks up names it computes
    (``selects``), only the strings naming nothing that reads but ``__traceback__``
    (``_names_no_reader``; see ``inert``)."""
    for n in ast.walk(module):
        if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef) and n.name in (
                "__eq__", "__ne__", "__contains__") and _names(n) & _LOOKUP_WORDS:
            return set()
    quiet: set[int] = set()
    for cmp in ast.walk(module):
        if not (isinstance(cmp, ast.Compare) and len(cmp.ops) == 1 and isinstance(
                cmp.ops[0], ast.Eq | ast.NotEq | ast.In | ast.NotIn | ast.Is | ast.IsNot)):
            continue
        left, right = cmp.left, cmp.comparators[0]
        for mine, other in ((left, right), (right, left)):
            strings: list[ast.expr] = []
            if _is_string(mine):
                strings = [mine]
            elif mine is right and isinstance(cmp.ops[0], ast.In | ast.NotIn) and (
                    isinstance(mine, ast.Tuple | ast.List | ast.Set)):
                strings = [e for e in mine.elts if _is_string(e)]
            if strings and _only_compared(other, strings, parents, scopes, bindings):
                quiet.update(id(s) for s in strings if not selects or _names_no_reader(s))
    return quiet


def _names_no_reader(node: ast.expr) -> bool:
    """Whether a string names nothing that reads lines, files or a stream (an
    exception's ``__traceback__`` aside: a traceback shows its lines one read further)."""
    if not (isinstance(node, ast.Constant) and isinstance(node.value, str)):
        return False
    found = _WORD.findall(node.value)
    return (not set(found) & (_ALL_WORDS - _SET_HARMLESS)
            and not any(stream in node.value for stream in _STREAMS)
            and not any(_HANDLER.search(w) for w in found))


def _is_string(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str)


def _names(node: ast.AST) -> set[str]:
    return {n.id if isinstance(n, ast.Name) else n.attr for n in ast.walk(node)
            if isinstance(n, ast.Name | ast.Attribute)}


def _only_compared(other: ast.expr, strings: list[ast.expr], parents: dict[int, ast.AST],
                   scopes: dict[int, ast.AST],
                   bindings: dict[str, list[ast.AST]] | None) -> bool:
    """Whether what ``strings`` are compared with is a constant, or a local of a function
    whose every read is an operand of a comparison, or the name given to ``setattr``/
    ``delattr`` (or ``object.__setattr__``...) where no string names what reads lines,
    files or a stream when set (an exception's ``__traceback__`` aside): the comparison
    then selects no name to look up. A local that a nested function, lambda or class
    mentions, that ``global``/``nonlocal`` declares, or in a function naming
    ``locals``/``vars``, is not followed."""
    if isinstance(other, ast.Constant):
        return True
    if not isinstance(other, ast.Name):
        return False
    fn = scopes.get(id(other))
    if not isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
        return False
    settable = all(_names_no_reader(s) for s in strings
                   if isinstance(s, ast.Constant) and isinstance(s.value, str))
    for n in ast.walk(fn):
        if isinstance(n, ast.Global | ast.Nonlocal) and other.id in n.names:
            return False
        if isinstance(n, ast.Name) and n.id in ("locals", "vars"):
            return False
        if not (isinstance(n, ast.Name) and n.id == other.id):
            continue
        if scopes.get(id(n)) is not fn:
            return False
        if not isinstance(n.ctx, ast.Load):
            continue
        use = parents.get(id(n))
        if isinstance(use, ast.Compare):
            continue
        if settable and bindings is not None and isinstance(use, ast.Call) and len(
                use.args) >= 2 and use.args[1] is n and _setter(use.func, bindings):
            continue
        return False
    return True


def _setter(func: ast.expr, bindings: dict[str, list[ast.AST]]) -> bool:
    """Whether ``func`` is the builtin ``setattr``/``delattr``, or ``__setattr__``/
    ``__delattr__`` of ``object``, ``type`` or ``BaseException`` (names the module does
    not bind)."""
    if isinstance(func, ast.Name):
        return func.id in _SETTERS and func.id not in bindings
    return (isinstance(func, ast.Attribute) and func.attr in ("__setattr__", "__delattr__")
            and isinstance(func.value, ast.Name) and func.value.id in _PLAIN_SETTERS
            and func.value.id not in bindings)


def _sets_a_stream(tree: ast.AST) -> bool:
    """Whether code sets ``stderr`` or ``stdout`` by a name it spells (``setattr(sys,
    "std" + "err", buf)``, ``monkeypatch.setattr("sys.stderr", buf)``), or by a name it
    computes where a string of it names a stream (``if k == "stderr": setattr(sys, k,
    buf)``)."""
    def streamed(text: str | None) -> bool:
        return text is not None and any(stream in text for stream in _STREAMS)

    named = any(isinstance(n, ast.Constant) and isinstance(n.value, str)
                and streamed(n.value) for n in ast.walk(tree))
    for n in ast.walk(tree):
        if not (isinstance(n, ast.Call) and len(n.args) >= 2 and isinstance(
                n.func, ast.Name | ast.Attribute)):
            continue
        setter = (n.func.id if isinstance(n.func, ast.Name) else n.func.attr) in (
            "setattr", "__setattr__")
        if setter and (any(streamed(_folded(a)) for a in n.args)
                       or (named and _folded(n.args[1]) is None)):
            return True
    return False


def reads_files(tree: ast.AST, quiet: frozenset[int] | None = None) -> bool:
    """Whether code of ``tree`` may read a file (see the module's docstring); ``quiet`` as
    for ``words``."""
    return bool(words(tree, quiet) & _FILE_WORDS)


def reads_source(tree: ast.AST, seen: frozenset[str] = frozenset(),
                 quiet: frozenset[int] | None = None) -> bool:
    """Whether code of ``tree`` may read source text or line numbers of its module.
    ``seen``: words a check already refuses wherever the code it proves reaches them
    (``RELATIONAL_REFUSES``), which do not count; ``quiet`` as for ``words``."""
    found = words(tree, quiet) - seen
    if found & (_OWN_FILE_WORDS | _LINE_WORDS | _LOGGING_WORDS):
        return True
    if any(_HANDLER.search(w) for w in found):
        return True
    if "asyncio" in found and found & _TASK_WORDS:
        return True
    if any(isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Store)
           and n.attr in _STREAMS for n in ast.walk(tree)) or _sets_a_stream(tree):
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
