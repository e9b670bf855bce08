"""Noise: changes to a function that cannot change what any code computes, found without
running anything.

``units`` pairs the functions of two versions of a module; where the whole module is the
same code but for noise, a changed function is verified at once, with the assumptions its
kind of noise needs (``bot.review``). Two kinds are decided here (formatting, the third,
is the same code with other text, which ``units`` sees by itself):

- *docstring*: the module is the same code once docstrings are taken out, and no code of
  it may read a docstring that changed, source text or line numbers;
- *annotations*: the module is the same code once docstrings and the parameter and return
  annotations of its functions and methods are taken out (not those of functions inside
  functions: those are evaluated each time the enclosing function runs); no code of it may
  read annotations (``__annotations__``, ``typing.get_type_hints``, ``inspect.signature``
  ...) or docstrings; and no changed annotation is evaluated when the module runs: the
  module postpones evaluation (``from __future__ import annotations``), or the annotation
  is a string in both versions. For each function, its decorators and enclosing classes
  must be known not to read it: a decorator of a validation or command-line library turns
  annotations into behaviour, as a metaclass or ``__init_subclass__`` of a base may. A
  method's classes must have such plain bases for a docstring change too (``cmd.Cmd``
  prints a ``do_*`` method's docstring as its help). Annotated assignments are
  annotations too (``_plain_statements``): in a function, ``self.x: int = 0`` is
  ``self.x = 0``; under postponed evaluation, a class's or the module's ``x: int = 0`` is
  ``x = 0`` and a bare ``x: int`` nothing but an entry of ``__annotations__``, where no
  code reads a namespace wholesale and each such class makes nothing of its annotations
  (``_plain_bases``); and the body of ``if TYPE_CHECKING:`` never runs.

Code outside the module reading a function's docstring or annotations is a listed
assumption of the verdict (``bot.review.NOISE_ASSUMPTIONS``).
"""

from __future__ import annotations

import ast
import builtins
from collections.abc import Iterator, Sequence, Set

from veribot.checks.lang import pyinterfere, pylookups, pyreflect, pysource
from veribot.checks.project import reads

__all__ = ["ANNOTATIONS", "DOCSTRING", "function_noise", "header_unread", "may_rebind_globals",
           "module_noise", "plain_class", "reads_no_docstring", "reads_no_source", "typing_name"]

DOCSTRING = "docstring"
ANNOTATIONS = "annotations"

Definition = ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef
_Function = ast.FunctionDef | ast.AsyncFunctionDef


def module_noise(before: ast.Module, after: ast.Module) -> str:
    """``DOCSTRING`` when the versions may differ only in docstrings that no code reads,
    ``ANNOTATIONS`` when they may differ in annotations too (see above), else ``""``."""
    if not (_compiles(before) and _compiles(after)):
        return ""  # `global x` with `x: int = 1`: a syntax error the parser lets through
    if _docstrings_only(before, after):
        return DOCSTRING
    postponed = _postponed(before) and _postponed(after)
    if _key_without(before, annotations=True, postponed=postponed) != _key_without(
            after, annotations=True, postponed=postponed):
        return ""
    if not _reads_no_docstring(before, after):
        return ""
    if _reads_annotations(before, after):
        return ""
    if not _scope_notes_unread(before, after):
        return ""
    return ANNOTATIONS if _never_evaluated(before, after) else ""


def _compiles(tree: ast.Module) -> bool:
    """Whether CPython compiles ``tree``: the parser lets through what its compiler
    refuses (``global x`` with ``x: int = 1`` in one function, ``a: (b := int)`` under
    postponed evaluation), which no change of docstring or annotation may add."""
    try:
        compile(tree, "<module>", "exec", dont_inherit=True)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


def function_noise(
    mode: str, before: Sequence[Definition], after: Sequence[Definition],
    tree_before: ast.Module, tree: ast.Module,
) -> str:
    """The kind of noise that is all one function's change, or ``""`` to check it as usual.

    ``mode`` is ``module_noise`` of the two versions; ``before``/``after`` are the
    function's enclosing classes, outermost first, and the function itself, in each
    version; ``tree_before`` and ``tree`` are the two versions of the module."""
    if mode not in (DOCSTRING, ANNOTATIONS):
        return ""
    b, a = before[-1], after[-1]
    if not _decorators_safe(before, after, _DOC_SAFE_DECORATORS, tree_before, tree) or not (
            _plain_classes(before, after, tree)):
        return ""
    if mode == DOCSTRING or not isinstance(b, ast.FunctionDef | ast.AsyncFunctionDef) or not (
            isinstance(a, ast.FunctionDef | ast.AsyncFunctionDef)):
        return DOCSTRING if mode == DOCSTRING else ""
    if _annotation_keys(b) == _annotation_keys(a):
        # Annotations of its locals and attributes (`self.x: int = 0`) are never evaluated
        # nor kept: nothing can read them.
        return DOCSTRING if _body_notes(b) == _body_notes(a) else ANNOTATIONS
    return ANNOTATIONS if _annotations_unread(before, after, tree_before, tree) else ""


def header_unread(
    before: ast.Module, after: ast.Module, before_chain: Sequence[Definition],
    after_chain: Sequence[Definition],
) -> bool:
    """Whether one function's docstring and annotations may differ between the versions
    while the rest of the module changes too: no code of either version may read
    docstrings or annotations (as ``module_noise`` asks), a differing annotation is never
    evaluated (postponed evaluation, or a string in both), and the function's decorators
    and enclosing classes are known not to read them. The code itself is compared by the
    caller (the relational check)."""
    b, a = before_chain[-1], after_chain[-1]
    if not isinstance(b, ast.FunctionDef | ast.AsyncFunctionDef) or not isinstance(
            a, ast.FunctionDef | ast.AsyncFunctionDef):
        return False
    if not (_compiles(before) and _compiles(after)):
        return False
    if not _reads_no_docstring(before, after):
        return False
    if _reads_annotations(before, after):
        return False
    if not _decorators_safe(before_chain, after_chain, _DOC_SAFE_DECORATORS, before,
                            after) or not _plain_classes(before_chain, after_chain, after):
        return False
    if _annotation_keys(b) == _annotation_keys(a):
        return True
    postponed = _postponed(before) and _postponed(after)
    return (postponed or _slots_inert(b, a)) and _annotations_unread(
        before_chain, after_chain, before, after)


def _annotations_unread(
    before: Sequence[Definition], after: Sequence[Definition], tree_before: ast.Module,
    tree: ast.Module,
) -> bool:
    """Whether the function's decorators are known not to read its annotations (its
    enclosing classes are checked by ``_plain_classes``)."""
    return _decorators_safe(before, after, _ANNOTATION_SAFE_DECORATORS, tree_before, tree)


def _plain_classes(
    before: Sequence[Definition], after: Sequence[Definition], tree: ast.Module
) -> bool:
    """Whether the function's enclosing classes have only bases that run no code of their
    own on a subclass (``_plain_bases``): a base from elsewhere may read its methods'
    docstrings or annotations (``cmd.Cmd`` prints a ``do_*`` method's docstring as help)."""
    classes = [n for n in (*before[:-1], *after[:-1]) if isinstance(n, ast.ClassDef)]
    return all(_plain_bases(c, tree) for c in classes)


# Names whose presence in a module means it may read annotations (as words: an attribute,
# a name, an imported name or a string).
_READS_ANNOTATIONS = (
    "__annotations__",
    "__annotate__",  # Python 3.14's lazy annotations
    "annotationlib",
    "get_type_hints",
    "get_annotations",
    "get_overloads",
    "signature",  # inspect.signature, __signature__
    "Signature",  # inspect.Signature.from_callable
    "from_callable",
    "getfullargspec",
    "getargspec",
    "getmembers",
    "register",  # functools.singledispatch dispatches on a registered function's annotations
    "__init_subclass__",  # a base may look at its subclasses' methods
    "get_referents",  # gc hands out the annotations dict of a function
    "typeguard",
    "beartype",
    "pydantic",
    "validate_call",
    "validate_arguments",
)


def _annotated(tree: ast.Module) -> Iterator[ast.FunctionDef | ast.AsyncFunctionDef]:
    """The functions whose annotations are evaluated once, when the module runs: those in
    the module's body and in the bodies of its classes (nested classes too)."""
    todo: list[ast.stmt] = list(tree.body)
    while todo:
        node = todo.pop(0)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            yield node
        elif isinstance(node, ast.ClassDef):
            todo.extend(node.body)


def _slots(function: ast.FunctionDef | ast.AsyncFunctionDef) -> list[tuple[ast.AST, str]]:
    """Where a function's annotations are held: each parameter's, then the return's."""
    args = function.args
    params = [*args.posonlyargs, *args.args, *args.kwonlyargs]
    params += [p for p in (args.vararg, args.kwarg) if p is not None]
    return [*((p, "annotation") for p in params), (function, "returns")]


def _annotation_keys(function: ast.FunctionDef | ast.AsyncFunctionDef) -> list[str]:
    return [pysource.code_key(v) if (v := getattr(h, f)) is not None else ""
            for h, f in _slots(function)]


def _postponed(tree: ast.Module) -> bool:
    """Whether the module has ``from __future__ import annotations``."""
    return any(
        isinstance(s, ast.ImportFrom) and s.module == "__future__"
        and any(a.name == "annotations" for a in s.names)
        for s in tree.body)


def _never_evaluated(before: ast.Module, after: ast.Module) -> bool:
    """Whether no annotation that differs between the versions is evaluated when the module
    runs: both versions postpone evaluation, or each such annotation is absent or a string
    in both. (The versions are the same code but for docstrings and annotations, so their
    functions pair in order.)"""
    if _postponed(before) and _postponed(after):
        return True
    return all(_slots_inert(b, a)
               for b, a in zip(_annotated(before), _annotated(after), strict=True))


def _slots_inert(b: ast.FunctionDef | ast.AsyncFunctionDef,
                 a: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """Whether each annotation that differs between two versions of a function with the
    same parameters is absent or a string in both."""
    slots_b, slots_a = _slots(b), _slots(a)
    if len(slots_b) != len(slots_a):
        return False
    for (bh, bf), (ah, af) in zip(slots_b, slots_a, strict=True):
        bv, av = getattr(bh, bf), getattr(ah, af)
        same = (bv is None) == (av is None) and (
            bv is None or pysource.code_key(bv) == pysource.code_key(av))
        if not same and not (_inert(bv) and _inert(av)):
            return False
    return True


def _inert(annotation: ast.expr | None) -> bool:
    return annotation is None or (
        isinstance(annotation, ast.Constant) and isinstance(annotation.value, str))


def _plain_bases(cls: ast.ClassDef, tree: ast.Module, depth: int = 0, *,
                 notes: bool = False) -> bool:
    """Whether every base of ``cls`` is known to run no code when a subclass is made: a
    builtin class the module does not rebind, ``typing.Generic``/``Protocol``,
    ``abc.ABC``, or an undecorated class of the module's own body, bound once, with such
    bases (a metaclass or ``__init_subclass__`` of any other base may read the methods'
    annotations). With ``notes`` (the class's own annotations differ), whether making it
    reads none of them: ``cls`` is undecorated too (``dataclass`` makes fields of them) and
    ``Protocol`` no plain base (its ``isinstance`` checks annotated members)."""
    if depth > 20 or cls.keywords or (notes and cls.decorator_list):
        return False
    plain_typing = ("Generic",) if notes else ("Generic", "Protocol")
    bound = pyinterfere.bound_names(tree)
    local = {s.name: s for s in tree.body if isinstance(s, ast.ClassDef)}
    for base in cls.bases:
        if isinstance(base, ast.Subscript):
            base = base.value
        name = base.id if isinstance(base, ast.Name) else None
        if name is not None and name not in bound and isinstance(
                getattr(builtins, name, None), type):
            continue
        if name is not None and name in local and name in pyinterfere.bound_once(tree) and (
                not local[name].decorator_list
                and _plain_bases(local[name], tree, depth + 1, notes=notes)):
            continue
        if _typing_name(base, tree) in plain_typing or _abc(base, tree):
            continue
        return False
    return True


def plain_class(cls: ast.ClassDef, tree: ast.Module) -> bool:
    """Whether ``cls`` is undecorated, without keywords, and has only plain bases
    (``_plain_bases``): nothing reads its own docstring or annotations as it is made."""
    return not cls.decorator_list and _plain_bases(cls, tree, notes=True)


def typing_name(node: ast.expr, tree: ast.Module,
                typing_modules: tuple[str, ...] = ("typing", "typing_extensions")) -> str | None:
    """The name in ``typing`` (or ``typing_extensions``, or ``typing_modules``) that
    ``node`` reads (``_typing_name``): ``typing_name(d, tree) == "overload"`` for a
    decorator ``d`` that is typing's ``overload``, not a function of that name."""
    return _typing_name(node, tree, typing_modules)


def _abc(base: ast.expr, tree: ast.Module) -> bool:
    """``abc.ABC``: its metaclass collects abstract methods, and reads no docstring or
    annotation."""
    return _typing_name(base, tree, ("abc",)) == "ABC"


def _typing_name(node: ast.expr, tree: ast.Module,
                 typing_modules: tuple[str, ...] = ("typing", "typing_extensions")) -> str | None:
    """The name in ``typing`` (or ``typing_extensions``, or ``typing_modules``) that
    ``node`` reads, where the module imports it from there and binds it nowhere else."""
    once = pyinterfere.bound_once(tree)
    for stmt in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(stmt, ast.ImportFrom) and (
                stmt.module in typing_modules and stmt.level == 0):
            for alias in stmt.names:
                if (alias.asname or alias.name) == node.id and node.id in once:
                    return alias.name
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and (
                isinstance(stmt, ast.Import)):
            for alias in stmt.names:
                if alias.name in typing_modules and (
                        (alias.asname or alias.name) == node.value.id) and (
                        node.value.id in once):
                    return node.attr
    return None


def _runs_code(tree: ast.Module) -> bool:
    """Whether the module may run code given as text (``eval("f.__d" + "oc__")``) or
    install an interpreter-wide hook: a code runner named (``compile`` only as a free name:
    ``re.compile`` is another), or what ``pyreflect.hook`` finds."""
    bound = pyinterfere.bound_names(tree)
    parents = {id(c): n for n in ast.walk(tree) for c in ast.iter_child_nodes(n)}
    for node in ast.walk(tree):
        word = node.id if isinstance(node, ast.Name) else (
            node.attr if isinstance(node, ast.Attribute) else None)
        if word == "__import__" and _imports_a_literal(node, parents, bound):
            continue  # `__import__("concurrent.futures")` only imports
        if word in pylookups.CODE_RUNNERS and (
                word != "compile" or (isinstance(node, ast.Name) and word not in bound)):
            return True
    return pyreflect.hook(tree, bound, pyinterfere.module_bound(tree)) is not None


def looks_up_computed_names(tree: ast.Module) -> bool:
    """Whether code of ``tree`` may look up a name it does not spell out: by a name not
    drawn from a finite set of strings (``_dynamic_keys``: ``getattr(x, name)``, a
    namespace read wholesale), or in code it runs from text (``_runs_code``). Where it
    may not, a name it compares a string with is looked up nowhere in it (``reads``)."""
    return _dynamic_keys(tree) is None or _runs_code(tree)


def _imports_a_literal(node: ast.AST, parents: dict[int, ast.AST], bound: set[str]) -> bool:
    """Whether ``node`` is the builtin ``__import__`` called with a module name written out
    (``__import__("concurrent.futures")``), and nothing else."""
    call = parents.get(id(node))
    return (isinstance(node, ast.Name) and node.id not in bound and isinstance(call, ast.Call)
            and call.func is node and len(call.args) == 1 and not call.keywords
            and isinstance(call.args[0], ast.Constant) and isinstance(call.args[0].value, str))


# Names whose presence in a module means it may read docstrings, its own source or line
# numbers: a docstring or layout change may then change what the code does, so it is
# checked as usual, never verified at once.
_READS_DOCSTRINGS = (
    "__doc__",
    "getdoc",
    "doctest",
    "pydoc",
    "lineno",  # f_lineno, co_firstlineno, tb_lineno, frame info
    "getsource",
    "_getframe",
    "currentframe",
    "getframeinfo",
    "__code__",
    # Other ways to a code object, whose constants hold its function's docstring (and
    # whose line table its line numbers): a generator's, a coroutine's, a frame's.
    "gi_code",
    "cr_code",
    "ag_code",
    "f_code",
    "co_consts",
    "co_code",
    "co_lines",
    "co_positions",
    "co_linetable",
    "co_lnotab",
    "co_firstlineno",
    "code_info",  # dis's: a code object's constants and line numbers, as text
    "show_code",
    "get_instructions",
    "Bytecode",
    "findlinestarts",
    "getmembers",  # inspect.getmembers(f) has f.__doc__ among them
    "get_referents",  # the garbage collector hands out what a function refers to
    "get_referrers",
    "shortDescription",  # unittest's description of a test is its docstring's first line
    "FunctionTestCase",
    "getcomments",  # inspect's: the comments above a definition
    # Warnings are told apart by the line that raised them: a repeated warning from one
    # line is shown once, from two lines twice; what catches them reads that.
    "catch_warnings",
    "showwarning",
    "formatwarning",
    "__warningregistry__",
)
# Those of them that read source text or line numbers (not docstrings alone).
_READS_LAYOUT = frozenset(_READS_DOCSTRINGS) - {"__doc__", "getdoc", "pydoc", "getmembers",
                                               "get_referents", "get_referrers",
                                               "shortDescription", "FunctionTestCase"}
# Names of what copies a docstring from one function to another (``functools.wraps``).
_COPIES_DOCSTRINGS = ("wraps", "update_wrapper", "WRAPPER_ASSIGNMENTS")

# Decorators known not to read the function's docstring (by their last dotted name part).
_DOC_SAFE_DECORATORS = frozenset(
    {
        "staticmethod",
        "classmethod",
        "property",
        "setter",
        "getter",
        "deleter",
        "abstractmethod",
        "overload",
        "override",
        "cache",
        "lru_cache",
        "cached_property",
        "dataclass",
        "total_ordering",
        "contextmanager",  # wraps the generator function: copies its docstring, never reads it
        "asynccontextmanager",
        "wraps",
        "singledispatch",
        "singledispatchmethod",
        "final",
        "unique",
    }
)


# Decorators known not to read the function's annotations: the docstring-safe ones but
# those that dispatch or build fields on annotations.
_ANNOTATION_SAFE_DECORATORS = _DOC_SAFE_DECORATORS - {
    "singledispatch", "singledispatchmethod", "dataclass"}


def _key_without(tree: ast.Module, annotations: bool = False, postponed: bool = False) -> str:
    """The code key of ``tree`` without the docstrings of the module, its classes and its
    functions, and with ``annotations`` without the annotations of the functions
    ``_annotated`` finds and those of annotated assignments (``_plain_statements``). Only a
    string constant as the *first* statement of a body is a docstring. (The parts are taken
    out and put back: a deep copy would recurse on deep trees.)"""
    taken: list[tuple[list[ast.stmt], ast.stmt]] = []
    for node in ast.walk(tree):
        if _docstring(node) is not None:
            assert isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef
                              | ast.AsyncFunctionDef)
            taken.append((node.body, node.body.pop(0)))
    slots: list[tuple[ast.AST, str, ast.expr]] = []
    swapped: list[tuple[list[ast.stmt], list[ast.stmt]]] = []
    if annotations:
        for function in _annotated(tree):
            for holder, field in _slots(function):
                value = getattr(holder, field)
                if value is not None:
                    slots.append((holder, field, value))
                    setattr(holder, field, None)
        for body, scope in _bodies(tree):
            plain = _plain_statements(body, scope, postponed, tree)
            if plain is not None:
                swapped.append((body, body[:]))
                body[:] = plain
    try:
        return pysource.code_key(tree)
    finally:
        for body, old in reversed(swapped):
            body[:] = old
        for body, doc in taken:
            body.insert(0, doc)
        for holder, field, value in slots:
            setattr(holder, field, value)


def _bodies(tree: ast.AST) -> Iterator[tuple[list[ast.stmt], _Function | None]]:
    """Every statement list of a module (or a definition), and the function whose scope
    holds it, if one does (a class body inside a function is a class scope)."""
    todo: list[tuple[ast.AST, _Function | None]] = [(tree, None)]
    while todo:
        node, function = todo.pop()
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            function = node
        elif isinstance(node, ast.ClassDef):
            function = None
        for field in ("body", "orelse", "finalbody"):
            block = getattr(node, field, None)
            if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
                yield block, function
                todo.extend((stmt, function) for stmt in block)
        for part in (*getattr(node, "handlers", ()), *getattr(node, "cases", ())):
            yield part.body, function
            todo.extend((stmt, function) for stmt in part.body)


def _plain_statements(body: list[ast.stmt], function: _Function | None, postponed: bool,
                      tree: ast.Module) -> list[ast.stmt] | None:
    """``body`` with its annotated assignments as Python runs them, or None where it has
    none that can be written otherwise: in a ``function``, ``x: T = v`` is ``x = v`` (a
    local's or an attribute's annotation is never evaluated nor kept), a bare ``p.a: T``
    of a parameter ``p`` it never deletes is nothing (it only loads ``p``), and a bare
    ``x: T`` makes ``x`` local, so it stays; in a class or module that postpones
    evaluation, ``x: T = v`` is ``x = v`` and a bare ``x: T`` nothing, but for
    ``__annotations__``, which the caller must show nobody reads. The body of ``if
    TYPE_CHECKING:`` (``typing``'s, bound once) never runs: the statement is its ``else``.
    (The statements of such an ``else`` are not normalized themselves.)"""
    if not any(isinstance(s, ast.AnnAssign | ast.If) for s in body):
        return None
    out: list[ast.stmt] = []
    for stmt in body:
        if isinstance(stmt, ast.If) and type_checking_only(stmt, tree) and not (
                function and _scoped(stmt.body)):
            out.extend(stmt.orelse)  # (reading the flag does nothing else)
        elif not isinstance(stmt, ast.AnnAssign) or not (function or postponed) or _scoped(
                [stmt.annotation]):
            out.append(stmt)
        elif stmt.value is not None:
            out.append(ast.copy_location(
                ast.Assign(targets=[stmt.target], value=stmt.value, type_comment=None), stmt))
        elif function is not None and _loads_a_parameter(stmt.target, function):
            continue
        elif function is not None or not isinstance(stmt.target, ast.Name):
            out.append(stmt)
    return out


def _scoped(code: Sequence[ast.AST]) -> bool:
    """Whether ``code`` that never runs still shapes the function around it as Python
    compiles it: a ``yield`` or ``await`` (a generator, a coroutine), a name it binds (a
    local of the function: ``x: (y := 1) = 2`` makes ``y`` one), ``global``/``nonlocal``."""
    return any(isinstance(n, ast.Yield | ast.YieldFrom | ast.Await | ast.Global
                          | ast.Nonlocal) or pylookups.bound_names(n)
               for c in code for n in ast.walk(c))


def type_checking_only(stmt: ast.stmt, tree: ast.Module) -> bool:
    """Whether ``stmt`` of ``tree`` is ``if TYPE_CHECKING:`` of ``typing``'s flag, bound
    once and set by no code of the module: its body never runs (its ``else`` does)."""
    return isinstance(stmt, ast.If) and _names_type_checking(stmt.test) and _typing_name(
        stmt.test, tree) == "TYPE_CHECKING" and not _sets_type_checking(tree)


def _names_type_checking(test: ast.expr) -> bool:
    """``TYPE_CHECKING`` or ``x.TYPE_CHECKING``, by its text (before the costlier check
    that it is ``typing``'s)."""
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _sets_type_checking(tree: ast.Module) -> bool:
    """Whether code of the module may set ``TYPE_CHECKING`` (``typing.TYPE_CHECKING =
    True``, or by ``setattr``), so that the block runs after all."""
    for n in ast.walk(tree):
        if isinstance(n, ast.Attribute | ast.Name) and not isinstance(n.ctx, ast.Load) and (
                (n.attr if isinstance(n, ast.Attribute) else n.id) == "TYPE_CHECKING"):
            return True
        if isinstance(n, ast.Constant) and n.value == "TYPE_CHECKING":
            return True
    return False


def _loads_a_parameter(target: ast.expr, function: _Function) -> bool:
    """Whether ``target`` is ``p.a`` for a parameter ``p`` of ``function`` that nothing in
    it deletes (``del p``, or ``except E as p``, which deletes ``p`` after): all a bare
    annotation of it runs is a load of ``p``, which cannot fail."""
    if not (isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name)):
        return False
    name = target.value.id
    a = function.args
    params = [*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg]
    return any(p is not None and p.arg == name for p in params) and not any(
        (isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Del))
        or (isinstance(n, ast.ExceptHandler) and n.name == name)  # deleted after it
        for n in ast.walk(function))


def _body_notes(function: ast.FunctionDef | ast.AsyncFunctionDef) -> list[str]:
    """The annotations of the annotated assignments in a function's own scope (with
    their targets), in order."""
    return [pysource.code_key(s) for body, scope in _bodies(function)
            for s in body if scope is not None and isinstance(s, ast.AnnAssign)]


def signatures_unread(before: ast.Module, after: ast.Module) -> bool:
    """Whether the annotations of the functions of either version are never evaluated
    (postponed evaluation in both) and no code of the module names something that reads
    annotations (``_reads_annotations``)."""
    return _postponed(before) and _postponed(after) and not _reads_annotations(before, after)


def _reads_annotations(before: ast.Module, after: ast.Module) -> bool:
    """Whether code of either version names something that reads annotations
    (``_READS_ANNOTATIONS``, as part of a word; ``register``, singledispatch's, only as an
    attribute, an imported name or a string, not as a local of that name)."""
    for tree in (before, after):
        keys = _dynamic_keys(tree)
        if keys is None:
            return True  # `getattr(f, "__annot" + "ations__")`
        words = "\n".join([*_code_words(tree, locals_too=False), *keys])
        if any(n in words for n in _READS_ANNOTATIONS):
            return True
    return False


def _scope_notes_unread(before: ast.Module, after: ast.Module) -> bool:
    """Where the annotations of a class or of the module differ (``__annotations__``
    only, under postponed evaluation), whether nothing can read them: no code hands out a
    namespace wholesale (``vars``, ``__dict__``, ``dir``, ``globals``), and each such class
    is known to make nothing of them (``_plain_bases`` with ``notes``: no ``dataclass``,
    no ``NamedTuple`` or ``Protocol`` base, no metaclass)."""
    changed = _scope_notes(before.body) != _scope_notes(after.body)
    classes_b = [n for n in ast.walk(before) if isinstance(n, ast.ClassDef)]
    classes_a = [n for n in ast.walk(after) if isinstance(n, ast.ClassDef)]
    if len(classes_b) != len(classes_a):
        return False
    for b, a in zip(classes_b, classes_a, strict=True):
        if _scope_notes(b.body) != _scope_notes(a.body):
            if not (_plain_bases(b, before, notes=True) and _plain_bases(a, after, notes=True)):
                return False
            changed = True
    return not changed or not any(_hands_out_namespaces(t) for t in (before, after))


def _scope_notes(body: list[ast.stmt]) -> list[str]:
    return [pysource.code_key(s) for s in body if isinstance(s, ast.AnnAssign)]


def _hands_out_namespaces(tree: ast.Module) -> bool:
    """Whether code may read a class's or the module's namespace wholesale, its
    ``__annotations__`` among the items: the builtins ``vars``, ``dir``, ``globals``,
    ``locals``, a ``__dict__``, ``getmembers``."""
    for n in ast.walk(tree):
        if isinstance(n, ast.Name) and n.id in _NAMESPACE_CALLS:
            return True
        word = n.attr if isinstance(n, ast.Attribute) else (
            n.value if isinstance(n, ast.Constant) else None)
        if word in ("__dict__", "getmembers", "getmembers_static"):
            return True
    return False


_NAMESPACE_CALLS = {"vars", "dir", "globals", "locals", "getmembers", "getmembers_static"}


def _docstrings_only(before: ast.Module, after: ast.Module) -> bool:
    """Whether the two versions are the same code once docstrings are removed, and neither
    names anything that reads docstrings, source text or line numbers (``__doc__``,
    ``inspect.getdoc``, doctest, ``f_lineno``, ``inspect.getsource``, ...)."""
    if _key_without(before) != _key_without(after):
        return False
    return _reads_no_docstring(before, after)


def reads_no_docstring(before: ast.Module, after: ast.Module) -> bool:
    """Whether no code of either version may read a docstring that changed, source text
    or line numbers."""
    return _reads_no_docstring(before, after)


def reads_no_source(before: ast.Module, after: ast.Module) -> bool:
    """Whether no code of either version may read source text or line numbers (which a
    change of layout alone may change; docstrings it leaves as they are)."""
    trees = (before, after)
    keys = [_dynamic_keys(t) for t in trees]
    if None in keys or any(_runs_code(t) or reads.reads_source(t) for t in trees):
        return False
    words = "\n".join([*(w for t in trees for w in _code_words(t, quiet=reads.inert(t))),
                       *(k for found in keys for k in found or [])])
    return not any(n in words for n in _READS_LAYOUT)


def _reads_no_docstring(before: ast.Module, after: ast.Module) -> bool:
    """Whether no code of either version may read a docstring that changed, its source
    text or its line numbers."""
    trees = (before, after)
    keys = [_dynamic_keys(t) for t in trees]
    if None in keys or any(_runs_code(t) for t in trees):
        return False  # `getattr(f, "__d" + "oc__")` reads a docstring without its name
    if any(reads.reads_source(t) for t in trees):
        return False  # a traceback, a file read, a frame (``reads``)
    kept = _same_docstring_reads(before, after)
    words = "\n".join([*(w for t in trees for w in _code_words(t, kept, quiet=reads.inert(t))),
                       *(k for found in keys for k in found or [])])
    if kept and any(n in words for n in _COPIES_DOCSTRINGS):
        return False  # a copied docstring is read as another function's own
    if any(_reader_words(t) or _attaches_to_open_class(t) for t in trees):
        return False
    return not any(n in words for n in _READS_DOCSTRINGS) and not any(
        _calls_builtin_help(t) for t in trees)


# Whole words (not parts of one) naming what reads docstrings: `dis` shows a code object's
# constants (a docstring among them) and line numbers; `cmd.Cmd` prints the docstring of
# each `do_*` method it finds on its instance as help; an XML-RPC server hands out its
# functions' docstrings (`system.methodHelp`, `DocXMLRPCServer`).
_READER_WORDS = frozenset({"dis", "Cmd", "register_introspection_functions",
                           "system_methodHelp", "DocXMLRPCServer", "SimpleXMLRPCServer",
                           "SimpleXMLRPCDispatcher", "DocCGIXMLRPCRequestHandler"})


def _reader_words(tree: ast.Module) -> bool:
    """Whether a word of the code is one of ``_READER_WORDS`` (a name, an attribute, an
    imported name or module), or the module imports ``cmd``, ``dis`` or ``xmlrpc``."""
    for node in ast.walk(tree):
        if isinstance(node, ast.alias) and node.name.split(".")[0] in ("cmd", "dis", "xmlrpc"):
            return True
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] in (
                "cmd", "dis", "xmlrpc"):
            return True
        word = node.id if isinstance(node, ast.Name) else (
            node.attr if isinstance(node, ast.Attribute) else (
                node.name if isinstance(node, ast.alias) else None))
        if word in _READER_WORDS:
            return True
    return False


def _attaches_to_open_class(tree: ast.Module) -> bool:
    """Whether code of the module may make one of its functions an attribute of a class
    that may read its members' docstrings, other than by a ``def`` in the class body
    (which ``_plain_classes`` checks for each method): ``cmd.Cmd`` prints the docstring
    of a ``do_greet`` attached as ``Shell.do_greet = do_greet`` too.

    The rule: a class made by ``type(name, bases, ns)`` or ``types.new_class`` counts;
    so does an attribute written (``x.a = v``, ``setattr(x, ...)``) on a name imported
    by ``from m import C`` (a class from elsewhere). Where the module defines a class that
    is not ``_closed`` (a base or metaclass from elsewhere, or an unknown decorator, may
    read anything of the class and its instances): any binding in its body but a
    ``def``, a nested class or a literal (``RED = 1``, ``enum.auto()``); ``vars``,
    ``__dict__``, ``__setattr__``; ``setattr`` but on the first parameter of a method of
    another class; and an attribute written on what may be that class or its instance:
    a root that is no name (``type(s).a``, ``make().a``), the class's name, a name
    assigned a call of a class or function of the module (``s = Shell()``), the first
    parameter of a method of the class or of a class of the module it derives from (in
    that method).
    LIMIT: an instance handed in otherwise (a parameter, ``s = self.make()``) is taken
    for no such instance: code attaching the module's functions to it is as code
    elsewhere reading the docstring, the verdict's listed assumption."""
    classes = [c for c in ast.walk(tree) if isinstance(c, ast.ClassDef)]
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and (
                (isinstance(node.func, ast.Name) and node.func.id == "type"
                 and len(node.args) + len(node.keywords) > 1)
                or (isinstance(node.func, ast.Attribute) and node.func.attr == "new_class")):
            return True
    open_classes = [c for c in classes if not _closed(c, tree)]
    risky = {(a.asname or a.name) for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)
             for a in n.names}
    if open_classes and any(not _inert_member(stmt, tree)
                            for c in open_classes for stmt in c.body):
        return True
    # A class an open one derives from (`class Shell(Base, cmd.Cmd)`) has instances of
    # the open one for `self` too.
    under = {c.name for c in open_classes}
    for _ in range(len(classes) + 1):
        more = {n.id for c in classes if c.name in under for b in (*c.bases, *c.keywords)
                for n in ast.walk(b) if isinstance(n, ast.Name)}
        if more <= under:
            break
        under |= more
    if open_classes:
        risky |= under | {c.name for c in open_classes}
        made = {s.name for s in ast.walk(tree)
                if isinstance(s, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)}
        for n in ast.walk(tree):
            value = getattr(n, "value", None)
            if isinstance(n, ast.Assign | ast.AnnAssign | ast.NamedExpr) and isinstance(
                    value, ast.Call) and isinstance(value.func, ast.Name) and (
                    value.func.id in made):
                targets = n.targets if isinstance(n, ast.Assign) else [n.target]
                risky |= {t.id for target in targets for t in ast.walk(target)
                          if isinstance(t, ast.Name)}
    # `self.a = v` in a method of an open class, or of a class one derives from.
    selves: set[int] = set()
    for c in classes if open_classes else ():
        for m in c.body if c.name in under else ():
            if isinstance(m, ast.FunctionDef | ast.AsyncFunctionDef) and (
                    p := [*m.args.posonlyargs, *m.args.args]):
                selves |= {id(n) for n in ast.walk(m)
                           if isinstance(n, ast.Name) and n.id == p[0].arg}
    for node in ast.walk(tree):
        target: ast.expr | None = None
        if isinstance(node, ast.Attribute) and not isinstance(node.ctx, ast.Load):
            target = node.value
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and (
                node.func.id == "setattr") and node.args:
            target = node.args[0]
            if open_classes and not (isinstance(target, ast.Name) and id(target) not in selves
                                     and target.id not in risky and _self_like(target, tree)):
                return True
        elif open_classes and (
                (isinstance(node, ast.Attribute) and node.attr in ("__dict__", "__setattr__"))
                or (isinstance(node, ast.Name) and node.id in ("vars", "__dict__"))):
            return True
        while isinstance(target, ast.Attribute):
            target = target.value
        if target is None:
            continue
        if not isinstance(target, ast.Name):
            if open_classes:
                return True
        elif target.id in risky or id(target) in selves:
            return True
    return False


def _self_like(name: ast.Name, tree: ast.Module) -> bool:
    """Whether ``name`` is the first parameter of some method of the module."""
    return any(isinstance(m, ast.FunctionDef | ast.AsyncFunctionDef)
               and (p := [*m.args.posonlyargs, *m.args.args]) and p[0].arg == name.id
               for c in ast.walk(tree) if isinstance(c, ast.ClassDef) for m in c.body)


def _closed(cls: ast.ClassDef, tree: ast.Module, depth: int = 0) -> bool:
    """Whether no code from elsewhere runs as ``cls``'s own or its instances': its
    decorators are known (``_DOC_SAFE_DECORATORS``), and each base and its metaclass is a
    builtin class the module does not rebind, ``typing.Generic``/``Protocol``,
    ``abc.ABC``, or a class of the module's own body, bound once, that is closed too (the
    code of the module's own classes is scanned for words like any of its code)."""
    if depth > 20 or any(_decorator_name(d, tree, None) not in _DOC_SAFE_DECORATORS
                         for d in cls.decorator_list):
        return False
    if any(k.arg is None for k in cls.keywords):
        return False  # `**options` may hold a metaclass
    local = {s.name: s for s in tree.body if isinstance(s, ast.ClassDef)}
    # The bases of a class of the module's body are evaluated there: a parameter `type`
    # of some function is not the name they read.
    top = any(cls is s for s in tree.body)
    bound = pyinterfere.module_bound(tree) if top else pyinterfere.bound_names(tree)
    for base in (*cls.bases, *(k.value for k in cls.keywords if k.arg == "metaclass")):
        if isinstance(base, ast.Subscript):
            base = base.value
        name = base.id if isinstance(base, ast.Name) else None
        if name is not None and name not in bound and isinstance(
                getattr(builtins, name, None), type):
            continue
        if name is not None and name in local and name in pyinterfere.bound_once(tree) and (
                _closed(local[name], tree, depth + 1)):
            continue
        if _typing_name(base, tree) in _CLOSED_TYPING or _abc(base, tree) or (
                _typing_name(base, tree, ("collections.abc", "typing")) in _CLOSED_ABCS) or (
                _typing_name(base, tree, ("enum",)) in _CLOSED_ENUMS) or (
                _from_collections_abc(base, tree) in _CLOSED_ABCS) or (
                top and _module_attribute(base, tree) in _CLOSED_NAMES) or any(
                _typing_name(base, tree, (m,)) == n for m, _, n in (
                    c.rpartition(".") for c in _CLOSED_STDLIB)):
            continue
        return False
    return True


def _module_attribute(node: ast.expr, tree: ast.Module) -> str | None:
    """``module.Name`` for ``X.Name`` read at module level where the module's own code
    binds ``X`` only by one ``import module as X`` of its body (a local ``t`` of some
    function is another name), and declares it ``global`` nowhere."""
    if not (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)):
        return None
    name = node.value.id
    modules: list[str] = []
    others = 0
    todo: list[ast.AST] = list(tree.body)
    while todo:
        n = todo.pop()
        if isinstance(n, ast.Import):
            modules += [a.name for a in n.names if a.asname == name or (
                a.asname is None and a.name == name)]
            others += sum(1 for a in n.names if a.asname is None and a.name != name
                          and a.name.split(".")[0] == name)
            continue
        if isinstance(n, ast.ImportFrom):
            others += sum(1 for a in n.names if (a.asname or a.name) in (name, "*"))
            continue
        if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            others += n.name == name
            todo.extend([*n.decorator_list, *getattr(n, "bases", ()),
                         *(k.value for k in getattr(n, "keywords", ()))])
            continue
        if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load) and n.id == name:
            others += 1
        if isinstance(n, ast.MatchAs | ast.MatchStar) and n.name == name:
            others += 1
        todo.extend(ast.iter_child_nodes(n))
    if others or len(modules) != 1 or any(
            isinstance(g, ast.Global) and name in g.names for g in ast.walk(tree)):
        return None
    return f"{modules[0]}.{node.attr}"


def _from_collections_abc(node: ast.expr, tree: ast.Module) -> str | None:
    """The name ``node`` reads as ``abc.Name`` after ``from collections import abc`` (the
    name ``abc`` bound nowhere else)."""
    if not (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)):
        return None
    if node.value.id not in pyinterfere.bound_once(tree):
        return None
    return node.attr if any(
        isinstance(s, ast.ImportFrom) and s.module == "collections" and s.level == 0
        and any(a.name == "abc" and (a.asname or a.name) == node.value.id for a in s.names)
        for s in ast.walk(tree)) else None


# Classes of the standard library whose code (metaclass, `__init_subclass__`, mixin
# methods) reads no docstring of a subclass's members or of its instances' attributes.
_CLOSED_TYPING = frozenset({"Generic", "Protocol", "NamedTuple", "TypedDict"})
_CLOSED_ABCS = frozenset({
    "Hashable", "Awaitable", "Coroutine", "AsyncIterable", "AsyncIterator",
    "AsyncGenerator", "Iterable", "Iterator", "Reversible", "Generator", "Sized",
    "Container", "Callable", "Collection", "Set", "MutableSet", "Mapping",
    "MutableMapping", "MappingView", "KeysView", "ItemsView", "ValuesView", "Sequence",
    "MutableSequence", "ByteString", "Buffer"})
_CLOSED_ENUMS = frozenset({"Enum", "IntEnum", "StrEnum", "Flag", "IntFlag", "ReprEnum"})
_CLOSED_NAMES = frozenset({*(f"typing.{n}" for n in _CLOSED_TYPING | _CLOSED_ABCS),
                           *(f"typing_extensions.{n}" for n in _CLOSED_TYPING),
                           *(f"collections.abc.{n}" for n in _CLOSED_ABCS),
                           *(f"enum.{n}" for n in _CLOSED_ENUMS), "abc.ABC"})
# Other classes of the standard library that read no docstring of their subclasses'
# members or instances' attributes.
_CLOSED_STDLIB = frozenset({
    *(f"io.{n}" for n in ("IOBase", "RawIOBase", "BufferedIOBase", "TextIOBase",
                          "TextIOWrapper", "BufferedReader", "BufferedWriter",
                          "BufferedRandom", "BufferedRWPair", "BytesIO", "StringIO",
                          "FileIO")),
    "threading.Thread", "threading.local", "collections.OrderedDict",
    "collections.defaultdict", "collections.Counter", "collections.deque",
    "collections.UserDict", "collections.UserList", "collections.UserString"})
_CLOSED_NAMES = _CLOSED_NAMES | _CLOSED_STDLIB


def _inert_member(stmt: ast.stmt, tree: ast.Module) -> bool:
    """Whether a statement of a class body binds nothing but a ``def``, a nested class, a
    literal or ``enum.auto()`` (or is ``pass``, a docstring, a bare annotation)."""
    if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Pass):
        return True
    if isinstance(stmt, ast.Expr):
        return isinstance(stmt.value, ast.Constant)
    if isinstance(stmt, ast.AnnAssign) and stmt.value is None:
        return isinstance(stmt.target, ast.Name)
    if isinstance(stmt, ast.Assign | ast.AnnAssign) and stmt.value is not None:
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        value = stmt.value
        return all(isinstance(t, ast.Name) for t in targets) and (
            _literal(value) or (isinstance(value, ast.Call) and not value.args
                                and not value.keywords
                                and _typing_name(value.func, tree, ("enum",)) == "auto"))
    return False


def _literal(node: ast.expr) -> bool:
    try:
        ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False
    return True


def _dynamic_keys(tree: ast.Module) -> list[str] | None:
    """The names the module's lookups by name may look up (``getattr(f, k)``,
    ``vars(C)[k]``, the fields of a format string), where finitely many are known
    (``pylookups.finite_strings``); None where some cannot be known:
    ``getattr(f, "__d" + "oc__")`` reads a docstring without its name written out. A
    relay in ``__getattr__`` passes on the name Python asked for, never ``__doc__``, which
    every class has."""
    if _aliases_a_lookup(tree):
        return None  # `from builtins import getattr as lookup`: calls no word tells
    relayed = pylookups.relays(tree)
    parents = {id(c): n for n in ast.walk(tree) for c in ast.iter_child_nodes(n)}
    strings = pylookups.finite_strings(tree)
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.MatchClass):
            found.extend(node.kwd_attrs)  # `case object(__doc__=d)` looks `__doc__` up
        keys = [] if id(node) in relayed else _keys_read(node, parents, tree)
        if keys is None:
            return None
        for key in keys:
            values = strings(key)
            if values is None:
                return None
            found.extend(values)
    if any(key in _HIDDEN_LOOKUPS for key in found):
        # `getattr(builtins, "getattr")(f, "__d" + "oc__")`, `vars(builtins)["eval"]`: a
        # lookup function or code runner got by name is called under no word.
        return None
    return found


# Functions that look a name up (or run code) when called, by the names they have in
# ``builtins``, ``operator``, ``inspect``: bound under another name, or got by a lookup
# by name, they are called under no word ``_keys_read`` and ``_runs_code`` know.
_HIDDEN_LOOKUPS = frozenset(
    {"getattr", "getattr_static", "attrgetter", "methodcaller",
     "__getattribute__", "__getattr__", "vars", "globals", "locals", "Formatter", "format",
     "format_map", "vformat", "getdoc", "getsource", "getmembers", "getmembers_static",
     "get_referents", "__dict__", "__globals__", *pylookups.CODE_RUNNERS})


def _aliases_a_lookup(tree: ast.Module) -> bool:
    """Whether an import binds a lookup function (or code runner) under a name of its own
    (``from builtins import getattr as lookup``, ``from operator import attrgetter as
    ag``): its calls are lookups by name that no word shows."""
    return any(
        isinstance(node, ast.ImportFrom) and any(
            a.name in _HIDDEN_LOOKUPS and a.asname not in (None, a.name) for a in node.names)
        for node in ast.walk(tree))


# Functions that look an attribute up by a name they are given.
_LOOKUP_FUNCTIONS = {"getattr", "getattr_static", "attrgetter", "methodcaller",
                     "__getattribute__", "__getattr__"}
# What hands out a namespace as a mapping: ``type(f).__dict__["__d" + "oc__"]`` is the
# descriptor of every function's docstring, ``vars(C)`` holds a class's ``__doc__`` and
# ``__annotations__``.
_VIEW_ATTRS = {"__dict__", "__globals__", "f_globals", "f_locals", "f_builtins"}
_VIEW_CALLS = {"vars", "globals", "locals"}
# Methods of a mapping that read no value, or one by the key given first.
_BLIND_METHODS = {"update", "clear", "keys", "__contains__"}
_KEY_METHODS = {"get", "pop", "setdefault", "__getitem__"}
# gettext's functions, which translate a message written out, and the formatting
# methods that look attributes up by the names in their format string.
_TRANSLATORS = {"gettext", "ngettext", "pgettext", "npgettext"}
_FORMATS = {"format", "format_map", "vformat"}


def _keys_read(node: ast.AST, parents: dict[int, ast.AST],
               tree: ast.Module) -> list[ast.expr] | None:
    """The expressions whose strings ``node`` looks up by name, ``[]`` if it looks up
    none, or None if it may look up any: a lookup function handed to other code
    (``reduce(getattr, names, f)``), a namespace read wholesale (``vars(C).values()``, a
    loop, ``dict(...)``, handing it on), the formatter itself. Writing into a namespace,
    testing a key with ``in`` and reading its keys read no value. A format string is a
    key too (``"{0.__doc__}".format(f)``); a literal translated by gettext's own function
    (``_("{name}")``, ``_`` imported from ``gettext``) is itself."""
    if isinstance(node, ast.Call):
        keys = pylookups.lookup_keys(node)
        if keys is not None:
            return keys
    word = node.id if isinstance(node, ast.Name) else (
        node.attr if isinstance(node, ast.Attribute) else None)
    if word in _LOOKUP_FUNCTIONS | {"Formatter"} and isinstance(node, ast.expr) and (
            not pylookups.called(node, parents) or word == "Formatter"):
        return None
    if isinstance(node, ast.Name) and node.id in _VIEW_CALLS:
        return None if not pylookups.called(node, parents) else []  # `map(vars, objects)`
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and (
            node.func.attr in _FORMATS):
        text = node.func.value
        # ASSUMPTION (kept for reach: click formats every message so): a translation has
        # the replacement fields of the message it translates, so `_("{n} items")` is
        # looked up by its literal. A message catalog may map it to any format string
        # (`{f.__doc__}`, `{n.__init__.__globals__[g].__doc__}`): where the module itself
        # binds or installs a catalog (`bindtextdomain`, `translation`, `install`...), the
        # literal is not taken for the text. Catalogs installed by code elsewhere are
        # assumed to keep the fields.
        if isinstance(text, ast.Call) and _gettext(text.func, tree, parents) is not None and (
                not _binds_catalog(tree)):
            # `ngettext(singular, plural, n)`: the count is no text.
            name = _gettext(text.func, tree, parents)
            return text.args[:-1] if name in ("ngettext", "npgettext") else text.args
        return [text]
    if isinstance(node, ast.Attribute) and node.attr in _VIEW_ATTRS:
        if not isinstance(node.ctx, ast.Load):
            return []  # `self.__dict__ = state`
    elif not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
              and node.func.id in _VIEW_CALLS):
        return []
    parent = parents.get(id(node))
    if isinstance(parent, ast.Subscript) and parent.value is node:
        return [parent.slice] if isinstance(parent.ctx, ast.Load) else []
    if isinstance(parent, ast.Compare) and node in parent.comparators and all(
            isinstance(op, ast.In | ast.NotIn) for op in parent.ops):
        return []
    if isinstance(parent, ast.Attribute) and parent.value is node:
        call = parents.get(id(parent))
        if isinstance(call, ast.Call) and call.func is parent:
            if parent.attr in _BLIND_METHODS:
                return []
            if parent.attr in _KEY_METHODS and call.args:
                return call.args[:1]
    return None


# What binds or installs a gettext message catalog (gettext's and locale's functions).
_CATALOG_WORDS = frozenset({"bindtextdomain", "textdomain", "translation", "install",
                            "GNUTranslations", "NullTranslations", "add_fallback",
                            "bind_textdomain_codeset", "_translations"})


def _binds_catalog(tree: ast.Module) -> bool:
    """Whether code of the module names something that binds or installs a message
    catalog (``gettext.bindtextdomain``, ``gettext.translation(...).install()``)."""
    return any(
        (isinstance(n, ast.Name) and n.id in _CATALOG_WORDS)
        or (isinstance(n, ast.Attribute) and n.attr in _CATALOG_WORDS)
        or (isinstance(n, ast.alias) and n.name in _CATALOG_WORDS)
        for n in ast.walk(tree))


def _gettext(func: ast.expr, tree: ast.Module, parents: dict[int, ast.AST]) -> str | None:
    """The gettext function ``func`` calls (``_`` of ``from gettext import gettext as
    _``), where every binding of its name in scope there is that import at module level:
    no function around the call binds it (``_, rest = pair``), nor declares it global."""
    name = _typing_name(func, tree, ("gettext",)) if isinstance(func, ast.Attribute) else None
    if name is not None or not isinstance(func, ast.Name):
        return name
    around: set[int] = set()
    at = parents.get(id(func))
    while at is not None:
        if isinstance(at, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | ast.ClassDef):
            around.add(id(at))
        at = parents.get(id(at))
    imported: set[str] = set()
    from_gettext = {id(a) for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)
                    and n.module == "gettext" and n.level == 0 for a in n.names}
    for node in ast.walk(tree):
        if isinstance(node, ast.Global) and func.id in node.names:
            return None
        if isinstance(node, ast.ImportFrom) and node.module == "gettext" and node.level == 0:
            imported.update(a.name for a in node.names if (a.asname or a.name) == func.id)
            continue
        if func.id not in pylookups.bound_names(node) or (
                isinstance(node, ast.alias) and id(node) in from_gettext):
            continue
        scope = parents.get(id(node))
        while scope is not None and not isinstance(
                scope, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | ast.ClassDef):
            scope = parents.get(id(scope))
        if scope is None or id(scope) in around:
            return None  # a module-level binding, or one of the scope around the call
    return imported.pop() if len(imported) == 1 else None
def _same_docstring_reads(before: ast.Module, after: ast.Module) -> set[int]:
    """``id()`` of the ``N.__doc__`` nodes that read or write a docstring no version changed.

    ``batched.__doc__ = _batched.__doc__`` copies the docstring of ``_batched``: harmless
    when ``N`` can only be a module-level definition whose docstring is the same in both
    versions. So ``N`` must be bound by nothing but ``def N``/``class N`` statements of the
    module's own body (not nested in a function or class, where a parameter or local of
    that name could hold any function, the changed one too), and no code may bind it
    otherwise (``globals()["N"] = f``, ``setattr(me, "N", f)``, ``me.N = f`` where ``me``
    is imported: the module itself, maybe). A write (``f.__doc__ = s``) reads nothing;
    what ``s`` reads is checked as any code is; ``f.__doc__ += s`` reads it.
    """
    kept: set[int] = set()
    docs_b, docs_a = _docstrings_by_name(before), _docstrings_by_name(after)
    rebinds = any(_may_rebind_globals(t) for t in (before, after))
    for tree in (before, after):
        parents = {id(c): n for n in ast.walk(tree) for c in ast.iter_child_nodes(n)}
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Attribute) and node.attr == "__doc__"):
                continue
            writes = not isinstance(node.ctx, ast.Load) and not isinstance(
                parents.get(id(node)), ast.AugAssign)
            if writes or (not rebinds and isinstance(node.value, ast.Name)
                          and node.value.id in docs_b
                          and docs_b[node.value.id] == docs_a.get(node.value.id)):
                kept.add(id(node))
    return kept


# Words of code that may bind a module's names other than by a statement of its own.
_REBINDERS = {"globals", "vars", "__dict__", "setattr", "modules", "__globals__",
              "f_globals", "import_module", "__import__", "__builtins__"}


def may_rebind_globals(tree: ast.Module) -> bool:
    """Whether code of ``tree`` may bind a module-level name of it other than by a
    statement at module level (``_may_rebind_globals``)."""
    return _may_rebind_globals(tree)


def _may_rebind_globals(tree: ast.Module) -> bool:
    """Whether code of ``tree`` may bind a module-level name of it by a way other than a
    statement at module level: a namespace or ``setattr`` (``_REBINDERS``), or an
    attribute written on an imported module, which may be this one."""
    imported = {(a.asname or a.name).split(".")[0] for n in ast.walk(tree)
                if isinstance(n, ast.Import | ast.ImportFrom) for a in n.names}
    for n in ast.walk(tree):
        word = n.id if isinstance(n, ast.Name) else (
            n.attr if isinstance(n, ast.Attribute) else None)
        if word in _REBINDERS:
            return True
        if isinstance(n, ast.Attribute) and not isinstance(n.ctx, ast.Load) and isinstance(
                n.value, ast.Name) and n.value.id in imported:
            return True
    return False


def _docstrings_by_name(tree: ast.Module) -> dict[str, list[str | None]]:
    """Module-level names bound only by top-level, undecorated ``def``/``class``
    statements, with their docstrings in order (a name bound any other way is left out:
    a decorator may hand back another object, with another docstring)."""
    top: dict[str, list[str | None]] = {}
    stack: list[ast.stmt] = list(tree.body)
    top_defs: set[int] = set()
    while stack:  # statements of the module's body, through `if`/`try` blocks
        stmt = stack.pop(0)
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) and not (
                stmt.decorator_list):
            top.setdefault(stmt.name, []).append(ast.get_docstring(stmt, clean=False))
            top_defs.add(id(stmt))
        elif isinstance(stmt, ast.If | ast.Try | ast.TryStar | ast.With | ast.For | ast.While):
            for block in (stmt.body, getattr(stmt, "orelse", []), getattr(stmt, "finalbody", [])):
                stack.extend(block)
            for handler in getattr(stmt, "handlers", []):
                stack.extend(handler.body)
    other: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            if id(node) not in top_defs:
                other.add(node.name)
        elif isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            other.add(node.id)
        elif isinstance(node, ast.arg):
            other.add(node.arg)
        elif isinstance(node, ast.alias):
            other.add((node.asname or node.name).split(".")[0])
        elif isinstance(node, ast.ExceptHandler) and node.name:
            other.add(node.name)
        elif isinstance(node, ast.Global | ast.Nonlocal):
            other.update(node.names)
        elif isinstance(node, ast.MatchAs | ast.MatchStar) and node.name:
            other.add(node.name)
        elif isinstance(node, ast.MatchMapping) and node.rest:
            other.add(node.rest)
    return {name: docs for name, docs in top.items() if name not in other}


def _calls_builtin_help(tree: ast.Module) -> bool:
    """Whether the code may call the builtin ``help`` (it prints docstrings): a load of
    ``help`` where the module binds that name nowhere."""
    bound = any(
        (isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load) and n.id == "help")
        or (isinstance(n, ast.arg) and n.arg == "help")
        or (isinstance(n, ast.alias) and (n.asname or n.name) == "help")
        or (isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
            and n.name == "help")
        for n in ast.walk(tree))
    return not bound and any(isinstance(n, ast.Name) and n.id == "help" for n in ast.walk(tree))


def _docstring(node: ast.AST) -> ast.Constant | None:
    """The docstring constant of a module, class or function: a string constant as the
    first statement of its body."""
    if not isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
        return None
    first = node.body[0] if node.body else None
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(
            first.value.value, str):
        return first.value
    return None


def _docstring_nodes(tree: ast.Module) -> set[int]:
    """``id()`` of the docstring constants of the module, its classes and functions."""
    return {id(doc) for node in ast.walk(tree) if (doc := _docstring(node)) is not None}


def _code_words(tree: ast.Module, kept: Set[int] = frozenset(),
                locals_too: bool = True, quiet: Set[int] = frozenset()) -> Iterator[str]:
    """The names, attributes, imported names and strings the code uses, docstrings left out
    (a docstring's text, say ``# doctest: +SKIP``, is not code that reads docstrings), and
    the attributes in ``kept`` (``id()`` of nodes shown harmless) too, and the nodes in
    ``quiet`` (``reads.inert``: a frame whose lines nothing reaches, a string only
    compared). Without ``locals_too``, a name that is a parameter of a function or bound
    by an assignment in one (``register: bool``) is no word (only ``_LOCAL_WORDS`` are
    left out so)."""
    docstrings = _docstring_nodes(tree)
    own = set() if locals_too else _function_locals(tree) & _LOCAL_WORDS
    for node in ast.walk(tree):
        if id(node) in quiet:
            continue
        if isinstance(node, ast.Name):
            if node.id not in own:
                yield node.id
        elif isinstance(node, ast.Attribute):
            if id(node) not in kept:
                yield node.attr
        elif isinstance(node, ast.MatchClass):
            # `case object(__doc__=d)` reads the attribute `__doc__`: its names are no nodes.
            yield from node.kwd_attrs
        elif isinstance(node, ast.alias):
            yield node.name
        elif isinstance(node, ast.ImportFrom) and node.module:
            yield node.module
        elif (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and id(node) not in docstrings
        ):
            yield node.value


# Words that read annotations only as an attribute or an imported name (singledispatch's
# `f.register`), not as a function's own local.
_LOCAL_WORDS = {"register"}


def _function_locals(tree: ast.Module) -> set[str]:
    """Names that are parameters of, or assigned in, some function of the module and
    bound nowhere else (no import, no module- or class-level binding)."""
    local: set[str] = set()
    elsewhere: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.arg):
            local.add(node.arg)
        elif isinstance(node, ast.alias):
            elsewhere.add((node.asname or node.name).split(".")[0])
    for stmt in tree.body:
        for n in ast.walk(stmt) if not isinstance(
                stmt, ast.FunctionDef | ast.AsyncFunctionDef) else ():
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
                elsewhere.add(n.id)
            elif isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                elsewhere.add(n.name)
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            elsewhere.add(stmt.name)
    return local - elsewhere


# Where a decorator known by name must come from: imported from one of these modules (and
# the name bound nowhere else), or a builtin the module never binds. By its name alone, a
# project's own `cache` may return the docstring.
_DECORATOR_MODULES = ("functools", "contextlib", "abc", "typing", "typing_extensions",
                      "dataclasses", "enum")
_BUILTIN_DECORATORS = frozenset({"staticmethod", "classmethod", "property"})
_PROPERTY_PARTS = frozenset({"setter", "getter", "deleter"})


def _decorator_name(node: ast.expr, tree: ast.Module, owner: Definition | None) -> str:
    """The name of the known decorator ``node`` (of a member of ``owner``, if a class)
    denotes in ``tree``, or ``""`` where it may be anything else."""
    if isinstance(node, ast.Call):
        node = node.func
    if isinstance(node, ast.Name) and node.id in _BUILTIN_DECORATORS:
        return node.id if _builtin_kept(node.id, tree) else ""
    if isinstance(node, ast.Attribute) and node.attr in _PROPERTY_PARTS and isinstance(
            node.value, ast.Name):
        # `@x.setter`: `x` must be, in the class body, only a property's methods.
        return node.attr if isinstance(owner, ast.ClassDef) and _a_property(
            node.value.id, owner, tree) else ""
    if isinstance(node, ast.Name | ast.Attribute) and "*" not in pyinterfere.bound_names(tree):
        return _typing_name(node, tree, _DECORATOR_MODULES) or ""
    return ""


def _builtin_kept(name: str, tree: ast.Module) -> bool:
    """Whether ``name`` is the builtin throughout ``tree``: bound nowhere, no star import,
    and the module never names ``builtins``."""
    bound = pyinterfere.bound_names(tree)
    return name not in bound and "*" not in bound and not any(
        (isinstance(n, ast.Name) and n.id in ("builtins", "__builtins__")) or (
            isinstance(n, ast.alias) and n.name == "builtins") for n in ast.walk(tree))


def _a_property(name: str, owner: ast.ClassDef, tree: ast.Module) -> bool:
    """Whether every statement of ``owner``'s body that binds ``name`` is a method with one
    decorator, the first the builtin ``property`` and the others ``name.setter`` and
    such."""
    first = True
    for stmt in owner.body:
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef) and stmt.name == name:
            if len(stmt.decorator_list) != 1:
                return False
            d = stmt.decorator_list[0]
            if first:
                if not (isinstance(d, ast.Name) and d.id == "property" and _builtin_kept(
                        "property", tree)):
                    return False
            elif not (isinstance(d, ast.Attribute) and d.attr in _PROPERTY_PARTS
                      and isinstance(d.value, ast.Name) and d.value.id == name):
                return False
            first = False
        elif name in _binds(stmt):
            return False
    return not first


def _binds(stmt: ast.stmt) -> set[str]:
    """Names a statement of a class body binds in that body (nested scopes left out)."""
    if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return {stmt.name}
    return {n.id for n in ast.walk(stmt) if isinstance(n, ast.Name) and isinstance(
        n.ctx, ast.Store | ast.Del)} | {(a.asname or a.name).split(".")[0]
                                        for n in ast.walk(stmt) if isinstance(
                                            n, ast.Import | ast.ImportFrom) for a in n.names}


def _decorators_safe(before: Sequence[Definition], after: Sequence[Definition],
                     safe: frozenset[str], tree_before: ast.Module,
                     tree_after: ast.Module) -> bool:
    """Whether every decorator of the function and of its enclosing classes (outermost
    first, in each version) is one of ``safe``, known as such where it is bound, and no
    enclosing class has keywords (a metaclass may read anything)."""
    for chain, tree in ((before, tree_before), (after, tree_after)):
        for i, node in enumerate(chain):
            owner = chain[i - 1] if i else None
            if any(_decorator_name(d, tree, owner) not in safe for d in node.decorator_list):
                return False
            if isinstance(node, ast.ClassDef) and node.keywords:
                return False
    return True
