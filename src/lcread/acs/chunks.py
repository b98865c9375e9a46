"""Document-order chunks of about L characters, cut at a line or sentence boundary near L, never
inside a multi-byte character. Boundaries are found by seeking; a chunk's text is read when needed."""

from __future__ import annotations

from dataclasses import dataclass

from lcread.documents import Document, DocumentStore

_BOUNDARIES = (b"\n\n", b"\n", b". ", b"? ", b"! ", b" ")


@dataclass
class Chunk:
    index: int
    """1-based position in reading order, across all documents."""
    doc: Document
    start: int
    """Byte offset where the chunk starts in its document."""
    end: int

    def text(self) -> str:
        with open(self.doc.path, "rb") as f:
            f.seek(self.start)
            return f.read(self.end - self.start).decode("utf-8", "replace")

    @property
    def label(self) -> str:
        return f"{self.doc.name} bytes {self.start:,}-{self.end:,}"


def cut_point(window: bytes, size: int, slack: float = 0.2) -> int:
    """Where to end a chunk inside `window` (which is longer than size): the last boundary in the final
    `slack` share of the first `size` bytes, else at `size`, moved back to a character boundary."""
    floor = int(size * (1 - slack))
    for mark in _BOUNDARIES:
        at = window.rfind(mark, floor, size)
        if at != -1:
            return at + len(mark)
    cut = size
    while cut > 0 and (window[cut] & 0xC0) == 0x80:
        cut -= 1
    return cut or size


def chunk_store(store: DocumentStore, size: int) -> list[Chunk]:
    """Chunks of every document, in the order the documents were given."""
    out: list[Chunk] = []
    for doc in store.docs:
        with doc.open() as f:
            pos = 0
            while pos < doc.size:
                f.seek(pos)
                window = f.read(size + 1)
                end = pos + (len(window) if len(window) <= size else cut_point(window, size))
                out.append(Chunk(len(out) + 1, doc, pos, end))
                pos = end
    return out


def chunk_of(chunks: list[Chunk], char_offset: int) -> int:
    """The index of the chunk holding a character offset of the (first) document. Chunks are cut in
    bytes and evidence spans count characters, so the offset is converted through the text."""
    doc = chunks[0].doc
    with open(doc.path, encoding="utf-8", errors="replace") as f:
        byte_offset = len(f.read(char_offset).encode("utf-8"))
    return next(c.index for c in chunks if c.doc is doc and c.start <= byte_offset < c.end)
