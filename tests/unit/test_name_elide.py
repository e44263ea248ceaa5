"""File names cut where they are alike (ui/name_elide.py: plain Python, no widget)."""

from __future__ import annotations

from ui.name_elide import differing_parts, elide_name


def test_the_part_of_each_name_no_other_name_shares():
    names = ["2024-Q1-report.md", "2024-Q2-report.md", "notes.txt", "notes.txt"]
    parts = differing_parts(names)
    assert parts["2024-Q1-report.md"] == (6, 7) and parts["2024-Q2-report.md"] == (6, 7)
    assert parts["notes.txt"] == (0, 9)                    # the same name twice: all of it


def test_a_cut_name_keeps_its_own_part_and_its_extension():
    name = "2024-Q1-report-with-a-long-name.md"
    part = differing_parts([name, "2024-Q2-report-with-a-long-name.md"])[name]

    def within(n):
        return lambda text: len(text) <= n
    assert elide_name(name, part, within(99)) == name
    assert elide_name(name, part, within(20)) == "2024-Q1…long-name.md"     # the start, its part, the end
    assert elide_name(name, part, within(11)) == "2024-Q1….md"
    assert elide_name(name, part, within(9)) == "…4-Q1….md"                 # the shared start goes
    assert elide_name(name, part, within(7)) == "…Q1….md"
    assert elide_name(name, part, within(3)) == "…1…"      # narrower: the own part, no extension
    assert elide_name(name, part, within(2)) is None       # the caller cuts as it would
    day = differing_parts(["2024-08-14-incident.txt", "2024-08-15-incident.txt"])
    assert elide_name("2024-08-15-incident.txt", day["2024-08-15-incident.txt"], within(8)) == "…15….txt"
