"""Streams as search inputs, and ``@contextmanager`` results compared by using them.

A parameter annotated as a text or binary stream gets a fresh ``io.StringIO`` /
``io.BytesIO`` per call of each version, compared after the call by its state; a
returned ``@contextmanager`` object is entered and left (``_child.drain``). Neither is
modelled: a pair of them is refuted by executing both versions, never verified.
"""

from __future__ import annotations

import ast
import contextlib
import io
import time

import pytest

from veribot.checks.equivalence import Budget, check_pair
from veribot.checks.lang.pyinfer import literal_type
from veribot.checks.lang.pytypes import StreamT, Unknown, is_known, parse_type
from veribot.checks.sandbox import Limits
from veribot.checks.sandbox._child import Entered, canonical, drain, parse_literal
from veribot.checks.search.differential import confirm
from veribot.checks.search.difftest import search, stream_note, type_to_json
from veribot.checks.search.harvest import Call, first_difference, from_test_file
from veribot.checks.verdict import Result, Verdict

FAST = Limits(call_s=0.5)
SEARCH = Budget(timeout_s=15)
NO_SEARCH = Budget(timeout_s=8, search=False)


# --------------------------------------------------------------------------- types


@pytest.mark.parametrize("text", ["t.TextIO", "typing.TextIO", "TextIO", "IO[str]",
                                  "typing.IO[str]", "io.TextIOBase", "io.StringIO"])
def test_text_stream_annotations_are_searched_as_stringio(text: str) -> None:
    t = parse_type(text)
    assert t == StreamT(False, text)
    assert not is_known(t)  # the model never gets one
    assert type_to_json(t) == {"k": "stream", "binary": False}
    assert stream_note({"out": t}) == f"`out: {text}` searched as io.StringIO"


@pytest.mark.parametrize("text", ["typing.BinaryIO", "IO[bytes]", "io.BytesIO"])
def test_binary_stream_annotations_are_searched_as_bytesio(text: str) -> None:
    assert parse_type(text) == StreamT(True, text)
    assert stream_note({"out": parse_type(text)}) == f"`out: {text}` searched as io.BytesIO"


def test_other_io_annotations_stay_unknown() -> None:
    assert parse_type("IO[int]") == Unknown("IO[int]")
    assert parse_type("io.TextIOWrapper") == Unknown("io.TextIOWrapper")


# --------------------------------------------------------------------------- the child


def test_a_stream_literal_is_a_fresh_stream_each_time_it_is_read() -> None:
    a = parse_literal("io.StringIO('ab\\n')", objects=True)
    b = parse_literal("io.StringIO('ab\\n')", objects=True)
    assert isinstance(a, io.StringIO) and isinstance(b, io.StringIO) and a is not b
    a.write("x")
    assert b.getvalue() == "ab\n"
    assert parse_literal("io.BytesIO(b'\\x00')", objects=True).getvalue() == b"\x00"  # type: ignore[attr-defined]
    with pytest.raises(ValueError):
        parse_literal("io.StringIO(b'x')", objects=True)  # a text stream holds text
    with pytest.raises(ValueError):
        parse_literal("io.StringIO('x')")  # only where a call's objects are read


def test_a_stream_is_encoded_by_contents_position_and_closed() -> None:
    at_end = io.StringIO("ab")
    at_end.read()
    assert canonical(io.StringIO("ab")) != canonical(at_end)  # position
    assert canonical(io.StringIO("ab")) != canonical(io.StringIO("ac"))
    assert canonical(io.StringIO("ab")) == canonical(io.StringIO("ab"))
    assert canonical(io.StringIO("ab")) != canonical(io.BytesIO(b"ab"))
    closed = io.StringIO("ab")
    closed.close()
    assert canonical(closed) == ["StringIO", "closed"]


def test_a_returned_stream_is_not_read_by_drain() -> None:
    stream = io.StringIO("line 1\nline 2\n")
    assert drain(stream) is stream
    assert stream.tell() == 0


@contextlib.contextmanager
def _yields(value: object, then: str = "") -> object:
    yield value
    if then == "raise":
        raise KeyError(then)
    if then == "again":
        yield value


def test_a_contextmanager_result_is_entered_and_left() -> None:
    used = drain(_yields(3))
    assert isinstance(used, Entered)
    assert canonical(used) == ["entered", ["return", ["int", 3]], ["return", ["bool", False]]]
    assert canonical(drain(_yields(3))) != canonical(drain(_yields(4)))
    assert canonical(drain(_yields(3, "raise")))[2] == ["raise", "KeyError"]
    assert canonical(drain(_yields(3, "again")))[2] == ["raise", "RuntimeError"]


def test_a_contextmanager_that_does_not_yield_raises_on_entering_and_is_not_left() -> None:
    @contextlib.contextmanager
    def never() -> object:
        if False:
            yield

    assert canonical(drain(never())) == ["entered", ["raise", "RuntimeError"]]


def test_only_generator_context_managers_are_entered() -> None:
    class Counted(contextlib.AbstractContextManager[int]):
        entered = 0

        def __enter__(self) -> int:
            Counted.entered += 1
            return 1

        def __exit__(self, *exc: object) -> None:
            return None

    class Sub(contextlib._GeneratorContextManager[int]):
        pass

    assert not isinstance(drain(Counted()), Entered)
    assert Counted.entered == 0
    assert not isinstance(drain(contextlib.nullcontext(5)), Entered)
    assert not isinstance(drain(Sub(_gen, (), {})), Entered)


def _gen() -> object:
    yield 1


# --------------------------------------------------------------------------- pairs

NULLPAGER = '''
import contextlib
import typing as t


@contextlib.contextmanager
def nullpager(stream: t.TextIO, color: bool | None = None) -> t.Iterator[tuple[t.TextIO, bool]]:
    """Simply print unformatted text."""
    if color is None:
        color = False
    yield stream, color
'''
NULLPAGER_AFTER = NULLPAGER.replace("    if color is None:\n        color = False\n", "")


def _reproduces(before: str, after: str, entry: str, args: tuple[str, ...]) -> bool:
    return confirm(before, after, entry, list(args), found_by="test") is not None


def _refuted(result: Result, before: str, after: str, entry: str) -> None:
    assert result.verdict is Verdict.REFUTED, (result.reason, result.detail, result.notes)
    assert result.counterexample is not None
    assert _reproduces(before, after, entry, result.counterexample.args)


def _neither(result: Result) -> None:
    """Not verified (nothing here is modelled) and not refuted (the versions agree)."""
    assert result.verdict is Verdict.INCONCLUSIVE, (result.verdict, result.detail)


def test_search_finds_the_nullpager_difference_with_a_readable_stream() -> None:
    outcome = search(NULLPAGER, NULLPAGER_AFTER, "nullpager",
                     {"stream": parse_type("t.TextIO"), "color": parse_type("bool | None")},
                     deadline_s=10, limits=FAST)
    cex = outcome.counterexample
    assert cex is not None, outcome.note
    assert cex.args[0].startswith("io.StringIO(") and cex.args[1] == "None"
    assert "entering it returns" in cex.before.text and "False)" in cex.before.text
    assert "None)" in cex.after.text


def test_the_nullpager_pair_is_refuted_and_the_verdict_names_the_stream() -> None:
    result = check_pair(NULLPAGER, NULLPAGER_AFTER, "nullpager", None, budget=SEARCH)
    _refuted(result, NULLPAGER, NULLPAGER_AFTER, "nullpager")
    assert "`stream: t.TextIO` searched as io.StringIO" in result.notes


WRITER = '''
import contextlib
import typing as t


@contextlib.contextmanager
def framed(stream: t.TextIO, title: str) -> t.Iterator[t.TextIO]:
    stream.write("[" + title + "]\\n")
    yield stream
    stream.write("[end]\\n")
'''


def test_equal_context_managers_that_write_to_the_stream_stay_equal() -> None:
    after = WRITER.replace('    yield stream\n    stream.write("[end]\\n")\n',
                           '    try:\n        yield stream\n    finally:\n'
                           '        stream.write("[end]" + "\\n")\n')
    assert after != WRITER
    _neither(check_pair(WRITER, after, "framed", None, budget=SEARCH))


def test_a_context_manager_whose_exit_differs_is_refuted() -> None:
    after = WRITER.replace('stream.write("[end]\\n")', 'stream.write("[end]")')
    _refuted(check_pair(WRITER, after, "framed", None, budget=SEARCH), WRITER, after, "framed")


def test_a_context_manager_whose_exit_raises_is_refuted() -> None:
    after = WRITER.replace('    stream.write("[end]\\n")\n',
                           '    stream.write("[end]\\n")\n    if title:\n'
                           '        raise ValueError(title)\n')
    result = check_pair(WRITER, after, "framed", None, budget=SEARCH)
    _refuted(result, WRITER, after, "framed")
    assert "leaving it raises ValueError" in result.counterexample.after.text  # type: ignore[union-attr]


@pytest.mark.heavy  # 15 s of random testing; the default run keeps the equal pair above
def test_a_pair_that_differs_only_in_when_the_body_runs_is_not_refuted() -> None:
    # The caller's body runs at the yield: with an empty body the stream ends the same,
    # and no input shows a difference. Not verified either (nothing is modelled).
    after = WRITER.replace('    stream.write("[" + title + "]\\n")\n    yield stream\n',
                           '    yield stream\n    stream.write("[" + title + "]\\n")\n')
    assert after != WRITER
    _neither(check_pair(WRITER, after, "framed", None, budget=SEARCH))


def test_equivalent_stream_functions_are_not_refuted() -> None:
    before = '''
import typing as t


def lines(stream: t.TextIO, sep: str) -> list[str]:
    stream.write(sep)
    stream.write("\\n")
    stream.seek(0)
    return stream.readlines()
'''
    after = '''
import typing as t


def lines(stream: t.TextIO, sep: str) -> list[str]:
    stream.write(sep + "\\n")
    stream.seek(0)
    return [line for line in stream]
'''
    result = check_pair(before, after, "lines", None, budget=SEARCH)
    _neither(result)
    assert "`stream` (`t.TextIO`): the model has no streams" in result.detail
    assert any(n.startswith("random testing tried") for n in result.notes)


def test_a_stream_left_at_a_different_position_is_refuted() -> None:
    before = "import typing as t\n\ndef head(s: t.TextIO) -> str:\n    return s.read(2)\n"
    after = ("import typing as t\n\ndef head(s: t.TextIO) -> str:\n"
             "    text = s.read()\n    return text[:2]\n")
    result = check_pair(before, after, "head", None, budget=SEARCH)
    _refuted(result, before, after, "head")
    assert result.counterexample is not None
    assert result.counterexample.args[0].startswith("io.StringIO(")


def test_binary_streams_are_searched() -> None:
    before = ("import typing as t\n\ndef put(out: t.BinaryIO, n: int) -> None:\n"
              "    out.write(bytes([n % 256]))\n")
    after = before.replace("n % 256", "n % 255")
    result = check_pair(before, after, "put", None, budget=SEARCH)
    _refuted(result, before, after, "put")
    assert result.counterexample is not None
    assert result.counterexample.args[0].startswith("io.BytesIO(")


CM_INT = '''
import contextlib


@contextlib.contextmanager
def scope(x: int):
    yield x
'''


def test_a_contextmanager_pair_differing_in_what_it_yields_is_never_verified() -> None:
    after = CM_INT.replace("yield x", "yield x + 1")
    _neither(check_pair(CM_INT, after, "scope", None, budget=NO_SEARCH))
    _refuted(check_pair(CM_INT, after, "scope", None, budget=SEARCH), CM_INT, after, "scope")


def test_a_contextmanager_pair_differing_after_its_yield_is_never_verified() -> None:
    after = CM_INT.replace("yield x", "yield x\n    x = 1 // (x - 7)")
    _neither(check_pair(CM_INT, after, "scope", None, budget=NO_SEARCH))


# --------------------------------------------------------------------------- harvest


def test_a_test_that_passes_a_stream_gives_a_call() -> None:
    text = ("import io\nfrom io import StringIO\nfrom pkg.mod import framed\n\n"
            "def test_it():\n    framed(io.StringIO('a\\nb'), 'x')\n"
            "    s = StringIO()\n    framed(s, 'y')\n    framed(io.BytesIO(b'z'), 'z')\n")
    calls = from_test_file(text, "framed", "pkg.mod", "t.py", "after")
    assert [c.args for c in calls] == [("io.StringIO('a\\nb')", "'x'"),
                                       ("io.StringIO()", "'y'"),
                                       ("io.BytesIO(b'z')", "'z'")]


def test_dropping_the_contextmanager_decorator_is_never_verified() -> None:
    after = CM_INT.replace("@contextlib.contextmanager\n", "")
    _neither(check_pair(CM_INT, after, "scope", None, budget=NO_SEARCH))
    _refuted(check_pair(CM_INT, after, "scope", None, budget=SEARCH), CM_INT, after, "scope")


def test_a_harvested_stream_argument_types_an_unannotated_parameter() -> None:
    node = ast.parse("io.BytesIO(b'a')", mode="eval").body
    assert literal_type(node) == StreamT(True, "io.BytesIO")


def test_a_harvested_call_with_a_stream_refutes() -> None:
    before = "def emit(out, text):\n    out.write(text)\n"
    after = "def emit(out, text):\n    out.write(text.upper())\n"
    calls = [Call(("io.StringIO('ab\\n')", "'x'"), "a call in t.py line 3 (after revision)")]
    found, _ = first_difference(before, after, "emit", calls, limits=FAST,
                                until=time.monotonic() + 30)
    assert found is not None
    assert found.args == ("io.StringIO('ab\\n')", "'x'")
    assert found.before.args_after != found.after.args_after  # the stream after the call
