"""PPTX -> text per slide with python-pptx: text frames, tables and grouped
shapes in the slide's shape order, then the speaker notes. One span per slide."""

from __future__ import annotations

import io

from core.ingest.formats.blocks import BlockText
from core.ingest.model import NO_TEXT, ExtractError, Extracted


def extract(data: bytes) -> Extracted:
    from pptx import Presentation

    presentation = Presentation(io.BytesIO(data))
    blocks = BlockText()
    for number, slide in enumerate(presentation.slides, 1):
        lines: list[str] = []
        for shape in slide.shapes:
            _shape_lines(shape, lines)
        if slide.has_notes_slide:
            notes = slide.notes_slide.notes_text_frame
            if notes is not None and notes.text.strip():
                lines.append("Notes:")
                lines.extend(line for line in notes.text.splitlines() if line.strip())
        blocks.add(f"slide {number}", "\n".join(lines))
    if not blocks.spans:
        raise ExtractError(NO_TEXT, "presentation has no slides")
    return Extracted("pptx", blocks.text(), tuple(blocks.spans))


def _shape_lines(shape, lines: list[str]) -> None:
    from pptx.shapes.group import GroupShape

    if isinstance(shape, GroupShape):
        for child in shape.shapes:        # group shape
            _shape_lines(child, lines)
        return
    if getattr(shape, "has_table", False) and shape.has_table:
        for row in shape.table.rows:
            lines.append("\t".join(" ".join(cell.text.split()) for cell in row.cells))
        return
    if getattr(shape, "has_text_frame", False) and shape.has_text_frame:
        for paragraph in shape.text_frame.paragraphs:
            text = "".join(run.text for run in paragraph.runs) or paragraph.text
            if text.strip():
                lines.append(text.replace("\x0b", "\n").rstrip())
