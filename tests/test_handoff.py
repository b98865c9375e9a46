import pytest

from lcread.agent.handoff import Finding, fallback_handoff, parse_handoff, prune_to_fit


def test_parse_tolerates_prose_and_fences_and_keeps_the_task_verbatim():
    text = 'Here you go:\n```json\n{"current_step": "reading", "plan": ["a"], "completion_requirements": [],' \
           ' "findings": [{"fact": "refund cap is 40 euros", "document": "c.txt", "lines": "120-121"}],' \
           ' "next_steps": ["answer"], "task": "rewritten"}\n```'
    handoff = parse_handoff(text, "Which clause caps the refund?", ["grep refund"])
    assert handoff.task == "Which clause caps the refund?"
    assert handoff.findings == [Finding(fact="refund cap is 40 euros", document="c.txt", lines="120-121")]
    rendered = handoff.render()
    assert "- refund cap is 40 euros [c.txt lines 120-121]" in rendered
    assert "Commands already run:\n- grep refund" in rendered


@pytest.mark.parametrize("text, message", [
    ("no braces", "no JSON object"),
    ("{not json}", "does not parse"),
    ('{"plan": []}', "current_step"),
    ('{"current_step": "x", "findings": [{"document": "d"}]}', "findings.0.fact"),
])
def test_parse_errors_name_the_problem(text, message):
    with pytest.raises(ValueError, match=message):
        parse_handoff(text, "task", [])


def test_fallback_keeps_task_findings_and_commands():
    f = [Finding(fact="x", document="d", lines="1-2")]
    handoff = fallback_handoff("the task", ["grep a"], f)
    assert (handoff.task, handoff.findings, handoff.commands_run) == ("the task", f, ["grep a"])


def test_prune_drops_oldest_exchanges_but_keeps_the_head_and_the_last_message():
    msgs = [{"role": "system", "content": "s"}, {"role": "user", "content": "q"}]
    for i in range(5):
        msgs += [{"role": "assistant", "content": f"c{i}"}, {"role": "user", "content": f"o{i}"}]
    msgs.append({"role": "user", "content": "last"})
    pruned = prune_to_fit(msgs, len, 6)
    assert [m["content"] for m in pruned] == ["s", "q", "c4", "o4", "last"]
    assert prune_to_fit(msgs, len, 100) == msgs
