"""The model layer: one small protocol, two backends (embedded, litellm), and the scripted model for tests."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from lcread.config import ModelConfig
from lcread.errors import LcreadError
from lcread.models.base import Messages, Model, Reply, Scored, Scoring, TokenScore, guard

__all__ = ["BACKENDS", "Backend", "Messages", "Model", "Reply", "Scored", "Scoring", "TokenScore", "backend_for",
           "get_model", "guard"]


@dataclass(frozen=True)
class Backend:
    """One kind of model: which model strings are its, whether it runs inside lcread's process, how it is built."""

    name: str
    claims: Callable[[str], bool]
    in_process: bool
    """One context in this process: tasks run one at a time, a Ray worker holds one per CPU slot or GPU."""
    build: Callable[[ModelConfig], Model]


def _embedded(config: ModelConfig) -> Model:
    from lcread.models.local import LocalModel
    from lcread.models.weights import embedded_model_path

    name = config.name.strip()
    if name == "local":
        guard(name, None)
        return LocalModel(embedded_model_path(), config, label="local")
    path = Path(name.removeprefix("local:")).expanduser()
    if not path.is_file():
        raise LcreadError(f"no model file at {path}: give --model local:/path/to/model.gguf")
    guard(name, None)
    return LocalModel(path, config, label=name)


def _litellm(config: ModelConfig) -> Model:
    from lcread.models.remote import LiteLLMModel

    return LiteLLMModel(config)


BACKENDS = (
    Backend("embedded", lambda name: name == "local" or name.startswith("local:"), True, _embedded),
    Backend("litellm", lambda name: bool(name), False, _litellm),
)
"""The backends, tried in order: the embedded model (`local`, `local:/path.gguf`), then any litellm model string.
A new backend is one entry."""


def backend_for(name: str) -> Backend:
    name = (name or "").strip()
    for backend in BACKENDS:
        if backend.claims(name):
            return backend
    raise LcreadError("empty model name: use --model local or a litellm model string such as gpt-4o-mini")


def get_model(config: ModelConfig, router=None) -> Model:
    """Build the backend a model string names (through a litellm Router when one is given: then the name is the
    router's model_name)."""
    if router is not None:
        from lcread.models.remote import LiteLLMModel

        return LiteLLMModel(config, router=router)
    return backend_for(config.name).build(config)
