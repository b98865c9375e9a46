"""The command loop that select and sac share (seed 003 §3): query -> parse -> execute -> observe, until an
answer the evidence establishes or a limit. What differs between the modes is how the model's context is
kept from one step to the next, a `Context` handed to the loop: select appends to one conversation and
compacts it into a handoff; sac starts every step afresh from a written state and the last observation.
The loop owns the limits, the accounted model call that never exceeds the context limit, repeated
commands, the grounding gate on answers, and the end of a run."""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field, replace

from lcread import prompts
from lcread.agent.gate import Accepted, AnswerGate, Decision, Halted
from lcread.result import NOTHING_BEFORE_LIMIT, NOTHING_FOUND, RunResult, RunStats, Stop, StopReason
from lcread.config import LoopConfig
from lcread.display import Display
from lcread.errors import ContextOverflow, FormatError, LimitReached, ModelError, Submitted
from lcread.grounding import EvidenceLog, Verdict, Verifier, classify
from lcread.grounding.check import BEST_PASSAGES
from lcread.tools.search import TOP
from lcread.grounding.evidence import norm
from lcread.grounding.kinds import VALUES
from lcread.grounding.question import Kind, parse_options
from lcread.models import Messages, Model, Reply
from lcread.tools import Command, Observation, ParseError, ToolRunner, parse
from lcread.trace import Trace


FIRST_LINES = 3
"""Best-matching sentences lcread shows after the passages of its first search (a small model reads the end best)."""
SUBJECT_MATCHES, SUBJECT_SHARE = 100, 0.02
"""A question term matched at least this often, and on at least this share of the lines, names the subject."""


@dataclass
class RunState:
    """Everything one run changes, in one place: a loop answers question after question, each from a fresh
    state."""

    question: str
    evidence: EvidenceLog
    """What the tools showed: the only ground an answer can be verified on."""
    stats: RunStats = field(default_factory=RunStats)
    seen: dict[str, int] = field(default_factory=dict)
    """Each command run (whitespace normalised) -> the step it ran at."""
    continuations: dict[str, Command] = field(default_factory=dict)
    """A command whose output was cut -> the command that shows what follows."""
    format_errors: int = 0
    """Replies in a row that were not commands."""
    repeats: int = 0
    """Repeated commands in a row."""
    repeated: str | None = None
    """The command (its name) the model ran again at the last step: the grammar leaves it out of the next one."""
    verifier: Verifier | None = None
    gate: AnswerGate | None = None


class Context:
    """How a command loop keeps what the model sees between steps. `begin` hands it the loop, whose question,
    tools, model, config, trace, display and evidence it reads."""

    mode = "command"
    keeps_history = True
    """Whether the model still sees earlier observations: if not, a repeated command's output is shown again."""

    def begin(self, loop: "CommandLoop") -> None:
        self.loop = loop

    def messages(self) -> Messages:
        """The conversation for the next call (select compacts it first when it has grown too long)."""
        raise NotImplementedError

    def reply_tokens(self) -> int:
        return self.loop.config.command_tokens

    def grammar(self) -> str | None:
        return self.loop.grammar

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


OFFERED_LINES = 3
"""A lookup's answer grammar offers the values of the best-matching lines, this many lines at a time (each value
refused makes room for the next line's)."""
PAIRED = 6
"""For a range or a size no shown sentence states as a pair, the pairs of two different values among this many."""


class CommandLoop:
    def __init__(self, model: Model, tools: ToolRunner, display: Display, trace: Trace,
                 config: LoopConfig | None = None, *, context: Context):
        self.model, self.tools, self.display, self.trace = model, tools, display, trace
        self.config = (config or LoopConfig()).fitted(model.context_window)
        self.names = [d.name for d in tools.store.docs]
        self.context, self.mode = context, context.mode

    def run(self, question: str) -> RunResult:
        asked, options = parse_options(question)
        evidence = EvidenceLog()
        self.run_state = RunState(question, evidence)
        verifier = Verifier(self.without_subject(classify(asked, options)), evidence, self.tools.count,
                            self.place_of, self.tools.occurrences, lambda: self.best_passages(asked))
        self.run_state.verifier = verifier
        self.run_state.gate = AnswerGate(verifier, self.config, self.run_check, self.tools.count, self.trace,
                                     example_term(question))
        self.context.begin(self)
        self.display.start(question=question, model=self.model.name, mode=self.mode,
                           documents=self.tools.store.listing(), limit=self.config.context_limit)
        self.trace.event("run_start", mode=self.mode, model=self.model.name, question=question,
                         documents=[d.name for d in self.tools.store.docs], config=self.config.model_dump())
        try:
            if self.config.first_step:
                self.first_step(asked)
        except KeyboardInterrupt:
            stop = StopReason(Stop.INTERRUPTED)
            answer, verdict = self.best_answer(stop, ask=False)
            return self.finish(answer, final=False, stop=stop, verdict=verdict)
        while True:
            try:
                self.step()
            except FormatError as e:
                self.run_state.format_errors += 1
                self.trace.event("format_error", step=self.stats.steps, error=str(e))
                self.context.format_error(str(e))
            except Submitted as e:
                return self.finish(e.answer, final=True, stop=StopReason(Stop.ANSWERED), verdict=e.verdict)
            except LimitReached as e:
                answer, verdict = self.best_answer(e.reason)
                return self.finish(answer, final=False, stop=e.reason, verdict=verdict)
            except ModelError as e:  # the backend failed for good: what was found so far, no further call
                stop = StopReason(Stop.MODEL_ERROR, str(e))
                answer, verdict = self.best_answer(stop, ask=False)
                return self.finish(answer, final=False, stop=stop, verdict=verdict)
            except KeyboardInterrupt:  # Ctrl-C or SIGTERM: what was found so far, no further call
                stop = StopReason(Stop.INTERRUPTED)
                answer, verdict = self.best_answer(stop, ask=False)
                return self.finish(answer, final=False, stop=stop, verdict=verdict)

    # the run's state, as the contexts and the gate read it
    question = property(lambda self: self.run_state.question)
    stats = property(lambda self: self.run_state.stats)
    evidence = property(lambda self: self.run_state.evidence)
    seen = property(lambda self: self.run_state.seen)
    verifier = property(lambda self: self.run_state.verifier)
    gate = property(lambda self: self.run_state.gate)

    def step(self) -> None:
        """One command: ask for it, parse it, run it, show the model what it gave."""
        self.check_limits()
        context = self.context
        try:
            reply = self.query(context.messages(), context.reply_tokens(), grammar=context.grammar())
        except ContextOverflow:  # the server's window is smaller than it said
            if not context.shrink():
                raise
            self.trace.event("context_overflow", step=self.stats.steps)
            reply = self.query(context.messages(), context.reply_tokens(), grammar=context.grammar())
        self.stats.steps += 1
        command = context.read(reply.text)
        self.run_state.format_errors = 0
        context.observe(command, self.execute(command))

    def without_subject(self, profile):
        """The question's terms, less those that name what the documents are about ("Bash" in the Bash manual,
        "gnuplot" in gnuplot's pages): a term on a large share of the lines cannot tell one fact from another,
        and the line stating the answer rarely repeats it."""
        lines = sum(d.lines for d in self.tools.store.docs)
        subject = [t for t in profile.terms if self.tools.count(t) >= max(SUBJECT_MATCHES, SUBJECT_SHARE * lines)]
        if subject:
            profile.terms = [t for t in profile.terms if t not in subject]
            profile.parts = [p for p in profile.parts if p not in subject]
            self.trace.event("subject_terms", terms=subject)
        return profile

    def question_words(self) -> list[str]:
        """The question's names and content words (what lcread looks for in outputs to keep pointers)."""
        p = self.verifier.profile
        return [*p.terms, *p.keywords]

    def best_passages(self, question: str):
        """lcread's ranked search for the question, for the sufficiency gate."""
        return self.tools.ranked(question, top=BEST_PASSAGES, kind=self.value_kind)

    @property
    def value_kind(self) -> str | None:
        return value_kind(self.verifier.profile)

    def first_step(self, question: str) -> None:
        """lcread's own first step (README: How it reads), so that no run starts blind: inputs small enough for one read
        are shown whole; otherwise the passages that best match the question, ranked by lcread."""
        docs, cap = self.tools.store.docs, self.tools.cap
        if sum(d.size + 12 * d.lines + len(d.name) + 8 for d in docs) <= cap:
            commands = [Command("read", f"read {d.name} 1 {d.lines}", docs=[d.name], start=1, end=d.lines)
                        for d in docs]
        else:
            commands = [Command("search", f"search {question}", query=question, count=TOP)]
        outputs, observations = [], []
        for command in commands:
            observation = self.run_tool(command)
            observations.append(observation)
            self.seen[command_key(command)] = 0
            if observation.next is not None:
                self.run_state.continuations[command_key(command)] = observation.next
            outputs.append(observation.text if len(commands) == 1 else f"{command.docs[0]}:\n{observation.text}")
        text = "\n".join(filter(None, outputs))
        if commands[0].name == "search":  # the sentences of those passages that match the question best, last
            text += "\n" + self.gate.best_lines(set(), top=FIRST_LINES)
        label = "; ".join(c.text for c in commands)
        self.trace.event("command", step=0, command=label, chars=len(text), auto=True)
        self.display.step(number=0, command=label, observation=text, truncated=False, error=False,
                          context=0, limit=self.config.context_limit)
        self.context.first(label, Observation(text, shown=[p for o in observations for p in o.shown]))

    @property
    def grammar(self) -> str | None:
        """The command grammar for the embedded model; once evidence holds values of the kind asked for,
        an answer can only be one of them (the model chooses among grounded values, it cannot invent one).
        After a repeated command, the next step cannot be that command again (a small model copies the command
        it sees last; without this it goes round until the repeat limit)."""
        if not self.model.supports_grammar:
            return None
        grammar = self._grammar()
        repeated = self.run_state.repeated
        return prompts.without_command(grammar, repeated) if repeated else grammar

    def _grammar(self) -> str:
        pending = self.gate.pending
        pairs = self.gate.offered(self.verifier.pairs())
        if not pairs and self.verifier.profile.values > 1:  # no sentence states two: two different grounded values
            values = self.gate.offered(self.verifier.candidates())[:PAIRED]
            pairs = self.gate.offered([f"{a}, {b}" for a in values for b in values if a != b])
        if pairs:  # a range or a size: one of the pairs a shown sentence states
            return prompts.command_grammar(self.names, pairs, self.verifier.profile.answer_type,
                                           can_answer=bool(self.seen))
        narrower = {"lines": OFFERED_LINES, "refused": self.gate.refused} \
            if self.verifier.profile.kind is Kind.LOOKUP and self.verifier.profile.values == 1 else {}
        # a small model chooses well among a few: a lookup's answer is one of the values of the best lines
        grounded = self.verifier.candidates(after_refusal=pending is not None, **narrower)
        candidates = self.gate.offered(grounded)
        keep = self.verifier.linked_items(pending[0]) if pending else []
        if self.verifier.profile.kind is Kind.LIST:  # an item sent back as not yet complete is kept, and the list
            # must grow from every such item: COPPERHARBOR, then COPPERHARBOR, SILVERMEADOW, ...
            linked = self.verifier.linked_items(", ".join(grounded))
            asked = {norm(t) for t in self.verifier.profile.terms}  # the question's own value is no item
            keep = [k for k in dict.fromkeys([c for c in linked if norm(c) in self.gate.refused] + keep)
                    if norm(k) not in asked]
            candidates = list(dict.fromkeys(keep + candidates))
        return prompts.command_grammar(self.names, candidates, self.answer_kind(), self.verifier.expected_count(),
                                       [k for k in keep if k in candidates], self.verifier.slots(),
                                       can_answer=bool(self.seen))

    def answer_kind(self) -> str | None:
        return answer_kind(self.verifier.profile)

    def answered(self, command: Command) -> Observation:
        """An answer, put to the gate: accepted, it ends the run; sent back, the model sees what is missing."""
        return self.act(self.gate.answer(command.answer, self.stats.steps, read_anything=bool(self.seen)))

    def recheck(self) -> None:
        """After each command: a pending answer the evidence now establishes ends the run."""
        self.act(self.gate.recheck(self.stats.steps))

    def act(self, decision: Decision | None) -> Observation | None:
        """What the gate decided, done: the run ends (accepted, or a limit), or the model is told."""
        if isinstance(decision, Accepted):
            raise Submitted(decision.answer, decision.verdict)
        if isinstance(decision, Halted):
            raise LimitReached(decision.stop.kind, decision.stop.detail)
        return decision.observation if decision is not None else None

    def run_check(self, step: str) -> Observation:
        return self.run_tool(parse(step))

    def place_of(self, doc: str, line: int) -> str | None:
        """Where a line of a converted document came from (its page, its heading path)."""
        source = self.tools.store.by_name[doc].source if doc in self.tools.store.by_name else None
        return source.locate(line) if source is not None else None

    def run_tool(self, command: Command) -> Observation:
        if command.name == "search" and command.kind is None:
            command = replace(command, kind=self.value_kind)
        observation = self.tools.run(command)
        self.evidence.add(observation.shown, observation.search)
        return observation

    def execute(self, command: Command) -> Observation:
        """Run a command. A repeated one counts towards the repeat limit; it is not run again while the model
        still sees its output, and is shown again, marked as a repeat, when it does not."""
        self.run_state.repeated = None
        if command.name == "answer":  # an answer is no command repeated: the commands around it are not "in a row"
            self.run_state.repeats = 0
            return self.answered(command)
        key, said = command_key(command), " ".join(command.text.split())
        if key in self.seen and self.run_state.continuations.get(key) is not None:
            return self.continued(key, said)
        if key in self.seen:
            self.run_state.repeats += 1
            self.run_state.repeated = command.name
            if self.run_state.repeats > self.config.max_repeats:
                raise LimitReached(Stop.REPEAT_LIMIT, f"{self.config.max_repeats} repeated commands in a row")
            best = self.gate.best_lines(self.gate.refused)  # what a model going round in circles may answer from
            if self.context.keeps_history:
                return Observation("\n".join(filter(None, [prompts.render("repeat", command=said, step=self.seen[key]),
                                                           best])))
            observation = self.run_tool(command)
            observation.text = "\n".join(filter(None, [prompts.render("sac_repeat", command=said, step=self.seen[key],
                                                                      output=observation.text), best]))
            return observation
        self.run_state.repeats = 0
        self.seen[key] = self.stats.steps
        observation = self.run_tool(command)
        if observation.next is not None:
            self.run_state.continuations[key] = observation.next
        if command.name == "grep" and observation.search and not observation.search.matches \
                and not observation.error and not observation.search.counted:
            observation.text += "\n" + self.searched_instead(command)
        self.recheck()
        return observation

    def continued(self, key: str, said: str) -> Observation:
        """A cut output asked for again continues where it stopped, like a pager (the next characters of a
        long line, the next lines, the next matches), and says so."""
        following = self.run_state.continuations[key]
        self.run_state.repeats = 0
        observation = self.run_tool(following)
        self.run_state.continuations[key] = observation.next
        observation.text = prompts.render("continued", command=said, output=observation.text)
        self.recheck()
        return observation

    def searched_instead(self, command: Command) -> str:
        """A grep that found nothing: the passages that best match its words and the question's."""
        words = " ".join(command.patterns) + " " + parse_options(self.question)[0]
        found = self.tools.ranked(words, cap=max(self.tools.cap - 400, 200), kind=self.value_kind)
        self.evidence.add(found.shown)
        return prompts.render("searched_instead", output=found.text)

    def check_limits(self) -> None:
        c, s = self.config, self.stats
        if self.run_state.format_errors >= c.max_format_errors:
            raise LimitReached(Stop.FORMAT_LIMIT, f"{self.run_state.format_errors} replies in a row were not commands")
        if s.steps >= c.max_steps:
            raise LimitReached(Stop.STEP_LIMIT, str(c.max_steps))
        if s.total_tokens >= c.max_total_tokens:
            raise LimitReached(Stop.TOKEN_LIMIT, f"{c.max_total_tokens:,}")
        if s.seconds >= c.max_seconds:
            raise LimitReached(Stop.TIME_LIMIT, f"{c.max_seconds:.0f} s")

    def query(self, messages: Messages, max_tokens: int, **constraint) -> Reply:
        """One model call; refuses (never sends) a request that would exceed the context limit."""
        context = self.model.count_tokens(messages)
        if context + max_tokens > self.config.context_limit:
            raise LimitReached(Stop.CONTEXT_LIMIT, f"{self.config.context_limit:,} tokens")
        remaining = self.config.max_seconds - self.stats.seconds
        if remaining <= 0:
            raise LimitReached(Stop.TIME_LIMIT, f"{self.config.max_seconds:.0f} s")
        try:
            reply = self.model.query(messages, max_tokens=max_tokens, timeout=remaining, **constraint)
        except ModelError:
            if self.stats.seconds >= self.config.max_seconds - 0.5:  # the call was cut by the run's own time limit
                raise LimitReached(Stop.TIME_LIMIT, f"{self.config.max_seconds:.0f} s") from None
            raise
        finally:
            for retry in self.model.retries[:]:
                self.trace.event("retry", **retry)
            self.model.retries.clear()
        self.stats.count(reply, context)
        self.trace.event("call", context=context, max_tokens=max_tokens, prompt_tokens=reply.prompt_tokens,
                         completion_tokens=reply.completion_tokens, cached_tokens=reply.cached_tokens,
                         latency=round(reply.latency, 3), reply=reply.text[:2000])
        return reply

    def best_answer(self, reason: StopReason, ask: bool = True) -> tuple[str, Verdict | None]:
        """After a limit: the pending answer, or one last call for the best answer from what was found.
        An answer whose content no shown line holds leaves as "nothing found", never as an answer."""
        self.trace.event("limit", reason=str(reason))
        answer = self.gate.pending[0] if self.gate.pending else None
        if answer is None and ask and reason.kind is not Stop.TOKEN_LIMIT:
            try:
                reply = self.query(self.context.limit_messages(str(reason)), self.config.command_tokens,
                                   grammar=self.grammar and prompts.answer_only_grammar(self.grammar))
                command = parse(reply.text)
                answer = command.answer if command.name == "answer" else None
                if answer and str(reason) in answer:  # the model repeated what it was told, not an answer
                    answer = None
            except (ParseError, LimitReached):
                pass
        if answer is None:
            return NOTHING_BEFORE_LIMIT, None
        verdict = self.verifier.check(answer)
        if not verdict.ok and not verdict.citations and verdict.kind_ok:
            verdict.citations = self.verifier.locate(answer)
        if not verdict.ok and not verdict.citations:
            return NOTHING_FOUND, verdict
        return answer, verdict

    def finish(self, answer: str, final: bool, stop: StopReason, verdict: Verdict | None = None) -> RunResult:
        self.stats.ended = time.monotonic()
        citations = [replace(c, place=self.place_of(c.doc, c.line)) for c in (verdict.citations if verdict else [])]
        result = RunResult(answer, final, stop, self.mode, self.model.name, self.stats,
                           verified=verdict.ok if verdict and verdict.applies else None, citations=citations,
                           missing=None if verdict is None or verdict.ok else verdict.missing)
        if verdict is None and final is False:
            result.missing = "the run ended before an answer was given"
        self.trace.event("run_end", **result.to_dict())
        self.display.finish(answer=answer, final=final, reason=str(stop), summary=result.summary(),
                            citations=[c.label() + ": " + c.quote for c in result.citations],
                            verified=result.verified, missing=result.missing)
        return result


def command_key(command: Command) -> str:
    """What makes two commands the same (a repeat): their text, spacing aside; for a search, its words, quotes
    and punctuation aside (a small model copies lcread's search with quotes or a colon added)."""
    if command.name == "search":
        return "search " + " ".join(re.findall(r"[\w./-]+", command.query.lower()))
    return " ".join(command.text.split())


def value_kind(profile) -> str | None:
    """The kind of value the question asks for, when searches can favour passages holding one."""
    return profile.answer_type if profile.answer_type in VALUES else None


def answer_kind(profile) -> str:
    """The kind of answer the grammar allows: several values (many-number) for parts, lists, ranges and sizes."""
    multi = profile.kind in (Kind.PARTS, Kind.ALL, Kind.LIST) or profile.values > 1
    return ("many-" if multi else "") + profile.answer_type


def example_term(question: str) -> str:
    """The longest word of the question: a fair first thing to grep for."""
    words = [w.strip("?.,:;!\"'()") for w in question.split()]
    return max(words, key=len) if words else "keyword"
