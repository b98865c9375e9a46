"""Calibrating ACS's confidence threshold θ for one model and probe, on evidence-aligned stops.

`lcread bench` records every acs reading (per chunk: tokens, and the answer state each probe read);
`lcread calibrate` replays ACS on those readings at every θ of a sweep, splits the tasks into a fitting
half and a held-out half, picks the θ that saves the most among those whose premature-stop rate on the
fitting half is at most the target (5% by default; of equal savings the highest θ), and reports the
held-out figures for it: the paper warns that thresholds fitted
by other means (percentiles of confidence) do not transfer. The chosen θ goes into a per-model settings
file that `--stop acs` uses when `--theta` is not given.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from lcread.acs.rules import AnswerState, acs_stop

THETAS = (0.5, 0.6, 0.7, 0.8, 0.85, 0.9, 0.93, 0.95, 0.97, 0.98, 0.99, 0.995, 0.999)


@dataclass
class Trajectory:
    """One task read chunk by chunk with one probe."""

    task: str
    probe: str
    evidence: int
    """The chunk that holds the evidence (1-based)."""
    fold_tokens: list[int]
    probe_tokens: list[int]
    states: list[AnswerState]
    correct: list[bool]
    """Whether the state read after each chunk answers correctly."""

    def to_dict(self) -> dict:
        return {"task": self.task, "probe": self.probe, "evidence": self.evidence, "fold_tokens": self.fold_tokens,
                "probe_tokens": self.probe_tokens, "correct": self.correct,
                "states": [{"answer": s.answer, "confidence": s.confidence, "posterior": s.posterior,
                            "eligible": s.eligible} for s in self.states]}

    @classmethod
    def from_dict(cls, d: dict) -> "Trajectory":
        states = [AnswerState(s["answer"], s["confidence"], s.get("posterior"), s.get("eligible", True))
                  for s in d["states"]]
        return cls(d["task"], d["probe"], d["evidence"], d["fold_tokens"], d["probe_tokens"], states, d["correct"])


@dataclass
class Point:
    theta: float
    accuracy: float
    saving: float
    """1 - tokens against reading everything (with one probe at the end)."""
    premature: float
    tasks: int


def stop_at(reading: Trajectory, theta: float, epsilon: float, window: int) -> int:
    """The chunk where ACS stops on this reading (the last chunk when it never does)."""
    for t in range(1, len(reading.states) + 1):
        if acs_stop(reading.states[:t], theta, epsilon, window):
            return t
    return len(reading.states)


def evaluate(readings: list[Trajectory], theta: float, epsilon: float = 0.05, window: int = 3) -> Point:
    stops = [stop_at(r, theta, epsilon, window) for r in readings]
    spent = sum(sum(r.fold_tokens[:t]) + sum(r.probe_tokens[:t]) for r, t in zip(readings, stops))
    full = sum(sum(r.fold_tokens) + r.probe_tokens[-1] for r in readings)
    return Point(theta, sum(r.correct[t - 1] for r, t in zip(readings, stops)) / len(readings),
                 1 - spent / full, sum(t < r.evidence for r, t in zip(readings, stops)) / len(readings),
                 len(readings))


def calibrate(readings: list[Trajectory], target: float = 0.05, thetas=THETAS) -> tuple[float, list[Point], Point]:
    """Among the θs whose premature-stop rate on the fitting half is at most `target`, the one that saves
    the most (usually the lowest); of equal savings, the highest, so a flat sweep does not pick a θ lower
    than the data needs. Returns it, the sweep on the fitting half, and its figures on the held-out half."""
    fit, held = readings[0::2], readings[1::2] or readings[0::2]
    sweep = [evaluate(fit, theta) for theta in thetas]
    safe = [p for p in sweep if p.premature <= target]
    chosen = max(safe, key=lambda p: (round(p.saving, 6), p.theta)).theta if safe else thetas[-1]
    return chosen, sweep, evaluate(held, chosen)


def settings_path() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config"
    return Path(os.environ.get("LCREAD_CALIBRATION") or Path(base) / "lcread" / "calibration.json")


def save(model: str, probe: str, theta: float, held_out: Point) -> Path:
    path = settings_path()
    data = _load(path)
    data.setdefault(model, {})[probe] = {"theta": theta, "held_out": held_out.__dict__}
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, indent=1), encoding="utf-8")
    os.replace(tmp, path)
    return path


SHIPPED = Path(__file__).with_name("calibration.json")
"""Operating points measured for the embedded model on this project's bench (the command is in each entry):
used when the user has calibrated nothing for that model and probe."""


def calibrated_theta(model: str, probe: str) -> tuple[float, str] | None:
    """The θ calibrated for this model and probe, and where it comes from: the user's settings file
    (`lcread calibrate`), else the calibration shipped for the embedded model; None when neither has one."""
    for path, source in ((settings_path(), "calibrated"), (SHIPPED, "shipped calibration")):
        entry = _load(path).get(model, {}).get(probe)
        if entry:
            return float(entry["theta"]), source
    return None


def _load(path: Path) -> dict:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def show(results: Path, target: float, save_choice: bool) -> None:
    """`lcread calibrate`: per probe, the θ sweep on the fitting half, the chosen θ's held-out figures, and the
    choice saved for the model."""
    from rich.console import Console
    from rich.table import Table

    from lcread.errors import LcreadError

    path = results / "results.json" if results.is_dir() else results
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise LcreadError(f"cannot read {path}: {e}; give the folder lcread bench --out wrote") from None
    readings = [Trajectory.from_dict(r["reading"]) for r in data.get("rows", []) if r.get("reading")]
    if not readings:
        raise LcreadError(f"{path} holds no acs readings: run lcread bench with --modes acs first")
    console, model = Console(), data["settings"]["model"]
    for probe in dict.fromkeys(r.probe for r in readings):
        chosen, sweep, held = calibrate([r for r in readings if r.probe == probe], target)
        table = Table(title=f"{model} · probe {probe} · fitting half")
        for col in ("θ", "accuracy", "token saving", "premature"):
            table.add_column(col, justify="right")
        for p in sweep:
            table.add_row(f"{p.theta:g}", f"{p.accuracy:.2f}", f"{p.saving:.0%}", f"{p.premature:.0%}",
                          style="bold" if p.theta == chosen else None)
        console.print(table)
        console.print(f"chosen θ = {chosen:g}; held-out ({held.tasks} tasks): accuracy {held.accuracy:.2f}, "
                      f"saving {held.saving:.0%}, premature {held.premature:.0%}")
        if save_choice:
            console.print(f"saved to {save(model, probe, chosen, held)}")
