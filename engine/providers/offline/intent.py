"""What the offline agent reads out of a request for action.

"List the files in the repository and read committed.txt" is two requests: a verb and its
object each, in order. A general MCP server (files, git, a knowledge graph) is driven by such
requests, not by code questions, so the agent splits the prompt into imperative clauses and
keeps, per clause, its verb, its object words (to choose a tool) and its literal values (quoted
text, file names, names, types, numbers: to fill the tool's arguments). Questions ("where is X
computed?") are left to the code-reading policy. Pure functions, testable on plain strings.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_TOKEN = re.compile(r"[A-Za-z][a-z]+|[A-Z]+(?![a-z])|[a-z]+|\d+")
# Imperative verbs a tool request starts with; a tool's own leading name word counts too.
VERBS = frozenset(
    "list read show get display print view open fetch retrieve create make add insert write save store "
    "put record update edit modify change replace rename move copy delete remove drop erase search find "
    "look query lookup locate echo repeat say commit checkout switch stage unstage reset diff compare "
    "compute calculate sum count run start stop toggle trigger send tell describe summarize check "
    "inspect download upload compress zip gzip fetch give enumerate".split()
)
# What a verb may be called in a tool's name ("show the log" ~ git_log's "Shows ...", get_*).
SYNONYMS: dict[str, frozenset[str]] = {
    k: frozenset(v.split())
    for k, v in {
        "show": "get list read display view print open",
        "display": "show get list read view print",
        "view": "show get read open display",
        "print": "show get read echo display",
        "get": "read fetch retrieve show list open",
        "fetch": "get read retrieve download",
        "retrieve": "get read fetch",
        "give": "get show",
        "tell": "get show describe",
        "read": "open get show view cat",
        "open": "read get show view",
        "list": "show get tree enumerate",
        "enumerate": "list",
        "create": "add new make insert write put",
        "make": "create add new",
        "add": "create insert new put sum",
        "insert": "add create put",
        "write": "create save put edit",
        "save": "write store create",
        "store": "save write create add",
        "record": "add create commit",
        "update": "edit modify change set replace",
        "edit": "update modify change replace write",
        "modify": "edit update change",
        "change": "edit update modify set",
        "replace": "edit update",
        "rename": "move",
        "move": "rename",
        "delete": "remove drop erase",
        "remove": "delete drop erase",
        "drop": "delete remove",
        "erase": "delete remove",
        "search": "find query lookup look",
        "find": "search query lookup look get",
        "look": "search find lookup query",
        "lookup": "search find look query",
        "query": "search find",
        "locate": "find search",
        "echo": "repeat say",
        "repeat": "echo",
        "say": "echo",
        "switch": "checkout",
        "checkout": "switch",
        "stage": "add",
        "compare": "diff",
        "compute": "calculate sum get",
        "calculate": "compute sum get",
        "sum": "add compute",
        "start": "run trigger launch",
        "run": "start trigger execute",
        "trigger": "start run",
        "zip": "compress gzip",
        "compress": "gzip zip",
    }.items()
}
_POLITE = re.compile(
    r"^(?:(?:please|kindly|now|also|then|first|next|finally|and|just|lastly)\b[\s,]*"
    r"|(?:can|could|would|will)\s+you\s+(?:please\s+)?|i\s+(?:want|need|would like)\s+(?:you\s+)?to\s+)+",
    re.IGNORECASE,
)
_POLITE_QUESTION = re.compile(r"^(?:please\s+)?(?:can|could|would|will)\s+you\b", re.IGNORECASE)
_CONNECTOR = re.compile(
    r"(\s*,?\s*\b(?:and then|and also|and|then|after that|afterwards|followed by)\b\s*|\s*[,;]\s+)"
)
_CITATION_FORMAT = re.compile(r"\b(?:file|path):(?:line|lines|start-end)\b", re.IGNORECASE)
_QUOTED = re.compile(r"""(?<![\w])(?:'([^'\n]+)'|"([^"\n]+)"|`([^`\n]+)`|“([^”\n]+)”|‘([^’\n]+)’)(?![\w])""")
_URL = re.compile(r"\b(?:https?|file|data)://\S+|\bdata:[\w/+.-]+[;,]\S+")
_PATH = re.compile(
    r"(?<![\w@:/.~-])("
    r"(?:~?/|\.{1,2}/)?(?:[\w.-]+/)*[\w-][\w.-]*\.[A-Za-z][A-Za-z0-9]{0,7}"  # a file name, maybe in folders
    r"|(?:~|\.{1,2})?/[\w.-]+(?:/[\w.-]+)*/?"  # an absolute or ./relative folder
    r"|(?:[\w-][\w.-]*/)+(?:[\w.-]+)?"  # folder/ or folder/sub
    r")(?![\w/-])"
)
_NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?![\w])")
_SHA = re.compile(r"\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,40}\b")
_NAMED = re.compile(r"\b(?:named|called|titled)\s+|\bnames?\s*[:=]\s*", re.IGNORECASE)
_NAME_TOKEN = re.compile(r"""'[^'\n]+'|"[^"\n]+"|[\w.@-]+""")
_TYPE = re.compile(
    r"\b(?:of|with)\s+(?:the\s+)?(?:type|kind)\s+['\"]?([\w-]+)|\b(?:type|kind)\s*[:=]\s*['\"]?([\w-]+)"
    r"|\bas\s+an?\s+([\w-]+)",
    re.IGNORECASE,
)
_KIND_NOUN = re.compile(r"\b(?:an?|the|new)\s+([\w-]+)\s+(?:named|called|titled)\b", re.IGNORECASE)
_TOPIC = re.compile(r"\b(?:for|about|matching|containing|saying|that says)\s+(.+)$", re.IGNORECASE)
# Where the direct object ends: "an entity named X *with* the observation Y" is about entities.
_MODIFIER = re.compile(
    r"\b(?:with|using|having|containing|including|that|which|who|whose|sorted)\b", re.IGNORECASE
)
_LEADING = re.compile(r"^(?:(?:back|me|us|out|up|the|a|an|this|that|these|those|some)\b\s*)+", re.IGNORECASE)
_OBJECT_STOP = frozenset(
    "a an the and or of to in on at by for from with into onto as is are be it its this that these those "
    "each one ones all them they their every some any me us my our your you please named called titled "
    "here there which what where who how when then also just only new".split()
)
_NOT_NAMES = frozenset("I A An The This That These Those It My Our Your".split())
TEXT_EXTENSIONS = frozenset(
    "txt md rst py js ts json yaml yml toml cfg ini csv tsv html css xml sh c h cpp go rs java rb log sql".split()
)
MEDIA_EXTENSIONS = frozenset("png jpg jpeg gif bmp webp svg mp3 wav ogg mp4 pdf".split())


def stem(word: str) -> str:
    """A light stemmer: ``entities``/``entity``, ``shows``/``show``, ``files``/``file`` meet."""
    w = word.lower()
    if len(w) > 4 and w.endswith(("ied", "ies")):
        return w[:-3] + "y"
    if (w.endswith("es") and len(w) > 4 and w[-3] in "sxzo") or w.endswith(("ches", "shes")):
        w = w[:-2]
    elif w.endswith("s") and not w.endswith(("ss", "us", "is")) and len(w) > 3:
        w = w[:-1]
    else:
        for suffix in ("ing", "ed"):
            if w.endswith(suffix) and len(w) - len(suffix) >= 3:
                w = w[: -len(suffix)]
                if len(w) >= 4 and w[-1] == w[-2] and w[-1] not in "aeiouls":
                    w = w[:-1]
                break
    return w[:-1] if len(w) >= 4 and w.endswith("e") else w


def verb_synonyms(verb: str) -> frozenset[str]:
    """The stems a tool may use for the (stemmed) ``verb``."""
    return _SYNONYM_STEMS.get(verb, frozenset())


def is_verb_stem(word: str) -> bool:
    """Whether a (stemmed) word is a verb a description may start with ("Shows", "Get")."""
    return word in _VERB_STEMS


def tokens(text: str) -> list[str]:
    """Stemmed words, splitting snake_case, kebab-case and camelCase, keeping verbs like "show"."""
    return [stem(t) for t in _TOKEN.findall(text) if not t.isdigit()]


@dataclass(frozen=True)
class Literals:
    """The values a clause spells out, in the order they appear."""

    quoted: tuple[str, ...] = ()
    paths: tuple[str, ...] = ()
    urls: tuple[str, ...] = ()
    names: tuple[str, ...] = ()
    types: tuple[str, ...] = ()
    kind_nouns: tuple[str, ...] = ()
    numbers: tuple[int | float, ...] = ()
    refs: tuple[str, ...] = ()
    topic: str = ""
    free_text: str = ""


@dataclass(frozen=True)
class Clause:
    """One requested action: its verb, its object words, its literal values, and its text."""

    text: str
    verb: str
    objects: tuple[str, ...]
    literals: Literals
    words: frozenset[str] = field(default_factory=frozenset)
    modifiers: frozenset[str] = field(default_factory=frozenset)  # object words after "with", "that"...


def action_clauses(task: str, tool_verbs: frozenset[str] = frozenset()) -> list[Clause]:
    """The imperative clauses of ``task``, in order; questions and answer directives are skipped."""
    out: list[Clause] = []
    for sentence in _sentences(task):
        polite = bool(_POLITE_QUESTION.match(sentence))
        if sentence.rstrip().endswith("?") and not polite:
            continue
        sentence = _CITATION_FORMAT.sub("", sentence).strip(" .!?;")
        for text in _clauses(sentence, tool_verbs):
            clause = parse_clause(text, tool_verbs)
            if clause is not None:
                out.append(clause)
    return out


def parse_clause(text: str, tool_verbs: frozenset[str] = frozenset()) -> Clause | None:
    """A clause if ``text`` starts with a verb and names something to act on, else None."""
    text = _POLITE.sub("", text.strip()).strip(" .!?;,")
    first = text.split(maxsplit=1)
    if not first or not _is_verb(first[0], tool_verbs):
        return None
    verb = stem(first[0])
    rest = first[1] if len(first) > 1 else ""
    if verb in ("look", "find") and re.match(r"(?:up|out)\b", rest, re.IGNORECASE):
        rest = rest.split(maxsplit=1)[1] if len(rest.split(maxsplit=1)) > 1 else ""
    literals = extract_literals(rest)
    cut = _MODIFIER.search(rest)
    head, tail = (rest[: cut.start()], rest[cut.end() :]) if cut else (rest, "")
    objects = _objects(head, literals)
    modifiers = [w for w in _objects(tail, literals) if w not in objects]
    if not objects and not modifiers and not _has_values(literals):
        return None  # "List each one", "Show me": about the answer, not a request
    return Clause(text, verb, (*objects, *modifiers), literals, frozenset(tokens(rest)), frozenset(modifiers))


def extract_literals(text: str) -> Literals:
    """Quoted text, URLs, paths, names, types, numbers and commit ids in ``text``, in order."""
    quoted = [next(g for g in m.groups() if g is not None) for m in _QUOTED.finditer(text)]
    plain = _QUOTED.sub(" ", text)
    urls = _URL.findall(plain)
    plain = _URL.sub(" ", plain)
    paths = [p for p in _PATH.findall(plain) if _plausible_path(p)]
    bare = _PATH.sub(lambda m: " " if _plausible_path(m.group(1)) else m.group(0), plain)
    refs = _SHA.findall(bare)
    numbers = [float(n) if "." in n else int(n) for n in _NUMBER.findall(_SHA.sub(" ", bare))]
    types = [next(g for g in m.groups() if g) for m in _TYPE.finditer(text)]
    kind_nouns = [m.group(1) for m in _KIND_NOUN.finditer(text)]
    topic = ""
    if m := _TOPIC.search(text):
        topic = _unquote(m.group(1).strip(" .!?"))
    free = _LEADING.sub("", text.strip(" .!?")).strip()
    return Literals(
        quoted=tuple(quoted),
        paths=tuple(paths),
        urls=tuple(urls),
        names=tuple(_names(text, set(types) | set(kind_nouns))),
        types=tuple(types),
        kind_nouns=tuple(kind_nouns),
        numbers=tuple(numbers),
        refs=tuple(refs),
        topic=topic,
        free_text=_unquote(free),
    )


def _sentences(task: str) -> list[str]:
    parts = re.split(r"(?<=[.!?])\s+|\n+", task)
    return [p.strip() for p in parts if p.strip()]


def _clauses(sentence: str, tool_verbs: frozenset[str]) -> list[str]:
    """Split at "and"/"then"/commas only where a new verb starts; "Alice and Bob" stays whole."""
    pieces = _CONNECTOR.split(sentence)
    out: list[str] = [pieces[0]]
    for sep, piece in zip(pieces[1::2], pieces[2::2], strict=True):
        head = _POLITE.sub("", piece.strip()).split(maxsplit=1)
        if head and _is_verb(head[0], tool_verbs) and out[-1].strip():
            out.append(piece)
        else:
            out[-1] = out[-1] + sep + piece
    return [c for c in out if c.strip()]


def _is_verb(word: str, tool_verbs: frozenset[str]) -> bool:
    w = word.strip(",.:;").lower()
    return w.isalpha() and (w in VERBS or stem(w) in VERBS or w in tool_verbs or stem(w) in tool_verbs)


def _objects(rest: str, literals: Literals) -> list[str]:
    """Content words naming what to act on; literal values are replaced by what they are."""
    text = _QUOTED.sub(" ", rest)
    text = _URL.sub(" url ", text)
    text = _PATH.sub(
        lambda m: " " + _path_words(m.group(1)) + " " if _plausible_path(m.group(1)) else m.group(0), text
    )
    for value in (*literals.names, *literals.types):
        text = re.sub(rf"\b{re.escape(value)}\b", " ", text)
    text = _NAMED.sub(" ", text)
    out: list[str] = []
    for w in _TOKEN.findall(text):
        if w.lower() in _OBJECT_STOP or w.isdigit():
            continue
        s = stem(w)
        if s not in out:
            out.append(s)
    return out


def _path_words(path: str) -> str:
    ext = path.rsplit(".", 1)[-1].lower() if "." in path.rsplit("/", 1)[-1] else ""
    if not ext:
        return "directory path"
    kind = "text" if ext in TEXT_EXTENSIONS else "media" if ext in MEDIA_EXTENSIONS else ""
    return f"file {kind}"


def _plausible_path(p: str) -> bool:
    """``committed.txt``, ``src/app.py``, ``/tmp/x``; not ``e.g`` nor ``v1.2``."""
    if "/" in p:
        return len(p.strip("./~")) > 0
    stem_part, _, ext = p.rpartition(".")
    return len(stem_part) >= 2 and ext.isalnum() and not ext.isdigit()


def _names(text: str, skip: set[str]) -> list[str]:
    """Values after "named"/"called", then Capitalized words (joined: "New York"), in order."""
    found: list[tuple[int, str]] = []
    for m in _NAMED.finditer(text):
        pos = m.end()
        while True:
            tok = _NAME_TOKEN.match(text, pos)
            if tok is None:
                break
            found.append((tok.start(), _unquote(tok.group(0)).rstrip(".,")))
            nxt = re.match(r"\s*(?:,\s*(?:and\s+)?|\s+and\s+)", text[tok.end() :])
            if nxt is None:
                break
            after = _NAME_TOKEN.match(text, tok.end() + nxt.end())
            if after is None or not (after.group(0)[0] in "'\"" or after.group(0)[0].isupper()):
                break
            pos = tok.end() + nxt.end()
    plain = _PATH.sub(lambda m: " " * len(m.group(0)), _QUOTED.sub(lambda m: " " * len(m.group(0)), text))
    for m in re.finditer(r"\b[A-Z][\w-]*(?:\s+[A-Z][\w-]*)*", plain):
        value = m.group(0)
        if value not in _NOT_NAMES and value not in skip:
            found.append((m.start(), value))
    longest: dict[int, str] = {}  # "named Ada Lovelace": the whole capitalized run, once
    for pos, value in found:
        if len(value) > len(longest.get(pos, "")):
            longest[pos] = value
    out: list[str] = []
    for _, value in sorted(longest.items()):
        if value and value not in out and value not in skip:
            out.append(value)
    return out


def _unquote(text: str) -> str:
    m = _QUOTED.fullmatch(text.strip())
    return next(g for g in m.groups() if g is not None) if m else text


def _has_values(lit: Literals) -> bool:
    return bool(lit.quoted or lit.paths or lit.urls or lit.names or lit.numbers or lit.refs)


_SYNONYM_STEMS = {stem(k): frozenset(stem(w) for w in v) for k, v in SYNONYMS.items()}
_VERB_STEMS = frozenset(stem(v) for v in VERBS) | frozenset(w for v in _SYNONYM_STEMS.values() for w in v)
