"""Continuations scored over one evaluated prompt in llama.cpp: each continuation is its own sequence over the
prompt's KV cells (copied, not recomputed), and all of them go through the model in one batch. Only the logits of
the positions asked for are read, through the low-level API (llama-cpp-python's own log-probabilities need
`logits_all=True`, which computes every prompt position)."""

from __future__ import annotations

import contextlib

SEQUENCES = 32
"""Continuations per batch: each is one sequence of the context (the context is created with one more)."""
MAX_TOKENS = 48
"""Tokens of a continuation scored at most (a candidate answer is a short span)."""


@contextlib.contextmanager
def scoring_context():
    """While a model loads: a context that holds several sequences in one unified KV buffer, so continuations of
    one prompt can share its cells."""
    import llama_cpp.llama_cpp as capi

    defaults = capi.llama_context_default_params

    def amended():
        params = defaults()
        params.n_seq_max = SEQUENCES + 1
        params.kv_unified = True
        return params

    capi.llama_context_default_params = amended
    try:
        yield
    finally:
        capi.llama_context_default_params = defaults


def _log_softmax(cpp, ctx, index: int, n_vocab: int):
    import numpy as np

    logits = np.ctypeslib.as_array(cpp.llama_get_logits_ith(ctx, index), shape=(n_vocab,)).astype(np.float64)
    shift = logits.max()
    return logits - shift - np.log(np.exp(logits - shift).sum())


def score_continuations(llm, cpp, prompt: list[int], prefix: str, texts: list[str]):
    """After `prompt` (already evaluated, its last logits current): the log-probability of `prefix` as the start of
    the reply, and of each token of each text after it, with each token's rank among the model's choices there (0:
    the one it would pick). Returns (prefix log-probability, per-text log-probabilities, per-text ranks, tokens
    evaluated). The context holds the prompt alone again afterwards."""
    n, n_vocab, ctx = len(prompt), llm.n_vocab(), llm._ctx.ctx
    head = llm.tokenize(prefix.encode("utf-8"), add_bos=False, special=False)
    rows = [_log_softmax(cpp, ctx, -1, n_vocab)]  # the distribution of each position after the prompt
    spent = 0
    if head:
        _decode(llm, cpp, [(0, n + i, t, True) for i, t in enumerate(head)])
        rows += [_log_softmax(cpp, ctx, i, n_vocab) for i in range(len(head))]
        spent += len(head)
    head_lp = [float(rows[i][t]) for i, t in enumerate(head)]
    prefix_lp = sum(head_lp)
    out: list[list[float]] = []
    after: list[float] = []  # the log-probability of the prefix's tokens a way merges with
    ranks: list[list[int]] = []
    ways = [[w[:len(head) + MAX_TOKENS] for w in _ways(llm, head, prefix, text)] for text in texts]
    whole = [w for text_ways in ways for w in text_ways]
    for group in _groups(whole, llm.n_batch):
        ids = [whole[i] for i in group]
        shared = [_common(head, x) for x in ids]  # a text may merge with the prefix's last token
        entries, firsts = [], []
        for seq, (x, k) in enumerate(zip(ids, shared), 1):
            llm._ctx.kv_cache_seq_cp(0, seq, 0, n + k)
            firsts.append(len(entries))
            entries += [(seq, n + k + j, t, True) for j, t in enumerate(x[k:-1])]
        if entries:
            _decode(llm, cpp, entries)
        for x, k, first in zip(ids, shared, firsts):
            own = x[k:]
            dists = ([rows[k]] if own else []) + [_log_softmax(cpp, ctx, first + j, n_vocab) for j in range(len(own) - 1)]
            out.append([float(d[t]) for d, t in zip(dists, own)])
            after.append(sum(head_lp[k:]))
            ranks.append([int((d > d[t]).sum()) for d, t in zip(dists, own)])
        spent += len(entries) + len(ids)
        for seq in range(1, len(ids) + 1):
            llm._ctx.kv_cache_seq_rm(seq, -1, -1)
    llm._ctx.kv_cache_seq_rm(0, n, -1)
    llm.n_tokens = n
    for i, merged in enumerate(after):  # a way that merges with the prefix scores the prefix's merged part again
        if merged and out[i]:
            out[i][0] = min(0.0, out[i][0] - merged)
    best, at = [], 0
    for text_ways in ways:  # a text written either way is as likely as its likelier way
        i = max(range(at, at + len(text_ways)), key=lambda i: sum(out[i]))
        best.append(i)
        at += len(text_ways)
    return prefix_lp, [out[i] for i in best], [ranks[i] for i in best], spent


def _ways(llm, head: list[int], prefix: str, text: str) -> list[list[int]]:
    """The ways the model may write `prefix + text`: as the tokenizer splits it whole, and, where the text's first
    characters merge with the prefix's last token (`"B` of `"Bruce`), also as the prefix's tokens and then the
    text's own (the quote, then the name: the way a model often writes it, which the merged way scores as
    unlikely)."""
    whole = llm.tokenize((prefix + text).encode("utf-8"), add_bos=False, special=False)
    if whole[:len(head)] == head:
        return [whole]
    return [whole, head + llm.tokenize(text.encode("utf-8"), add_bos=False, special=False)]


def _groups(whole: list[list[int]], budget: int):
    """Indices of the texts in batches: at most SEQUENCES texts and `budget` tokens each."""
    group, size = [], 0
    for i, x in enumerate(whole):
        if group and (len(group) == SEQUENCES or size + len(x) > budget):
            yield group
            group, size = [], 0
        group.append(i)
        size += len(x)
    if group:
        yield group


def _common(a: list[int], b: list[int]) -> int:
    k = 0
    while k < len(a) and k < len(b) - 1 and a[k] == b[k]:
        k += 1
    return k


def _decode(llm, cpp, entries: list[tuple[int, int, int, bool]]) -> None:
    """Decode (sequence, position, token, wants logits) entries in batches of the context's size; the logits of
    the i-th entry are read afterwards at index i (entries fit one batch; more are an error of the caller)."""
    batch = llm._batch.batch
    if len(entries) > llm.n_batch:
        raise ValueError(f"{len(entries)} tokens to score exceed the batch of {llm.n_batch}")
    batch.n_tokens = len(entries)
    for i, (seq, pos, token, logits) in enumerate(entries):
        batch.token[i] = token
        batch.pos[i] = pos
        batch.seq_id[i][0] = seq
        batch.n_seq_id[i] = 1
        batch.logits[i] = logits
    if cpp.llama_decode(llm._ctx.ctx, batch) != 0:
        raise RuntimeError("llama_decode failed while scoring continuations")
