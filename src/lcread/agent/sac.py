"""sac: single-action compaction (seed 003 §5).

Every step is a fresh conversation holding only the task, the state and the last observation; the
model returns one command and the updated state, which is its only memory. The task is lcread's copy.
"""

from __future__ import annotations

from lcread import prompts
from lcread.tools.grammar import state_grammar
from lcread.agent.base import CommandLoop, Context, Run
from lcread.agent.handoff import (COMMANDS_KEPT, FINDINGS, LIST_ITEMS, POINTERS_KEPT, PROGRESS_KEPT, Handoff,
                                  HandoffDraft, keep_shown, parse_draft, split_reply)
from lcread.grounding.evidence import has, norm
from lcread.errors import FormatError
from lcread.models import Messages
from lcread.tools import USAGE, Command, Observation, ParseError, parse


class WrittenState(Context):
    mode = "sac"
    keeps_history = False

    def __init__(self, loop: CommandLoop, run: Run):
        super().__init__(loop, run)
        self.system = prompts.render("sac_system", usage=USAGE, documents=loop.tools.store.listing())
        self.state = self.before = Handoff(
            task=run.question, current_step="starting: nothing read yet",
            plan=["read around the passage that answers the question", "answer"],
            completion_requirements=["a passage that states the answer"], next_steps=[])
        self.last = "No command run yet."
        self.state_error: str | None = None

    def first(self, command: str, observation: Observation) -> None:
        self.last = prompts.render("sac_last", step=0, command=command, output=observation.text)
        self.state.commands_run = [command]
        self.record(Command("search", command), observation)

    def grammar(self) -> str | None:
        commands = self.loop.grammar(self.run)
        return state_grammar(self.loop.names, LIST_ITEMS, FINDINGS, after_command=True, commands=commands) \
            if commands else None

    def reply_tokens(self) -> int:
        return self.loop.config.command_tokens + self.loop.config.handoff_tokens

    def messages(self) -> Messages:
        return [{"role": "system", "content": self.system},
                {"role": "user", "content": prompts.render("sac_step", question=self.run.question,
                                                           state=self.state.render(), last=self.last)}]

    def read(self, reply: str) -> Command:
        """The command and the new state. A reply without a usable command is a format error (the next step
        says so); a command with an unusable state runs, the old state is kept, and the model is told."""
        command, draft, error = parse_reply(reply)
        if command is None:
            raise FormatError(error or "no command on the first line")
        self.before, self.state_error = self.state, None
        if draft is None and error:
            self.state_error = error
            self.loop.trace.event("state_kept", step=self.run.stats.steps, error=error)
        if draft is not None:
            self.state = Handoff(task=self.run.question, commands_run=self.before.commands_run,
                                 progress=self.before.progress, pointers=self.before.pointers, **draft.model_dump())
            self.state.findings, dropped = keep_shown(self.state.findings, self.run.evidence.shown_lines())
            if dropped:
                self.loop.trace.event("findings_dropped", step=self.run.stats.steps,
                                      findings=[f.fact for f in dropped], why="no tool showed the lines they point at")
        self.state.commands_run = [*self.before.commands_run, command.text][-COMMANDS_KEPT:]
        return command

    def observe(self, command: Command, observation: Observation) -> None:
        loop, before = self.loop, self.before
        self.last = prompts.render("sac_last", step=self.run.stats.steps, command=command.text, output=observation.text)
        if self.state_error:
            self.last += "\n" + prompts.render("sac_state_kept", error=self.state_error)
        self.record(command, observation)
        kept = self.undone(before, observation)
        if kept:
            self.last += "\n" + prompts.render("sac_not_done", items="; ".join(kept))
            loop.trace.event("done_marks_dropped", step=self.run.stats.steps, items=kept)
        added = [f.fact for f in self.state.findings if f not in before.findings]
        done = [p for p in before.plan if p not in self.state.plan]
        context = loop.model.count_tokens(self.messages())
        loop.trace.event("command", step=self.run.stats.steps, command=command.text, chars=observation.chars,
                         truncated=observation.truncated, error=observation.error, findings_added=added,
                         plan_done=done, state=self.state.model_dump())
        loop.display.step(number=self.run.stats.steps, command=command.text, observation=observation.text,
                          truncated=observation.truncated, error=observation.error, context=context,
                          limit=loop.config.context_limit)
        loop.display.state(added=added, done=done, current=self.state.current_step)

    def record(self, command: Command, observation: Observation) -> None:
        """lcread's own record in the state: what the command searched or read and what it showed, and where the
        question's words were seen (the model's notes are its intentions; this is what happened)."""
        state, shown = self.state, [p for p in observation.shown if p.kind != "heading"]
        if observation.error or not shown:
            outcome = "showed nothing" if not observation.error else "failed"
        else:
            places = list(dict.fromkeys(f"{p.doc}:{p.line}" for p in shown))
            outcome = f"showed {len(places)} lines ({', '.join(places[:4])}{', ...' if len(places) > 4 else ''})"
        # written as a past event, not as a command line: a small model copies a line that starts like a command
        state.progress = [*state.progress, f"step {self.run.stats.steps}: `{command.text}` {outcome}"][-PROGRESS_KEPT:]
        words = self.run.reader.words
        for p in shown:
            if any(has(norm(p.text), w) for w in words):
                chars = f" (chars {p.start:,}-{p.start + len(p.text):,})" if p.start else ""
                pointer = f"{p.doc}:{p.line}{chars}: {' '.join(p.text.split())[:80]}"
                if pointer not in state.pointers:
                    state.pointers = [*state.pointers, pointer][-POINTERS_KEPT:]

    def undone(self, before: Handoff, observation: Observation) -> list[str]:
        """Plan items and requirements the model marked done at a step whose command showed nothing go back in
        the state: progress is what a command showed, not what the model meant to do."""
        if not observation.error and any(p.kind != "heading" for p in observation.shown):
            return []
        kept = []
        for field in ("plan", "completion_requirements"):
            mine, was = getattr(self.state, field), getattr(before, field)
            back = [item for item in was if item not in mine]
            if back:
                setattr(self.state, field, (back + mine)[:LIST_ITEMS])
                kept += back
        return kept

    def format_error(self, error: str) -> None:
        loop = self.loop
        self.last = prompts.render("sac_format_error", step=self.run.stats.steps, error=error)
        loop.display.step(number=self.run.stats.steps, command="(no command)", observation=error, truncated=False,
                          error=True, context=loop.model.count_tokens(self.messages()),
                          limit=loop.config.context_limit)

    def limit_messages(self, reason: str) -> Messages:
        return self.messages() + [{"role": "user", "content": prompts.render("limit_answer", reason=reason)}]


class SacReader(CommandLoop):
    """The command loop reading one command per fresh context, with a written state."""

    context = WrittenState


def parse_reply(text: str) -> tuple[Command | None, HandoffDraft | None, str | None]:
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
