"""definition NAME: where a name is defined, in code and in configuration, found by one ripgrep pass.

In code a value often sits behind a name: `def __init__(self, limit=_DEFAULT_LIMIT)`, and elsewhere
`_DEFAULT_LIMIT = 2 ** 16`. The forms recognised, by language:

- Python: `def NAME`, `class NAME`, `NAME = ...` / `NAME: T = ...` (also `self.NAME = ...`)
- C and C++: `#define NAME`, `struct|enum|union|class NAME`, a function head `T NAME(...)` without `;`,
  `NAME = ...` in an initialiser, an enumerator `NAME = ...,`
- JavaScript and TypeScript: `function NAME`, `const|let|var NAME`, `class|interface|type|enum NAME`,
  a method head `NAME(...) {`
- Go: `func NAME`, `func (r T) NAME`, `type|var|const NAME`
- Rust: `fn|struct|enum|trait|type|const|static|mod NAME`, `macro_rules! NAME`
- Java: `class|interface|enum|record NAME`, a method head `T NAME(...)`, a field `T NAME = ...`
- configuration: `NAME = value`, `NAME: value`
"""

from __future__ import annotations

import re

FORMS = (
    r"^\s*(?:async\s+)?def\s+{n}\b",
    r"^\s*(?:export\s+)?(?:default\s+)?(?:abstract\s+)?(?:public\s+|private\s+|protected\s+)?(?:static\s+)?"
    r"(?:final\s+)?(?:class|struct|enum|union|interface|trait|record|type|mod|module|namespace)\s+{n}\b",
    r"^\s*(?:self\.)?{n}\s*(?::[^=\n]{{1,80}})?=[^=]",
    r"^\s*#\s*define\s+{n}\b",
    r"^\s*(?:export\s+)?(?:async\s+)?function\s*\*?\s*{n}\b",
    r"^\s*(?:export\s+)?(?:const|let|var|static|final)\s+(?:mut\s+)?{n}\b",
    r"^\s*func\s+(?:\([^)]*\)\s*)?{n}\b",
    r"^\s*(?:pub(?:\([\w:]+\))?\s+)?(?:async\s+)?(?:unsafe\s+)?(?:const\s+)?fn\s+{n}\b",
    r"^\s*macro_rules!\s+{n}\b",
    r"^\s*(?:type|var|const)\s+{n}\b",
    r"^[A-Za-z_][\w\s\*&<>,:]*[\s\*&]{n}\s*\([^;]*$",
    r"^\s*(?:(?:public|private|protected|static|final|abstract|synchronized|async)\s+)*[\w<>\[\],.?]+\s+{n}\s*\(",
    r"^\s*(?:(?:public|private|protected|static|final)\s+)+[\w<>\[\],.?]+\s+{n}\s*(?:=|;)",
    r"^\s*{n}\s*\([^)]*\)\s*(?::\s*[\w<>\[\]|. ]+)?\s*\{{",
    r"^\s*[\"']?{n}[\"']?\s*[:=]\s*\S",
)


def definition_pattern(name: str) -> str:
    """One regex matching a definition of `name` in any of the forms above."""
    n = re.escape(name)
    return "|".join(f"(?:{form.format(n=n)})" for form in FORMS)


NAME = re.compile(r"^[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*$")
CONSTANT = re.compile(r"(?<![\w.])_?[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b|(?<![\w.])_[A-Z][A-Z0-9]{2,}\b")
"""A name written like a constant (`_DEFAULT_LIMIT`, `MAX_LINE`): what a value in code often hides behind."""


def constants_used(line: str) -> list[str]:
    """The constant-like names a line of code uses but does not itself define."""
    names = list(dict.fromkeys(CONSTANT.findall(line)))
    return [n for n in names if not re.match(rf"^\s*(?:self\.)?{re.escape(n)}\s*(?::[^=]*)?=[^=]", line)
            and not re.match(rf"^\s*#\s*define\s+{re.escape(n)}\b", line)]


CONSTANT_NAME = re.compile(r"_?[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+|_[A-Z][A-Z0-9]{2,}")
_LITERAL = re.compile(r"""-?\d[\d_]*(?:\.\d+)?(?:\s*(?:\*\*|[*+-])\s*\d[\d_]*(?:\.\d+)?)*|"[^"\\]*"|'[^'\\]*'""")


def assigned_value(line: str, name: str) -> str | None:
    """What a line defining a constant gives it: a literal (`30`, `2 ** 16`, `"python-requests"`, unquoted),
    another constant's name (to follow), or None when the line is no such definition or the value is
    computed (a call, an expression of other names)."""
    n = re.escape(name)
    m = re.match(rf"^\s*(?:self\.)?{n}\s*(?::[^=\n]{{1,80}})?=(?!=)\s*(.+?)\s*(?:#.*)?;?$", line) or \
        re.match(rf"^\s*#\s*define\s+{n}\s+\(?(.+?)\)?\s*(?://.*|/\*.*)?$", line) or \
        re.match(rf"^\s*(?:export\s+)?(?:pub\s+)?(?:const|static|final|let|var)\s+(?:mut\s+)?{n}\b[^=]*=\s*(.+?);?\s*$",
                 line)
    if m is None:
        return None
    value = m.group(1).strip().rstrip(";").strip()
    if _LITERAL.fullmatch(value):
        return value.strip("'\"") if value[:1] in "'\"" else value
    return value if CONSTANT_NAME.fullmatch(value) else None


_VALUE = (r"\s*(?:-?\d[\d_.]*(?:\s*(?:\*\*|[*+-])\s*\d[\d_.]*)*\s*(?:[,;)#]|$)|[\"'\[{(]|"
          r"(?-i:_?[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b))")
"""What a name is given when the line states its value: a literal, or a constant's name to follow."""
_ASSIGNING = (
    r"^\s*{name}\s*(?::[^=\n]{{1,80}})?={value}",
    r"^\s*#\s*define\s+{name}\s+\S",
    r"^\s*(?:export\s+)?(?:pub\s+)?(?:const|static|final|let|var)\s+(?:mut\s+)?{name}\b[^=\n]*={value}",
    r"^\s*(?:async\s+)?(?:def|fn|func|function)\s.*[(,]\s*{name}\s*(?::[^=,\n]{{1,60}})?={value}",
)
"""Lines of code that give a name a stated value: an assignment or a constant (`__version__ = "8.1.3"`,
`self.max_redirects = DEFAULT_REDIRECT_LIMIT`, `#define MAX_LINE 80`, `const limit = 5`), or a parameter's default
(`width: int = 36,` in a signature written one parameter to a line, `def wrap_text(text, width=78)`)."""
_ASSIGNED = [re.compile(form.format(name=r"([\w.]+)", value=_VALUE)) for form in _ASSIGNING]
_DEFAULTS = re.compile(r"[(,]\s*(\w+)\s*(?::[^=,\n]{1,60})?=" + _VALUE.replace("(?:[,;)#]|$)", "(?=[,;)#]|$)"))


def assigning_pattern(forms: list[str]) -> str:
    """One ripgrep regex (case aside) for the lines of code that give a stated value to a name holding any of
    `forms`: where a question's word sits when the value is the answer, even a word too common ("width") for
    the search's other pass to look for."""
    name = r"[\w.]*(?:" + "|".join(re.escape(f) for f in forms) + r")\w*"
    return "|".join(form.format(name=name, value=_VALUE) for form in _ASSIGNING)


def assigned_names(line: str) -> list[str]:
    """The names a line of code gives a stated value to (a signature's line: each parameter with a default)."""
    if _ASSIGNED[3].match(line):
        return _DEFAULTS.findall(line)
    return [m.group(1) for m in (p.match(line) for p in _ASSIGNED[:3]) if m][:1]


CODE_SUFFIXES = (".py", ".pyi", ".c", ".h", ".cc", ".cpp", ".hpp", ".js", ".mjs", ".ts", ".tsx", ".jsx", ".go",
                 ".rs", ".java", ".kt", ".rb", ".php", ".cs", ".swift", ".scala", ".lua", ".sh")


def is_code(name: str) -> bool:
    return name.lower().endswith(CODE_SUFFIXES)
