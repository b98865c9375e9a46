"""What every model backend is: the Model protocol, a call's Reply and its scores, and the guard that keeps the unit
tests off real models."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from lcread.errors import LcreadError

Messages = list[dict[str, str]]


@dataclass
class TokenScore:
    """One generated token with its log-probability and the top alternatives at its position."""

    token: str
    logprob: float
    top: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class Scoring:
    """Continuations scored on a call's own prompt: `prefix` as the start of the reply, then each text after it
    (the reader's candidate answers after `answer "`), so that one evaluated prompt serves the command and the
    scores."""

    prefix: str
    texts: tuple[str, ...]


@dataclass
class Scored:
    """What a Scoring gave: the prefix's log-probability and each text's token log-probabilities, in order, with each
    token's rank among the model's choices at its place (0: the token it would generate)."""

    prefix: float
    texts: list[list[float]]
    ranks: list[list[int]] | None = None


@dataclass
class Reply:
    """One model call: the text, what it cost, and how long it took."""

    text: str
    prompt_tokens: int
    completion_tokens: int
    latency: float
    cached_tokens: int = 0
    """Prompt tokens served from a cache (llama.cpp's KV prefix, a provider's prompt cache)."""
    scores: list[TokenScore] | None = None
    """Per generated token log-probabilities, when asked for with `logprobs=`."""
    continuation_logprobs: list[float] | None = None
    """For `score()`: the summed log-probability of each continuation, in order."""
    scored: Scored | None = None
    """For `query(..., scoring=)`: the continuations' log-probabilities on this call's prompt."""
    retries: list[dict] = field(default_factory=list)
    """The retries this call needed (attempt, error, wait): the caller records them with the call."""


class Model(Protocol):
    name: str
    context_window: int | None
    """Tokens the model can attend to, when known."""
    supports_grammar: bool
    """Whether `grammar=` (GBNF) constrains generation."""
    supports_logprobs: bool
    """Whether `logprobs=K` returns token log-probabilities (ACS needs them)."""
    supports_scoring: bool
    """Whether `score()` gives continuations' log-probabilities (acs's likelihood probe needs it)."""
    scores_spans: bool
    """Whether `query(..., scoring=)` scores continuations on the call's own prompt, at the cost of their own tokens
    (the reader's span likelihoods): a backend that would need a request per continuation says no."""
    in_process: bool
    """True for a model that runs inside lcread's process (one llama.cpp context): tasks use it one at a time."""
    chunk_chars: int | None
    """The chunk size acs should read with on this backend, when it prefers one (None: the config's)."""

    def query(self, messages: Messages, *, max_tokens: int, grammar: str | None = None,
              logprobs: int | None = None, choices: list[str] | None = None,
              timeout: float | None = None, scoring: Scoring | None = None) -> Reply:
        """One completion. `logprobs=K` asks for each token's log-probability and the top K alternatives;
        `choices` restricts a one-token reply to these strings (option letters) where the backend can;
        `timeout` bounds the call, retries included (the run's own time limit), where the backend can;
        `scoring` (when `scores_spans`) also scores continuations of the same prompt, counted as its tokens."""

    def count_tokens(self, messages: Messages) -> int: ...

    def score(self, messages: Messages, continuations: list[str]) -> Reply:
        """The log-probability of each continuation as the assistant's reply, summed over its tokens (when
        `supports_scoring`)."""


def guard(name: str, api_base: str | None) -> None:
    """With LCREAD_FORBID_MODELS set (the unit tests set it), a real model is refused: any model not served on
    loopback (the embedded one and any GGUF have no server at all; a test's own scripted server is allowed)."""
    import os
    from urllib.parse import urlparse

    if not os.environ.get("LCREAD_FORBID_MODELS"):
        return
    host = urlparse(api_base).hostname if api_base else None
    if host not in ("127.0.0.1", "localhost", "::1"):
        raise LcreadError(f"a real model ({name}) was asked for where LCREAD_FORBID_MODELS is set: "
                          "mark the test with @pytest.mark.model")
