"""acs: fold reading with Answer-Convergence Stopping (seed 000, DESIGN §7).

For each chunk in document order: fold it into capped notes, probe the answer state from the notes,
and let the stopping policy decide; the answer is the probe's prediction at the stopping step.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from lcread import prompts
from lcread.acs.chunks import Chunk
from lcread.acs.policies import Policy, parse_end, parse_verbalized
from lcread.acs.probe import Probe
from lcread.acs.rules import AnswerState, stability
from lcread.agent.result import RunResult, RunStats
from lcread.config import AcsConfig
from lcread.display import Display
from lcread.errors import LcreadError, ModelError
from lcread.grounding.evidence import has, norm
from lcread.grounding.question import STOPWORDS, classify, distinguishing_terms
from lcread.models import Model, Reply
from lcread.trace import Trace


def grounded_lines(reply: str, chunk: str, longest: int = 400) -> tuple[list[str], list[str]]:
    """The chunk's own lines that the model's reply points at, and the reply lines that point nowhere.

    A reply line points at a chunk line when one contains the other (case and spacing aside), so a bare
    "4817263" brings in its whole sentence and an invented sentence brings in nothing. A chunk line
    longer than `longest` is kept as a window around the quoted part.
    """
    rows = [(line.strip(), " ".join(line.split()).lower()) for line in chunk.splitlines() if line.strip()]
    kept, dropped = [], []
    for raw in reply.splitlines():
        quote = " ".join(raw.strip().lstrip("-*•").strip().strip('"\'').split()).lower()
        if len(quote) < 3:
            continue
        hits = [line for line, norm in rows if quote in norm or (len(norm) >= 20 and norm in quote)]
        if not hits:
            dropped.append(raw.strip())
        for line in hits[:3]:
            if len(line) > longest:
                at = max(0, " ".join(line.split()).lower().find(quote) - longest // 2)
                line = " ".join(line.split())[at:at + longest]
            kept.append(line)
    return kept, dropped


def about_the_question(lines: list[str], notes: str, terms: list[str]) -> tuple[list[str], list[str]]:
    """The lines that carry one of the question's distinguishing terms (a name, an id, a number), or
    share a name with a note that does (the next link of a chain); the rest are look-alikes: the same
    kind of fact about something else. With no distinguishing terms, every line is kept."""
    if not terms:
        return lines, []
    asked = {w for t in terms for w in t.lower().split()}

    def names(line: str) -> set[str]:  # the words of the names a line mentions
        return {w for e in distinguishing_terms(line, []) for w in e.lower().split()
                if len(w) >= 3 and w not in STOPWORDS} - asked

    linked = set().union(*(names(n) for n in notes.splitlines()))  # every note is about the question
    kept, unrelated = [], []
    for line in lines:
        low = norm(line)
        if any(has(low, t) for t in terms) or any(has(low, n) for n in linked):
            kept.append(line)
            linked |= names(line)
        else:
            unrelated.append(line)
    return kept, unrelated


def merge_notes(notes: str, lines: list[str]) -> str:
    """Append new lines that the notes do not already hold."""
    have = set(notes.splitlines())
    added = [line for line in dict.fromkeys(lines) if line not in have]
    return "\n".join(filter(None, [notes, *added]))


@dataclass
class AcsResult(RunResult):
    chunks_read: int = 0
    chunks_total: int = 0
    states: list[dict] = field(default_factory=list)
    tokens_by_kind: dict[str, int] = field(default_factory=lambda: {"fold": 0, "probe": 0, "gate": 0})

    def to_dict(self) -> dict:
        return {**super().to_dict(), "chunks_read": self.chunks_read, "chunks_total": self.chunks_total,
                "states": self.states, "tokens_by_kind": self.tokens_by_kind}


class FoldReader:
    mode = "acs"

    def __init__(self, model: Model, probe: Probe, policy: Policy, display: Display, trace: Trace,
                 config: AcsConfig | None = None):
        self.model, self.probe, self.policy = model, probe, policy
        self.display, self.trace = display, trace
        self.config = config or AcsConfig()
        self.terms = classify(probe.question, probe.options).terms
        """The question's distinguishing terms: notes keep only lines about them (and their chain)."""
        if policy.needs_logprobs and not model.supports_logprobs:
            raise LcreadError(f"--stop {policy.name} needs token log-probabilities, which {model.name} does not "
                              "give: use --stop verbalized, --stop end or --stop full, or --mode select")

    def reset(self) -> None:
        """Fresh cost counters for a new reading."""
        self.stats, self.by_kind = RunStats(), {"fold": 0, "probe": 0, "gate": 0}
        self.prior_charged = False

    def run(self, question: str, chunks: list[Chunk]) -> AcsResult:
        self.reset()
        states, gates, records = [], [], []
        n = len(chunks)
        self.trace.event("run_start", mode=self.mode, model=self.model.name, question=question, chunks=n,
                         policy=self.policy.name, config=self.config.model_dump())
        try:
            state, reason = self.read(question, chunks, states, gates, records)
        except KeyboardInterrupt:  # Ctrl-C or SIGTERM: the last answer state read, marked as not final
            reason = "interrupted"
            state = states[-1] if states else None
        except ModelError as e:  # the backend failed for good: the last answer state read, not final
            reason = f"model error: {e}"
            state = states[-1] if states else None
        return self.finish(state, reason, chunks_read=self.stats.steps, total=n, records=records)

    def read(self, question: str, chunks: list[Chunk], states: list, gates: list, records: list):
        """Fold, probe, decide, chunk by chunk; returns the last answer state and why reading stopped."""
        notes, n, state, reason = "", len(chunks), None, "read to the end"
        for chunk in chunks:
            t = chunk.index
            notes = self.fold(question, notes, chunk)
            if self.policy.probes_every_step:
                state = self.read_state(notes)
                states.append(state)
            if self.policy.gate:
                gates.append(self.ask_gate(notes))
            stop = self.policy.should_stop(t, n, states, gates)
            if (stop or t == n) and not self.policy.probes_every_step:
                state = self.read_state(notes)
                states.append(state)
            record = self.record(t, notes, state if self.policy.probes_every_step or stop or t == n else None,
                                 states, gates, stop)
            records.append(record)
            self.display.chunk(index=t, total=n, notes_chars=len(notes), answer=record.get("answer"),
                               posterior=record.get("posterior"), confidence=record.get("confidence"),
                               change=record.get("change"), gate=record.get("gate"), stop=stop)
            self.stats.steps = t
            if stop:
                reason = f"{self.policy.name} stopped"
                break
        return state, reason

    def fold(self, question: str, notes: str, chunk: Chunk) -> str:
        """One call per chunk: the model copies the sentences that bear on the question; lines it did not
        copy from the chunk are dropped (notes hold evidence, not guesses); the cap is kept in code."""
        # The options are not shown: a small model echoes them into its notes instead of copying evidence.
        # The notes gather evidence for the question; only the probe weighs the options.
        options = ""
        text = chunk.text()
        messages = [{"role": "user", "content": prompts.render(
            "acs_fold", question=question, options=options, label=chunk.label, chunk=text)}]
        budget = self.config.notes_chars // 3 + 64
        self.fits(messages, budget)
        reply = self.call("fold", messages, max_tokens=budget)
        room, added = self.config.notes_chars // 4, []
        kept, dropped = grounded_lines(reply.text, text, longest=min(400, room - 1))
        kept, unrelated = about_the_question(kept, notes, self.terms)
        if unrelated:
            self.trace.event("fold_unrelated", chunk=chunk.index, lines=unrelated[:20])
        for line in kept:  # one fold may add at most a quarter of the cap: a flood cannot wash out the notes
            if sum(len(a) + 1 for a in added) + len(line) + 1 > room:
                dropped.append(line)
                continue
            added.append(line)
        if dropped:
            self.trace.event("fold_dropped", chunk=chunk.index, lines=dropped[:20])
        new = merge_notes(notes, added)
        if len(new) > self.config.notes_chars:
            new = self.condense(question, options, new)
        return new

    def condense(self, question: str, options: str, notes: str) -> str:
        """Notes over the cap: ask once for a shorter rewrite; if still over, keep the oldest lines (the
        evidence found first), cut at the cap."""
        cap = self.config.notes_chars
        messages = [{"role": "user", "content": prompts.render(
            "acs_condense", notes=notes, question=question, options=options, length=len(notes), cap=cap)}]
        action = "condensed"
        if self.model.count_tokens(messages) + cap // 3 <= (self.model.context_window or 1 << 30):
            notes = self.call("fold", messages, max_tokens=cap // 3 + 64).text.strip()
        if len(notes) > cap:
            lines, size = [], 0
            for line in notes.splitlines():
                if size + len(line) + 1 > cap:
                    break
                lines.append(line)
                size += len(line) + 1
            notes, action = "\n".join(lines) or notes[:cap], "cut"
        self.trace.event("notes_over_cap", action=action, length=len(notes))
        return notes

    def fits(self, messages, max_tokens: int) -> None:
        window = self.model.context_window
        if window and self.model.count_tokens(messages) + max_tokens > window:
            raise LcreadError(f"a fold of {self.config.chunk_chars:,}-character chunks with "
                              f"{self.config.notes_chars:,}-character notes does not fit {self.model.name}'s "
                              f"{window:,}-token window: lower --chunk-chars or --notes-chars")

    def read_state(self, notes: str) -> AnswerState:
        state, reply = self.probe.read(notes)
        if self.probe.prior_reply is not None and not self.prior_charged:  # the likelihood probe's prior
            self.account("probe", self.probe.prior_reply)
            self.prior_charged = True
        self.account("probe", reply)
        return state

    def ask_gate(self, notes: str):
        text, reply = self.probe.gate(self.policy.gate, notes)
        self.account("gate", reply)
        return parse_verbalized(text) if self.policy.gate == "verbalized" else parse_end(text)

    def call(self, kind: str, messages, max_tokens: int) -> Reply:
        reply = self.model.query(messages, max_tokens=max_tokens)
        self.account(kind, reply)
        return reply

    def account(self, kind: str, reply: Reply) -> None:
        self.stats.record(reply, reply.prompt_tokens)
        self.by_kind[kind] += reply.prompt_tokens + reply.completion_tokens
        self.trace.event("call", kind=kind, prompt_tokens=reply.prompt_tokens,
                         completion_tokens=reply.completion_tokens, cached_tokens=reply.cached_tokens,
                         latency=round(reply.latency, 3), reply=reply.text[:500])

    def record(self, t: int, notes: str, state: AnswerState | None, states, gates, stop: bool) -> dict:
        record: dict = {"chunk": t, "notes_chars": len(notes), "stop": stop, "probe": self.probe.kind}
        if state is not None:
            record.update(answer=state.answer, confidence=round(state.confidence, 6), eligible=state.eligible)
            if state.posterior:
                record["posterior"] = {k: round(v, 6) for k, v in state.posterior.items()}
            if self.policy.probes_every_step:
                mean = stability(states, self.config.window)
                record["change"] = None if mean is None else round(mean, 6)
        if gates:
            record["gate"] = gates[-1]
        self.trace.event("chunk", **record)
        return record

    def finish(self, state: AnswerState | None, reason: str, chunks_read: int, total: int,
               records: list[dict]) -> AcsResult:
        self.stats.ended = time.monotonic()
        answer = state.answer if state else ""
        if self.probe.options and state:
            answer = f"{state.answer}) {dict(self.probe.options)[state.answer]}"
        final = reason == "read to the end" or reason.endswith(" stopped")
        result = AcsResult(answer, final, reason, self.mode, self.model.name, self.stats, chunks_read=chunks_read,
                           chunks_total=total, states=records, tokens_by_kind=dict(self.by_kind))
        self.trace.event("run_end", **result.to_dict())
        self.display.finish(answer=answer, final=True, reason=reason,
                            summary=f"{chunks_read}/{total} chunks · " + result.summary())
        return result
