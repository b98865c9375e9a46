"""The run record: JSON lines appended as the run goes, so a crash or Ctrl-C loses nothing."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Protocol

from lcread.errors import LcreadError, redact


class Trace(Protocol):
    def event(self, kind: str, /, **data: object) -> None: ...


class NullTrace:
    def event(self, kind: str, /, **data: object) -> None:
        pass


class JsonlTrace:
    """Appends one JSON object per event and flushes it at once."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.runs = 0
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._file = open(self.path, "a", encoding="utf-8")
        except OSError as e:
            raise LcreadError(f"cannot write the trace {self.path} ({(e.strerror or str(e)).lower()}): give a file "
                              "in a folder you can write") from None
        self._lock = threading.Lock()
        self._local = threading.local()  # runs in a concurrent batch each have their own thread

    @property
    def run_id(self) -> str:
        return getattr(self._local, "run_id", "")

    def event(self, kind: str, /, **data: object) -> None:
        with self._lock:
            if kind == "run_start" or not self.run_id:  # one id per run, so a shared trace file can be split
                self.runs += 1
                self._local.run_id = f"{int(time.time() * 1000):x}-{self.runs}"
            record = {"t": round(time.time(), 3), "run": self.run_id, "event": kind, **data}
            try:
                self._file.write(redact(json.dumps(record, ensure_ascii=True, default=str)) + "\n")
                self._file.flush()
            except OSError as e:
                raise LcreadError(f"cannot write the trace {self.path} ({(e.strerror or str(e)).lower()}): give --trace "
                                  "a file on a disk with room") from None

    def close(self) -> None:
        try:
            self._file.close()
        except OSError:
            pass  # a write that failed has said so


class MemoryTrace:
    """Keeps events in a list (for tests and for callers of the library)."""

    def __init__(self):
        self.events: list[dict] = []

    def event(self, kind: str, /, **data: object) -> None:
        self.events.append({"event": kind, **data})

    def of(self, kind: str) -> list[dict]:
        return [e for e in self.events if e["event"] == kind]


class Tee:
    """Sends every event to several traces (a run's file and a collector of its own)."""

    def __init__(self, *traces: Trace):
        self.traces = traces

    @property
    def run_id(self) -> str:
        return next((t.run_id for t in self.traces if getattr(t, "run_id", "")), "")

    def event(self, kind: str, /, **data: object) -> None:
        for t in self.traces:
            t.event(kind, **data)
