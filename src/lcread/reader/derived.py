"""Candidates lcread works out from what was shown, beside the spans themselves: a name's value where a shown line
of code defines it, the sets of values a question asking for several may take (every value of a term, one value
per part, a chain of names linked through shown lines, an enumeration in prose), the heading a quoted line sits
under, and counts of the lines that hold the question's words. Each is a candidate like any other: the scorer
decides, nothing here does."""

from __future__ import annotations

import re
from collections.abc import Callable

from lcread.grounding.evidence import Sentence, norm
from lcread.language import load
from lcread.reader.candidates import Candidate, Spot, key
from lcread.reader.question import Asked
from lcread.tools.definitions import CONSTANT_NAME, assigned_value

HOPS = 3
"""Names defined as other names followed to reach a value."""
SET_ITEMS = 12
"""Items of a set at most."""
COUNTS = 6
"""Count candidates at most (all the question's words, then each one left out in turn)."""


def resolved(pool: list[Candidate], sentences: list[Sentence]) -> list[Candidate]:
    """The values that shown definitions give the pool's constant-like names (`LIMIT = 30` for `LIMIT`), cited on
    the definition and on the line that uses the name."""
    defs: dict[str, tuple[str, Sentence]] = {}
    for s in sentences:
        m = re.match(r"^\s*(?:self\.)?(_?[A-Za-z][\w]*)\s*(?::[^=\n]{1,80})?=(?!=)", s.text) or \
            re.match(r"^\s*#\s*define\s+(\w+)", s.text)
        if m and (value := assigned_value(s.text, m.group(1))) is not None:
            defs.setdefault(m.group(1), (value, s))
    out = []
    for c in pool:
        if c.type != "identifier" or not CONSTANT_NAME.fullmatch(c.text.strip("$")):
            continue
        name, via = c.text.strip("$"), []
        for _ in range(HOPS):
            if name not in defs:
                break
            value, s = defs[name]
            via.append(Spot(s, 0, len(s.text)))
            if not CONSTANT_NAME.fullmatch(value):
                out.append(Candidate(value, "number" if re.fullmatch(r"[-\d._* ]+", value) else "quoted",
                                     c.spots[:1] + via, computed=True, source=c.text))
                break
            name = value
    return out


def sets(asked: Asked, pool: list[Candidate], searched: Callable[[str], bool]) -> list[Candidate]:
    """For a question asking for several values: every item of the asked type that shares a shown sentence with a
    term of the question; one such item per term; and each set grown through the sentences its items share with
    further items (a chain of assignments). A set's text is its items in the order the documents give them."""
    if not asked.plural:
        return []
    fitting = _without_labels([c for c in pool if c.type in asked.fits and c.spots])
    anchors = [t for t in asked.terms if not _is_value(t) or asked.type not in ("number", "count")] or asked.terms
    anchors = {a: _anchor(a) for a in anchors or asked.words}
    # the items of a set are of one kind: paths with paths, quoted values with quoted values
    of_kind = {kind: [c for c in fitting if c.type == kind] for kind in asked.fits}
    groups: list[list[Candidate]] = []
    for items in of_kind.values():
        by_anchor = {a: [c for c in items if any(held.search(p.sentence.norm) for p in c.spots)]
                     for a, held in anchors.items()}
        by_anchor = {a: cs for a, cs in by_anchor.items() if cs}
        found = list(by_anchor.values())
        if len(by_anchor) >= 2:  # one value per part: the item nearest each term
            found.append([cs[0] for cs in by_anchor.values()])
        groups += found + [_closure(g, items) for g in found]
    out, seen = [], set()
    for group in groups:
        group = sorted({id(c): c for c in group}.values(), key=_position)[:SET_ITEMS]
        keys = frozenset(c.key for c in group)
        if keys in seen:
            continue
        seen.add(keys)
        spots = [s for c in group for s in c.spots[:1]]
        closed = len(_closure(group, of_kind[group[0].type])) == len(group)
        out.append(Candidate(", ".join(c.text for c in group), "list", spots, computed=True,
                             items=[c.text for c in group], complete=closed and all(searched(c.text) for c in group),
                             partial=not closed))
    return out


ENUMERATION_SENTENCES = 8
"""Enumerations are taken from this many of the shown sentences that match the question best."""
_ITEM = r"[\"“‘'`]?[A-Za-z0-9][\w.+/-]*[\"”’'`]?"


def enumerations(asked: Asked, sentences: list[Sentence], match) -> list[Candidate]:
    """For a question asking for several values: each enumeration a shown sentence that matches it well makes
    ("HTTP, HTTPS, and FTP", "prefork, worker, or event", "indexed and associative"), its items as a set. The items
    of a list in prose are plain words, which no other span type takes."""
    if not asked.plural:
        return []
    lang = load()
    joins = lang.phrase("enumeration_joins").pattern
    pattern = re.compile(rf"(?<![\w.-])(?:(?:{_ITEM},\s+)+{_ITEM},?|{_ITEM})\s+(?:{joins})\s+{_ITEM}(?![\w-])")
    out: dict[str, Candidate] = {}
    for s in sorted(sentences, key=lambda s: -match(s.text))[:ENUMERATION_SENTENCES]:
        for m in pattern.finditer(s.text):
            parts = re.split(rf",?\s+(?:{joins})\s+|,\s*", m.group(0))
            items = [i.strip("\"“”‘’'`").rstrip(".") for i in parts]
            items = [i for i in items if i and i.lower() not in lang.stopwords]
            _enumerated(out, items, Spot(s, m.start(), m.end()))
        for m in _COLLECTION.finditer(s.text):  # in code or a configuration: a literal list, set or mapping
            pairs = [(k or q or n, v or w) for k, q, n, v, w in _LITERAL.findall(m.group(1))]
            for items in ([a for a, _ in pairs], [b for _, b in pairs if b]):  # a mapping's keys, and its values
                _enumerated(out, [i for i in items if i], Spot(s, m.start(), m.end()))
    return list(out.values())


_LITERAL = re.compile(r"""(?:"([^"\n]{1,60})"|'([^'\n]{1,60})'|(-?\d+(?:\.\d+)?))"""
                      r"""(?:\s*:\s*(?:["']([^"'\n]{1,60})["']|(-?\d+(?:\.\d+)?)|[\w.]+))?""")
_QUOTED = r"""(?:"[^"\n]{1,60}"|'[^'\n]{1,60}')"""
_ENTRY = rf"(?:{_QUOTED}|-?\d+(?:\.\d+)?)(?:\s*:\s*(?:{_QUOTED}|[\w.]+))?"
"""One item of a collection: a quoted string or a number, and its value if it is a mapping's key."""
_COLLECTION = re.compile(rf"(?:[\[{{]|(?<!\w)\()((?:\s*{_ENTRY}\s*,){{1,11}}\s*{_ENTRY}\s*,?\s*)[\])}}]")
"""A collection written out on one line: two to twelve quoted strings or numbers (a mapping's keys, each with
its value), between brackets, braces or parentheses that are no call's: `frozenset([413, 429, 503])`,
`{"http": 80, "https": 443}`."""


def _enumerated(out: dict[str, Candidate], items: list[str], spot: Spot) -> None:
    if 2 <= len(items) <= SET_ITEMS and len({key(i) for i in items}) == len(items):
        c = out.setdefault(", ".join(items), Candidate(", ".join(items), "list", computed=True, items=items))
        c.spots.append(spot)


LIST_LEADS = 3
"""The shown lines that match a question best whose paragraphs may open a list laid out below them."""
LEAD_LINES = 3
"""Lines of a paragraph, from a line that matches the question on, in which its list's lead may end."""
LIST_LINES = 60
"""Lines after a list's lead that it may take (a dozen items, each with a few lines of its own)."""
LIST_TERM_CHARS = 60
"""Characters of a line at most to read as an item of a list without markers (a term, not a line of prose)."""
_MARKER = re.compile(r"([•·▪◦‣*+-]|\(?\d{1,2}[.)]|\(?[a-z][.)])\s+(?=\S)")
"""A list item's marker: a bullet, a number or a letter."""
_OPENS = re.compile(r":\s*$")
_BRACKET = re.compile(r"[\[{(]\s*(?:#.*|//.*)?$")
"""A line of code that opens a collection written out one entry a line (`SHELLS = {`)."""
_CLOSES = re.compile(r"^\s*[\])}]")
_SEPARATOR = re.compile(r"\s+[-–—]\s+|:\s|\t|\s{2,}")
"""What ends an item's term where the item goes on with a description."""
_CODE = re.compile(r"[=;{}]|\w\(")
"""Code, not a term: an assignment, a statement's end, a block, a call."""


def list_leads(asked: Asked, sentences: list[Sentence], lines: dict[tuple[str, int], str], match) \
        -> list[tuple[str, int]]:
    """For a question asking for several values or a count: the lines that open a list laid out one item a line
    below the shown lines that match it best: from such a line on, within its paragraph, the first that ends with
    a colon or opens a collection in code, or that ends a sentence which announces what follows (the language's
    `list_lead`: "the following directories are required.")."""
    if not (asked.plural or asked.type == "count"):
        return []
    best: list[tuple[str, int]] = []
    for s in sorted(sentences, key=lambda s: -match(s.text)):
        if (s.doc, s.line) not in best:
            best.append((s.doc, s.line))
        if len(best) == LIST_LEADS:
            break
    announces = load().phrase("list_lead")
    out: list[tuple[str, int]] = []
    for doc, line in best:
        said = False
        for n in range(line, line + LEAD_LINES):
            text = lines.get((doc, n))
            if text is None or not text.strip():
                break
            said = said or bool(announces.search(text))
            if _OPENS.search(text) or _BRACKET.search(text) or said and re.search(r"[.:]\s*$", text):
                if (doc, n) not in out:
                    out.append((doc, n))
                break
    return out


def listed(lines: dict[tuple[str, int], str], doc: str, lead: int) -> tuple[list[tuple[int, int, str]], int | None]:
    """The items of the list a lead line opens, from the shown lines after it, each as (line, start, term); and
    the first line after them not shown, when the list may go on there (None: a shown line ends it). The items
    share their indentation and their kind of marker (a bullet, a number, none); lines indented deeper are an
    item's own; an item without a marker is a short line that is no prose and no code. After a line of code that
    opens a collection, each line up to its closing bracket is an entry."""
    if _BRACKET.search(lines[(doc, lead)]):
        return _entries(lines, doc, lead)
    items: list[tuple[int, int, str]] = []
    shape = None
    for n in range(lead + 1, lead + LIST_LINES + 1):
        text = lines.get((doc, n))
        if text is None:
            return _rows(items), n
        if not text.strip():
            continue
        indent = len(text) - len(text.lstrip())
        marker = _MARKER.match(text, indent)
        kind = _kind(marker.group(1)) if marker else None
        if items and shape and indent > shape[0]:
            continue  # an item's own lines
        start = marker.end() if marker else indent
        term = _term(text[start:], bare=kind is None)
        if term is None:
            break
        now = (indent, kind, _initial(term) if kind is None else None)
        if shape is None or len(items) == 1 and now[:2] == shape[:2] and now != shape:
            # the first item sets the list's shape; a first line unlike the rest is a table's header row
            items, shape = items[1:] if shape else items, now
        elif now != shape:
            break
        items.append((n, start, term))
    else:
        return _rows(items), n + 1
    return _rows(items), None


def _kind(marker: str) -> str:
    """A marker's kind: a number (`1.`, `(2)`), a letter (`a)`), or the bullet itself (`•`, `-`)."""
    if marker[-1] not in ".)":
        return marker
    return "number" if marker.strip("().").isdigit() else "letter"


def _initial(term: str) -> str:
    """What an item without a marker starts with: a lower-case or a capital letter, a digit, or a mark."""
    c = term[:1]
    return "lower" if c.islower() else "capital" if c.isupper() else "digit" if c.isdigit() else c


def _rows(items: list[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    """The items as terms: where every one is a row of a table whose columns lost their gap (`bin Most user
    commands`: a name, then a capitalised description), its first cell."""
    if len(items) >= 2 and all(re.match(r"\S+\s+[A-Z]", t) for _, _, t in items):
        return [(n, start, t.split()[0]) for n, start, t in items]
    return items


def _entries(lines: dict[tuple[str, int], str], doc: str, lead: int) -> tuple[list[tuple[int, int, str]], int | None]:
    """The entries of a collection a line of code opens, one or more a line, up to its closing bracket: each
    quoted string or number (a mapping's keys), or a bare name."""
    items: list[tuple[int, int, str]] = []
    for n in range(lead + 1, lead + LIST_LINES + 1):
        text = lines.get((doc, n))
        if text is None:
            return items, n
        if _CLOSES.match(text):
            return items, None
        found = [(m.start(), double or single or number) for m in _LITERAL.finditer(text)
                 for double, single, number, _, _ in [m.groups()]] or \
            [(m.start(1), m.group(1)) for m in [re.match(r"\s*([A-Za-z_][\w.]*)\s*,?\s*(?:#.*)?$", text)] if m]
        items += [(n, start, item) for start, item in found if item]
    return items, lead + LIST_LINES + 1


def _term(text: str, bare: bool) -> str | None:
    """An item's term: its text up to where a description starts, without quotes, emphasis and final
    punctuation. Without a marker, only a short line that is no code and no sentence is one."""
    text = text.strip()
    if bare and (len(text) > LIST_TERM_CHARS or _CODE.search(text) or re.search(r"[.!?]$", text)
                 or text.startswith("[")):
        return None
    term = _SEPARATOR.split(text, maxsplit=1)[0].strip().strip("\"“”‘’'`*_").rstrip(".,;:").strip()
    return term[:LIST_TERM_CHARS] or None


def lists(asked: Asked, sentences: list[Sentence], lines: dict[tuple[str, int], str], match) -> list[Candidate]:
    """For a question asking for several values, each list laid out below the lines that match it best, its
    items as a set; for a "how many" question, how many items such a list holds, when it is shown to its end. Each
    is cited on its lead and its items' lines."""
    out: list[Candidate] = []
    for doc, lead in list_leads(asked, sentences, lines, match):
        items, more = listed(lines, doc, lead)
        if len(items) < 2 or len({key(t) for _, _, t in items}) < len(items):
            continue
        head = lines[(doc, lead)]
        spots = [Spot(Sentence(doc, lead, 0, head), 0, len(head))] + \
            [Spot(Sentence(doc, n, 0, lines[(doc, n)]), start, start + len(term)) for n, start, term in items]
        terms = [t for _, _, t in items]
        if asked.plural and len(terms) <= SET_ITEMS:
            out.append(Candidate(", ".join(terms), "list", spots, computed=True, items=terms,
                                 complete=more is None, partial=more is not None, listed=True))
        if asked.type == "count" and more is None:
            out.append(Candidate(str(len(terms)), "count", spots, computed=True, counted=(f"{doc}:{lead}",),
                                 unit="items", listed=True))
    return out


def list_reads(asked: Asked, sentences: list[Sentence], lines: dict[tuple[str, int], str], match) \
        -> list[tuple[str, int, int]]:
    """Where the lists below the lines that match a question best go on past what was shown: (document, first
    line, last line) for lcread to read itself."""
    out = []
    for doc, lead in list_leads(asked, sentences, lines, match):
        _, more = listed(lines, doc, lead)
        if more is not None and more <= lead + LIST_LINES:
            out.append((doc, more, lead + LIST_LINES))
    return out


def judge_set(c: Candidate, asked: Asked, pool: list[Candidate], searched: Callable[[str], bool]) -> Candidate:
    """A set the model gave, marked as lcread's sets are: closed (nothing shown links it to a further item) and
    searched, or partial."""
    items = _without_labels([x for x in pool if x.type in asked.fits and x.spots])
    mine = [x for x in items if x.key in {key(i) for i in c.items or []}]
    if c.items and len(mine) == len(c.items):
        closed = len(_closure(mine, items)) == len(mine)
        c.complete, c.partial = closed and all(searched(i) for i in c.items), not closed
    return c


def sections(asked: Asked, sentences: list[Sentence], heading_of) -> list[Candidate]:
    """The headings (chapter, section) the shown lines holding the question's quoted text sit under."""
    if asked.type != "section" or heading_of is None:
        return []
    quotes = [t for t in asked.terms if " " in t]
    out: dict[str, Candidate] = {}
    for s in sentences:
        if any(norm(q)[:60] in norm(s.text) or norm(s.text) in norm(q) for q in quotes):
            heading = heading_of(s.doc, s.line)
            if heading:
                line, text = heading
                c = out.setdefault(key(text), Candidate(text.strip(), "section", computed=True))
                c.spots.append(Spot(s, 0, len(s.text)))
    return list(out.values())


def counts(asked: Asked, count_lines, count_entries=None) -> list[Candidate]:
    """How many lines of the whole input hold every word of the question (each word in any of its forms), then
    with each word left out in turn: what "how many X were logged at Y" counts when no line states it; and how
    many release or log entries hold those of its words their headers hold ("how many releases in 2021")."""
    if asked.type != "count" or count_lines is None:
        return []
    words = [w for w in asked.words if w not in load().not_counted][:6]
    tries = [words] + [[w for w in words if w != drop] for drop in words]
    out: dict[str, Candidate] = {}
    for terms in tries[:COUNTS]:
        if not terms:
            continue
        n, lines = count_lines(terms)
        if n:
            c = out.setdefault(str(n), Candidate(str(n), "count", [], computed=True, counted=tuple(terms)))
            c.spots += _whole(lines)[:3 - len(c.spots)]
    for terms in tries[:COUNTS] if count_entries else []:
        n, held, heads = count_entries(terms) if terms else (0, (), [])
        if n and str(n) not in out:
            out[str(n)] = Candidate(str(n), "count", _whole(heads), computed=True, counted=held, unit="entries")
    return list(out.values())


def _whole(pieces) -> list[Spot]:
    """Shown pieces as spots that take each piece whole (a count's cited lines)."""
    return [Spot(Sentence(p.doc, p.line, p.start, p.text), 0, len(p.text)) for p in pieces]


def _is_value(term: str) -> bool:
    return re.fullmatch(r"[\d.,:/-]+", term) is not None


def _anchor(term: str) -> re.Pattern:
    """What marks a sentence (its normalised text) as holding a term of the question: a plain word in any of its
    forms ("indicators" holds "indicator"), anything else as written, each as a whole word."""
    from lcread.tools.search import forms_of, whole_words

    forms = {term} | forms_of(term) if re.fullmatch(r"[a-z]+", term) else {term}
    return whole_words({norm(f) for f in forms})


def _position(c: Candidate) -> tuple:
    spot = min(c.spots, key=lambda p: (p.sentence.doc, p.sentence.line, p.start))
    return spot.sentence.doc, spot.sentence.line, spot.start


def _without_labels(items: list[Candidate]) -> list[Candidate]:
    """Without the labels: an item in every one of three or more sentences that hold several items (`VAR` of `VAR B
    = VAR A`) is what those lines share, not an item."""
    lines = [(p.sentence.doc, p.sentence.line) for c in items for p in c.spots]
    shared = {line for line in lines if lines.count(line) >= 2}
    if len(shared) < 3:
        return items
    return [c for c in items if not shared <= {(p.sentence.doc, p.sentence.line) for p in c.spots}]


def _closure(group: list[Candidate], items: list[Candidate]) -> list[Candidate]:
    """The group grown by the items that share a shown sentence with one of its own, until none is added."""
    out = list(group)
    lines = {(p.sentence.doc, p.sentence.line) for c in out for p in c.spots}
    grown = True
    while grown and len(out) < SET_ITEMS:
        grown = False
        for c in items:
            if c not in out and any((p.sentence.doc, p.sentence.line) in lines for p in c.spots):
                out.append(c)
                lines |= {(p.sentence.doc, p.sentence.line) for p in c.spots}
                grown = True
    return out
