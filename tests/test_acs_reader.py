import math

import pytest

from lcread.acs.chunks import chunk_store, cut_point
from lcread.acs.policies import AcsPolicy, EndPolicy, FullPolicy, RandomPolicy, VerbalizedPolicy
from lcread.acs.probe import Probe
from lcread.acs.reader import FoldReader, grounded_lines
from lcread.acs.rules import random_stop_step
from lcread.errors import Stop
from lcread.config import AcsConfig
from lcread.display import SilentDisplay
from lcread.documents import DocumentStore
from lcread.errors import LcreadError
from lcread.models import Reply, TokenScore
from lcread.models.scripted import ScriptedModel
from lcread.trace import MemoryTrace

NEEDLE = "The vault code is 7261."
QUESTION = "What is the vault code?"


@pytest.fixture
def store(write):
    parts = [f"Part {i} " + "filler words here. " * 9 + "\n" for i in range(1, 7)]
    parts[2] = parts[2].replace("filler words here. ", NEEDLE + " ", 1)
    return DocumentStore.open([str(write("doc.txt", "".join(parts)))])


def draft(text: str, p: float = 0.999) -> Reply:
    return Reply(text, 0, 0, 0.0, scores=[TokenScore(text, math.log(p))])


def brain(probe_answers=None, gate=None, fold=None):
    """Replies by prompt kind; the probe's reply depends on whether the notes hold the needle."""
    calls = {"fold": 0, "probe": 0, "gate": 0}

    def reply(messages):
        text = messages[-1]["content"]
        if text.startswith("New part"):
            calls["fold"] += 1
            return fold(text) if fold else ("The vault code is 7261." if NEEDLE in text else "nothing relevant")
        if "0 to 100" in text or "END if they do" in text:
            calls["gate"] += 1
            return gate(text, calls["gate"])
        calls["probe"] += 1
        if probe_answers:
            return probe_answers(text, calls["probe"])
        return draft("7261") if NEEDLE in text else draft("not found", 0.99)

    return reply, calls


def run(store, policy, replies, config=None, logprobs=True):
    model = ScriptedModel([replies] * 200, supports_logprobs=logprobs)
    trace = MemoryTrace()
    config = config or AcsConfig(chunk_chars=200, notes_chars=600)
    reader = FoldReader(model, Probe(model, QUESTION, []), policy, SilentDisplay(), trace, config)
    return reader.run(QUESTION, chunk_store(store, config.chunk_chars)), trace, model


def test_chunks_cover_the_document_in_order_at_boundaries(store):
    chunks = chunk_store(store, 200)
    assert [c.index for c in chunks] == list(range(1, 7))
    assert chunks[0].start == 0 and chunks[-1].end == store.docs[0].size
    assert all(a.end == b.start for a, b in zip(chunks, chunks[1:]))
    assert all(c.text().endswith("\n") for c in chunks)  # cut at the line ends near 200
    assert NEEDLE in chunks[2].text()


def test_cut_point_prefers_boundaries_and_never_splits_a_character():
    assert cut_point(b"a" * 16 + b". bbX", 20) == 18  # a sentence end in the last 20%
    assert cut_point(b"a" * 16 + b"\nb. cX", 20) == 17  # a line end beats a sentence end
    assert cut_point(b"a" * 8 + b". " + b"b" * 12, 20) == 20  # nothing near the cut: cut at the size
    assert cut_point(b"x" * 17 + "é".encode() + b"yy", 18) == 17  # byte 18 is inside é


def test_acs_stops_once_the_answer_is_confident_and_stable(store):
    replies, calls = brain()
    result, trace, _ = run(store, AcsPolicy(0.995, 0.05, 3), replies)
    # needle in chunk 3: states 3 and 4 agree; before it the notes are empty: no answer state, no probe call
    assert (result.answer, result.chunks_read, result.reason) == ("7261", 4, "acs stopped")
    assert result.stop.kind is Stop.STOPPED and result.stop.completed and result.final
    assert calls == {"fold": 4, "probe": 2, "gate": 0}
    assert [s["answer"] for s in result.chunks] == ["", "", "7261", "7261"]
    assert [s["eligible"] for s in result.chunks] == [False, False, True, True]
    assert result.chunks[-1]["change"] == 0.0 and result.chunks[-1]["stop"] is True
    assert result.tokens_by_kind["gate"] == 0 and result.tokens_by_kind["fold"] > 0


def test_acs_never_stops_on_an_abstention_and_reads_to_the_end(store):
    replies, calls = brain(probe_answers=lambda text, n: draft("not found", 1.0))
    result, _, _ = run(store, AcsPolicy(0.995, 0.05, 3), replies)
    assert (result.chunks_read, result.reason, result.answer) == (6, "read to the end", "not found")


def test_acs_reads_to_the_end_when_confidence_stays_low(store):
    replies, _ = brain(probe_answers=lambda text, n: draft("7261", 0.9))
    result, _, _ = run(store, AcsPolicy(0.995, 0.05, 3), replies)
    assert result.chunks_read == 6 and result.answer == "7261"


def test_full_reading_probes_once_at_the_end(store):
    replies, calls = brain()
    result, _, _ = run(store, FullPolicy(), replies)
    assert (result.chunks_read, result.answer) == (6, "7261")
    assert calls == {"fold": 6, "probe": 1, "gate": 0}
    assert [s.get("answer") for s in result.chunks] == [None] * 5 + ["7261"]


def test_random_stops_where_its_seed_says(store):
    replies, calls = brain()
    result, _, _ = run(store, RandomPolicy(seed=5), replies)
    step = random_stop_step(6, 5)
    assert result.chunks_read == step and calls == {"fold": step, "probe": 1, "gate": 0}


def test_verbalized_and_end_gates_are_asked_after_every_fold(store):
    replies, calls = brain(gate=lambda text, n: "100" if NEEDLE in text else "40")
    result, _, _ = run(store, VerbalizedPolicy(0.995), replies)
    assert (result.chunks_read, result.answer) == (3, "7261")
    assert calls == {"fold": 3, "probe": 1, "gate": 3} and result.tokens_by_kind["gate"] > 0
    replies, calls = brain(gate=lambda text, n: "END" if n == 2 else "CONTINUE")
    result, _, _ = run(store, EndPolicy(), replies)
    assert result.chunks_read == 2 and result.answer is None  # no evidence: no answer
    assert result.text == "No answer was found in what was read."
    assert calls == {"fold": 2, "probe": 0, "gate": 2}  # and no probe call on empty notes
    assert result.verified is False and result.missing  # not an answer: the CLI exits 4, never 0


def test_a_backend_without_logprobs_fails_before_reading(store):
    replies, calls = brain()
    with pytest.raises(LcreadError, match="--stop verbalized, --stop end or --stop full"):
        run(store, AcsPolicy(0.995, 0.05, 3), replies, logprobs=False)
    assert calls["fold"] == 0


def test_notes_hold_only_what_the_chunk_says_and_stay_under_the_cap(store):
    flood = lambda text: "\n".join(line for line in text.splitlines() if line.startswith("Part")) + "\nI made this up"
    replies, _ = brain(fold=flood)
    config = AcsConfig(chunk_chars=200, notes_chars=300)
    result, trace, model = run(store, FullPolicy(), replies, config=config)
    assert all(s["notes_chars"] <= 300 for s in result.chunks)
    dropped = [line for e in trace.of("fold_dropped") for line in e["lines"]]
    assert "I made this up" in dropped
    assert trace.of("notes_over_cap")


def test_grounded_lines_expand_a_quote_to_its_source_line():
    chunk = "first line\nThe vault code is 7261, said Ann.\nlast line\n"
    kept, dropped = grounded_lines("7261\nThe code is 9999.\n- LAST LINE", chunk)
    assert kept == ["The vault code is 7261, said Ann.", "last line"]
    assert dropped == ["The code is 9999."]


def test_replay_charges_each_policy_for_its_own_calls(store):
    from lcread.acs.policies import RecordingPolicy
    from lcread.acs.replay import replay

    replies, calls = brain(gate=lambda text, n: "END" if NEEDLE in text else "CONTINUE")
    model = ScriptedModel([replies] * 200)
    config = AcsConfig(chunk_chars=200, notes_chars=600)
    reader = FoldReader(model, Probe(model, QUESTION, []), RecordingPolicy(), SilentDisplay(), MemoryTrace(), config)
    steps = reader.run(QUESTION, chunk_store(store, 200)).steps
    assert calls == {"fold": 6, "probe": 4, "gate": 12} and len(steps) == 6  # no probe call on empty notes
    assert all(set(s.gates) == {"verbalized", "end"} and set(s.probes) == {"draft·min"} for s in steps)
    full, acs, end = (replay(p, steps, "draft·min") for p in (FullPolicy(), AcsPolicy(0.995, 0.05, 3), EndPolicy()))
    folds, probes = [s.fold_tokens for s in steps], [s.probes["draft·min"].tokens for s in steps]
    assert all(f > 0 for f in folds) and probes[:2] == [0, 0] and all(p > 0 for p in probes[2:])
    assert (full.stop, full.answer) == (6, "7261")
    assert full.tokens == sum(folds) + probes[-1]
    assert (acs.stop, acs.answer) == (4, "7261")
    assert acs.tokens == sum(folds[:4]) + sum(probes[:4])
    assert (end.stop, end.answer) == (3, "7261")
    assert end.tokens == sum(folds[:3]) + probes[2] + sum(s.gates["end"].tokens for s in steps[:3])


def test_chunk_of_converts_character_offsets_to_bytes(write):
    from lcread.acs.chunks import chunk_of

    text = "é" * 150 + "\n" + "x" * 150 + "\n"  # 301 bytes then 151: characters and bytes differ
    chunks = chunk_store(DocumentStore.open([str(write("u.txt", text))]), 200)
    at = text.index("x")  # character 151, byte 301
    assert chunk_of(chunks, at) == next(c.index for c in chunks if c.start <= 301 < c.end)
    assert chunk_of(chunks, at) > chunk_of(chunks, 0)


OPTIONS = [("A", "5120"), ("B", "7261"), ("C", "9034")]


def likelihood_scorer(messages, continuations):
    """Without notes the model prefers A (a prior to calibrate away); with the needle in the notes, B."""
    text = messages[-1]["content"]
    base = {"5120": -1.0, "7261": -3.0, "9034": -3.5}
    if NEEDLE in text:
        base["7261"] = 5.0
    return [base[c] for c in continuations]


def mc_brain():
    def reply(messages):
        text = messages[-1]["content"]
        assert "5120" not in text  # the fold never shows the options
        return "The vault code is 7261." if NEEDLE in text else "nothing relevant"
    return reply


def test_the_likelihood_probe_is_calibrated_and_stops_once_the_notes_hold_the_answer(store):
    model = ScriptedModel([mc_brain()] * 50, scorer=likelihood_scorer)
    config = AcsConfig(chunk_chars=200, notes_chars=600)
    probe = Probe(model, QUESTION, OPTIONS, kind="auto")
    assert probe.kind == "likelihood"
    reader = FoldReader(model, probe, AcsPolicy(0.99, 0.05, 3), SilentDisplay(), MemoryTrace(), config)
    result = reader.run(QUESTION, chunk_store(store, 200))
    first = result.chunks[0]
    assert first["eligible"] is False  # empty notes: the prior alone, calibrated to uniform, cannot stop
    assert first["posterior"]["A"] == pytest.approx(1 / 3, abs=1e-6)
    assert result.answer == "B) 7261" and result.reason == "acs stopped" and result.chunks_read < 6
    assert all(s["probe"] == "likelihood" for s in result.chunks)
    prior_calls = [c for c in model.calls if "continuations" in c and "(no notes yet)" in c["messages"][-1]["content"]]
    assert len(prior_calls) == 1  # the prior is computed once per question


def test_the_letters_probe_is_used_where_the_backend_cannot_score(store):
    model = ScriptedModel([], supports_logprobs=True)
    assert Probe(model, QUESTION, OPTIONS).kind == "letters"
    with pytest.raises(LcreadError, match="--probe likelihood needs a backend that scores"):
        Probe(model, QUESTION, OPTIONS, kind="likelihood")


def test_a_state_from_empty_notes_is_never_eligible(store):
    model = ScriptedModel([draft("7261", 0.9999)] * 5)
    state, replies = Probe(model, QUESTION, []).read("")
    assert not state.eligible and state.answer == "" and model.calls == []  # nothing to read: no call
    state, _ = Probe(model, QUESTION, [("A", "7261"), ("B", "5120")], kind="letters").read("  \n")
    assert not state.eligible and state.posterior == {"A": 0.5, "B": 0.5} and model.calls == []


def test_open_ended_confidence_counts_the_answers_own_tokens():
    from lcread.acs.rules import answer_confidence

    tokens = [("Answer", math.log(0.3)), (":", math.log(0.9)), (" 72", math.log(0.99)), ("61", math.log(0.98))]
    assert answer_confidence(tokens) == pytest.approx(0.98)
    assert answer_confidence(tokens, "mean") == pytest.approx(math.sqrt(0.99 * 0.98))
    assert answer_confidence([("72", math.log(0.5)), ("61", math.log(0.9))]) == pytest.approx(0.5)
    # a restated question is wrapping too: its first token's doubt (restate or give the bare value) is not
    # doubt about the value; spaces and punctuation carry none
    echo = [("The", math.log(0.35)), (" magic", math.log(0.97)), (" number", 0.0), (" for", 0.0),
            (" quiet", 0.0), ("-c", 0.0), ("any", 0.0), ("on", 0.0), (" is", 0.0), (" ", math.log(0.9)),
            ("70", math.log(0.997)), ("28", math.log(0.99)), (".", math.log(0.8))]
    question = "What is the special magic number for quiet-canyon?"
    assert answer_confidence(echo, question=question) == pytest.approx(0.99)
    assert answer_confidence(echo) == pytest.approx(0.97)  # without the question, its words count
    assert answer_confidence([("Paris", math.log(0.6))], question="Paris or Rome?") == pytest.approx(0.6)


def test_notes_keep_lines_about_the_question_and_their_chain_not_look_alikes():
    from lcread.acs.reader import about_the_question

    lines = ["The special magic number for amber-compass-54 is 3220715.",
             "The special magic number for quiet-harbor-42 is 4817263.",
             "Agent Lucan Prideaux carried 4817263 to Tollgate.",
             "The weather was fine."]
    kept, unrelated = about_the_question(lines, "", ["quiet-harbor-42"])
    assert kept == lines[1:3] and unrelated == [lines[0], lines[3]]
    later, _ = about_the_question(["Lucan Prideaux retired in 1999."], "\n".join(kept), ["quiet-harbor-42"])
    assert later == ["Lucan Prideaux retired in 1999."]  # the chain goes on in a later chunk
    assert about_the_question(lines, "", [])[0] == lines  # nothing distinctive asked: everything stays


def test_an_acs_answer_carries_citations_and_the_verified_flag_of_select(write):
    import lcread

    parts = [f"Part {i}: the depot clerk filed the daily sheet and went home. " * 4 + "\n" for i in range(1, 7)]
    parts[3] = "Part 4: The Kestrel Bay granary reported 21,812 bushels of seed wheat.\n"
    parts[5] = "Part 6: The Portwick granary reported 9,400 bushels of seed wheat.\n"
    doc = write("granary.txt", "".join(parts))

    def reply(messages):
        text = messages[-1]["content"]
        if text.startswith("New part"):
            return "The Kestrel Bay granary reported 21,812 bushels of seed wheat." if "Kestrel" in text else "none"
        return draft("21,812") if "Kestrel" in text else draft("not found", 0.99)

    question = "How many bushels of seed wheat did the Kestrel Bay granary report?"
    result = lcread.ask(str(doc), question, mode="acs", model=ScriptedModel([reply] * 100), stop="full",
                        chunk_chars=300)
    assert result.answer == "21,812" and result.verified is True
    assert result.citations[0].line == 4 and "21,812 bushels" in result.citations[0].quote
    wrong = lcread.ask(str(doc), question, mode="acs", stop="full", chunk_chars=300,
                       model=ScriptedModel([lambda m: draft("9,400") if not m[-1]["content"].startswith("New part")
                                            else reply(m)] * 100))
    assert wrong.answer == "9,400" and wrong.verified is False
