"""The sandbox's child process: isolate itself, then run untrusted code and report.

Run as ``python -I -X utf8 -B _child.py CONFIG.json`` by ``veribot.checks.sandbox``.
This file must import nothing but the standard library (it runs before and after the
privilege drop, and its start-up time is paid for every child). The parent also imports
``parse_literal`` and ``canonical`` from here, so the argument syntax and the value
encoding are defined once.

Order of events in the child (see the package docstring for what each layer enforces):

1. inside bubblewrap's namespaces (see ``_bwrap``): resource limits, then, if bwrap ran as
   root, the switch to the fresh uid the parent chose;
2. a "ready" message on the result pipe, describing which layers are in force;
3. the audit hook; then either the script (``mode == "script"``) or the calls.
"""

from __future__ import annotations

import ast
import builtins
import collections.abc
import contextlib
import errno
import functools
import hashlib
import importlib
import importlib.util
import io
import itertools
import json
import linecache
import math
import os
import re
import resource
import runpy
import signal
import sys
import time
import traceback
from collections.abc import Callable, Sequence
from types import CoroutineType, FrameType, FunctionType
from typing import IO, Any, ClassVar

# Canonical encodings longer than this (as compact JSON) are replaced by their digest.
MAX_ENCODING_CHARS = 16_384
TEXT_CHARS = 200
_MAX_DEPTH = 200
# Open files per child: each socket pair, pipe or memfd can hold hundreds of KB of kernel memory
# (buffers), outside RLIMIT_AS; 20,000 descriptors held 2 GB of socket buffers.
MAX_OPEN_FILES = 64
# After the per-call timer first fires it fires again this often, in case the code
# swallowed the first interrupt with a bare ``except:``.
_REFIRE_S = 0.05


_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC
_PROCESS_EVENTS = frozenset(
    {
        "os.fork",
        "os.forkpty",
        "os.exec",
        "os.posix_spawn",
        "os.spawn",
        "os.system",
        "subprocess.Popen",
        "pty.spawn",
    }
)
_NETWORK_EVENTS = frozenset(
    {
        "socket.connect",
        "socket.bind",
        "socket.sendto",
        "socket.sendmsg",
        "socket.getaddrinfo",
        "socket.gethostbyname",
        "socket.gethostbyaddr",
        "socket.getnameinfo",
    }
)
_PATH_EVENTS = frozenset(
    {
        "os.rename",
        "os.remove",
        "os.rmdir",
        "os.mkdir",
        "os.chmod",
        "os.chown",
        "os.link",
        "os.symlink",
        "os.truncate",
        "os.utime",
        "os.setxattr",
        "os.removexattr",
        "shutil.rmtree",
    }
)
_CTYPES = ("ctypes", "_ctypes")
# An address as CPython prints one (`<Tag object at 0x7f3a...>`): where an object is,
# which differs from run to run, never what it holds. It is no part of any value
# compared, in a `repr` or in a string (`repr(obj)` returned), nor of a text shown.
_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]{6,}")
_MASKED = " at 0x?"


# --------------------------------------------------------------------------- literals


def parse_literal(text: str, *, objects: bool = False) -> object:
    """Evaluate one argument literal safely (``ast``, never ``eval``).

    Accepts what ``repr`` prints for ints, bools, None, str, bytes, floats, complex,
    lists, tuples, dicts, sets and frozensets, plus ``float('nan')``, ``float('inf')``,
    ``-float('inf')``, the bare names ``nan`` and ``inf`` and ``set()``; and, for inputs
    taken from a repository's own tests, ``range(<ints>)`` and ``iter(<literal>)``.

    With ``objects``, also the objects of a call to run in the child: a fresh stream
    ``io.StringIO('text')`` or ``io.BytesIO(b'data')`` (new at each reading, so no two
    calls share one), a call of any
    other name, ``Point(1, y=2)`` (a ``Build``: the child calls the class the module
    under review binds to that name, see ``materialize``), and the builtin classes by
    name (``int``, ``str``: a value like any other where a parameter takes any object).
    """
    tree = ast.parse(text.strip(), mode="eval")
    return _literal(tree.body, objects)


_KEYWORD = re.compile(r"\s*([A-Za-z_][A-Za-z0-9_]*)\s*=(?!=)")


def parse_argument(text: str, *, objects: bool = False) -> tuple[str | None, object]:
    """One argument of a call: ``(None, value)`` for a positional literal, or
    ``(name, value)`` for a keyword argument written ``name=literal`` (``x=1``).

    A literal never starts with a name followed by ``=``, so the two cannot be confused.
    """
    match = _KEYWORD.match(text)
    if match is None:
        return None, parse_literal(text, objects=objects)
    return match.group(1), parse_literal(text[match.end():], objects=objects)


def split_arguments(texts: Sequence[str], *, objects: bool = False,
                    ) -> tuple[list[object], dict[str, object]]:
    """The positional values and the keyword arguments of a call, in the order given.

    A positional argument after a keyword one, or a keyword given twice, is refused
    (``ValueError``), as Python refuses it in a call. ``objects``: see ``parse_literal``.
    """
    args: list[object] = []
    kwargs: dict[str, object] = {}
    for text in texts:
        name, value = parse_argument(text, objects=objects)
        if name is None:
            if kwargs:
                raise ValueError(f"a positional argument after a keyword one: {text[:80]}")
            args.append(value)
        elif name in kwargs:
            raise ValueError(f"the keyword argument {name!r} is given twice")
        else:
            kwargs[name] = value
    return args, kwargs


def parse_receiver(text: str, *, objects: bool = False,
                   ) -> tuple[list[object], dict[str, object], bool] | None:
    """The receiver part of a method call, or None if ``text`` is an ordinary argument.

    A call on an instance starts with ``@Class(3, 'a')``: the object is built by calling
    the entry's class with these literal arguments (keywords allowed), and the method is
    called on it; ``@Class(3, 'a').prop`` reads the property ``prop`` instead. The class
    named in the text is for the reader: the child calls the entry's own class.
    Returns (positional, keyword, whether the member is read rather than called).
    """
    if not text.startswith("@"):
        return None
    node = ast.parse(text[1:].strip(), mode="eval").body
    read = isinstance(node, ast.Attribute)
    if read:
        assert isinstance(node, ast.Attribute)
        node = node.value
    if not isinstance(node, ast.Call) or any(k.arg is None for k in node.keywords):
        raise ValueError(f"not a constructor call: {text[:80]}")
    args = [_literal(a, objects) for a in node.args]
    kwargs = {str(k.arg): _literal(k.value, objects) for k in node.keywords}
    return args, kwargs, read


# Builtin classes a call's text may name as values (``parse_literal(objects=True)``).
_CLASS_NAMES = frozenset({"int", "float", "complex", "str", "bytes", "bytearray", "bool",
                          "list", "tuple", "dict", "set", "frozenset", "object", "type",
                          "range"})
# Calls that mean a builtin value in a call's text, never a ``Build``.
_VALUE_CALLS = frozenset({"float", "set", "frozenset", "range", "iter"})


class Build:
    """An object a call's text asks the child to build: ``Point(1, y=2)`` calls the class
    that the module under review binds to ``Point`` (each version its own; see
    ``materialize``), with arguments that may be ``Build`` objects themselves."""

    def __init__(self, name: str, args: list[object], kwargs: dict[str, object]) -> None:
        self.name, self.args, self.kwargs = name, args, kwargs

    def __repr__(self) -> str:
        parts = [repr(a) for a in self.args] + [f"{k}={v!r}" for k, v in self.kwargs.items()]
        return f"{self.name}({', '.join(parts)})"


def _literal(node: ast.expr, objects: bool = False) -> object:
    if isinstance(node, ast.Constant) and node.value is not Ellipsis:
        return node.value
    if objects and isinstance(node, ast.Name) and node.id in _CLASS_NAMES:
        return getattr(builtins, node.id)
    if objects and isinstance(node, ast.Call):
        stream = _stream(node)
        if stream is not None:
            return stream
        library = _library_call(node)
        if library is not _NOT_LIBRARY:
            return library
    if objects and isinstance(node, ast.Attribute | ast.BinOp):
        constant = _library_constant(node)
        if constant is not _NOT_LIBRARY:
            return constant
    if objects and isinstance(node, ast.Lambda):
        return _constant_function(node)
    if (objects and isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
            and node.func.id not in _VALUE_CALLS and not any(k.arg is None for k in node.keywords)):
        # A bare name only: the class the module binds to it (never `os.system(...)`).
        return Build(node.func.id, [_literal(a, objects) for a in node.args],
                     {str(k.arg): _literal(k.value, objects) for k in node.keywords})
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        operand = _literal(node.operand)
        if isinstance(operand, int | float | complex) and not isinstance(operand, bool):
            return -operand if isinstance(node.op, ast.USub) else +operand
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add | ast.Sub):
        left, right = _literal(node.left), _literal(node.right)
        if (
            isinstance(left, int | float)
            and not isinstance(left, bool)
            and isinstance(right, complex)
        ):
            return left + right if isinstance(node.op, ast.Add) else left - right
    if isinstance(node, ast.List):
        return [_literal(e, objects) for e in node.elts]
    if isinstance(node, ast.Tuple):
        return tuple(_literal(e, objects) for e in node.elts)
    if isinstance(node, ast.Set):
        # Members are hashed: plain literals, and values of the standard library.
        return {_key(e, objects) for e in node.elts}
    if isinstance(node, ast.Dict) and all(k is not None for k in node.keys):
        return {
            _key(k, objects): _literal(v, objects)
            for k, v in zip(node.keys, node.values, strict=True)
            if k is not None
        }
    if isinstance(node, ast.Name) and node.id in ("nan", "inf"):
        return float(node.id)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and not node.keywords:
        name, args = node.func.id, node.args
        if name == "float" and len(args) == 1:
            arg = _literal(args[0])
            if isinstance(arg, str | int | float) and not isinstance(arg, bool):
                return float(arg)
        if name in ("set", "frozenset") and not args:
            return set() if name == "set" else frozenset()
        if name in ("set", "frozenset") and len(args) == 1:
            items = _literal(args[0])
            if isinstance(items, list | tuple | set | frozenset):
                return set(items) if name == "set" else frozenset(items)
        if name == "range" and 1 <= len(args) <= 3:
            bounds = [_literal(a) for a in args]
            ints = [b for b in bounds if isinstance(b, int) and not isinstance(b, bool)]
            if len(ints) == len(bounds):
                return range(*ints)
        if name == "iter" and len(args) == 1:
            items = _literal(args[0])
            if isinstance(items, list | tuple | str | bytes | set | frozenset | dict | range):
                return iter(items)
    raise ValueError(f"not a supported literal: {ast.unparse(node)[:80]}")


def _key(node: ast.expr, objects: bool) -> object:
    """A set member or dict key: a plain literal, or (with ``objects``) a value of the
    standard library (``_LIBRARY_CALLS``), never an object still to build or a stream."""
    if not (objects and isinstance(node, ast.Call | ast.Attribute)):
        return _literal(node)
    value = _literal(node, objects)
    if isinstance(value, Build | io.IOBase) or callable(value):
        raise ValueError(f"not a supported literal: {ast.unparse(node)[:80]}")
    return value


# Values of the standard library a call's text may write, by the dotted name of what makes
# them (``datetime.date(2024, 1, 31)``, ``decimal.Decimal('1.5')``, ``pathlib.PosixPath('a')``,
# ``builtins.ValueError('no')``): constructors of plain values, which run no code of the
# project, with literal arguments. Their module is imported when a text first names it.
_LIBRARY_CALLS: dict[str, tuple[str, str]] = {
    **{f"datetime.{n}": ("datetime", n)
       for n in ("date", "datetime", "time", "timedelta", "timezone")},
    "decimal.Decimal": ("decimal", "Decimal"),
    "fractions.Fraction": ("fractions", "Fraction"),
    **{f"pathlib.{n}": ("pathlib", n)
       for n in ("PurePosixPath", "PureWindowsPath", "PosixPath")},
    "uuid.UUID": ("uuid", "UUID"),
    "re.compile": ("re", "compile"),
    **{f"ipaddress.{n}": ("ipaddress", n)
       for n in ("IPv4Address", "IPv6Address", "IPv4Network", "IPv6Network", "IPv4Interface",
                 "IPv6Interface")},
    **{f"collections.{n}": ("collections", n)
       for n in ("deque", "OrderedDict", "Counter", "ChainMap")},
}
# Names of constants such a text may use: ``datetime.timezone.utc``, ``re.IGNORECASE``.
_LIBRARY_CONSTANTS: dict[str, tuple[str, str]] = {
    "datetime.timezone.utc": ("datetime", "timezone.utc"),
    **{f"re.{n}": ("re", n)
       for n in ("ASCII", "IGNORECASE", "LOCALE", "MULTILINE", "DOTALL", "VERBOSE")},
}
_NOT_LIBRARY = object()


def _dotted(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value)
        return f"{base}.{node.attr}" if base else None
    return None


def _library_object(module: str, path: str) -> object:
    value: object = importlib.import_module(module)
    for part in path.split("."):
        value = getattr(value, part)
    return value


def _builtin_exception(name: str) -> type | None:
    """The builtin exception class ``builtins.<name>`` names, if it is one."""
    found = getattr(builtins, name, None)
    return found if isinstance(found, type) and issubclass(found, BaseException) else None


def _library_call(node: ast.Call) -> object:
    """The value ``node`` makes, if it calls one of ``_LIBRARY_CALLS`` or a builtin
    exception written ``builtins.ValueError('no')``; ``_NOT_LIBRARY`` otherwise."""
    name = _dotted(node.func)
    if name is None:
        return _NOT_LIBRARY
    maker: object
    if name in _LIBRARY_CALLS:
        maker = _library_object(*_LIBRARY_CALLS[name])
    elif name.startswith("builtins.") and _builtin_exception(name[len("builtins."):]):
        maker = _builtin_exception(name[len("builtins."):])
    else:
        return _NOT_LIBRARY
    if any(k.arg is None for k in node.keywords):
        raise ValueError(f"not a supported literal: {ast.unparse(node)[:80]}")
    args = [_literal(a, True) for a in node.args]
    kwargs = {str(k.arg): _literal(k.value, True) for k in node.keywords}
    if has_builds(args) or has_builds(list(kwargs.values())):
        raise ValueError(f"not a supported literal: {ast.unparse(node)[:80]}")
    assert callable(maker)
    try:
        return maker(*args, **kwargs)
    except Exception as exc:
        raise ValueError(f"not a supported literal: {ast.unparse(node)[:80]} "
                         f"({type(exc).__name__})") from None


def _library_constant(node: ast.expr) -> object:
    """``datetime.timezone.utc``, ``re.IGNORECASE`` or flags joined by ``|``; else
    ``_NOT_LIBRARY``."""
    if isinstance(node, ast.BinOp):
        if not isinstance(node.op, ast.BitOr):
            return _NOT_LIBRARY
        left, right = _library_constant(node.left), _library_constant(node.right)
        if isinstance(left, re.RegexFlag) and isinstance(right, re.RegexFlag):
            return left | right
        return _NOT_LIBRARY
    name = _dotted(node)
    if name is None or name not in _LIBRARY_CONSTANTS:
        return _NOT_LIBRARY
    return _library_object(*_LIBRARY_CONSTANTS[name])


def _constant_function(node: ast.Lambda) -> Callable[..., object]:
    """``lambda *args, **kwargs: <literal>``: a function that takes any arguments and
    returns a new copy of the literal at each call, as the lambda would build it anew."""
    a = node.args
    if a.posonlyargs or a.args or a.kwonlyargs or a.vararg is None or a.kwarg is None:
        raise ValueError(f"not a supported literal: {ast.unparse(node)[:80]}")
    value = _literal(node.body, True)
    if has_builds(value):
        raise ValueError(f"not a supported literal: {ast.unparse(node)[:80]}")

    def constant(*args: object, **kwargs: object) -> object:
        import copy

        return copy.deepcopy(value)

    constant.__name__ = constant.__qualname__ = "<lambda>"  # as the text's lambda is named
    return constant


def library_text(value: object, lit: Callable[[object], str]) -> str | None:
    """How a call's text writes ``value``, a value of the standard library that
    ``parse_literal(objects=True)`` reads back (``_LIBRARY_CALLS``); None for any other.
    ``lit`` writes the values it holds. The caller checks that the text reads back as an
    equal value."""
    tp = type(value)
    module = getattr(tp, "__module__", "")
    if isinstance(value, BaseException):
        plain = (module == "builtins" and _builtin_exception(tp.__name__) is tp
                 and not vars(value) and value.__cause__ is None and value.__context__ is None
                 and value.__traceback__ is None)
        if not plain:
            return None
        return f"builtins.{tp.__name__}({', '.join(lit(a) for a in value.args)})"
    if module == "re" and isinstance(value, re.Pattern):
        flags = value.flags & ~(re.UNICODE if isinstance(value.pattern, str) else 0)
        shown = f", {re.RegexFlag(flags)!r}".replace("re.RegexFlag", "re") if flags else ""
        return f"re.compile({lit(value.pattern)}{shown})"
    name = f"{module}.{tp.__qualname__}"
    if name not in _LIBRARY_CALLS:
        return None
    if module == "datetime":
        return repr(value)  # datetime.datetime(2024, 1, 31, 0, 0, tzinfo=datetime.timezone.utc)
    if module in ("decimal", "pathlib", "uuid", "ipaddress"):
        return f"{name}({str(value)!r})"
    if name == "fractions.Fraction":
        return f"{name}({value.numerator}, {value.denominator})"  # type: ignore[attr-defined]
    if name == "collections.deque":
        assert isinstance(value, collections.deque)
        limit = "" if value.maxlen is None else f", maxlen={value.maxlen}"
        return f"{name}({lit(list(value))}{limit})"
    if name == "collections.OrderedDict":
        assert isinstance(value, dict)
        return f"{name}({lit(list(value.items()))})"
    if name == "collections.Counter":
        assert isinstance(value, dict)
        return f"{name}({lit(dict(value))})"
    if name == "collections.ChainMap":
        assert isinstance(value, collections.ChainMap)
        return f"{name}({', '.join(lit(m) for m in value.maps)})"
    return None


# The streams a call's text may make, by the name it is written with, and what they hold.
_STREAMS: dict[str, tuple[type, type]] = {"io.StringIO": (io.StringIO, str),
                                          "io.BytesIO": (io.BytesIO, bytes)}


def _stream(node: ast.Call) -> io.StringIO | io.BytesIO | None:
    """``io.StringIO('ab')`` / ``io.BytesIO(b'ab')`` (or empty) as a fresh stream, at
    position 0; None if ``node`` is no such call (a stream with other contents is refused)."""
    func = node.func
    if not (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)):
        return None
    kind = _STREAMS.get(f"{func.value.id}.{func.attr}")
    if kind is None or node.keywords or len(node.args) > 1:
        return None
    content = _literal(node.args[0]) if node.args else kind[1]()
    if type(content) is not kind[1]:
        raise ValueError(f"not a supported literal: {ast.unparse(node)[:80]}")
    return kind[0](content)  # type: ignore[no-any-return]


def stream_text(value: io.StringIO | io.BytesIO) -> str:
    """How a stream is written in a call's text (``parse_literal`` reads it back): its
    contents, from position 0; a closed stream has none to show."""
    name = "io.StringIO" if isinstance(value, io.StringIO) else "io.BytesIO"
    if value.closed:
        return f"<closed {name}>"
    shown = f"{name}({value.getvalue()!r})"
    return shown if value.tell() == 0 else f"<{shown} at position {value.tell()}>"


_MAX_BUILD_DEPTH = 20


def has_builds(value: object, depth: int = 0) -> bool:
    """Whether ``value`` holds a ``Build`` (in a list, tuple or dict value, or a Build)."""
    if isinstance(value, Build) or depth > _MAX_BUILD_DEPTH:
        return True
    if isinstance(value, list | tuple):
        return any(has_builds(v, depth + 1) for v in value)
    if isinstance(value, dict):
        return any(has_builds(v, depth + 1) for v in value.values())
    return False


def materialize(module: object, value: object, depth: int = 0) -> object:
    """``value`` with each ``Build`` replaced by the object it asks for: the class that
    ``module`` binds to its name, called with its own arguments made the same way.

    Only the project's classes are built: the class must be defined in ``module``'s top
    package (a standalone module: in itself). Anything else raises ``ValueError``, and
    the call is no input. Runs untrusted code (the constructors): call it under the
    per-call timer.
    """
    if depth > _MAX_BUILD_DEPTH:
        raise ValueError("objects nested too deeply")
    if isinstance(value, Build):
        cls = getattr(module, value.name, None)
        top = str(getattr(module, "__name__", "")).split(".")[0]
        where = str(getattr(cls, "__module__", ""))
        ours = bool(top) and (where == top or where.startswith(top + "."))
        if not isinstance(cls, type) or not ours:
            raise ValueError(f"{value.name} is not a class of the project")
        note_classes(cls)
        args = [materialize(module, a, depth + 1) for a in value.args]
        kwargs = {k: materialize(module, v, depth + 1) for k, v in value.kwargs.items()}
        return cls(*args, **kwargs)
    if isinstance(value, list):
        return [materialize(module, v, depth + 1) for v in value]
    if isinstance(value, tuple):
        return tuple(materialize(module, v, depth + 1) for v in value)
    if isinstance(value, dict):
        return {k: materialize(module, v, depth + 1) for k, v in value.items()}
    return value


# --------------------------------------------------------------------------- encoding


def canonical(value: object) -> object:
    """A JSON-compatible encoding that is equal for two values iff they behave the same.

    Types matter (``1``, ``1.0`` and ``True`` differ); floats compare with ``==`` except
    that NaN equals NaN; dicts and sets are put in a canonical order; other objects are
    encoded by type name and their attributes (or their ``repr`` without addresses:
    ``_state_shown``). An address is no part of a string either (``repr(obj)`` returned).
    Encodings longer than ``MAX_ENCODING_CHARS`` become a SHA-256 digest.
    """
    encoded = _encode(value, 0, set())
    text = _dumps(encoded)
    if len(text) > MAX_ENCODING_CHARS:
        return ["sha256", hashlib.sha256(text.encode()).hexdigest(), len(text)]
    return encoded


MAX_YIELDS = 1000


class Generated:
    """What a returned generator or iterator yielded, drained up to ``MAX_YIELDS`` items,
    and the type of the exception that ended it early, if one did."""

    def __init__(self, kind: str, items: list[object], complete: bool,
                 raised: str | None = None) -> None:
        self.kind = kind
        self.items = items
        self.complete = complete
        self.raised = raised

    def __repr__(self) -> str:
        more = "" if self.complete else ", ..."
        end = f" then raising {self.raised}" if self.raised is not None else ""
        return f"<{self.kind} yielding {self.items!r}{more}{end}>"


class Entered:
    """What a returned ``@contextmanager`` object did when a ``with`` statement with an
    empty body used it: ``entered`` is ``("return", value)`` or ``("raise", type name)``
    for ``__enter__``; ``exited`` the same for ``__exit__(None, None, None)``, or None
    when ``__enter__`` raised (a ``with`` statement then does not call ``__exit__``)."""

    def __init__(self, entered: tuple[str, object], exited: tuple[str, object] | None) -> None:
        self.entered = entered
        self.exited = exited

    def __repr__(self) -> str:
        def shown(outcome: tuple[str, object]) -> str:
            kind, value = outcome
            return f"raises {value}" if kind == "raise" else f"returns {_shown(value)}"

        text = f"<context manager: entering it {shown(self.entered)}"
        if self.exited is not None:
            text += f", leaving it {shown(self.exited)}"
        return text + ">"


class Awaited:
    """What awaiting a returned coroutine gave, run to its end on a fresh event loop
    (``asyncio.run``): ``outcome`` is ``("return", value)`` (the value drained like a
    returned iterator) or ``("raise", type name)``; ``text`` is the exception, for people.
    A coroutine is not its result: a version that returns one differs from a version that
    returns what awaiting it gives."""

    def __init__(self, outcome: tuple[str, object], text: str = "") -> None:
        self.outcome = outcome
        self.text = text

    def __repr__(self) -> str:
        kind, value = self.outcome
        said = f"raises {self.text or value}" if kind == "raise" else f"returns {_shown(value)}"
        return f"<coroutine: awaiting it {said}>"


def _shown(value: object, depth: int = 0) -> str:
    """``repr``, but a stream (alone or in tuples and lists) by its contents."""
    if type(value) in (io.StringIO, io.BytesIO):
        return stream_text(value)  # type: ignore[arg-type]
    if type(value) in (tuple, list) and depth < 20:
        assert isinstance(value, tuple | list)
        inner = ", ".join(_shown(v, depth + 1) for v in value)
        if type(value) is list:
            return f"[{inner}]"
        return f"({inner}{',' if len(value) == 1 else ''})"
    return repr(value)


def drain(value: object, enter: bool = True) -> object:
    """Run a returned generator or iterator, so what it yields is part of the behaviour;
    and use a returned ``@contextmanager`` object, so what it does is.

    Called inside the per-call timer: a hang while iterating or entering is the call's. An
    exception while iterating is kept apart from one the call raised: a function that
    returns an iterator which raises when it is consumed (``iter(partial(take, -1, it),
    [])``) does not behave as one that raises at once (a caller may never consume it).
    Only ``Exception`` is caught: timers and exits stay the call's.

    A stream (``io.IOBase``) is an iterator of its lines, but a caller that gets one back
    reads it as it pleases: it is compared by its state (``canonical``), not read here.

    An object of exactly ``contextlib._GeneratorContextManager`` (what a
    ``@contextmanager`` function returns) is entered and left at once, as by ``with f():
    pass``: ``Entered`` holds what ``__enter__`` returned (drained, not entered again)
    or raised, and what ``__exit__(None, None, None)`` returned or raised. Other context
    managers are left unused (their ``__enter__`` may be any code). Code a caller runs in
    the ``with`` body is not modelled: a version that writes before its ``yield`` and one
    that writes after it look alike here.

    A returned coroutine (what calling an ``async def`` function gives) is awaited to its
    end, as ``asyncio.run`` runs it, on a fresh event loop: ``Awaited`` holds what it
    returned or raised. Tasks it leaves running are cancelled when it ends, as
    ``asyncio.run`` does; when its code runs relative to the caller's is not compared.
    ``enter`` is False for what using the call's result gave (it is drained only).
    """
    if isinstance(value, str | bytes | bytearray | list | tuple | dict | set | frozenset):
        return value
    if enter and type(value) is contextlib._GeneratorContextManager:
        return _entered(value)
    if enter and type(value) is CoroutineType:
        return _awaited(value)
    if isinstance(value, io.IOBase):
        return value
    if isinstance(value, collections.abc.Iterator):
        items: list[object] = []
        raised = None
        try:
            for item in itertools.islice(value, MAX_YIELDS + 1):
                items.append(item)
        except Exception as exc:
            raised = _type_name(type(exc))
        complete = raised is not None or len(items) <= MAX_YIELDS
        return Generated(type(value).__name__, items[:MAX_YIELDS], complete, raised)
    return value


def _awaited(coroutine: CoroutineType[object, object, object]) -> Awaited:
    import asyncio  # only where a call returned a coroutine: most children never need it

    try:
        result = asyncio.run(coroutine)
    except Exception as exc:
        return Awaited(("raise", _type_name(type(exc))), _exception_text(exc))
    return Awaited(("return", drain(result, enter=False)))


def _entered(manager: contextlib._GeneratorContextManager[object]) -> Entered:
    try:
        inside = drain(manager.__enter__(), enter=False)
    except Exception as exc:
        return Entered(("raise", _type_name(type(exc))), None)
    try:
        left: tuple[str, object] = ("return", manager.__exit__(None, None, None))
    except Exception as exc:
        left = ("raise", _type_name(type(exc)))
    return Entered(("return", inside), left)


def _dumps(encoded: object) -> str:
    return json.dumps(encoded, separators=(",", ":"), allow_nan=False)


def _float(x: float) -> object:
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return x + 0.0  # -0.0 + 0.0 == 0.0: the two zeros compare equal in Python


def _type_name(tp: type) -> str:
    if tp.__module__ == "builtins":
        return tp.__qualname__
    return f"{tp.__module__}.{tp.__qualname__}"


def _encode(value: object, depth: int, active: set[int]) -> object:
    if depth > _MAX_DEPTH:
        return ["too-deep"]
    tp = type(value)
    if value is None:
        return ["None"]
    if tp is bool:
        return ["bool", value]
    if tp is int:
        assert isinstance(value, int)
        return ["int", value if -(2**53) < value < 2**53 else hex(value)]
    if tp is float:
        assert isinstance(value, float)
        return ["float", _float(value)]
    if tp is complex:
        assert isinstance(value, complex)
        return ["complex", _float(value.real), _float(value.imag)]
    if tp is str:
        assert isinstance(value, str)
        return ["str", _ADDRESS.sub(_MASKED, value)]
    if tp is bytes or tp is bytearray:
        assert isinstance(value, bytes | bytearray)
        return [tp.__name__, value.hex()]
    if tp is Generated:
        assert isinstance(value, Generated)
        if value.raised is not None:
            # As the model has it (``pygen``): the items before the exception do not count.
            return ["generator", "raised", value.raised]
        items = [_encode(v, depth + 1, active) for v in value.items]
        return ["generator", items, value.complete]
    if tp is Awaited:
        assert isinstance(value, Awaited)
        kind, outcome = value.outcome
        return ["coroutine", kind,
                _encode(outcome, depth + 1, active) if kind == "return" else outcome]
    if tp is Entered:
        assert isinstance(value, Entered)
        steps = [value.entered] if value.exited is None else [value.entered, value.exited]
        return ["entered", *([kind, _encode(v, depth + 1, active) if kind == "return" else v]
                             for kind, v in steps)]
    if tp is io.StringIO or tp is io.BytesIO:
        assert isinstance(value, io.StringIO | io.BytesIO)
        # Its state is what a caller can read back: the contents and the position (a
        # closed one raises on both).
        if value.closed:
            return [tp.__name__, "closed"]
        data = value.getvalue()
        return [tp.__name__, data if isinstance(data, str) else data.hex(), value.tell()]
    if tp is Instance:
        assert isinstance(value, Instance)
        return _encode_instance(value.obj, value.skip, value.properties, depth, active)
    if tp is Build:  # an object not built yet, by what it asks for
        assert isinstance(value, Build)
        return ["build", value.name, _encode(value.args, depth + 1, active),
                _encode(value.kwargs, depth + 1, active)]
    if tp in (list, tuple, dict, set, frozenset):
        if id(value) in active:
            return ["cycle"]
        active.add(id(value))
        try:
            return _encode_container(value, depth, active)
        finally:
            active.discard(id(value))
    return _encode_object(value, depth, active)


def _encode_container(value: object, depth: int, active: set[int]) -> object:
    if isinstance(value, list | tuple):
        return [type(value).__name__, [_encode(v, depth + 1, active) for v in value]]
    if isinstance(value, dict):
        items = [
            [_encode(k, depth + 1, active), _encode(v, depth + 1, active)]
            for k, v in value.items()
        ]
        items.sort(key=lambda kv: _dumps(kv[0]))
        return ["dict", items]
    assert isinstance(value, set | frozenset)
    members = [_encode(v, depth + 1, active) for v in value]
    members.sort(key=_dumps)
    return [type(value).__name__, members]


def _encode_object(value: object, depth: int, active: set[int]) -> object:
    name = _type_name(type(value))
    base = _builtin_base(value)
    if base is not None:  # a subclass: enum members, namedtuples, defaultdicts
        return ["object", name, _encode(base, depth + 1, active)]
    if id(value) in active:
        return ["cycle"]
    text = "" if type(value).__repr__ is object.__repr__ else _safe_repr(value, 1000)
    state = _state_shown(value, text)
    if state is not None:
        active.add(id(value))
        try:
            return ["object", name, _encode(state, depth + 1, active)]
        finally:
            active.discard(id(value))
    return ["object", name, text or _safe_repr(value, 1000)]


def _state_shown(value: object, text: str) -> dict[str, object] | None:
    """The state an object is compared by, or None to compare it by its ``repr`` (``text``,
    without addresses; "" for the default one).

    An object whose ``repr`` says only where it is, the default ``<Tag object at 0x...>``
    or a ``__repr__`` written in Python that shows the address, is compared by what it
    holds itself: its ``__dict__`` and its slots (unset ones left out), read without
    running its code. Dunder attributes are bookkeeping, not state: a context manager
    made by ``@contextmanager`` copies its function's docstring into ``__doc__``. An object
    with neither (a type written in C) keeps its state where only its ``repr`` shows it.
    """
    shown_by = type(value).__repr__
    if not (shown_by is object.__repr__
            or (isinstance(shown_by, FunctionType) and _MASKED in text)):
        return None
    try:
        attrs = object.__getattribute__(value, "__dict__")
    except AttributeError:
        attrs = None
    try:
        slotted = any("__slots__" in vars(k) for k in type(value).__mro__ if k is not object)
        if not isinstance(attrs, dict) and not slotted:
            return None
        state = instance_state(value, properties=False)
    except Exception:  # an untrusted class: a `__dict__` or slot that does not read
        return None
    return {k: v for k, v in state.items() if v is not _UNSET}


class Instance:
    """An object whose state, not its ``repr`` or ``__eq__``, is its behaviour: ``self``
    after a method call, or the object a constructor built."""

    def __init__(self, obj: object, skip: str = "", properties: bool = True) -> None:
        self.obj = obj
        self.skip = skip  # a property left out (the one under review)
        # Whether to read its properties: not before a call, which a getter that caches
        # something would then see differently from a caller's.
        self.properties = properties

    def __repr__(self) -> str:
        try:
            state = instance_state(self.obj, self.skip, self.properties)
        except Exception as exc:  # an untrusted attribute's __repr__, say
            return f"<{type(self.obj).__name__}: state unreadable ({type(exc).__name__})>"
        inner = ", ".join(f"{k}={_safe_repr(v, 60)}" for k, v in state.items())
        return f"{type(self.obj).__name__}({inner})"


# Values of these types held by a class are data, part of the state a method may change.
_DATA_TYPES = (bool, int, float, complex, str, bytes, bytearray, type(None), list, tuple,
               dict, set, frozenset)
_UNSET = object()


def instance_state(obj: object, skip: str = "", properties: bool = True) -> dict[str, object]:
    """The attributes ``obj`` holds itself: its ``__dict__`` and its slots, read without
    running its ``__getattribute__``, properties or other descriptors."""
    state: dict[str, object] = {}
    seen: set[str] = {skip}
    try:
        attrs = object.__getattribute__(obj, "__dict__")
    except AttributeError:
        attrs = None
    if isinstance(attrs, dict):
        state.update((k, v) for k, v in attrs.items()
                     if not (isinstance(k, str) and k.startswith("__") and k.endswith("__")))
    for klass in type(obj).__mro__:
        slots = klass.__dict__.get("__slots__", ())
        for slot in (slots,) if isinstance(slots, str) else slots:
            if not isinstance(slot, str) or slot in ("__dict__", "__weakref__"):
                continue
            name = slot
            if slot.startswith("__") and not slot.endswith("__"):
                name = f"_{klass.__name__.lstrip('_')}{slot}"
            member = klass.__dict__.get(name)
            if member is None or not hasattr(member, "__get__"):
                continue
            try:
                state[name] = member.__get__(obj, type(obj))
            except AttributeError:
                state[name] = _UNSET
    # What reading a property gives is part of what callers see: an attribute turned into a
    # property that computes the same value reads the same.
    for klass in type(obj).__mro__ if properties else ():
        if klass.__module__ == "builtins":
            continue
        for name, member in list(vars(klass).items()):
            if not isinstance(member, property) or name in seen:
                continue
            seen.add(name)
            try:
                state[name] = member.__get__(obj, type(obj))
            except Exception as exc:  # an untrusted getter
                state[name] = _Raised(_type_name(type(exc)))
    return state


class _Raised:
    """A property whose getter raised, by the exception's type."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"<raises {self.name}>"


def _encode_instance(obj: object, skip: str, properties: bool, depth: int,
                     active: set[int]) -> object:
    if id(obj) in active:
        return ["cycle"]
    active.add(id(obj))
    try:
        state = [[k, ["unset"] if v is _UNSET else ["raises", v.name] if isinstance(v, _Raised)
                  else _encode(v, depth + 1, active)]
                 for k, v in instance_state(obj, skip, properties).items()]
        state.sort(key=lambda kv: str(kv[0]))
        # Data the classes hold (a list shared by all instances): a method may change it.
        shared = []
        for klass in type(obj).__mro__:
            if klass.__module__ == "builtins":
                continue
            data = _changed_data(klass, _class_data(klass, depth, active))
            if data:
                shared.append([klass.__qualname__, sorted(data, key=lambda kv: str(kv[0]))])
        return ["self", _type_name(type(obj)), state, shared]
    finally:
        active.discard(id(obj))


# The data of each class as it was before the first object of it was built in this child
# (``note_classes``): the data an object's encoding shows is what changed since. Its value
# at import is the module's, not the object's, and may differ from process to process
# (`hash(None)` follows an address on Python 3.11) while the code behaves the same.
_CLASS_DATA: dict[type, list[list[object]]] = {}
_REMOVED = ["removed"]


def _class_data(klass: type, depth: int = 0, active: set[int] | None = None) -> list[list[object]]:
    return [[k, _encode(v, depth + 1, active if active is not None else set())]
            for k, v in list(vars(klass).items())
            if isinstance(v, _DATA_TYPES) and not (k.startswith("__") and k.endswith("__"))]


def note_classes(cls: object) -> None:
    """Keep the data of ``cls`` and its bases as it is now, before an object of it is
    built (untrusted values are encoded: call it under the per-call timer)."""
    for klass in getattr(cls, "__mro__", ()):
        if isinstance(klass, type) and klass.__module__ != "builtins" \
                and klass not in _CLASS_DATA:
            _CLASS_DATA[klass] = _class_data(klass)


def _changed_data(klass: type, data: list[list[object]]) -> list[list[object]]:
    """``data`` of ``klass`` that differs from what it was before its first object was
    built, with what was removed; all of it for a class not noted."""
    first = _CLASS_DATA.get(klass)
    if first is None:
        return data
    before = {str(k): v for k, v in first}
    now = {str(k): v for k, v in data}
    changed: list[list[object]] = [[k, v] for k, v in data if before.get(str(k)) != v]
    changed += [[k, _REMOVED] for k in before if k not in now]
    return changed


def _builtin_base(value: object) -> object | None:
    """``value`` converted to the builtin type it subclasses, if any."""
    if isinstance(value, bool | int):
        return bool(value) if isinstance(value, bool) else int(value)
    if isinstance(value, float):
        return float(value)
    if isinstance(value, complex):
        return complex(value)
    if isinstance(value, str):
        return str(value)
    if isinstance(value, bytes):
        return bytes(value)
    if isinstance(value, list | tuple):
        return list(value) if isinstance(value, list) else tuple(value)
    if isinstance(value, dict):
        return dict(value)
    if isinstance(value, set | frozenset):
        return set(value) if isinstance(value, set) else frozenset(value)
    return None


def _safe_repr(value: object, limit: int = TEXT_CHARS) -> str:
    try:
        text = repr(value)
    except ValueError:
        if isinstance(value, int):  # too many digits for str() since Python 3.11
            return f"<int with {value.bit_length()} bits>"
        text = f"<{type(value).__name__}: repr failed>"
    except Exception as exc:  # an untrusted __repr__ may raise anything
        text = f"<{type(value).__name__}: repr raised {type(exc).__name__}>"
    text = _ADDRESS.sub(_MASKED, text)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _value_text(value: object) -> str:
    """What a person reads of a returned value: its ``repr`` without addresses, or for an
    object compared by its state (``_state_shown``), that state: ``<Tag object: v=6>``."""
    text = _safe_repr(value)
    # (What the harness made of the result, a drained generator say, shows itself.)
    if _MASKED not in text or type(value).__module__ == __name__ or _builtin_base(
            value) is not None:
        return text
    try:
        state = _state_shown(value, text)
    except Exception:  # an untrusted class
        return text
    if state is None:
        return text
    inner = ", ".join(f"{k}={_safe_repr(v, 60)}" for k, v in state.items())
    shown = f"<{type(value).__qualname__} object{': ' + inner if inner else ''}>"
    return shown if len(shown) <= TEXT_CHARS else shown[: TEXT_CHARS - 4] + "...>"


def _exception_text(exc: BaseException) -> str:
    try:
        message = _ADDRESS.sub(_MASKED, str(exc))
    except Exception as err:  # an untrusted __str__
        message = f"<str raised {type(err).__name__}>"
    text = f"{type(exc).__name__}: {message}" if message else type(exc).__name__
    return text if len(text) <= TEXT_CHARS else text[: TEXT_CHARS - 3] + "..."


# --------------------------------------------------------------------------- isolation


def isolate(cfg: dict[str, Any]) -> dict[str, str]:
    """Set the resource limits and, when bubblewrap ran as root, take the fresh uid.

    The namespaces, the file system, the empty environment, no-new-privileges and the
    seccomp filter are bubblewrap's (``veribot.checks.sandbox._bwrap``); this is the
    last step before untrusted code, done by the child because bwrap cannot change the
    uid without a user namespace.
    """
    workdir = os.path.realpath(cfg["workdir"])
    uid = cfg.get("uid")
    limits = cfg["limits"]
    mb = 1024 * 1024
    cpu = int(limits["cpu_s"])
    nproc = 1 + int(limits["processes"])
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    resource.setrlimit(resource.RLIMIT_AS, (limits["memory_mb"] * mb,) * 2)
    resource.setrlimit(resource.RLIMIT_FSIZE, (limits["file_size_mb"] * mb,) * 2)
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    resource.setrlimit(resource.RLIMIT_NPROC, (nproc, nproc))
    resource.setrlimit(resource.RLIMIT_NOFILE, (MAX_OPEN_FILES, MAX_OPEN_FILES))
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # an oversized write raises OSError(EFBIG)
    if uid is not None:
        os.chown(workdir, uid, uid)  # the tmpfs bwrap made for the job
        os.setgroups([])
        os.setresgid(uid, uid, uid)
        os.setresuid(uid, uid, uid)  # leaving uid 0 clears every capability
        if os.geteuid() == 0 or os.getegid() == 0:
            raise OSError(errno.EPERM, "the child is still root")
    os.chdir(workdir)
    return {"user": f"uid {os.getuid()}", "processes": f"RLIMIT_NPROC {nproc}"}


# The environment of the code under review, besides HOME, TMPDIR and PWD (its folder):
# what a login shell on a plain Linux machine has, and nothing of the host's.
PLAIN_ENVIRONMENT = {
    "PATH": "/usr/local/bin:/usr/bin:/bin",
    "LANG": "C.UTF-8",
    "TZ": "UTC",
    "USER": "sandbox",
    "LOGNAME": "sandbox",
    "SHELL": "/bin/sh",
}


# The message of every PermissionError the audit hook raises starts with this.
REFUSAL_PREFIX = "veribot sandbox: "
# What the sandbox refused during the current call (and during the import), in order.
_refusals: list[str] = []
_import_refusals: list[str] = []
_MAX_REFUSALS = 5


def refused(what: str) -> None:
    """Record that the sandbox, not the code, stopped an operation (see ``_observe``)."""
    if len(_refusals) < _MAX_REFUSALS and what not in _refusals:
        _refusals.append(what)
    if _Taint.importing:
        _Taint.note_stack()


# Modules whose state is no outcome of a refused operation: the child's own code and the
# import machinery (its state is the module cache).
_NOT_STATE = frozenset({"__main__", "importlib", "importlib._bootstrap",
                        "importlib._bootstrap_external", "importlib.util"})
# Names through which code reaches other modules' state without importing them.
_DYNAMIC = frozenset({"__import__", "importlib", "globals", "vars", "gc", "inspect",
                      "__globals__", "modules", "getmodule", "exec", "eval"})


class _Taint:
    """What a refusal during the import may have left in module state, and whether a
    call may observe it.

    The modules whose code was running when the sandbox refused an operation during the
    import of the module under review (versioneer asking ``git`` for a version, say) may
    hold state that rests on the refusal. A call is charged with the import's refusals
    (so a difference it shows is undecided) if it ran code of one of them, or the module
    under review or a project module whose code it ran holds one, imports from one, or
    reaches modules dynamically (``sys.modules``, ``importlib``, ``globals()``); or if
    the refusal cannot be pinned on a module, the rest of the import changed state the
    whole interpreter shares (the environment, ``sys.path``, the working directory,
    warnings filters, logging), another thread ran, or the call could not be followed
    to its end. Otherwise the refusal is no part of what the call did.
    """

    importing = False
    modules: ClassVar[set[str]] = set()
    everywhere = False
    called: ClassVar[set[str]] = set()
    unit = ""
    top = ""
    reaches: ClassVar[dict[str, bool]] = {}

    shared: object = None  # the interpreter-wide state at the first refusal

    @classmethod
    def note_stack(cls) -> None:
        if cls.shared is None:
            cls.shared = _shared_state()
        frame: FrameType | None = sys._getframe(2)
        pinned = False
        while frame is not None:
            name = frame.f_globals.get("__name__")
            if isinstance(name, str) and name not in _NOT_STATE:
                cls.modules.add(name)
                pinned = True
            frame = frame.f_back
        cls.everywhere = cls.everywhere or not pinned

    @classmethod
    def observed(cls) -> bool:
        """Whether the call just made may have observed state a refusal left."""
        names = {n for n in cls.called if isinstance(n, str) and n not in _NOT_STATE}
        names.add(cls.unit)
        if names & cls.modules:
            return True
        return any(cls._reaches(n) for n in names)

    @classmethod
    def _reaches(cls, name: str) -> bool:
        if name not in cls.reaches:
            module = sys.modules.get(name)
            holds = module is None or any(
                isinstance(v, type(sys)) and v.__name__ in cls.modules
                for v in list(vars(module).values()))
            ours = name == cls.top or name.startswith(cls.top + ".")
            cls.reaches[name] = holds or (ours and _source_reaches(module, cls.modules))
        return cls.reaches[name]


def _shared_state() -> object:
    """State every module shares, which import-time code may leave an outcome in."""
    warnings, logging = sys.modules.get("warnings"), sys.modules.get("logging")
    root = getattr(logging, "root", None)
    try:
        cwd = os.getcwd()
    except OSError:
        cwd = ""
    return (sorted(os.environ.items()), list(sys.path), cwd, sys.getrecursionlimit(),
            repr(getattr(warnings, "filters", None)),
            getattr(root, "level", None), len(getattr(root, "handlers", ()) or ()))


def _profile(frame: FrameType, event: str, arg: object) -> None:
    if event == "call":
        _Taint.called.add(frame.f_globals.get("__name__", ""))


def _source_reaches(module: object, tainted: set[str]) -> bool:
    """Whether a module's source imports from a ``tainted`` module, or names a way to
    reach other modules' state dynamically; True when it cannot be read."""
    path = getattr(module, "__file__", None)
    name = str(getattr(module, "__name__", ""))
    package = name if str(path).endswith("__init__.py") else name.rpartition(".")[0]
    try:
        with open(str(path), encoding="utf-8") as f:
            tree = ast.parse(f.read())
    except (OSError, ValueError, SyntaxError, RecursionError, MemoryError):
        return True
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                parts = alias.name.split(".")
                if any(".".join(parts[: i + 1]) in tainted for i in range(len(parts))):
                    return True
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join([*parent, *([base] if base else [])])
            if base in tainted or any(f"{base}.{a.name}" in tainted for a in node.names):
                return True
        elif (isinstance(node, ast.Name) and node.id in _DYNAMIC) or (
                isinstance(node, ast.Attribute) and node.attr in _DYNAMIC):
            return True
    return False


def _short(path: object) -> str:
    text = repr(os.fsdecode(path) if isinstance(path, bytes | os.PathLike) else path)
    return text if len(text) <= 80 else text[:77] + "..."


class _Threads:
    """How many threads the code under review started (their calls are not followed)."""

    started = 0


def _watch_threads() -> None:
    """Record a thread start that the sandbox's process limit refused (RLIMIT_NPROC).

    ``threading`` binds ``_thread.start_new_thread`` when it is first imported, so both
    places are wrapped; the code still sees the ``RuntimeError`` it would see.
    """
    import _thread

    original = _thread.start_new_thread

    def start_new_thread(*args: Any, **kwargs: Any) -> int:
        _Threads.started += 1
        try:
            return original(*args, **kwargs)
        except RuntimeError:
            refused("starting a thread (the sandbox's process limit)")
            raise

    _thread.start_new_thread = start_new_thread
    threading = sys.modules.get("threading")
    if threading is not None:
        threading._start_new_thread = start_new_thread  # type: ignore[attr-defined]


def install_audit_hook(workdir: str, processes_allowed: bool, ctypes_allowed: bool) -> None:
    """Refuse writes outside ``workdir``, network, new processes and (unless allowed) ctypes.

    Defence in depth only: code in the same interpreter can get around an audit hook.
    """
    root = os.path.realpath(workdir)

    def inside(path: object) -> bool:
        if isinstance(path, int):
            return True  # fd-based calls act on files whose opening was checked
        if isinstance(path, bytes):
            path = os.fsdecode(path)
        if isinstance(path, os.PathLike):
            path = os.fspath(path)
        if isinstance(path, bytes):
            path = os.fsdecode(path)
        if not isinstance(path, str):
            return False
        full = os.path.realpath(os.path.join(root, path))
        return full == root or full.startswith(root + os.sep)

    def refuse(what: str) -> None:
        refused(what)
        raise PermissionError(f"{REFUSAL_PREFIX}{what} is not allowed")

    def hook(event: str, args: tuple[Any, ...]) -> None:
        if event == "open":
            path, mode, flags = args
            if path is None or path == os.devnull:
                return
            writes = (
                mode is None
                or (isinstance(mode, str) and any(c in mode for c in "wax+"))
                or bool(flags & _WRITE_FLAGS)
            )
            if writes and not inside(path):
                refuse(f"writing {_short(path)}")
        elif event in _PATH_EVENTS:
            for arg in args[:2]:
                if isinstance(arg, str | bytes | os.PathLike) and not inside(arg):
                    refuse(f"{event} on {_short(arg)}")
        elif event in _NETWORK_EVENTS:
            refuse(f"network access ({event})")
        elif event in _PROCESS_EVENTS and not processes_allowed:
            refuse(f"starting a process ({event})")
        elif ctypes_allowed:
            return
        elif event.startswith("ctypes.") or (event == "import" and args[0] in _CTYPES):
            refuse("ctypes")

    sys.addaudithook(hook)


# --------------------------------------------------------------------------- endless loops
#
# A call the per-call timer stopped may be slow rather than endless; only an endless loop
# is a difference. In "watch" mode the child proves one the simple way: a ``while`` loop
# whose body is made only of operations on plain data (no calls but a few pure builtins
# and methods, no attribute access, no iterator kept across iterations) reaches the
# start of the same body statement twice with the same locals and the same values of the
# globals it reads. Its next iterations are then determined by that state, so it repeats
# forever. Anything outside that shape is simply not watched.

_PURE_BUILTINS = frozenset(
    {
        "abs", "all", "any", "ascii", "bin", "bool", "bytes", "chr", "complex", "dict",
        "divmod", "enumerate", "float", "format", "hex", "int", "isinstance", "len", "list",
        "max", "min", "oct", "ord", "pow", "range", "repr", "reversed", "round", "sorted",
        "str", "sum", "tuple", "zip",
    }
    | {
        name
        for name, value in vars(builtins).items()
        if isinstance(value, type) and issubclass(value, BaseException)
    }
)
_PURE_METHODS = frozenset(
    {
        "append", "extend", "insert", "pop", "remove", "index", "count", "clear", "copy",
        "reverse", "sort", "get", "keys", "values", "items", "setdefault", "update",
        "popitem", "join", "split", "rsplit", "strip", "lstrip", "rstrip", "lower", "upper",
        "replace", "startswith", "endswith", "find", "rfind", "isdigit", "isalpha",
        "isspace", "bit_length",
    }
)
_PLAIN_SCALARS = (type(None), bool, int, float, complex, str, bytes, range)
_MAX_PLAIN_NODES = 5000
_MAX_SNAPSHOTS = 200_000


class _NotPlain(Exception):
    """A value the snapshot cannot capture exactly."""


class _LoopNames:
    """The names a simple loop uses; ``counters`` only ever get ``+=``/``-=`` a value
    computed from the other names, so they cannot steer the loop and are left out of its
    state (if they hold an ``int`` or ``float``)."""

    def __init__(self, names: frozenset[str], counters: frozenset[str]) -> None:
        self.names = names
        self.counters = counters


def _counters(loop: ast.While) -> frozenset[str]:
    updated: set[str] = set()
    targets: set[int] = set()
    for node in ast.walk(loop):
        if (isinstance(node, ast.AugAssign) and isinstance(node.op, ast.Add | ast.Sub)
                and isinstance(node.target, ast.Name)):
            name = node.target.id
            if not any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(node.value)):
                updated.add(name)
                targets.add(id(node.target))
    other_uses = {
        node.id for node in ast.walk(loop) if isinstance(node, ast.Name) and id(node) not in targets
    }
    return frozenset(updated - other_uses)


def _loop_is_pure(loop: ast.While) -> _LoopNames | None:
    """The names a simple ``while`` loop uses, or None if it is not that simple."""
    names: set[str] = set()
    for node in ast.walk(loop):
        if isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Name) and func.id in _PURE_BUILTINS:
                continue
            if (isinstance(func, ast.Attribute) and func.attr in _PURE_METHODS
                    and isinstance(func.value, ast.Name)):
                continue
            return None
        if isinstance(node, ast.Attribute):
            if not any(isinstance(call, ast.Call) and call.func is node
                       for call in ast.walk(loop)):
                return None
        elif isinstance(node, ast.Name):
            names.add(node.id)
        elif isinstance(node, ast.Global | ast.Nonlocal | ast.FunctionDef |
                        ast.AsyncFunctionDef | ast.ClassDef | ast.Lambda | ast.ListComp |
                        ast.SetComp | ast.DictComp | ast.GeneratorExp | ast.Yield |
                        ast.YieldFrom | ast.Await | ast.With | ast.AsyncWith | ast.Import |
                        ast.ImportFrom | ast.Match | ast.AsyncFor | ast.Set):
            return None
    return _LoopNames(frozenset(names), _counters(loop))


def watch_points(source: str) -> dict[int, _LoopNames]:
    """Lines where a repeated state proves an endless loop, with what the loop uses.

    For each simple ``while`` loop (``_loop_is_pure``) that no other loop of its function
    encloses, and whose enclosing statements are only ``if`` and ``try`` bodies (so it runs
    at most once per call of the function, and nothing but the locals is live there):
    the first lines of the statements directly in its body, or in the body of a ``while``
    nested in it through ``if``, ``while`` and ``try`` bodies only.
    """
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return {}
    points: dict[int, _LoopNames] = {}

    def mark(body: list[ast.stmt], loop: _LoopNames, direct: bool) -> None:
        lines = [stmt.lineno for stmt in body]
        if direct and len(set(lines)) == len(lines):  # one statement per line
            for line in lines:
                points[line] = loop
        for stmt in body:
            if isinstance(stmt, ast.While):
                mark(stmt.body, loop, True)
            elif isinstance(stmt, ast.If):
                mark(stmt.body, loop, False)
                mark(stmt.orelse, loop, False)
            elif isinstance(stmt, ast.Try):
                mark(stmt.body, loop, False)

    def visit(body: list[ast.stmt], plain_context: bool) -> None:
        for stmt in body:
            if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
                visit(stmt.body, True)
            elif isinstance(stmt, ast.ClassDef):
                visit(stmt.body, False)
            elif isinstance(stmt, ast.While):
                loop = _loop_is_pure(stmt) if plain_context else None
                if loop is not None:
                    mark(stmt.body, loop, True)
                visit(stmt.body, False)
                visit(stmt.orelse, False)
            elif isinstance(stmt, ast.If):
                visit(stmt.body, plain_context)
                visit(stmt.orelse, plain_context)
            elif isinstance(stmt, ast.Try):
                visit(stmt.body, plain_context)
                for handler in stmt.handlers:
                    visit(handler.body, False)
                visit(stmt.orelse, False)
                visit(stmt.finalbody, False)
            else:
                for field_name in ("body", "orelse", "finalbody"):
                    inner = getattr(stmt, field_name, None)
                    if isinstance(inner, list):
                        visit(inner, False)

    visit(tree.body, False)
    return points


def _plain(value: object, seen: dict[int, int], out: list[str]) -> None:
    """Append an exact description of ``value`` (aliasing included) to ``out``."""
    if len(out) > _MAX_PLAIN_NODES:
        raise _NotPlain
    tp = type(value)
    if tp is float:
        assert isinstance(value, float)
        out.append("nan" if value != value else value.hex())
        return
    if tp is int:
        assert isinstance(value, int)
        out.append(hex(value))
        return
    if tp in _PLAIN_SCALARS:
        out.append(f"{tp.__name__}:{value!r}")
        return
    if tp not in (list, tuple, dict):
        raise _NotPlain
    if tp is not tuple:
        if id(value) in seen:
            out.append(f"@{seen[id(value)]}")
            return
        seen[id(value)] = len(seen)
    out.append(f"{tp.__name__}(")
    items = value.items() if isinstance(value, dict) else value
    for item in items:  # type: ignore[attr-defined]
        _plain(item, seen, out)
    out.append(")")


class _Watch:
    """State of the endless-loop watch for the current call."""

    points: ClassVar[dict[int, _LoopNames]] = {}
    filename = ""
    first_offset: ClassVar[dict[tuple[int, int], int]] = {}
    seen: ClassVar[dict[int, set[tuple[int, str]]]] = {}
    count = 0
    endless: int | None = None  # the line where a state repeated
    builtins: ClassVar[dict[str, object]] = {}


def _snapshot(frame: FrameType, loop: _LoopNames) -> str | None:
    """The frame's exact state for the watch, or None if it cannot be captured."""
    local = frame.f_locals
    seen: dict[int, int] = {}
    out: list[str] = []
    try:
        for name in sorted(local):
            if name in loop.counters and type(local[name]) in (int, float):
                continue
            out.append(f"{name}=")
            _plain(local[name], seen, out)
        for name in sorted(loop.names - local.keys()):
            if name in frame.f_globals:
                out.append(f"{name}:=")
                _plain(frame.f_globals[name], seen, out)
            elif frame.f_builtins.get(name) is not _Watch.builtins.get(name, _NotPlain):
                return None  # not a pure builtin, or one the module replaced
    except _NotPlain:
        return None
    return hashlib.sha256("\x00".join(out).encode("utf-8", "surrogatepass")).hexdigest()


def _first_offset(code: Any, line: int) -> int:
    key = (id(code), line)
    if key not in _Watch.first_offset:
        import dis  # only watched runs need it; every child pays for top-level imports

        offsets = [o for o, n in dis.findlinestarts(code) if n == line]
        _Watch.first_offset[key] = min(offsets) if offsets else -1
    return _Watch.first_offset[key]


def _trace_line(frame: FrameType, event: str, arg: object) -> Any:
    if event == "line" and frame.f_lineno in _Watch.points:
        line = frame.f_lineno
        if frame.f_lasti == _first_offset(frame.f_code, line):
            state = _snapshot(frame, _Watch.points[line])
            if state is not None and _Watch.count < _MAX_SNAPSHOTS:
                states = _Watch.seen.setdefault(id(frame), set())
                if (line, state) in states:
                    _Watch.endless = line
                    sys.settrace(None)
                    raise _CallTimeout
                states.add((line, state))
                _Watch.count += 1
    elif event == "return":
        _Watch.seen.pop(id(frame), None)
    return _trace_line


def _trace_call(frame: FrameType, event: str, arg: object) -> Any:
    if frame.f_code.co_filename == _Watch.filename:
        return _trace_line
    return None


def start_watch(subject: str) -> None:
    """Prepare the endless-loop watch for the calls on the module at path ``subject``."""
    with open(subject, encoding="utf-8") as handle:
        _Watch.points = watch_points(handle.read())
    _Watch.filename = subject
    _Watch.builtins = {n: getattr(builtins, n) for n in _PURE_BUILTINS if hasattr(builtins, n)}


# --------------------------------------------------------------------------- calls


class _CallTimeout(BaseException):
    """Raised by the per-call timer; a BaseException so ``except Exception`` misses it."""


class _Timer:
    armed = False
    fired = False


def _on_alarm(signum: int, frame: object) -> None:
    if _Timer.armed:
        _Timer.fired = True
        raise _CallTimeout


def _behaviour(kind: str, value: object, text: str, args_after: object = None,
               elapsed: float = 0.0) -> dict[str, object]:
    return {"kind": kind, "value": value, "text": text, "args_after": args_after,
            "elapsed": elapsed}


def _hung(call_s: float) -> dict[str, object]:
    return _behaviour("timeout", "timeout", f"still running after {call_s:g} s", None, call_s)


def _observe(action: Callable[[], object], args: Sequence[object] | None,
             call_s: float, watch: bool = False) -> dict[str, object]:
    """Run ``action`` under the per-call timer and encode what it did.

    The timer's exception can arrive at any function entry, so the whole observation
    sits in one ``try`` and the disarming is inline (no call before the flag is down).
    """
    # The import's refusals are every call's, unless they can be pinned on modules whose
    # state the call can be seen not to reach (``_Taint``).
    followed = bool(_import_refusals) and not _Taint.everywhere and not _Taint.importing
    _refusals[:] = [] if followed else _import_refusals
    _Taint.called = set()
    threads = _Threads.started
    _Watch.endless, _Watch.seen, _Watch.count = None, {}, 0
    if followed:
        sys.setprofile(_profile)
    if watch and _Watch.filename:
        sys.settrace(_trace_call)
    _Timer.fired = False
    try:
        _Timer.armed = True
        signal.setitimer(signal.ITIMER_REAL, call_s, _REFIRE_S)
        result = _run_and_encode(action, args)
        _Timer.armed = False
        signal.setitimer(signal.ITIMER_REAL, 0)
    except _CallTimeout:
        result = None
    while True:
        try:
            _Timer.armed = False
            signal.setitimer(signal.ITIMER_REAL, 0)
            break
        except _CallTimeout:
            continue
    lost = followed and sys.getprofile() is not _profile  # unset on the way: not followed
    sys.setprofile(None)
    sys.settrace(None)
    if followed and (lost or _Threads.started != threads or _Taint.observed()):
        _refusals[:0] = [r for r in _import_refusals if r not in _refusals]
    if _Watch.endless is not None:
        result = _behaviour("timeout", "endless-loop",
                            f"in an endless loop: the same state repeats at line "
                            f"{_Watch.endless}", None, call_s)
    elif result is None or _Timer.fired:
        result = _hung(call_s)
    if _refusals:
        result["refused"] = list(_refusals)
    return result


def _run_and_encode(action: Callable[[], object],
                    args: Sequence[object] | None) -> dict[str, object]:
    start = time.perf_counter()
    try:
        value = drain(action())
    except _CallTimeout:
        raise
    except BaseException as exc:
        return _raised(exc, args, time.perf_counter() - start)
    return _returned(value, args, time.perf_counter() - start)


def _encode_args(args: Sequence[object] | None) -> object:
    if args is None:
        return None
    try:
        return canonical(tuple(args))
    except (RecursionError, MemoryError) as exc:
        return ["unencodable", type(exc).__name__]


def _returned(value: object, args: Sequence[object] | None, elapsed: float) -> dict[str, object]:
    try:
        encoded = canonical(value)
    except (RecursionError, MemoryError) as exc:
        encoded = ["unencodable", type(exc).__name__]
    return _behaviour("return", encoded, _value_text(value), _encode_args(args), elapsed)


class _Subject:
    """The file of the module under test, once imported (where an exception was raised)."""

    file: str | None = None


def _raise_site(exc: BaseException) -> list[object]:
    """Where ``exc`` was raised: the innermost line of the module under test on its way
    out (None if it never passed through it), whether that line is where it started (the
    innermost frame of all is the module's) rather than a call into other code, and
    whether it started at a ``raise`` statement of the project's code (a file of the
    workspace, not the standard library or an installed package: raised on purpose)."""
    line: int | None = None
    inner = False
    last = None
    tb = exc.__traceback__
    while tb is not None:
        here = tb.tb_frame.f_code.co_filename == _Subject.file
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
    return [line, inner, raised]


def _raised(exc: BaseException, args: Sequence[object] | None,
            elapsed: float) -> dict[str, object]:
    if isinstance(exc, OSError) and exc.errno == errno.EFBIG:
        return _behaviour("resource", "file-size", _exception_text(exc), None, elapsed)
    out = _behaviour("raise", _type_name(type(exc)), _exception_text(exc),
                     _encode_args(args), elapsed)
    out["site"] = _raise_site(exc)
    return out


def _resolve(module: object, entry: str) -> Callable[..., object]:
    target = module
    for part in entry.split("."):
        target = getattr(target, part)
    if not callable(target) and not isinstance(target, property):
        raise TypeError(f"{entry!r} is not callable")
    return target  # type: ignore[return-value]


def _owner(module: object, entry: str) -> type | None:
    """The class ``entry`` (``Class.method``) is defined in, if it is a class."""
    if "." not in entry:
        return None
    target = module
    for part in entry.split(".")[:-1]:
        target = getattr(target, part)
    return target if isinstance(target, type) else None


def _built_state(obj: object, name: str) -> object:
    """The state of an object a constructor built, to tell whether the two versions built
    the same one: with the special (``__x__``) attributes it holds itself, which a state
    leaves out, and marked ``opaque`` when a value in it is known only by its ``repr``
    without an address (a function, a lambda): two such values may differ unseen."""
    encoded = _encode(Instance(obj, name, properties=False), 0, set())
    text = _dumps(encoded)
    state: object = encoded if len(text) <= MAX_ENCODING_CHARS else [
        "sha256", hashlib.sha256(text.encode()).hexdigest(), len(text)]
    try:
        attrs = object.__getattribute__(obj, "__dict__")
    except AttributeError:
        attrs = None
    if isinstance(attrs, dict):
        special = {k: v for k, v in attrs.items()
                   if isinstance(k, str) and k.startswith("__") and k.endswith("__")}
        if special:
            encoded_special = _encode(special, 0, set())
            text += _dumps(encoded_special)
            state = ["with-special", state, canonical(special)]
    if " at 0x?" in text:
        state = [OPAQUE_STATE, state]
    return state


# The mark of an object state holding values known only by their masked ``repr``
# (mirrored in ``search.differential``).
OPAQUE_STATE = "opaque-state"


# ``Behaviour.value`` of a method call whose object could not be built (mirrors
# ``verdict.NO_INSTANCE``): not an input of the method.
NO_INSTANCE = "no-instance"


def _method_call(cls: type, name: str, receiver: tuple[list[object], dict[str, object], bool],
                 args: list[object], kwargs: dict[str, object], call_s: float,
                 watch: bool, module: object = None) -> dict[str, object]:
    """Build the object with the receiver's arguments, then call (or read) ``name`` on it.

    A constructor that fails (raises, hangs) gives no input: ``NO_INSTANCE``. ``self``
    after the call is compared like an argument, by its state (``Instance``). Objects
    among the arguments (``Build``) are made first, in the same step (``_prepare``).
    """
    init_args, init_kwargs, read = receiver
    built: dict[str, object] = {}

    def build() -> None:
        note_classes(cls)
        init = _prepare(module, init_args, init_kwargs)
        call = _prepare(module, args, kwargs)
        obj = cls(*init[0], **init[1])
        # What the constructor built: if the versions build different objects, that is a
        # difference of the class, not of the method (so too for objects made as arguments).
        state = _built_state(obj, name)
        built["state"] = state if call[2] is None else [state, call[2]]
        built["args"], built["kwargs"] = call[0], call[1]
        built["obj"] = obj

    made = _observe(build, None, call_s)
    if "obj" not in built:
        return _behaviour("timeout", NO_INSTANCE,
                          f"not called: the constructor {made.get('kind')}s "
                          f"({made.get('text')})")
    obj, state = built["obj"], built["state"]
    args = built["args"]  # type: ignore[assignment]
    kwargs = built["kwargs"]  # type: ignore[assignment]
    made_refused = made.get("refused")
    if read:
        if args or kwargs:
            raise ValueError("a property read takes no arguments")
        action: Callable[[], object] = functools.partial(getattr, obj, name)
    else:
        def action() -> object:
            return getattr(obj, name)(*args, **kwargs)
    result = _observe(action, [Instance(obj, name), *args, *kwargs.values()], call_s, watch)
    result["built"] = state
    return _with_refusals(result, made_refused)


def _with_refusals(result: dict[str, object], earlier: object) -> dict[str, object]:
    """``result`` charged with what the sandbox refused while its objects were made."""
    if isinstance(earlier, list) and earlier:
        now = result.get("refused")
        now = now if isinstance(now, list) else []
        result["refused"] = [*earlier, *(r for r in now if r not in earlier)]
    return result


# Arguments with their objects made, and the encoding of what was made (or None).
_Prepared = tuple[list[object], dict[str, object], object]


def _prepare(module: object, args: list[object], kwargs: dict[str, object]) -> _Prepared:
    """The arguments with their ``Build`` objects made (``materialize``), and the encoding
    of the arguments as made (None when there was nothing to make): what the two versions
    made must be the same for a difference to belong to the unit."""
    if not (has_builds(args) or has_builds(kwargs)):
        return args, kwargs, None
    made = [materialize(module, a) for a in args]
    made_kw = {k: materialize(module, v) for k, v in kwargs.items()}
    return made, made_kw, canonical(tuple([*made, *made_kw.values()]))


class _Made:
    """What the sandbox refused while the last call's argument objects were made."""

    refused: object = None


def _with_objects(module: object, args: list[object], kwargs: dict[str, object],
                  call_s: float) -> _Prepared | dict[str, object]:
    """Make the ``Build`` objects among the arguments under the per-call timer: the
    arguments made and their encoding, or the behaviour of a call that is no input."""
    _Made.refused = None
    if not (has_builds(args) or has_builds(kwargs)):
        return args, kwargs, None
    made: dict[str, Any] = {}

    def build() -> None:
        made["all"] = _prepare(module, args, kwargs)

    seen = _observe(build, None, call_s)
    if "all" not in made:
        return _behaviour("timeout", NO_INSTANCE,
                          f"not called: making an argument {seen.get('kind')}s "
                          f"({seen.get('text')})")
    # What was refused while the objects were made goes with the call (``_with_refusals``).
    _Made.refused = seen.get("refused")
    return made["all"]  # type: ignore[no-any-return]


def _load(path: str, name: str) -> object:
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def run_calls(cfg: dict[str, Any], send: Callable[[dict[str, object]], None]) -> None:
    """Import the subject, then report one behaviour per call."""
    call_s = float(cfg["limits"]["call_s"])
    entry = str(cfg["entry"])
    loaded: dict[str, Any] = {}

    package = cfg.get("package")

    def load_entry() -> object:
        module: object
        if package:
            sys.path.insert(0, package["root"])
            module = importlib.import_module(package["module"])
        else:
            module = _load(cfg["subject"], "subject")
        _Subject.file = getattr(module, "__file__", None)
        loaded["fn"] = _resolve(module, entry)
        loaded["cls"] = _owner(module, entry)
        loaded["module"] = module
        return None

    _Taint.importing = True
    try:
        outcome = _observe(load_entry, None, call_s)
    finally:
        _Taint.importing = False
    if _Taint.shared is not None and _shared_state() != _Taint.shared:
        _Taint.everywhere = True  # an outcome may have gone where every call reads
    if "fn" not in loaded:
        send({"t": "import-failed", "b": outcome})
        return
    # The module's state may rest on them: a call's, if it may observe it (``_Taint``).
    _import_refusals[:] = _refusals
    _Taint.unit = str(getattr(loaded["module"], "__name__", ""))
    _Taint.top = _Taint.unit.split(".")[0]
    send({"t": "imported"})
    watch = bool(cfg.get("watch"))
    if watch:
        start_watch(cfg["subject"])
    fn = loaded["fn"]
    cls = loaded["cls"]
    name = entry.rsplit(".", 1)[-1]
    recursion_limit = sys.getrecursionlimit()  # as the module left it
    module = loaded["module"]
    for index, literals in enumerate(cfg["calls"]):
        receiver = parse_receiver(literals[0], objects=True) if literals else None
        args, kwargs = split_arguments(literals[1:] if receiver is not None else literals,
                                       objects=True)
        sys.setrecursionlimit(recursion_limit)
        if receiver is not None:
            if not isinstance(cls, type):
                raise ValueError(f"{entry!r} is not a member of a class")
            behaviour = _method_call(cls, name, receiver, args, kwargs, call_s, watch, module)
            send({"t": "call", "i": cfg["start"] + index, "b": behaviour})
            continue
        prepared = _with_objects(module, args, kwargs, call_s)
        if isinstance(prepared, dict):  # an argument could not be made: no input
            send({"t": "call", "i": cfg["start"] + index, "b": prepared})
            continue
        args, kwargs, made = prepared
        if isinstance(cls, type) and name == "__init__":
            # The constructor is the unit: what it builds is compared by its state.
            def construct(c: type = cls, a: list[object] = args,
                          k: dict[str, object] = kwargs) -> object:
                note_classes(c)
                return Instance(c(*a, **k))

            behaviour = _observe(construct, [*args, *kwargs.values()], call_s, watch)
        else:
            # Keyword arguments are compared after the call like positional ones (mutation).
            passed = [*args, *kwargs.values()]
            behaviour = _observe(functools.partial(fn, *args, **kwargs), passed, call_s, watch)
        if made is not None:
            behaviour["built"] = made
        send({"t": "call", "i": cfg["start"] + index,
              "b": _with_refusals(behaviour, _Made.refused)})


def run_script(cfg: dict[str, Any]) -> int:
    """Run the script as ``__main__``; return its exit status."""
    status = 0
    try:
        sys.argv = [cfg["script"]]
        runpy.run_path(cfg["script"], run_name="__main__")
    except SystemExit as exc:
        if exc.code is None:
            status = 0
        elif isinstance(exc.code, int):
            status = exc.code
        else:
            print(exc.code, file=sys.stderr)
            status = 1
    except BaseException:
        traceback.print_exc()
        status = 1
    return status


def main(argv: Sequence[str]) -> None:
    with open(argv[1], encoding="utf-8") as handle:
        cfg = json.load(handle)
    channel: IO[str] = os.fdopen(int(cfg["result_fd"]), "w", encoding="utf-8")
    sys.path.extend(p for p in cfg.get("site_packages", ()) if p not in sys.path)

    def send(message: dict[str, object]) -> None:
        channel.write(json.dumps(message, allow_nan=False) + "\n")
        channel.flush()

    try:
        report = isolate(cfg)
    except OSError as exc:
        send({"t": "setup-failed", "error": f"{type(exc).__name__}: {exc}"})
        os._exit(70)
    for name in ("PYTHONHASHSEED", "PWD", "LC_CTYPE"):  # bwrap's and Python's own: the
        os.environ.pop(name, None)  # rest of bwrap's empty environment stays, for the probes
    # A plain process's environment, as a login shell has, the same for every child and
    # holding no secret: code that reads PATH or HOME behaves as it does elsewhere.
    os.environ.update({**PLAIN_ENVIRONMENT, "HOME": cfg["workdir"], "TMPDIR": cfg["workdir"],
                       "PWD": cfg["workdir"]})
    sys.dont_write_bytecode = True
    send({"t": "ready", "isolation": report})
    if cfg.get("audit_hook", True):
        install_audit_hook(
            cfg["workdir"], int(cfg["limits"]["processes"]) > 0, bool(cfg.get("allow_ctypes"))
        )
    _watch_threads()
    if cfg["mode"] == "script":
        channel.close()
        status = run_script(cfg)
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(status & 0xFF)
    signal.signal(signal.SIGALRM, _on_alarm)
    sys.stdout = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115
    run_calls(cfg, send)
    channel.close()
    os._exit(0)


if __name__ == "__main__":
    main(sys.argv)
