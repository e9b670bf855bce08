"""``pyclasses.hierarchy`` orders a class's bases as Python does (C3), or refuses."""

from __future__ import annotations

import ast
import random

import pytest

from veribot.checks.lang import pyclasses
from veribot.checks.lang.pyvalues import Unsupported


def _hierarchies(seed: int) -> str:
    """Module text: eight classes, each deriving from up to three earlier ones."""
    rng = random.Random(seed)
    lines = ["import abc", "import typing", "T = typing.TypeVar('T')"]
    for i in range(8):
        earlier = [f"K{j}" for j in range(i)]
        bases = rng.sample(earlier, min(len(earlier), rng.randint(0, 3)))
        if rng.random() < 0.2:
            bases.append("abc.ABC")
        if rng.random() < 0.2:
            bases.insert(0, "typing.Generic[T]")
        lines.append(f"class K{i}({', '.join(bases)}):\n    pass")
    return "\n".join(lines) + "\n"


def _shown(c: type) -> str:
    """A class as ``Hierarchy.names`` shows it."""
    if c is object:
        return "object"
    return f"{c.__module__}.{c.__name__}" if c.__module__ in ("abc", "typing") else c.__name__


@pytest.mark.parametrize("seed", range(40))
def test_the_order_is_pythons(seed: int) -> None:
    source = _hierarchies(seed)
    tree = ast.parse(source)
    namespace: dict[str, object] = {}
    for node in tree.body:
        try:
            exec(compile(ast.Module([node], []), "<test>", "exec"), namespace)
        except TypeError:  # Python cannot order these bases: neither may the reader
            assert isinstance(node, ast.ClassDef)
            with pytest.raises(Unsupported):
                pyclasses.hierarchy(tree, node)
            return
        if isinstance(node, ast.ClassDef):
            real = namespace[node.name]
            assert isinstance(real, type)
            expected = [_shown(c) for c in real.__mro__]
            assert pyclasses.hierarchy(tree, node).names.split(", ") == expected


def test_a_base_from_elsewhere_is_refused() -> None:
    tree = ast.parse("from collections import OrderedDict\nclass C(OrderedDict):\n    pass\n")
    node = tree.body[1]
    assert isinstance(node, ast.ClassDef)
    with pytest.raises(Unsupported, match="outside the module"):
        pyclasses.hierarchy(tree, node)


def test_a_neutral_name_rebound_in_the_module_is_not_neutral() -> None:
    tree = ast.parse("from abc import ABC\nABC = dict\nclass C(ABC):\n    pass\n")
    node = tree.body[2]
    assert isinstance(node, ast.ClassDef)
    with pytest.raises(Unsupported):
        pyclasses.hierarchy(tree, node)
