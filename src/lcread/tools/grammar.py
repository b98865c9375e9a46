"""The embedded model's grammars (GBNF) for the tool language: one command, with the document names as the only
paths; a handoff or sac state after it. The commands and their rules come from the command table
(`tools.parse.COMMANDS`)."""

from __future__ import annotations

import re

from lcread.prompts import template
from lcread.tools.parse import COMMANDS


QUOTED_ANSWER = 'root ::= "\\"" [^"\\n]{1,300} "\\""'
"""The reply to the reader's own call: one answer in double quotes."""


def _literal(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", " ") + '"'


def command_grammar(doc_names: list[str], can_answer: bool = True) -> str:
    """The GBNF grammar of one command, with the document names as the only valid paths. Without `can_answer`
    (nothing read yet), the grammar has no answer command at all."""
    # Past a few hundred names, alternatives make the grammar slow: any path, which the runner checks.
    docs = " | ".join(_literal(n) for n in doc_names) if len(doc_names) <= 300 else '[^ "\\n]{1,200}'
    rules = [spec.rule for name, spec in COMMANDS.items() if spec.rule and (can_answer or name != "answer")]
    return f"root        ::= {' | '.join(rules)}\n" + template("commands.gbnf").replace("@DOCS@", docs)


def without_command(grammar: str, name: str) -> str:
    """The same grammar without the command `name` (after a model ran it again and again: the next step must be
    something else)."""
    rule = COMMANDS[name].rule if name in COMMANDS else None
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
