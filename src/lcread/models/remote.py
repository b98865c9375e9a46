"""Any model litellm can reach: hosted APIs, vLLM, llama.cpp and Ollama servers.

litellm is imported on the first use, never at start-up. Retries with backoff live here, once:
litellm's own `num_retries` needs tenacity, which it does not install.
"""

from __future__ import annotations

import os
import random
import time

from lcread.config import ModelConfig
from lcread.errors import ContextOverflow, ModelError, OutOfTime, redact
from lcread.models.base import Messages, Reply, TokenScore, guard
from lcread.models.tokens import count_messages

_litellm = None
SANITY_PROMPT = "Question: What is the capital of France?\nAnswer:"
SANITY_CONTINUATIONS = (" Paris", " Rome")  # one token each: a length difference cannot pass the check


def load_litellm():
    """Import litellm offline and quietly, once."""
    global _litellm
    if _litellm is None:
        os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
        os.environ.setdefault("LITELLM_LOG", "ERROR")
        import litellm

        litellm.suppress_debug_info = True
        litellm.drop_params = True
        _litellm = litellm
    return _litellm


class LiteLLMModel:
    supports_grammar = False
    in_process = False
    chunk_chars = None
    scores_spans = False  # the echo endpoint scores one continuation per request: too many for a reader's spans

    def __init__(self, config: ModelConfig, sleep=time.sleep, router=None):
        self.config = config
        self.name = config.name
        self._sleep = sleep
        self.router = router
        """A litellm Router spreading calls over several deployments of `name`, with failover."""
        self._window: int | None | bool = False
        self._api_key: str | None = None
        self._checked = False
        self._scoring: bool | None = None

    @property
    def context_window(self) -> int | None:
        if self._window is False:
            try:
                info = load_litellm().get_model_info(self.name)
                self._window = info.get("max_input_tokens") or info.get("max_tokens")
            except Exception:
                self._window = None  # unknown to litellm's map (a self-hosted model): use the defaults
        return self._window or None

    def count_tokens(self, messages: Messages) -> int:
        return count_messages(messages)

    @property
    def supports_logprobs(self) -> bool:
        """False where the route is known to send none: Anthropic, Ollama's native API, reasoning models."""
        name = self.name.lower()
        provider, _, bare = name.rpartition("/")
        if provider in ("anthropic", "ollama", "ollama_chat", "bedrock", "vertex_ai") or bare.startswith("claude"):
            return False
        if bare.startswith(("o1", "o3", "o4", "gpt-5")):
            return False
        try:
            params = load_litellm().get_supported_openai_params(model=self.name) or []
        except Exception:
            return True  # an OpenAI-compatible server: ask, and check the reply
        return "logprobs" in params

    def _check_environment(self) -> None:
        """Fail before the first call when the provider's key is missing."""
        if self._checked or self.router is not None:
            return
        self._checked = True
        litellm = load_litellm()
        try:
            env = litellm.validate_environment(model=self.name, api_base=self.config.api_base)
        except Exception:
            return
        missing = env.get("missing_keys") or []
        openai_style = self.name.startswith(("openai/", "hosted_vllm/", "text-completion-openai/"))
        if self.config.api_base and (missing or (openai_style and not os.environ.get("OPENAI_API_KEY"))):
            self._api_key = "no-key"  # a self-hosted server usually needs none, but the client insists
        elif missing:
            raise ModelError(f"model {self.name} needs {', '.join(missing)}: set it in the environment, "
                             "or use --model local")

    def query(self, messages: Messages, *, max_tokens: int, grammar: str | None = None,
              logprobs: int | None = None, choices: list[str] | None = None,
              timeout: float | None = None, scoring=None) -> Reply:
        litellm = load_litellm()
        self._check_environment()
        if self.router is None and _routable(litellm, self.name):
            guard(self.name, self.config.api_base)  # in unit tests: no request may leave the machine
        deadline = time.monotonic() + (timeout if timeout is not None else 1e9)
        kwargs = dict(model=self.name, messages=messages, max_tokens=max_tokens, temperature=0.0, num_retries=0,
                      max_retries=0)  # the OpenAI client's own retries (and their Retry-After sleeps) are lcread's
        if logprobs is not None:
            kwargs.update(logprobs=True, top_logprobs=max(1, min(logprobs, 20)))
        if self.config.api_base and self.router is None:
            kwargs["api_base"] = self.config.api_base
        if self._api_key:
            kwargs["api_key"] = self._api_key
        retries: list[dict] = []  # this call's own: a model object serves concurrent runs
        for attempt in range(self.config.retries + 1):
            left = deadline - time.monotonic()
            if left <= 0:
                raise _with(OutOfTime(f"model {self.name}: the run's time limit was reached during the call"), retries)
            started = time.monotonic()
            try:
                response = (self.router or litellm).completion(**kwargs, timeout=min(self.config.timeout, left))
                choice = _first_choice(response)
                break
            except Exception as e:  # noqa: BLE001 - sorted into retry, stop, or explain below
                wait = self._retry_wait(e, attempt)
                if wait is not None and attempt < self.config.retries and time.monotonic() + wait >= deadline:
                    raise _with(OutOfTime(f"model {self.name}: the run's time limit comes before the server's next "
                                          f"try ({_short(e)})"), retries) from None
                if wait is None or attempt == self.config.retries:
                    raise _with(_explain(self.name, e, attempt + 1, retried=wait is not None), retries) from None
                retries.append({"attempt": attempt + 1, "error": _short(e), "wait": round(wait, 2)})
                self._sleep(wait)
        latency = time.monotonic() - started
        text = choice.message.content or ""
        usage = getattr(response, "usage", None)
        prompt = getattr(usage, "prompt_tokens", None) or count_messages(messages)
        completion = getattr(usage, "completion_tokens", None) or 0
        details = getattr(usage, "prompt_tokens_details", None)
        cached = getattr(details, "cached_tokens", None) or 0
        return Reply(text, prompt, completion, latency, cached_tokens=cached,
                     scores=_scores(choice) if logprobs is not None else None, retries=retries)

    @property
    def supports_scoring(self) -> bool:
        """Whether the server scores continuations: a self-hosted OpenAI-compatible completions endpoint
        (--api-base) that echoes the prompt's token log-probabilities, and whose log-probabilities make
        sense: the answer everyone knows must beat a wrong one of the same length by a wide margin (the
        embedded model: -0.05 against -9.7). llama-cpp-python's server (0.3, with logits_all) fails this:
        its echo gives each token the probability of being repeated (Paris -9.2, Rome -9.2). Detected by
        two small requests, once; never assumed."""
        if self._scoring is None:
            self._scoring = False
            if self.config.api_base:
                try:
                    known, absurd = (self._echoed(SANITY_PROMPT, c)[0] for c in SANITY_CONTINUATIONS)
                    self._scoring = known is not None and absurd is not None and known > absurd + 2.0
                except ModelError:
                    pass
        return self._scoring

    def score(self, messages: Messages, continuations: list[str]) -> Reply:
        """Each continuation's summed token log-probability after the messages, read from the completions
        endpoint's echoed prompt (one request per continuation; a server with prefix caching processes the
        shared prompt once). The messages are sent as plain text ending in "Answer:": a chat template is the
        server's business, and a calibrated comparison between options needs only the same prompt for each."""
        prompt = "\n\n".join(m["content"] for m in messages) + "\nAnswer:"
        started, sums, tokens = time.monotonic(), [], 0
        for text in continuations:
            total, used = self._echoed(prompt, " " + text.strip())
            if total is None:
                raise ModelError(f"model {self.name} returned no prompt log-probabilities: use --probe letters")
            sums.append(total)
            tokens += used
        return Reply("", tokens, 0, time.monotonic() - started, continuation_logprobs=sums)

    def _echoed(self, prompt: str, continuation: str) -> tuple[float | None, int]:
        """The summed log-probability of `continuation`'s tokens after `prompt`, and the tokens sent."""
        import httpx

        guard(self.name, self.config.api_base)
        self._check_environment()
        body = {"model": self.name.split("/", 1)[-1], "prompt": prompt + continuation, "max_tokens": 1,
                "echo": True, "logprobs": 1, "temperature": 0.0}
        key = self._api_key or os.environ.get("OPENAI_API_KEY") or "no-key"
        try:
            response = httpx.post(self.config.api_base.rstrip("/") + "/completions", json=body,
                                  headers={"Authorization": f"Bearer {key}"}, timeout=self.config.timeout)
            response.raise_for_status()
            data = response.json()
            logprobs = data["choices"][0].get("logprobs") or {}
        except (httpx.HTTPError, ValueError, KeyError, IndexError, TypeError) as e:
            raise ModelError(f"model {self.name}: scoring failed ({_short(e)})") from None
        offsets, values = logprobs.get("text_offset") or [], logprobs.get("token_logprobs") or []
        if not offsets or len(offsets) != len(values):
            return None, 0
        ends = offsets[1:] + [len(prompt + continuation)]
        picked = [v for start, end, v in zip(offsets, ends, values) if end > len(prompt) and start < len(prompt + continuation)]
        if not picked or any(v is None for v in picked):
            return None, 0
        used = (data.get("usage") or {}).get("prompt_tokens") or len(offsets)
        return float(sum(picked)), int(used)

    def _retry_wait(self, e: Exception, attempt: int) -> float | None:
        """Seconds to wait before trying again, or None when trying again will not help. Rate limits,
        5xx (502, 503, 504, 529 overloaded...), timeouts, dropped connections and malformed replies are
        transient; the server's Retry-After is honoured (up to a minute)."""
        litellm = load_litellm()
        status = getattr(e, "status_code", None)
        if isinstance(e, (litellm.AuthenticationError, litellm.NotFoundError, litellm.ContextWindowExceededError,
                          litellm.PermissionDeniedError)) or status in (400, 401, 403, 404, 422):
            return None
        transient = isinstance(e, (litellm.RateLimitError, litellm.InternalServerError, litellm.ServiceUnavailableError,
                                   litellm.APIConnectionError, litellm.Timeout, litellm.BadGatewayError,
                                   MalformedReply)) or status in (408, 409, 425, 429, 500, 502, 503, 504, 529)
        if not transient or "credentials" in str(e).lower():
            return None
        after = _retry_after(e)
        backoff = min(60.0, 2.0 ** attempt + random.uniform(0, 1))
        return min(60.0, after) if after is not None else backoff


def _with(error: ModelError, retries: list[dict]) -> ModelError:
    """The error, carrying the retries made before it (the caller records them)."""
    error.retries = retries
    return error


def _routable(litellm, name: str) -> bool:
    """Whether litellm knows where to send this model's requests (an unknown name never leaves)."""
    try:
        litellm.get_llm_provider(name)
    except Exception:  # noqa: BLE001 - litellm's own error for an unknown provider
        return False
    return True


class MalformedReply(Exception):
    """The server answered 200 with something that is not a completion (no choices, no message)."""


def _first_choice(response):
    choices = getattr(response, "choices", None)
    if not choices or getattr(choices[0], "message", None) is None:
        raise MalformedReply("the server's reply held no completion (empty choices)")
    return choices[0]


def _retry_after(e: Exception) -> float | None:
    """The Retry-After of the server's reply, in seconds (a number or an HTTP date)."""
    headers = getattr(getattr(e, "response", None), "headers", None) or getattr(e, "litellm_response_headers", None)
    value = None
    if headers is not None:
        try:
            value = headers.get("retry-after") or headers.get("Retry-After")
        except AttributeError:
            value = None
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        from email.utils import parsedate_to_datetime

        try:
            return max(0.0, parsedate_to_datetime(value).timestamp() - time.time())
        except (TypeError, ValueError):
            return None


def _explain(name: str, e: Exception, tries: int, retried: bool) -> ModelError:
    """The one-line message a failed call ends with."""
    litellm = load_litellm()
    text = _short(e)
    if isinstance(e, litellm.ContextWindowExceededError) or "context length" in text.lower() \
            or "maximum context" in text.lower():
        return ContextOverflow(f"model {name} refused the request as longer than its context window: {text}")
    if isinstance(e, litellm.AuthenticationError) or getattr(e, "status_code", None) == 401 \
            or "credentials" in text.lower():
        return ModelError(f"authentication failed for {name}: check the provider's API key variable ({text})")
    if isinstance(e, litellm.PermissionDeniedError) or getattr(e, "status_code", None) == 403:
        return ModelError(f"model {name} refused access (403): check the key's permissions ({text})")
    if isinstance(e, litellm.NotFoundError) or getattr(e, "status_code", None) == 404:
        return ModelError(f"unknown model {name!r} (404 from the server): check the model name, or use a litellm "
                          "model string such as gpt-4o-mini, hosted_vllm/NAME with --api-base, or --model local")
    if isinstance(e, litellm.BadRequestError):
        return ModelError(_explain_bad_request(name, e))
    if retried:
        return ModelError(f"model {name} failed after {tries} tries: {text}")
    return ModelError(f"model {name} failed: {text}")


def _scores(choice) -> list[TokenScore] | None:
    """Token log-probabilities from an OpenAI-style choice; None when the provider sent none
    (litellm deletes the attribute then, so it is read with getattr)."""
    content = getattr(getattr(choice, "logprobs", None), "content", None)
    if content is None and isinstance(getattr(choice, "logprobs", None), dict):
        content = choice.logprobs.get("content")
    if not content:
        return None
    out = []
    for item in content:
        get = item.get if isinstance(item, dict) else lambda k, i=item: getattr(i, k, None)
        top = {}
        for alt in get("top_logprobs") or []:
            alt_get = alt.get if isinstance(alt, dict) else lambda k, a=alt: getattr(a, k, None)
            top[alt_get("token")] = alt_get("logprob")
        out.append(TokenScore(get("token") or "", float(get("logprob") or 0.0), top))
    return out


def load_router(path) -> "object":
    """A litellm Router from a YAML file in litellm's own format:

        model_list:
          - model_name: qwen
            litellm_params: {model: openai/qwen, api_base: http://10.0.0.1:8000/v1, api_key: none}
          - model_name: qwen
            litellm_params: {model: openai/qwen, api_base: http://10.0.0.2:8000/v1, api_key: none}
        router_settings: {routing_strategy: simple-shuffle, cooldown_time: 30}
    """
    import yaml

    try:
        config = yaml.safe_load(open(path, encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError) as e:
        raise ModelError(f"cannot read the router config {path}: {e}") from None
    models = config.get("model_list") if isinstance(config, dict) else None
    if not models or not all(isinstance(m, dict) and "model_name" in m and "litellm_params" in m for m in models):
        raise ModelError(f"{path} needs a model_list of entries with model_name and litellm_params")
    settings = dict(config.get("router_settings") or {})
    settings.setdefault("num_retries", 0)  # retries and backoff are lcread's own (see LiteLLMModel.query)
    settings.setdefault("allowed_fails", 0)  # a failing deployment cools down at once: the next call fails over
    settings.setdefault("cooldown_time", 30)
    return load_litellm().Router(model_list=models, **settings)


def _short(e: Exception) -> str:
    """The exception in one line of at most 300 characters, without a traceback a library put in its message, read
    from at most its first 4,000 characters (a server may send megabytes of error)."""
    text = str(e)[:4000].split("Traceback (most recent call last)")[0]
    return redact(" ".join(text.split()))[:300] or type(e).__name__


def _explain_bad_request(name: str, e: Exception) -> str:
    text = _short(e)
    if "LLM Provider NOT provided" in text or "not found" in text.lower() or "does not exist" in text.lower():
        return (f"unknown model {name!r}: use a litellm model string such as gpt-4o-mini, "
                "anthropic/claude-..., ollama_chat/llama3, hosted_vllm/NAME with --api-base, or --model local")
    return f"model {name} rejected the request: {text}"
