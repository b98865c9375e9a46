"""Converted text, cached by the source's content hash, size-bounded, written atomically.

An entry is `<hash>.txt` (the text) and `<hash>.map.json` (where its lines came from). A small index
remembers (path, size, modification time) -> hash, so an unchanged file is not hashed again. Entries are
written to temporary names and renamed when complete: a crash or a refused file leaves nothing half
written. Past the size bound, the least recently used entries go.
"""

from __future__ import annotations

import bisect
import contextlib
import hashlib
import json
import os
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from lcread.errors import LcreadError, TooLarge

VERSION = "3"  # part of every key and stamp: a change in how a format is converted invalidates old entries


@dataclass
class SourceMap:
    """Where the lines of a converted text came from."""

    kind: str
    source: str
    marks: list[tuple[int, str]] = field(default_factory=list)
    """(first line, place) in line order: "page 12", "Terms > Refunds", ..."""

    def locate(self, line: int) -> str:
        i = bisect.bisect_right([m[0] for m in self.marks], line) - 1
        place = self.marks[i][1] if i >= 0 else ""
        return f"{self.source}, {place}" if place and self.kind in ("gzip", "bz2", "xz", "zstd") else \
            (place or self.source)


class Marks(list):
    """What a converter records while it writes: (line, place) pairs and the line count so far."""

    def __init__(self, kind: str, source: str):
        super().__init__()
        self.kind, self.source, self.lines = kind, source, 0
        self.written, self.limit = 0, 1 << 62
        """Bytes written so far, and the most one conversion may write (the expansion bound, for every format)."""

    def write(self, out, text: str) -> None:
        """Write text (ending in a newline) and count its lines; past the bound, refuse the input."""
        data = text.encode("utf-8")
        self.written += len(data)
        if self.written > self.limit:
            raise TooLarge(f"{self.source or 'the input'} converts to more than {self.limit:,} bytes of text (a "
                              "bomb?): refused; raise LCREAD_MAX_EXPANDED and LCREAD_CACHE_BYTES if you trust it")
        out.write(data)
        self.lines += data.count(b"\n")

    def here(self, place: str) -> None:
        self.append((self.lines + 1, place))


class ConvertCache:
    def __init__(self, folder: Path, max_bytes: int, max_expanded: int):
        self.folder = folder
        self.max_bytes = max_bytes
        self.max_expanded = min(max_expanded, max_bytes) if max_bytes else max_expanded
        """Most bytes one conversion may write: the expansion bound, and never more than the cache holds."""
        self.damaged: list[str] = []
        """Entries found damaged and removed during this process (the caller warns)."""
        self._pending: dict[str, str] = {}
        """Key -> the stamp of the source hashed to it, for the entry about to be written."""
        self._known: dict[str, str] | None = None
        """The index (source's stamp -> key) as read at this cache's first key, with what it hashed since."""
        self._hashed: dict[str, str] = {}
        """Stamp -> key of the sources hashed since the index was last saved (`save_index`)."""
        self._held: int | None = None
        """Bytes the cache held at this process's last sweep, plus what it wrote since: the folder is scanned again
        only when this passes the bound, so converting a folder of n files is one scan, not n (with the index saved
        once, a first opening of 2,000 HTML pages went from 95 s to 3.4 s: docs/measuring.md)."""

    def key(self, path: Path) -> str:
        st = os.stat(path)
        # ctime and inode change with any rewrite, whatever mtime is set back to: the stamp cannot go stale
        stamp = f"{VERSION}|{os.path.realpath(path)}|{st.st_size}|{st.st_mtime_ns}|{st.st_ctime_ns}|{st.st_ino}"
        if self._known is None:
            self._known = self._index()
        known = self._known.get(stamp)
        if known and stamp in self._stamps(known):  # the entry says it was made from this file
            return known
        digest = hashlib.sha256(VERSION.encode())
        with open(path, "rb") as f:
            while block := f.read(1 << 20):
                digest.update(block)
        key = digest.hexdigest()[:32]
        self._known[stamp] = self._hashed[stamp] = key
        self._stamp(key, stamp)
        return key

    def save_index(self) -> None:
        """Add the sources hashed since the last save to the index on disk (as another process left it): once for
        a whole opening, as a folder of n files saved after each would write the index n times."""
        if self._hashed:
            index = self._index()
            index.update(self._hashed)
            self._save_index(index)
            self._hashed.clear()

    def _stamps(self, key: str) -> list[str]:
        """The source files (their stamps) an entry was made from or confirmed, by hashing, to be made from."""
        try:
            data = json.loads((self.folder / f"{key}.map.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return []
        stamps = data.get("stamps") if isinstance(data, dict) else None
        return [x for x in stamps if isinstance(x, str)] if isinstance(stamps, list) else []

    def _stamp(self, key: str, stamp: str) -> None:
        """Record in an existing entry that this source file (hashed just now) is one it was made from."""
        meta = self.folder / f"{key}.map.json"
        try:
            data = json.loads(meta.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            self._pending[key] = stamp  # the entry is about to be written: it takes the stamp then
            return
        if not isinstance(data, dict) or stamp in (data.get("stamps") or []):
            return
        data["stamps"] = [*(data.get("stamps") or []), stamp][-MAX_STAMPS:]
        self._write_meta(meta, data)

    def _write_meta(self, meta: Path, data: dict) -> None:
        _write_json(self.folder, meta, data)

    def get(self, key: str) -> tuple[Path, SourceMap] | None:
        """The entry's text and source map, or None when there is none or it is damaged (then it is removed, and
        the caller converts again): a map that does not parse, a text whose size or sampled digest is not the one
        recorded when it was written."""
        text, meta = self.folder / f"{key}.txt", self.folder / f"{key}.map.json"
        if not (text.exists() and meta.exists()):
            return None
        try:
            data = json.loads(meta.read_text(encoding="utf-8"))
            source = SourceMap(str(data["kind"]), str(data["source"]), [(int(a), str(b)) for a, b in data["marks"]])
            intact = data["bytes"] == text.stat().st_size and data["sample"] == _sample(text)
        except (OSError, ValueError, KeyError, TypeError):
            intact = False
        if not intact:
            self.damaged.append(key)
            self.remove(key)
            return None
        os.utime(meta)  # recently used
        return text, source

    def hold(self, text: Path) -> Path:
        """A link of this run's own to an entry's text: another process's eviction removes the entry's name, not
        the text a running grep reads (the run removes its link when it ends)."""
        link = self.folder / f".reading-{os.getpid()}-{os.urandom(4).hex()}.txt"
        try:
            os.link(text, link)
        except OSError:
            return text  # a file system without hard links: read the entry itself
        return link

    def remove(self, key: str) -> None:
        for path in (self.folder / f"{key}.txt", self.folder / f"{key}.map.json"):
            if path.is_dir() and not path.is_symlink():  # something else took the entry's name
                shutil.rmtree(path, ignore_errors=True)
            else:
                path.unlink(missing_ok=True)

    @contextlib.contextmanager
    def writing(self, key: str):
        """Yield (binary text file, Marks); on success both are renamed into place, else removed. The temporary
        file carries the process id, so one a killed conversion left is swept (evict) and counted (info)."""
        self._make_folder()
        try:
            fd, tmp = tempfile.mkstemp(dir=self.folder, prefix=f".converting-{os.getpid()}-", suffix=".txt")
        except OSError as e:
            raise self._unwritable(e) from None
        marks = Marks("", "")
        try:
            with os.fdopen(fd, "wb") as out:
                yield out, marks
            meta = Path(tmp).with_suffix(".json")
            stamp = self._pending.pop(key, None)
            meta.write_text(json.dumps({"kind": marks.kind, "source": marks.source, "marks": list(marks),
                                        "bytes": os.path.getsize(tmp), "sample": _sample(Path(tmp)),
                                        "stamps": [stamp] if stamp else []}), encoding="utf-8")
            written = os.path.getsize(tmp) + os.path.getsize(meta)
            os.replace(tmp, self.folder / f"{key}.txt")
            os.replace(meta, self.folder / f"{key}.map.json")
        except OSError as e:
            Path(tmp).unlink(missing_ok=True)
            Path(tmp).with_suffix(".json").unlink(missing_ok=True)
            raise self._unwritable(e) from None
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            Path(tmp).with_suffix(".json").unlink(missing_ok=True)
            raise
        if self._held is not None:
            self._held += written
        if self._held is None or self._held > self.max_bytes:
            self.evict(keep=key)

    def _unwritable(self, e: OSError) -> LcreadError:
        return LcreadError(f"cannot write the conversion cache {self.folder} ({(e.strerror or str(e)).lower()}): "
                           "point LCREAD_CONVERT_DIR at a folder you can write, with room to spare")

    def leftovers(self) -> list[Path]:
        """Temporary files of conversions whose process is gone (killed mid-way), or a day old."""
        import time

        out = []
        for stale in self.folder.glob(".converting-*") if self.folder.is_dir() else []:
            pid = stale.name.split("-")[1] if stale.name.count("-") >= 2 else ""
            try:
                alive = pid.isdigit() and _alive(int(pid))
                if not alive or time.time() - stale.stat().st_mtime > 86_400:
                    out.append(stale)
            except OSError:
                continue
        return out

    def entries(self) -> list[tuple[Path, int, float]]:
        """(text file, bytes with its map, last use) of every entry."""
        out = []
        for meta in self.folder.glob("*.map.json") if self.folder.is_dir() else []:
            text = self.folder / meta.name.replace(".map.json", ".txt")
            try:
                out.append((text, text.stat().st_size + meta.stat().st_size, meta.stat().st_mtime))
            except OSError:
                continue
        return out

    def evict(self, keep: str | None = None) -> None:
        """Sweep the folder: what killed runs left, then the least recently used entries past the bound. Another
        process's writes since this one's last sweep are counted at the next sweep, any process's."""
        import time

        for stale in self.leftovers():  # what a killed conversion left
            stale.unlink(missing_ok=True)
        for stale in self.folder.glob(".reading-*.txt"):  # links left by runs that were killed
            try:
                if time.time() - stale.stat().st_mtime > 86_400:
                    stale.unlink()
            except OSError:
                continue
        entries = sorted(self.entries(), key=lambda e: e[2])
        total = sum(size for _, size, _ in entries)
        for text, size, _ in entries:
            if total <= self.max_bytes:
                break
            if keep and text.name.startswith(keep):
                continue
            text.unlink(missing_ok=True)
            (self.folder / text.name.replace(".txt", ".map.json")).unlink(missing_ok=True)
            total -= size
        self._held = total

    def info(self) -> dict:
        entries, leftovers = self.entries(), self.leftovers()
        sizes = [p.stat().st_size for p in leftovers if p.exists()]
        return {"folder": str(self.folder), "entries": len(entries), "bytes": sum(s for _, s, _ in entries),
                "max_bytes": self.max_bytes, "leftovers": len(sizes), "leftover_bytes": sum(sizes)}

    def clear(self) -> int:
        entries = self.entries()
        for text, _, _ in entries:
            text.unlink(missing_ok=True)
            (self.folder / text.name.replace(".txt", ".map.json")).unlink(missing_ok=True)
        (self.folder / "index.json").unlink(missing_ok=True)
        for stale in self.folder.glob(".converting-*") if self.folder.is_dir() else []:
            stale.unlink(missing_ok=True)
        self._held, self._known = None, None
        self._hashed.clear()
        return len(entries)

    def _index(self) -> dict:
        try:
            data = json.loads((self.folder / "index.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        if not isinstance(data, dict):
            return {}
        return {k: v for k, v in data.items() if isinstance(k, str) and isinstance(v, str) and len(v) == 32}

    def _save_index(self, index: dict) -> None:
        """The index is only a shortcut past hashing: one that cannot be written (a folder in its place, a full
        disk) is left as it is, and the next run hashes again."""
        self._make_folder()
        _write_json(self.folder, self.folder / "index.json", dict(list(index.items())[-5000:]))

    def _make_folder(self) -> None:
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise LcreadError(f"cannot write the conversion cache {self.folder} ({(e.strerror or str(e)).lower()}): "
                              "point LCREAD_CONVERT_DIR at a folder you can write") from None


def _write_json(folder: Path, path: Path, data) -> None:
    """Write a JSON file by renaming a temporary one into place; a folder that cannot take it is left as it is
    (the index and the stamps are shortcuts: the next run hashes again)."""
    tmp = None
    try:
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".index-")
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(data, f)
        os.replace(tmp, path)
    except OSError:
        if tmp:
            Path(tmp).unlink(missing_ok=True)


WHOLE_DIGEST = 32 << 20
"""Texts up to this size are digested whole when read from the cache (a tenth of a second); larger ones by samples."""
SAMPLES = 1024
"""Blocks of 4 KB read across a larger text to digest it (4 MB of a 2 GB text)."""
MAX_STAMPS = 8
"""Source files an entry remembers it was made from."""


def _sample(path: Path) -> str:
    """A digest of a text: the whole of it up to 32 MB, else its size and 1,024 blocks spread evenly through it.
    It tells a truncated or overwritten entry from the one written, a change in its middle included."""
    size = path.stat().st_size
    digest = hashlib.sha256(str(size).encode())
    with open(path, "rb") as f:
        if size <= WHOLE_DIGEST:
            while block := f.read(1 << 20):
                digest.update(block)
        else:
            for i in range(SAMPLES):
                f.seek(i * (size - 4096) // (SAMPLES - 1))
                digest.update(f.read(4096))
    return digest.hexdigest()[:24]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
