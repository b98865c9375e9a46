import json

import pytest

from lcread.agent.sac import SacReader
from lcread.config import LoopConfig
from lcread.display import SilentDisplay
from lcread.documents import DocumentStore
from lcread.models.scripted import ScriptedModel
from lcread.tools import ToolRunner
from lcread.trace import MemoryTrace

QUESTION = "What is the special magic number for quiet-harbor?"


def state(findings=(), plan=("search", "answer"), current="searching", task=None):
    data = {"current_step": current, "plan": list(plan), "completion_requirements": ["the number"],
            "findings": [{"fact": f, "document": "hay.txt", "lines": "150-150"} for f in findings],
            "next_steps": ["read around the hit"]}
    if task:
        data["task"] = task
    return json.dumps(data)


@pytest.fixture
def store(write):
    lines = [f"filler line {i} about the river" for i in range(1, 301)]
    lines[149] = "The special magic number for quiet-harbor is 4817263."
    return DocumentStore.open([str(write("hay.txt", "\n".join(lines) + "\n"))])


def run(store, outputs, config=None, first_step=False):
    """The loop's mechanics, without lcread's own first step unless asked (it has tests of its own)."""
    model = ScriptedModel(outputs)
    trace = MemoryTrace()
    config = (config or LoopConfig()).model_copy(update={"first_step": first_step})
    result = SacReader(model, ToolRunner(store), SilentDisplay(), trace, config).run(QUESTION)
    return result, model, trace


def test_each_step_is_a_fresh_context_with_task_state_and_last_observation(store):
    result, model, trace = run(store, [
        'grep -i "quiet-harbor"\n' + state(),
        "read hay.txt 149 151\n" + state(["quiet-harbor's number is 4817263"], plan=["answer"]),
        'answer "4817263"',
    ])
    assert (result.answer, result.final, result.stats.steps) == ("4817263", True, 3)
    for call in model.calls:
        assert len(call["messages"]) == 2  # system + one user message: no history
        assert call["messages"][1]["content"].startswith(f"Task: {QUESTION}")
    second, third = model.calls[1]["messages"][1]["content"], model.calls[2]["messages"][1]["content"]
    assert "hay.txt:150:The special magic number for quiet-harbor is 4817263." in second
    assert "Step 2. Output of your last command `read hay.txt 149 151`" in third
    assert "hay.txt:150:The special" not in third  # the older observation is gone; lcread's pointer to it stays:
    assert "hay.txt:150: The special magic number for quiet-harbor is 4817263." in third.split("were seen:")[1]
    assert 'step 1: `grep -i "quiet-harbor"` showed 1 lines (hay.txt:150)' in third
    assert "- quiet-harbor's number is 4817263 [hay.txt lines 150-150]" in third  # carried by the state
    events = trace.of("command")
    assert events[1]["findings_added"] == ["quiet-harbor's number is 4817263"]
    assert events[1]["plan_done"] == ["search"]


def test_the_task_cannot_be_rewritten_by_the_model(store):
    result, model, trace = run(store, [
        "grep harbor -m 1\n" + state(task="What colour is the sky?"),
        'answer "4817263"',
    ])
    assert trace.of("command")[0]["state"]["task"] == QUESTION
    assert f"Task: {QUESTION}" in model.calls[1]["messages"][1]["content"]
    assert "sky" not in model.calls[1]["messages"][1]["content"]


def test_a_malformed_state_keeps_the_old_state_and_the_model_is_told(store):
    result, model, trace = run(store, [
        'grep -i "quiet-harbor"\n' + state(),
        'read hay.txt 149 151\n' + state(["the number is on line 150"]),
        "read hay.txt 150 151\n{not json",
        'answer "4817263"',
    ])
    assert result.answer == "4817263" and len(model.calls) == 4  # the command ran: no call spent on a retry
    told = model.calls[3]["messages"][1]["content"]
    assert "Your state was not usable (state: the reply holds no JSON object" in told
    assert "the number is on line 150" in told  # the previous state, kept
    kept = trace.of("state_kept")
    assert len(kept) == 1 and kept[0]["step"] == 3
    assert trace.of("command")[2]["state"]["findings"][0]["fact"] == "the number is on line 150"


def test_a_finding_whose_lines_no_tool_showed_is_dropped(store):
    result, model, trace = run(store, [
        'grep -i "quiet-harbor"\n' + state(["the number is 999 on line 150"]),  # written before any output
        'answer "4817263"',
    ])
    dropped = trace.of("findings_dropped")
    assert dropped and dropped[0]["findings"] == ["the number is 999 on line 150"]
    assert "999" not in model.calls[1]["messages"][1]["content"]


def test_a_finding_whose_words_are_not_in_the_lines_it_points_at_is_dropped(store):
    result, model, trace = run(store, [
        'grep -i "quiet-harbor"\n' + state(),
        'read hay.txt 149 151\n' + state(["Maria Okafor signed the lease for unit 4B",  # the prompt's example
                                            "quiet-harbor's number is 4817263"]),
        'answer "4817263"',
    ])
    dropped = trace.of("findings_dropped")
    assert dropped and dropped[0]["findings"] == ["Maria Okafor signed the lease for unit 4B"]
    assert "Maria" not in model.calls[2]["messages"][1]["content"]
    assert "4817263" in model.calls[2]["messages"][1]["content"]


def test_a_reply_without_a_command_is_a_format_error(store):
    result, model, trace = run(store, ["hello\n" + state(), "hello again\n" + state(),
                                       "grep quiet\n" + state(), 'answer "4817263"'])
    assert result.answer == "4817263" and len(trace.of("format_error")) == 2  # told at the next fresh step
    assert all("your reply was not usable" in model.calls[n]["messages"][1]["content"] for n in (1, 2))
    assert "not usable" not in model.calls[3]["messages"][1]["content"]


def test_context_stays_bounded_by_construction(store):
    outputs = [f"grep -m 2 'line {i}'\n" + state() for i in range(1, 30)]
    result, model, trace = run(store, outputs, LoopConfig(max_steps=25))
    assert not result.final and result.reason == "step limit (25)"
    sizes = [e["context"] for e in trace.of("call")]
    assert max(sizes) < 1200 and max(sizes) - min(sizes) < 400  # no growth with the number of steps


def test_a_done_mark_at_a_step_that_showed_nothing_is_put_back_and_said(store):
    result, model, trace = run(store, [
        'grep -i "no such words"\n' + state(plan=["answer"]),  # marks "search" done; the grep finds nothing
        'grep -i "quiet-harbor"\n' + state(plan=["answer"]),
        'answer "4817263"',
    ])
    assert result.answer == "4817263"
    second = model.calls[1]["messages"][1]["content"]
    first_plan = "read around the passage that answers the question"  # the state lcread starts sac with
    assert f"lcread kept in your state what you marked done: {first_plan}" in second
    assert f"- {first_plan}" in second.split("Plan:")[1].split("Completion")[0]
    assert 'step 1: `grep -i "no such words"` showed nothing' in second
    assert trace.of("done_marks_dropped")[0]["items"][0] == first_plan
    third = model.calls[2]["messages"][1]["content"]
    assert "lcread kept" not in third  # this grep showed lines: its done mark stands


def test_sac_cuts_its_outputs_smaller_unless_read_chars_is_given(write):
    import lcread

    doc = write("big.txt", "".join(f"line {i} of the long report about harbour fees and tolls\n" for i in range(400)))
    sizes = {}
    for given in ({}, {"read_chars": 7000}):
        model = ScriptedModel(["read big.txt 1 400\n{}"] + ['answer "none"'] * 8)
        lcread.ask(str(doc), "What is the harbour fee?", model=model, mode="sac", first_step=False, **given)
        last = model.calls[1]["messages"][-1]["content"]
        sizes[bool(given)] = len(last[last.index("line 1 of"):])
    assert sizes[False] < 4300 < 6500 < sizes[True]


@pytest.mark.local
@pytest.mark.parametrize("can_answer", [True, False])
def test_sac_s_grammar_ends_the_reply_at_an_answer_and_asks_a_state_after_any_other_command(can_answer):
    from llama_cpp import LlamaGrammar

    from lcread.tools import grammar

    commands = grammar.command_grammar(["a.txt"], can_answer=can_answer)
    grammar = grammar.state_grammar(["a.txt"], 4, 4, after_command=True, commands=commands)
    root = next(line for line in grammar.splitlines() if line.startswith("root"))
    acting = next(line for line in grammar.splitlines() if line.startswith("cmd-act"))
    assert ("cmd-answer |" in root) is can_answer and 'cmd-act "\\n" st-root' in root and "cmd-answer" not in acting
    LlamaGrammar.from_string(grammar, verbose=False)  # llama.cpp reads it


def test_the_same_search_again_comes_with_the_lines_that_answer_best(store):
    result, model, trace = run(store, [
        f"search {QUESTION}\n" + state(),
        f"search '{QUESTION}': the 5 best passages of 1 lines matched\n" + state(),  # its output's header, copied
        'answer "4817263"',
    ], first_step=True)
    told = model.calls[1]["messages"][1]["content"]
    assert f"You ran `search {QUESTION}` before" in told
    assert "hay.txt:150: The special magic number for quiet-harbor is 4817263." in told.split("before")[-1]
    assert result.answer == "4817263" and result.verified


def test_after_a_repeated_command_the_next_step_cannot_run_it_again(store):
    model = ScriptedModel([f"search {QUESTION}\n" + state(), "read hay.txt 149 151\n" + state(),
                           f"search {QUESTION}\n" + state(), 'answer "4817263"'])
    model.supports_grammar = True
    result = SacReader(model, ToolRunner(store), SilentDisplay(), MemoryTrace(), LoopConfig()).run(QUESTION)
    roots = [next(line for line in c["grammar"].splitlines() if line.startswith("cmd-act")) for c in model.calls]
    # lcread's first step was this search: the model's copy is a repeat, so the next step offers no search;
    # after another command, search is back
    assert "cmd-search" in roots[0] and "cmd-search" not in roots[1] and "cmd-grep" in roots[1]
    assert "cmd-search" in roots[2] and "cmd-search" not in roots[3]
    assert result.answer == "4817263" and result.verified and result.reason == "answered"


@pytest.mark.parametrize("copy", [f"search '{QUESTION}'", f"search {QUESTION}:", f'search "{QUESTION[:-1]}" ?'])
def test_lcread_s_search_copied_with_quotes_or_a_colon_is_the_same_search_again(store, copy):
    model = ScriptedModel([f"{copy}\n" + state(), 'answer "4817263"'])
    model.supports_grammar = True
    trace = MemoryTrace()
    result = SacReader(model, ToolRunner(store), SilentDisplay(), trace, LoopConfig()).run(QUESTION)
    assert "You ran `" in model.calls[1]["messages"][1]["content"]  # a repeat, shown as such
    assert "cmd-search" not in next(line for line in model.calls[1]["grammar"].splitlines()
                                    if line.startswith("cmd-act"))
    assert result.answer == "4817263" and result.verified


def test_answers_between_repeated_searches_break_the_row(store):
    again = f"search {QUESTION}\n" + state()
    model = ScriptedModel([again, 'answer "not sure"', again, 'answer "maybe later"', again, 'answer "4817263"'])
    result = SacReader(model, ToolRunner(store), SilentDisplay(), MemoryTrace(), LoopConfig()).run(QUESTION)
    # three copies of lcread's first search, each followed by an answer: never two repeats in a row
    assert result.reason == "answered" and result.answer == "4817263" and result.verified
