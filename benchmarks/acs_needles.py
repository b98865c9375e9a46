"""ACS against full reading and the baseline gates on 20 single-needle tasks, embedded model.

    python benchmarks/acs_needles.py [--seed N] [--chars 36000] [--chunk-chars 6000] [--notes-chars 1500]

Each task is read once, folding every chunk and recording the probe and both gates after each fold;
every stopping policy is then replayed on that same trajectory and charged only for its own calls
(seed 000, App. A). Prints accuracy, tokens and saving against full reading, premature-stop rate
(stopped before the evidence chunk), mean over-read (chunks read past it), savings capture, accuracy
regret, the probe's share of ACS's tokens, and a sweep of theta.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

from lcread.acs.chunks import chunk_of, chunk_store
from lcread.acs.policies import AcsPolicy, EndPolicy, FullPolicy, RandomPolicy, VerbalizedPolicy
from lcread.acs.probe import Probe
from lcread.acs.reader import FoldReader
from lcread.acs.replay import oracle_tokens, record, replay
from lcread.bench.corpus import austen_text
from lcread.bench.metrics import (Outcome, Reference, accuracy, accuracy_regret, mean_over_read, premature_rate,
                                  savings_capture, token_saving)
from lcread.bench.needles import is_correct, needle_tasks
from lcread.config import AcsConfig, ModelConfig
from lcread.display import SilentDisplay
from lcread.documents import DocumentStore
from lcread.models import get_model
from lcread.trace import JsonlTrace


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--tasks", type=int, default=20)
    parser.add_argument("--chars", type=int, default=36_000)
    parser.add_argument("--chunk-chars", type=int, default=6_000)
    parser.add_argument("--notes-chars", type=int, default=1_500)
    parser.add_argument("--model", default="local")
    parser.add_argument("--out", type=Path, default=Path("bench-results/acs"))
    args = parser.parse_args()
    console = Console(stderr=True)
    depths = [(i + 0.5) / args.tasks for i in range(args.tasks)]
    tasks = needle_tasks(austen_text(), [args.chars], depths, args.seed, args.out / "docs")
    model = get_model(ModelConfig(name=args.model))
    config = AcsConfig(chunk_chars=args.chunk_chars, notes_chars=args.notes_chars)
    trace = JsonlTrace(args.out / "trace.jsonl")
    thetas = [0.5, 0.7, 0.9, 0.95, 0.99, 0.995]
    policies = {f"acs θ={t}": AcsPolicy(t, config.epsilon, config.window) for t in thetas}
    rows = []
    for i, task in enumerate(tasks):
        with DocumentStore.open([task.path]) as store:
            chunks = chunk_store(store, config.chunk_chars)
            evidence = chunk_of(chunks, task.evidence_start)
            probe = Probe(model, task.question, [], config.top_k, config.draft_tokens)
            reader = FoldReader(model, probe, FullPolicy(), SilentDisplay(), trace, config)
            started = time.monotonic()
            steps = record(reader, task.question, chunks)
            seconds = time.monotonic() - started
        named = {**policies, "full": FullPolicy(), "random": RandomPolicy(seed=args.seed * 1000 + i),
                 "verbalized": VerbalizedPolicy(config.gate_threshold), "end": EndPolicy()}
        outcomes = {name: replay(p, steps) for name, p in named.items()}
        oracle = oracle_tokens(steps, evidence)
        row = {"id": task.id, "depth": task.depth, "chunks": len(chunks), "evidence": evidence, "oracle": oracle,
               "seconds": seconds, "expected": task.answer,
               "states": [[s.state.answer, round(s.state.confidence, 4), s.verbalized, s.end] for s in steps],
               "policies": {n: {"stop": o.stop, "answer": o.answer, "tokens": o.tokens, "probe": o.probe_tokens,
                                "correct": is_correct(o.answer, task.answer)} for n, o in outcomes.items()}}
        rows.append(row)
        acs = row["policies"]["acs θ=0.995"]
        console.print(f"{task.id} evidence chunk {evidence}/{len(chunks)}: full "
                      f"{'ok' if row['policies']['full']['correct'] else 'MISS'}; acs stop {acs['stop']} "
                      f"{'ok' if acs['correct'] else 'MISS'}; conf {[s[1] for s in row['states']]} {seconds:.0f}s")
    (args.out / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    report(rows, Console(width=160))
    return 0


def summarize(rows: list[dict], name: str) -> dict:
    refs = [Reference(r["evidence"], r["policies"]["full"]["tokens"], r["oracle"], r["policies"]["full"]["correct"])
            for r in rows]
    ps = [r["policies"][name] for r in rows]
    outcomes = [Outcome(p["stop"], p["tokens"], p["correct"]) for p in ps]
    tokens = sum(p["tokens"] for p in ps)
    return {"accuracy": accuracy(outcomes), "tokens": tokens / len(rows), "saving": token_saving(outcomes, refs),
            "premature": premature_rate(outcomes, refs), "over_read": mean_over_read(outcomes, refs),
            "capture": savings_capture(outcomes, refs), "regret": accuracy_regret(outcomes, refs),
            "probe_share": sum(p["probe"] for p in ps) / tokens if tokens else 0.0}


def report(rows: list[dict], console: Console) -> None:
    table = Table(title=f"stopping policies on {len(rows)} needle tasks, one recorded reading each")
    for col in ("policy", "accuracy", "tokens/task", "saving vs full", "premature", "over-read",
                "savings capture", "accuracy regret", "probe share"):
        table.add_column(col, justify="right")
    for name in rows[0]["policies"]:
        s = summarize(rows, name)
        table.add_row(name, f"{s['accuracy']:.2f}", f"{s['tokens']:,.0f}", f"{s['saving']:.1%}", f"{s['premature']:.1%}",
                      f"{s['over_read']:.2f}", f"{s['capture']:.1%}", f"{s['regret']:+.2f}", f"{s['probe_share']:.1%}")
    console.print(table)
    confidences = [c for r in rows for _, c, _, _ in r["states"]]
    hits = [c for r in rows for i, (a, c, _, _) in enumerate(r["states"], 1)
            if i >= r["evidence"] and is_correct(a, r["expected"])]
    console.print(f"probe confidence: median {statistics.median(confidences):.3f}, max {max(confidences):.3f}; "
                  f"on correct states after the evidence: median {statistics.median(hits) if hits else 0:.3f}; "
                  f"share of states >= 0.995: {sum(c >= 0.995 for c in confidences) / len(confidences):.1%}; "
                  f"recording time median {statistics.median(r['seconds'] for r in rows):.0f} s/task")


if __name__ == "__main__":
    sys.exit(main())
