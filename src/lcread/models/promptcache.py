"""A prompt cache on disk for the embedded model: llama.cpp KV states keyed by the tokens they hold.

After a call has processed enough new tokens, the context's state (its tokens and their keys and values) is
saved. A later prompt, in this process or another, that begins with a saved sequence loads the state
instead of processing those tokens again: the same system prompt in every run, the same question asked
again of the same documents, another question about a chunk that acs has already folded. Only the common
prefix is used; what follows it is processed as usual, so a stale or partial match is never wrong, only
less useful.

An entry is `<hash>.kv` (llama.cpp's sequence state file) and `<hash>.npy` (its tokens), written under
temporary names and renamed; a folder per model file. Past the size bound the least recently used go.
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import shutil
import sys
import tempfile
from pathlib import Path

import numpy as np

DEFAULT_BYTES = 1 << 30


def cache_bytes() -> int:
    """$LCREAD_KV_BYTES, else 1 GiB."""
    from lcread.config import env_int

    return env_int("LCREAD_KV_BYTES", DEFAULT_BYTES)


class PromptCache:
    def __init__(self, folder: Path, model_file: Path, max_bytes: int | None = None):
        stat = model_file.stat()
        self.folder = folder / hashlib.sha256(f"{model_file.name}|{stat.st_size}".encode()).hexdigest()[:16]
        self.max_bytes = cache_bytes() if max_bytes is None else max_bytes
        self._tokens: dict[str, np.ndarray] = {}
        self._seen_mtime = -1.0
        self.warned = False

    def longest(self, tokens: list[int]) -> tuple[str | None, int]:
        """The saved entry sharing the longest prefix with `tokens`, and that prefix's length."""
        self._refresh()
        want = np.asarray(tokens, dtype=np.int32)
        best, length = None, 0
        for key, saved in self._tokens.items():
            n = min(len(saved), len(want))
            differ = np.flatnonzero(saved[:n] != want[:n])
            common = int(differ[0]) if differ.size else n
            if common > length:
                best, length = key, common
        return best, length

    def warn(self, what: str, e: BaseException | None = None) -> None:
        """One line on stderr, once per process, about a cache that cannot be used as it is; the run goes on."""
        if self.warned:
            return
        self.warned = True
        detail = f" ({(getattr(e, 'strerror', None) or str(e) or type(e).__name__).lower()})" if e else ""
        sys.stderr.write(f"lcread: warning: the prompt cache {self.folder.parent} {what}{detail}; going on without "
                         "it (LCREAD_KV_DIR names another folder)\n")

    def load(self, ctx, cpp, key: str) -> list[int] | None:
        """Restore an entry into sequence 0 of the context; its tokens, or None when it cannot be read. The state
        file is checked against the size and digest recorded when it was saved before llama.cpp reads it: a
        truncated or damaged state would abort the process, so it is dropped instead."""
        saved = self._tokens.get(key)
        path = self.folder / f"{key}.kv"
        if saved is None or not path.is_file():
            return None
        if not self._intact(key, path):
            self.drop(key)
            return None
        array = (cpp.llama_token * len(saved))()
        count = ctypes.c_size_t(0)
        if not cpp.llama_state_seq_load_file(ctx, str(path).encode(), 0, array, len(saved), ctypes.byref(count)):
            return None
        os.utime(path)  # recently used
        return list(array[:count.value])

    def save(self, ctx, cpp, tokens: list[int]) -> None:
        """Save sequence 0 of the context, which holds `tokens`."""
        if not tokens:
            return
        held = np.asarray(tokens, dtype=np.int32)
        key = hashlib.sha256(held.tobytes()).hexdigest()[:24]
        try:  # a read-only mount, a file in the folder's place, a full disk: no saving, the run goes on
            self.folder.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=self.folder, prefix=".saving-", suffix=".kv")
            os.close(fd)
        except OSError as e:
            self.warn("cannot be written", e)
            return
        array = (cpp.llama_token * len(tokens))(*tokens)
        try:
            if not cpp.llama_state_seq_save_file(ctx, tmp.encode(), 0, array, len(tokens)):
                return
            np.save(self.folder / f".saving-{key}.npy", held)
            (self.folder / f".saving-{key}.sum").write_text(f"{os.path.getsize(tmp)} {_digest(Path(tmp))}")
            os.replace(self.folder / f".saving-{key}.sum", self.folder / f"{key}.sum")
            os.replace(self.folder / f".saving-{key}.npy", self.folder / f"{key}.npy")
            os.replace(tmp, self.folder / f"{key}.kv")
        except OSError as e:  # a full disk or a read-only cache: the run goes on without saving
            self.warn("cannot be written", e)
            return
        finally:
            Path(tmp).unlink(missing_ok=True)
        self._tokens[key] = held
        self.evict(keep=key)

    def _intact(self, key: str, path: Path) -> bool:
        try:
            size, digest = (self.folder / f"{key}.sum").read_text().split()
            return os.path.getsize(path) == int(size) and _digest(path) == digest
        except (OSError, ValueError):
            return False

    def drop(self, key: str) -> None:
        """Forget an entry, and remove its files where it can (a folder in an entry's place is removed too)."""
        self._tokens.pop(key, None)
        for suffix in (".kv", ".npy", ".sum"):
            path = self.folder / f"{key}{suffix}"
            try:
                if path.is_dir() and not path.is_symlink():
                    shutil.rmtree(path)
                else:
                    path.unlink(missing_ok=True)
            except OSError as e:
                self.warn("holds an entry it cannot remove", e)

    def evict(self, keep: str | None = None) -> None:
        """Remove the least recently used entries until the folder fits its bound."""
        entries = sorted(((p, p.stat()) for p in self.folder.glob("*.kv") if p.is_file() and _size(p)),
                         key=lambda e: e[1].st_mtime)
        total = sum(stat.st_size for _, stat in entries)
        for path, stat in entries:
            if total <= self.max_bytes:
                break
            if path.stem == keep:
                continue
            total -= stat.st_size
            self.drop(path.stem)

    def _refresh(self) -> None:
        """Read the token lists of entries other processes saved since the last look."""
        try:
            mtime = self.folder.stat().st_mtime
            if not self.folder.is_dir():
                return
        except OSError:
            return
        if mtime == self._seen_mtime:
            return
        self._seen_mtime = mtime
        present = {p.stem for p in self.folder.glob("*.kv")}
        self._tokens = {k: v for k, v in self._tokens.items() if k in present}
        for key in present - set(self._tokens):
            try:
                saved = np.load(self.folder / f"{key}.npy", allow_pickle=False)
            except Exception:  # noqa: BLE001 - empty, truncated, a folder, not an array: not an entry
                saved = None
            if saved is None or saved.ndim != 1 or not saved.size or saved.dtype.kind not in "iu":
                self.drop(key)  # a damaged entry is dropped, never compared or loaded
                continue
            self._tokens[key] = saved.astype(np.int32)


def _digest(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()[:32]


def _states(folder: Path) -> list[Path]:
    return list(folder.glob("*/*.kv")) if folder.is_dir() else []


def folder_info() -> dict:
    """The saved prompt states of every model: count and bytes."""
    from lcread.config import kv_dir

    folder = kv_dir()
    states = _states(folder)
    return {"folder": str(folder), "entries": len(states), "bytes": sum(_size(p) for p in states),
            "max_bytes": cache_bytes()}


def clear_folder() -> int:
    """Remove every saved prompt state; how many there were."""
    from lcread.config import kv_dir

    states = _states(kv_dir())
    for path in states:
        path.unlink(missing_ok=True)
        path.with_suffix(".npy").unlink(missing_ok=True)
        path.with_suffix(".sum").unlink(missing_ok=True)
    return len(states)


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0
