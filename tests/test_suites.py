import random

import pytest

from lcread.bench.corpus import synthetic_text
from lcread.bench.suites import NIAH_KINDS, Task, mc, niah, qa, score, vt

HAY = synthetic_text(120_000, seed=1)


def _text(task: Task) -> str:
    return open(task.path, encoding="utf-8").read()


@pytest.mark.parametrize("kind", NIAH_KINDS)
def test_niah_is_deterministic_and_every_evidence_span_holds_a_needle(tmp_path, kind):
    a = niah(kind, HAY, 30_000, 0.4, random.Random(5), tmp_path / "a", "t")
    b = niah(kind, HAY, 30_000, 0.4, random.Random(5), tmp_path / "b", "t")
    assert (a.question, a.answers, a.evidence) == (b.question, b.answers, b.evidence) and _text(a) == _text(b)
    text = _text(a)
    assert len(text) == a.chars and 30_000 <= a.chars < 30_600
    spans = [text[s:e] for s, e in a.evidence]
    assert all(s.startswith("The special magic number for ") for s in spans)
    assert all(any(ans in s for s in spans) for ans in a.answers)  # every expected value is evidenced
    needles = text.count("The special magic number for ")
    assert needles == {"single": 1, "multikey": 4, "multivalue": 4, "multiquery": 2}[kind]
    assert len(a.evidence) == {"single": 1, "multikey": 1, "multivalue": 4, "multiquery": 2}[kind]


def test_mc_options_are_the_document_s_own_values(tmp_path):
    task = mc(HAY, 30_000, 0.5, random.Random(2), tmp_path, "m")
    text = _text(task)
    assert len(task.options) == 4 and task.answers[0] in "ABCD"
    values = [o.split(") ")[1] for o in task.options]
    assert all(f" is {v}." in text for v in values)  # every option is a real value in the text
    right = values["ABCD".index(task.answers[0])]
    assert right in text[task.evidence[0][0]:task.evidence[0][1]]
    assert score(task, f"{task.answers[0]}) {right}") and not score(task, "Z")


def test_vt_chain_is_complete_and_in_order(tmp_path):
    task = vt(HAY, 30_000, 4, random.Random(3), tmp_path, "v")
    text = _text(task)
    spans = [text[s:e] for s, e in task.evidence]
    assert len(spans) == 4 and all(s.startswith("VAR ") for s in spans)
    value = task.question.split("value ")[1].split(",")[0]
    assert sum(s.endswith(f"= {value}") for s in spans) == 1
    assert all(name in " ".join(spans) for name in task.answers)


def test_qa_holds_the_gold_paragraphs_among_distractors(tmp_path):
    data = [
        {"_id": "1", "answer": "Paris", "question": "Where does Ann live?", "type": "bridge", "level": "easy",
         "supporting_facts": "[['Ann', 0], ['City', 0]]",
         "context": "[['Ann', ['Ann lives in the City.']], ['City', ['The City is Paris.']], ['Noise', ['x.']]]"},
        {"_id": "2", "answer": "yes", "question": "Is Bob here?", "type": "bridge", "level": "easy",
         "supporting_facts": "[['B', 0]]",
         "context": "[['B', ['Bob is here.']], ['Filler', ['Some filler text that says nothing at all.']]]"},
    ]
    task = qa([data[0]] + [data[1]] * 5, 2_000, random.Random(1), tmp_path, "q")
    text = _text(task)
    gold = [text[s:e] for s, e in task.evidence]
    assert sorted(g.split("\n")[0] for g in gold) == ["Ann", "City"] and "The City is Paris." in "".join(gold)
    assert len(text) >= 2_000 and task.answers == ["Paris"]


def test_score_needs_every_part():
    task = Task("t", "niah-multivalue", "q", ["1234567", "7654321"], "p", 0)
    assert score(task, "They are 1234567 and 7654321.")
    assert not score(task, "1234567") and not score(task, None)


def test_a_size_written_as_one_word_holds_both_its_numbers():
    task = Task("t", "real-gnuplot", "q", ["640", "480"], "p", 0)
    assert score(task, "640x480") and score(task, "640 × 480 pixels") and score(task, "640 x 480")
    assert not score(task, "6400x480") and not score(task, "640")


def test_every_generated_suite_is_asked_in_three_phrasings_sharing_a_group(tmp_path):
    from lcread.bench.runner import make_tasks

    tasks = make_tasks(["niah", "count", "vt", "where", "mc"], 4, [6000], 5, tmp_path, phrasings=3)
    groups: dict[str, list] = {}
    for t in tasks:
        groups.setdefault(t.group, []).append(t)
    assert len(groups) == 20 and all(len(g) == 3 for g in groups.values())
    for g in groups.values():
        assert len({t.question for t in g}) == 3 and len({(t.path, tuple(t.answers)) for t in g}) == 1


def test_where_s_answer_is_the_heading_its_line_sits_under_however_the_novel_writes_headings(tmp_path):
    from lcread.bench.suites import where

    prose = "".join(f"A long line of the novel number {i}, with enough words to be quoted whole here.\n"
                    for i in range(40))
    text = "CHAPTER 30\n\n" + prose + "\nChapter 7\n\n" + prose.replace("novel", "story")
    task = where(text, len(text), 0.9, random.Random(3), tmp_path, "where-x")
    assert task.answers == ["chapter 7"] and "story" in task.question
