"""The command loop that select and sac share (seed 003 §3): query -> read -> judge -> execute -> observe, until the
reader is sure of an answer in what was shown, or a limit. Whenever something new was shown, the reader reads it
(a call of its own where the model scores the candidates: the question after the shown lines that match it best),
so the loop knows after each step whether it may stop. What differs
between the modes is how the model's context is kept from one step to the next, a `Context` made for each run:
select appends to one conversation and compacts it into a handoff; sac starts every step afresh from a written
state and the last observation."""

from __future__ import annotations

import time
from dataclasses import replace

from lcread import prompts
from lcread.tools.grammar import QUOTED_ANSWER, answer_only_grammar, command_grammar, without_command
from lcread.agent.actions import Actions
from lcread.agent.gate import Accepted, AnswerGate, Decision, Halted, lines
from lcread.agent.run import Context, Run, example_term
from lcread.config import LoopConfig
from lcread.display import Display
from lcread.errors import ContextOverflow, FormatError, LimitReached, ModelError, OutOfTime, Submitted
from lcread.grounding.evidence import EvidenceLog
from lcread.language import load as language
from lcread.models import Messages, Model, Reply, Scoring
from lcread.reader import READER_PREFIX, Reader, Reading, Scorer, asked, parse_options, scorer_for
from lcread.result import RunResult
from lcread.errors import Stop, StopReason
from lcread.tools import Command, Observation, ParseError, ToolRunner, parse
from lcread.trace import Trace

REPLY_CHARS = 16_000
"""Characters of a reply read at most: a command and its state are a few hundred; a server may send megabytes."""
LOOKUP_ROUNDS = 3
"""Rounds of lookups and reading again after one call at most (a name defined as another, a chain's links)."""
READER_TOKENS = 48
"""Tokens the model may write for its answer in the reader's own call."""


class CommandLoop:
    context: type[Context] = Context
    """How the model's context is kept from step to step (select's conversation, sac's written state)."""

    def __init__(self, model: Model, tools: ToolRunner, display: Display, trace: Trace,
                 config: LoopConfig | None = None, scorer: Scorer | None = None):
        self.model, self.tools, self.display, self.trace = model, tools, display, trace
        self.config = (config or LoopConfig()).fitted(model.context_window)
        self.scorer = scorer or scorer_for(model.name, model.scores_spans)
        """The reader's calibrated scorer: the model's own calibration unless one is handed in."""
        self.scores_spans = model.scores_spans and self.scorer.likelihood
        """Whether the candidates are scored by the model (only when the scorer reads the span likelihoods)."""
        self.reads_passages = self.scores_spans and self.config.reader_call
        """Whether they are scored in the reader's own call (the question after the passages) rather than on each
        of the agent's calls."""
        self.checks = self.reads_passages and (self.config.reader_check if self.config.reader_check is not None
                                               else self.scorer.reads_check)
        """Whether the reader's own call is followed by its check (`LoopConfig.reader_check`)."""
        self.names = [d.name for d in tools.store.docs]
        self.mode = self.context.mode
        self.actions = Actions(tools, self.config, display, trace, self.context.keeps_history)

    def run(self, question: str) -> RunResult:
        run = self.start(question)
        context = self.context(self, run)
        try:
            if self.config.first_step:
                self.actions.first_step(run, context)
            while True:
                try:
                    self.step(run, context)
                except FormatError as e:
                    run.format_errors += 1
                    self.trace.event("format_error", step=run.stats.steps, error=str(e))
                    context.format_error(str(e))
        except Submitted as e:
            return self.finish(run, e.reading, e.answer, final=True, stop=StopReason(Stop.ANSWERED))
        except (LimitReached, ModelError, KeyboardInterrupt) as e:
            stop = e.reason if isinstance(e, LimitReached) else StopReason(Stop.MODEL_ERROR, str(e)) \
                if isinstance(e, ModelError) else StopReason(Stop.INTERRUPTED)
            return self.finish(run, self.best_reading(run, context, stop), None, final=False, stop=stop)

    def start(self, question: str) -> Run:
        text, options = parse_options(question)
        evidence = EvidenceLog()
        ranker = self.tools.question_ranker(text)
        reader = Reader(asked(text, options), evidence, self.scorer, ranker.score, ranker.spans, self.actions.place_of,
                        self.actions.heading_of, self.tools.count_lines, ranker.cover, self.tools.count_entries)
        run = Run(question, reader, AnswerGate(self.config, self.trace, example_term(question)), evidence)
        self.display.start(question=question, model=self.model.name, mode=self.mode,
                           documents=self.tools.store.listing(), limit=self.config.context_limit)
        self.trace.event("run_start", mode=self.mode, model=self.model.name, question=question,
                         documents=self.names, config=self.config.model_dump(), scorer=reader.scorer.source)
        return run

    def step(self, run: Run, context: Context) -> None:
        """One call: the model's command and the reader's scores, the gate's decision, then the command run."""
        self.check_limits(run)
        pool = run.reader.pool()
        if self.reads_passages and run.unread:
            if self.actions.read_on(run):  # a list the shown lines cut short, read on before the reader reads
                pool = run.reader.pool()
            act(self.reader_call(run, pool))  # a reading the reader is sure of ends the run here
            pool = run.reader.pool()
        scoring = run.reader.scoring(pool) if self.scores_spans and not self.reads_passages else None
        try:
            reply = self.query(run, context.messages(), context.reply_tokens(), grammar=context.grammar(),
                               scoring=scoring)
        except ContextOverflow:  # the server's window is smaller than it said
            if not context.shrink():
                raise
            self.trace.event("context_overflow", step=run.stats.steps)
            reply = self.query(run, context.messages(), context.reply_tokens(), grammar=context.grammar(),
                               scoring=scoring)
        run.stats.steps += 1
        try:
            command = context.read(reply.text[:REPLY_CHARS])
        except FormatError:
            self.judge(run, pool, reply, None)  # a reading the reader is sure of ends the run all the same
            raise
        run.format_errors = 0
        sent_back = self.judge(run, pool, reply, command)
        if command.name == "answer":  # an answer is no command repeated: the commands around it are not "in a row"
            run.repeats, run.repeated = 0, None
        observation = sent_back or self.actions.execute(run, command)
        context.observe(command, self.actions.followed(run, observation))

    def reader_call(self, run: Run, pool) -> Decision | None:
        """The question after the shown lines that match it best, each candidate scored as the answer there and
        the model's reply its own answer: a reading of the evidence apart from the agent's tools and history."""
        run.read_at = len(run.evidence.pieces)
        passages = prompts.render("reader_passages", passages=run.reader.passages(pool=pool),
                                  question=run.reader.asked.question)
        messages = [{"role": "system", "content": prompts.render("reader_system")},
                    {"role": "user", "content": passages}]
        self.trace.event("reader_call", step=run.stats.steps, pieces=run.read_at)
        reply = self.query(run, messages, READER_TOKENS, scoring=run.reader.scoring(pool, READER_PREFIX),
                           grammar=QUOTED_ANSWER if self.model.supports_grammar else None)
        run.read_answer = _quoted(reply.text)
        decision = self.decide(run, pool, reply, None, check=self.checks)
        self.display.step(number=run.stats.steps, command="reader: the question after the shown lines that match "
                          "it best", observation=f"the model: {run.read_answer!r}\n"
                          f"the reader's best:\n{lines(run.reading)}", truncated=False, error=False,
                          context=reply.prompt_tokens, limit=self.config.context_limit)
        return decision

    def judge(self, run: Run, pool, reply: Reply, command: Command | None) -> Observation | None:
        """The reader's reading after a call, and the gate's decision on it, done."""
        return act(self.decide(run, pool, reply, command))

    def decide(self, run: Run, pool, reply: Reply, command: Command | None, check: bool = False) -> Decision | None:
        """The reader's reading after a call, and what the gate decides on it. Before the gate decides, lcread looks
        up what the best candidates point at (the value behind a name, the next links of a set) and reads again,
        and, after the reader's own call, checks the best candidates in their own lines."""
        # the model's answer: in the reader's own call where there is one (the question after the passages), else
        # the agent's answer command
        free = run.read_answer if self.reads_passages else \
            command.answer if command is not None and command.name == "answer" else None
        run.reading = run.reader.read(pool, reply.scored, free)
        for _ in range(LOOKUP_ROUNDS):  # a name defined as another name is followed, a chain to its next links
            if not self.actions.look_up(run):
                break
            run.reading = run.reader.read(run.reader.pool(), None, free)
        if check:
            self.check(run)
        self.trace.event("reading", step=run.stats.steps, **run.reading.to_dict())
        return run.gate.decide(run.reading, command, run.stats.steps, read_anything=bool(run.seen))

    def check(self, run: Run) -> None:
        """The check: the reading's best candidates scored again in their own lines alone, against no answer; then
        the judge: the model asked, of each of the two best, whether its own lines make it the answer (the model
        scores; it writes nothing)."""
        made = run.reader.check(run.reading)
        if made is None:
            return
        lines, continuations, top = made
        scores = self.score_aside(run, "check", [
            {"role": "system", "content": prompts.render("reader_check_system", none=language().none)},
            {"role": "user", "content": prompts.render("reader_check", lines=lines, question=run.reader.asked.question)}],
            continuations)
        if scores:
            run.reader.checked(run.reading, top, scores)
        words = {"yes": language().yes, "no": language().no}
        judged = []
        for r, lines, answer in run.reader.judge(run.reading):
            scores = self.score_aside(run, "judge", [
                {"role": "system", "content": prompts.render("reader_judge_system", **words)},
                {"role": "user", "content": prompts.render("reader_judge", lines=lines, answer=answer,
                                                           question=run.reader.asked.question, **words)}],
                run.reader.judge_replies())
            if scores:
                judged.append((r, scores))
        if judged:
            run.reader.judged(run.reading, judged)

    def score_aside(self, run: Run, kind: str, messages: list[dict], continuations: list[str]) -> list[float] | None:
        """A call that scores `continuations` as the reply to `messages` (none when the window cannot hold it),
        counted and traced as `kind`."""
        self.check_limits(run)
        context = self.model.count_tokens(messages)
        if context > self.config.context_limit:
            return None  # a few lines never come near it; a window this small goes without
        reply = self.model.score(messages, continuations)
        run.stats.count(reply, context)
        self.trace.event(kind, context=context, prompt_tokens=reply.prompt_tokens, latency=round(reply.latency, 3),
                         scores=[round(v, 3) for v in reply.continuation_logprobs or []])
        return reply.continuation_logprobs

    def grammar(self, run: Run) -> str | None:
        """The command grammar for the embedded model (the document names as the only paths). After a repeated
        command, the next step cannot be that command again (a small model copies the command it sees last)."""
        if not self.model.supports_grammar:
            return None
        grammar = command_grammar(self.names, can_answer=bool(run.seen))
        return without_command(grammar, run.repeated) if run.repeated else grammar

    def check_limits(self, run: Run) -> None:
        c, s = self.config, run.stats
        if run.format_errors >= c.max_format_errors:
            raise LimitReached(Stop.FORMAT_LIMIT, f"{run.format_errors} replies in a row were not commands")
        if s.steps >= c.max_steps:
            raise LimitReached(Stop.STEP_LIMIT, str(c.max_steps))
        if s.total_tokens >= c.max_total_tokens:
            raise LimitReached(Stop.TOKEN_LIMIT, f"{c.max_total_tokens:,}")
        if s.seconds >= c.max_seconds:
            raise LimitReached(Stop.TIME_LIMIT, f"{c.max_seconds:.0f} s")

    def query(self, run: Run, messages: Messages, max_tokens: int, grammar: str | None = None,
              scoring: Scoring | None = None) -> Reply:
        """One model call; refuses (never sends) a request that would exceed the context limit."""
        context = self.model.count_tokens(messages)
        if context + max_tokens > self.config.context_limit:
            raise LimitReached(Stop.CONTEXT_LIMIT, f"{self.config.context_limit:,} tokens")
        remaining = self.config.max_seconds - run.stats.seconds
        if remaining <= 0:
            raise LimitReached(Stop.TIME_LIMIT, f"{self.config.max_seconds:.0f} s")
        try:
            reply = self.model.query(messages, max_tokens=max_tokens, timeout=remaining, grammar=grammar,
                                     **({"scoring": scoring} if scoring is not None else {}))
        except ModelError as e:
            self.record_retries(e.retries)
            if isinstance(e, OutOfTime) or run.stats.seconds >= self.config.max_seconds - 0.5:  # the run's own limit
                raise LimitReached(Stop.TIME_LIMIT, f"{self.config.max_seconds:.0f} s") from None
            raise
        self.record_retries(reply.retries)
        run.stats.count(reply, context)
        self.trace.event("call", context=context, max_tokens=max_tokens, prompt_tokens=reply.prompt_tokens,
                         completion_tokens=reply.completion_tokens, cached_tokens=reply.cached_tokens,
                         latency=round(reply.latency, 3), reply=reply.text[:2000])
        return reply

    def record_retries(self, retries: list[dict]) -> None:
        for retry in retries:
            self.trace.event("retry", **retry)

    def best_reading(self, run: Run, context: Context, reason: StopReason) -> Reading | None:
        """After a limit: the reading of all that was shown, from one last call that also asks the model for
        its best answer (none after a token limit, a failed model or an interruption)."""
        self.trace.event("limit", reason=str(reason))
        ask = reason.kind not in (Stop.TOKEN_LIMIT, Stop.MODEL_ERROR, Stop.INTERRUPTED, Stop.SUFFICIENCY_LIMIT,
                                  Stop.GROUNDING_LIMIT)
        if not ask or not run.seen:
            return run.reading
        pool = run.reader.pool()
        try:
            if self.reads_passages:  # the reader's own call reads what the last one did not; the agent adds nothing
                if run.unread:
                    self.reader_call(run, pool)
                return run.reading
            grammar = self.grammar(run)
            reply = self.query(run, context.limit_messages(str(reason)), self.config.command_tokens,
                               grammar=grammar and answer_only_grammar(grammar),
                               scoring=run.reader.scoring(pool) if self.scores_spans else None)
            command = parse(reply.text)
            free = command.answer if command.name == "answer" and str(reason) not in command.answer else None
        except (ParseError, LimitReached, ModelError):
            return run.reading
        run.reading = run.reader.read(pool, reply.scored, free)
        self.trace.event("reading", step=run.stats.steps, **run.reading.to_dict())
        return run.reading

    def finish(self, run: Run, reading: Reading | None, answer: str | None, final: bool,
               stop: StopReason) -> RunResult:
        run.stats.ended = time.monotonic()
        answer = answer or (reading.answer if reading else None)
        cited = reading.citations() if reading and answer else []
        citations = [replace(c, place=self.actions.place_of(c.doc, c.line)) for c in cited]
        result = RunResult(answer or None, final, stop, self.mode, self.model.name, run.stats,
                           verified=bool(answer) and reading.verified if reading and reading.applies else None,
                           citations=citations,
                           confidence=reading.confidence if reading and answer else None,
                           grounded=reading.grounded if reading and answer else None,
                           missing=Reading.missing(reading, answer))
        self.trace.event("run_end", **result.to_dict())
        self.display.finish(answer=result.text, final=final, reason=str(stop), summary=result.summary(),
                            citations=[c.label() + ": " + c.quote for c in result.citations],
                            verified=result.verified, missing=result.missing)
        return result


def _quoted(reply: str) -> str | None:
    """The answer in the reader's call's reply: its first double-quoted text, else the reply's first line."""
    text = reply.strip()
    if text.startswith('"'):
        text = text[1:].split('"', 1)[0]
    return text.splitlines()[0].strip() if text.strip() else None


def act(decision: Decision | None) -> Observation | None:
    """What the gate decided, done: the run ends (accepted, or a limit), or the model is told."""
    if isinstance(decision, Accepted):
        raise Submitted(decision.reading, decision.answer)
    if isinstance(decision, Halted):
        raise LimitReached(decision.stop.kind, decision.stop.detail)
    return decision.observation if decision is not None else None


