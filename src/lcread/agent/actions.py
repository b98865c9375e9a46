"""What a run's commands do: lcread's first step, the model's commands (a repeat not run again, a cut output
continued, a grep that found nothing answered by a ranked search), and lcread's own lookups for what the best
candidates point at. Every output is evidence for the reader."""

from __future__ import annotations

from dataclasses import replace

from lcread import prompts
from lcread.agent.gate import lines
from lcread.agent.run import Context, Run, command_key
from lcread.config import LoopConfig
from lcread.display import Display
from lcread.errors import LimitReached
from lcread.errors import Stop
from lcread.tools import Command, Observation, ToolRunner
from lcread.tools.search import TOP
from lcread.trace import Trace

LOOKUPS = 6
"""Commands lcread runs itself after one reading at most."""


class Actions:
    def __init__(self, tools: ToolRunner, config: LoopConfig, display: Display, trace: Trace, keeps_history: bool):
        self.tools, self.config, self.display, self.trace = tools, config, display, trace
        self.keeps_history = keeps_history
        """Whether the model still sees earlier outputs (select): a repeated command is then not run again."""

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
        if self.keeps_history:
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

    def look_up(self, run: Run) -> bool:
        """lcread's own commands for what the best candidates point at: the definition of a constant-like name
        when the question asks for a value, a grep of each item of a set whose own lines were not searched, and a
        read of the lines a list laid out below the best lines goes on in. Their outputs are evidence, and the
        model sees them with its next observation."""
        commands = [Command("definition", f"definition {name}", patterns=[name])
                    for name in run.reader.names_to_resolve(run.reading)]
        commands += [Command("grep", f"grep -i -w -F {item!r}", patterns=[item], flags={"-i", "-w", "-F"})
                     for item in run.reader.follow(run.reading)]
        return self.run_own(run, commands + self.list_reads(run))

    def read_on(self, run: Run) -> bool:
        """lcread's own reads of the lists the best shown lines open, where they go on past what was shown: before
        the reader's call, so that it reads and scores their items."""
        return self.run_own(run, self.list_reads(run))

    @staticmethod
    def list_reads(run: Run) -> list[Command]:
        return [Command("read", f"read {doc} {first} {last}", docs=[doc], start=first, end=last)
                for doc, first, last in run.reader.lists_to_read()]

    def run_own(self, run: Run, commands: list[Command]) -> bool:
        """Runs lcread's own commands (LOOKUPS at most, none run before), each output evidence and kept for the
        model's next observation; whether any ran."""
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
        """The observation, with what lcread looked up itself since the last one (cut to a third of an output:
        the reader has all of it as evidence; the model needs the gist)."""
        if run.looked_up:
            extra = "\n".join(run.looked_up)
            room = self.tools.cap // 3
            if len(extra) > room:
                extra = extra[:room] + f"\n[lcread's own lookups cut at {room:,} characters]"
            observation.text = "\n".join([observation.text, extra])
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
