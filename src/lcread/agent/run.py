"""One run of the command loop: its state, and the context that keeps what the model sees between steps."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from lcread.agent.gate import AnswerGate
from lcread.grounding.evidence import EvidenceLog
from lcread.models import Messages
from lcread.reader import Reader, Reading
from lcread.result import RunStats
from lcread.tools import Command, Observation

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
    read_at: int = -1
    """How many shown pieces the evidence held at the reader's last own call (a new call only on new evidence)."""
    read_answer: str | None = None
    """The model's answer at the reader's last own call: its free answer while the agent gives none."""

    @property
    def unread(self) -> bool:
        """Whether the tools showed something since the reader's last own call."""
        return self.read_at != len(self.evidence.pieces)

    @property
    def kind(self) -> str | None:
        return SEARCHED_KINDS.get(self.reader.asked.type)


class Context:
    """How a command loop keeps what the model sees between steps, for one run."""

    mode = "command"
    keeps_history = True
    """Whether the model still sees earlier observations: if not, a repeated command's output is shown again."""

    def __init__(self, loop, run: Run):
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
