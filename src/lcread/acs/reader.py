"""acs: fold reading with Answer-Convergence Stopping (seed 000).

For each chunk in document order: fold it into capped notes, probe the answer state from the notes,
and let the stopping policy decide; the answer is the probe's prediction at the stopping step.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from lcread import prompts
from lcread.acs.chunks import Chunk
from lcread.acs.policies import Gate, Policy
from lcread.acs.probe import Probe
from lcread.acs.rules import AnswerState, stability
from lcread.result import RunResult, RunStats
from lcread.errors import Stop, StopReason
from lcread.config import AcsConfig
from lcread.display import Display
from lcread.errors import LcreadError, ModelError
from lcread.grounding.evidence import has, norm
from lcread.language import load as load_language
from lcread.reader.question import asked, terms_of
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
        return {w for e in terms_of(line) for w in e.lower().split()
                if len(w) >= 3 and w not in load_language().stopwords} - asked

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
class Reading:
    """One call's reading after a fold: an answer state (a probe) or a gate's value, and what it cost."""

    value: object
    tokens: int
    seconds: float


@dataclass
class Step:
    """What one fold cost and what was read after it: the trajectory `replay` charges each policy on."""

    chunk: int
    notes_chars: int
    fold_tokens: int
    fold_seconds: float
    probes: dict[str, Reading] = field(default_factory=dict)
    """Probe kind -> the answer state it read (every step, or only at the stop)."""
    gates: dict[str, Reading] = field(default_factory=dict)
    """Gate key -> its reading, for the policy's gates."""


@dataclass
class AcsResult(RunResult):
    chunks_read: int = 0
    chunks_total: int = 0
    chunks: list[dict] = field(default_factory=list)
    """Per chunk read, as shown and traced: notes size, answer state, change, gate, stop."""
    steps: list[Step] = field(default_factory=list, repr=False)
    tokens_by_kind: dict[str, int] = field(default_factory=lambda: {"fold": 0, "probe": 0, "gate": 0})

    def to_dict(self) -> dict:
        return {**super().to_dict(), "chunks_read": self.chunks_read, "chunks_total": self.chunks_total,
                "chunks": self.chunks, "tokens_by_kind": self.tokens_by_kind}


class FoldReader:
    mode = "acs"

    def __init__(self, model: Model, probe: Probe | list[Probe], policy: Policy, display: Display, trace: Trace,
                 config: AcsConfig | None = None, grounding=None):
        self.probes = probe if isinstance(probe, list) else [probe]
        """The first probe's state decides and answers; the others are read beside it (for the bench)."""
        self.model, self.probe, self.policy = model, self.probes[0], policy
        self.display, self.trace = display, trace
        self.config = config or AcsConfig()
        self.grounding = grounding
        """(answer, notes) -> the reader's Reading of the answer's evidence (run.ground_notes), or None to skip it."""
        self.notes = ""
        self.terms = asked(self.probe.question, self.probe.options).terms
        """The question's distinguishing terms: notes keep only lines about them (and their chain)."""
        if policy.needs_logprobs and not model.supports_logprobs:
            raise LcreadError(f"--stop {policy.name} needs token log-probabilities, which {model.name} does not "
                              "give: use --stop verbalized, --stop end or --stop full, or --mode select")

    def run(self, question: str, chunks: list[Chunk]) -> AcsResult:
        self.stats, self.by_kind = RunStats(), {"fold": 0, "probe": 0, "gate": 0}
        steps, records = [], []
        n = self.total = len(chunks)
        self.trace.event("run_start", mode=self.mode, model=self.model.name, question=question, chunks=n,
                         policy=self.policy.name, config=self.config.model_dump())
        try:
            reason = self.read(question, chunks, steps, records)
        except KeyboardInterrupt:  # Ctrl-C or SIGTERM: the last answer state read, marked as not final
            reason = StopReason(Stop.INTERRUPTED)
        except ModelError as e:  # the backend failed for good: the last answer state read, not final
            reason = StopReason(Stop.MODEL_ERROR, str(e))
        return self.finish(steps, reason, records)

    def read(self, question: str, chunks: list[Chunk], steps: list[Step], records: list[dict]) -> StopReason:
        """Fold, probe, decide, chunk by chunk (Algorithm 1); returns why reading stopped."""
        notes, n = "", len(chunks)
        for chunk in chunks:
            t = chunk.index
            clock, before = time.monotonic(), self.by_kind["fold"]
            notes = self.notes = self.fold(question, notes, chunk)
            step = Step(t, len(notes), self.by_kind["fold"] - before, time.monotonic() - clock)
            steps.append(step)
            if self.policy.probes_every_step:
                self.read_states(step, notes)
            for gate in self.policy.gates:
                step.gates[gate.key] = self.ask(gate, notes)
            stop = self.policy.should_stop(t, n, self.states(steps), self.gate_values(steps))
            if (stop or t == n) and not self.policy.probes_every_step:
                self.read_states(step, notes)
            records.append(self.describe(step, steps, stop))
            self.stats.steps = t
            if stop:
                return StopReason(Stop.STOPPED, self.policy.name)
        return StopReason(Stop.READ_TO_END)

    def states(self, steps: list[Step]) -> list[AnswerState]:
        return [s.probes[self.probe.kind].value for s in steps if self.probe.kind in s.probes]

    def gate_values(self, steps: list[Step]) -> list:
        key = self.policy.gates[0].key if self.policy.gates else None
        return [s.gates[key].value for s in steps] if key else []

    def fold(self, question: str, notes: str, chunk: Chunk) -> str:
        """One call per chunk: the model copies the sentences that bear on the question; lines it did not
        copy from the chunk are dropped (notes hold evidence, not guesses); the cap is kept in code."""
        # The options are not shown: a small model echoes them into its notes instead of copying evidence.
        # The notes gather evidence for the question; only the probe weighs the options.
        text = chunk.text()
        messages = [{"role": "user", "content": prompts.render(
            "acs_fold", question=question, label=chunk.label, chunk=text)}]
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
            new = self.condense(question, new)
        return new

    def condense(self, question: str, notes: str) -> str:
        """Notes over the cap: ask once for a shorter rewrite; if still over, keep the oldest lines (the
        evidence found first), cut at the cap."""
        cap = self.config.notes_chars
        messages = [{"role": "user", "content": prompts.render(
            "acs_condense", notes=notes, question=question, length=len(notes), cap=cap)}]
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

    def read_states(self, step: Step, notes: str) -> None:
        for probe in self.probes:
            clock = time.monotonic()
            state, replies = probe.read(notes)
            for reply in replies:
                self.account("probe", reply)
            step.probes[probe.kind] = Reading(state, sum(r.prompt_tokens + r.completion_tokens for r in replies),
                                              time.monotonic() - clock)

    def ask(self, gate: Gate, notes: str) -> Reading:
        clock = time.monotonic()
        value, reply = gate.ask(self.model, self.probe.question, self.probe.options_text, notes)
        self.account("gate", reply)
        return Reading(value, reply.prompt_tokens + reply.completion_tokens, time.monotonic() - clock)

    def call(self, kind: str, messages, max_tokens: int) -> Reply:
        reply = self.model.query(messages, max_tokens=max_tokens)
        self.account(kind, reply)
        return reply

    def account(self, kind: str, reply: Reply) -> None:
        self.stats.count(reply, reply.prompt_tokens)
        self.by_kind[kind] += reply.prompt_tokens + reply.completion_tokens
        self.trace.event("call", kind=kind, prompt_tokens=reply.prompt_tokens,
                         completion_tokens=reply.completion_tokens, cached_tokens=reply.cached_tokens,
                         latency=round(reply.latency, 3), reply=reply.text[:500])

    def describe(self, step: Step, steps: list[Step], stop: bool) -> dict:
        """The chunk as shown and traced: notes size, the answer state and its change, the gate, the stop."""
        record: dict = {"chunk": step.chunk, "notes_chars": step.notes_chars, "stop": stop, "probe": self.probe.kind}
        if self.probe.kind in step.probes:
            state = step.probes[self.probe.kind].value
            record.update(answer=state.answer, confidence=round(state.confidence, 6), eligible=state.eligible)
            if state.posterior:
                record["posterior"] = {k: round(v, 6) for k, v in state.posterior.items()}
            if self.policy.probes_every_step:
                mean = stability(self.states(steps), self.config.window)
                record["change"] = None if mean is None else round(mean, 6)
        if self.policy.gates:
            record["gate"] = step.gates[self.policy.gates[0].key].value
        self.trace.event("chunk", **record)
        self.display.chunk(index=step.chunk, total=self.total, **{
            k: record.get(k) for k in ("notes_chars", "answer", "posterior", "confidence", "change", "gate")},
            stop=stop)
        return record

    def finish(self, steps: list[Step], reason: StopReason, records: list[dict]) -> AcsResult:
        self.stats.ended = time.monotonic()
        states = self.states(steps)
        state = states[-1] if states else None
        if state is None or not steps[-1].notes_chars:  # nothing about the question was read: no guess
            answer = None
        elif self.probe.options:
            answer = f"{state.answer}) {dict(self.probe.options)[state.answer]}"
        else:
            answer = state.answer
        final = reason.completed
        result = AcsResult(answer, final, reason, self.mode, self.model.name, self.stats, chunks_read=len(steps),
                           chunks_total=self.total, chunks=records, steps=steps, tokens_by_kind=dict(self.by_kind))
        if answer is None:  # not an answer: exit 4 (unverified) when the reading ended, 3 after a limit
            result.verified, result.missing = False, "nothing in what was read answers the question"
        elif self.grounding is not None:  # the notes are the document's own lines: cited and scored like select's
            reading = self.grounding(answer, self.notes)
            result.verified = reading.verified if reading.applies else None
            result.citations, result.confidence, result.grounded = reading.citations(), reading.confidence, \
                reading.grounded
            result.missing = reading.missing(reading, answer)
        self.trace.event("run_end", **result.to_dict())
        self.display.finish(answer=result.text, final=final, reason=str(reason), verified=result.verified,
                            missing=result.missing, citations=[c.label() + ": " + c.quote for c in result.citations],
                            summary=f"{len(steps)}/{self.total} chunks · " + result.summary())
        return result
