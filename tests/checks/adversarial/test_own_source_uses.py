"""Adversarial pairs: what a module does with a frame or a string, not the words it has.

A frame got by ``sys._getframe(1)`` whose only use is the caller's namespace
(``.f_globals.get("__name__")``) reads no line; a string only compared
(``name in ("__cause__", "__traceback__")``) or a string statement looks nothing up. A
docstring or layout change in such a module is verified, and an unchanged function is
not listed when lines move. The same module reading the frame's line or code, handing
the frame on, or using the string as a name it looks up (through a variable, a name
compared with it, a name built in pieces) stays unverified.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.checks.adversarial.test_own_source import _DOC, _review, _verdicts
from veribot.checks.project import reads
from veribot.checks.verdict import Verdict

_COMMENT = "    # A comment, and a blank line.\n\n"

# (name, module text with {doc} at the start of `f`'s body): nothing reads a line.
NARROWED = [
    ("caller-module-name", "import sys\n\n\ndef f(x: int) -> str:\n{doc}"
     "    return str(sys._getframe(1).f_globals.get('__name__', '__main__')) + str(x)\n"),
    ("caller-through-f-back", "import sys\n\n\ndef f(x: int) -> str:\n{doc}"
     "    return str(sys._getframe(0).f_back.f_globals['__name__']) + str(x)\n"),
    ("getter-imported", "from sys import _getframe\n\n\ndef f(x: int) -> str:\n{doc}"
     "    return str(_getframe(1).f_globals.get('__name__')) + str(x)\n"),
    ("compared-name", "def g(obj: BaseException, name: str) -> None:\n"
     "    if name in ('__cause__', '__traceback__'):\n"
     "        BaseException.__setattr__(obj, name, None)\n        return\n"
     "    raise AttributeError\n\n\ndef f(x: int) -> int:\n{doc}    return x + 1\n"),
    ("traceback-cleared", "def g(x: int) -> int:\n    try:\n        return 1 // x\n"
     "    except ZeroDivisionError as err:\n        err.__traceback__ = None\n"
     "        raise ValueError(x) from None\n\n\ndef f(x: int) -> int:\n{doc}"
     "    return len(str(object)) + x\n"),
    ("string-statement", "LIMIT = 3\n'''The limit, read by `traceback` callers.'''\n\n\n"
     "def f(x: int) -> int:\n{doc}    return len(str(object)) + x + LIMIT\n"),
]

# Nothing reads a line here either, so moved lines list no function; a change of its
# text stays unverified for another reason (`noise`: the caller's namespace is handed
# through a local, the names looked up in it unknown to the docstring check).
MOVED_ONLY = [
    ("frame-in-locals", "import inspect\n\n\ndef f(x: int) -> str:\n{doc}"
     "    frame = inspect.currentframe()\n"
     "    back = frame.f_back if frame is not None else None\n"
     "    names = back.f_globals if back is not None else None\n    del frame\n"
     "    if names is not None:\n        return str(names.get('__name__')) + str(x)\n"
     "    return str(x)\n"),
    # A frozen instance's `__setattr__` letting an exception's traceback through, in a
    # module that looks names up and runs code from text (see `inert`).
    ("traceback-let-through", "def frozen(self: object, name: str, value: object) -> None:\n"
     "    if isinstance(self, BaseException) and name in ('__cause__', '__traceback__'):\n"
     "        BaseException.__setattr__(self, name, value)\n        return\n"
     "    raise AttributeError\n\n\ndef fields(inst: object, names: list[str]) -> list[object]:\n"
     "    return [getattr(inst, n) for n in names]\n\n\nexec('X = 1')\n\n\n"
     "def f(x: int, o: object) -> object:\n{doc}    return frozen if x else fields(o, ['a'])\n"),
]

# The same modules, reading a line, a code object, or a name looked up by a string.
ATTACKS = [
    ("frame-line", "import sys\n\n\ndef f(x: int) -> int:\n{doc}"
     "    return sys._getframe(0).f_lineno + x\n"),
    ("frame-code", "import sys\n\n\ndef f(x: int) -> int:\n{doc}"
     "    return sys._getframe(0).f_code.co_firstlineno + x\n"),
    ("frame-to-traceback", "import sys\nimport traceback\n\n\ndef f(x: int) -> str:\n{doc}"
     "    return traceback.format_stack(sys._getframe(0))[-1] + str(x)\n"),
    ("frame-repr", "import sys\n\n\ndef f(x: int) -> str:\n{doc}"
     "    return repr(sys._getframe(0)).split(',')[2] + str(x)\n"),
    ("local-frame-line", "import inspect\n\n\ndef f(x: int) -> int:\n{doc}"
     "    frame = inspect.currentframe()\n"
     "    back = frame if frame is not None else None\n"
     "    return (back.f_lineno if back is not None else 0) + x\n"),
    ("frame-returned", "import sys\n\n\ndef g():\n    return sys._getframe(1)\n\n\n"
     "def f(x: int) -> int:\n{doc}    return g().f_lineno + x\n"),
    ("string-through-a-variable", "def f(x: int) -> int:\n{doc}    try:\n"
     "        return 1 // x\n    except ZeroDivisionError as e:\n"
     "        name, line = '__traceback__', 'tb_lineno'\n"
     "        return getattr(getattr(e, name), line)\n"),
    ("compared-names-looked-up", "def f(x: int) -> int:\n{doc}    try:\n"
     "        return 1 // x\n    except ZeroDivisionError as e:\n        for a in dir(e):\n"
     "            if a == '__traceback__':\n                tb = getattr(e, a)\n"
     "                for b in dir(tb):\n                    if b == 'tb_lineno':\n"
     "                        return getattr(tb, b)\n    return -1\n"),
    ("selected-by-a-helper", "def wanted(k: str) -> bool:\n"
     "    return k in ('__traceback__', 'tb_lineno')\n\n\n"
     "def f(x: int) -> object:\n{doc}    try:\n        return 1 // x\n"
     "    except ZeroDivisionError as e:\n        found: object = e\n"
     "        for _ in range(2):\n            for k in dir(found):\n"
     "                if wanted(k):\n                    found = getattr(found, k)\n"
     "                    break\n        return found\n"),
    ("name-in-pieces", "def f(x: int) -> int:\n{doc}    try:\n        return 1 // x\n"
     "    except ZeroDivisionError as e:\n"
     "        return getattr(getattr(e, '__trace' + 'back__'), 'tb_' + 'lin' + 'eno')\n"),
    ("compared-then-fetched", "def f(x: int, name: str = '__traceback__') -> int:\n{doc}"
     "    try:\n        return 1 // x\n    except ZeroDivisionError as e:\n"
     "        if name == '__traceback__':\n"
     "            return getattr(getattr(e, name), 'tb_lineno')\n    return -1\n"),
]


@pytest.mark.parametrize("module", [m for _, m in NARROWED], ids=[n for n, _ in NARROWED])
def test_a_docstring_change_where_nothing_reads_a_line_is_verified(
        tmp_path: Path, module: str) -> None:
    report = _review(tmp_path, module.format(doc=""), module.format(doc=_DOC))
    (item,) = [i for i in report.items if i.unit.qualname == "pkg/mod.py::f"]
    assert item.result.verdict is Verdict.VERIFIED, item.result.detail


@pytest.mark.parametrize("module", [m for _, m in NARROWED], ids=[n for n, _ in NARROWED])
def test_a_comment_where_nothing_reads_a_line_is_verified(tmp_path: Path, module: str) -> None:
    report = _review(tmp_path, module.format(doc=""), module.format(doc=_COMMENT))
    (item,) = [i for i in report.items if i.unit.qualname == "pkg/mod.py::f"]
    assert item.result.verdict is Verdict.VERIFIED, item.result.detail


@pytest.mark.parametrize("module", [m for _, m in NARROWED + MOVED_ONLY],
                         ids=[n for n, _ in NARROWED + MOVED_ONLY])
def test_moved_lines_where_nothing_reads_one_list_no_function(
        tmp_path: Path, module: str) -> None:
    text = module.format(doc="")
    assert _verdicts(_review(tmp_path, text, "\n\n" + text)) == {}


@pytest.mark.parametrize("module", [m for _, m in ATTACKS], ids=[n for n, _ in ATTACKS])
def test_a_docstring_change_where_a_line_is_read_is_not_verified(
        tmp_path: Path, module: str) -> None:
    report = _review(tmp_path, module.format(doc=""), module.format(doc=_DOC))
    found = _verdicts(report)
    assert "pkg/mod.py::f" in found and found["pkg/mod.py::f"] is not Verdict.VERIFIED


@pytest.mark.parametrize("module", [m for _, m in ATTACKS], ids=[n for n, _ in ATTACKS])
def test_a_comment_where_a_line_is_read_is_not_verified(tmp_path: Path, module: str) -> None:
    report = _review(tmp_path, module.format(doc=""), module.format(doc=_COMMENT))
    (item,) = [i for i in report.items if i.unit.qualname == "pkg/mod.py::f"]
    assert item.result.verdict is Verdict.INCONCLUSIVE
    assert item.result.reason == "unsupported:a-layout-change-read"


@pytest.mark.parametrize("module", [m for _, m in ATTACKS], ids=[n for n, _ in ATTACKS])
def test_moved_lines_where_a_line_is_read_list_the_reader(tmp_path: Path, module: str) -> None:
    text = module.format(doc="")
    report = _review(tmp_path, text, "\n\n" + text)
    (item,) = [i for i in report.items if i.unit.qualname == "pkg/mod.py::f"]
    assert item.result.verdict is Verdict.INCONCLUSIVE
    assert item.result.reason == "unsupported:a-layout-change-read"


# What `reads` decides of one module (`import sys` above it; `import inspect` too for readers).
QUIET = {
    "caller-name": "def f():\n    return sys._getframe(1).f_globals.get('__name__')\n",
    "builtins": "def f():\n    return sys._getframe().f_back.f_builtins['len']\n",
    "tested": "def f():\n    fr = sys._getframe(1)\n    if fr is None or not fr:\n"
              "        return None\n    return fr.f_globals['__name__']\n",
    "compared": "def f(k):\n    return k == '__traceback__' or k in ('tb_lineno', 'exc_info')\n",
    "set-traceback": "def f(o, k, v):\n    if k == '__traceback__':\n"
                     "        setattr(o, k, v)\n",
    "string-statement": "X = 1\n'__traceback__, f_lineno'\n",
    "traceback-cleared": "def f(e):\n    e.__traceback__ = None\n    del e.__traceback__\n",
    # A traceback selected for a lookup by a computed name holds its lines one read
    # further, which no word of the module shows (a seen word: a reader), selected or not
    # (`[getattr(tb, k) for k in dir(tb)]`); handed on, other code reads it (the listed
    # assumption). The frozen-instance `__setattr__` of a class builder that also looks
    # names up (`getattr(inst, attr_name)`) and runs generated code.
    "traceback-selected": "def is_tb(k):\n    return k == '__traceback__'\n"
                          "def f(e):\n    for k in dir(e):\n        if is_tb(k):\n"
                          "            return getattr(e, k)\n",
    "frozen-setattr": "def g(self, name, value):\n"
                      "    if isinstance(self, BaseException) and name in (\n"
                      "            '__cause__', '__context__', '__traceback__'):\n"
                      "        BaseException.__setattr__(self, name, value)\n        return\n"
                      "    raise AttributeError\n"
                      "def h(inst, names):\n    return [getattr(inst, n) for n in names]\n"
                      "exec('def k(): pass')\n",
    "compared-under-star": "from os.path import *\ndef f(k):\n"
                           "    return k == '__traceback__'\n",
}
READERS = {
    "line": "def f():\n    return sys._getframe(1).f_lineno\n",
    "code": "def f():\n    return sys._getframe(1).f_code\n",
    "locals": "def f():\n    return sys._getframe(1).f_locals['frame']\n",
    "returned": "def f():\n    return sys._getframe(1)\n",
    "stored": "def f(o):\n    o.frame = sys._getframe(1)\n",
    "passed": "def f(show):\n    return show(sys._getframe(1))\n",
    "to-traceback": "import traceback\ndef f():\n"
                    "    return traceback.format_stack(sys._getframe(1))\n",
    "to-getframeinfo": "def f():\n    return inspect.getframeinfo(sys._getframe(1))\n",
    "to-stack": "def f():\n    fr = inspect.currentframe()\n    return inspect.stack(fr)\n",
    "formatted": "def f():\n    return f'{sys._getframe(1)}'\n",
    "local-returned": "def f():\n    fr = sys._getframe(1)\n    back = fr.f_back\n"
                      "    return back\n",
    "local-in-closure": "def f():\n    fr = sys._getframe(1)\n    return lambda: fr\n",
    "local-by-locals": "def f(show):\n    fr = sys._getframe(1)\n    return show(locals())\n",
    "walrus": "def f(show):\n    if (fr := sys._getframe(1)):\n        return show(fr)\n",
    "global": "FR = None\ndef f():\n    global FR\n    FR = sys._getframe(1)\n",
    "module-level": "FR = sys._getframe(0)\n",
    "namespace-handed-on": "def f(show):\n    return show(sys._getframe(1).f_globals)\n",
    "namespace-items": "def f(show):\n"
                       "    return [show(v) for v in sys._getframe(1).f_globals.values()]\n",
    "own-file-by-key": "def f():\n    return sys._getframe(1).f_globals.get('__file__')\n",
    "traceback-by-key": "def f():\n"
                        "    return sys._getframe(1).f_globals['traceback'].format_stack()\n",
    "compared-with-object": "def f(o):\n    return sys._getframe(1) == o\n",
    "sys-rebound": "sys = object()\ndef f():\n    return sys._getframe(1).f_globals.get('x')\n",
    "sys-parameter": "def f(sys):\n    return sys._getframe(1).f_globals.get('x')\n",
    "star-import": "from os.path import *\n"
                   "def f():\n    return sys._getframe(1).f_globals.get('x')\n",
    "getter-renamed": "from sys import _getframe as here\ndef f():\n"
                      "    return here(1).f_globals.get('x')\n",
    "getter-kept": "from sys import _getframe\nGET = _getframe\n",
    "string-to-getattr": "def f(e):\n    name = '__traceback__'\n    return getattr(e, name)\n",
    "compared-to-getattr": "def f(e):\n    for k in dir(e):\n"
                           "        if k == '__traceback__':\n            return getattr(e, k)\n",
    "compared-in-a-helper": "def is_line(k):\n    return k == 'tb_lineno'\n"
                            "def f(tb):\n    for k in dir(tb):\n        if is_line(k):\n"
                            "            return getattr(tb, k)\n",
    "traceback-and-line-selected": "def wanted(k):\n"
                                   "    return k in ('__traceback__', 'f_lineno')\n"
                                   "def f(o):\n    return [getattr(o, k) for k in dir(o)"
                                   " if wanted(k)]\n",
    "compared-then-run": "def f(e, k):\n    if k == '__traceback__':\n"
                         "        return eval('e.' + k)\n",
    "compared-passed-on": "def f(e, k, show):\n    if k in ('__traceback__',):\n"
                          "        return show(e, k)\n",
    "compared-attribute": "def f(self, e):\n    if self.k == '__traceback__':\n"
                          "        return getattr(e, self.k)\n",
    "compared-in-closure": "def f(e, k):\n    if k == '__traceback__':\n"
                           "        return lambda: getattr(e, k)\n",
    "compared-at-module-level": "K = input()\nif K == '__traceback__':\n    pass\n",
    "pieces-compared": "def f(e, k):\n    if k == '__trace' + 'back__':\n"
                       "        return getattr(e, k)\n",
    "set-hook": "def f(k, v):\n    if k == 'excepthook':\n        setattr(sys, k, v)\n",
    "set-stream-compared": "def f(k, v):\n    if k == 'stderr':\n        setattr(sys, k, v)\n",
    "set-stream-in-pieces": "def f(v):\n    setattr(sys, 'std' + 'err', v)\n",
    "set-stream-by-dotted-name": "def f(monkeypatch, buf):\n"
                                 "    monkeypatch.setattr('sys.stderr', buf)\n",
    "set-getter": "def f(o, k, v):\n    if k == '_getframe':\n        setattr(o, k, v)\n",
    "setattr-rebound": "from helpers import setattr\ndef f(o, k, v):\n"
                       "    if k == '__traceback__':\n        setattr(o, k, v)\n",
    "traceback-read": "def f(e):\n    e.__traceback__ = None\n    return e.__traceback__\n",
    "traceback-set-through-own-setattr": "class C:\n    def __setattr__(self, k, v):\n"
                                         "        object.__setattr__(self, k, getattr(sys, k))\n"
                                         "def f(c):\n    c.__traceback__ = None\n",
    "compared-set-under-star": "from helpers import *\ndef f(o, k, v):\n"
                               "    if k == '__traceback__':\n        setattr(o, k, v)\n",
    "eq-looking-up": "class C:\n    def __eq__(self, other):\n"
                     "        return getattr(sys, other)\ndef f(k):\n"
                     "    return k == '_getframe'\n",
}


@pytest.mark.parametrize("code", QUIET.values(), ids=QUIET.keys())
def test_reads_no_line_where_no_frame_or_string_reaches_one(code: str) -> None:
    # (Not `inspect`, which `noise` takes for a way to code run from text.)
    assert not reads.reads_source(ast.parse("import sys\n" + code))


@pytest.mark.parametrize("code", READERS.values(), ids=READERS.keys())
def test_reads_a_line_where_a_frame_or_a_string_may_reach_one(code: str) -> None:
    assert reads.reads_source(ast.parse("import sys\nimport inspect\n" + code))


def test_a_function_of_the_module_follows_its_modules_uses() -> None:
    """A function alone says nothing of its module's bindings (``sys`` rebound, a
    ``setattr`` imported): without its module's ``inert`` its words are all counted."""
    tree = ast.parse("import sys\ndef f():\n    return sys._getframe(1).f_globals.get('x')\n")
    (fn,) = [n for n in tree.body if isinstance(n, ast.FunctionDef)]
    assert reads.reads_source(fn)
    assert not reads.reads_source(fn, quiet=reads.inert(tree))
