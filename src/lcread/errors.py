"""Errors shown to the user, and the exceptions that steer a reading loop."""


class LcreadError(Exception):
    """A problem the user can fix; its message is one line that says what to do."""


class ModelError(LcreadError):
    """The model backend failed in a way that retrying will not fix."""


class InterruptLoop(Exception):
    """Ends or redirects a reading loop; only a loop's run() catches these."""


class Submitted(InterruptLoop):
    """The model answered (with the verdict of the answer's sufficiency check, when one ran)."""

    def __init__(self, answer: str, verdict=None):
        super().__init__(answer)
        self.answer = answer
        self.verdict = verdict


class LimitReached(InterruptLoop):
    """A step, token or time limit ended the run."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


class FormatError(InterruptLoop):
    """The model's reply was not a command; the message goes back to the model."""
