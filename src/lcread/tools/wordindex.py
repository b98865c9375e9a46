"""A word index of a large document, so that a ranked search reads only the blocks holding its words instead of
scanning the whole file (tantivy, a Rust full-text engine; the index is kept on disk under the cache folder).

A document of `index_bytes()` or more (256 MB unless LCREAD_INDEX_BYTES says otherwise; LCREAD_INDEX=0 turns
indexing off) is indexed in blocks of about BLOCK bytes, cut at line ends (a longer line is cut at a space inside
it). Each block is one entry: its words (lower-cased, split at anything that is not a letter or a digit) and
where it lies (byte offsets, its first line number, the byte offset where that line starts).

Building costs about 20 s per GB on two cores, so no search waits for it: the first ranked search on such a
document scans it with ripgrep and starts the build in a background process at the lowest priority; the searches
after it, in that run or a later one, use the index once it is complete. An index is keyed by the file's device,
inode, size and modification time: a changed file is never searched through an old index. `lcread index FILE`
builds it in the foreground.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from lcread.errors import LcreadError

VERSION = "1"
BLOCK = 1 << 16
"""Bytes per indexed block: what a search reads for each block the index offers."""
INDEX_BYTES = 256 << 20
CACHE_BYTES = 8 << 30
"""Bound on all indexes together (LCREAD_INDEX_CACHE_BYTES); the least recently used go first."""
HEAP_BYTES = 64 << 20
COMMIT_BLOCKS = 1024
"""The index writer's memory for its two threads (tantivy's bound); the documents queued for them are bounded by a
commit every COMMIT_BLOCKS blocks (64 MB of text)."""
META = "lcread-index.json"
_TOKEN = re.compile(r"[^\W_]+")
"""A word as the index splits text: letters and digits (tantivy's default tokenizer)."""


def index_bytes() -> int | None:
    """The size from which a document is indexed, or None when indexing is off."""
    if os.environ.get("LCREAD_INDEX", "1").strip().lower() in ("0", "no", "off", "false"):
        return None
    try:
        return int(os.environ.get("LCREAD_INDEX_BYTES", INDEX_BYTES))
    except ValueError:
        return INDEX_BYTES


def index_root() -> Path:
    from lcread.config import cache_dir

    return Path(os.environ.get("LCREAD_INDEX_DIR") or cache_dir() / "index")


def folder_for(path: Path) -> Path | None:
    """Where the index of the file as it is now lives (None when the file cannot be read)."""
    try:
        return _folder(os.stat(path), path)
    except OSError:
        return None


def _folder(st: os.stat_result, path: Path) -> Path:
    """Keyed by the file itself (device, inode, size, modification time), not its name: a converted document is
    read through a link of each run's own, and every link to it finds the one index. A user's file is keyed by its
    change time too, which no rewrite can set back (a same-size rewrite with its modification time restored finds no
    old index); a converted text in lcread's cache is never rewritten, and each run's link to it changes that time."""
    changed = "" if _in_cache(path) else f"|{st.st_ctime_ns}"
    key = f"{VERSION}|{st.st_dev}|{st.st_ino}|{st.st_size}|{st.st_mtime_ns}{changed}"
    return index_root() / hashlib.sha256(key.encode()).hexdigest()[:32]


def _in_cache(path: Path) -> bool:
    from lcread.documents import default_cache

    try:
        return Path(path).resolve().parent == default_cache().folder.resolve()
    except (OSError, LcreadError):
        return False


@dataclass
class Block:
    offset: int
    end: int
    line: int
    """The number of the line the block starts in."""
    head: int
    """The byte offset where that line starts (the block's own offset unless it starts inside a long line)."""


class WordIndex:
    """An opened, complete index of one document."""

    def __init__(self, folder: Path):
        import tantivy

        self.index = tantivy.Index.open(str(folder))
        self.searcher = self.index.searcher()
        self.blocks = json.loads((folder / META).read_text())["blocks"]

    def best_blocks(self, terms: list[tuple[list[str], float]], limit: int) -> tuple[list[Block], int]:
        """The blocks holding the most (and the heaviest) of the terms, each a list of word forms and a weight,
        at most `limit`, in file order; and how many blocks hold any."""
        import tantivy

        schema = self.index.schema
        should = []
        for forms, weight in terms:
            words = sorted({w for f in forms for w in [_longest_word(f)] if w})
            if not words:
                continue
            # a form is looked for as a word's beginning ("limit" finds "limits", like ripgrep's substring search)
            alternatives = [(tantivy.Occur.Should, tantivy.Query.regex_query(schema, "body", re.escape(w) + ".*"))
                            for w in words]
            either = tantivy.Query.boolean_query(alternatives)
            should.append((tantivy.Occur.Should, tantivy.Query.boost_query(
                tantivy.Query.const_score_query(either, 1.0), max(weight, 0.01))))
        if not should:
            return [], 0
        found = self.searcher.search(tantivy.Query.boolean_query(should), limit, count=True)
        blocks = []
        for _, address in found.hits:
            doc = self.searcher.doc(address)
            blocks.append(Block(doc["offset"][0], doc["end"][0], doc["line"][0], doc["head"][0]))
        return sorted(blocks, key=lambda b: b.offset), found.count


def _longest_word(form: str) -> str:
    words = _TOKEN.findall(form.lower())
    return max(words, key=len) if words else ""


_opened: dict[Path, WordIndex] = {}


def open_index(path: Path) -> WordIndex | None:
    """The complete index of the file as it is now, if there is one."""
    folder = folder_for(path)
    if folder is None or not (folder / META).is_file():
        return None
    if folder not in _opened:
        try:
            _opened[folder] = WordIndex(folder)
            os.utime(folder / META)  # recently used: the last to be evicted
        except (OSError, ValueError, ImportError):
            return None
    return _opened[folder]


_started: set[Path] = set()


def start_build(path: Path) -> bool:
    """Build the file's index in a background process at the lowest priority, unless it exists, one is being
    built, or this process started one already (a build that failed is not retried at every search); True when
    a build was started. Standard input spooled for one run is not indexed: its file goes when the run ends."""
    folder = folder_for(path)
    if folder is None or folder in _started or (folder / META).is_file() or path.name.startswith("lcread-stdin-"):
        return False
    lock = folder.with_name(folder.name + ".building")
    with contextlib.suppress(OSError, ValueError):
        pid = int(lock.read_text())
        os.kill(pid, 0)
        return False  # a live build
    _started.add(folder)
    try:  # an index folder that cannot be written (read-only, a file in its place): search without an index
        folder.parent.mkdir(parents=True, exist_ok=True)
        if not os.access(folder.parent, os.W_OK):
            return False
        proc = subprocess.Popen([sys.executable, "-m", "lcread.tools.wordindex", str(path)],
                                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                start_new_session=True)
        lock.write_text(str(proc.pid))
    except OSError:
        return False
    return True


def build(path: Path, progress=None) -> Path:
    """Index the file now; the index appears complete or not at all (written aside, then renamed). The file is
    read through one open descriptor, so a name removed meanwhile (a run's link to a converted text) does not
    matter; a file that changed while it was read gets no index."""
    import tantivy

    with open(path, "rb") as f:
        before = os.fstat(f.fileno())
        folder = _folder(before, path)
        if (folder / META).is_file():
            return folder
        try:
            folder.parent.mkdir(parents=True, exist_ok=True)
            work = folder.with_name(folder.name + f".tmp-{os.getpid()}")
            shutil.rmtree(work, ignore_errors=True)
            work.mkdir()
        except OSError as e:
            raise LcreadError(f"cannot write the word index under {index_root()} ({(e.strerror or str(e)).lower()}): "
                              "point LCREAD_INDEX_DIR at a folder you can write") from None
        try:
            schema = tantivy.SchemaBuilder()
            schema.add_text_field("body", stored=False, index_option="basic")
            for name in ("offset", "end", "line", "head"):
                schema.add_integer_field(name, stored=True, indexed=False)
            index = tantivy.Index(schema.build(), path=str(work))
            writer = index.writer(HEAP_BYTES, 2)
            count = 0
            for text, block in blocks(f):
                writer.add_document(tantivy.Document(body=text, offset=block.offset, end=block.end,
                                                     line=block.line, head=block.head))
                count += 1
                if count % COMMIT_BLOCKS == 0:  # the writer queues documents without bound until a commit
                    writer.commit()
                    if progress:
                        progress(block.end)
            writer.commit()
            writer.wait_merging_threads()
            (work / META).write_text(json.dumps({"source": str(path), "blocks": count, "version": VERSION}))
            after = os.fstat(f.fileno())
            if _folder(after, path) != folder:
                raise LcreadError(f"{path} changed while it was indexed: index it again")
            try:
                os.rename(work, folder)
            except OSError:
                if not (folder / META).is_file():  # another process built the same index meanwhile: it stands
                    raise
            evict(keep=folder)
        finally:
            shutil.rmtree(work, ignore_errors=True)
            with contextlib.suppress(OSError):
                folder.with_name(folder.name + ".building").unlink()
    return folder


def entries() -> list[tuple[Path, int, float]]:
    """Every complete index: (folder, bytes, last used)."""
    root = index_root()
    out = []
    for meta in root.glob(f"*/{META}") if root.is_dir() else []:
        with contextlib.suppress(OSError):
            size = sum(f.stat().st_size for f in meta.parent.iterdir() if f.is_file())
            out.append((meta.parent, size, meta.stat().st_mtime))
    return out


def evict(keep: Path | None = None) -> None:
    """Remove the least recently used indexes while all of them take more than the bound."""
    try:
        bound = int(os.environ.get("LCREAD_INDEX_CACHE_BYTES", CACHE_BYTES))
    except ValueError:
        bound = CACHE_BYTES
    found = sorted(entries(), key=lambda e: e[2])
    total = sum(size for _, size, _ in found)
    for folder, size, _ in found:
        if total <= bound:
            break
        if folder != keep:
            shutil.rmtree(folder, ignore_errors=True)
            total -= size


def clear() -> int:
    """Remove every index; how many there were."""
    found = entries()
    for folder, _, _ in found:
        shutil.rmtree(folder, ignore_errors=True)
    return len(found)


def blocks(f):
    """The open file's blocks: (text, Block), cut at line ends, or at a space inside a line longer than a block."""
    offset, line, head = 0, 1, 0
    f.seek(0)
    while data := f.read(BLOCK):
        if len(data) == BLOCK:
            cut = data.rfind(b"\n")
            if cut < 0:
                cut = data.rfind(b" ", BLOCK // 2)
            if cut >= 0:
                data = data[:cut + 1]
                f.seek(offset + len(data))
        yield data.decode("utf-8", "replace"), Block(offset, offset + len(data), line, head)
        newlines = data.count(b"\n")
        if newlines:
            head = offset + data.rfind(b"\n") + 1
            line += newlines
        offset += len(data)


if __name__ == "__main__":  # the background build start_build runs, at the lowest priority (set here: a
    # function run between fork and exec is unsafe in a process with threads, as llama.cpp's)
    with contextlib.suppress(Exception):
        os.nice(19)
        build(Path(sys.argv[1]))
