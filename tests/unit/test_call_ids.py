"""Typed call ids (core/call_ids.py): the grammar the engine names calls by."""

import pytest

from core.call_ids import CallId, parse, turn_of_cell


@pytest.mark.parametrize("text, expected", [
    ("R", CallId("R", "root", None)),
    ("R.t3", CallId("R.t3", "turn", "R", turn=3)),
    ("R.t3.c2", CallId("R.t3.c2", "cell", "R", turn=3, cell=2)),
    ("R.s5", CallId("R.s5", "sub", "R", sub=5)),
    ("R.s5.t1", CallId("R.s5.t1", "turn", "R.s5", turn=1)),
    ("R.s5.t1.c1", CallId("R.s5.t1.c1", "cell", "R.s5", turn=1, cell=1)),
    ("R.s5.s2", CallId("R.s5.s2", "sub", "R.s5", sub=2)),
    ("R.s5.s2.t10.c3", CallId("R.s5.s2.t10.c3", "cell", "R.s5.s2", turn=10, cell=3)),
])
def test_the_engines_ids(text, expected):
    assert parse(text) == expected


@pytest.mark.parametrize("text", [None, "", "X.t1", "R.", "R.t", "R.tx", "R.c1", "R.t1.s2", "R.t1.c1.c2",
                                  "R.t1.t2", "RR.t1", "R.t1 ", "R.T1"])
def test_what_is_not_a_call_id(text):
    assert parse(text) is None


def test_what_an_id_says():
    cell = parse("R.s5.t1.c1")
    assert (cell.turn_id, cell.depth, cell.top) == ("R.s5.t1", 1, False)
    assert (parse("R.t2.c1").turn_id, parse("R.t2.c1").top, parse("R.t2").depth) == ("R.t2", True, 0)
    assert parse("R.s3").top and parse("R.s3").turn_id is None
    assert turn_of_cell("R.t4.c7") == "R.t4" and turn_of_cell("R.t4") is None and turn_of_cell("junk") is None


def test_ids_built_by_callid_parse_back_to_their_place():
    from core.call_ids import CallId
    turn = CallId.for_turn(CallId.for_sub("R", 5), 1)
    cell = CallId.for_cell(turn, 2)
    assert (turn, cell) == ("R.s5.t1", "R.s5.t1.c2")
    parsed = CallId.parse(cell)
    assert (parsed.kind, parsed.owner, parsed.turn, parsed.cell, parsed.depth, parsed.turn_id) == \
        ("cell", "R.s5", 1, 2, 1, turn)
    assert CallId.parse(CallId.for_turn("R", 3)).top and CallId.parse("R.x1") is None
