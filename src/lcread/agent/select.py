"""select: selective reading with compaction (seed 003 §4, DESIGN §5).

query -> parse -> execute -> observe, repeated until `answer` or a limit; the live context is counted
before every call and compacted into a handoff at the threshold, so no request exceeds the limit.
"""

from __future__ import annotations

import time

from lcread import prompts
from lcread.agent.handoff import Handoff, draft_schema, fallback_handoff, parse_handoff, prune_to_fit
from lcread.agent.result import RunResult, RunStats
from lcread.config import SelectConfig
from lcread.display import Display
from lcread.errors import FormatError, LimitReached, Submitted
from lcread.models import Messages, Model, Reply
from lcread.tools import USAGE, Command, Observation, ParseError, ToolRunner, parse
from lcread.trace import Trace


class SelectReader:
    mode = "select"

    def __init__(self, model: Model, tools: ToolRunner, display: Display, trace: Trace,
                 config: SelectConfig | None = None):
        self.model, self.tools, self.display, self.trace = model, tools, display, trace
        self.config = (config or SelectConfig()).fitted(model.context_window)
        names = [d.name for d in tools.store.docs]
        self.grammar = prompts.command_grammar(names) if model.supports_grammar else None
        self.system = prompts.render("select_system", usage=USAGE, documents=tools.store.listing(),
                                     read_chars=f"{tools.cap:,}")

    def run(self, question: str) -> RunResult:
        self.question, self.stats = question, RunStats()
        self.messages: Messages = [{"role": "system", "content": self.system},
                                   {"role": "user", "content": prompts.render("select_task", question=question)}]
        self.seen: dict[str, int] = {}
        self.format_errors = self.repeats = 0
        self.handoff: Handoff | None = None
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

    def step(self) -> None:
        self.check_limits()
        self.fit_context()
        reply = self.query(self.messages, self.config.command_tokens, grammar=self.grammar)
        self.messages.append({"role": "assistant", "content": reply.text.strip()})
        self.stats.steps += 1
        try:
            command = parse(reply.text)
        except ParseError as e:
            raise FormatError(str(e)) from None
        self.format_errors = 0
        if command.name == "answer":
            raise Submitted(command.answer)
        self.observe(command, self.execute(command))

    def execute(self, command: Command) -> Observation:
        key = " ".join(command.text.split())
        if key in self.seen:
            self.repeats += 1
            if self.repeats > self.config.max_repeats:
                raise LimitReached(f"repeat limit ({self.config.max_repeats} repeated commands in a row)")
            return Observation(prompts.render("repeat", command=key, step=self.seen[key]))
        self.repeats = 0
        self.seen[key] = self.stats.steps
        return self.tools.run(command)

    def observe(self, command: Command, observation: Observation) -> None:
        self.messages.append({"role": "user", "content": prompts.render(
            "observation", command=command.text, output=observation.text)})
        context = self.model.count_tokens(self.messages)
        self.trace.event("command", step=self.stats.steps, command=command.text, chars=observation.chars,
                         truncated=observation.truncated, error=observation.error)
        self.display.step(number=self.stats.steps, command=command.text, observation=observation.text,
                          truncated=observation.truncated, error=observation.error, context=context,
                          limit=self.config.context_limit)

    def on_format_error(self, error: str) -> None:
        self.format_errors += 1
        doc = self.tools.store.docs[0].name
        message = prompts.render("format_error", error=error, example=_example_term(self.question), doc=doc)
        self.messages.append({"role": "user", "content": message})
        self.trace.event("format_error", step=self.stats.steps, error=error)
        self.display.step(number=self.stats.steps, command=self.messages[-2]["content"][:200], observation=message,
                          truncated=False, error=True, context=self.model.count_tokens(self.messages),
                          limit=self.config.context_limit)

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

    def fit_context(self) -> None:
        context = self.model.count_tokens(self.messages)
        if context >= self.config.compact_at or context + self.config.command_tokens > self.config.context_limit:
            self.compact(context)

    def compact(self, before: int) -> None:
        """Replace the history by a handoff and go on in a fresh conversation that starts from it."""
        commands = list(self.seen)
        request = {"role": "user", "content": prompts.render(
            "handoff_request", documents=", ".join(d.name for d in self.tools.store.docs))}
        budget = self.config.context_limit - self.config.handoff_tokens
        history = prune_to_fit(self.messages + [request], self.model.count_tokens, budget)
        handoff, error = None, None
        for _ in range(2):
            reply = self.query(history, self.config.handoff_tokens, schema=draft_schema())
            try:
                handoff = parse_handoff(reply.text, self.question, commands)
                break
            except ValueError as e:
                error = str(e)
                retry = history + [{"role": "assistant", "content": reply.text},
                                   {"role": "user", "content": f"error: {error}. Reply with the JSON object only."}]
                history = prune_to_fit(retry, self.model.count_tokens, budget)
        if handoff is None:
            handoff = fallback_handoff(self.question, commands, self.handoff.findings if self.handoff else [])
            self.trace.event("handoff_fallback", error=error)
        self.handoff = handoff
        self.messages = [self.messages[0], {"role": "user", "content": prompts.render(
            "select_resume", question=self.question, handoff=handoff.render())}]
        after = self.model.count_tokens(self.messages)
        self.stats.compactions += 1
        self.trace.event("compaction", before=before, after=after, handoff=handoff.model_dump())
        self.display.compaction(handoff=handoff.render(), before=before, after=after)

    def best_answer(self, reason: str) -> str:
        """After a limit: one last call asking for an answer from what was found, if the budget allows."""
        self.trace.event("limit", reason=reason)
        if not reason.startswith("token"):
            ask = self.messages + [{"role": "user", "content": prompts.render("limit_answer", reason=reason)}]
            ask = prune_to_fit(ask, self.model.count_tokens, self.config.context_limit - self.config.command_tokens)
            try:
                reply = self.query(ask, self.config.command_tokens, grammar=self.grammar and _ANSWER_ONLY)
                command = parse(reply.text)
                if command.name == "answer":
                    return command.answer
            except (ParseError, LimitReached):
                pass
        if self.handoff and self.handoff.findings:
            return "; ".join(f.fact for f in self.handoff.findings)
        return "No answer was found before the limit."

    def finish(self, answer: str, final: bool, reason: str) -> RunResult:
        self.stats.ended = time.monotonic()
        result = RunResult(answer, final, reason, self.mode, self.model.name, self.stats)
        self.trace.event("run_end", **result.to_dict())
        self.display.finish(answer=answer, final=final, reason=reason, summary=result.summary())
        return result


_ANSWER_ONLY = 'root ::= "answer \\"" [^"\\n]{1,600} "\\""\n'


def _example_term(question: str) -> str:
    words = [w.strip("?.,:;!\"'()") for w in question.split()]
    return max(words, key=len) if words else "keyword"

