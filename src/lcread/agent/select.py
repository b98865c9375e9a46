"""select: selective reading with compaction (seed 003 §4).

One conversation grows by a command and its observation per step; its size is counted before every call
and, at the threshold, the history is compacted into a handoff and a fresh conversation starts from it,
so no request exceeds the limit.
"""

from __future__ import annotations

from lcread import prompts
from lcread.tools.grammar import state_grammar
from lcread.agent.base import CommandLoop, Context, Run, example_term
from lcread.agent.handoff import (FINDINGS, LIST_ITEMS, Handoff, fallback_handoff, keep_shown, parse_handoff,
                                  prune_to_fit)
from lcread.errors import FormatError
from lcread.models import Messages
from lcread.tools import USAGE, Command, Observation, ParseError, parse


class Conversation(Context):
    mode = "select"

    def __init__(self, loop: CommandLoop, run: Run):
        super().__init__(loop, run)
        store = loop.tools.store
        system = prompts.render("select_system", usage=USAGE, documents=store.listing(),
                                read_chars=f"{loop.tools.cap:,}")
        self.history: Messages = [{"role": "system", "content": system},
                                  {"role": "user", "content": prompts.render("select_task", question=run.question)}]
        self.handoff: Handoff | None = None
        self.overflowed = False
        self.handoff_grammar = state_grammar(loop.names, LIST_ITEMS, FINDINGS, after_command=False) \
            if loop.model.supports_grammar else None

    def messages(self) -> Messages:
        context = self.loop.model.count_tokens(self.history)
        config = self.loop.config
        if context >= config.compact_at or context + config.command_tokens > config.context_limit:
            self.compact(context)
        return self.history

    def shrink(self) -> bool:
        if self.overflowed:
            return False
        self.overflowed = True
        self.compact(self.loop.model.count_tokens(self.history))
        return True

    def read(self, reply: str) -> Command:
        self.history.append({"role": "assistant", "content": reply.strip()})
        try:
            return parse(reply)
        except ParseError as e:
            raise FormatError(str(e)) from None

    def observe(self, command: Command, observation: Observation) -> None:
        loop = self.loop
        self.history.append({"role": "user", "content": prompts.render(
            "observation", command=command.text, output=observation.text)})
        context = loop.model.count_tokens(self.history)
        loop.trace.event("command", step=self.run.stats.steps, command=command.text, chars=observation.chars,
                         truncated=observation.truncated, error=observation.error)
        loop.display.step(number=self.run.stats.steps, command=command.text, observation=observation.text,
                          truncated=observation.truncated, error=observation.error, context=context,
                          limit=loop.config.context_limit)

    def first(self, command: str, observation: Observation) -> None:
        self.history[1] = {"role": "user", "content": prompts.render(
            "select_first", question=self.run.question, command=command, output=observation.text)}

    def format_error(self, error: str) -> None:
        loop = self.loop
        message = prompts.render("format_error", error=error, example=example_term(self.run.question),
                                 doc=loop.tools.store.docs[0].name)
        self.history.append({"role": "user", "content": message})
        loop.display.step(number=self.run.stats.steps, command=self.history[-2]["content"][:200], observation=message,
                          truncated=False, error=True, context=loop.model.count_tokens(self.history),
                          limit=loop.config.context_limit)

    def compact(self, before: int) -> None:
        """Replace the history by a handoff and go on in a fresh conversation that starts from it."""
        loop = self.loop
        handoff = self.write_handoff()
        handoff.findings, dropped = keep_shown(handoff.findings, self.run.evidence.shown_lines())
        if dropped:
            loop.trace.event("findings_dropped", findings=[f.model_dump() for f in dropped],
                             why="no tool showed the lines they point at")
        self.handoff = handoff
        self.history = [self.history[0], {"role": "user", "content": prompts.render(
            "select_resume", question=self.run.question, handoff=handoff.render())}]
        after = loop.model.count_tokens(self.history)
        self.run.stats.compactions += 1
        loop.trace.event("compaction", before=before, after=after, handoff=handoff.model_dump())
        loop.display.compaction(handoff=handoff.render(), before=before, after=after)

    def write_handoff(self) -> Handoff:
        """The model's handoff of the history (asked twice at most), or one lcread writes from what it knows."""
        loop, commands = self.loop, list(self.run.seen)
        request = {"role": "user", "content": prompts.render(
            "handoff_request", documents=", ".join(d.name for d in loop.tools.store.docs))}
        budget = loop.config.context_limit - loop.config.handoff_tokens
        history = prune_to_fit(self.history + [request], loop.model.count_tokens, budget)
        error = None
        for _ in range(2):
            reply = loop.query(self.run, history, loop.config.handoff_tokens, grammar=self.handoff_grammar)
            try:
                return parse_handoff(reply.text, self.run.question, commands)
            except ValueError as e:
                error = str(e)
                retry = history + [{"role": "assistant", "content": reply.text},
                                   {"role": "user", "content": f"error: {error}. Reply with the JSON object only."}]
                history = prune_to_fit(retry, loop.model.count_tokens, budget)
        loop.trace.event("handoff_fallback", error=error)
        return fallback_handoff(self.run.question, commands, self.handoff.findings if self.handoff else [])

    def limit_messages(self, reason: str) -> Messages:
        config = self.loop.config
        ask = self.history + [{"role": "user", "content": prompts.render("limit_answer", reason=reason)}]
        return prune_to_fit(ask, self.loop.model.count_tokens, config.context_limit - config.command_tokens)


class SelectReader(CommandLoop):
    """The command loop reading in one compacting conversation."""

    context = Conversation
