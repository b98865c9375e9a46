"""llama-cpp-python's OpenAI-compatible server, loading its model the way lcread's embedded backend does
(`plain_buffers`): `python -m lcread.models.llamaserver --model M.gguf --port 8000`, with the server's own
options. The end-to-end tests start it to exercise the litellm path against a real server."""

from __future__ import annotations

import runpy

from lcread.models.local import plain_buffers

if __name__ == "__main__":
    with plain_buffers():  # the server loads its model at start, inside this block
        runpy.run_module("llama_cpp.server", run_name="__main__")
