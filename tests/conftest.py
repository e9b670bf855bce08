"""The `heavy` marker: slow cases kept out of the default run, never out of the suite.

The project's rule: speed is measured in benchmarks, and long runs (generated programs,
mutants, real commits, sandbox-heavy adversarial pairs) are benchmark commands of which
the test suite runs a small slice. A parametrized family whose cases each run the
sandboxed engine for seconds keeps its fast cases and a representative or two of its slow
ones in the default run; its other slow cases are named in the test module's
``HEAVY_CASES`` (test function name -> the ids of those cases) and get the ``heavy`` mark
here. A whole test may also carry ``@pytest.mark.heavy`` itself.

The default run (``addopts`` in pyproject.toml) deselects them with ``-m "not heavy"``;
``python -m pytest -m heavy`` runs exactly them, ``python -m pytest -m ""`` runs everything.
A case named in ``HEAVY_CASES`` that was not collected (renamed, say) is listed at the end
of a run that collected its whole module; the renamed case then runs in the default run,
which is the safe side.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from types import ModuleType
from typing import Any

import pytest

_STALE = pytest.StashKey[list[str]]()


@pytest.hookimpl(tryfirst=True)  # before `-m` deselects by marks
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    seen: dict[ModuleType, set[tuple[str, str]]] = {}
    for item in items:
        module = getattr(item, "module", None)
        heavy: Mapping[str, Collection[str]] | None = getattr(module, "HEAVY_CASES", None)
        callspec = getattr(item, "callspec", None)
        if module is None or not heavy:
            continue
        cases = seen.setdefault(module, set())
        name = getattr(item, "originalname", item.name)
        if callspec is not None and callspec.id in heavy.get(name, ()):
            item.add_marker(pytest.mark.heavy)
            cases.add((name, callspec.id))
    # Stale names can only be told when whole modules were collected (no `file::test`).
    if any("::" in str(arg) for arg in config.args):
        return
    config.stash[_STALE] = [
        f"{module.__name__}: {name}[{case}]"
        for module, cases in seen.items()
        for name, ids in module.HEAVY_CASES.items()
        for case in sorted(ids)
        if (name, case) not in cases
    ]


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    stale = config.stash.get(_STALE, [])
    if stale:
        terminalreporter.write_sep("=", "HEAVY_CASES naming no collected case (update them)")
        for line in stale:
            terminalreporter.write_line(line)
