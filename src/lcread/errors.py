"""Errors shown to the user, and the exceptions that steer a reading loop."""


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
        from lcread.result import StopReason

        self.reason = StopReason(kind, detail)
        super().__init__(str(self.reason))


class FormatError(InterruptLoop):
    """The model's reply was not a command; the message goes back to the model."""
