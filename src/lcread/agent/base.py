"""The command loop that select and sac share (seed 003 §3): query -> read -> judge -> execute -> observe, until the
reader is sure of an answer in what was shown, or a limit. Every call also scores the reader's candidate answers
on the same prompt (where the backend can), so the loop knows after each step whether it may stop. What differs
between the modes is how the model's context is kept from one step to the next, a `Context` made for each run:
select appends to one conversation and compacts it into a handoff; sac starts every step afresh from a written
state and the last observation."""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field, replace

from lcread import prompts
from lcread.agent.gate import Accepted, AnswerGate, Decision, Halted, lines
from lcread.config import LoopConfig
from lcread.display import Display
from lcread.errors import ContextOverflow, FormatError, LimitReached, ModelError, Submitted
from lcread.grounding.evidence import EvidenceLog
from lcread.models import Messages, Model, Reply, Scoring
from lcread.reader import Reader, Reading, Scorer, asked, parse_options, scorer_for
from lcread.result import NOTHING_BEFORE_LIMIT, NOTHING_FOUND, RunResult, RunStats, Stop, StopReason
from lcread.tools import Command, Observation, ParseError, ToolRunner, parse
from lcread.tools.search import TOP
from lcread.trace import Trace

LOOKUPS, LOOKUP_ROUNDS = 6, 3
"""Commands lcread runs itself after one reading at most, in at most this many rounds of reading again."""
SEARCHED_KINDS = {"count": "number", "number": "number", "date": "date", "path": "path"}
"""Answer types whose value a passage can be seen to hold: the ranked search favours passages holding one."""


@dataclass
class Run:
    """Everything one run changes, in one place, handed to its context and its gate."""

    question: str
    reader: Reader
    gate: AnswerGate
    evidence: EvidenceLog
    """What the tools showed: the only ground an answer can rest on."""
    stats: RunStats = field(default_factory=RunStats)
    seen: dict[str, int] = field(default_factory=dict)
    """Each command run (whitespace normalised) -> the step it ran at."""
    continuations: dict[str, Command] = field(default_factory=dict)
    """A command whose output was cut -> the command that shows what follows."""
    format_errors: int = 0
    repeats: int = 0
    repeated: str | None = None
    """The command (its name) the model ran again at the last step: the grammar leaves it out of the next one."""
    reading: Reading | None = None
    """The reader's latest reading of the evidence."""
    looked_up: list[str] = field(default_factory=list)
    """What lcread ran itself since the model's last observation, for the next one."""

    @property
    def kind(self) -> str | None:
        return SEARCHED_KINDS.get(self.reader.asked.type)


class Context:
    """How a command loop keeps what the model sees between steps, for one run."""

    mode = "command"
    keeps_history = True
    """Whether the model still sees earlier observations: if not, a repeated command's output is shown again."""

    def __init__(self, loop: "CommandLoop", run: Run):
        self.loop, self.run = loop, run

    def messages(self) -> Messages:
        """The conversation for the next call (select compacts it first when it has grown too long)."""
        raise NotImplementedError

    def reply_tokens(self) -> int:
        return self.loop.config.command_tokens

    def grammar(self) -> str | None:
        return self.loop.grammar(self.run)

    def shrink(self) -> bool:
        """The server refused the context as too long: make it smaller once (True), or give up (False)."""
        return False

    def read(self, reply: str) -> Command:
        """The command in the model's reply; FormatError when there is none."""
        raise NotImplementedError

    def observe(self, command: Command, observation: Observation) -> None:
        raise NotImplementedError

    def first(self, command: str, observation: Observation) -> None:
        """Start the model from lcread's own first step: its command and what it showed."""
        raise NotImplementedError

    def format_error(self, error: str) -> None:
        """Tell the model, at its next step, that its last reply was not usable."""
        raise NotImplementedError

    def limit_messages(self, reason: str) -> Messages:
        """The conversation in which the model is asked for its best answer after a limit."""
        raise NotImplementedError


class CommandLoop:
    context: type[Context] = Context

    def __init__(self, model: Model, tools: ToolRunner, display: Display, trace: Trace,
                 config: LoopConfig | None = None, scorer: Scorer | None = None):
        self.model, self.tools, self.display, self.trace = model, tools, display, trace
        self.config = (config or LoopConfig()).fitted(model.context_window)
        self.scorer = scorer or scorer_for(model.name, model.scores_spans)
        """The reader's calibrated scorer: the model's own calibration unless one is handed in."""
        self.names = [d.name for d in tools.store.docs]
        self.mode = self.context.mode

    def run(self, question: str) -> RunResult:
        run = self.start(question)
        context = self.context(self, run)
        try:
            if self.config.first_step:
                self.first_step(run, context)
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
        reader = Reader(asked(text, options), evidence, self.scorer, ranker.score, ranker.spans, self.place_of,
                        self.heading_of, self.tools.count_lines)
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
        scoring = run.reader.scoring(pool) if self.model.scores_spans else None
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
            command = context.read(reply.text)
        except FormatError:
            self.judge(run, pool, reply, None)  # a reading the reader is sure of ends the run all the same
            raise
        run.format_errors = 0
        sent_back = self.judge(run, pool, reply, command)
        if command.name == "answer":  # an answer is no command repeated: the commands around it are not "in a row"
            run.repeats, run.repeated = 0, None
        observation = sent_back or self.execute(run, command)
        context.observe(command, self.followed(run, observation))

    def judge(self, run: Run, pool, reply: Reply, command: Command | None) -> Observation | None:
        """The reader's reading after a call, and what the gate decides on it. Before the gate decides, lcread looks up what the best candidates point at (the value behind a name, the next links of a set)
        and reads again."""
        free = command.answer if command is not None and command.name == "answer" else None
        run.reading = run.reader.read(pool, reply.scored, free)
        for _ in range(LOOKUP_ROUNDS):  # a name defined as another name is followed, a chain to its next links
            if not self.look_up(run):
                break
            run.reading = run.reader.read(run.reader.pool(), None, free)
        self.trace.event("reading", step=run.stats.steps, **run.reading.to_dict())
        return act(run.gate.decide(run.reading, command, run.stats.steps, read_anything=bool(run.seen)))

    def look_up(self, run: Run) -> bool:
        """lcread's own commands for what the best candidates point at: the definition of a constant-like name
        when the question asks for a value, and a grep of each item of a set whose own lines were not searched.
        Their outputs are evidence, and the model sees them with its next observation."""
        commands = [Command("definition", f"definition {name}", patterns=[name])
                    for name in run.reader.names_to_resolve(run.reading)]
        commands += [Command("grep", f"grep -i -w -F {item!r}", patterns=[item], flags={"-i", "-w", "-F"})
                     for item in run.reader.follow(run.reading)]
        ran = False
        for command in commands[:LOOKUPS]:
            key = command_key(command)
            if key in run.seen:
                continue
            run.seen[key] = run.stats.steps
            observation = self.run_tool(run, command)
            run.looked_up.append(f"lcread ran `{command.text}`:\n{observation.text}")
            self.trace.event("lookup", step=run.stats.steps, command=command.text, chars=observation.chars)
            ran = True
        return ran

    def followed(self, run: Run, observation: Observation) -> Observation:
        """The observation, with what lcread looked up itself since the last one."""
        if run.looked_up:
            observation.text = "\n".join([observation.text, *run.looked_up])
            run.looked_up.clear()
        return observation

    def heading_of(self, doc: str, line: int) -> tuple[int, str] | None:
        """The innermost heading a line sits under (its line, its text)."""
        found = self.tools.sections(self.tools.store.get(doc)).enclosing(line) if doc in self.tools.store.by_name \
            else None
        return (found[0], found[1].split(" > ")[-1]) if found else None

    def place_of(self, doc: str, line: int) -> str | None:
        """Where a line of a converted document came from (its page, its heading path)."""
        source = self.tools.store.by_name[doc].source if doc in self.tools.store.by_name else None
        return source.locate(line) if source is not None else None

    def first_step(self, run: Run, context: Context) -> None:
        """lcread's own first step (README: How it reads), so that no run starts blind: inputs small enough for
        one read are shown whole; otherwise the passages that best match the question, ranked by lcread."""
        docs, cap = self.tools.store.docs, self.tools.cap
        question = run.reader.asked.question
        if sum(d.size + 12 * d.lines + len(d.name) + 8 for d in docs) <= cap:
            commands = [Command("read", f"read {d.name} 1 {d.lines}", docs=[d.name], start=1, end=d.lines)
                        for d in docs]
        else:
            commands = [Command("search", f"search {question}", query=question, count=TOP)]
        outputs, shown = [], []
        for command in commands:
            observation = self.run_tool(run, command)
            shown += observation.shown
            run.seen[command_key(command)] = 0
            if observation.next is not None:
                run.continuations[command_key(command)] = observation.next
            outputs.append(observation.text if len(commands) == 1 else f"{command.docs[0]}:\n{observation.text}")
        text, label = "\n".join(filter(None, outputs)), "; ".join(c.text for c in commands)
        self.trace.event("command", step=0, command=label, chars=len(text), auto=True)
        self.display.step(number=0, command=label, observation=text, truncated=False, error=False,
                          context=0, limit=self.config.context_limit)
        context.first(label, Observation(text, shown=shown))

    def grammar(self, run: Run) -> str | None:
        """The command grammar for the embedded model (the document names as the only paths). After a repeated
        command, the next step cannot be that command again (a small model copies the command it sees last)."""
        if not self.model.supports_grammar:
            return None
        grammar = prompts.command_grammar(self.names, can_answer=bool(run.seen))
        return prompts.without_command(grammar, run.repeated) if run.repeated else grammar

    def run_tool(self, run: Run, command: Command) -> Observation:
        if command.name == "search" and command.kind is None:
            command = replace(command, kind=run.kind)
        observation = self.tools.run(command)
        run.evidence.add(observation.shown, observation.search)
        return observation

    def execute(self, run: Run, command: Command) -> Observation:
        """Run a command. A repeated one counts towards the repeat limit; it is not run again while the model
        still sees its output, and is shown again, marked as a repeat, when it does not."""
        run.repeated = None
        key, said = command_key(command), " ".join(command.text.split())
        if key in run.seen and run.continuations.get(key) is not None:
            return self.continued(run, key, said)
        if key in run.seen:
            return self.repeat(run, command, key, said)
        run.repeats = 0
        run.seen[key] = run.stats.steps
        observation = self.run_tool(run, command)
        if observation.next is not None:
            run.continuations[key] = observation.next
        if command.name == "grep" and observation.search and not observation.search.matches \
                and not observation.error and not observation.search.counted:
            observation.text += "\n" + self.searched_instead(run, command)
        return observation

    def repeat(self, run: Run, command: Command, key: str, said: str) -> Observation:
        run.repeats += 1
        run.repeated = command.name
        if run.repeats > self.config.max_repeats:
            raise LimitReached(Stop.REPEAT_LIMIT, f"{self.config.max_repeats} repeated commands in a row")
        best = "The values the shown lines hold that fit the question best:\n" + lines(run.reading) \
            if run.reading and run.reading.ranked else ""
        if self.context.keeps_history:
            return Observation("\n".join(filter(None, [prompts.render("repeat", command=said, step=run.seen[key]),
                                                       best])))
        observation = self.run_tool(run, command)
        observation.text = "\n".join(filter(None, [prompts.render("sac_repeat", command=said, step=run.seen[key],
                                                                  output=observation.text), best]))
        return observation

    def continued(self, run: Run, key: str, said: str) -> Observation:
        """A cut output asked for again continues where it stopped, like a pager, and says so."""
        run.repeats = 0
        observation = self.run_tool(run, run.continuations[key])
        run.continuations[key] = observation.next
        observation.text = prompts.render("continued", command=said, output=observation.text)
        return observation

    def searched_instead(self, run: Run, command: Command) -> str:
        """A grep that found nothing: the passages that best match its words and the question's."""
        words = " ".join(command.patterns) + " " + run.reader.asked.question
        found = self.tools.ranked(words, cap=max(self.tools.cap - 400, 200), kind=run.kind)
        run.evidence.add(found.shown)
        return prompts.render("searched_instead", output=found.text)

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
            if run.stats.seconds >= self.config.max_seconds - 0.5:  # the call was cut by the run's own time limit
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
            grammar = self.grammar(run)
            reply = self.query(run, context.limit_messages(str(reason)), self.config.command_tokens,
                               grammar=grammar and prompts.answer_only_grammar(grammar),
                               scoring=run.reader.scoring(pool) if self.model.scores_spans else None)
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
        citations = [replace(c, place=self.place_of(c.doc, c.line)) for c in cited]
        result = RunResult(answer or (NOTHING_FOUND if run.seen else NOTHING_BEFORE_LIMIT), final, stop, self.mode,
                           self.model.name, run.stats,
                           verified=bool(answer) and reading.verified if reading and reading.applies else None,
                           citations=citations,
                           confidence=reading.confidence if reading and answer else None,
                           grounded=reading.grounded if reading and answer else None,
                           missing=Reading.missing(reading, answer))
        self.trace.event("run_end", **result.to_dict())
        self.display.finish(answer=result.answer, final=final, reason=str(stop), summary=result.summary(),
                            citations=[c.label() + ": " + c.quote for c in result.citations],
                            verified=result.verified, missing=result.missing)
        return result


def act(decision: Decision | None) -> Observation | None:
    """What the gate decided, done: the run ends (accepted, or a limit), or the model is told."""
    if isinstance(decision, Accepted):
        raise Submitted(decision.reading, decision.answer)
    if isinstance(decision, Halted):
        raise LimitReached(decision.stop.kind, decision.stop.detail)
    return decision.observation if decision is not None else None


def command_key(command: Command) -> str:
    """What makes two commands the same (a repeat): their text, spacing aside; for a search, its words, quotes
    and punctuation aside (a small model copies lcread's search with quotes or a colon added)."""
    if command.name == "search":
        return "search " + " ".join(re.findall(r"[\w./-]+", command.query.lower()))
    return " ".join(command.text.split())


def example_term(question: str) -> str:
    """The longest word of the question: a fair first thing to grep for."""
    words = [w.strip("?.,:;!\"'()") for w in question.split()]
    return max(words, key=len) if words else "keyword"
