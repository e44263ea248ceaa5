"""What a small root's blocks printed, named by the document each read (core/engine/printed_so_far.py)."""

from core.engine.printed_so_far import documents_read, printed_so_far, self_contained

PATHS = ["inspections_2023.md", "inspections_2024.md"]
A = 'doc = [d for d in documents if d["path"].endswith("2023.md")][0]\nprint(len(doc["text"]))'
B = 'doc = [d for d in documents if d["path"].endswith("2024.md")][0]\nprint(len(doc["text"]))'


def test_the_documents_a_block_reads():
    assert documents_read(A, PATHS) == ["inspections_2023.md"]
    assert documents_read("print(documents[1]['text'][:50])", PATHS) == ["inspections_2024.md"]
    assert documents_read("print(context[:100])", PATHS) == []
    assert documents_read("print('fail' in 'a.b')", PATHS) == []        # a quoted word, not a path


def test_two_blocks_are_listed_by_document_oldest_first_and_one_is_not():
    lines = printed_so_far([(A, "4\n"), (B, "3\n"), (A, "4\n")], PATHS)
    assert lines == ("- a block that read inspections_2024.md printed: 3\n"
                     "- a block that read inspections_2023.md printed: 4")
    assert printed_so_far([(A, "4"), (A, "4")], PATHS) == ""
    assert printed_so_far([(A, "4"), ("x = 1", "")], PATHS) == ""
    long = printed_so_far([(A, "y" * 1000), (B, "3")], PATHS)
    assert "y" * 300 + " [...]" in long and "y" * 301 not in long


def test_a_block_that_reads_only_what_it_sets_is_self_contained():
    assert self_contained([A])
    assert self_contained(["import re\nhits = [l for l in context.splitlines() if re.search('x', l)]\nprint(len(hits))"])
    assert not self_contained(["print(hits)"])                 # `hits` may have changed since
    assert not self_contained(["print(("])                     # not Python
