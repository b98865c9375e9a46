import re
import json

import pytest

from lcread.errors import Stop, StopReason

from lcread.agent.select import SelectReader
from lcread.config import LoopConfig, ToolConfig
from lcread.display import SilentDisplay
from lcread.documents import DocumentStore
from lcread.models.scripted import ScriptedModel
from lcread.tools import ToolRunner
from lcread.trace import MemoryTrace

QUESTION = "What is the special magic number for quiet-harbor?"
HANDOFF = {"current_step": "searching", "plan": ["read around the hit"], "completion_requirements": ["the number"],
           "findings": [{"fact": "line 150 mentions quiet-harbor", "document": "hay.txt", "lines": "150-150"},
                        {"fact": "lines 30-31 are filler", "document": "hay.txt", "lines": "30-31"}],
           "next_steps": ["read hay.txt 149 151"], "task": "a different task the model made up"}


@pytest.fixture
def store(write):
    lines = [f"filler line {i} about the river and the harbor road" for i in range(1, 301)]
    lines[149] = "The special magic number for quiet-harbor is 4817263."
    return DocumentStore.open([str(write("hay.txt", "\n".join(lines) + "\n"))])


def reader(model, store, config=None, tools=None, trace=None, first_step=False):
    """The loop's mechanics, without lcread's own first step unless asked (it has tests of its own)."""
    config = (config or LoopConfig()).model_copy(update={"first_step": first_step})
    return SelectReader(model, ToolRunner(store, tools), SilentDisplay(), trace or MemoryTrace(), config)


def commands(*outputs, handoff=HANDOFF):
    """A script: each output in turn, but a handoff JSON whenever the loop asks for one."""
    queue = list(outputs)

    def brain(messages):
        if messages[-1]["content"].startswith(("Your context is nearly full", "error: ")):  # a handoff, or its retry
            return handoff if isinstance(handoff, str) else json.dumps(handoff)
        return queue.pop(0)

    return [brain] * (len(outputs) + 10)


def test_grep_then_answer(store):
    model = ScriptedModel(['grep -i "quiet-harbor"', 'answer "4817263"'])
    trace = MemoryTrace()
    result = reader(model, store, trace=trace).run(QUESTION)
    assert (result.answer, result.final, result.reason, result.stats.steps) == ("4817263", True, "answered", 2)
    observation = model.calls[1]["messages"][-1]["content"]
    assert "hay.txt:150:The special magic number for quiet-harbor is 4817263." in observation
    assert [e["command"] for e in trace.of("command")] == ['grep -i "quiet-harbor"']
    assert len(trace.of("call")) == 2 and trace.of("run_end")[0]["answer"] == "4817263"
    assert result.stats.total_tokens == sum(c["prompt_tokens"] + c["completion_tokens"] for c in trace.of("call"))


def test_history_is_append_only_between_compactions(store):
    model = ScriptedModel(["grep harbor", "read hay.txt 148 152", 'answer "4817263"'])
    reader(model, store).run(QUESTION)
    first, second, third = (c["messages"] for c in model.calls)
    assert second[:len(first)] == first and third[:len(second)] == second


def test_format_errors_go_back_to_the_model_then_end_the_run(store):
    model = ScriptedModel(["I think we should look", "cat hay.txt", 'grep "quiet-harbor"', 'answer "4817263"'])
    result = reader(model, store).run(QUESTION)
    assert result.answer == "4817263" and result.final
    assert "unknown command 'I'" in model.calls[1]["messages"][-1]["content"]
    assert "cat would print a whole document" in model.calls[2]["messages"][-1]["content"]

    stubborn = ScriptedModel(["hello"] * 3 + ['answer "best guess"'])
    result = reader(stubborn, store).run(QUESTION)
    assert not result.final and "3 replies in a row were not commands" in result.reason
    assert result.answer is None  # "best guess" is in no shown line


def test_a_repeated_command_is_not_run_again(store):
    model = ScriptedModel(["grep harbor -m 1", "grep harbor -m 1", "grep  harbor  -m 1", "grep harbor -m 1",
                           'answer "none"'])
    trace = MemoryTrace()
    result = reader(model, store, trace=trace).run(QUESTION)
    assert len(trace.of("command")) == 3  # the first run plus two nudges; the fourth ends the run
    nudge = model.calls[2]["messages"][-1]["content"]
    assert "You already ran `grep harbor -m 1` at step 1" in nudge
    assert not result.final and result.reason.startswith("repeat limit")
    assert result.answer is None and result.verified is False


def test_step_limit_gives_the_best_answer_marked_as_such(store):
    model = ScriptedModel(["grep quiet-harbor", "grep river -m 1", 'answer "4817263"'])
    result = reader(model, store, LoopConfig(max_steps=2)).run(QUESTION)
    assert (result.final, result.reason, result.answer) == (False, "step limit (2)", "4817263")
    assert result.stop == StopReason(Stop.STEP_LIMIT, "2") and result.stop.kind.is_limit
    assert result.verified and result.citations[0].line == 150  # a best answer, but grounded
    assert "reached its step limit (2)" in model.calls[-1]["messages"][-1]["content"]


def test_compaction_at_the_threshold_starts_fresh_from_a_handoff(store):
    config = LoopConfig(context_limit=2048, compact_at=1200, command_tokens=64, handoff_tokens=256)
    model = ScriptedModel(commands("read hay.txt 1 40", "read hay.txt 41 80", "read hay.txt 81 120",
                                   "read hay.txt 149 151", 'answer "4817263"'))
    trace = MemoryTrace()
    result = reader(model, store, config, ToolConfig(read_chars=2500), trace).run(QUESTION)
    assert result.answer == "4817263" and result.stats.compactions >= 1
    for call in model.calls:  # no request over the limit, ever
        assert model.count_tokens(call["messages"]) + call["max_tokens"] <= config.context_limit
    compaction = trace.of("compaction")[0]
    assert compaction["before"] >= config.compact_at and compaction["after"] < compaction["before"]
    handoff = compaction["handoff"]
    assert handoff["task"] == QUESTION  # copied by lcread, never the model's version
    assert [f["lines"] for f in handoff["findings"]] == ["30-31"]  # line 150 was never shown: dropped
    assert trace.of("findings_dropped")[0]["findings"][0]["lines"] == "150-150"
    assert "read hay.txt 1 40" in handoff["commands_run"]
    resumed = next(c["messages"] for c in model.calls if "compacted into this handoff" in c["messages"][-1]["content"]
                   or any("compacted into this handoff" in m["content"] for m in c["messages"][1:2]))
    assert len(resumed) == 2 and f"Task: {QUESTION}" in resumed[1]["content"]
    assert result.stats.peak_context <= config.context_limit


def test_an_invalid_handoff_is_retried_then_replaced(store):
    config = LoopConfig(context_limit=2048, compact_at=1100, command_tokens=64, handoff_tokens=256)
    model = ScriptedModel(commands("read hay.txt 1 40", "read hay.txt 41 80", "read hay.txt 121 160",
                                   'answer "4817263"', handoff="not json at all"))
    trace = MemoryTrace()
    result = reader(model, store, config, ToolConfig(read_chars=2500), trace).run(QUESTION)
    assert result.answer == "4817263"
    asks = [c for c in model.calls if any(m["content"].startswith("Your context is nearly full")
                                          for m in c["messages"])]
    assert len(asks) == 2 * len(trace.of("compaction")) and "error: the reply holds no JSON object" in \
        asks[1]["messages"][-1]["content"]  # each handoff asked twice, then written by lcread
    fallback = trace.of("handoff_fallback")
    assert len(fallback) == len(asks) // 2 and trace.of("compaction")[0]["handoff"]["task"] == QUESTION


def test_budget_shrinks_to_a_small_model_window(store):
    model = ScriptedModel(['answer "x"'], context_window=4096)
    agent = reader(model, store)
    assert (agent.config.context_limit, agent.config.compact_at) == (4096, 3072)


def test_token_limit_ends_without_another_call(store):
    model = ScriptedModel(["grep harbor", "grep river", "grep road"])
    result = reader(model, store, LoopConfig(max_total_tokens=1000)).run(QUESTION)
    assert not result.final and result.reason.startswith("token limit")
    assert result.answer is None


def test_an_answer_before_reading_anything_is_sent_back(store):
    model = ScriptedModel(['answer "42"', 'grep -i "quiet-harbor"', 'answer "4817263"'])
    trace = MemoryTrace()
    result = reader(model, store, trace=trace).run(QUESTION)
    assert result.answer == "4817263" and result.stats.steps == 3
    assert "You have not read anything yet" in model.calls[1]["messages"][-1]["content"]
    assert trace.of("answer_refused")[0]["answer"] == "42"
    insisting = reader(ScriptedModel(['answer "42"'] * 4), store).run(QUESTION)
    assert not insisting.final and insisting.answer is None
    assert insisting.reason == "grounding limit (3 answers before reading anything)"


def test_a_best_answer_that_repeats_the_limit_is_no_answer(store):
    model = ScriptedModel(["grep river -m 1", 'answer "The run has reached its step limit (1)."'])
    result = reader(model, store, LoopConfig(max_steps=1)).run(QUESTION)
    assert not result.final and result.answer is None


def test_an_answer_naming_a_constant_is_answered_with_its_value_and_both_lines_cited(write):
    write("lib/sessions.py", "\n".join(f"def helper_{i}(x):\n    return x + {i}\n" for i in range(40)) +
          "\nclass Session:\n    def __init__(self):\n        #: Maximum number of redirects allowed.\n"
          "        self.max_redirects = DEFAULT_REDIRECT_LIMIT\n")
    write("lib/models.py", "\n".join(f"OTHER_{i} = {i}" for i in range(50)) + "\nLIMIT_ALIAS = 30\n"
          "DEFAULT_REDIRECT_LIMIT = LIMIT_ALIAS\n")
    store = DocumentStore.open([str(write("lib/README", "a library\n").parent)])
    model = ScriptedModel(['grep -F max_redirects', 'answer "DEFAULT_REDIRECT_LIMIT"'])
    trace = MemoryTrace()
    result = reader(model, store, trace=trace).run("What is the default value of max_redirects?")
    assert (result.answer, result.verified) == ("30", True)
    cited = {(c.doc, c.line) for c in result.citations}
    assert ("lib/models.py", 51) in cited and any(doc == "lib/sessions.py" for doc, _ in cited)
    assert [e["command"] for e in trace.of("lookup")] == ["definition DEFAULT_REDIRECT_LIMIT", "definition LIMIT_ALIAS"]


def test_an_answer_naming_a_constant_stays_a_name_when_the_question_asks_for_one(write):
    write("lib/sessions.py", "class Session:\n    def __init__(self):\n        self.max_redirects = DEFAULT_REDIRECT_LIMIT\n")
    write("lib/models.py", "DEFAULT_REDIRECT_LIMIT = 30\n")
    store = DocumentStore.open([str(write("lib/README", "a library\n").parent)])
    model = ScriptedModel(['grep -F max_redirects', 'answer "DEFAULT_REDIRECT_LIMIT"'])
    trace = MemoryTrace()
    result = reader(model, store, trace=trace).run("Which constant sets the default max_redirects?")
    assert (result.answer, result.verified) == ("DEFAULT_REDIRECT_LIMIT", True) and not trace.of("lookup")


def test_after_a_repeated_command_the_grammar_leaves_it_out_once(store):
    model = ScriptedModel(["grep harbor -m 1", "grep harbor -m 1", "read hay.txt 149 151", 'answer "4817263"'])
    model.supports_grammar = True
    result = reader(model, store).run(QUESTION)
    roots = [next(line for line in c["grammar"].splitlines() if line.startswith("root")) for c in model.calls]
    assert ["cmd-grep" in r for r in roots] == [True, True, False, True]
    assert result.answer == "4817263" and result.verified


PROSE = """miles of indifferent road to pay a morning visit. It was not long before
a good understanding took place between this lady and herself. Mrs.
Rushworth acknowledged herself very desirous that her son should marry,
and declared that of all the young ladies she had ever seen, Miss
Bertram seemed, by her amiable qualities and accomplishments, the best
VAR QUIETORCHARD = 6551598
adapted to make him happy. Mrs. Norris accepted the compliment,
and admired the nice discernment of character which could so well
distinguish merit. Maria was indeed the pride and delight of them
all--perfectly faultless--an angel; and, of course, so surrounded by
admirers, must be difficult in her choice: but yet, as far as Mrs."""


@pytest.mark.parametrize("question", [
    "Which variables are assigned the value 6551598, directly or through other variables?",
    "List all the variables that end up holding 6551598, directly or through a chain of assignments."])
def test_a_chain_of_assignments_is_verified_whatever_the_phrasing_and_var_is_no_item(write, question):
    lines = [f"Prose line {i} about the weather and the roads." for i in range(600)]
    lines[100:100] = PROSE.splitlines()
    lines[300], lines[450] = "VAR BITTERLANTERN = VAR QUIETORCHARD", "VAR GENTLEFALCON = VAR BITTERLANTERN"
    store = DocumentStore.open([str(write("vt.txt", "\n".join(lines) + "\n"))])
    full = "QUIETORCHARD, BITTERLANTERN, GENTLEFALCON"
    model = ScriptedModel(['answer "QUIETORCHARD"', 'answer "QUIETORCHARD, BITTERLANTERN"', f'answer "{full}"',
                           f'answer "{full}"', f'answer "{full}"'] + ['answer "none"'] * 4)
    result = reader(model, store, first_step=True).run(question)
    assert (result.answer, result.verified) == (full, True)
