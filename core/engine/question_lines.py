"""A few lines of the documents that hold words of the question, for a small root's first turn.

    lines = question_lines("How many card payments failed in webshop.log?", [(path, text), ...])
    # [(9, 1540, "2024-08-14 09:42:07 ERROR payments order=48486 card payment failed: ..."), ...]

The real 1.5B model saw each document's first lines and then guessed what the lines it had to
count look like (`re.match(r"ERROR.*method=card and status=failed", line)`: 0, six turns
running). A plain word search shows it a few real ones. Words are the question's words of four
or more characters (numbers of any length, thousands separators dropped), without common
question words and without the words of the document names (they name a document, not its
content). When the question names documents by file name, only they are searched. A word matches a line when the line holds its first len-2 characters (at least four:
"payments" finds "payment"). Each line scores the sum over its words of 1 / (lines holding the
word), so a rare word (a figure, a name) outweighs a common one; the best lines are kept, at
most PER_DOCUMENT from one document. It is a sample to read the format from, never all of them.
"""

from __future__ import annotations

import re
from typing import Sequence

MAX_LINES = 4
PER_DOCUMENT = 2
LINE_CHARS = 160
_SCANNED_LINES = 200_000      # per run: the first lines of the documents, in order

_COMMON = frozenset("""
about above after again also among answer answers before between both came come could does done
each every find from gave give gives given have here into just like list many more most much name
names number only other over same show some than that their them then there these they this those
through under were what when where which while whole with within without word words would your
""".split())
_DIGIT_COMMA = re.compile(r"(?<=\d)[,_](?=\d{3})")
_WORD = re.compile(r"[^\W_]+", re.UNICODE)


def word_stem(word: str) -> str:
    """A word of four letters or more without its last two ("payments" -> "payme"), at least four kept."""
    return word[:max(4, len(word) - 2)]


def common_words() -> frozenset[str]:
    """Words of a question that say what is asked, not what to look for ("which", "many", "names")."""
    return _COMMON


def question_words(question: str, paths: Sequence[str]) -> list[str]:
    """The stems a line is searched for: see the module's docstring."""
    named = {w.lower() for p in paths for w in _WORD.findall(p)}
    stems: list[str] = []
    for word in _WORD.findall(_DIGIT_COMMA.sub("", question)):
        low = word.lower()
        if low in named or low in _COMMON:
            continue
        if low.isdigit():
            stem = low if len(low) >= 2 else ""
        elif len(low) >= 4:
            stem = word_stem(low)
        else:
            stem = ""
        if stem and stem not in stems:
            stems.append(stem)
    return stems


def _named(question: str, paths: Sequence[str]) -> set[int]:
    """The documents the question names by file name ("webshop.log"): only they are searched."""
    low = question.lower()
    return {i for i, p in enumerate(paths) if re.search(r"(?<![\w.])" + re.escape(p.lower().rsplit("/", 1)[-1])
                                                        + r"(?![\w])", low)}


def question_lines(question: str, documents: Sequence[tuple[str, str]]) -> list[tuple[int, int, str]]:
    """(document index, line number from 1, line) of the best lines, best first."""
    named = _named(question, [p for p, _ in documents])
    searched = [(i, d) for i, d in enumerate(documents) if not named or i in named]
    stems = question_words(question, [p for _, (p, _) in searched])
    if not stems:
        return []
    found: list[tuple[int, int, str, frozenset]] = []
    holding = dict.fromkeys(stems, 0)
    scanned = 0
    for index, (_, text) in searched:
        for number, line in enumerate(text.splitlines(), start=1):
            scanned += 1
            if scanned > _SCANNED_LINES:
                break
            low = _DIGIT_COMMA.sub("", line.lower())
            hits = frozenset(s for s in stems if s in low)
            if hits:
                found.append((index, number, line, hits))
                for s in hits:
                    holding[s] += 1
    scored = sorted(found, key=lambda f: (-sum(1 / holding[s] for s in f[3]), f[0], f[1]))
    best: list[tuple[int, int, str]] = []
    per: dict[int, int] = {}
    for index, number, line, _ in scored:
        if per.get(index, 0) >= PER_DOCUMENT:
            continue
        per[index] = per.get(index, 0) + 1
        best.append((index, number, line.strip()[:LINE_CHARS]))
        if len(best) >= MAX_LINES:
            break
    return best


# "List the ...", "Name the ...", "Which inspectors appear ...", "What lighthouse keepers served ...": the
# question asks for several items: a plural noun among the three words after which/what, before a verb.
_LIST_START = re.compile(r"(?:^|[,;:]\s)\W*(list|name|enumerate)\b", re.IGNORECASE)
_WHICH = re.compile(r"(?:^|[,;:]\s)\W*(?:which|what)\s+(.*)", re.IGNORECASE)
_STOP = frozenset("""is was are were do does did has have had can could will would should the a an of
appears gives says shows lists mentions contains holds records states belongs comes goes makes takes uses
needs runs serves commands keeps costs lies applies means""".split())


def asks_for_list(question: str) -> bool:
    if _LIST_START.search(question or ""):
        return True
    found = _WHICH.search(question or "")
    if not found:
        return False
    for word in re.findall(r"[a-z][a-z-]*", found.group(1).lower())[:3]:
        if word in _STOP:
            return False
        if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
            return True
    return False
