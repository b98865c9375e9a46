"""A scripted model for logic tests: replies come from a list (or a function of the history)."""

from __future__ import annotations

from typing import Callable

from lcread.models.base import Messages, Reply, Scored, Scoring


class ScriptedModel:
    """Answers each call with the next scripted output; records every call it receives.

    An output may be a string or a function of the messages (to script "wrong first, right after").
    An output may also be a Reply (to script log-probabilities for ACS); its text's token counts are
    recomputed. Tokens are counted as one per four characters (plus four per message), deterministically.
    """

    supports_grammar = False
    in_process = False
    chunk_chars = None

    def __init__(self, outputs: list[str | Reply | Callable[[Messages], str | Reply]], *, name: str = "scripted",
                 context_window: int | None = None, supports_logprobs: bool = True,
                 scorer: Callable[[Messages, list[str]], list[float]] | None = None):
        self.outputs = list(outputs)
        self.scorer = scorer
        """Scripts `score()`: the log-probabilities of the continuations, from the messages."""
        self.supports_scoring = self.scores_spans = scorer is not None
        self.name = name
        self.context_window = context_window
        self.supports_logprobs = supports_logprobs
        self.calls: list[dict] = []

    def count_tokens(self, messages: Messages) -> int:
        return 3 + sum(4 + -(-len(m.get("content") or "") // 4) for m in messages)

    def query(self, messages: Messages, *, max_tokens: int, grammar: str | None = None,
              logprobs: int | None = None, choices: list[str] | None = None,
              timeout: float | None = None, scoring: Scoring | None = None) -> Reply:
        if not self.outputs:
            raise RuntimeError(f"ScriptedModel ran out of outputs after {len(self.calls)} calls")
        self.calls.append({"messages": [dict(m) for m in messages], "max_tokens": max_tokens,
                           "grammar": grammar, "logprobs": logprobs, "choices": choices})
        output = self.outputs.pop(0)
        output = output(messages) if callable(output) else output
        scored = Scored(0.0, [[v] for v in self.scorer(messages, list(scoring.texts))]) \
            if scoring is not None and self.scorer is not None else None
        if isinstance(output, Reply):
            return Reply(output.text, self.count_tokens(messages), -(-len(output.text) // 4), latency=0.0,
                         scores=output.scores, scored=scored)
        return Reply(output, self.count_tokens(messages), -(-len(output) // 4), latency=0.0, scored=scored)

    def score(self, messages: Messages, continuations: list[str]) -> Reply:
        if self.scorer is None:
            raise RuntimeError("ScriptedModel has no scorer")
        self.calls.append({"messages": [dict(m) for m in messages], "continuations": list(continuations)})
        return Reply("", self.count_tokens(messages) + sum(-(-len(c) // 4) for c in continuations), 0, 0.0,
                     continuation_logprobs=list(self.scorer(messages, continuations)))
