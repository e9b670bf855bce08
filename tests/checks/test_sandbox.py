"""The sandbox: behaviours of real calls, and containment of hostile code.

Each containment test checks that the run is contained, that the parent gets a clean
behaviour, and that the next run still works.
"""

from __future__ import annotations

import math
import os
import socket
import time
from pathlib import Path

import pytest

from veribot.checks.sandbox import (
    Limits,
    _child,
    canonical,
    parse_argument,
    parse_literal,
    run_calls,
    run_script,
)
from veribot.checks.verdict import Behaviour, BehaviourKind

QUICK = Limits(wall_s=8.0, call_s=1.0)


def one(source: str, *args: str, entry: str = "f", limits: Limits = QUICK) -> Behaviour:
    [behaviour] = run_calls(source, entry, [list(args)], limits=limits)
    return behaviour


def assert_next_run_works() -> None:
    b = one("def f(x):\n    return x * 2\n", "21")
    assert b.kind is BehaviourKind.RETURNED and b.text == "42"


# ---------------------------------------------------------------- literals and encoding


@pytest.mark.parametrize(
    "value",
    [0, -7, 10**30, True, None, "a'b\"\n", b"\x00", 1.5, -0.0, [1, (2, 3)], {"a": {1, 2}},
     set(), frozenset({1}), 1 + 2j, (), [[]], {1: [None]}],
)
def test_repr_round_trips(value: object) -> None:
    assert parse_literal(repr(value)) == value
    assert type(parse_literal(repr(value))) is type(value)


@pytest.mark.parametrize("text", ["float('nan')", "nan", "[nan]"])
def test_nan_literals(text: str) -> None:
    value = parse_literal(text)
    x = value[0] if isinstance(value, list) else value
    assert isinstance(x, float) and math.isnan(x)


def test_infinity_literals() -> None:
    assert parse_literal("float('inf')") == math.inf
    assert parse_literal("-float('inf')") == -math.inf
    assert parse_literal("float('-inf')") == -math.inf
    assert parse_literal("[inf, -inf]") == [math.inf, -math.inf]


@pytest.mark.parametrize(
    "text", ["__import__('os')", "f(1)", "x", "1 + 2", "[i for i in ()]", "float(print)", "..."]
)
def test_non_literals_are_rejected(text: str) -> None:
    with pytest.raises(ValueError):
        parse_literal(text)


@pytest.mark.parametrize(
    ("text", "expected"),
    [("x=1", ("x", 1)), (" k = [1, 2]", ("k", [1, 2])), ("_a2='x=1'", ("_a2", "x=1")),
     ("'x=1'", (None, "x=1")), ("nan", (None, None)), ("set()", (None, set()))],
)
def test_keyword_arguments_are_name_equals_literal(
    text: str, expected: tuple[str | None, object]
) -> None:
    name, value = parse_argument(text)
    assert name == expected[0]
    if text == "nan":
        assert isinstance(value, float) and math.isnan(value)
    else:
        assert value == expected[1]


@pytest.mark.parametrize("text", ["x==1", "x=", "x=y", "1=2", "f(x=1)"])
def test_bad_keyword_arguments_are_rejected(text: str) -> None:
    with pytest.raises((ValueError, SyntaxError)):
        parse_argument(text)


def test_calls_pass_keywords_and_leave_defaults_out() -> None:
    src = "def f(a, /, b=10, *, c=100):\n    return (a, b, c)\n"
    calls = [["1"], ["1", "2"], ["1", "c=3"], ["1", "b=2", "c=3"], ["a=1"], ["1", "d=0"]]
    got = run_calls(src, "f", calls, limits=QUICK)
    assert [b.text for b in got[:4]] == ["(1, 10, 100)", "(1, 2, 100)", "(1, 10, 3)",
                                          "(1, 2, 3)"]
    assert got[4].kind is BehaviourKind.RAISED and got[4].value == "TypeError"
    assert got[5].kind is BehaviourKind.RAISED and got[5].value == "TypeError"


def test_keyword_arguments_count_for_mutation() -> None:
    src = "def f(*, xs):\n    xs.append(1)\n"
    [b] = run_calls(src, "f", [["xs=[0]"]], limits=QUICK)
    assert b.args_after == canonical(([0, 1],))


@pytest.mark.parametrize("call", [["x=1", "2"], ["x=1", "x=2"]])
def test_malformed_calls_are_the_callers_error(call: list[str]) -> None:
    with pytest.raises(ValueError):
        run_calls("def f(x):\n    return x\n", "f", [call], limits=QUICK)


def test_calls_share_the_module_so_a_default_object_persists() -> None:
    src = "def f(x, acc=[]):\n    acc.append(x)\n    return len(acc)\n"
    got = run_calls(src, "f", [["1"], ["1"]], limits=QUICK)
    assert [b.text for b in got] == ["1", "2"]


def test_canonical_distinguishes_types_but_not_nan_or_zero_sign() -> None:
    assert canonical(1) != canonical(1.0) != canonical(True)
    assert canonical(1) != canonical(True)
    assert canonical(float("nan")) == canonical(float("nan"))
    assert canonical(-0.0) == canonical(0.0)
    assert canonical([1, 2]) != canonical((1, 2))
    assert canonical({"b": 1, "a": 2}) == canonical({"a": 2, "b": 1})
    assert canonical({3, 1, 2}) == canonical({2, 3, 1})
    assert canonical(10**400) != canonical(10**400 + 1)


def test_canonical_handles_cycles_and_objects() -> None:
    cyclic: list[object] = [1]
    cyclic.append(cyclic)
    assert canonical(cyclic) == ("list", (("int", 1), ("cycle",)))

    class Point:
        def __init__(self, x: int) -> None:
            self.x = x

    assert canonical(Point(1)) == canonical(Point(1)) != canonical(Point(2))
    # reprs with addresses are compared without the address
    assert canonical(object()) == canonical(object())


class _Tag:
    def __init__(self, v: object) -> None:
        self.v = v


class _OtherTag(_Tag):
    pass


class _Slotted:
    __slots__ = ("v", "w")

    def __init__(self, v: object) -> None:
        self.v = v


class _ShowsAddress:
    def __init__(self, v: object) -> None:
        self.v = v

    def __repr__(self) -> str:
        return f"<ShowsAddress at {hex(id(self))}>"


class _ShowsState(_ShowsAddress):
    def __repr__(self) -> str:
        return f"ShowsState({self.v!r})"


def test_canonical_never_compares_addresses_but_does_states_and_types() -> None:
    # Distinct objects (at other addresses) in equal states are equal, an address in a
    # string too (`repr(obj)` returned), so running a version twice gives the same.
    for make in (_Tag, _Slotted, _ShowsAddress, _ShowsState):
        assert canonical(make(1)) == canonical(make(1)), make
    assert canonical(repr(_Tag(1))) == canonical(repr(_Tag(1)))
    assert canonical({f"made {_Tag(1)!r}": [_Slotted(2)]}) == canonical(
        {f"made {_Tag(1)!r}": [_Slotted(2)]})
    # Another state, another type, another text is a difference.
    for make in (_Tag, _Slotted, _ShowsAddress, _ShowsState):
        assert canonical(make(1)) != canonical(make(2)), make
    assert canonical(_Tag(1)) != canonical(_OtherTag(1))
    both = _Slotted(1)
    both.w = None
    assert canonical(_Slotted(1)) != canonical(both)  # an unset slot is not None
    assert canonical(repr(_Tag(1))) != canonical(repr(_OtherTag(1)))
    assert canonical("jump at 0x1f") != canonical("jump at 0x2f")  # a number, no address

    def g() -> None: ...

    def h() -> None: ...

    assert canonical(g) != canonical(h)
    # What a person reads: the state, or the repr, without the address.
    assert _child._value_text(_Tag(3)) == "<_Tag object: v=3>"
    assert _child._value_text(_Slotted(3)) == "<_Slotted object: v=3>"
    assert _child._value_text(f"made {_Tag(1)!r}").endswith("_Tag object at 0x?>'")
    assert " at 0x?" in _child._exception_text(ValueError(f"bad {_Tag(1)!r}"))


# ---------------------------------------------------------------- behaviours


def test_returned_raised_and_mutation() -> None:
    source = (
        "def f(xs, d):\n"
        "    xs.append(len(d))\n"
        "    if not d:\n"
        "        raise KeyError('empty')\n"
        "    return sorted(d)\n"
    )
    ok, err = run_calls(source, "f", [["[1]", "{'b': 1, 'a': 2}"], ["[]", "{}"]], limits=QUICK)
    assert ok.kind is BehaviourKind.RETURNED
    assert ok.value == canonical(["a", "b"])
    assert ok.text == "['a', 'b']"
    assert ok.args_after == canonical(([1, 2], {"a": 2, "b": 1}))
    assert err.kind is BehaviourKind.RAISED
    assert err.value == "KeyError" and err.text == "KeyError: 'empty'"
    assert err.args_after == canonical(([0], {}))


def test_a_returned_coroutine_is_awaited_and_compared_by_what_that_gives() -> None:
    source = (
        "import asyncio\n\n"
        "async def f(xs):\n"
        "    await asyncio.sleep(0)\n"
        "    xs.append(0)\n"
        "    if len(xs) > 1:\n"
        "        raise ValueError('long')\n"
        "    return xs\n"
    )
    ok, err = run_calls(source, "f", [["[]"], ["[1]"]], limits=QUICK)
    assert ok.kind is BehaviourKind.RETURNED and not ok.refused
    assert ok.value == ("coroutine", "return", canonical([0]))
    assert ok.text == "<coroutine: awaiting it returns [0]>"
    assert ok.args_after == canonical(([0],))  # what awaiting it did, too
    assert err.kind is BehaviourKind.RETURNED  # the call returned; awaiting raised
    assert err.value == ("coroutine", "raise", "ValueError")
    assert err.text == "<coroutine: awaiting it raises ValueError: long>"


def test_static_method_entry_and_special_floats() -> None:
    source = "class C:\n    @staticmethod\n    def g(x):\n        return x * 0\n"
    b = one(source, "float('inf')", entry="C.g")
    assert b.kind is BehaviourKind.RETURNED and b.value == canonical(float("nan"))


def test_long_text_is_truncated() -> None:
    b = one("def f(n):\n    return 'x' * n\n", "100000")
    assert b.kind is BehaviourKind.RETURNED
    assert len(b.text) <= 200
    assert b.value != one("def f(n):\n    return 'x' * n + 'y'\n", "100000").value


def test_module_level_exception_applies_to_every_call() -> None:
    behaviours = run_calls("raise ValueError('at import')\ndef f():\n    return 1\n", "f",
                           [[], []], limits=QUICK)
    assert [b.kind for b in behaviours] == [BehaviourKind.RAISED] * 2
    assert behaviours[0].text == "ValueError: at import"


def test_module_level_hang_applies_to_every_call() -> None:
    behaviours = run_calls("while True:\n    pass\ndef f():\n    return 1\n", "f", [[], []],
                           limits=Limits(wall_s=5.0, call_s=0.5))
    assert [b.kind for b in behaviours] == [BehaviourKind.HUNG] * 2


def test_missing_entry_raises_attribute_error() -> None:
    b = one("def f():\n    return 1\n", entry="g")
    assert b.kind is BehaviourKind.RAISED and b.value == "AttributeError"


def test_bad_literal_is_the_callers_error() -> None:
    with pytest.raises(ValueError):
        run_calls("def f(x):\n    return x\n", "f", [["os.system('x')"]])


# ---------------------------------------------------------------- containment


def test_infinite_loop_is_stopped_by_the_call_timer_and_later_calls_run() -> None:
    source = "def f(n):\n    while n:\n        pass\n    return n\n"
    start = time.monotonic()
    hung, fine = run_calls(source, "f", [["1"], ["0"]], limits=Limits(wall_s=8, call_s=0.5))
    assert time.monotonic() - start < 4
    assert hung.kind is BehaviourKind.HUNG and "0.5 s" in hung.text
    assert fine.kind is BehaviourKind.RETURNED and fine.text == "0"


def test_loop_that_swallows_the_timer_is_still_stopped() -> None:
    source = (
        "def f():\n"
        "    while True:\n"
        "        try:\n"
        "            while True:\n"
        "                pass\n"
        "        except BaseException:\n"
        "            pass\n"
    )
    b = one(source, limits=Limits(wall_s=8, call_s=0.5))
    assert b.kind is BehaviourKind.HUNG
    assert_next_run_works()


def test_uninterruptible_c_loop_is_killed_and_the_rest_runs_in_a_new_child() -> None:
    # sum() over a range runs in C without checking signals; the parent kills the child.
    source = "def f(n):\n    return sum(range(n))\n"
    limits = Limits(wall_s=8, call_s=0.3)
    slow, fine = run_calls(source, "f", [["1000000000000"], ["5"]], limits=limits)
    assert slow.kind is BehaviourKind.HUNG and "stopped it" in slow.text
    assert fine.kind is BehaviourKind.RETURNED and fine.text == "10"


def test_memory_bomb() -> None:
    source = "def f():\n    blocks = []\n    while True:\n        blocks.append(bytearray(10**7))\n"
    b = one(source, limits=Limits(wall_s=8, call_s=3, memory_mb=256))
    assert b.kind in (BehaviourKind.RAISED, BehaviourKind.RESOURCE)
    if b.kind is BehaviourKind.RAISED:
        assert b.value == "MemoryError"
    assert_next_run_works()


def test_fork_bomb() -> None:
    source = (
        "import os\n"
        "def f():\n"
        "    n = 0\n"
        "    for _ in range(1000):\n"
        "        try:\n"
        "            if os.fork() == 0:\n"
        "                while True:\n"
        "                    pass\n"
        "            n += 1\n"
        "        except OSError:\n"
        "            pass\n"
        "    return n\n"
    )
    b = one(source)
    assert b.kind is BehaviourKind.RETURNED and b.text == "0"
    # and with the audit hook out of the way (extra processes allowed), the rlimit holds
    b = one(source, limits=Limits(wall_s=8, call_s=1, processes=2))
    assert b.kind in (BehaviourKind.RETURNED, BehaviourKind.HUNG)
    if b.kind is BehaviourKind.RETURNED:
        assert int(b.text) <= 2
    assert_next_run_works()


def test_subprocess_is_refused() -> None:
    source = "import subprocess\ndef f():\n    return subprocess.run(['true']).returncode\n"
    b = one(source)
    assert b.kind is BehaviourKind.RAISED and b.value == "PermissionError"


@pytest.mark.parametrize("how", ["open", "os_open"])
def test_write_outside_the_temp_dir_fails(tmp_path: Path, how: str) -> None:
    tmp_path.chmod(0o777)  # even a directory anyone may write to
    target = tmp_path / "escaped.txt"
    writer = (
        f"    open({str(target)!r}, 'w').write('x')\n"
        if how == "open"
        else f"    import os\n    os.close(os.open({str(target)!r}, os.O_CREAT | os.O_WRONLY))\n"
    )
    b = one(f"def f():\n{writer}    return 'written'\n")
    assert b.kind is BehaviourKind.RAISED
    assert not target.exists()
    assert_next_run_works()


def test_write_to_tmp_fails_even_without_the_audit_hook() -> None:
    # ctypes is refused by the hook, but run_script may allow it: the mounts still hold.
    name = f"/tmp/veribot-escape-{os.getpid()}"
    script = (
        "import ctypes, os\n"
        "libc = ctypes.CDLL(None, use_errno=True)\n"
        f"fd = libc.open({name.encode()!r}, os.O_CREAT | os.O_WRONLY, 0o644)\n"
        "print(fd, ctypes.get_errno())\n"
    )
    run = run_script(script, limits=QUICK, allow_ctypes=True)
    assert run.returncode == 0, run.stderr
    assert run.stdout.split()[0] == "-1"
    assert not os.path.exists(name)


def test_write_inside_the_temp_dir_works() -> None:
    b = one("def f():\n    open('out.txt', 'w').write('x')\n    return open('out.txt').read()\n")
    assert b.kind is BehaviourKind.RETURNED and b.text == "'x'"


def test_file_size_limit() -> None:
    b = one("def f():\n    open('big', 'w').write('x' * 3_000_000)\n", limits=QUICK)
    assert b.kind is BehaviourKind.RESOURCE and b.value == "file-size"


def _listener() -> tuple[socket.socket, int]:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    server.setblocking(False)
    return server, server.getsockname()[1]


def test_network_connect_never_arrives() -> None:
    server, port = _listener()
    with server:
        source = (
            "import socket\n"
            "def f(port):\n"
            "    socket.create_connection(('127.0.0.1', port), timeout=1).sendall(b'hi')\n"
            "    return 'connected'\n"
        )
        b = one(source, str(port))
        assert b.kind is BehaviourKind.RAISED
        with pytest.raises(BlockingIOError):
            server.accept()
    assert_next_run_works()


def test_network_connect_without_the_audit_hook_still_fails() -> None:
    server, port = _listener()
    with server:
        script = (
            "import ctypes, socket\n"  # ctypes allowed: only the audit hook's ctypes rule
            "s = socket.socket()\n"
            "try:\n"
            f"    s.connect(('127.0.0.1', {port}))\n"
            "    print('connected')\n"
            "except OSError as exc:\n"
            "    print('refused', type(exc).__name__)\n"
        )
        run = run_script(script, limits=QUICK, allow_ctypes=True)
        assert run.stdout.startswith("refused")
        with pytest.raises(BlockingIOError):
            server.accept()


def test_deep_recursion() -> None:
    b = one("def f(n):\n    return f(n + 1)\n", "0")
    assert b.kind is BehaviourKind.RAISED and b.value == "RecursionError"
    source = "import sys\nsys.setrecursionlimit(10**7)\ndef f(n):\n    return f(n + 1)\n"
    b = one(source, "0", limits=Limits(wall_s=8, call_s=1))
    assert b.kind is not BehaviourKind.RETURNED
    assert_next_run_works()


def test_output_flooding_is_capped() -> None:
    script = "import os\nfor _ in range(20000):\n    os.write(1, b'x' * 1000)\nprint('done')\n"
    run = run_script(script, limits=QUICK)
    assert run.returncode == 0
    assert len(run.stdout) <= 256 * 1024
    source = (
        "import os\n"
        "def f():\n"
        "    while True:\n"
        "        print('x' * 10000)\n"
        "        os.write(2, b'y' * 10000)\n"
    )
    b = one(source, limits=Limits(wall_s=8, call_s=0.5))
    assert b.kind is BehaviourKind.HUNG
    assert_next_run_works()


def test_exit_inside_a_call() -> None:
    exits = "import os, sys\ndef f(how):\n    sys.exit(3) if how else os._exit(4)\n"
    raised, crashed, = run_calls(exits, "f", [["True"], ["False"]], limits=QUICK)
    assert raised.kind is BehaviourKind.RAISED and raised.value == "SystemExit"
    assert crashed.kind is BehaviourKind.CRASHED and "status 4" in crashed.text


def test_segfault_is_a_crash_and_the_next_call_still_runs() -> None:
    source = (
        "import faulthandler\n"
        "def f(x):\n"
        "    if x:\n"
        "        faulthandler._sigsegv()\n"
        "    return x\n"
    )
    crashed, fine = run_calls(source, "f", [["1"], ["0"]], limits=QUICK)
    assert crashed.kind is BehaviourKind.CRASHED and "SIGSEGV" in crashed.text
    assert fine.kind is BehaviourKind.RETURNED


def test_wall_clock_limit_marks_unrun_calls() -> None:
    source = "def f():\n    while True:\n        pass\n"
    behaviours = run_calls(source, "f", [[]] * 6, limits=Limits(wall_s=1.5, call_s=0.6))
    assert all(b.kind is BehaviourKind.HUNG for b in behaviours)
    assert behaviours[-1].value == "not-run"


def test_run_script_timeout_kills_the_process_group() -> None:
    start = time.monotonic()
    run = run_script("while True:\n    pass\n", limits=Limits(wall_s=0.5))
    assert run.timed_out and run.returncode is None
    assert time.monotonic() - start < 3


def test_run_script_files_stdin_and_environment() -> None:
    script = (
        "import os, sys\n"
        "print(open('data/in.txt').read(), sys.stdin.read(), sorted(os.environ))\n"
    )
    run = run_script(script, {"data/in.txt": "hello"}, stdin="world", limits=QUICK)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == (
        "hello world ['HOME', 'LANG', 'LOGNAME', 'PATH', 'PWD', 'SHELL', 'TMPDIR', 'TZ', 'USER']")


def test_run_script_error_status() -> None:
    run = run_script("raise SystemExit(5)\n", limits=QUICK)
    assert run.returncode == 5 and not run.timed_out
    run = run_script("1/0\n", limits=QUICK)
    assert run.returncode == 1 and "ZeroDivisionError" in run.stderr


def test_files_cannot_escape_the_directory() -> None:
    with pytest.raises(ValueError):
        run_script("pass", {"../x.py": ""})
