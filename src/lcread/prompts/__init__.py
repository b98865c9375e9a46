"""Prompt templates as text files, rendered with named placeholders that fail on a missing key."""

from __future__ import annotations

import functools
import re
import string
from importlib import resources


@functools.lru_cache(maxsize=None)
def template(name: str) -> str:
    return resources.files(__package__).joinpath(name).read_text(encoding="utf-8")


def render(name: str, **values: object) -> str:
    """Fill `{placeholders}` in prompts/<name>.txt; a missing value raises KeyError."""
    text = template(f"{name}.txt")
    needed = {field for _, field, _, _ in string.Formatter().parse(text) if field}
    missing = needed - values.keys()
    if missing:
        raise KeyError(f"prompt {name!r} needs {', '.join(sorted(missing))}")
    return text.format(**values).strip()


def _literal(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", " ") + '"'


_KIND_ANSWERS = {
    "number": '[^"\\n0-9]{0,40} [0-9] [^"\\n]{0,80}',
    "date": '[^"\\n0-9]{0,40} [0-9] [^"\\n]{0,80}',
    "yesno": '("yes" | "no") (", " [^"\\n]{1,120})?',
}
"""The answers a kind allows when no grounded values are known: a number or date holds a digit; a yes-or-no
question is answered yes or no (a reason may follow)."""


def command_grammar(doc_names: list[str], answers: list[str] | None = None, kind: str | None = None,
                    count: int | None = None, keep: list[str] | None = None,
                    slots: list[list[str]] | None = None, can_answer: bool = True) -> str:
    """The GBNF grammar of one command, with the document names as the only valid paths. With `answers`,
    an answer can only be one of them (or several, comma-separated, when `kind` starts with many-); with
    only a kind (number, date), an answer must at least hold a digit. `count` fixes how many values a
    several-value answer holds (one per part asked for); `keep` are items a several-value answer must
    start with (the grounded part of an answer sent back), so that an answer can only grow; `slots` give
    the values each part of a several-part answer may take, in order. Without `can_answer` (nothing read
    yet), the grammar has no answer command at all."""
    # Past a few hundred names, alternatives make the grammar slow: any path, which the runner checks.
    docs = " | ".join(_literal(n) for n in doc_names) if len(doc_names) <= 300 else '[^ "\\n]{1,200}'
    grammar = template("commands.gbnf").replace("@DOCS@", docs)
    if not can_answer:
        grammar = grammar.replace(" | cmd-answer", "", 1)
    base = (kind or "").removeprefix("many-")
    if slots and all(slots):  # one value per part, in the order the parts were asked
        body = ' ", " '.join("(" + " | ".join(_literal(a) for a in slot) + ")" for slot in slots)
    elif answers:
        one = "(" + " | ".join(_literal(a) for a in answers) + ")"
        more = f"{{{count - 1}}}" if count and count > 1 else "{0,7}"
        body = f'{one} (", " {one}){more}' if (kind or "").startswith("many-") else one
        rest = [a for a in answers if a not in (keep or [])]
        if keep and rest and (kind or "").startswith("many-") and not count:
            other = "(" + " | ".join(_literal(a) for a in rest) + ")"
            body = _literal(", ".join(keep) + ", ") + f' {other} (", " {other}){{0,6}}'
    elif base in _KIND_ANSWERS:
        body = "(" + _KIND_ANSWERS[base] + ")"
    else:
        return grammar
    return re.sub(r'^cmd-answer\s*::=.*$', lambda _: f'cmd-answer  ::= "answer \\"" {body} "\\""', grammar,
                  count=1, flags=re.M)


RULES = {"search": "cmd-search", "grep": "cmd-grep", "read": "cmd-read", "definition": "cmd-def",
         "head": "cmd-head", "tail": "cmd-tail", "wc": "cmd-wc", "ls": "cmd-ls"}
"""Each command's rule in commands.gbnf."""


def without_command(grammar: str, name: str) -> str:
    """The same grammar without the command `name` (after a model ran it again and again: the next step must be
    something else)."""
    rule = RULES.get(name)
    match = re.search(r"^root\s*::=(.*)$", grammar, re.M)
    if rule is None or match is None:
        return grammar
    kept = [a.strip() for a in match.group(1).split("|") if a.strip() != rule]
    return grammar[:match.start()] + "root        ::= " + " | ".join(kept) + grammar[match.end():]


def answer_only_grammar(grammar: str) -> str:
    """The same grammar with the answer as the only command (for the best answer after a limit)."""
    return re.sub(r"^root\s*::=.*$", "root        ::= cmd-answer", grammar, count=1, flags=re.M)


def state_grammar(doc_names: list[str], items: int, findings: int, after_command: bool,
                  commands: str | None = None) -> str:
    """The GBNF grammar of a handoff / sac state (JSON); with after_command, a command line comes first
    (`commands`, when given, is the command grammar to use)."""
    state = template("state.gbnf").replace("@MORE@", str(items - 1)).replace("@MOREFINDINGS@", str(findings - 1))
    commands = commands or command_grammar(doc_names)
    root = re.compile(r"^root\b", re.M)
    if after_command:  # an answer ends the reply (it needs no new state); any other command is followed by one
        commands = root.sub("cmd-line", commands, count=1)
        acting = re.search(r"^cmd-line\s*::=(.*)$", commands, re.M).group(1)
        actions = " | ".join(a.strip() for a in acting.split("|") if a.strip() != "cmd-answer")
        state = root.sub("st-root", state, count=1) + \
            f'\ncmd-act ::= {actions}\nroot ::= {"cmd-answer | " if actions != acting.strip() else ""}cmd-act "\\n" st-root\n'
    else:
        commands = root.sub("cmd-unused", commands, count=1)
    return commands + "\n" + state
