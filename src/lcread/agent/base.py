"""What the command-driven modes (select, sac) share: the run loop's frame, limits, the accounted model
call that never exceeds the context limit, repeated-command handling, and the end of a run."""

from __future__ import annotations

import time

from lcread import prompts
from lcread.agent.result import RunResult, RunStats
from lcread.config import SelectConfig
from lcread.display import Display
from lcread.errors import FormatError, LimitReached, Submitted
from lcread.models import Messages, Model, Reply
from lcread.tools import Command, Observation, ParseError, ToolRunner, parse
from lcread.trace import Trace

ANSWER_ONLY = 'root ::= "answer \\"" [^"\\n]{1,600} "\\""\n'


class CommandLoop:
    mode = "command"

    def __init__(self, model: Model, tools: ToolRunner, display: Display, trace: Trace,
                 config: SelectConfig | None = None):
        self.model, self.tools, self.display, self.trace = model, tools, display, trace
        self.config = (config or SelectConfig()).fitted(model.context_window)
        names = [d.name for d in tools.store.docs]
        self.grammar = prompts.command_grammar(names) if model.supports_grammar else None

    def run(self, question: str) -> RunResult:
        self.question, self.stats = question, RunStats()
        self.seen: dict[str, int] = {}
        self.format_errors = self.repeats = 0
        self.refused_unread = 0
        self.begin(question)
        self.display.start(question=question, model=self.model.name, mode=self.mode,
                           documents=self.tools.store.listing(), limit=self.config.context_limit)
        self.trace.event("run_start", mode=self.mode, model=self.model.name, question=question,
                         documents=[d.name for d in self.tools.store.docs], config=self.config.model_dump())
        while True:
            try:
                self.step()
            except FormatError as e:
                self.on_format_error(str(e))
            except Submitted as e:
                return self.finish(e.answer, final=True, reason="answered")
            except LimitReached as e:
                return self.finish(self.best_answer(e.reason), final=False, reason=e.reason)

    def begin(self, question: str) -> None:
        raise NotImplementedError

    def step(self) -> None:
        raise NotImplementedError

    def on_format_error(self, error: str) -> None:
        raise NotImplementedError

    def limit_messages(self, reason: str) -> Messages:
        """The conversation in which the model is asked for its best answer after a limit."""
        raise NotImplementedError

    def ungrounded(self, command: Command) -> Observation | None:
        """An answer before any command has read the documents is sent back (seed 002: stop on evidence,
        not on the model's say-so); after two, the run ends and the answer is marked as not final."""
        if command.name != "answer" or self.seen:
            return None
        self.refused_unread += 1
        self.trace.event("answer_refused", step=self.stats.steps, answer=command.answer)
        if self.refused_unread > 2:
            raise LimitReached(f"grounding limit ({self.refused_unread} answers before reading anything)")
        return Observation(prompts.render("unread_answer", example=example_term(self.question)))

    def execute(self, command: Command) -> Observation:
        """Run a command; a repeated one is not run again, and too many repeats in a row end the run."""
        key = " ".join(command.text.split())
        if key in self.seen:
            self.repeats += 1
            if self.repeats > self.config.max_repeats:
                raise LimitReached(f"repeat limit ({self.config.max_repeats} repeated commands in a row)")
            return Observation(prompts.render("repeat", command=key, step=self.seen[key]))
        self.repeats = 0
        self.seen[key] = self.stats.steps
        return self.tools.run(command)

    def check_limits(self) -> None:
        c, s = self.config, self.stats
        if self.format_errors >= c.max_format_errors:
            raise LimitReached(f"format limit ({self.format_errors} replies in a row were not commands)")
        if s.steps >= c.max_steps:
            raise LimitReached(f"step limit ({c.max_steps})")
        if s.total_tokens >= c.max_total_tokens:
            raise LimitReached(f"token limit ({c.max_total_tokens:,})")
        if s.seconds >= c.max_seconds:
            raise LimitReached(f"time limit ({c.max_seconds:.0f} s)")

    def query(self, messages: Messages, max_tokens: int, **constraint) -> Reply:
        """One model call; refuses (never sends) a request that would exceed the context limit."""
        context = self.model.count_tokens(messages)
        if context + max_tokens > self.config.context_limit:
            raise LimitReached(f"context limit ({self.config.context_limit:,} tokens)")
        reply = self.model.query(messages, max_tokens=max_tokens, **constraint)
        self.stats.record(reply, context)
        self.trace.event("call", context=context, max_tokens=max_tokens, prompt_tokens=reply.prompt_tokens,
                         completion_tokens=reply.completion_tokens, cached_tokens=reply.cached_tokens,
                         latency=round(reply.latency, 3), reply=reply.text[:2000])
        return reply

    def best_answer(self, reason: str) -> str:
        """After a limit: one last call asking for an answer from what was found, if the budget allows."""
        self.trace.event("limit", reason=reason)
        if not reason.startswith("token"):
            try:
                reply = self.query(self.limit_messages(reason), self.config.command_tokens,
                                   grammar=self.grammar and ANSWER_ONLY)
                command = parse(reply.text)
                if command.name == "answer":
                    return command.answer
            except (ParseError, LimitReached):
                pass
        return self.found_so_far() or "No answer was found before the limit."

    def found_so_far(self) -> str:
        return ""

    def finish(self, answer: str, final: bool, reason: str) -> RunResult:
        self.stats.ended = time.monotonic()
        result = RunResult(answer, final, reason, self.mode, self.model.name, self.stats)
        self.trace.event("run_end", **result.to_dict())
        self.display.finish(answer=answer, final=final, reason=reason, summary=result.summary())
        return result


def example_term(question: str) -> str:
    """The longest word of the question: a fair first thing to grep for."""
    words = [w.strip("?.,:;!\"'()") for w in question.split()]
    return max(words, key=len) if words else "keyword"
