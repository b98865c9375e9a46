"""The in-process backend: a GGUF model run by llama.cpp (llama-cpp-python).

Prompts are rendered with the model's own chat template and counted with its own tokenizer, so the
live-context figure is exact. llama.cpp keeps the KV cache of the previous prompt; an append-only
history means only the new tokens are processed, and we report how many were reused.
"""

from __future__ import annotations

import contextlib
import os
import re
import threading
import time
from pathlib import Path

from lcread.config import ModelConfig
from lcread.config import kv_dir
from lcread.errors import LcreadError
from lcread.models.base import Messages, Reply, Scored, Scoring, TokenScore
from lcread.models.llamascore import score_continuations, scoring_context

MIN_NEW_TOKENS = 256
"""Save a state only when a call processed at least this many tokens past what is already on disk: writing
one takes tens of milliseconds, processing 256 tokens over a second on 2 cores."""
MIN_GAIN_TOKENS = 64
"""Load a saved state only when it spares at least this many tokens over what the context holds."""


_LOADING = threading.Lock()


@contextlib.contextmanager
def plain_buffers():
    """Load llama.cpp models without its extra CPU buffer types (weights repacked for AMX tiles and
    wide SIMD). On a Xeon that reports AMX under a sandboxing kernel, the first decode with them dies
    with SIGSEGV; without them the 0.5B model still processes about 240 prompt tokens/s on 2 cores.
    llama-cpp-python's `Llama` does not take the setting, so its default model parameters are
    amended while a model loads."""
    import llama_cpp.llama_cpp as capi

    with _LOADING:
        defaults = capi.llama_model_default_params

        def amended():
            params = defaults()
            params.use_extra_bufts = False
            return params

        capi.llama_model_default_params = amended
        try:
            yield
        finally:
            capi.llama_model_default_params = defaults


class LocalModel:
    supports_grammar = True
    supports_logprobs = True
    supports_scoring = True
    scores_spans = True
    in_process = True  # one llama.cpp context: a batch runs its tasks one at a time
    chunk_chars = 8_000  # acs reads smaller chunks here: prompt processing on CPU slows with context length

    def __init__(self, path: Path, config: ModelConfig, label: str = "local"):
        try:
            import llama_cpp
        except ImportError:
            raise LcreadError("the embedded model needs llama-cpp-python: pip install 'lcread[local]'") from None
        from lcread.models.promptcache import PromptCache

        self._llama_cpp = llama_cpp
        self.name = label
        self.path = Path(path)
        threads = config.threads or os.cpu_count() or 2
        try:
            with plain_buffers(), scoring_context():
                self.llm = llama_cpp.Llama(str(path), n_ctx=config.local_context, n_threads=threads,
                                           n_threads_batch=threads, n_batch=512, verbose=False)
        except (ValueError, RuntimeError) as e:
            raise LcreadError(f"cannot load {path} as a GGUF model ({e})") from None
        trained = _trained_context(self.llm.metadata)
        self.context_window = min(self.llm.n_ctx(), trained) if trained else self.llm.n_ctx()
        self._formatter, self._stop = self._chat_formatter()
        self._grammars: dict[str, object] = {}
        self._lock = threading.Lock()
        self.prompt_cache = PromptCache(kv_dir(), self.path)
        """Saved KV states, keyed by their tokens: a prompt that begins like an earlier one starts warm."""
        self._on_disk = 0
        """How many leading tokens of the context some saved state holds."""

    def _chat_formatter(self):
        from llama_cpp.llama_chat_format import Jinja2ChatFormatter

        template = self.llm.metadata.get("tokenizer.chat_template")
        if not template:
            raise LcreadError(f"{self.path} has no chat template; lcread needs an instruction-tuned chat model")
        model = self.llm._model
        eos = model.token_get_text(self.llm.token_eos()) if self.llm.token_eos() >= 0 else ""
        bos = model.token_get_text(self.llm.token_bos()) if self.llm.token_bos() >= 0 else ""
        formatter = Jinja2ChatFormatter(template=template, eos_token=eos, bos_token=bos)
        stop = formatter(messages=[{"role": "user", "content": "x"}]).stop or [eos]
        return formatter, ([stop] if isinstance(stop, str) else list(stop))

    def _restore(self, tokens: list[int]) -> None:
        """Before a call: load a saved state that spares more of this prompt than the context holds."""
        llm, cpp = self.llm, self._llama_cpp
        held = cpp.Llama.longest_token_prefix(llm._input_ids.tolist(), tokens)
        self._on_disk = min(self._on_disk, held)
        key, length = self.prompt_cache.longest(tokens)
        if key is None or length < held + MIN_GAIN_TOKENS:
            return
        loaded = self.prompt_cache.load(llm._ctx.ctx, cpp, key)
        if loaded:
            llm.input_ids[:len(loaded)] = loaded
            llm.n_tokens = self._on_disk = len(loaded)

    def _checkpoint(self) -> None:
        """After a call: save the context's state once enough new tokens were processed since the last save."""
        n = self.llm.n_tokens
        if n - self._on_disk >= MIN_NEW_TOKENS:
            self.prompt_cache.save(self.llm._ctx.ctx, self._llama_cpp, self.llm.input_ids[:n].tolist())
            self._on_disk = n

    def render(self, messages: Messages) -> str:
        """The exact prompt text the model sees, ending where the assistant's reply begins."""
        return self._formatter(messages=messages).prompt

    def tokens(self, messages: Messages) -> list[int]:
        return self.llm.tokenize(self.render(messages).encode("utf-8"), add_bos=False, special=True)

    def count_tokens(self, messages: Messages) -> int:
        return len(self.tokens(messages))

    def _grammar(self, grammar: str | None):
        if grammar is None:
            return None
        if grammar not in self._grammars:
            self._grammars[grammar] = self._llama_cpp.LlamaGrammar.from_string(grammar, verbose=False)
        return self._grammars[grammar]

    def query(self, messages: Messages, *, max_tokens: int, grammar: str | None = None,
              logprobs: int | None = None, choices: list[str] | None = None,
              timeout: float | None = None, scoring: Scoring | None = None) -> Reply:
        with self._lock:  # one llama.cpp context: calls are serialised
            tokens = self.tokens(messages)
            if len(tokens) + max_tokens > self.llm.n_ctx():
                raise LcreadError(f"prompt of {len(tokens)} tokens plus {max_tokens} to generate exceeds the "
                                  f"model's {self.llm.n_ctx()}-token window")
            started = time.monotonic()
            self._restore(tokens)
            cached = self._llama_cpp.Llama.longest_token_prefix(self.llm._input_ids.tolist(), tokens)
            if logprobs is not None:
                reply = self._scored(tokens, max_tokens, logprobs, choices, cached, started)
                self._checkpoint()
                return reply
            scored, spent = self._score(tokens, cached, scoring) if scoring is not None else (None, 0)
            out = self.llm.create_completion(tokens, max_tokens=max_tokens, temperature=0.0, top_k=1,
                                             repeat_penalty=1.0, stop=self._stop,
                                             grammar=self._grammar(grammar))
            latency = time.monotonic() - started
            self._checkpoint()
        usage = out["usage"]
        # llama.cpp re-evaluates at least the last prompt token even on a full prefix hit.
        cached = min(cached, len(tokens) - 1)
        return Reply(out["choices"][0]["text"], usage["prompt_tokens"] + spent, usage["completion_tokens"], latency,
                     cached_tokens=cached, scored=scored)

    def _score(self, tokens: list[int], cached: int, scoring: Scoring) -> tuple[Scored, int]:
        """The prompt evaluated once (its cached prefix reused), then the scoring's continuations over it."""
        llm = self.llm
        llm.n_tokens = min(cached, len(tokens) - 1)
        llm.eval(tokens[llm.n_tokens:])
        prefix, texts, ranks, spent = score_continuations(llm, self._llama_cpp, tokens, scoring.prefix,
                                                          list(scoring.texts))
        return Scored(prefix, texts, ranks), spent

    def score(self, messages: Messages, continuations: list[str]) -> Reply:
        """Each continuation's summed token log-probability as the reply to `messages`. The prompt is
        evaluated once (its KV prefix reused from the last call when shared); each continuation then costs
        only its own few tokens."""
        with self._lock:
            tokens = self.tokens(messages)
            started = time.monotonic()
            self._restore(tokens)
            cached = min(self._llama_cpp.Llama.longest_token_prefix(self.llm._input_ids.tolist(), tokens),
                         len(tokens) - 1)
            lead = _shared_lead(continuations)  # the opening quote each reply starts with, written first
            scored, spent = self._score(tokens, cached, Scoring(lead, tuple(c[len(lead):] for c in continuations)))
            self._checkpoint()
        return Reply("", len(tokens) + spent, 0, time.monotonic() - started, cached_tokens=cached,
                     continuation_logprobs=[scored.prefix + sum(t) for t in scored.texts])

    def _scored(self, tokens: list[int], max_tokens: int, top_k: int, choices: list[str] | None,
                cached: int, started: float) -> Reply:
        """Greedy decoding that reads each position's logits through the low-level API.

        llama-cpp-python gives log-probabilities only with logits_all=True, which computes logits for
        every prompt position; here only the last position's are read, one token at a time.
        """
        import numpy as np

        llm, cpp = self.llm, self._llama_cpp
        cached = min(cached, len(tokens) - 1)
        llm.n_tokens = cached  # reuse the KV cache of the shared prefix; eval() drops the rest
        llm.eval(tokens[cached:])
        allowed = None
        if choices:
            allowed = sorted({t for c in choices for t in self._first_tokens(c)})
        n_vocab, vocab = llm.n_vocab(), llm._model.vocab
        out: list[int] = []
        scores = []
        for _ in range(max_tokens):
            logits = np.ctypeslib.as_array(cpp.llama_get_logits_ith(llm._ctx.ctx, -1), shape=(n_vocab,))
            logits = logits.astype(np.float64)
            shift = logits.max()
            logp = logits - shift - np.log(np.exp(logits - shift).sum())
            pick = allowed[int(np.argmax(logp[allowed]))] if allowed else int(np.argmax(logp))
            if not allowed and cpp.llama_vocab_is_eog(vocab, pick):
                break
            top = np.argpartition(-logp, top_k)[:top_k] if top_k else []
            scores.append(TokenScore(self._piece(pick), float(logp[pick]),
                                     {self._piece(int(t)): float(logp[t]) for t in top}))
            out.append(pick)
            if allowed:
                break  # a choice is one token
            llm.eval([pick])
        text = llm.detokenize(out).decode("utf-8", "replace")
        return Reply(text, len(tokens), len(out), time.monotonic() - started, cached_tokens=cached, scores=scores)

    def _piece(self, token: int) -> str:
        return self.llm.detokenize([token]).decode("utf-8", "replace")

    def _first_tokens(self, choice: str) -> set[int]:
        """Token ids that begin `choice`, with and without a leading space."""
        ids = set()
        for variant in (choice, " " + choice):
            toks = self.llm.tokenize(variant.encode("utf-8"), add_bos=False, special=False)
            if toks:
                ids.add(toks[0])
        return ids


def _shared_lead(texts: list[str]) -> str:
    """The punctuation every text begins with (a reply's opening quote), scored once before each text's own
    tokens: so `"Bruce` is scored as the quote and then the name, the way the model writes it."""
    lead = re.match(r"[^\w\s]*", os.path.commonprefix(texts)).group(0)
    return lead if all(len(t) > len(lead) for t in texts) else ""


def _trained_context(metadata: dict) -> int | None:
    arch = metadata.get("general.architecture")
    value = metadata.get(f"{arch}.context_length") if arch else None
    try:
        return int(value) if value else None
    except ValueError:
        return None
