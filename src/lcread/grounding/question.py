"""What a question asks for, read from its wording: the kind of question, the kind of answer, and the
terms that distinguish the fact asked about from its look-alikes. Pure functions, no model."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from enum import Enum

from lcread.grounding.patterns import us_spelling

STOPWORDS = set("""a an the of in on at to for from by with about into over under and or but nor not no is are
was were be been being am do does did done has have had having will would shall should can could may might
must what which who whom whose when where why how that this these those there here it its it's they them
their he she his her him we our you your i me my as if then than so such any all each every some many much
more most other another same own only just also very both either neither per via one ones thing things
give gives given tell say said says name named called mentioned listed appear appears appeared
number numbers value values along across after before during between since until among within without
behind beyond near upon onto toward towards against""".split())

NUMBER_WORDS = {w: i for i, w in enumerate(("zero one two three four five six seven eight nine ten eleven twelve "
                                            "thirteen fourteen fifteen sixteen seventeen eighteen nineteen twenty")
                                           .split())}
_MONTHS = ("january february march april may june july august september october november december "
           "jan feb mar apr jun jul aug sep sept oct nov dec").split()

_NUMBER_ASK = re.compile(
    r"\bhow (many|much|long|old|big|large|far|often)\b|(?:\b(?:what|which)\b|^\s*(?:list|give|name|tell|state|show|"
    r"find|report)\b)[^?]*?\b(number|numbers|amount|count|"
    r"total|percentage|percent|sum|price|cost|size|limit|age|port|code|version|rate|score|figure|quantity|"
    r"capacity|population|length|width|height|weight|temperature|speed|duration|timeout|delay|interval|threshold|retries|"
    r"maximum|minimum|max|min|largest|smallest|highest|lowest|mode|permissions?|range|ranges|uids?|gids?|ids?)\b",
    re.I)
_UNIT_ASK = re.compile(r"\bin (bytes|kilobytes|megabytes|gigabytes|kb|mb|gb|bits|seconds|milliseconds|microseconds|"
                       r"minutes|hours|days|weeks|months|years|characters|chars|lines|pixels|points|inches|centimeters|"
                       r"millimeters|meters|metres|kilometers|miles|percent|degrees)\b|\bwhat percentage\b|"
                       r"\bhow (long|large|big|wide|tall|high|deep|heavy|fast|many|much)\b", re.I)
"""A number asked for by its unit ("the longest line, in bytes"), whatever the rest of the question says."""
NAME_ASK = re.compile(r"\b(?:the name of|what (?:is|was) (?:it|they) called|(?:which|what) (?:tool|command|program|"
                       r"utility|package|function|method|class|module|option|flag|variable|constant|attribute|field|group|user name|file name|"
                       r"library|application|script|service|daemon)s?|whose)\b", re.I)
"""A question asking for a name, whatever numbers it mentions ("the name of the group whose gid ..."): a bare
number cannot answer it ("which tool" is not "999")."""
_BOUND = re.compile(r"\b(max|min|maximum|minimum|largest|smallest|longest|shortest|limit|at most|at least)\b", re.I)
"""A bound is one number, even of a size ("the maximum size of a file")."""
_PAIR_ASK = re.compile(r"\b(?:range|ranges|dimensions?|how (?:big|large)|wide and (?:high|tall)|width and height|"
                       r"between which)\b|(?<!\bpool )(?<!\bchunk )(?<!\bbuffer )(?<!\bblock )(?<!\bbatch )"
                       r"(?<!\bfile )(?<!\bheap )(?<!\bstack )(?<!\bqueue )(?<!\bcache )(?<!\bstep )(?<!\bfont )"
                       r"(?<!\bsample )(?<!\bpacket )(?<!\bkey )(?<!\bword )\bsizes? of\b", re.I)
"""A number asked for as a pair: a range (1000-59999), a size as a whole (10 inches x 7 inches, 79 by 24); "the
pool size" (a count or bytes: pool, chunk, buffer, block, file...) names one number, "the size of the output"
two."""
_DEFAULT_ASK = re.compile(r"\bdefault(?:s|ed)?\b|\bunless\b[^?,;]*\b(?:told|set|specified|given|configured|changed|"
                          r"stated|otherwise|enabled|selected|chosen|requested|used)\b|"
                          r"\b(?:when|if) (?:no|none|nothing)\b[^?]*\b(?:given|set|specified|passed|provided|"
                          r"configured)\b|"
                          r"\bout of the box\b|\binitial(?:ly)? value\b", re.I)
"""A question about a default value: "by default", "unless told otherwise", "when no chunk size is given"."""
_UNLESS_GENERIC = {"size", "length", "value", "number", "amount", "count", "limit", "width", "height", "name", "path",
                   "location", "directory", "time", "timeout", "mode", "format", "type", "option", "options",
                   "otherwise", "told"}
"""Words of an "unless" clause that name the asked thing itself ("How big ... unless a size is given") or nothing
("unless told otherwise"): no case is set aside by them."""
_UNLESS = re.compile(r"\bunless\b([^?,;]*)", re.I)
"""The case a question sets aside ("unless truecolor is set"): a sentence about it describes the other case."""
DEFAULT_STATED = re.compile(r"(?<![a-z])default(?:s|ed)?(?![a-z])|\binitial(?:ly)?\b|\bunless\b|"
                            r"^\s*(?:async\s+)?def\s+\w+\s*\(.*\b\w+\s*=\s*[^=,)\s]", re.I)
"""A sentence stating a default: in prose ("The default value is 500", "initially"), in a Python signature
(`def iter_content(self, chunk_size=1)`: a keyword argument's value is its default), in a name
(`DEFAULT_REDIRECT_LIMIT`)."""
_PATH_ASK = re.compile(r"\b(which|what|in which|in what|into which)\s+(directory|directories|folder|folders|file|files|"
                       r"path|paths|location)\b|\bwhere\b.*\b(locat|stor|sav|kept|keep|plac|install|put|go|goes|"
                       r"live|lives|found|written|write)\w*", re.I)
"""A file system place asked for ("Which directory ...", "Where does bash save ..."): the answer is a path."""
_DATE_ASK = re.compile(r"^\s*when\b|\b(what|which|in which|in what)\s+(year|date|day|month|time|decade|century)\b"
                       r"|\bwhen (did|was|were|is|will|does|do)\b", re.I)
_PERSON_ASK = re.compile(r"^\s*(who|whom|whose)\b|\b(which|what) (person|man|woman|author|writer|director|"
                         r"actor|actress|player|king|queen|president|officer|courier|captain)\b", re.I)
_WHERE_ASK = re.compile(r"\b(which|what|in which|in what|under which|under what)\s+(section|chapter|heading|"
                        r"function|method|class|part|article|clause|page|subsection|paragraph|definition)\b", re.I)
_PAGE_ASK = re.compile(r"\b(which|what)\s+pages?\b", re.I)
_YESNO = re.compile(r"^\s*(is|are|was|were|does|do|did|can|could|has|have|had|will|would|should|shall|may)\b", re.I)
_SUMMARY = re.compile(r"^\s*(summari[sz]e|describe|explain|why|discuss|outline|compare|give an overview|"
                      r"what (are|is) the main|how does|how do)\b", re.I)
_HOW_MANY = r"(?:\bhow many|\b(?:the|total)\s+(?:total\s+)?number of|\bthe count of)"
"""Asking for a count: "how many X", "the (total) number of X", "the count of X"."""
_COUNT = re.compile(rf"\bhow many occurrences\b|{_HOW_MANY}\b.*\b(appear|appears|occur|occurs|mentioned|"
                    r"log|logged|logs|record|recorded|listed|are there|were there|reported|entries|lines)\b", re.I)
"""Counting what the documents hold. "How many times does the adapter retry?" asks for a stated number, not for
the lines that name the adapter."""
_ALL = re.compile(r"\b(all|every|each|list)\b", re.I)
_PLURAL_ASK = re.compile(r"^\s*(which|what)\s+(\w+)\b", re.I)
_QUOTED = re.compile(r"[\"“‘«]([^\"”’»]{2,200})[\"”’»]|(?<![A-Za-z])'([^']{2,200})'(?![A-Za-z])")
_CALL = re.compile(r"[A-Za-z_][\w.]*\([^()\s]{0,40}\)")
_TOKEN = re.compile(r"__\w+__|(?<![\w/])~?/[A-Za-z0-9][\w.\-/]*[A-Za-z0-9]|[A-Za-z0-9][\w.\-/:]*[A-Za-z0-9]|[A-Za-z0-9]")


class Kind(str, Enum):
    """What a question asks for, as far as its sufficiency predicate goes (kinds.KINDS has each one's parts)."""

    LOOKUP = "lookup"  # one fact
    PARTS = "parts"  # several values asked together, one per named part
    ALL = "all"  # every value of one thing
    LIST = "list"  # several items, possibly through a chain
    COUNT = "count"
    WHERE = "where"  # the section a quoted text sits in
    PAGE = "page"
    CHOICE = "choice"  # multiple choice, or "X or Y?"
    YESNO = "yesno"
    SUMMARY = "summary"  # open: no predicate applies


@dataclass
class Profile:
    """What the question asks: the route its sufficiency predicate takes, and what an answer needs."""

    question: str
    kind: Kind
    answer_type: str
    """number, date, person, path, section or text."""
    terms: list[str] = field(default_factory=list)
    """Names, ids, quoted strings, numbers: each must sit with the answer in the cited evidence."""
    keywords: list[str] = field(default_factory=list)
    """Content words, used when the question names nothing distinctive (at least one must sit with it)."""
    parts: list[str] = field(default_factory=list)
    """For kind 'parts': the terms each of which needs its own value."""
    quote: str | None = None
    """For kind 'where': the quoted text whose place is asked."""
    options: list[tuple[str, str]] = field(default_factory=list)
    comparison: bool = False
    """An either-or question ("Which is older, X or Y?"): the evidence can show both facts, not the
    comparison, so no predicate decides it."""
    count_words: list[str] = field(default_factory=list)
    """For kind 'count': the words of what is counted ("gale warnings")."""
    values: int = 1
    """How many values one answer states: 2 for a range or a size asked for as a whole."""
    default: bool = False
    """The question asks for a default (the value when nothing is set): a sentence that says it states one."""
    set_aside: list[str] = field(default_factory=list)
    """The content words of the case the question sets aside ("unless truecolor is set": truecolor): they find the
    passage, but a sentence is not a better answer for holding them."""


def classify(question: str, options: list[tuple[str, str]] | None = None) -> Profile:
    q = " ".join(question.split())
    quotes = [a or b for a, b in _QUOTED.findall(q)]
    terms = distinguishing_terms(q, quotes)
    keywords = [w for w in content_words(q) if not any(w in t.lower() for t in terms)]
    answer_type = _answer_type(q)
    comparison = False
    if not options:
        options = either_or(q)
        if options:
            comparison = True
            terms = [t for t in terms if not any(norm_eq(t, text) or t in text for _, text in options)]
    profile = Profile(q, Kind.LOOKUP, answer_type, terms, keywords, options=list(options or []), comparison=comparison)
    from lcread.grounding.kinds import KINDS  # the kinds, in the order they are recognised

    for kind, spec in KINDS.items():
        shape = spec.recognise(profile, quotes)
        if shape is not None:
            profile.kind = kind
            for name, value in shape.items():
                setattr(profile, name, value)
            break
    if profile.kind is Kind.LOOKUP and profile.answer_type == "number" and _PAIR_ASK.search(q) and not _BOUND.search(q):
        profile.values = 2
    profile.default = bool(_DEFAULT_ASK.search(q))
    rest = {w.lower() for w in content_words(_UNLESS.sub(" ", q))}
    profile.set_aside = [w for m in _UNLESS.finditer(q) for w in content_words(m.group(1))
                         if w.lower() not in rest and w.lower() not in _UNLESS_GENERIC]
    return profile


# --- what recognises each kind (kinds.KINDS lists them in the order they are tried) ------------------------------
# Each takes the question's profile (as a lookup) and its quoted strings; it returns None when the question is not
# of the kind, else the profile's fields the kind sets.

def is_choice(p: Profile, quotes: list[str]) -> dict | None:
    return {} if p.options else None


def is_page(p: Profile, quotes: list[str]) -> dict | None:
    return {"answer_type": "number"} if _PAGE_ASK.search(p.question) else None


def is_where(p: Profile, quotes: list[str]) -> dict | None:
    if not (_WHERE_ASK.search(p.question) and quotes):
        return None
    return {"answer_type": "section", "quote": max(quotes, key=len), "terms": [t for t in p.terms if t not in quotes]}


def is_summary(p: Profile, quotes: list[str]) -> dict | None:
    return {} if _SUMMARY.search(p.question) else None


def is_count(p: Profile, quotes: list[str]) -> dict | None:
    return {"answer_type": "number", "count_words": _counted(p.question)} if _COUNT.search(p.question) else None


def is_yesno(p: Profile, quotes: list[str]) -> dict | None:
    q = p.question
    return {"answer_type": "yesno"} if _YESNO.search(q) and not _NUMBER_ASK.search(q) else None


def is_parts(p: Profile, quotes: list[str]) -> dict | None:
    parts = _parts(p.question, p.terms)
    return {"parts": parts, "count_words": _counted(p.question)} \
        if len(parts) >= 2 and (_asks_plural(p.question) or re.search(r"\bas well as\b", p.question)) else None


def is_all(p: Profile, quotes: list[str]) -> dict | None:
    """"List all the values given for X": every value of a named term. When the question names only a value
    ("all the variables that end up holding 6551598"), it asks for the things linked to it: a list."""
    if p.terms and all(_VALUE_TERM.fullmatch(t) for t in p.terms):
        return None
    return {"count_words": _counted(p.question)} if _asks_plural(p.question) and _ALL.search(p.question) else None


_VALUE_TERM = re.compile(r"[\d.,:/-]+")


def is_list(p: Profile, quotes: list[str]) -> dict | None:
    return {"count_words": _counted(p.question)} if _asks_plural(p.question) else None


def is_lookup(p: Profile, quotes: list[str]) -> dict | None:
    return {"count_words": _counted(p.question)}


_EITHER = re.compile(r"(?:,|\b(?:between|of|is|was|are|were|has|have|did|does|do))\s+((?:the\s+)?[A-Z0-9][^,?]{0,80}?)"
                     r"\s+or\s+((?:the\s+)?[A-Z0-9][^,?]{0,80}?)\s*\?\s*$")


def either_or(q: str) -> list[tuple[str, str]]:
    """"Which is older, the Ritz or the Savoy?": the two alternatives, as options A and B."""
    m = _EITHER.search(q)
    if not m or not re.match(r"\s*(which|who|what|whose|is|are|was|were|did|does|do)\b", q, re.I):
        return []
    return [("A", m.group(1).strip()), ("B", m.group(2).strip())]


def norm_eq(a: str, b: str) -> bool:
    return a.strip().lower() == b.strip().lower()


def _counted(q: str) -> list[str]:
    """What "how many" counts: "How many gale warnings were logged ..." -> gale, warnings."""
    head = re.search(_HOW_MANY + r"\s+(.+?)(?:\s+(?:did|does|do|are|were|is|was|have|has|had|in|on|at|for|by|"
                     r"of|were|will|would|can|could|logged|recorded|listed|reported|mentioned|noted|filed|kept)\b"
                     r"|\?|$)", q, re.I)
    words = content_words(head.group(1)) if head else []
    return [w for w in words if w not in ("times", "occurrences")]


def _answer_type(q: str) -> str:
    q = re.sub(r"(?<=\w)_(?=\w)", " ", q)  # chunk_size asks for a size
    asks = q
    if re.match(r"\s*when\b[^?]*?,\s*(how|what|which|who|where|is|are|does|do|can|should|must)\b", q, re.I):
        asks = q.split(",", 1)[1]  # "When mapfile is given -C, how often ...?": the clause after asks
    if _DATE_ASK.search(asks) and not re.search(r"\bin (seconds|milliseconds|minutes|hours|days)\b", q, re.I):
        return "date"
    if NAME_ASK.search(asks):
        return "text"
    if _NUMBER_ASK.search(q) or _UNIT_ASK.search(q):
        return "number"
    if _PERSON_ASK.search(q):
        return "person"
    if _PATH_ASK.search(q):
        return "path"
    return "text"


def _asks_plural(q: str) -> bool:
    m = _PLURAL_ASK.match(q)
    if m and m.group(2).lower().endswith("s") and m.group(2).lower() not in ("is", "was", "does", "has", "this"):
        return True
    return bool(re.search(r"\b(what|which) are\b|\bboth\b|\blist\b|\b(numbers|values|names|dates|amounts)\b", q, re.I))


def distinguishing_terms(q: str, quotes: list[str], whole: bool = False) -> list[str]:
    """Quoted strings, ids (tokens with digits, hyphens, underscores or dots inside), CamelCase words,
    capitalised names (with a number that follows, as in "Pier 7"), and numbers. A dotted name counts by
    its last part (HTTPStatus.IM_A_TEAPOT by IM_A_TEAPOT) unless `whole`."""
    terms: list[str] = list(quotes) + _CALL.findall(q)  # code: valid(x), os.path.join()
    found = [m for m in _TOKEN.finditer(q) if not any(m.group(0) in c for c in _CALL.findall(q))]
    words = [m.group(0) for m in found]

    def joined(i: int) -> bool:  # the next word follows after spaces only (not across punctuation)
        return q[found[i].end():found[i + 1].start()].strip() == ""

    i = 0
    while i < len(words):
        w = words[i]
        if any(w in t for t in quotes):
            i += 1
            continue
        if _is_id(w):
            dotted = "." in w and not whole and not re.fullmatch(r"[\d.]+", w)
            terms.append(w.rsplit(".", 1)[-1] if dotted else w)
        elif i == 0 and found[0].start() == len(q) - len(q.lstrip()) and _common_word(w) and not (
                i + 1 < len(words) and joined(0) and words[1][0].isupper()):
            pass  # "According to the latest figures, ...": capitalised only because it begins the question
        elif w[0].isupper() and w.lower() not in STOPWORDS and not re.fullmatch(r"[A-Z]{1,5}s?", w):  # OS, IDs
            phrase = [w]
            while i + 1 < len(words) and joined(i) and (words[i + 1][0].isupper() or
                                                         (words[i + 1].isdigit() and len(words[i + 1]) < 4)):
                i += 1
                phrase.append(words[i])
            terms.append(" ".join(phrase))
        i += 1
    seen, out = set(), []
    for t in terms:
        if t.lower() not in seen and t.lower() not in STOPWORDS:
            seen.add(t.lower())
            out.append(t)
    return out


def _common_word(word: str) -> bool:
    """Whether a capitalised word is an ordinary English word (in simplemma's dictionary, as a form or a lemma),
    not a name."""
    from lcread.tools.search import _lemmas

    _, forms = _lemmas()
    low = word.lower()
    return word[1:].islower() and (low in forms or _is_form(low))


def _is_form(word: str) -> bool:
    from lcread.tools.search import lemma

    return lemma(word) != word


def _is_id(w: str) -> bool:
    if re.fullmatch(r"\d[\d,.]*", w):
        return True  # a number in the question is a term too
    return bool(re.search(r"\d", w) or re.search(r"\w[-_.]\w", w) or re.search(r"[a-z][A-Z]", w)
                or re.fullmatch(r"__\w+__", w)  # a dunder name: __version__, __init__
                or re.match(r"~?/\w", w))  # a path: /opt, ~/.bashrc


def content_words(text: str) -> list[str]:
    words = [re.sub(r"['’]s?$", "", w.lower()) for w in re.findall(r"[A-Za-z][A-Za-z'’-]+", text)]
    return list(dict.fromkeys(w for w in words if w not in STOPWORDS and len(w) >= 3))


def _parts(q: str, terms: list[str]) -> list[str]:
    """Terms joined by 'and' or commas: "for A and B", "of A, B and C"."""
    named = [t for t in terms if not re.fullmatch(r"[\d,.]+", t)]
    if len(named) < 2:
        return []
    joined = [t for t in named if re.search(rf"{re.escape(t)}\s*(,|\band\b|\bas well as\b)|"
                                            rf"(,|\band\b|\bas well as\b){_JOINED}\s*{re.escape(t)}", q)]
    return joined if len(joined) >= 2 else []


_JOINED = r"(?:\s+(?:that|those|the ones?))?(?:\s+(?:of|for|to|in|at|belonging to))?"
"""What may come between a joining word and the next part: "and to B", "as well as that of B"."""


def stem(word: str) -> str:
    """A crude, conservative stem, matched as a word prefix: 'embed' finds 'embedded', 'warnings' finds
    'warning', 'deliveries' finds 'delivery', but 'musical' does not find 'Musik'; British spelling read as
    American ('colours' finds 'colors')."""
    word = us_spelling(word.lower())
    for ending, instead in (("ies", "y"), ("sses", "ss"), ("s", "")):
        if word.endswith(ending) and len(word) > len(ending) + 2 and not word.endswith("ss"):
            word = word[: -len(ending)] + instead
            break
    return word[:max(5, len(word) - 2)] if len(word) > 6 else word


_OPTION = re.compile(r"(?:^|\s|\()([A-J])[\)\.:]\s+(.+?)(?=\s+\(?[A-J][\)\.:]\s+|$)", re.S)


def parse_options(question: str, given: list[str] | None = None) -> tuple[str, list[tuple[str, str]]]:
    """Options from --options ("A) Anne" or plain texts lettered in order) or listed in the question.

    Returns the question without its listed options, and (letter, text) pairs; no options = open-ended.
    """
    if given:
        pairs = []
        for i, item in enumerate(given):
            m = re.match(r"\s*\(?([A-Ja-j])[\)\.:]\s*(.+)", item)
            pairs.append((m.group(1).upper(), m.group(2).strip()) if m else (chr(65 + i), item.strip()))
        return question, pairs
    first = re.search(r"(?:^|\s|\()A[\)\.:]\s+", question)
    if not first:
        return question, []
    pairs = [(m.group(1), m.group(2).strip()) for m in _OPTION.finditer(question[first.start():])]
    letters = [p[0] for p in pairs]
    if len(pairs) < 2 or letters != [chr(65 + i) for i in range(len(pairs))]:
        return question, []
    return question[:first.start()].strip(), pairs
