"""The handoff: what a fresh conversation needs to go on (seed 003, appendix A), and pure helpers.

The task is copied by lcread, never written by the model; everything else the model writes and
pydantic validates.
"""

from __future__ import annotations

import json
import re
from typing import Callable

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from lcread.language import load as load_language

Messages = list[dict[str, str]]


class Finding(BaseModel):
    model_config = ConfigDict(extra="ignore")
    fact: str = Field(min_length=1, max_length=600)
    """A fact that bears on the question, with exact names and numbers."""
    document: str = Field("", max_length=200)
    """The document it came from."""
    lines: str = Field("", max_length=40)
    """Line range in that document, START-END."""


LIST_ITEMS = 6
"""Most items in a handoff's lists (plan, requirements, next steps); the grammar allows as many."""
FINDINGS = 8
"""Most findings a handoff carries; the grammar allows as many."""
COMMANDS_KEPT = 15
"""Commands already run that a handoff lists (the latest)."""
PROGRESS_KEPT, POINTERS_KEPT = 8, 6
"""lcread's record of what the latest commands showed, and the latest places that held the question's words."""


class HandoffDraft(BaseModel):
    """The part of a handoff the model writes."""

    model_config = ConfigDict(extra="ignore")
    current_step: str = Field(min_length=1, max_length=400)
    plan: list[str] = Field(default_factory=list, max_length=LIST_ITEMS)
    completion_requirements: list[str] = Field(default_factory=list, max_length=LIST_ITEMS)
    findings: list[Finding] = Field(default_factory=list, max_length=FINDINGS)
    next_steps: list[str] = Field(default_factory=list, max_length=LIST_ITEMS)


class Handoff(HandoffDraft):
    task: str
    """The question, verbatim, with any options and constraints."""
    commands_run: list[str] = Field(default_factory=list)
    """Commands already run (written by lcread, so the next context does not repeat them)."""
    progress: list[str] = Field(default_factory=list)
    """What each command searched or read and what it showed (written by lcread, never by the model)."""
    pointers: list[str] = Field(default_factory=list)
    """Where outputs held the question's words, as DOC:LINE (chars A-B): one command brings each back."""

    def render(self) -> str:
        def bullets(items: list[str]) -> str:
            return "\n".join(f"- {i}" for i in items) or "- (none)"

        findings = "\n".join(
            f"- {f.fact}" + (f" [{f.document}" + (f" lines {f.lines}" if f.lines else "") + "]" if f.document else "")
            for f in self.findings) or "- (none yet)"
        return (f"Task: {self.task}\nCurrent step: {self.current_step}\nPlan:\n{bullets(self.plan)}\n"
                f"Completion requirements:\n{bullets(self.completion_requirements)}\nFindings:\n{findings}\n"
                f"Next steps:\n{bullets(self.next_steps)}\nCommands already run:\n{bullets(self.commands_run[-COMMANDS_KEPT:])}"
                + (f"\nWhat they showed (lcread's record):\n{bullets(self.progress[-PROGRESS_KEPT:])}" if self.progress else "")
                + (f"\nWhere the question's words were seen:\n{bullets(self.pointers[-POINTERS_KEPT:])}"
                   if self.pointers else ""))


def split_reply(text: str) -> tuple[str, str]:
    """A sac reply: the command on its first line, the JSON state after it (fences tolerated)."""
    lines = [ln for ln in text.strip().splitlines() if not ln.strip().startswith("```")]
    if not lines:
        return "", ""
    return lines[0].strip(), "\n".join(lines[1:])


def parse_draft(text: str) -> HandoffDraft:
    """Validate the model's JSON (fences and prose around it are tolerated); raise ValueError if bad."""
    match = re.search(r"\{.*\}", text, re.S)
    if not match:
        raise ValueError("the reply holds no JSON object")
    try:
        data = json.loads(match.group(0))
    except json.JSONDecodeError as e:
        raise ValueError(f"the JSON does not parse: {e}") from None
    if not isinstance(data, dict):
        raise ValueError("the reply must be one JSON object")
    try:
        draft = HandoffDraft.model_validate(data)
    except ValidationError as e:
        problems = "; ".join(f"{'.'.join(map(str, err['loc']))}: {err['msg']}" for err in e.errors()[:5])
        raise ValueError(problems) from None
    return draft


def parse_handoff(text: str, task: str, commands_run: list[str]) -> Handoff:
    """The model's handoff with the task copied in by lcread; raise ValueError if the JSON is bad."""
    return Handoff(task=task, commands_run=commands_run, **parse_draft(text).model_dump())


def fallback_handoff(task: str, commands_run: list[str], findings: list[Finding]) -> Handoff:
    """A handoff built by lcread alone, for when the model cannot write a valid one."""
    return Handoff(task=task, current_step="searching the documents for the answer",
                   plan=["search for the question's key terms not yet tried", "read around the best hit", "answer"],
                   completion_requirements=["a passage that states the answer"], findings=findings,
                   next_steps=["grep for a key term of the question that is not in the commands already run"],
                   commands_run=commands_run)


def keep_shown(findings: list[Finding], shown: dict[tuple[str, int], str]) -> tuple[list[Finding], list[Finding]]:
    """Findings whose pointer (document, lines) covers lines a tool showed that hold a word or number of the
    fact (a small model copies its prompt's example as a fact and points it at whatever it read), and the ones
    dropped."""
    kept, dropped = [], []
    for f in findings:
        m = re.fullmatch(r"\s*(\d+)\s*(?:-\s*(\d+))?\s*", f.lines or "")
        lo, hi = (int(m.group(1)), int(m.group(2) or m.group(1))) if m else (0, -1)
        covered = " ".join(text for (doc, line), text in shown.items()
                           if doc == f.document and lo <= line <= hi).lower() if hi - lo < 10_000 else ""
        covered += f" {lo} {hi}" if covered else ""  # "the number is on line 150" points at line 150
        words = [w for w in re.findall(r"[a-z]{4,}|\d+", f.fact.lower()) if w not in load_language().stopwords]
        said = set(re.findall(r"[a-z]+|\d+", covered))
        ok = bool(covered) and (not words or any(w in said for w in words))
        (kept if ok else dropped).append(f)
    return kept, dropped


def prune_to_fit(messages: Messages, count: Callable[[Messages], int], budget: int, keep_head: int = 2) -> Messages:
    """Drop the oldest exchanges after the first `keep_head` messages until the history fits the budget."""
    out = list(messages)
    while count(out) > budget and len(out) > keep_head + 1:
        del out[keep_head:keep_head + 2]
    return out
