"""select: selective reading with compaction (seed 003 §4, DESIGN §5).

query -> parse -> execute -> observe, repeated until `answer` or a limit; the live context is counted
before every call and compacted into a handoff at the threshold, so no request exceeds the limit.
"""

from __future__ import annotations

from lcread import prompts
from lcread.agent.base import CommandLoop, example_term
from lcread.agent.handoff import (FINDINGS, LIST_ITEMS, Handoff, fallback_handoff, keep_shown, parse_handoff,
                                  prune_to_fit)
from lcread.errors import ContextOverflow, FormatError
from lcread.models import Messages
from lcread.tools import USAGE, Command, Observation, ParseError, parse


class SelectReader(CommandLoop):
    mode = "select"

    def begin(self, question: str) -> None:
        system = prompts.render("select_system", usage=USAGE, documents=self.tools.store.listing(),
                                read_chars=f"{self.tools.cap:,}")
        self.messages: Messages = [{"role": "system", "content": system},
                                   {"role": "user", "content": prompts.render("select_task", question=question)}]
        self.handoff: Handoff | None = None
        self.overflowed = False
        names = [d.name for d in self.tools.store.docs]
        self.handoff_grammar = prompts.state_grammar(names, LIST_ITEMS, FINDINGS, after_command=False) \
            if self.model.supports_grammar else None

    def step(self) -> None:
        self.check_limits()
        self.fit_context()
        try:
            reply = self.query(self.messages, self.config.command_tokens, grammar=self.grammar)
        except ContextOverflow:  # the server's window is smaller than it said: compact once and go on
            if self.overflowed:
                raise
            self.overflowed = True
            self.trace.event("context_overflow", step=self.stats.steps)
            self.compact(self.model.count_tokens(self.messages))
            reply = self.query(self.messages, self.config.command_tokens, grammar=self.grammar)
        self.messages.append({"role": "assistant", "content": reply.text.strip()})
        self.stats.steps += 1
        try:
            command = parse(reply.text)
        except ParseError as e:
            raise FormatError(str(e)) from None
        self.format_errors = 0
        self.observe(command, self.execute(command))

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
        message = prompts.render("format_error", error=error, example=example_term(self.question),
                                 doc=self.tools.store.docs[0].name)
        self.messages.append({"role": "user", "content": message})
        self.trace.event("format_error", step=self.stats.steps, error=error)
        self.display.step(number=self.stats.steps, command=self.messages[-2]["content"][:200], observation=message,
                          truncated=False, error=True, context=self.model.count_tokens(self.messages),
                          limit=self.config.context_limit)

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
            reply = self.query(history, self.config.handoff_tokens, grammar=self.handoff_grammar)
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
        handoff.findings, dropped = keep_shown(handoff.findings, self.evidence.shown_lines())
        if dropped:
            self.trace.event("findings_dropped", findings=[f.model_dump() for f in dropped],
                             why="no tool showed the lines they point at")
        self.handoff = handoff
        self.messages = [self.messages[0], {"role": "user", "content": prompts.render(
            "select_resume", question=self.question, handoff=handoff.render())}]
        after = self.model.count_tokens(self.messages)
        self.stats.compactions += 1
        self.trace.event("compaction", before=before, after=after, handoff=handoff.model_dump())
        self.display.compaction(handoff=handoff.render(), before=before, after=after)

    def limit_messages(self, reason: str) -> Messages:
        ask = self.messages + [{"role": "user", "content": prompts.render("limit_answer", reason=reason)}]
        return prune_to_fit(ask, self.model.count_tokens, self.config.context_limit - self.config.command_tokens)
