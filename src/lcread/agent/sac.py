"""sac: single-action compaction (seed 003 §5, DESIGN §6).

Every step is a fresh conversation holding only the task, the state and the last observation; the
model returns one command and the updated state, which is its only memory. The task is lcread's copy.
"""

from __future__ import annotations

from lcread import prompts
from lcread.agent.base import CommandLoop
from lcread.agent.handoff import (COMMANDS_KEPT, FINDINGS, LIST_ITEMS, Handoff, HandoffDraft, keep_shown,
                                  parse_draft, split_reply)
from lcread.errors import FormatError, LimitReached
from lcread.models import Messages
from lcread.tools import USAGE, Command, Observation, ParseError, parse


class SacReader(CommandLoop):
    mode = "sac"

    def begin(self, question: str) -> None:
        self.system = prompts.render("sac_system", usage=USAGE, documents=self.tools.store.listing())
        self.state = Handoff(task=question, current_step="starting: nothing read yet",
                             plan=["search for the question's key terms", "read around the best hit", "answer"],
                             completion_requirements=["a passage that states the answer"], next_steps=[])
        self.last = "No command run yet."

    @property
    def reply_grammar(self) -> str | None:
        commands = self.grammar
        return prompts.state_grammar(self.names, LIST_ITEMS, FINDINGS, after_command=True, commands=commands) \
            if commands else None

    def messages(self) -> Messages:
        state = self.state.render()
        return [{"role": "system", "content": self.system},
                {"role": "user", "content": prompts.render("sac_step", question=self.question, state=state,
                                                           last=self.last)}]

    def step(self) -> None:
        self.check_limits()
        messages = self.messages()
        budget = self.config.command_tokens + self.config.handoff_tokens
        reply = self.query(messages, budget, grammar=self.reply_grammar)
        self.stats.steps += 1
        command, draft, error = _read(reply.text)
        if error:  # once back to the model with the error, in the same fresh conversation
            retry = messages + [{"role": "assistant", "content": reply.text},
                                {"role": "user", "content": prompts.render("sac_retry", error=error)}]
            reply = self.query(retry, budget, grammar=self.reply_grammar)
            command, draft, error = _read(reply.text)
        if draft is None and error:
            self.trace.event("state_kept", step=self.stats.steps, error=error)
        if command is None:
            raise FormatError(error or "no command on the first line")
        self.format_errors = 0
        before = self.state
        if draft is not None:
            self.state = Handoff(task=self.question, commands_run=before.commands_run, **draft.model_dump())
            self.state.findings, dropped = keep_shown(self.state.findings, self.evidence.shown_lines())
            if dropped:
                self.trace.event("findings_dropped", step=self.stats.steps, findings=[f.fact for f in dropped],
                                 why="no tool showed the lines they point at")
        observation = self.execute(command)
        self.state.commands_run = [*before.commands_run, command.text][-COMMANDS_KEPT:]
        self.observe(command, observation, before)

    def observe(self, command: Command, observation: Observation, before: Handoff) -> None:
        self.last = prompts.render("sac_last", step=self.stats.steps, command=command.text, output=observation.text)
        added = [f.fact for f in self.state.findings if f not in before.findings]
        done = [p for p in before.plan if p not in self.state.plan]
        context = self.model.count_tokens(self.messages())
        self.trace.event("command", step=self.stats.steps, command=command.text, chars=observation.chars,
                         truncated=observation.truncated, error=observation.error, findings_added=added,
                         plan_done=done, state=self.state.model_dump())
        self.display.step(number=self.stats.steps, command=command.text, observation=observation.text,
                          truncated=observation.truncated, error=observation.error, context=context,
                          limit=self.config.context_limit)
        self.display.state(added=added, done=done, current=self.state.current_step)

    def execute(self, command: Command) -> Observation:
        """Unlike select, sac keeps no history: a repeated command's output is shown again, with a note."""
        key = " ".join(command.text.split())
        if key not in self.seen or command.name == "answer":
            return super().execute(command)
        self.repeats += 1
        if self.repeats > self.config.max_repeats:
            raise LimitReached(f"repeat limit ({self.config.max_repeats} repeated commands in a row)")
        observation = self.run_tool(command)
        observation.text = prompts.render("sac_repeat", command=key, step=self.seen[key], output=observation.text)
        return observation

    def on_format_error(self, error: str) -> None:
        self.format_errors += 1
        self.last = prompts.render("sac_format_error", step=self.stats.steps, error=error)
        self.trace.event("format_error", step=self.stats.steps, error=error)
        self.display.step(number=self.stats.steps, command="(no command)", observation=error, truncated=False,
                          error=True, context=self.model.count_tokens(self.messages()),
                          limit=self.config.context_limit)

    def limit_messages(self, reason: str) -> Messages:
        return self.messages() + [{"role": "user", "content": prompts.render("limit_answer", reason=reason)}]


def _read(text: str) -> tuple[Command | None, HandoffDraft | None, str | None]:
    """The command and the state draft of a reply, and what was wrong with either."""
    line, rest = split_reply(text)
    command = draft = None
    errors = []
    try:
        command = parse(line)
    except ParseError as e:
        errors.append(f"first line: {e}".splitlines()[0])
    if command is not None and command.name == "answer" and not rest.strip():
        return command, None, None  # an answer needs no new state
    try:
        draft = parse_draft(rest)
    except ValueError as e:
        errors.append(f"state: {e}")
    return command, draft, "; ".join(errors) or None
