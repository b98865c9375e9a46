"""Token counting for backends without their own tokenizer: tiktoken, offline.

litellm bundles tiktoken's encodings; we point tiktoken at them without importing litellm (slow).
"""

from __future__ import annotations

import functools
import importlib.util
import os
from pathlib import Path

PER_MESSAGE = 4  # role and separators, as in OpenAI's chat accounting


@functools.lru_cache(maxsize=1)
def encoding():
    if "TIKTOKEN_CACHE_DIR" not in os.environ:
        spec = importlib.util.find_spec("litellm")
        if spec and spec.submodule_search_locations:
            bundled = Path(list(spec.submodule_search_locations)[0]) / "litellm_core_utils" / "tokenizers"
            if bundled.is_dir():
                os.environ["TIKTOKEN_CACHE_DIR"] = str(bundled)
    import tiktoken

    return tiktoken.get_encoding("cl100k_base")


def count_text(text: str) -> int:
    return len(encoding().encode(text, disallowed_special=()))


def count_messages(messages: list[dict[str, str]]) -> int:
    return 3 + sum(PER_MESSAGE + count_text(m.get("content") or "") for m in messages)
