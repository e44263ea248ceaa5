"""No prompt names anything from a shipped question set: a prompt that carried a set's words
would score the set, not the model (resources/prompts/ against every resources/**/*.jsonl)."""

import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
PROMPTS = ROOT / "resources" / "prompts"
COMMON = {"the", "a", "an", "of", "in", "on", "to", "and", "or", "is", "are", "was", "were", "what", "which",
          "how", "many", "much", "does", "do", "did", "with", "by", "for", "from", "at", "as", "it", "its",
          "that", "this", "be", "answer", "number", "only", "words", "few", "say", "says", "documents",
          "document", "name", "the", "one", "all", "over", "each", "there", "not", "no", "give", "like",
          # words of a question's form, not its content
          "average", "total", "sum", "mean", "column", "line", "lines", "list", "when", "who", "why", "where",
          "about", "according", "per", "month", "number"}


def words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9_$-]+(?:\.[a-z0-9_]+)*", text.lower())


def phrases(text: str, n: int = 3) -> set[tuple[str, ...]]:
    """Runs of n words that are not all common words: "card payments failed", not "how many of"."""
    w = words(text)
    return {tuple(w[i:i + n]) for i in range(len(w) - n + 1) if not set(w[i:i + n]) <= COMMON}


def distinctive(text: str) -> set[str]:
    """Names a question carries: file names, identifiers, capitalised names ("webshop.log", "Q3")."""
    found = set(re.findall(r"\b[\w-]+\.(?:log|csv|txt|md|json|jsonl|tsv)\b", text))
    found |= set(re.findall(r"\b\w*_\w+\b", text))
    found |= {m for m in re.findall(r"(?<![.?!] )(?<!^)\b[A-Z][a-z]+(?: [A-Z][a-z]+)+\b", text)}
    return {f.lower() for f in found}


def question_sets() -> list[Path]:
    return sorted(p for p in (ROOT / "resources").rglob("*.jsonl"))


def shared(prompt: str, question: str) -> set:
    low = prompt.lower()
    return (phrases(prompt) & phrases(question)) | {d for d in distinctive(question) if d in low}


def test_the_check_finds_a_shared_phrase_and_a_shared_name():
    assert shared("Count the lines that mention card payments failed.", "How many card payments failed?")
    assert shared("Open the file webshop.log first.", "How many lines of webshop.log say ERROR?")
    assert not shared("How many lines mention the ferry?", "How many orders were late?")


def test_no_prompt_shares_a_distinctive_phrase_with_a_shipped_question():
    sets = question_sets()
    assert len(sets) >= 2                       # the sample set and the set of every kind
    questions = [json.loads(line)["question"] for path in sets
                 for line in path.read_text(encoding="utf-8").splitlines()
                 if line.strip() and not line.lstrip().startswith("#")]
    assert len(questions) >= 30
    found = {}
    for prompt in sorted(PROMPTS.rglob("*.md")):
        text = prompt.read_text(encoding="utf-8")
        for question in questions:
            common = shared(text, question)
            if common:
                found.setdefault(prompt.name, []).append((question[:60], sorted(map(str, common))[:3]))
    assert found == {}
