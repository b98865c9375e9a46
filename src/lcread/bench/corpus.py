"""Real, license-clean text for haystacks: Jane Austen's six novels from Debian's r-cran-janeaustenr
(public domain), read straight from the package's R data files; and a synthetic filler for tests."""

from __future__ import annotations

import glob
import random
import shutil
import subprocess
import tempfile
from pathlib import Path

from lcread.bench.rdata import lazyload
from lcread.errors import LcreadError
from lcread.models.weights import cache_dir

NOVELS = ["prideprejudice", "sensesensibility", "mansfieldpark", "emma", "northangerabbey", "persuasion"]
_DATA = "usr/lib/R/site-library/janeaustenr/data"


def debian_files(packages: list[str], folder: str) -> Path:
    """The files of Debian packages, unpacked (dpkg-deb -x) under the cache folder `folder`: fetched once with
    apt-get download, never installed. Returns the folder the packages' paths are relative to."""
    root = cache_dir() / folder
    stamp = root / ".unpacked"
    if stamp.is_file() and stamp.read_text().split() == sorted(packages):
        return root
    if not shutil.which("apt-get") or not shutil.which("dpkg-deb"):
        raise LcreadError(f"the documents come from Debian's {', '.join(packages)}: this needs apt-get and dpkg-deb")
    root.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        got = subprocess.run(["apt-get", "download", *packages], cwd=tmp, capture_output=True, text=True)
        debs = glob.glob(f"{tmp}/*.deb")
        if got.returncode != 0 or len(debs) < len(packages):
            raise LcreadError(f"could not fetch Debian's {', '.join(packages)} (run apt-get update): "
                              + got.stderr.strip()[-200:])
        for deb in debs:
            subprocess.run(["dpkg-deb", "-x", deb, str(root)], check=True)
    stamp.write_text(" ".join(sorted(packages)))
    return root


def austen_folder() -> Path:
    """The package's data folder: installed system-wide, or unpacked from the .deb into the cache."""
    system = Path("/") / _DATA
    if (system / "Rdata.rdb").is_file():
        return system
    cached = cache_dir() / "janeaustenr" / _DATA
    if (cached / "Rdata.rdb").is_file():
        return cached
    if not shutil.which("apt-get") or not shutil.which("dpkg-deb"):
        raise LcreadError("Jane Austen's novels are needed: install Debian's r-cran-janeaustenr")
    with tempfile.TemporaryDirectory() as tmp:
        got = subprocess.run(["apt-get", "download", "r-cran-janeaustenr"], cwd=tmp, capture_output=True, text=True)
        debs = glob.glob(f"{tmp}/r-cran-janeaustenr_*.deb")
        if got.returncode != 0 or not debs:
            raise LcreadError("could not fetch Debian's r-cran-janeaustenr (run apt-get update, or install it): "
                              + got.stderr.strip()[-200:])
        subprocess.run(["dpkg-deb", "-x", debs[0], str(cache_dir() / "janeaustenr")], check=True)
    return cached


def austen_text() -> str:
    """The six novels in publication order, one line per line of the source, blank lines between."""
    novels = lazyload(austen_folder())
    return "\n\n".join("\n".join(line or "" for line in novels[name]) for name in NOVELS)


WORDS = ("the of and a to in is was that it for on with as his her he she at by had from they which be this have "
         "not were are but an their one all harbor river morning letter garden window carriage evening house "
         "family friend sister brother question dinner ball winter summer road town village church field "
         "meadow lantern orchard valley bridge").split()


def synthetic_text(chars: int, seed: int) -> str:
    """Filler prose from a small fixed vocabulary: deterministic for a seed, about `chars` long."""
    rng = random.Random(seed)
    lines, size = [], 0
    while size < chars:
        line = " ".join(rng.choice(WORDS) for _ in range(rng.randint(6, 16))).capitalize() + "."
        lines.append(line)
        size += len(line) + 1
    return "\n".join(lines) + "\n"
