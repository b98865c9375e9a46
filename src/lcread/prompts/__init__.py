"""Prompt templates as text files, rendered with named placeholders that fail on a missing key."""

from __future__ import annotations

import functools
import re
import string
from importlib import resources


@functools.lru_cache(maxsize=None)
def template(name: str) -> str:
    return resources.files(__package__).joinpath(name).read_text(encoding="utf-8")


def render(name: str, **values: object) -> str:
    """Fill `{placeholders}` in prompts/<name>.txt; a missing value raises KeyError."""
    text = template(f"{name}.txt")
    needed = {field for _, field, _, _ in string.Formatter().parse(text) if field}
    missing = needed - values.keys()
    if missing:
        raise KeyError(f"prompt {name!r} needs {', '.join(sorted(missing))}")
    return text.format(**values).strip()
