"""Parse one bash-style command line into a Command, or say exactly what is wrong with it."""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable
from dataclasses import dataclass, field



class ParseError(ValueError):
    """The command is not one lcread understands; the message goes back to the model."""


@dataclass
class Command:
    """One parsed command: its name, its documents, and its options."""

    name: str
    text: str
    docs: list[str] = field(default_factory=list)
    patterns: list[str] = field(default_factory=list)
    flags: set[str] = field(default_factory=set)
    before: int = 0
    after: int = 0
    max_count: int | None = None
    start: int = 1
    end: int | None = None
    count: int = 10
    from_char: int = 0
    """read --from: the character of a long line to start at."""
    chars: int | None = None
    answer: str = ""
    query: str = ""
    """search: the words to rank passages by."""
    kind: str | None = None
    """search: the kind of value the question asks for (number, date, path); passages holding one rank higher."""
    skip: int = 0
    """grep: hits already shown by the same grep (a repeat of a cut grep continues after them)."""


def parse(text: str) -> Command:
    """Parse the first command in a model reply (code fences and a leading `$ ` are tolerated)."""
    if "\x00" in text:
        raise ParseError("a command cannot hold a NUL character")
    line = _command_line(text)
    name = line.split(None, 1)[0] if line.split() else ""
    if name == "answer":
        return Command("answer", line, answer=_answer_text(line[len("answer"):]))
    if name not in COMMANDS:
        hint = " cat would print a whole document; use grep, head or read." if name in ("cat", "less", "more") else ""
        raise ParseError(f"unknown command {name or '(empty)'!r}.{hint} Commands:\n{USAGE}")
    if name == "search":  # plain words: a quote in them ("the line 'nobody had ...") is a word's, not the shell's
        return _parse_search(line.split()[1:], line)
    words = _split(line)
    return COMMANDS[name].parse(words[1:], line)


def _command_line(text: str) -> str:
    lines = [ln.strip() for ln in text.strip().splitlines()]
    lines = [ln for ln in lines if ln and not ln.startswith("```")]
    if not lines:
        raise ParseError(f"empty reply: reply with exactly one command. Commands:\n{USAGE}")
    first = lines[0].removeprefix("$ ").strip()
    if first.split(None, 1)[0] == "answer":
        # An answer may run over several lines.
        return "\n".join([first] + lines[1:]).strip()
    return first


def _answer_text(rest: str) -> str:
    rest = rest.strip()
    try:
        words = shlex.split(rest)
        if len(words) == 1:
            return words[0].strip()
    except ValueError:
        pass
    if len(rest) >= 2 and rest[0] == rest[-1] and rest[0] in "\"'":
        rest = rest[1:-1]
    if not rest.strip():
        raise ParseError('answer needs the answer text: answer "..."')
    return rest.strip()


def _split(line: str) -> list[str]:
    lexer = shlex.shlex(line, posix=True, punctuation_chars="|;&<>")
    lexer.whitespace_split = True
    try:
        words = list(lexer)
    except ValueError as e:
        raise ParseError(f"cannot parse the command ({e}); check the quotes") from None
    if any(w and set(w) <= set("|;&<>") for w in words):
        raise ParseError("one command per step: pipes, redirection and ; or && are not available. "
                         "Quote a pattern that contains | (grep -e 'a|b' or grep 'a|b').")
    return words


def _int(value: str, what: str) -> int:
    try:
        n = int(value)
    except ValueError:
        raise ParseError(f"{what} must be a whole number, not {value!r}") from None
    if n < 0:
        raise ParseError(f"{what} must not be negative")
    return n


_GREP_VALUE_FLAGS = {"-C": "context", "-A": "after", "-B": "before", "-m": "max", "-e": "pattern"}
_GREP_SWITCHES = {"-n", "-i", "-w", "-F", "-c", "-p", "-E", "-r", "-R", "-H", "-s", "-I"}
_LONG = {"--ignore-case": "-i", "--word-regexp": "-w", "--fixed-strings": "-F", "--count": "-c",
         "--line-number": "-n", "--context": "-C", "--after-context": "-A", "--before-context": "-B",
         "--max-count": "-m", "--regexp": "-e", "--extended-regexp": "-E",
         "--show-function": "-p", "--count-matches": "-c"}


def _parse_grep(args: list[str], text: str) -> Command:
    cmd = Command("grep", text)
    positional: list[str] = []
    i = 0
    while i < len(args):
        arg = args[i]
        if "=" in arg and arg.split("=", 1)[0] in _LONG:
            key, value = arg.split("=", 1)
            args[i:i + 1] = [_LONG[key], value]
            arg = args[i]
        arg = args[i] = _LONG.get(arg, arg)
        if arg == "--":
            positional.extend(args[i + 1:])
            break
        if arg.startswith("-") and len(arg) > 1 and (not positional or _looks_like_option(arg)):
            i = _grep_option(cmd, args, i)
            continue
        positional.append(arg)
        i += 1
    if not cmd.patterns:
        if not positional:
            raise ParseError(f"grep needs a pattern. Usage:\n{USAGE.splitlines()[0]}")
        cmd.patterns.append(positional.pop(0))
    cmd.docs = positional
    if "-E" not in cmd.flags and "-F" not in cmd.flags:
        # Basic-regex habits: grep 'a\|b' means alternation.
        cmd.patterns = [p.replace(r"\|", "|") for p in cmd.patterns]
    return cmd


def _looks_like_option(arg: str) -> bool:
    """After the pattern, an option is still one (GNU grep's habit) when it is one lcread knows."""
    return arg in _GREP_VALUE_FLAGS or bool(re.fullmatch(r"-\d+|-[A-Za-z]+|-[ABCme]\d+", arg)) and \
        all(f"-{c}" in _GREP_SWITCHES for c in arg[1:]) or arg[:2] in _GREP_VALUE_FLAGS and arg[2:].isdigit()


def _grep_option(cmd: Command, args: list[str], i: int) -> int:
    """Consume one option (possibly bundled, like -in or -C2) at args[i]; return the next index."""
    arg = args[i]
    if arg in _GREP_VALUE_FLAGS or (arg[:2] in _GREP_VALUE_FLAGS and len(arg) > 2 and arg[1] != "-"):
        key, value = (arg, None) if arg in _GREP_VALUE_FLAGS else (arg[:2], arg[2:])
        if value is None:
            if i + 1 >= len(args):
                raise ParseError(f"grep {key} needs a value")
            value, i = args[i + 1], i + 1
        _grep_value(cmd, key, value)
        return i + 1
    if re.fullmatch(r"-\d+", arg):
        cmd.before = cmd.after = _int(arg[1:], "context")
        return i + 1
    letters = arg[1:]
    if arg.startswith("--") or not all(f"-{c}" in _GREP_SWITCHES for c in letters):
        raise ParseError(f"grep option {arg} is not available. Usage:\n{USAGE.splitlines()[0]}")
    cmd.flags.update(f"-{c}" for c in letters)
    return i + 1


def _grep_value(cmd: Command, key: str, value: str) -> None:
    if key == "-e":
        cmd.patterns.append(value)
    elif key == "-m":
        cmd.max_count = max(1, _int(value, "grep -m"))
    else:
        n = _int(value, f"grep {key}")
        if key in ("-C", "-B"):
            cmd.before = n
        if key in ("-C", "-A"):
            cmd.after = n


def _parse_read(args: list[str], text: str) -> Command:
    cmd = Command("read", text)
    rest: list[str] = []
    i = 0
    while i < len(args):
        if args[i] in ("--from", "--chars") and i + 1 < len(args):
            value = _int(args[i + 1], f"read {args[i]}")
            if args[i] == "--from":
                cmd.from_char = value
            else:
                cmd.chars = value
            i += 2
            continue
        rest.append(args[i])
        i += 1
    if not rest or len(rest) > 3:
        raise ParseError("usage: read DOC START END  (line numbers, e.g. read notes.txt 120 180)")
    cmd.docs = [rest[0]]
    if len(rest) >= 2:
        cmd.start = max(1, _int(rest[1], "START"))
    cmd.end = _int(rest[2], "END") if len(rest) == 3 else cmd.start + 59
    if cmd.end < cmd.start:
        raise ParseError(f"END ({cmd.end}) is before START ({cmd.start})")
    return cmd


def _parse_sed(args: list[str], text: str) -> Command:
    if len(args) != 3 or args[0] != "-n":
        raise ParseError("usage: sed -n 'START,ENDp' DOC  (only line ranges are supported)")
    m = re.fullmatch(r"(\d+)(?:,(\d+))?p", args[1])
    if not m:
        raise ParseError(f"sed script {args[1]!r} is not supported; use sed -n 'START,ENDp' DOC")
    start = max(1, int(m.group(1)))
    end = int(m.group(2) or start)
    if end < start:
        raise ParseError(f"END ({end}) is before START ({start})")
    return Command("read", text, docs=[args[2]], start=start, end=end)


def _parse_head_tail(name: str):
    def parse_it(args: list[str], text: str) -> Command:
        cmd = Command(name, text)
        i = 0
        while i < len(args):
            arg = args[i]
            if arg == "-n" and i + 1 < len(args):
                cmd.count, i = _int(args[i + 1], f"{name} -n"), i + 2
            elif re.fullmatch(r"-n\d+|-\d+", arg):
                cmd.count, i = _int(arg.lstrip("-n") or arg[2:], f"{name} -n"), i + 1
            elif arg.startswith("-"):
                raise ParseError(f"{name} option {arg} is not available; usage: {name} [-n N] DOC")
            else:
                cmd.docs.append(arg)
                i += 1
        if len(cmd.docs) != 1:
            raise ParseError(f"usage: {name} [-n N] DOC  (one document)")
        return cmd
    return parse_it


_SEARCH_HEADER = re.compile(r"""['"]?\s*:\s*the \d+ best passages? of\b.*$|\s+showed [\d,]+ lines?\b.*$"""
                            r"""|\s*\[[^\]]*?[\w.-]+:\d+\b[^\]]*\]?\s*$""", re.S)
"""The header of a search's output, or lcread's record of it ("search ... showed 23 lines, ...", the places it
pointed at: "[log.txt:3491, log.txt:3492, ...]"), which a small model copies into its next search."""


def _parse_search(args: list[str], text: str) -> Command:
    words = " ".join(args).strip()
    if len(words) >= 2 and words[0] == words[-1] and words[0] in "'\"":  # search 'ferry departure': the words
        words = words[1:-1].strip()
        text = f"search {words}"
    if _SEARCH_HEADER.search(words):  # the words searched before, not the header's: the same search again
        words = _SEARCH_HEADER.sub("", words).strip().strip("'\"")
        text = f"search {words}"
    if not words:
        raise ParseError("search needs words to look for, e.g. search ferry departure time")
    from lcread.tools.search import TOP

    return Command("search", text, query=words[:300], count=TOP)


def _parse_definition(args: list[str], text: str) -> Command:
    from lcread.tools.definitions import NAME

    names = [a.strip("`'\"()") for a in args if a.strip("`'\"()")]
    if len(names) < 1 or not NAME.match(names[0]):
        raise ParseError("usage: definition NAME  (a name as code writes it, e.g. definition _DEFAULT_LIMIT)")
    return Command("definition", text, patterns=[names[0]], docs=names[1:])


def _parse_wc(args: list[str], text: str) -> Command:
    return Command("wc", text, docs=[a for a in args if not a.startswith("-")])


def _parse_ls(args: list[str], text: str) -> Command:
    pages = [a for a in args if a.isdigit()]
    return Command("ls", text, start=int(pages[0]) if pages else 1)


@dataclass(frozen=True)
class Spec:
    """One command of the tool language: how it is written (the usage the model reads), how it is parsed, its rule
    in the embedded model's grammar (prompts/commands.gbnf), and the ToolRunner method that runs it."""

    usage: str
    parse: Callable[[list[str], str], Command] | None
    rule: str | None
    run: str | None
    inline: bool = False
    """A short usage, listed on one line with the next short ones."""


COMMANDS: dict[str, Spec] = {
    "search": Spec("search WORDS...           (the passages that best match these words, ranked; plain words, any "
                   "form)", _parse_search, "cmd-search", "_search"),
    "grep": Spec("grep [-i] [-w] [-F] [-c] [-p] [-C N|-A N|-B N] [-m N] [-e PATTERN]... PATTERN [DOC...]\n"
                 "     (-c counts matches; -p shows the section, chapter or function each hit is in, as "
                 "DOC=LINE=heading)", _parse_grep, "cmd-grep", "_grep"),
    "read": Spec("read DOC START END        (lines START..END; add --from N to continue inside a long line at "
                 "character N)", _parse_read, "cmd-read", "_read"),
    "sed": Spec("sed -n 'START,ENDp' DOC", _parse_sed, None, None),  # parsed as a read
    "definition": Spec("definition NAME           (where a name is defined: def, class, NAME = ..., #define, "
                       "function, ...)", _parse_definition, "cmd-def", "_definition"),
    "head": Spec("head [-n N] DOC", _parse_head_tail("head"), "cmd-head", "_head", inline=True),
    "tail": Spec("tail [-n N] DOC", _parse_head_tail("tail"), "cmd-tail", "_tail", inline=True),
    "wc": Spec("wc [DOC...]", _parse_wc, "cmd-wc", "_wc", inline=True),
    "ls": Spec("ls [PAGE]", _parse_ls, "cmd-ls", "_ls", inline=True),
    "answer": Spec('answer "TEXT"', None, "cmd-answer", None),  # the gate's, not a tool's
}
"""The tool language, one entry per command: a new command is an entry here, its parse function, its grammar rule
and its ToolRunner method."""


def _usage() -> str:
    lines: list[str] = []
    for spec, before in zip(COMMANDS.values(), [None, *COMMANDS.values()]):
        if spec.inline and before is not None and before.inline:
            lines[-1] += "   " + spec.usage
        else:
            lines.append(spec.usage)
    return "\n".join(lines)


USAGE = _usage()
NAMES = tuple(COMMANDS)
