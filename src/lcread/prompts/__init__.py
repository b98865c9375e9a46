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


def command_grammar(doc_names: list[str]) -> str:
    """The GBNF grammar of one command, with the document names as the only valid paths."""
    docs = " | ".join('"' + n.replace("\\", "\\\\").replace('"', '\\"') + '"' for n in doc_names)
    return template("commands.gbnf").replace("@DOCS@", docs)


def state_grammar(doc_names: list[str], items: int, findings: int, after_command: bool) -> str:
    """The GBNF grammar of a handoff / sac state (JSON); with after_command, a command line comes first."""
    state = template("state.gbnf").replace("@MORE@", str(items - 1)).replace("@MOREFINDINGS@", str(findings - 1))
    commands = command_grammar(doc_names)
    root = re.compile(r"^root\b", re.M)
    if after_command:
        commands = root.sub("cmd-line", commands, count=1)
        state = root.sub("st-root", state, count=1) + '\nroot ::= cmd-line "\\n" st-root\n'
    else:
        commands = root.sub("cmd-unused", commands, count=1)
    return commands + "\n" + state
