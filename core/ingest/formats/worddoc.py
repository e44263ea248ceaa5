"""DOCX -> text with python-docx: paragraphs and tables in body order.
Headings become Markdown-style "#" lines; table rows are tab-separated cells
(merged cells once). Headers, footers, comments and footnotes are not read."""

from __future__ import annotations

import io

from core.ingest.model import Extracted


def extract(data: bytes) -> Extracted:
    import docx
    from docx.table import Table

    document = docx.Document(io.BytesIO(data))
    lines: list[str] = []
    for item in document.iter_inner_content():
        if isinstance(item, Table):
            lines.extend(_table_lines(item))
            lines.append("")
        else:
            lines.append(_heading_prefix(item) + item.text)
    return Extracted("docx", _squeeze(lines))


def _heading_prefix(paragraph) -> str:
    name = paragraph.style.name if paragraph.style is not None else ""
    if name.startswith("Heading ") and name[8:].isdigit():
        return "#" * min(int(name[8:]), 6) + " "
    if name == "Title":
        return "# "
    return ""


def _table_lines(table) -> list[str]:
    lines = []
    for row in table.rows:
        seen: set[int] = set()
        cells = []
        for cell in row.cells:
            if id(cell._tc) in seen:
                continue
            seen.add(id(cell._tc))
            cells.append(" ".join(cell.text.split()))
        lines.append("\t".join(cells))
    return lines


def _squeeze(lines: list[str]) -> str:
    out: list[str] = []
    for line in lines:
        if line.strip() or (out and out[-1].strip()):
            out.append(line.rstrip())
    return "\n".join(out).strip("\n")
