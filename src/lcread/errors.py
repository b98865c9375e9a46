"""Errors shown to the user, why a run ended, and the exceptions that steer a reading loop."""

from dataclasses import dataclass
from enum import Enum


class LcreadError(Exception):
    """A problem the user can fix; its message is one line that says what to do."""


class TooLarge(LcreadError):
    """An input past a bound (a decompression bomb, too much markup): refused whatever its first bytes look like."""


class UsageError(LcreadError):
    """A command or option used wrongly (exit status 2): an unknown option or mode, a value out of range."""


class ModelError(LcreadError):
    """The model backend failed in a way that retrying will not fix."""

    retries: list[dict] = []
    """The retries the failed call made before giving up (attempt, error, wait)."""


class OutOfTime(ModelError):
    """The call could not finish (or be tried again) within the run's own time limit: the run ends at its limit."""


class ContextOverflow(ModelError):
    """The server refused the request as longer than its context window."""


SECRET_NAMES = ("KEY", "TOKEN", "SECRET", "PASSWORD")


def redact(text: str) -> str:
    """Text with the values of secret-looking environment variables (API keys, tokens) masked, so that a
    server echoing a key in its error cannot put it in a message, a trace or a result."""
    import os

    for name, value in os.environ.items():
        if len(value) >= 8 and any(part in name.upper() for part in SECRET_NAMES):
            text = text.replace(value, f"[{name}]")
    return text


class InterruptLoop(Exception):
    """Ends or redirects a reading loop; only a loop's run() catches these."""


class Submitted(InterruptLoop):
    """The run has its answer: the reader's reading (and the model's own words, when the check is off)."""

    def __init__(self, reading, answer: str | None = None):
        super().__init__(answer or "")
        self.reading = reading
        self.answer = answer


class LimitReached(InterruptLoop):
    """A step, token, time, repeat, format or sufficiency limit ended the run: its kind (a `Stop`) and detail."""

    def __init__(self, kind, detail: str = ""):
        self.reason = StopReason(kind, detail)
        super().__init__(str(self.reason))


class FormatError(InterruptLoop):
    """The model's reply was not a command; the message goes back to the model."""


class Stop(Enum):
    """Why a run ended."""

    ANSWERED = "answered"
    READ_TO_END = "read to the end"  # acs read every chunk
    STOPPED = "stopped"  # acs: its stopping policy (the detail) stopped it
    INTERRUPTED = "interrupted"  # Ctrl-C or SIGTERM
    MODEL_ERROR = "model error"
    STEP_LIMIT = "step limit"
    TOKEN_LIMIT = "token limit"
    TIME_LIMIT = "time limit"
    CONTEXT_LIMIT = "context limit"
    REPEAT_LIMIT = "repeat limit"
    FORMAT_LIMIT = "format limit"
    SUFFICIENCY_LIMIT = "sufficiency limit"
    GROUNDING_LIMIT = "grounding limit"

    @property
    def is_limit(self) -> bool:
        return self.value.endswith(" limit")


@dataclass(frozen=True)
class StopReason:
    """Why a run ended, with its detail: the limit's value, the model's error, the policy that stopped."""

    kind: Stop
    detail: str = ""

    def __str__(self) -> str:  # the words the display, the JSON's stop_reason and the model are given
        if self.kind is Stop.MODEL_ERROR:
            return f"model error: {self.detail}"
        if self.kind is Stop.STOPPED:
            return f"{self.detail} stopped"
        return f"{self.kind.value} ({self.detail})" if self.detail else self.kind.value

    @property
    def completed(self) -> bool:
        """The run reached its own end (an answer, or acs reading to its stop), not a limit or a failure."""
        return self.kind in (Stop.ANSWERED, Stop.READ_TO_END, Stop.STOPPED)
