"""search: the passages that best match a question's words, ranked by BM25 over word forms.

Real questions rarely share their words with the document ("leave" / "left", "buffer limit" /
`_DEFAULT_LIMIT`), and a small model does not reformulate a grep that found nothing. So lcread ranks
passages itself:

1. The query's content words become terms: lemmas (simplemma), every inflected form of them, and the parts
   of identifiers (`snake_case`, `camelCase`, dotted names) as well as the whole identifier.
2. Each term's weight (IDF) is estimated from a sample of the documents (all of them when they are small),
   in units of about 400 characters, so a one-line document weighs its words like any other.
3. ripgrep finds the lines that hold a form of the rarer terms (a prefilter: it scales with rg, to a 2 GB
   log or a folder of 100,000 files); a common word never floods the candidates. A document of 256 MB or more
   is read through its word index once that is built (wordindex.py): only the blocks holding the most terms.
4. Each candidate line (or, on a very long line, a window around each match) is scored with BM25; the best
   are widened to passages of a few lines and scored again, overlapping passages merged, the top shown with
   `DOC:LINE`, the heading path `grep -p` would show, and the page.
"""

from __future__ import annotations

import bisect
import contextlib
import functools
import heapq
import itertools
import math
import re
from dataclasses import dataclass, field

from lcread.text import TOC_LEADER, holds_value, us_spelling
from lcread.documents import Changed
from lcread.language import load as load_language
from lcread.tools.definitions import assigned_names, assigning_pattern, is_code
from lcread.tools.evidence import Shown
from lcread.tools.grep import BASE_ARGS, KEEP_SPANS, Hit, rg_stream
from lcread.tools.headings import PATTERNS

MAX_CANDIDATES = 20_000
"""Candidate lines read from ripgrep at most (the rarest terms' lines come first)."""
PREFILTER_UNITS = 4_000
"""Estimated matching units past which a term is too common to prefilter on (unless it is the rarest)."""
SAMPLE_BYTES = 8 << 20
"""Bytes read to estimate the terms' weights; documents smaller than this together are read whole."""
UNIT = 400
"""Characters in the unit a term's frequency is counted over (lines, and pieces of longer lines)."""
WINDOW = 300
"""Characters shown either side of a match on a line too long to show whole."""
PASSAGE = 500
"""Characters a passage grows to around its best line."""
TOP = 8
"""Passages shown (by the search command and lcread's own first step)."""
K1, B = 1.2, 0.75
VALUE_BONUS = 1.5
"""A passage holding a value of the kind the question asks for (a number for "how many", a path for "where")
scores this much more: the passage that answers states the value (answer-type filtering, as question-answering
systems rank passages)."""

_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_.'-]*[A-Za-z0-9]|[A-Za-z]|\d+(?:[.,:]\d+)*")
_COMPOUND = re.compile(r"[A-Za-z][A-Za-z0-9]+(?:-[A-Za-z0-9]+)+")
_PARTS = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")
_MIXED = re.compile(r"(?=[A-Za-z0-9]*[A-Za-z])(?=[A-Za-z0-9]*\d)[A-Za-z0-9]{2,}")
"""Letters and digits in one word (PCRE2, IPv6, urllib3, m4, SHA1): a name, matched whole; its digits alone are
not a term (the "6" of IPv6 would match every line with a 6)."""
RELATED_WEIGHT = 0.5
"""A word the language's table relates to one of the query's ("minimum": "at least") counts at this weight."""


def related_words(word: str) -> list[str]:
    """The words documents use for a question's word (the language's related words): a short word's related words
    are one phrase ("OS": "operating system"), a longer one's are words each."""
    related = load_language().related
    low = word.lower()
    text = related.get(low) or related.get(lemma(low), "")
    return ([text] if len(low) < 3 or low in ("uid", "gid") else text.split()) if text else []


@functools.lru_cache(maxsize=1)
def _lemmas():
    """simplemma's English dictionary, and the forms of each lemma (inverted once, lazily)."""
    import simplemma
    from simplemma.strategies.dictionaries.dictionary_factory import DefaultDictionaryFactory

    table = DefaultDictionaryFactory().get_dictionary(load_language().lemmas)
    forms: dict[str, list[str]] = {}
    for form in table:
        lemma = table[form]
        if form.isalpha() and form.islower():
            forms.setdefault(lemma, []).append(form)
    return simplemma, forms


@functools.lru_cache(maxsize=65536)
def lemma(word: str) -> str:
    word = word.lower()
    if not word.isalpha() or len(word) < 3:
        return word
    simplemma, _ = _lemmas()
    try:
        return simplemma.lemmatize(word, lang=load_language().lemmas).lower()
    except ValueError:
        return word


def forms_of(word: str) -> set[str]:
    """A word, its lemma, the lemma's inflected forms (simplemma's dictionary, irregular verbs), and the
    regular endings."""
    low = word.lower()
    base = lemma(word)
    _, table = _lemmas()
    irregular = load_language().irregular
    out = {low, base, *table.get(base, [])[:24], *irregular.get(low, ()), *irregular.get(base, ())}
    us = us_spelling(low)
    if us != low:  # "colours" also finds "colors"
        out |= forms_of(us)
    if base.isalpha() and len(base) >= 3:
        stem = base[:-1] if base.endswith("e") else base
        plural = base + "es" if base.endswith(("s", "x", "z", "ch", "sh")) else \
            base[:-1] + "ies" if base.endswith("y") and base[-2:-1] not in "aeiou" else base + "s"
        out |= {plural, stem + "ed", stem + "ing"}
    return {f for f in out if len(f) >= 2}


def whole_words(forms, flags: int = 0) -> re.Pattern:
    """A pattern that finds any of `forms` as a whole word: a word in any of its forms (`forms_of`) where lcread
    marks or counts lines by the question's words."""
    alternatives = "|".join(re.escape(f) for f in sorted(forms, key=len, reverse=True))
    return re.compile(rf"(?<![\w])(?:{alternatives})(?![\w])", flags)


def split_identifier(token: str) -> list[str]:
    """`HTTPStatus.IM_A_TEAPOT` -> http, status, im, a, teapot; `_DEFAULT_LIMIT` -> default, limit."""
    return [p.lower() for piece in re.split(r"[_.\-/:]+", token) for p in _PARTS.findall(piece)]


def is_identifier(token: str) -> bool:
    return bool(re.search(r"[_.]", token.strip("._")) or re.search(r"[a-z][A-Z]", token)) and len(token) >= 3


@dataclass
class Term:
    """One thing to look for: a lemma (or a whole identifier) with the surface forms that count as it."""

    key: str
    forms: set[str]
    whole: bool = False
    """An identifier matched as a whole (it also contributes its parts as terms)."""
    joined: bool = False
    """Two adjacent words of the query written as one ("pool size" as POOLSIZE): a guess, often found nowhere."""
    related: bool = False
    """A word related to one of the query's (the language's related words): it counts at RELATED_WEIGHT."""
    idf: float = 1.0
    share: float = 0.0
    """Estimated share of units that hold the term."""


def query_terms(text: str, stopwords: set[str]) -> list[Term]:
    """The terms of a query: content words by lemma, identifiers whole and by part, numbers as they are."""
    terms: dict[str, Term] = {}
    lang = load_language()
    how, asking, table = lang.phrase("how"), lang.asking, lang.related
    related = [lang.how[m.group(1).lower()] for m in how.finditer(text)]
    if lang.phrase("default_ask").search(text):  # "unless a size is given": it asks for a default, documents say so
        related.append("default")
        text = lang.phrase("default_ask_words").sub(" ", text)
    text = how.sub("how", text)

    def add(key: str, forms: set[str], whole: bool = False, joined: bool = False) -> None:
        if key in terms:
            terms[key].forms |= forms
        else:
            terms[key] = Term(key, forms, whole, joined=joined)

    words: list[str] = []
    for match in _WORD.finditer(text):
        token = match.group(0).strip(".'-")
        if not token:
            continue
        low = token.lower()
        if low in table and len(low) < 3:  # "OS", "ID": too short to look for, but their related words are not
            related.append(table[low])
        if low.isalpha() and low not in stopwords and low not in asking and len(low) >= 3:
            if words and words[-1]:  # "pool size" is also `POOLSIZE`, "iter lines" `iter_lines`
                add(words[-1] + low, {words[-1] + low, f"{words[-1]}_{low}"}, whole=True, joined=True)
            words.append(low)
        else:
            words.append("")
        mixed = _MIXED.fullmatch(token)
        if is_identifier(token) or _COMPOUND.fullmatch(token) or mixed:  # a hyphenated name whole too: keyseq-timeout
            for name in {token, *(p for p in token.split(".") if is_identifier(p))}:
                add(name.lower().strip("_"), {name.lower().strip("_")}, whole=True)
        for part in split_identifier(token) if re.search(r"[A-Za-z]", token) else [token]:
            if part in stopwords or part in asking or (len(part) < 3 and not part.isdigit()) or \
                    (mixed and part.isdigit()):
                continue
            if part.isdigit():
                add(part, {part})
            else:
                add(lemma(part), forms_of(part))
                related += [table.get(part.lower(), ""), table.get(lemma(part), "")]
    for word in " ".join(related).split():
        if lemma(word) not in terms and word not in stopwords:
            terms[lemma(word)] = Term(lemma(word), forms_of(word), related=True)
    return list(terms.values())


def text_terms(text: str, index: dict[str, str]) -> list[str]:
    """The query terms a text holds, token by token, in order (None for other tokens is left out, but a gap
    is kept as '' so adjacency can be seen)."""
    out: list[str] = []
    for match in _WORD.finditer(text):
        token = match.group(0).strip(".'-")
        low = token.lower()
        hit = index.get(low)
        if hit is None and (is_identifier(token) or "_" in token or "-" in token or _MIXED.fullmatch(token)):
            # keyseq-timeout: keyseq, timeout; PCRE2: pcre
            parts = split_identifier(token)
            if low in index:
                out.append(index[low])
            out.extend(index.get(p, "") for p in parts)
            continue
        out.append(hit or "")
    return out


@dataclass
class Passage:
    doc: object
    start: int
    end: int
    """Lines start..end; for a window inside one long line, start == end and `chars` is set."""
    text: str
    score: float = 0.0
    chars: tuple[int, int] | None = None
    lines: list[tuple[int, str]] = field(default_factory=list)
    release: tuple[int, str] | None = None
    """The header of the release or log entry the passage's lines belong to (`Sections.release`), if any."""
    values: list[tuple[int, str]] = field(default_factory=list)
    """In code, the lines of the head of the function or class the passage is in that give a value to a name of
    the question's words (`width: int = 36,` in the signature whose docstring the passage is): `_values_above`."""


class Ranker:
    """Scores texts against a query's terms (BM25, with a bonus for query terms side by side)."""

    def __init__(self, terms: list[Term], avg_tokens: float = 60.0):
        self.terms = {t.key: t for t in terms}
        self.index = {f: t.key for t in sorted(terms, key=lambda t: t.whole) for f in t.forms}
        self.avg = avg_tokens

    def spans(self, text: str) -> list[tuple[int, int]]:
        """The character spans of the query's words (any of their forms) in a text."""
        return [(m.start(), m.end()) for m in _WORD.finditer(text)
                if m.group(0).strip(".'-").lower() in self.index
                or any(p in self.index for p in split_identifier(m.group(0)))]

    def cover(self, text: str) -> float:
        """The share of the query's own words, by weight, that a text holds (the guessed joins and related words a
        search adds aside): how much of the question a line speaks to, whatever the other lines say."""
        own = {k: t.idf for k, t in self.terms.items() if not (t.joined or t.related)}
        total = sum(own.values())
        found = set(text_terms(text, self.index))
        return sum(w for k, w in own.items() if k in found) / total if total else 0.0

    def score(self, text: str) -> float:
        found = text_terms(text, self.index)
        if not any(found):
            return 0.0
        length = max(len(found), 1)
        counts: dict[str, int] = {}
        for key in found:
            if key:
                counts[key] = counts.get(key, 0) + 1
        total = 0.0
        for key, tf in counts.items():
            idf = self.terms[key].idf
            total += idf * tf * (K1 + 1) / (tf + K1 * (1 - B + B * length / self.avg))
        pairs = {(a, b) for a, b in zip(found, found[1:]) if a and b and a != b}
        total += 0.5 * sum(min(self.terms[a].idf, self.terms[b].idf) for a, b in pairs)
        return total


def estimate_weights(docs, terms: list[Term]) -> None:
    """Set each term's share of units and IDF from a sample of the documents (all of them when small)."""
    units = 0
    holding = {t.key: 0 for t in terms}
    patterns = {t.key: re.compile("|".join(re.escape(f) for f in sorted(t.forms, key=len, reverse=True)))
                for t in terms}
    for text in _sample(docs):
        for line in text.lower().splitlines():
            for i in range(0, max(len(line), 1), UNIT):
                piece = line[i:i + UNIT]
                if not piece.strip():
                    continue
                units += 1
                for key, pattern in patterns.items():
                    if pattern.search(piece):
                        holding[key] += 1
    n = max(units, 1)
    for t in terms:
        share = holding[t.key] / n
        t.share = share
        t.idf = math.log(1 + (1 - share + 0.5 / n) / (share + 0.5 / n))
        if t.whole:
            t.idf *= 1.5  # an identifier named whole is the most telling term there is
        if t.related:
            t.idf *= RELATED_WEIGHT


def _sample(docs):
    """The documents' text, whole when small together, else evenly spaced blocks of each (and of a sample of
    the documents, in a folder of thousands)."""
    total = sum(d.size for d in docs)
    if total <= SAMPLE_BYTES:
        for d in docs:
            with d.open() as f:
                yield f.read().decode("utf-8", "replace")
        return
    chosen = docs if len(docs) <= 512 else [docs[i * len(docs) // 512] for i in range(512)]
    per_doc = SAMPLE_BYTES // len(chosen)
    block = 1 << 14
    for d in chosen:
        share = max(block, per_doc * d.size * len(chosen) // max(total, 1))
        share = min(share, d.size, 4 * per_doc)
        blocks = max(1, share // block)
        with d.open() as f:
            for i in range(blocks):
                f.seek(d.size * i // blocks)
                data = f.read(block)
                cut = data.find(b"\n")
                yield data[cut + 1 if 0 <= cut < len(data) - 1 and i else 0:].decode("utf-8", "ignore")


PREFILTER_FORMS = 24
"""Word forms ripgrep looks for at most: each costs it time on every byte of a 2 GB log."""


def prefilter(terms: list[Term], units: int) -> list[Term]:
    """The terms ripgrep looks for: the rarest first (real words before joined guesses of the same rarity),
    while together they stay rare enough and few enough to search fast."""
    ranked = sorted(terms, key=lambda t: (t.share, t.joined, -len(t.key)))
    chosen, expected, forms = [], 0.0, 0
    for t in ranked:
        cost = t.share * units
        # joined guesses ("workerserved") alone find nothing: the rarest real word is looked for whatever it costs
        if any(not c.joined for c in chosen) and \
                (expected + cost > PREFILTER_UNITS or forms + len(prefilter_forms(t)) > PREFILTER_FORMS):
            break
        chosen.append(t)
        expected += cost
        forms += len(prefilter_forms(t))
    return chosen


def prefilter_forms(term: Term) -> list[str]:
    """The forms ripgrep looks for, shortest first (a substring search: "limit" finds "limits" and "limited")."""
    forms = sorted({f for f in term.forms if len(f) >= 3 or f.isdigit()}, key=lambda f: (len(f), f))
    kept: list[str] = []
    for f in forms:
        if not any(k in f for k in kept):
            kept.append(f)
    return kept[:6]


@dataclass
class SearchResult:
    text: str
    shown: list[Shown]
    passages: list[Passage]
    candidates: int = 0
    terms: list[Term] = field(default_factory=list)


def search(query: str, docs, cap: int, timeout: float, stopwords: set[str], sections=None,
           place_of=None, top: int = TOP, kind: str | None = None) -> SearchResult:
    """The top passages for `query` over `docs`, rendered under `cap` characters; with `kind` (number, date,
    path), passages that hold such a value rank higher."""
    terms = query_terms(query, stopwords)
    if not terms:
        return SearchResult(f"search needs words to look for (got {query!r})", [], [])
    estimate_weights(docs, terms)
    units = max(1, sum(d.size for d in docs) // UNIT)
    looked = prefilter(terms, units)
    ranker = Ranker(terms)
    spots, candidates = _candidates(docs, looked, ranker, timeout, terms)
    spots = sorted(spots + _assignments(docs, terms, ranker, timeout), key=lambda p: -p.score)
    passages = _passages(spots, ranker, sections, kind)
    for passage in passages[:top]:
        passage.values = _values_above(passage, ranker)
    text, shown = _render(query, terms, passages[:top], candidates, cap, sections, place_of)
    return SearchResult(text, shown, passages[:top], candidates, terms)


def _candidates(docs, terms: list[Term], ranker: Ranker, timeout: float,
                all_terms: list[Term] | None = None) -> tuple[list[Passage], int]:
    """The best-scoring lines (or windows of long lines) that hold a prefilter term: found through a large
    document's word index when it has one, else by ripgrep (which also starts the index's build)."""
    forms = sorted({f for t in terms for f in prefilter_forms(t)})
    if not forms:
        return [], 0
    best: list[tuple[float, int, Passage]] = []
    seen = 0
    order = itertools.count()  # every spot its own place: equal scores never fall through to the Passages

    def take(doc, hit) -> None:
        nonlocal seen
        seen += 1
        for spot in _spots(doc, hit):
            spot.score = ranker.score(spot.text)
            item = (spot.score, -next(order), spot)
            if len(best) < 60:
                heapq.heappush(best, item)
            elif item[:2] > best[0][:2]:
                heapq.heapreplace(best, item)

    scanned = []
    for doc in docs:
        index = _word_index(doc)
        if index is None:
            scanned.append(doc)
            continue
        for taken, hit in enumerate(_indexed_hits(doc, index, all_terms or terms, forms), 1):
            take(doc, hit)
            if taken >= INDEXED_CANDIDATES:
                break
    by_path = {str(d.path): d for d in scanned}
    args = [*BASE_ARGS, "--ignore-case", "--fixed-strings", *[x for f in forms for x in ("-e", f)]]
    if scanned and seen < MAX_CANDIDATES:
        with contextlib.closing(rg_stream(args, scanned, timeout)) as hits:
            for hit in hits:
                doc = by_path.get(hit.path)
                if doc is None or not hit.match:
                    continue
                take(doc, hit)
                if seen >= MAX_CANDIDATES:
                    break
        if hits.refused:  # a document replaced since it was listed: no passage of this search is shown
            raise Changed(hits.refused[0])
    return [p for _, _, p in sorted(best, key=lambda x: (-x[0], -x[1]))], seen


ASSIGNMENTS, ASSIGNMENT_LINES = 10, 2_000
"""In code, the lines giving a value to a name of the question's words that join the candidates (the best by
line and function together), of the first such lines ripgrep finds."""


def _assignments(docs, terms: list[Term], ranker: Ranker, timeout: float) -> list[Passage]:
    """The lines of code that give a value to a name holding one of the question's words, each scored with the
    definitions it is in: a parameter's default (`width: int = 36,` under `def progressbar(`) or a constant
    (`__version__ = "8.1.3"`) states the value a question about that name asks for, on a line that holds only
    the name's word, which the other pass leaves out when the word is common or ranks below the lines holding
    all the question's words."""
    code = [d for d in docs if is_code(d.name)]
    forms = sorted({f for t in terms if not (t.joined or t.related) for f in prefilter_forms(t) if f.isalpha()})
    if not code or not forms:
        return []
    by_path = {str(d.path): d for d in code}
    found: list[tuple[object, int, str]] = []
    with contextlib.closing(rg_stream([*BASE_ARGS, "--ignore-case", "-e", assigning_pattern(forms)], code,
                                      timeout)) as hits:
        for hit in itertools.islice(hits, ASSIGNMENT_LINES):
            doc = by_path.get(hit.path)
            if doc is not None and hit.body is not None and len(hit.body) <= UNIT:
                found.append((doc, hit.number, hit.body.decode("utf-8", "replace").rstrip("\r\n")))
    if hits.refused:
        raise Changed(hits.refused[0])
    heads = _heads(list({id(doc): doc for doc, _, _ in found}.values()), timeout)
    spots = []
    for doc, number, text in found:
        spot = Passage(doc, number, number, text, lines=[(number, text)])
        spot.score = ranker.score("\n".join([text, *_inside(heads.get(str(doc.path), []), number, text)]))
        spots.append(spot)
    return heapq.nlargest(ASSIGNMENTS, spots, key=lambda p: p.score)


def _heads(docs, timeout: float) -> dict[str, list[tuple[int, int, str]]]:
    """The definition heads (`def`, `class`, `function`, ...) of code files, by path, as (line, indent, text):
    one ripgrep pass for all of them (a file's full heading scan is a process of its own)."""
    out: dict[str, list[tuple[int, int, str]]] = {}
    if not docs:
        return out
    with contextlib.closing(rg_stream([*BASE_ARGS, "-e", PATTERNS["code"]], docs, timeout)) as hits:
        for hit in hits:
            if hit.body is not None:
                text = hit.body.decode("utf-8", "replace").rstrip("\r\n")
                out.setdefault(hit.path, []).append((hit.number, _indent(text), text.strip()))
    return out


def _indent(text: str) -> int:
    return len(text) - len(text.lstrip())


def _inside(heads: list[tuple[int, int, str]], line: int, text: str) -> list[str]:
    """The heads of the definitions a line of code is inside: each the nearest above it indented less."""
    depth, out = _indent(text), []
    for number, indent, head in reversed(heads[:bisect.bisect_left(heads, (line,))]):
        if indent < depth:
            out.append(head)
            depth = indent
    return out


INDEX_BLOCKS, INDEXED_CANDIDATES = 24, 5_000
"""Blocks of an indexed document a search reads (the ones holding the most of its terms, about 1.5 MB), and the
lines of them it scores at most (words on every line of a log hold no more than 5,000 lines can tell)."""


def _word_index(doc):
    """The document's word index when it is large enough to have one and it is built; a missing one is started
    in the background (this search scans instead)."""
    import lcread.tools.wordindex as wordindex

    threshold = wordindex.index_bytes()
    if threshold is None or doc.size < threshold:
        return None
    index = wordindex.open_index(doc.path)
    if index is None:
        wordindex.start_build(doc.path)
    return index


def _indexed_hits(doc, index, terms: list[Term], forms: list[str]):
    """The lines of the index's best blocks that hold one of `forms`, as ripgrep would report them (pieces of a
    line longer than a block come with no body: their text is read by offset)."""
    pattern = re.compile(b"|".join(re.escape(f.encode()) for f in sorted(forms, key=len, reverse=True)), re.I)
    blocks, _ = index.best_blocks([(sorted(t.forms), t.idf) for t in terms], INDEX_BLOCKS)
    for block in blocks:
        data = doc.read_bytes(block.offset, block.end)
        line, line_start, at = block.line, block.head, block.offset
        for piece in data.split(b"\n"):
            end = at + len(piece)
            whole = at == line_start and (end < block.end or end == doc.size)
            spans = [(m.start() + at - line_start, m.end() + at - line_start) for m in pattern.finditer(piece)]
            if spans:
                yield Hit(str(doc.path), line, True, line_start, piece if whole else None, spans[:KEEP_SPANS],
                          len(spans))
            if end < block.end:  # a newline follows
                line, line_start, at = line + 1, end + 1, end + 1
            else:
                break


def _spots(doc, hit) -> list[Passage]:
    """A hit as the texts to score: the line, or a window around each match of a long line."""
    if hit.body is not None and len(hit.body) <= 2 * WINDOW + UNIT:
        text = hit.body.decode("utf-8", "replace").rstrip("\r\n")
        return [Passage(doc, hit.number, hit.number, text, lines=[(hit.number, text)])]
    out = []
    windows = []
    for s, e in hit.spans[:50]:
        lo, hi = max(0, s - WINDOW), e + WINDOW
        if windows and lo <= windows[-1][1]:
            windows[-1] = (windows[-1][0], hi)
        else:
            windows.append((lo, hi))
    for lo, hi in windows[:12]:
        data = hit.body[lo:hi] if hit.body is not None else doc.read_bytes(hit.offset + lo, hit.offset + hi)
        data = data.split(b"\n", 1)[0]
        text = data.decode("utf-8", "ignore")
        before = hit.body[:lo] if hit.body is not None else None
        start = len(before.decode("utf-8", "ignore")) if before is not None else doc.chars_in(hit.offset, hit.offset + lo)
        out.append(Passage(doc, hit.number, hit.number, text, chars=(start, start + len(text)),
                           lines=[(hit.number, text)]))
    return out


def _passages(spots: list[Passage], ranker: Ranker, sections=None, kind: str | None = None) -> list[Passage]:
    """Each spot widened to a passage around it and scored again with its heading path (a passage under
    "class StreamReader > def __init__" is about StreamReader); overlapping passages keep the best."""
    out: list[Passage] = []
    for spot in spots:
        passage = spot if spot.chars else _widen(spot)
        heading = sections(passage.doc).enclosing(passage.start) if sections else None
        passage.release = release = sections(passage.doc).release(passage.start) if sections else None
        where = passage.doc.name + ("\n" + heading[1] if heading else "")
        said = "\n".join(t for _, t in passage.lines or [(0, passage.text)] if not TOC_LEADER.search(t))
        passage.score = max(ranker.score(said + "\n" + where) if said else 0.0,
                            0.0 if TOC_LEADER.search(spot.text) else spot.score)  # a table of contents says nothing
        if _defines_asked(passage, ranker):
            passage.score *= DEFINITION_BONUS
        if kind and holds_value(said + ("\n" + release[1] if release else ""), kind):  # the release it is in
            passage.score *= VALUE_BONUS
        if any(p.doc is passage.doc and p.start <= passage.end and passage.start <= p.end and
               (p.chars is None or passage.chars is None or _overlap(p.chars, passage.chars))
               or p.text == passage.text for p in out):  # overlapping, or a copy (a vendored file)
            continue
        out.append(passage)
    return sorted(out, key=lambda p: -p.score)


DEFINITION_BONUS = 1.5
"""A passage of code that gives a stated value to a name made only of the question's words (`__version__` for
"which version", `width` for "what width") scores this much more: it is where that value is said."""


def _defines_asked(passage: Passage, ranker: Ranker) -> bool:
    if passage.chars or not is_code(passage.doc.name):
        return False
    for _, text in passage.lines:
        for name in assigned_names(text):
            parts = [p for p in split_identifier(name.removeprefix("self.")) if len(p) >= 3]
            if parts and all(p in ranker.index or lemma(p) in ranker.terms for p in parts):
                return True
    return False


VALUES_ABOVE, VALUES_BYTES, VALUE_LINES = 200, 16_000, 2
"""Lines (and bytes) above a passage of code looked at for its function's head, and value lines shown at most."""


def _values_above(passage: Passage, ranker: Ranker) -> list[tuple[int, str]]:
    """The lines of the head of the function or class a passage of code is in (within VALUES_ABOVE lines above
    it), up to the first definition inside it, that give a value (`assigning_pattern`) to a name holding one of
    the question's own words: a parameter's default, stated in the signature above the docstring that documents
    it; a class's attribute (not a method's lines: a passage in one method is not about another's)."""
    if passage.chars or not is_code(passage.doc.name):
        return []
    forms = sorted({f for t in ranker.terms.values() if not (t.joined or t.related) for f in t.forms
                    if f.isalpha() and len(f) >= 3})
    above = passage.doc.read_lines(max(1, passage.start - VALUES_ABOVE), passage.start - 1, max_bytes=VALUES_BYTES)
    rows = [(r.number, r.text) for r in above]
    inside = min((_indent(t) for _, t in passage.lines if t.strip()), default=0)  # its head is indented less
    heads = [i for i, (_, text) in enumerate(rows) if re.match(PATTERNS["code"], text)]
    enclosing = [i for i in heads if _indent(rows[i][1]) < inside]
    if not forms or not enclosing:
        return []
    own = rows[enclosing[-1]:min([i for i in heads if i > enclosing[-1]], default=len(rows))]  # not a method's
    pattern = re.compile(assigning_pattern(forms), re.I)
    return [(n, t) for n, t in own if len(t) <= UNIT and pattern.search(t)][:VALUE_LINES]


def _overlap(a: tuple[int, int], b: tuple[int, int]) -> bool:
    return a[0] <= b[1] and b[0] <= a[1]


def _widen(spot: Passage) -> Passage:
    """The lines around a spot, up to PASSAGE characters: first the lines after it (a heading or a name is
    often followed by what it says), then before, within its paragraph (a blank line or a page mark ends it)."""
    doc, line = spot.doc, spot.start
    rows = {line: spot.text}
    size = len(spot.text)
    lo = hi = line
    after = list(doc.read_lines(line + 1, min(doc.lines, line + 8), max_bytes=PASSAGE))
    before = list(doc.read_lines(max(1, line - 6), line - 1, max_bytes=PASSAGE))[::-1]
    for direction in (after, before):
        for row in direction:
            text = row.text
            if not text.strip() or text.startswith("[page ") or size + len(text) > PASSAGE:
                break
            rows[row.number] = text
            size += len(text) + 1
            lo, hi = min(lo, row.number), max(hi, row.number)
    lines = sorted(rows.items())
    return Passage(doc, lo, hi, "\n".join(t for _, t in lines), lines=lines)


def _render(query: str, terms: list[Term], passages: list[Passage], candidates: int, cap: int, sections,
            place_of) -> tuple[str, list[Shown]]:
    words = ", ".join(t.key for t in sorted(terms, key=lambda t: t.share)[:8])
    if not passages:
        return (f"search found no passage with any of: {words}. Try other words for the same thing.", [])
    head = f"search {query!r}: the {len(passages)} best passages of {candidates:,} lines matched " \
           f"(terms, rarest first: {words})"
    out, shown, size = [head], [], len(head)
    for n, p in enumerate(passages, 1):
        section = sections(p.doc).enclosing(p.start) if sections else None
        place = place_of(p.doc.name, p.start) if place_of else None
        source = getattr(p.doc.source, "source", None)
        if place and source and place.startswith(source):  # a compressed file's own name says nothing new
            place = place[len(source):].lstrip(", ") or None
        where = f"{p.doc.name}:{p.start}" + (f"-{p.end}" if p.end > p.start else "")
        release = p.release if p.release and not p.chars and p.release[0] < p.start else None
        label = " · ".join(filter(None, [where, place if place and place != (section or (0, ""))[1] else None,
                                         section[1][:120] if section and section != release else None]))
        rows = [f"[{n}] {label}"]
        pieces = []
        if release:  # the release (or log entry) these lines belong to, shown with them as a line of their own
            rows.append(f"{release[0]}: {release[1]}")
            pieces.append(Shown(p.doc.name, release[0], 0, release[1], kind="context", section=section))
        for number, text in p.values:  # what the function above these lines gives the asked name
            if any(x.doc == p.doc.name and x.line == number for x in shown):
                continue
            rows.append(f"{number}: {text}")
            pieces.append(Shown(p.doc.name, number, 0, text, kind="context", section=section))
        for number, text in p.lines:
            if p.chars:
                start, end = p.chars
                rows.append(f"{number}: [chars {start:,}-{end:,}] …{text}…")
                pieces.append(Shown(p.doc.name, number, start, text, kind="match", section=section))
            else:
                rows.append(f"{number}: {text}")
                pieces.append(Shown(p.doc.name, number, 0, text, kind="match", section=section))
        block = "\n".join(rows)
        if size + len(block) + 1 > cap:
            if n == 1:
                block = block[: max(cap - size - 1, 0)]
                out.append(block)
                shown += [Shown(x.doc, x.line, x.start, x.text[: len(block)], x.kind, x.section) for x in pieces[:1]]
            break
        out.append(block)
        shown += pieces
        size += len(block) + 1
    return "\n".join(out), shown
