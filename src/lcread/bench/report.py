"""What a batch shows while it runs and when it ends."""

from __future__ import annotations

import re
import statistics

from rich.table import Table


def bench_summary(rows: list[dict]) -> list[dict]:
    """Per mode (and acs policy): accuracy, cost and, for stopping policies, the evidence-aligned metrics."""
    from lcread.bench.metrics import (Outcome, Reference, accuracy_regret, mean_over_read, premature_rate,
                                      savings_capture)

    out = []
    for mode in dict.fromkeys(r["mode"] for r in rows):
        group = [r for r in rows if r["mode"] == mode]
        ran = [r for r in group if r.get("error") is None]
        entry = {"mode": mode, "tasks": len(group), "not_run": len(group) - len(ran),
                 "accuracy": sum(r["correct"] for r in ran) / len(ran) if ran else None,
                 "mean_tokens": statistics.mean(r["total_tokens"] for r in ran) if ran else None,
                 "median_seconds": statistics.median(r["wall_time"] for r in ran) if ran else None,
                 "peak_context": max((r["peak_context"] for r in ran if r.get("peak_context")), default=None),
                 "median_steps": statistics.median(r.get("steps") or 0 for r in ran) if ran else None,
                 "compactions": sum(r.get("compactions") or 0 for r in ran)}
        if mode.startswith("acs/") and ran:
            suffix = mode[mode.index("·"):] if "·" in mode else ""
            full = {r["task"]: r for r in rows if r["mode"] == "acs/full" + suffix}
            refs = [Reference(r["evidence_chunk"], r["full_tokens"], r["oracle_tokens"],
                              full[r["task"]]["correct"] if r["task"] in full else r["correct"]) for r in ran]
            outs = [Outcome(r["steps"], r["total_tokens"], r["correct"]) for r in ran]
            entry.update(premature=premature_rate(outs, refs), over_read=mean_over_read(outs, refs),
                         capture=savings_capture(outs, refs), regret=accuracy_regret(outs, refs))
        out.append(entry)
    return out


def grounding_summary(rows: list[dict]) -> list[dict]:
    """Per suite and command mode: accuracy, the share grounded and verified, the accuracy of verified answers
    (precision) and of unverified ones, the share of right answers verified (coverage), the calibration error of
    the answers' confidence, median tokens, and why answers were not verified."""
    out = []
    runs = [r for r in rows if r.get("error") is None and "verified" in r and not r["mode"].startswith("acs")]
    for suite in dict.fromkeys(r["suite"] for r in runs):
        for mode in dict.fromkeys(r["mode"] for r in runs):
            group = [r for r in runs if r["suite"] == suite and r["mode"] == mode]
            if not group:
                continue
            verified = [r for r in group if r["verified"]]
            unverified = [r for r in group if not r["verified"]]
            missing: dict[str, int] = {}
            for r in unverified:
                key = missing_kind(r.get("missing"))
                missing[key] = missing.get(key, 0) + 1
            real = [r for r in group if "cites_evidence" in r]
            out.append({"suite": suite, "mode": mode, "tasks": len(group),
                        "attributed": sum(r["correct"] and r["cites_evidence"] for r in real) / len(real)
                        if real else None,
                        "first_step": sum(r["first_step_holds_evidence"] for r in real) / len(real) if real else None,
                        "median_seconds": statistics.median(r.get("wall_time") or 0 for r in group),
                        "agreement": phrasing_agreement(group),
                        "accuracy": sum(r["correct"] for r in group) / len(group),
                        "verified": len(verified) / len(group),
                        "grounded": sum(bool(r.get("grounded")) for r in group) / len(group),
                        "precision": sum(r["correct"] for r in verified) / len(verified) if verified else None,
                        "coverage": sum(r["correct"] for r in verified) / right if (right := sum(
                            r["correct"] for r in group)) else None,
                        "calibration_error": calibration_error(group),
                        "unverified_accuracy": sum(r["correct"] for r in unverified) / len(unverified)
                        if unverified else None,
                        "median_tokens": statistics.median(r.get("total_tokens") or 0 for r in group),
                        "missing": dict(sorted(missing.items(), key=lambda kv: -kv[1]))})
    return out


def calibration_error(rows: list[dict], bins: int = 10) -> float | None:
    """Expected calibration error of the answers' confidence: |confidence - accuracy| per bin, weighted."""
    scored = [(r["confidence"], bool(r["correct"])) for r in rows if r.get("confidence") is not None]
    if not scored:
        return None
    groups: dict[int, list[tuple[float, bool]]] = {}
    for p, ok in scored:
        groups.setdefault(min(int(p * bins), bins - 1), []).append((p, ok))
    return sum(abs(sum(p for p, _ in g) - sum(ok for _, ok in g)) for g in groups.values()) / len(scored)


def phrasing_agreement(rows: list[dict]) -> float | None:
    """Of the questions asked in several phrasings, the share whose phrasings never verify different answers
    (each verifies the same answer, or does not verify): "verified" must not depend on the words used."""
    from lcread.text import normalize

    groups: dict[str, list[dict]] = {}
    for r in rows:
        if r.get("group"):
            groups.setdefault(r["group"], []).append(r)
    several = [g for g in groups.values() if len(g) > 1]
    if not several:
        return None
    agree = [len({normalize(r["answer"] or "") for r in g if r.get("verified")}) <= 1 for g in several]
    return sum(agree) / len(agree)


def missing_kind(text: str | None) -> str:
    """A missing requirement without its particulars (quoted names and numbers), for counting."""
    if not text:
        return "none"
    return re.sub(r"'[^']*'|\"[^\"]*\"|\d[\d,]*", "…", text)[:70]


def grounding_table(summary: list[dict]) -> Table:
    table = Table(title="grounding: answers verified, how often verified answers are right, and (real documents) "
                        "right and cited on the evidence line, and the first step's passages holding it")
    for col in ("suite", "mode", "tasks", "accuracy", "grounded", "verified", "precision", "coverage",
                "calib. error", "unverified acc.", "attributed", "first step", "agreement", "median tokens", "median s",
                "why unverified (most common)"):
        table.add_column(col, justify="left" if col.startswith(("suite", "mode", "last")) else "right")
    for s in summary:
        top = next(iter(s["missing"].items()), None)
        table.add_row(s["suite"], s["mode"], str(s["tasks"]), f"{s['accuracy']:.2f}", f"{s['grounded']:.0%}",
                      f"{s['verified']:.0%}", "-" if s["precision"] is None else f"{s['precision']:.2f}",
                      "-" if s["coverage"] is None else f"{s['coverage']:.2f}",
                      "-" if s["calibration_error"] is None else f"{s['calibration_error']:.3f}",
                      "-" if s["unverified_accuracy"] is None else f"{s['unverified_accuracy']:.2f}",
                      "-" if s.get("attributed") is None else f"{s['attributed']:.2f}",
                      "-" if s.get("first_step") is None else f"{s['first_step']:.0%}",
                      "-" if s.get("agreement") is None else f"{s['agreement']:.0%}",
                      f"{s['median_tokens']:,.0f}", f"{s.get('median_seconds', 0):.1f}", f"{top[1]}× {top[0]}" if top else "")
    return table


def bench_table(summary: list[dict]) -> Table:
    table = Table(title="lcread bench: every mode on the same tasks and model")
    cols = ("mode", "tasks", "not run", "accuracy", "mean tokens", "median s", "peak context", "median steps",
            "compactions", "premature", "over-read", "capture", "regret")
    for col in cols:
        table.add_column(col, justify="right")

    def fmt(value, spec):
        return "-" if value is None else format(value, spec)

    for s in summary:
        table.add_row(s["mode"], str(s["tasks"]), str(s["not_run"]), fmt(s["accuracy"], ".2f"),
                      fmt(s["mean_tokens"], ",.0f"), fmt(s["median_seconds"], ".1f"), fmt(s["peak_context"], ","),
                      fmt(s["median_steps"], ".0f"), str(s["compactions"]), fmt(s.get("premature"), ".0%"),
                      fmt(s.get("over_read"), ".2f"), fmt(s.get("capture"), ".0%"), fmt(s.get("regret"), "+.2f"))
    return table


def bench_plot(summary: list[dict], path) -> None:
    """Accuracy against mean tokens per task, one point per mode / policy (log x)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    points = [s for s in summary if s["accuracy"] is not None and s["mean_tokens"]]
    fig, ax = plt.subplots(figsize=(7, 4.5), dpi=120)
    for s in points:
        ax.scatter(s["mean_tokens"], s["accuracy"], s=40)
        ax.annotate(s["mode"], (s["mean_tokens"], s["accuracy"]), textcoords="offset points", xytext=(5, 4), fontsize=8)
    ax.set_xscale("log")
    ax.set_xlabel("mean tokens per task (log scale)")
    ax.set_ylabel("accuracy")
    ax.set_ylim(-0.05, 1.05)
    ax.grid(True, alpha=0.3)
    ax.set_title("accuracy against cost, per mode and stopping policy")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
