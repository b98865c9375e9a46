"""What a command showed the model, piece by piece: the raw material citations are made from."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Shown:
    """A piece of a document line that a tool put in front of the model."""

    doc: str
    line: int
    start: int
    """Character offset in the line where the piece begins."""
    text: str
    kind: str = "read"
    """read, match, context or heading."""
    section: tuple[int, str] | None = None
    """The enclosing heading or definition (line, text), when grep -p looked it up."""


@dataclass
class Search:
    """One grep as lcread ran it: what it looked for and whether every match was shown."""

    patterns: list[str]
    flags: set[str]
    docs: list[str]
    matches: int
    complete: bool
    """True when the output was not cut (every matching line is among the shown pieces)."""
    counted: bool = False
    """True for grep -c (matches counted, no lines shown)."""
    lines: list[tuple[str, int]] = field(default_factory=list)
