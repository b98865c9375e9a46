"""Configs with documented defaults. Defaults live here and nowhere else."""

from __future__ import annotations

import os
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator


def option(default, name: str | None = None, **constraints):
    """A setting that the library (`lcread.ask(..., max_steps=5)`) and the command line (`--max-steps 5`) set by
    name: declared once, here, with its default and bounds (`name` when the option is called otherwise)."""
    return Field(default, json_schema_extra={"option": name or ""}, **constraints)


class _Config(BaseModel):
    model_config = ConfigDict(use_attribute_docstrings=True, extra="forbid")

    @classmethod
    def options(cls) -> dict[str, str]:
        """Option name -> field name, for the fields declared with `option`."""
        out = {}
        for field_name, info in cls.model_fields.items():
            extra = info.json_schema_extra if isinstance(info.json_schema_extra, dict) else {}
            if "option" in extra:
                out[extra["option"] or field_name] = field_name
        return out


class ToolConfig(_Config):
    read_chars: int = option(6000, ge=200, le=8000)
    """Characters a read returns when the model asks for more; also the default observation cap."""
    max_chars: int = Field(8000, ge=200)
    """Hard cap on any observation, whatever the command asked for."""
    match_window: int = Field(240, ge=20)
    """Characters shown either side of a grep match on a line too long to show whole."""
    grep_timeout: float = option(10.0, gt=0)
    """Seconds one grep may run before it is stopped (the model is told why)."""


class LoopConfig(_Config):
    """The command loop's budget and limits, for select and sac alike."""

    context_limit: int = option(16384, ge=1024)
    """Live context limit in tokens; no request is ever sent over it."""
    compact_at: int = option(12288, ge=512)
    """Live context, in tokens, at which the history is compacted into a handoff."""
    max_steps: int = option(40, ge=1)
    """Commands the model may issue before the run ends by limit."""
    max_total_tokens: int = option(500_000, "max_tokens", ge=1000)
    """Tokens (prompt + completion, all calls) the run may spend."""
    max_seconds: float = option(1800.0, gt=0)
    """Wall time the run may take."""
    max_format_errors: int = Field(3, ge=1)
    """Consecutive replies that are not a command before the run gives up."""
    max_repeats: int = Field(2, ge=0)
    """Repeated commands in a row (each answered with a nudge, not re-run) before the run ends by limit."""
    command_tokens: int = Field(200, ge=16)
    """Most tokens the model may generate for one command."""
    handoff_tokens: int = Field(1200, ge=128)
    """Most tokens the model may generate for a handoff."""
    first_step: bool = option(True)
    """Before the model's first command, lcread shows inputs that fit one read whole, or else the passages that
    best match the question (its ranked search): no run starts from the model's guess at the document's words."""
    reader_call: bool = True
    """Where the model scores the reader's candidates: in a call of the reader's own on new evidence (the question
    after the shown lines that match it best), else on each of the agent's calls."""
    reader_check: bool | None = None
    """After the reader's own call, a second call that scores its best candidates again in their own lines alone,
    against no answer (features the confidence may read). None: when the model's calibrated confidence reads them;
    `lcread bench` always makes it, so that its readings carry them for `lcread calibrate --reader`."""
    sufficiency: bool = option(True)
    """Accept an answer only when its sufficiency predicate holds on cited evidence (off: accept any
    answer, still reporting whether it is verified)."""
    max_unread_answers: int = Field(2, ge=0)
    """Answers given before any command read the documents, sent back before the run ends unverified."""
    max_refusals: int = option(3, ge=0)
    """Answers sent back for missing evidence before the run ends with its best answer, unverified."""
    steps_after_refusal: int = option(8, ge=1)
    """Commands allowed after the first answer sent back, before the run ends unverified."""

    @model_validator(mode="after")
    def _compact_below_limit(self) -> "LoopConfig":
        if self.compact_at >= self.context_limit:
            raise ValueError(f"--compact-at ({self.compact_at}) must be below the context limit "
                             f"({self.context_limit})")
        return self

    def fitted(self, window: int | None) -> "LoopConfig":
        """Shrink the budget proportionally when the model's window is smaller than the limit."""
        if not window or window >= self.context_limit:
            return self
        scale = window / self.context_limit
        return self.model_copy(update={"context_limit": window, "compact_at": int(self.compact_at * scale)})


class AcsConfig(_Config):
    chunk_chars: int = option(24_000, ge=200)
    """L: characters per chunk, read in document order (a backend may prefer another size: `for_model`)."""
    notes_chars: int = option(6_000, ge=100)
    """B: cap on the running notes, enforced in code."""
    theta: float = option(0.995, ge=0.0, le=1.0)
    """Confidence an answer state needs before ACS may stop."""
    epsilon: float = option(0.05, ge=0.0, le=1.0)
    """Largest mean change over the window for the state to count as stable."""
    window: int = option(3, ge=2)
    """w: how many recent answer states the stability test looks at."""
    stop: Literal["acs", "full", "random", "verbalized", "end"] = option("acs")
    """Stopping policy: acs, full, random, verbalized or end."""
    probe: Literal["auto", "letters", "likelihood"] = option("auto")
    """Multiple-choice probe: letters (the paper's), likelihood (option texts scored after the notes,
    calibrated by their likelihood without notes), or auto (likelihood where the backend can score)."""
    draft_confidence: Literal["min", "mean"] = option("min")
    """Open-ended drafts: confidence is the min (or mean) probability of the answer's own tokens."""
    gate_threshold: float = Field(0.995, ge=0.0, le=1.0)
    """Verbalized gate: stop when the reported confidence / 100 reaches this."""
    seed: int = option(0)
    """Seed of the random stopping policy."""
    top_k: int = Field(20, ge=1, le=20)
    """Log-probabilities read per position for the multiple-choice posterior."""
    draft_tokens: int = Field(32, ge=1)
    """Longest open-ended draft the probe generates."""

    def for_model(self, model) -> "AcsConfig":
        """The chunk size the backend prefers when --chunk-chars was not given. On CPU, prompt processing
        slows as the context grows (the embedded model: 199 tokens/s at 1K tokens, 172 at 2K, 136 at 6K),
        so the embedded model reads 8,000-character chunks, which also lets ACS stop at a finer grain."""
        preferred = model.chunk_chars
        if preferred and "chunk_chars" not in self.model_fields_set:
            return self.model_copy(update={"chunk_chars": preferred})
        return self


class ModelConfig(_Config):
    name: str = "local"
    """`local` (embedded), `local:/path/model.gguf`, or any litellm model string."""
    api_base: str | None = option(None)
    """Base URL of an OpenAI-compatible or provider endpoint."""
    timeout: float = option(120.0, "call_timeout", gt=0)
    """Seconds one remote call may take (each try); the run's --max-seconds bounds it too."""
    retries: int = Field(default_factory=lambda: env_int("LCREAD_RETRIES", 4), ge=0)
    """Retries, with exponential backoff, on rate limits, 5xx and timeouts."""
    local_context: int = option(16384, ge=512)
    """Context window the embedded model is loaded with (capped by the model's own)."""
    threads: int | None = option(None)
    """CPU threads for the embedded model; default: all cores."""


def env_int(name: str, default: int) -> int:
    """A whole number from the environment; a value that is not one is a one-line error naming the variable."""
    from lcread.errors import LcreadError

    value = os.environ.get(name)
    if value is None or not value.strip():
        return default
    try:
        number = int(value.strip().replace("_", ""))
    except ValueError:
        raise LcreadError(f"{name}={value!r} is not a whole number of bytes (e.g. {name}={default})") from None
    if number < 0:
        raise LcreadError(f"{name} must not be negative")
    return number


class ConvertConfig(_Config):
    cache_bytes: int = Field(default_factory=lambda: env_int("LCREAD_CACHE_BYTES", 4 << 30), ge=0)
    """Bound on the converted-text cache (PDF, Word, HTML, decompressed logs); least recently used go first."""
    max_expanded: int = Field(default_factory=lambda: env_int("LCREAD_MAX_EXPANDED", 64 << 30), ge=1)
    """Most bytes a compressed input may expand to before it is refused (a decompression bomb)."""


def cache_dir():
    """$LCREAD_CACHE_DIR, else $XDG_CACHE_HOME/lcread, else ~/.cache/lcread."""
    from pathlib import Path

    if os.environ.get("LCREAD_CACHE_DIR"):
        return Path(os.environ["LCREAD_CACHE_DIR"])
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "lcread"


def kv_dir():
    """$LCREAD_KV_DIR, else the cache folder's kv/: the embedded model's saved prompt states."""
    from pathlib import Path

    return Path(os.environ["LCREAD_KV_DIR"]) if os.environ.get("LCREAD_KV_DIR") else cache_dir() / "kv"


def env_model() -> str | None:
    """The model named by LCREAD_MODEL, if any."""
    return os.environ.get("LCREAD_MODEL") or None
