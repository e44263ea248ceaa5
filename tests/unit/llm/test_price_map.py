"""litellm's price map read from its file (core/price_map.py) is litellm's own map."""

from core import price_map
from core.llm.litellm_import import litellm


def test_the_file_read_without_litellm_equals_litellms_loaded_map():
    ours, theirs = price_map.model_cost(), litellm().model_cost
    assert len(ours) > 1000 and set(ours) == set(theirs)
    assert [name for name in theirs if dict(ours[name]) != dict(theirs[name])] == []


def test_the_file_is_found_in_the_installed_litellm():
    path = price_map.map_file()
    assert path is not None and path.name == price_map.FILE_NAME and path.stat().st_size > 100_000


def test_aliases_are_served_as_their_owner_and_conflicts_skipped():
    rows = {
        "big": {"input_cost_per_token": 1e-6, "aliases": ["big-latest", "small"]},
        "small": {"input_cost_per_token": 2e-7},
        "big-2025": {"alias_of": "big"},
        "lost": {"alias_of": "nowhere"},
        "chain": {"alias_of": "big-2025"},
    }
    out = price_map.expand_aliases(rows)
    assert out["big-latest"] is out["big"] is out["big-2025"]
    assert out["small"] == {"input_cost_per_token": 2e-7}     # a model of its own is not an alias
    assert "lost" not in out and "chain" not in out            # pointers to nothing, or to a pointer
    assert "aliases" not in out["big"]
