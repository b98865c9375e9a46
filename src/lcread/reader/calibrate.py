"""Calibrating the reader's scorer for one model on the readings `lcread bench` recorded.

Every candidate of every reading is one example (its features, and whether the bench's scorer calls it right). A
logistic model is fitted on them (features standardised, an L2 penalty); its probabilities are checked on
documents it was not fitted on (folds by document: a suite's questions share one, and a fit that knows a
document's phrasing is not what a new document meets), and the threshold
that verifies an answer is the lowest at which the best candidates of the held-out readings are right at least
`precision` of the time. The threshold that settles a run is chosen on the same held-out probabilities: the lowest
confidence at which ending a run at its first reading that reaches it is right as often, within `TOLERANCE`, as
reading on to the run's last reading (what further steps add, measured, instead of assumed). Nothing here knows a
document or a phrasing: the features are generic, the labels the bench's.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

from lcread.reader.features import ANSWER, FEATURES, GENERIC, LIKELIHOOD, answer_features
from lcread.reader.scorer import Scorer

SETS = {"likelihood": FEATURES, "generic": GENERIC}
"""The features a model's scorer may choose from: all of them (the span likelihoods too), or those a backend
without log-probabilities has. The better on held-out documents is the model's."""
GAIN = 0.01
"""A feature joins the scorer only if it makes the held-out best answers right this much more often."""
MAX_FEATURES = 8
"""At most this many features are chosen (a calibration of a few hundred readings carries few)."""
FOLDS = 5
L2 = 1.0
"""The penalty on the standardised weights (per example, it shrinks as the examples grow)."""
BINS = 10
"""Confidence bins of the calibration error."""
TOLERANCE = 0.01
"""The accuracy a settled run may lose against reading on to its last reading."""
LOSS_GAIN = 0.002
"""A feature joins the confidence only if it lowers the held-out log-loss of the best answers this much."""


@dataclass
class Example:
    group: str
    """The question it belongs to (all its phrasings): folds never split one."""
    reading: int
    """Which reading of which run: the candidates that competed with each other."""
    features: dict[str, float]
    right: bool
    run: int = 0
    """The run the reading belongs to (its readings are numbered in the order they were made)."""
    document: str = ""
    """The suite (one document, or one generated family) the question is about: the unit of the folds."""


def examples(rows: list[dict]) -> list[Example]:
    """The candidates of every select or sac reading in bench rows."""
    out: list[Example] = []
    n = 0
    for run, row in enumerate(rows):
        for reading in row.get("readings") or []:
            n += 1
            for c in reading["candidates"]:
                out.append(Example(f"{row.get('suite')}/{row.get('group') or row['task']}", n, c["features"],
                                   bool(c["right"]), run, str(row.get("suite"))))
    return out


def readings(rows: list[dict]) -> list[Example]:
    """The examples of the rows' readings; rows without any are a usage mistake."""
    data = examples(rows)
    if not data:
        raise ValueError("no reader readings in these results: run lcread bench with --modes select or sac")
    return data


def fit(data: list[Example], names: list[str], l2: float = L2, iterations: int = 50) -> Scorer:
    """A logistic model over `names` (Newton's method on the penalised log-likelihood)."""
    import numpy as np

    x = np.array([[e.features.get(f, np.nan) for f in names] for e in data], dtype=float)
    y = np.array([float(e.right) for e in data])
    with warnings.catch_warnings():  # a feature no example has: its average is 0
        warnings.simplefilter("ignore", RuntimeWarning)
        mean = np.nan_to_num(np.nanmean(x, axis=0)) if len(x) else np.zeros(len(names))
    x = np.where(np.isnan(x), mean, x)  # a feature a candidate lacks is read as its average, as `Scorer` reads it
    scale = x.std(axis=0) if len(x) else np.ones(len(names))
    scale[scale < 1e-9] = 1.0
    z = np.hstack([np.ones((len(x), 1)), (x - mean) / scale])
    w = np.zeros(z.shape[1])
    penalty = np.full(z.shape[1], l2)
    penalty[0] = 0.0
    for _ in range(iterations):
        p = 1.0 / (1.0 + np.exp(-np.clip(z @ w, -40, 40)))
        gradient = z.T @ (p - y) + penalty * w
        hessian = (z * (p * (1 - p))[:, None]).T @ z + np.diag(penalty + 1e-9)
        step = np.linalg.solve(hessian, gradient)
        w -= step
        if np.abs(step).max() < 1e-7:
            break
    return Scorer(features=list(names), weights=[float(v) for v in w[1:]], bias=float(w[0]),
                  mean=[float(v) for v in mean], scale=[float(v) for v in scale], threshold=1.0)


def best_per_reading(data: list[Example], probabilities: list[float]) -> list[tuple[float, bool]]:
    """For each reading, its best candidate's probability and whether it is right."""
    return [b for _, b in _best(data, probabilities).values()]


def _best(data: list[Example], probabilities: list[float]) -> dict[int, tuple[int, tuple[float, bool]]]:
    """Each reading's best candidate; of candidates scored alike, a wrong one (a tie is not a right answer, and
    the order the bench recorded them in, its own scorer's, says nothing)."""
    best: dict[int, tuple[int, tuple[float, bool]]] = {}
    for e, p in zip(data, probabilities):
        if e.reading not in best or p > best[e.reading][1][0] or p == best[e.reading][1][0] and not e.right:
            best[e.reading] = (e.run, (p, e.right))
    return best


def settled(sequences: list[list[tuple[float, bool]]], theta: float) -> tuple[float, float]:
    """Ending each run at its first reading whose confidence reaches theta (else at its last): the accuracy, and
    the mean share of its readings made."""
    right, used = 0, 0.0
    for seq in sequences:
        at = next((i for i, (p, _) in enumerate(seq) if p >= theta), len(seq) - 1)
        right += seq[at][1]
        used += (at + 1) / len(seq)
    return right / max(len(sequences), 1), used / max(len(sequences), 1)


def settle_threshold(sequences: list[list[tuple[float, bool]]], tolerance: float = TOLERANCE) -> tuple[float, dict]:
    """The lowest confidence at which settling loses at most `tolerance` of accuracy against reading every run to
    its last reading, with what it measured."""
    full, _ = settled(sequences, 2.0)
    chosen = 1.0
    for theta in sorted({p for seq in sequences for p, _ in seq}, reverse=True):
        accuracy, _ = settled(sequences, theta)
        if accuracy < full - tolerance:
            break
        chosen = theta
    else:  # no confidence seen made settling lose anything: every reading settles, not only those seen so far
        chosen = 0.0
    accuracy, used = settled(sequences, chosen)
    return chosen, {"accuracy": round(accuracy, 4), "readings_made": round(used, 4),
                    "read_to_the_end": round(full, 4), "runs": len(sequences)}


def held_out(data: list[Example], names: list[str], folds: int = FOLDS) -> list[float]:
    """Each example's probability from a model fitted on the other folds: by document when there are enough
    documents, else by question."""
    unit = (lambda e: e.document) if len({e.document for e in data}) >= folds else (lambda e: e.group)
    fold_of = {g: i % folds for i, g in enumerate(sorted({unit(e) for e in data}))}
    out = [0.0] * len(data)
    for k in range(folds):
        train = [e for e in data if fold_of[unit(e)] != k]
        if not train:
            continue
        scorer = fit(train, names)
        for i, e in enumerate(data):
            if fold_of[unit(e)] == k:
                out[i] = scorer.probability(e.features)
    return out


def select(data: list[Example], pool, gain: float = GAIN, most: int = MAX_FEATURES,
           measure_of=None) -> tuple[list[str], list]:
    """Forward selection on held-out documents: the feature that makes the best answers right most often (or
    scores best by `measure_of(data, names)`, higher better) joins, while one adds at least `gain`. A feature that
    only helps on the documents it was fitted on never joins; with few questions, few features are chosen. Returns
    the features and each step's score."""
    measure_of = measure_of or accuracy
    pool = [f for f in pool if any(f in e.features for e in data)] or list(pool)
    chosen: list[str] = []
    steps: list = []
    score = 0.0
    while len(chosen) < most:
        trials = [(measure_of(data, chosen + [f]), f) for f in pool if f not in chosen]
        if not trials:
            break
        value, name = max(trials, key=lambda t: (t[0], -pool.index(t[1])))
        if chosen and value < score + gain:  # the first joins whatever it scores alone (ties count wrong)
            break
        chosen.append(name)
        steps.append([name, round(value, 4)])
        score = value
    return chosen or [pool[0]], steps


def accuracy(data: list[Example], names: list[str]) -> float:
    best = best_per_reading(data, held_out(data, names))
    return sum(ok for _, ok in best) / max(len(best), 1)


def answers(data: list[Example], probabilities: list[float]) -> list[Example]:
    """One example per reading for the confidence: the features of its best candidate's standing among the others
    (`features.answer_features`, on these probabilities), labelled by whether that candidate is right."""
    pools: dict[int, list[tuple[float, Example]]] = {}
    for e, p in zip(data, probabilities):
        pools.setdefault(e.reading, []).append((p, e))
    out = []
    for reading, pool in sorted(pools.items()):
        pool.sort(key=lambda t: (-t[0], t[1].right))  # of candidates scored alike, a wrong one first (see _best)
        top = pool[0][1]
        out.append(Example(top.group, reading, answer_features([(p, e.features) for p, e in pool]), top.right,
                           top.run, top.document))
    return out


def log_loss(best: list[tuple[float, bool]]) -> float:
    eps = 1e-6
    return -sum(math.log(min(max(p if ok else 1.0 - p, eps), 1.0)) for p, ok in best) / max(len(best), 1)


def fitted_loss(data: list[Example], names: list[str]) -> float:
    """Minus the held-out log-loss of a model over `names` (higher better, as `select` wants)."""
    return -log_loss([(p, e.right) for e, p in zip(data, held_out(data, names))])


def confidence(given: list[Example], pool=ANSWER) -> tuple["Scorer | None", list[float], list]:
    """The confidence model over the answers' standing (`pool`, of `ANSWER`; the examples `answers` made), chosen
    feature by feature on held-out documents, when it predicts the best answers' rightness better (log-loss) than
    their own probability does. Returns it (or None), each reading's held-out confidence, and the selection's
    steps."""
    plain = [1.0 / (1.0 + math.exp(-e.features["a_best"])) for e in given]
    if len({e.right for e in given}) < 2:  # every best answer right (or none): nothing to tell apart
        return None, plain, []
    names, steps = select(given, list(pool), gain=LOSS_GAIN, measure_of=fitted_loss)
    held = held_out(given, names)
    if log_loss(list(zip(held, (e.right for e in given)))) >= log_loss(list(zip(plain, (e.right for e in given)))):
        return None, plain, []
    return fit(given, names), held, steps


def threshold(best: list[tuple[float, bool]], precision: float) -> float:
    """The lowest confidence at which the answers at or above it are right at least `precision` of the time
    (1.0, verifying nothing, when no threshold reaches it)."""
    ranked = sorted(best, key=lambda b: -b[0])
    chosen, right = 1.0, 0
    for i, (p, ok) in enumerate(ranked, 1):
        right += ok
        if right / i >= precision and (i == len(ranked) or ranked[i][0] < p):
            chosen = p
    return chosen


def measure(best: list[tuple[float, bool]], tau: float) -> dict:
    """Precision and coverage of "verified" at tau, accuracy of the best answers, calibration error."""
    verified = [ok for p, ok in best if p >= tau]
    right = sum(ok for _, ok in best)
    bins: dict[int, list[tuple[float, bool]]] = {}
    for p, ok in best:
        bins.setdefault(min(int(p * BINS), BINS - 1), []).append((p, ok))
    ece = sum(abs(sum(p for p, _ in b) / len(b) - sum(ok for _, ok in b) / len(b)) * len(b)
              for b in bins.values()) / max(len(best), 1)
    return {"readings": len(best), "accuracy": round(right / max(len(best), 1), 4),
            "verified": len(verified), "precision": round(sum(verified) / len(verified), 4) if verified else None,
            "coverage": round(sum(verified) / right, 4) if right else None, "calibration_error": round(ece, 4)}


def calibrate(rows: list[dict], features=GENERIC, precision: float = 0.95, source: str = "",
              choose: bool = True, pool=ANSWER) -> Scorer:
    """The scorer over `features` (those of them forward selection chooses, unless `choose` is off) fitted on
    every example, with its confidence chosen among `pool`, and the threshold and figures the held-out folds
    give."""
    data = readings(rows)
    names = [f for f in features if any(f in e.features for e in data)] or list(GENERIC)
    steps: list = []
    if choose:
        names, steps = select(data, names)
    return trusted(fit(data, names), data, held_out(data, names), precision, source, steps, pool)


def keep_ranking(scorer: Scorer, rows: list[dict], precision: float = 0.95, source: str = "",
                 pool=ANSWER) -> Scorer:
    """A calibration whose ranking is `scorer`'s, unchanged (its features and weights), with the confidence (chosen
    among `pool`) and the thresholds fitted anew on these readings: what lcread answers stays as it is; how far it
    trusts the answers is measured on documents the confidence was not fitted on."""
    data = readings(rows)
    kept = Scorer(**{**scorer.to_dict(), "answer": None})
    return trusted(kept, data, [scorer.probability(e.features) for e in data], precision, source,
                   scorer.measured.get("chosen", []), pool)


def trusted(scorer: Scorer, data: list[Example], probabilities: list[float], precision: float, source: str,
            steps: list, pool=ANSWER) -> Scorer:
    """`scorer` with its confidence (fitted on held-out documents), the thresholds that verify and settle on the
    held-out confidences, and what they measured there; `probabilities` are the ranking's, each from a fit that did
    not see its document (or the shipped ranking's own)."""
    ranking = best_per_reading(data, probabilities)
    given = answers(data, probabilities)
    sure, confidences, sure_steps = confidence(given, pool)
    best = [(c, e.right) for e, c in zip(given, confidences)]
    tau = threshold(best, precision)
    sequences: dict[int, list[tuple[float, bool]]] = {}
    for e, b in zip(given, best):
        sequences.setdefault(e.run, []).append(b)
    settle, when = settle_threshold(list(sequences.values()))
    scorer.answer = sure
    scorer.threshold = round(tau, 4)
    scorer.settle = round(min(settle, tau), 4)
    groups = len({e.group for e in data})
    scorer.measured = {"held_out": measure(best, tau), "settled": when, "questions": groups,
                       "documents": len({e.document for e in data}), "candidates": len(data),
                       "target_precision": precision, "chosen": steps,
                       "confidence": {"chosen": sure_steps, "log_loss": round(log_loss(best), 4),
                                      "log_loss_of_probability": round(log_loss(ranking), 4)}}
    scorer.source = source
    return scorer


def load_rows(folders) -> tuple[str, list[dict]]:
    """The model and the rows with readings of one or more bench folders (all of one model)."""
    import json
    from pathlib import Path

    from lcread.errors import LcreadError

    model, rows = None, []
    for folder in [folders] if isinstance(folders, (str, Path)) else folders:
        path = Path(folder)
        path = path / "results.json" if path.is_dir() else path
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            name = data["settings"]["model"]
        except (OSError, ValueError, KeyError, TypeError) as e:
            raise LcreadError(f"cannot read {path}: {e}; give a folder lcread bench --out wrote") from None
        if model is not None and name != model:
            raise LcreadError(f"{path} is of model {name}, the others of {model}: calibrate one model at a time")
        model = name
        found = [r for r in data.get("rows", []) if r.get("readings")]
        if not found:
            raise LcreadError(f"{path} holds no reader readings: run lcread bench with --modes select or sac first")
        rows += found
    return model, rows


def show(results, precision: float, out=None, features: list[str] | None = None, keep: bool = False) -> None:
    """`lcread calibrate --reader`: fit the model's scorer on bench folders' readings (with the span likelihoods
    when they were recorded, and over the generic features alone), print the held-out figures, and save both under
    the model's name (in the user's file, or `out`). With `features`, one scorer over exactly the ranking's among
    them, its confidence chosen among the confidence's (`a_...`, of `ANSWER`) among them."""
    from pathlib import Path

    from rich.console import Console

    from lcread.reader.scorer import save

    model, rows = load_rows(results)
    console = Console()
    suites = sorted({r["suite"] for r in rows})
    pool = [f for f in features or [] if f in ANSWER] or ANSWER
    ranking = [f for f in features or [] if f not in ANSWER]
    if keep:
        from lcread.reader.scorer import scorer_for

        _known(ranking, ANSWER)  # the ranking is kept: a feature of its is refused
        scorer = keep_ranking(scorer_for(model, True), rows, precision,
                              source=f"{model}, its ranking kept, confidence by lcread calibrate --reader "
                                     f"--keep-ranking on {len(rows)} runs of {', '.join(suites)}",
                              pool=pool)
        report(console, model, scorer)
        console.print(f"{model}: saved to {save(model, scorer, Path(out) if out else None)}")
        return
    scored = any(f in c["features"] for r in rows for x in r["readings"] for c in x["candidates"] for f in LIKELIHOOD)
    if ranking:
        _known(ranking, FEATURES + ANSWER)
        sets = {"likelihood" if any(f in LIKELIHOOD for f in ranking) else "generic": ranking}
    else:
        sets = SETS
    fitted = []
    for kind, names in sets.items():
        if not scored and any(f in LIKELIHOOD for f in names):
            continue
        name = f"{model}:{kind}"
        scorer = calibrate(rows, names, precision, choose=not ranking,
                           source=f"{name}, lcread calibrate --reader on {len(rows)} runs of {', '.join(suites)}",
                           pool=pool)
        report(console, name, scorer)
        save(name, scorer, Path(out) if out else None)
        fitted.append((name, scorer))
    if not fitted:
        from lcread.errors import LcreadError

        raise LcreadError("these readings hold no span likelihoods: give features a backend without them has")
    name, better = max(fitted, key=lambda f: better_key(f[1]))
    console.print(f"{model} uses {name} (the better on held-out documents); saved to "
                  f"{save(model, better, Path(out) if out else None)}")


def _known(features: list[str] | None, among) -> None:
    """A usage error naming the features given that are not among those that may be chosen."""
    unknown = sorted(set(features or []) - set(among))
    if unknown:
        from lcread.errors import UsageError

        raise UsageError(f"no feature {', '.join(unknown)}: choose among {', '.join(among)}")


def report(console, name: str, scorer: Scorer) -> None:
    """What a calibration measured on held-out documents, as `lcread calibrate --reader` prints it."""
    m = scorer.measured["held_out"]
    console.print(f"{name}: " + (f"chose {', '.join(f'{f} ({a:.0%})' for f, a in scorer.measured['chosen'])}"
                                 if scorer.measured["chosen"] else f"over {', '.join(scorer.features)}"))
    console.print(f"{name}: {scorer.measured['questions']} questions, {m['readings']} readings; on held-out "
                  f"documents: "
                  f"best answer right {m['accuracy']:.0%}; verified at confidence >= {scorer.threshold:.3f}: "
                  f"{m['verified']} (precision {m['precision'] if m['precision'] is not None else '-'}, "
                  f"coverage {m['coverage'] if m['coverage'] is not None else '-'}); calibration error "
                  f"{m['calibration_error']:.3f}")
    c = scorer.measured["confidence"]
    console.print(f"  confidence: " + (f"over {', '.join(scorer.answer.features)}" if scorer.answer else
                                       "the best candidate's probability") +
                  f"; held-out log-loss {c['log_loss']:.3f} (the best candidate's probability: "
                  f"{c['log_loss_of_probability']:.3f})")
    s = scorer.measured["settled"]
    console.print(f"  a run settles at confidence >= {scorer.settle:.3f}: right {s['accuracy']:.0%} with "
                  f"{s['readings_made']:.0%} of its readings made (reading to the end: {s['read_to_the_end']:.0%})")


def better_key(scorer: Scorer) -> tuple:
    """Of the calibrations, the better: more often right on held-out documents (to the percent), then more of its
    right answers verified, then the fewer features."""
    m = scorer.measured["held_out"]
    return (round(m["accuracy"], 2), m["coverage"] or 0.0, -len(scorer.features))
