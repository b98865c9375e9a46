"""The scorer: a logistic model over the candidates' features that gives each one the probability that it is the
right answer, calibrated per model on the project's own suites (`lcread calibrate --reader` for another), and the
threshold at which a grounded answer is called verified (95% precision where it was calibrated)."""

from __future__ import annotations

import json
import math
import os
from dataclasses import asdict, dataclass, field
from importlib import resources
from pathlib import Path

from lcread.reader.features import GENERIC, LIKELIHOOD, answer_features

SHIPPED = "calibration.json"


@dataclass
class Scorer:
    features: list[str]
    weights: list[float]
    bias: float
    mean: list[float]
    scale: list[float]
    threshold: float
    """Confidence at or above which a grounded answer is verified."""
    settle: float = 1.0
    """Confidence at or above which a run ends with its best answer, verified or not: where the calibration
    measured that reading on no longer made answers more often right."""
    floor: float = 0.0
    """Confidence below which the best candidate is no answer at all. The shipped calibrations keep it at 0: the
    best grounded candidate is the answer, its confidence says how far to trust it (a floor above the settle
    confidence ended runs as settled with no answer)."""
    source: str = ""
    """Where this calibration came from (the suites, the model, the date), for the run header and --json."""
    measured: dict = field(default_factory=dict)
    """What the calibration measured on the answers it was fitted on (precision, coverage, calibration error)."""
    answer: "Scorer | None" = None
    """The confidence: a second logistic model over the best answer's standing in its reading (its probability, its
    margin over the runner-up, the model's own answer; `features.ANSWER`), fitted on held-out probabilities of this
    one. Without it, the confidence is the best candidate's probability. The thresholds above are on the
    confidence."""

    def __post_init__(self):
        if isinstance(self.answer, dict):
            self.answer = Scorer(**self.answer)

    @property
    def likelihood(self) -> bool:
        return any(f in LIKELIHOOD for f in self.features)

    @property
    def reads_check(self) -> bool:
        """Whether the confidence reads the check's features (then the loop makes the check)."""
        return bool(self.answer) and any(f.startswith("a_check_") for f in self.answer.features)

    def probability(self, row: dict[str, float]) -> float:
        z = self.bias + sum(w * (row.get(f, m) - m) / s
                            for f, w, m, s in zip(self.features, self.weights, self.mean, self.scale))
        return 1.0 / (1.0 + math.exp(-max(min(z, 40.0), -40.0)))

    def confidence(self, ranked: list[tuple[float, dict[str, float]]]) -> float:
        """The probability that a reading's best answer is right, from its candidates as (probability, feature
        row), the best first."""
        if not ranked:
            return 0.0
        return self.answer.probability(answer_features(ranked)) if self.answer else ranked[0][0]

    def to_dict(self) -> dict:
        return asdict(self)


PRIOR = Scorer(features=list(GENERIC), weights=[1.0, 0.5, 1.0, 1.0, 1.0, 2.0, 0.0, -1.5, 0.3, -0.5, 0.5, -0.5, 0.0,
                                                  0.0],
               bias=-3.0, mean=[0.0] * len(GENERIC), scale=[1.0] * len(GENERIC), threshold=0.95,
               source="uncalibrated prior")
"""Used only when no calibration exists for a model and none ships: conservative, so little is verified."""


def trusting() -> Scorer:
    """A scorer for logic tests (it ships with the scripted model): the model's own answer is sure when a shown
    line holds it and it is of the type the question asks for (a name's value more than the name), and not a set a
    shown line links to a further item; nothing else is."""
    names = ["free", "type_fits", "resolved", "partial"]
    return Scorer(features=names, weights=[12.0, 6.0, 1.0, -12.0], bias=-12.0, mean=[0.0] * 4, scale=[1.0] * 4,
                  threshold=0.99, floor=0.1, source="trusting scorer (tests)")


def user_file() -> Path:
    return Path(os.environ.get("LCREAD_READER_CALIBRATION")
                or Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config") / "lcread" / "reader.json")


def _stored() -> dict:
    out: dict = {}
    try:
        out.update(json.loads(resources.files(__package__).joinpath(SHIPPED).read_text(encoding="utf-8")))
    except (FileNotFoundError, ValueError):
        pass
    path = user_file()
    if path.is_file():
        try:
            out.update(json.loads(path.read_text(encoding="utf-8")))
        except (OSError, ValueError):
            pass  # a damaged user file is ignored; the shipped calibration stands
    return out


def scorer_for(model: str, likelihood: bool) -> Scorer:
    """The calibration for this model (the user's, else the shipped one). `{model}` is the better of its two
    calibrations on held-out questions; where the backend cannot score spans, the one over the generic features
    alone (`{model}:generic`, else `generic`, fitted on the embedded model's readings)."""
    stored = _stored()
    for name in ([model, f"{model}:likelihood"] if likelihood else [model, f"{model}:generic"]):
        if name in stored and (likelihood or not Scorer(**stored[name]).likelihood):
            return Scorer(**stored[name])
    if likelihood and "local" in stored:
        return Scorer(**stored["local"])  # another GGUF: the embedded model's, until calibrated
    return Scorer(**stored["generic"]) if "generic" in stored else PRIOR


def save(name: str, scorer: Scorer, path: Path | None = None) -> Path:
    path = path or user_file()
    stored: dict = {}
    if path.is_file():
        try:
            stored = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            stored = {}
    stored[name] = scorer.to_dict()
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(stored, indent=1) + "\n", encoding="utf-8")
    tmp.replace(path)
    return path
