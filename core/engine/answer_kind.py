"""Does the final answer have the kind the question asks for? Checked before it is accepted.

    check = AnswerKindCheck(question)           # one per RLM
    answer = check.review(rlm, answer, turn_id, shown)   # None: sent back once, with a note

Small roots copy the shape of whatever example they saw: asked what a text says, the real
1.5B model printed the matching line, then answered with the number of matches; asked for
the total of a column, it searched for a word, found nothing and answered "0". Three cases
send a final answer back, once per RLM and for every model size, with a plain note; the
next final answer is accepted whatever it is. No model call is made: the check reads the
question's wording, the answer and what the run's cells printed.

- The question asks for content (what, which, who, why, where, when, list, describe...) and
  the answer is only a whole number that the run printed as a count (a line of its own, or
  beside "matches", "lines", "found"...) or computed with len()/count(): a count of what
  was found, not what was found.
- The question asks for a number and the answer is a number no output holds, while the last
  cell printed one other number: the real 1.5B model printed 0 (or the right 30) and answered
  "2" (or "0").
- The question asks for a number and no number of the answer is one an output holds (not even
  rounded; a traceback's numbers do not count): the real 1.5B model printed `48 113917` (the
  rows and the total asked for) and then copied the prompt example's FINAL line, an average;
  after a block that failed it answered with a total no cell had computed. The note gives the
  numbers of the last line that printed any, or asks for the number to be computed and printed.
- The question asks for a number (how many, how much, the total, the average...) and the
  answer holds no number at all; or it asks which year, date, day or month (in English) and
  the answer holds no digit and no month or weekday name: the real 1.5B model printed the
  line with the year, took the line's last word ("tender.") and answered that.
- The answer is 0 or nothing (none, [], n/a) right after a cell whose search matched
  nothing (it printed 0 or an empty list): the search is the likelier fault.
- The answer holds no word and no number any cell printed, right after a search that matched
  nothing: a guess (the real 1.5B model printed `[]` and answered with a name).
- The answer says the documents do not hold it ("Not in the documents.") right after a cell
  that printed lines: the real 1.5B model printed the very passage that answered, re-sent the
  block and, asked for its answer, copied the prompt's not-found line. The note offers the
  printed line as the FINAL line to copy.

The question's kind is read from its wording in English, German, French, Spanish, Italian,
Dutch and Portuguese; a question of none of these kinds (a yes/no question, an instruction
the words do not match) is never sent back.
"""

from __future__ import annotations

import re
from typing import Any

from core import events as ev
from core.engine import prompts
from core.engine.cell_output import NOTHING_PRINTED
from core.engine.question_lines import common_words as question_common, word_stem
from core.engine.search_help import HEAD_LOOK, searched_phrases

_WORD = r"(?<![\w])"
# "how many", "the total of", "wie viele", "combien", "cuántos", "quanti", "hoeveel", "quantos"
_NUMBER_ASKED = re.compile(
    _WORD + r"(how\s+(many|much|often|long)|wie\s*(viele?|oft|lange)|combien|cu[aá]nt[oa]s?|quant[ieoa]s?|hoeveel"
    r"|answer\s+with\s+(a|the)\s+number|as\s+a\s+number"
    r"|(what|which)\s+(is|was|are|were)\s+the\s+(total|sum|average|mean|median|number|count|percentage|share"
    r"|ratio|amount)\b"
    r"|^\s*(count|compute|calculate|sum|add\s+up|total)\b)", re.IGNORECASE)
# The first word of a question that asks for words, items, a name, a reason, a place or a date.
# At the start, or after a leading clause: "In memo.txt, when must ...", "X commands a vessel; what is ...".
_CONTENT_ASKED = re.compile(
    r"(?:^|[,;:]\s)\W*(?:(?:from|since|until|till|in|on|at|by|for|to|of|with|during)\s+)?(what|which|who|whom|whose|why|where|when|list|name|describe|quote|summari[sz]e|explain|give|tell"
    r"|welche[rsmn]?|wer|warum|wo|wann|beschreibe|nenne"
    r"|que|quel(le)?s?|qui|pourquoi|o[uù]|quand|d[ée]cris"
    r"|qu[eé]|cu[aá]l(es)?|qui[eé]n(es)?|por\s+qu[eé]|d[oó]nde|cu[aá]ndo"
    r"|che|quale|quali|chi|perch[eé]|dove|quando"
    r"|wat|welke|wie|waarom|waar|wanneer"
    r"|o\s+que|qual|quais|quem|onde)\b", re.IGNORECASE)
_WHOLE_NUMBER = re.compile(r"^\s*[\"'`(\[]*\s*([-+]?\d[\d,_]*)\s*[\"'`)\]]*\s*\.?\s*$")
_NUMBER_WORDS = re.compile(
    r"\d|(?<![\w])(zero|none|no|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|hundred"
    r"|thousand|million|null|kein[e]?|aucun[e]?|ningun[oa]?|nessun[oa]?|geen|nenhum[a]?)(?![\w])", re.IGNORECASE)
# "which year", "on which date", "what day": a date is asked for (English questions only)
_DATE_ASKED = re.compile(r"(?<![\w])(which|what)\s+(year|date|day|month)\b", re.IGNORECASE)
_DATE_WORDS = re.compile(
    r"\d|(?<![\w])(jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec|january|february|march|april|june|july"
    r"|august|september|october|november|december|monday|tuesday|wednesday|thursday|friday|saturday|sunday"
    r"|today|yesterday|tomorrow)(?![\w])", re.IGNORECASE)
# "Not in the documents.", "The documents do not mention it", "No information found"
_SAYS_NOT_FOUND = re.compile(
    r"(?<![\w])(not\s+(in\s+the\s+(documents?|texts?|files?)|found|mentioned|stated|given)|no\s+(mention|information"
    r"|record|such)|(do|does)\s*(not|n't)\s+(say|mention|contain|state|give|hold))", re.IGNORECASE)
_NOTHING = {"0", "0.0", "none", "[]", "{}", "set()", "()", "''", '""', "n/a", "nothing", "null", "no matches",
            "no results", "not found"}
# A printed line that shows a search matched nothing: "0", "[]", "hits: 0", "matches = []", "set()".
_EMPTY_SEARCH = re.compile(r"^\s*(?:[\w ]{0,40}[:=]\s*)?(0|\[\]|\{\}|set\(\)|\(\))\s*$")
_COUNT_WORDS = re.compile(r"match|line|hit|found|result|item|occurrence|count|row|entr|mention|total",
                          re.IGNORECASE)
_COUNTING_CODE = re.compile(r"\blen\(|\.count\(|\bsum\(\s*1\b|Counter\(")


def asks_for_number(question: str) -> bool:
    return bool(_NUMBER_ASKED.search(question or ""))


_NUMBER = re.compile(r"^\s*[\"']?\s*[-+]?\d[\d,_]*(\.\d+)?\s*[\"']?\s*\.?\s*$")


def _value(number: str) -> float:
    return float(re.sub(r"[^\d.+-]", "", number.strip().rstrip(".")))


def offer_for(question: str, stdout: str | None, seen: str = "", whole: bool = False) -> str | None:
    """The FINAL line a small root is offered from what a cell printed (prompts.last_output), or
    None; none when the question asks for a number and the output holds no digit (the real 1.5B
    model, offered a table's header line for a total, answered with the header)."""
    if asks_for_number(question) and not re.search(r"\d", stdout or ""):
        return None
    offer = prompts.last_output(stdout, prompts.REPEATED_OUTPUT_CHARS, question, seen, whole)
    value = prompts.offered_value([offer]) if offer else None
    if value and asks_for_number(question) and (len(_numbers(value)) > 2 or len(value) > 60):
        return None     # a log line offered for "how many litres ...": copied as the answer
    return offer


def offer_at_once(question: str, stdout: str | None, seen: str = "") -> str | None:
    """The FINAL line offered right after a short whole output (offer_for), only when its kind fits the
    question: a number for a how-many question, words for a what/which question. A count printed for a
    question that compares ("Did 2023 or 2024 record more? Answer with the year") is not offered."""
    bare = bool(_NUMBER.match((stdout or "").strip()))
    if (asks_for_number(question) and not bare) or (asks_for_content(question) and bare) or not (
            asks_for_number(question) or asks_for_content(question)):
        return None
    return offer_for(question, stdout, seen, whole=True)


def asks_for_date(question: str) -> bool:
    return bool(_DATE_ASKED.search(question or ""))


def asks_for_content(question: str) -> bool:
    return not asks_for_number(question) and bool(_CONTENT_ASKED.search(question or ""))


def _printed_as_count(value: int, outputs: list[str], code: str) -> bool:
    """The run printed `value` as a count: alone on a line, or on a line that names what it counted
    ("3 matches", "hits: 3"), or it is a number the cells may have counted with len() or .count()."""
    number = re.compile(rf"(?<![\w.,]){value}(?![\w.,]|\.\d)")
    for output in outputs:
        for line in (output or "").splitlines():
            if not number.search(line):
                continue
            if line.strip().strip("[]()'\":=") == str(value) or _COUNT_WORDS.search(line):
                return True
            if _COUNTING_CODE.search(code):
                return True
    return False


def _searched_nothing(printed: str | None) -> bool:
    return any(_EMPTY_SEARCH.match(line) for line in (printed or "").splitlines())


def searched_nothing(stdout: str | None) -> bool:
    """A cell's whole stdout is one empty result (`0`, `[]`, `hits: 0`): its search matched nothing."""
    return bool(_EMPTY_SEARCH.match((stdout or "").strip())) and "\n" not in (stdout or "").strip()


def _printed_lines(shown: str | None) -> bool:
    """A cell output the root was shown printed something that is not an empty result or an error."""
    printed = "\n" + _stdout_of(shown or "")
    for marker in ("\n[error]\n", "\n[SyntaxError]\n"):
        printed = printed.split(marker, 1)[0]
    printed = printed.strip()     # a bare count ("126") is not lines: it holds no word
    return (bool(printed) and printed != NOTHING_PRINTED and not _searched_nothing(printed)
            and bool(re.search(r"[^\W\d_]{2}", printed)))


def sent_back_note(question: str, answer: str, outputs: list[str], last_printed: str | None,
                   code: str, offer: str | None = None, hinted: str = "", by_variable: bool = False,
                   computed: bool = False) -> str | None:
    """The note that sends `answer` back, or None when its kind fits the question (or cannot be told).
    `outputs`: every cell output the root was shown; `last_printed`: the last of them that printed
    something (the cell with the final answer often prints nothing); `code`: every block the root wrote;
    `offer`: the FINAL line to copy that what the last cell printed makes (core/engine/prompts.py: last_output);
    `hinted`: lines of the documents the engine showed the root (core/engine/search_help.py), not a guess's source;
    `by_variable`: the answer is a variable's value (FINAL_VAR), computed by the cells: a number in it
    that no output holds is not sent back for that; `computed`: a cell ran the FINAL and its number is
    typed nowhere in the code (FINAL(str(len(hits)))): when no output printed a number at all, it is
    not sent back as a number no cell computed (one that differs from printed numbers still is)."""
    text = (answer or "").strip()
    if text.lower().strip(" .") in _NOTHING and _searched_nothing(last_printed):
        return prompts.fill("answer_after_empty_search.md", answer=text[:40])
    if _searched_nothing(last_printed) and _unprinted(text, outputs + [hinted]):
        return prompts.fill("answer_guess_after_empty_search.md", answer=text[:60])
    if _SAYS_NOT_FOUND.search(text) and len(text) <= 120 and _printed_lines(last_printed):
        note = prompts.fill("answer_not_found_after_lines.md", answer=text[:40])
        return note + ("\n" + offer if offer else "")
    said = [o for o in outputs if _printed(o) or "\n[error]\n" in "\n" + o or "[SyntaxError]" in o]
    if _SAYS_NOT_FOUND.search(text) and len(text) <= 120 and said and (
            "\n[error]\n" in "\n" + said[-1] or "[SyntaxError]" in said[-1]):
        return prompts.fill("answer_not_found_after_error.md", answer=text[:40]) + (
            "\n" + offer if offer and _printed_lines(last_printed) else "")
    looked = HEAD_LOOK.findall(code or "")
    if asks_for_number(question) and looked and not by_variable and not computed and _WHOLE_NUMBER.match(text) and \
            int(_WHOLE_NUMBER.match(text).group(1).replace(",", "").replace("_", "") or -1) == int(looked[-1]):
        return prompts.fill("answer_is_the_look.md", answer=text.strip()[:20], lines=looked[-1])
    echoed = echoed_search_note(question, text, code, offer)
    if echoed:
        return echoed
    labelled = (wrong_label_note(question, text, outputs) or copied_lines_note(question, text, outputs, code)
                or first_lines_note(question, text, last_printed, code) or same_items_note(question, text))
    if labelled:
        return labelled
    whole = _WHOLE_NUMBER.match(text)
    if whole and asks_for_content(question):
        value = int(whole.group(1).replace(",", "").replace("_", ""))
        year_like = 1900 <= value <= 2100
        if not year_like and value >= 0 and _printed_as_count(value, outputs, code):
            return prompts.fill("answer_is_a_count.md", answer=text[:40])
    last = _stdout_of(last_printed or "").strip()
    if (asks_for_number(question) and _NUMBER.match(text) and _NUMBER.match(last) and _value(text) != _value(last)
            and not any(re.search(rf"(?<![\w.]){re.escape(text.strip(chr(39) + chr(34) + ' .'))}(?![\w]|\.\d)", o)
                        for o in map(_stdout_of, outputs))):
        return prompts.fill("answer_not_printed.md", answer=text[:40], printed=last)
    given = [n for n in _numbers(text) if _value(n) != 0]     # 0 is "none found", said in words
    if asks_for_number(question) and given and last_printed and not by_variable and not any(
            _rounds_to(p, n) for n in given for o in outputs for p in _numbers(_untraced(_stdout_of(o)))):
        numbers = _numbers(([ln for ln in _untraced(last).splitlines() if _numbers(ln)] or [""])[-1])
        if numbers:        # the numbers of the last line that printed any
            return prompts.fill("answer_not_printed_many.md", answer=text[:40],
                                numbers=", ".join(dict.fromkeys(numbers))[:200])
        if not computed:
            return prompts.fill("answer_not_computed.md", answer=text[:40])
    if asks_for_number(question) and text and not _NUMBER_WORDS.search(text):
        return prompts.fill("answer_needs_a_number.md")
    if asks_for_date(question) and text and not _DATE_WORDS.search(text):
        return prompts.fill("answer_needs_a_date.md", answer=text[:40])
    return None


# "total: 113917", "average = 2373.27", "sum 12": a number printed after the name of what it is.
_LABELS = {"total": ("total", "sum"), "average": ("average", "mean", "avg")}
_LABELLED = re.compile(r"(?<![^\W_])(total|sum|average|mean|avg)[^\W\d]{0,12}\W{0,4}?\s*[:=]\s*['\"]?"
                       r"([-+]?\d[\d,_]*(?:\.\d+)?)", re.IGNORECASE)
_ASKS_LABEL = {name: re.compile(r"(?<![^\W_])(" + "|".join(words) + r")(?![^\W_])", re.IGNORECASE)
               for name, words in _LABELS.items()}


def _labelled(outputs: list[str]) -> dict[str, list[str]]:
    """The numbers the outputs printed after a label, by what they are ("total", "average"), last first."""
    found: dict[str, list[str]] = {}
    for output in reversed(outputs):
        for word, number in _LABELLED.findall(_untraced(_stdout_of(output))):
            name = next(n for n, words in _LABELS.items() if word.lower() in words)
            found.setdefault(name, []).append(number.replace(",", "").replace("_", ""))
    return found


def wrong_label_note(question: str, answer: str, outputs: list[str]) -> str | None:
    """The question asks for the total (or the average), the output printed one labelled so, and the
    answer is the number printed under the other label: the real 1.5B model printed the total a question
    asked for, then answered with an average, as the one worked example it had seen did."""
    asked = [name for name, words in _ASKS_LABEL.items() if words.search(question or "")]
    given = _numbers(answer)
    if len(asked) != 1 or len(given) != 1:
        return None
    labelled = _labelled(outputs)
    wanted = labelled.get(asked[0])
    if not wanted or any(_rounds_to(w, given[0]) for w in wanted):
        return None
    other = [name for name, values in labelled.items() if name != asked[0] and any(_rounds_to(v, given[0]) for v in values)]
    if not other:
        return None
    return prompts.fill("answer_wrong_label.md", answer=given[0], given=other[0], asked=asked[0], value=wanted[0])


def copied_lines_note(question: str, answer: str, outputs: list[str], code: str = "") -> str | None:
    """The question asks for a number and the answer is lines the output printed, copied with their many
    numbers: the real 1.5B model printed four rows of a table and answered with them for their total;
    asked how many litres of diesel a vessel burnt (no document says), it searched the vessel's name and
    answered with one of its log lines. One line is sent back when it holds five numbers or more; the
    note names the question's words the code never searched for."""
    numbers = len(_numbers(answer))
    if not asks_for_number(question) or numbers < 4:
        return None
    parts = [p.strip(" '\"[],") for p in re.split(r"\n|;\s|',\s'", answer) if len(p.strip()) >= 12]
    printed = "\n".join(_stdout_of(o) for o in outputs)
    copied = [p for p in parts if p in printed]
    if len(copied) < 2 and not (copied and numbers >= 5):
        return None
    unsearched = unsearched_words(question, code)
    return prompts.fill("answer_is_lines.md", lines=f"{len(parts)} lines" if len(parts) > 1 else "a line") + (
        "\n" + prompts.fill("unsearched_words.md", words=", ".join(unsearched)) if unsearched else "")


_NOT_SEARCHED = frozenset("according documents document text texts file files total average".split())


def unsearched_words(question: str, code: str) -> list[str]:
    """The question's words (four letters or more, not its common ones) whose stem the code never holds."""
    low = (code or "").lower()
    words = []
    for word in re.findall(r"[^\W\d_][\w-]{3,}", question or ""):
        w = word.lower()
        if w in _NOT_SEARCHED or w in question_common() or "." in w:
            continue
        if word_stem(w) not in low and word not in words:
            words.append(word)
    return words




def first_lines_note(question: str, answer: str, last_printed: str | None, code: str) -> str | None:
    """The question asks for content and the answer is two or more of the lines a look at a document's
    first lines printed (`print(lines[:5])`): the real 1.5B model, asked to list the vessels of a
    registry, printed its first five lines and answered with them (three of four vessels and the title)."""
    head = HEAD_LOOK.findall(code or "")
    if not head or not asks_for_content(question):
        return None
    printed = _stdout_of(last_printed or "")
    parts = [p.strip(" '\"[],") for p in re.split(r"\n|;\s|',\s'|,\s(?=[A-Z0-9])", answer) if p.strip(" '\"[],")]
    copied = [p for p in parts if len(p) >= 4 and p in printed]
    if len(copied) < 2 or len(copied) < len(parts) * 0.8:
        return None
    note = prompts.fill("answer_from_first_lines.md", lines=head[-1])
    shape = _line_shape(copied)
    return note + ("\n" + prompts.fill("lines_like_these.md", shape=repr(shape)) if shape else "")


def _line_shape(lines: list[str]) -> str | None:
    """The pattern that starts most of `lines`, their first word with its digits as `\\d+` ("VX-201:" ->
    `VX-\\d+:`), when two or more share it; the block printing every line that starts so finds the rest."""
    shapes = [re.sub(r"\d+", r"\\d+", re.escape(line.split()[0])) for line in lines if line.split()]
    best = max(set(shapes), key=shapes.count) if shapes else None
    return best if best and shapes.count(best) >= 2 else None


def echoed_search_note(question: str, answer: str, code: str, offer: str | None) -> str | None:
    """A content question answered with the very words the code searched for: the real 1.5B model,
    asked why card payments failed, searched "card payment failed", printed the lines that give the
    cause and answered "card payment failed". The note offers the printed line to copy, if any."""
    if not asks_for_content(question):
        return None
    said = answer.strip().strip("'\" .").casefold()
    if not said or said not in {p.strip().casefold() for p in searched_phrases(code)}:
        return None
    return prompts.fill("answer_is_the_search.md", answer=answer.strip()[:60]) + ("\n" + offer if offer else "")


def same_items_note(question: str, answer: str) -> str | None:
    """A list question answered with one text repeated ("Inspector; Inspector; Inspector"): the real 1.5B
    model kept the label before each name (`line.split(":")[0]`) and answered with it fifteen times."""
    if not asks_for_content(question):
        return None
    items = [i.strip() for i in re.split(r";|,|\n", answer) if i.strip()]
    if len(items) < 3 or len(set(i.casefold() for i in items)) != 1:
        return None
    return prompts.fill("answer_same_items.md", item=items[0][:40], times=len(items))


_PRINTED_NUMBER = re.compile(r"(?<![\w.])[-+]?\d[\d,_]*(?:\.\d+)?(?![\w]|\.\d)")


def _numbers(printed: str) -> list[str]:
    """The numbers an output holds, as written (thousands separators dropped), at most 50."""
    return [n.replace(",", "").replace("_", "") for n in _PRINTED_NUMBER.findall(printed or "")][:50]


def _untraced(output: str) -> str:
    """An output without its traceback (line numbers of an error are not numbers the code computed)."""
    return ("\n" + output).split("\n[error]\n", 1)[0].split("\n[SyntaxError]\n", 1)[0].strip("\n")


def _rounds_to(printed: str, answer: str) -> bool:
    """`answer` is `printed`, or `printed` rounded to the answer's decimals (2151.4166 -> 2151.42)."""
    text = answer.strip().strip("'\" .")
    try:
        value, shown = float(printed), _value(text)
    except ValueError:
        return False
    decimals = len(text.split(".", 1)[1]) if "." in text else 0
    return value == shown or round(value, decimals) == shown


def _unprinted(answer: str, outputs: list[str]) -> bool:
    """No word (three letters or more) and no number of `answer` is in anything the cells printed, and
    it does not say the documents lack it: a guess. The real 1.5B model searched, printed `[]`, and
    answered with a name no output held."""
    if _SAYS_NOT_FOUND.search(answer):
        return False
    tokens = {t.lower() for t in re.findall(r"[^\W_]+", answer) if len(t) >= 3 or t.isdigit()}
    if not tokens:
        return False
    printed = "\n".join(_stdout_of(o) for o in outputs).lower()
    return not any(re.search(rf"(?<![^\W_]){re.escape(t)}(?![^\W_])", printed) for t in tokens)


def _stdout_of(output: str) -> str:
    """What a cell printed to stdout, from the output the root was shown (its header and stderr cut)."""
    body = output.split("\n[stderr]\n", 1)[0]
    lines = body.splitlines()
    if lines and lines[0].startswith("[block ") and lines[0].endswith("]"):
        lines = lines[1:]
    return "\n".join(lines)


def _printed(output: str) -> bool:
    """A cell output the root was shown holds something the cell printed to stdout: not only
    its header and a note on stderr (`Final(...)` taken as FINAL says so there, and hid the
    empty search before it from the check on the real 1.5B model)."""
    printed = _stdout_of(output).strip()
    return bool(printed) and printed != NOTHING_PRINTED


class AnswerKindCheck:
    """One RLM's check: it sends a final answer back at most once."""

    def __init__(self, question: str) -> None:
        self.question = question
        self.told = False
        self.sent_back: tuple[str, str] | None = None    # (the turn's id, the answer it sent back)

    def insisted(self, repeated_turn_id: str) -> str | None:
        """The answer sent back at `repeated_turn_id`, when the root now sends that turn's reply
        again unchanged: it stands by it, and a repeated reply's code is not run again, so its
        FINAL could never end the run otherwise. None when nothing was sent back there."""
        if self.sent_back is None or self.sent_back[0] != repeated_turn_id:
            return None
        answer, self.sent_back = self.sent_back[1], None
        return answer

    def review(self, rlm: Any, answer: str, turn_id: str, shown: list[str], by_variable: bool = False,
               ran: bool = False) -> str | None:
        """`answer`, or None when it is sent back (the note is added to the root's feedback and the
        run's events say so). `shown`: the cell outputs the root was shown, in order; `ran`: a cell
        ran the FINAL (its argument was code, not the reply's text)."""
        if self.told or not (answer or "").strip():
            return answer
        code = "\n".join(m.get("content") or "" for m in rlm.messages if m.get("role") == "assistant")
        # FINAL(str(len(hits)) + ' files') computed its number in the cell; FINAL('1416963.5') typed it.
        computed = ran and not any(re.search(rf"(?<![\w.]){re.escape(n)}(?![\w]|\.\d)", code)
                                   for n in _numbers(answer))
        printed = [o for o in shown if _printed(o)]
        offer = offer_for(self.question, _stdout_of(printed[-1]), "\n".join(shown[:shown.index(printed[-1])])
                          ) if printed else None
        note = sent_back_note(self.question, answer, list(shown), printed[-1] if printed else None, code, offer,
                              rlm.memory.hinted, by_variable, computed)
        if note is None:
            return answer
        self.told = True
        self.sent_back = (turn_id, answer)
        rlm.turn_notes.append(note)
        rlm.ctx.emit(ev.Notice, call_id=turn_id, parent_id=rlm.rlm_id, level="info",
                     message=f"The final answer {answer.strip()[:80]!r} was sent back once: "
                             f"{note.splitlines()[0]}")
        return None
