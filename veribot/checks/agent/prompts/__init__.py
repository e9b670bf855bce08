"""Prompt templates as data files, loaded by name and filled with ``string.Template``.

Each template is ``<name>.txt`` in this folder. Placeholders are ``$field``; a missing
field is an error (``KeyError``), so a template and its caller cannot drift apart
silently. ``string.Template`` is used rather than ``str.format`` because the values are
code, full of braces.
"""

from __future__ import annotations

import functools
import hashlib
import string
from importlib import resources

PROMPT_VERSION = 2  # bump when a template's meaning changes (it is part of cache keys anyway)


@functools.cache
def load(name: str) -> str:
    """The text of template ``name`` (without ``.txt``)."""
    if not name.replace("_", "").isalnum():
        raise ValueError(f"not a prompt name: {name!r}")
    return resources.files(__name__).joinpath(f"{name}.txt").read_text(encoding="utf-8")


def render(name: str, **fields: str) -> str:
    """Template ``name`` with every ``$field`` substituted."""
    return string.Template(load(name)).substitute(fields)


def data_block(name: str, content: str) -> str:
    """``content`` fenced as DATA, never instructions (see the system prompts).

    The fence carries an id derived from the content, so the content cannot contain its
    own closing line, and the same content always gives the same text (cache keys stay
    stable).
    """
    tag = "".join(c if c.isalnum() or c in "-_" else "_" for c in name) or "data"
    digest = hashlib.sha256(content.encode("utf-8")).hexdigest()[:12]
    return f"<<<DATA {tag} {digest}\n{content.rstrip()}\nDATA {tag} {digest}>>>"
