"""A minimal reader for R's serialization format (XDR), enough to read character vectors out of an
R package's lazy-load database (data/Rdata.rdx + Rdata.rdb), such as Debian's r-cran-janeaustenr."""

from __future__ import annotations

import bz2
import gzip
import lzma
import struct
import zlib
from pathlib import Path

NILVALUE, REF, SYM, LIST, CHAR, LGL, INT, REAL, STR, VEC = 254, 255, 1, 2, 9, 10, 13, 14, 16, 19
_SPECIAL = {242, 241, 250, 251, 252, 253, 254}  # empty env, base env, global env, unbound, missing, ...


class _Reader:
    def __init__(self, data: bytes):
        if data[:2] != b"X\n":
            raise ValueError("not an XDR-serialized R object")
        self.data, self.pos, self.refs = data, 2, []
        version = self.int()
        self.int(), self.int()
        if version == 3:
            length = self.int()  # then the native encoding's name
            self.pos += length

    def int(self) -> int:
        (value,) = struct.unpack_from(">i", self.data, self.pos)
        self.pos += 4
        return value

    def item(self):
        flags = self.int()
        kind, has_attr, has_tag = flags & 0xFF, flags & (1 << 9), flags & (1 << 10)
        if kind in _SPECIAL:
            return None
        if kind == REF:
            index = flags >> 8 or self.int()
            return self.refs[index - 1]
        if kind == SYM:
            name = self.item()
            self.refs.append(name)
            return name
        if kind == LIST:
            return self.pairlist(has_attr, has_tag)
        if kind == CHAR:
            n = self.int()
            if n == -1:
                return None
            value = self.data[self.pos:self.pos + n].decode("utf-8", "replace")
            self.pos += n
            return value
        if kind in (LGL, INT, REAL, STR, VEC):
            return self.vector(kind, has_attr)
        raise ValueError(f"R object type {kind} is not supported by this reader")

    def pairlist(self, has_attr, has_tag) -> dict | list:
        """A pairlist: a dict when every element is tagged, else a list."""
        items = []
        while True:
            if has_attr:
                self.item()
            tag = self.item() if has_tag else None
            items.append((tag, self.item()))
            flags = self.int()
            kind, has_attr, has_tag = flags & 0xFF, flags & (1 << 9), flags & (1 << 10)
            if kind != LIST:
                break
        return {t: v for t, v in items} if all(t is not None for t, _ in items) else [v for _, v in items]

    def vector(self, kind: int, has_attr) -> dict | list:
        """A logical, integer, real, string or generic vector; named when its attributes give names."""
        n = self.int()
        if n == -1:
            n = (self.int() << 32) + self.int()
        if kind in (LGL, INT):
            values = list(struct.unpack_from(f">{n}i", self.data, self.pos))
            self.pos += 4 * n
        elif kind == REAL:
            values = list(struct.unpack_from(f">{n}d", self.data, self.pos))
            self.pos += 8 * n
        else:
            values = [self.item() for _ in range(n)]
        if has_attr:
            attrs = self.item()
            if kind == VEC and isinstance(attrs, dict) and "names" in attrs:
                return dict(zip(attrs["names"], values))
        return values


def unserialize(data: bytes):
    return _Reader(data).item()


def lazyload(folder: Path, stem: str = "Rdata") -> dict:
    """All objects of a lazy-load database, by name."""
    index = unserialize(gzip.decompress((folder / f"{stem}.rdx").read_bytes()))
    blob = (folder / f"{stem}.rdb").read_bytes()
    out = {}
    for name, (offset, length) in index["variables"].items():
        out[name] = unserialize(_inflate(blob[offset:offset + length]))
    return out


def _inflate(chunk: bytes) -> bytes:
    body = chunk[4:]
    kind = body[:1]
    if kind == b"Z":
        return lzma.decompress(body[1:])
    if kind == b"2":
        return bz2.decompress(body[1:])
    if kind == b"0":
        return body[1:]
    return zlib.decompress(body)
