"""`lcread bench --memory`: peak memory of lcread and ripgrep together on huge inputs (no model; it writes
about 3 GB of files under --out and removes them unless --keep).

Cases: a 2 GB log (indexed, grepped for a rare line and counted, its tail read, the ranked search run cold
and again; the first search starts the build of its word index in the background), the same log once that word
index is built (a fresh process: searches read the index's best blocks), a folder of 100,000 small files
(grepped, searched, listed), a folder of 2,000 HTML pages (each converted and cached, then read from the
cache), the same log compressed
with gzip (converted once, streaming, then from the cache), a generated 1,000-page PDF (the test extra's
fpdf2), a 50 MB single line (grepped with -i for a rare and a frequent word, read from the middle), and a
10 GB sparse file (refused at once). Each case runs in a fresh process; a sampler reads VmRSS and RssAnon
of that process and of its ripgrep children every 20 ms (ripgrep's memory-mapped file pages are shared,
not anonymous: RssAnon is what the machine really spends).
"""

from __future__ import annotations

import gzip
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

CASE = r"""
import sys, time
from lcread.documents import DocumentStore
from lcread.tools import ToolRunner, parse
started = time.monotonic()
try:
    store = DocumentStore.open([sys.argv[1]])
except Exception as e:
    print(f"refused in {time.monotonic() - started:.2f} s: {e}")
    raise SystemExit(0)
tools = ToolRunner(store)
print(f"indexed {sum(d.size for d in store.docs):,} bytes, {sum(d.lines for d in store.docs):,} lines, "
      f"{len(store.docs):,} documents in {time.monotonic() - started:.1f} s")
for command in sys.argv[2:]:
    t = time.monotonic()
    if command == "!wait-index":  # the background build the first search started
        from lcread.tools import wordindex
        while wordindex.open_index(store.docs[0].path) is None and time.monotonic() - t < 600:
            time.sleep(0.5)
        print(f"  word index ready after {time.monotonic() - t:.1f} s more")
        continue
    out = tools.run(parse(command))
    print(f"  {command!r}: {len(out.text):,} chars in {time.monotonic() - t:.2f} s: {out.text[:90]!r}")
store.close()
"""


def tree(pid: int) -> list[int]:
    out = [pid]
    try:
        for child in Path(f"/proc/{pid}/task/{pid}/children").read_text().split():
            out += tree(int(child))
    except OSError:
        pass
    return out


def status(pid: int) -> dict[str, int]:
    values = {}
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            key, _, rest = line.partition(":")
            if key in ("VmRSS", "RssAnon"):
                values[key] = int(rest.split()[0])
    except OSError:
        pass
    return values


def measure(path: Path, commands: list[str]) -> None:
    """Run the commands on `path` in a fresh process, sampling its memory and its ripgrep children's."""
    proc = subprocess.Popen([sys.executable, "-c", CASE, str(path), *commands], stdout=subprocess.PIPE, text=True)
    peak = {"VmRSS": 0, "RssAnon": 0}

    def sample():
        while proc.poll() is None:
            totals = {"VmRSS": 0, "RssAnon": 0}
            for pid in tree(proc.pid):
                for k, v in status(pid).items():
                    totals[k] += v
            for k in peak:
                peak[k] = max(peak[k], totals[k])
            time.sleep(0.02)

    sampler = threading.Thread(target=sample)
    sampler.start()
    out, _ = proc.communicate()
    sampler.join()
    print(out.rstrip())
    print(f"  peak, lcread + rg: RSS {peak['VmRSS'] / 1024:,.0f} MB, anonymous {peak['RssAnon'] / 1024:,.0f} MB\n")


def write_lines(path: Path, size: int) -> None:
    line = b"2026-11-30T10:00:00 INFO worker-17 request served in 12 ms from cache shard 4 of 16\n"
    block = line * ((4 << 20) // len(line))
    with open(path, "wb") as f:
        written = 0
        while written < size:
            f.write(block)
            written += len(block)
        f.write(b"2026-11-30T23:59:59 ERROR worker-3 disk quota exceeded on volume 9\n")


def write_pdf(path: Path, pages: int) -> None:
    """A manual of `pages` pages of ordinary prose (fpdf2, from the test extra)."""
    from fpdf import FPDF

    pdf = FPDF()
    pdf.set_font("helvetica", size=10)
    prose = ("Routine maintenance of the pumping station follows the schedule below. Check each valve, record "
             "the pressure, and report any leak to the duty engineer before the end of the shift. ") * 6
    for number in range(1, pages + 1):
        pdf.add_page()
        pdf.multi_cell(0, 5, f"Section {number}: pump {number} \n{prose}")
    pdf.output(str(path))


def write_gzip(path: Path, source: Path) -> None:
    with open(source, "rb") as src, gzip.open(path, "wb", compresslevel=1) as dst:
        shutil.copyfileobj(src, dst, 1 << 20)


def write_one_line(path: Path) -> None:
    with open(path, "wb") as f:
        for i in range(50):
            f.write((f'{{"k{i}": "' + "lorem ipsum " * 87_000 + '"}, ').encode())
        f.write(b'{"needle": "SECRET-42"}\n')


def write_many(path: Path, count: int = 100_000) -> None:
    """A folder of `count` small files in 100 subfolders, one of which holds the rare line."""
    for i in range(count):
        sub = path / f"part{i % 100:02d}"
        if i < 100:
            sub.mkdir(parents=True, exist_ok=True)
        text = f"2026-11-30T10:00:{i % 60:02d} INFO worker-{i % 32} request {i} served in 12 ms\n"
        if i == 77_777:
            text += "2026-11-30T23:59:59 ERROR worker-3 disk quota exceeded on volume 9\n"
        (sub / f"log-{i:06d}.txt").write_text(text)


def write_html(path: Path, count: int = 2_000) -> None:
    """A folder of `count` HTML pages of a manual, one of which holds the rare line: each page is converted to
    text and cached on its own, as a documentation folder is."""
    path.mkdir(parents=True, exist_ok=True)
    prose = "<p>Check each valve, record the pressure, and report any leak to the duty engineer.</p>\n" * 20
    for i in range(count):
        rare = "<p>Pump 1777 is rated for 42 bar.</p>\n" if i == 1777 else ""
        (path / f"page{i:04d}.html").write_text(f"<html><head><title>Pump {i}</title></head><body>\n"
                                               f"<h1>Pump {i}</h1>\n{prose}{rare}</body></html>\n")


def write_sparse(path: Path) -> None:
    with open(path, "wb") as f:
        f.truncate(10 << 30)


def run(folder: Path, keep: bool = False) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    os.environ["LCREAD_CONVERT_DIR"] = str(folder / "converted")
    os.environ["LCREAD_INDEX_DIR"] = str(folder / "index")
    big = folder / "big.log"
    cases = [
        ("2 GB of log lines", big, lambda p: write_lines(p, 2 << 30),
         ["grep -i 'quota exceeded'", "grep -c worker-17", "tail -n 2 big.log",
          "search which volume ran out of disk quota", "search disk quota exceeded volume"]),
        ("the 2 GB log, its word index built in the background", big, None,
         ["!wait-index", "search which volume ran out of disk quota", "search disk quota exceeded volume",
          "search which worker served request 12"]),
        ("the 2 GB log, gzip-compressed", folder / "app.log.gz", lambda p: write_gzip(p, big),
         ["grep -i 'quota exceeded'", "tail -n 1 app.log.gz"]),
        ("the same .gz again (converted text from the cache)", folder / "app.log.gz", None, ["grep -i 'quota exceeded'"]),
        ("a generated 1,000-page PDF", folder / "manual.pdf", lambda p: write_pdf(p, 1000), ["grep -p 'pump 777 '"]),
        ("the same PDF again (converted text from the cache)", folder / "manual.pdf", None, ["grep -p 'pump 777 '"]),
        ("a 50 MB single line", folder / "one-line.json", write_one_line,
         ["grep -i secret-42", "grep -i lorem", "read one-line.json 1 1 --from 25000000"]),
        ("a 10 GB sparse file", folder / "sparse.bin", write_sparse, []),
        ("a folder of 2,000 HTML pages (each converted and cached)", folder / "html", write_html,
         ["grep -F 'Pump 1777 is rated'", "search what pressure is pump 1777 rated for"]),
        ("the same HTML folder again (its pages from the cache)", folder / "html", None,
         ["grep -F 'Pump 1777 is rated'"]),
        ("a folder of 100,000 files", folder / "many", write_many,
         ["grep -F 'quota exceeded'", "search which volume ran out of disk quota", "ls 400"]),
    ]
    try:
        for title, path, write, commands in cases:
            if write and not path.exists():
                write(path)
            print(f"{title} ({path.stat().st_size:,} bytes)" if path.is_file() else title)
            measure(path, commands)
    finally:
        if not keep:
            shutil.rmtree(folder, ignore_errors=True)
