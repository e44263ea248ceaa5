"""Exports (JSON, Markdown, HTML) and the JSON import."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from core import events as ev
from core.exports import export
from core.store import ImportError_, RunStore
from tests.support.record_runs import EVIL, recorded_run

from .conftest import write_events
from .test_sources import docs

@pytest.fixture
def run_id(store: RunStore) -> str:
    # A real engine run (tests/support/record_runs.py): HTML in the question, the answer, a
    # cell's output and a retry notice; a nested RLM; a syntax error.
    write_events(store, recorded_run("export", "exp1"))
    store.save_sources("exp1", docs(), [])
    return "exp1"


def without_time(data: dict) -> dict:
    return {k: v for k, v in data.items() if k != "exported_utc"}


def table_counts(store: RunStore) -> dict[str, int]:
    return {t: store.db.execute(f"SELECT count(*) FROM {t}").fetchone()[0]
            for t in ("runs", "events", "calls", "sources", "blobs")}


def test_json_export_is_complete(store: RunStore, run_id: str, tmp_path: Path):
    export(store, run_id, "json", tmp_path / "run.json")
    data = json.loads((tmp_path / "run.json").read_text())
    assert (data["format"], data["version"]) == ("rlm-studio-run", 2)
    assert data["run"]["id"] == run_id and data["run"]["answer"].startswith("Because")
    assert data["config"]["max_depth"] == 2
    assert len(data["events"]) == len(list(store.iter_events(run_id)))
    assert [ev.from_dict(e) for e in data["events"]] == list(store.iter_events(run_id))
    assert {c["id"] for c in data["calls"]} == {c["id"] for c in store.calls(run_id)}
    assert [s["path"] for s in data["sources"]] == ["sales/2023.csv", "notes.txt"]
    assert "text" not in data["sources"][0]
    manifest = data["manifest"]
    assert manifest["models"] == ["openai/root-model", "openai/sub-model"]
    assert [i["text_sha256"] for i in manifest["inputs"]] == [s["text_sha256"] for s in store.sources(run_id)]
    assert manifest["prompt_settings"]["root_max_tokens"] == 8192 and manifest["app_version"] == "0.1.0"
    assert not any(k.startswith("owner_") for k in data["run"])


def test_json_round_trip_through_a_fresh_database(store: RunStore, run_id: str, tmp_path: Path):
    export(store, run_id, "json", tmp_path / "a.json", include_texts=True)
    other = RunStore.open(tmp_path / "other.db")
    try:
        assert other.import_json(tmp_path / "a.json") == run_id
        export(other, run_id, "json", tmp_path / "b.json", include_texts=True)
        a, b = (json.loads((tmp_path / n).read_text()) for n in ("a.json", "b.json"))
        # a run file decides nothing about where calls go: its URLs are not imported, and
        # the imported config says so (tests/security/test_run_files.py)
        dropped = b["config"].pop("import_dropped")
        assert dropped == {"api_base": a["config"]["api_base"], "memory_limit_mb": a["config"]["memory_limit_mb"]}
        for d in (a, b):
            for key in ("api_base", "sub_api_base", "api_key_from", "sub_call_models", "memory_limit_mb",
                        "require_full_sandbox"):
                for section in (d["config"], d["manifest"]["caps"], d["manifest"].get("settings") or {},
                                *(e["config"] for e in d["events"] if isinstance(e.get("config"), dict))):
                    section.pop(key, None)
            (d["manifest"].get("settings") or {}).pop("import_dropped", None)
        assert without_time(a) == without_time(b)
        assert [d.text for d in other.documents(run_id)] == [d.text for d in docs()]
        assert other.documents(run_id)[0].spans == ((0, 12, "row 1"), (12, 29, "row 2"))
        import dataclasses
        from core.store.import_json import clean_config
        assert list(other.iter_events(run_id)) == [
            dataclasses.replace(e, config=clean_config(e.config)[0]) if isinstance(getattr(e, "config", None), dict)
            else e for e in store.iter_events(run_id)]
        assert other.get_run(run_id)["imported_utc"] is not None
        assert other.list_runs(search="because")[0]["id"] == run_id
        # importing it again writes nothing and names the run already there
        before = table_counts(other)
        assert other.import_json(tmp_path / "a.json") == run_id
        assert table_counts(other) == before
    finally:
        other.close()


def test_import_without_texts_reuses_texts_already_stored(store: RunStore, run_id: str, tmp_path: Path):
    export(store, run_id, "json", tmp_path / "a.json")
    store.delete_run(run_id)
    store.save_sources("keeper", docs(), [])           # the same files, used by another run
    assert store.import_json(tmp_path / "a.json") == run_id
    assert [d.text for d in store.documents(run_id)] == [d.text for d in docs()]


def bad_files(good: dict) -> dict[str, tuple[str, str]]:
    def changed(fn):
        data = json.loads(json.dumps(good))
        fn(data)
        return json.dumps(data)

    def bad_text(d):
        d["sources"][0]["text"] = "tampered"

    def bad_event(d):
        d["events"][3]["seq"] = "three"

    def no_calls(d):
        del d["calls"]

    def newer(d):
        d["version"] = 3

    def other_format(d):
        d["format"] = "something-else"

    def other_run(d):
        d["events"][5]["run_id"] = "elsewhere"

    def nested_value(d):
        d["calls"][0]["response"] = {"x": 1}

    return {
        "not json": ("{not json", "not a JSON file"),
        "truncated": (json.dumps(good)[:-200], "not a JSON file"),
        "other format": (changed(other_format), "not an RLM Studio run export"),
        "newer": (changed(newer), "newer RLM Studio"),
        "bad seq": (changed(bad_event), "events[3].seq"),
        "no calls": (changed(no_calls), '"calls" must be a list'),
        "tampered text": (changed(bad_text), "does not match"),
        "foreign event": (changed(other_run), "another run"),
        "nested value": (changed(nested_value), "non-plain value"),
    }


def test_malformed_or_newer_files_are_refused_and_nothing_is_written(store: RunStore, run_id: str,
                                                                      tmp_path: Path):
    export(store, run_id, "json", tmp_path / "good.json", include_texts=True)
    good = json.loads((tmp_path / "good.json").read_text())
    store.delete_run(run_id)
    before = table_counts(store)
    for name, (text, message) in bad_files(good).items():
        path = tmp_path / f"{name}.json"
        path.write_text(text)
        with pytest.raises(ImportError_, match=re.escape(message)):
            store.import_json(path)
        assert table_counts(store) == before, name


def test_a_database_error_mid_import_leaves_nothing(store: RunStore, run_id: str, tmp_path: Path):
    export(store, run_id, "json", tmp_path / "good.json", include_texts=True)
    data = json.loads((tmp_path / "good.json").read_text())
    store.delete_run(run_id)
    data["calls"].append(dict(data["calls"][0], id="dup"))
    data["calls"].append(dict(data["calls"][0], id="dup2"))
    data["calls"][-1]["id"] = "dup"                    # duplicate key: refused before writing
    (tmp_path / "dup.json").write_text(json.dumps(data))
    before = table_counts(store)
    with pytest.raises(ImportError_):
        store.import_json(tmp_path / "dup.json")
    assert table_counts(store) == before
    # a constraint only the database sees: the run row fails after the events were queued
    data = json.loads((tmp_path / "good.json").read_text())
    store.db.execute("CREATE TRIGGER refuse_calls BEFORE INSERT ON calls BEGIN SELECT RAISE(ABORT, 'no'); END")
    (tmp_path / "late.json").write_text(json.dumps(data))
    with pytest.raises(ImportError_, match="database refused"):
        store.import_json(tmp_path / "late.json")
    assert table_counts(store) == before


def test_markdown_report(store: RunStore, run_id: str, tmp_path: Path):
    export(store, run_id, "md", tmp_path / "r.md")
    text = (tmp_path / "r.md").read_text()
    for heading in ("## Question", "## Answer", "## Models and caps", "## Totals", "## Turns", "## Call tree"):
        assert heading in text
    answer = text.split("## Answer", 1)[1].split("## Models and caps", 1)[0]
    assert "Because &lt;script>" in answer and "<script>" not in answer   # Markdown, raw HTML escaped
    assert "openai/root-model" in text and "- Cost cap: $5.00" in text         # labels and units
    assert "max_cost_usd" not in text and "cell_timeout_s" not in text
    assert re.search(r"\| Cost \| \$\d+\.\d\d", text) and "cost (USD)" not in text        # money
    assert "### Turn 1" in text and "**Cell 2** (syntax error" in text and "print((" in text
    assert "  - **sub-call R.s1**" in text                           # nested under its turn
    assert re.search(r"\n    - \*\*turn 1 \(depth 1\)\*\*", text)     # the nested RLM's turn, one level deeper
    assert "answer of Summarise" in text
    assert re.search(r"- \[warning\] Root call failed .*upstream said &lt;script&gt;", text)   # no raw HTML
    assert "      - cell 1: `print(llm_query('rows: '" in text       # the nested RLM's cell
    nested = next(c for c in store.calls(run_id) if c["kind"] == "rlm")
    assert nested["cost_usd"] == 0.0 and nested["subtree_cost_usd"] > 0
    assert f"own $0.0000, subtree ${nested['subtree_cost_usd']:.4f}" in text


def test_html_is_self_contained_and_escaped(store: RunStore, run_id: str, tmp_path: Path):
    export(store, run_id, "html", tmp_path / "r.html")
    page = (tmp_path / "r.html").read_text()
    assert page.count("<script>") == 1                               # ours only
    assert EVIL not in page and "&lt;script&gt;alert(&#x27;pwned&#x27;)&lt;/script&gt;" in page
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", page)
    assert "http://" not in page and "https://" not in page
    assert "default-src 'none'" in page
    calls = store.calls(run_id)
    top_turns = [c for c in calls if c["kind"] == "root" and not c["depth"]]
    assert page.count("<details") == len(top_turns) + 3 + len(calls) + 1   # top turns, their cells, calls, nested cell
    for c in calls:
        assert f"${c['cost_usd'] or 0:.4f}" in page                  # cost per node
    assert "subtree $" in page


def test_export_of_an_unknown_run_or_format(store: RunStore, run_id: str, tmp_path: Path):
    with pytest.raises(ValueError, match="unknown export format"):
        export(store, run_id, "pdf", tmp_path / "x.pdf")
    from core.store import RunNotFound
    with pytest.raises(RunNotFound):
        export(store, "nope", "json", tmp_path / "x.json")
    assert not (tmp_path / "x.json").exists()


def test_report_titles_carry_the_whole_question(store: RunStore, tmp_path: Path):
    """The Markdown heading, the HTML heading and the page's title: the question as asked,
    not cut at 60 characters with "…" as in History's list."""
    import dataclasses
    question = ("Outage in the web shop log: when did card payments fail, for how long, "
                "and which orders were lost?")
    events = recorded_run("export", "long1")
    events[0] = dataclasses.replace(events[0], question=question)      # the question a user typed
    write_events(store, events)
    export(store, "long1", "md", tmp_path / "r.md")
    export(store, "long1", "html", tmp_path / "r.html")
    heading = (tmp_path / "r.md").read_text().splitlines()[0]
    assert heading.startswith(f"# {question} · ") and "…" not in heading, heading
    page = (tmp_path / "r.html").read_text()
    assert re.search(rf"<title>{re.escape(question)} · \d+ \w+ \d\d:\d\d · RLM Studio</title>", page)
    assert f"<h1>{question} · " in page
