"""Fixture generators: small real files of every format, written by the tests
themselves (no binary fixtures in the repo). Also used by tests/bench."""

from __future__ import annotations

import io
import zipfile
from email.message import EmailMessage
from pathlib import Path


def pdf_bytes(pages: list[str]) -> bytes:
    """A minimal valid PDF (Helvetica, WinAnsi), one text page per item;
    "\\n" in a page starts a new text line. An empty string makes a page
    without text (like a scanned page)."""
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>"]
    kids = " ".join(f"{4 + 2 * i} 0 R" for i in range(len(pages)))
    objects.append(f"<< /Type /Pages /Kids [{kids}] /Count {len(pages)} >>".encode())
    objects.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica "
                   b"/Encoding /WinAnsiEncoding >>")
    for i, text in enumerate(pages):
        ops = ["BT", "/F1 11 Tf", "13 TL", "50 760 Td"]
        for j, line in enumerate(text.split("\n") if text else []):
            escaped = line.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
            ops.append(("" if j == 0 else "T* ") + f"({escaped}) Tj")
        ops.append("ET")
        stream = "\n".join(ops).encode("cp1252")
        objects.append(f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources "
                       f"<< /Font << /F1 3 0 R >> >> /Contents {5 + 2 * i} 0 R >>".encode())
        objects.append(b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream")
    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    for offset in offsets:
        out += b"%010d 00000 n \n" % offset
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1, xref)
    return bytes(out)


def encrypted_pdf_bytes(pages: list[str], user_password: str = "secret") -> bytes:
    from pypdf import PdfReader, PdfWriter
    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(pdf_bytes(pages))))
    writer.encrypt(user_password=user_password, owner_password="owner", algorithm="RC4-128")
    buffer = io.BytesIO()
    writer.write(buffer)
    return buffer.getvalue()


def write_docx(path: Path) -> Path:
    import docx
    document = docx.Document()
    document.add_heading("Quarterly Report", level=1)
    document.add_paragraph("Revenue grew in the north region.")
    table = document.add_table(rows=2, cols=2)
    table.cell(0, 0).text, table.cell(0, 1).text = "Region", "Revenue"
    table.cell(1, 0).text, table.cell(1, 1).text = "North", "1200"
    document.add_paragraph("Closing paragraph after the table.")
    document.save(path)
    return path


def write_pptx(path: Path) -> Path:
    from pptx import Presentation
    from pptx.util import Inches
    presentation = Presentation()
    slide = presentation.slides.add_slide(presentation.slide_layouts[1])
    slide.shapes.title.text = "Kickoff"
    slide.placeholders[1].text = "Goals for the year"
    slide.notes_slide.notes_text_frame.text = "Speaker note: mention budget"
    slide = presentation.slides.add_slide(presentation.slide_layouts[5])
    slide.shapes.title.text = "Numbers"
    shape = slide.shapes.add_table(2, 2, Inches(1), Inches(2), Inches(4), Inches(1))
    shape.table.cell(0, 0).text, shape.table.cell(0, 1).text = "Metric", "Value"
    shape.table.cell(1, 0).text, shape.table.cell(1, 1).text = "Users", "42"
    presentation.save(path)
    return path


def write_xlsx(path: Path) -> Path:
    import openpyxl
    workbook = openpyxl.Workbook()
    sales = workbook.active
    sales.title = "Sales"
    sales.append(["Region", "Amount"])
    sales.append(["North", 100])
    sales.append(["South", 250.5])
    sales["A5"] = "after a gap"
    other = workbook.create_sheet("Q2 Costs")
    other.append(["Item", "Cost"])
    other.append(["Rent", 900])
    workbook.save(path)
    return path


def email_message(subject: str, body: str, sender: str = "ann@example.com",
                  html: str | None = None, html_only: bool = False,
                  attachment: bytes | None = None) -> EmailMessage:
    message = EmailMessage()
    message["From"] = sender
    message["To"] = "bob@example.com"
    message["Cc"] = "carol@example.com"
    message["Date"] = "Mon, 03 Feb 2025 10:00:00 +0000"
    message["Subject"] = subject
    if html_only:
        message.set_content(html or body, subtype="html")
    else:
        message.set_content(body)
        if html:
            message.add_alternative(html, subtype="html")
    if attachment is not None:
        message.add_attachment(attachment, maintype="application", subtype="octet-stream",
                               filename="data.bin")
    return message


def mbox_bytes(messages: list[EmailMessage]) -> bytes:
    out = bytearray()
    for message in messages:
        out += b"From ann@example.com Mon Feb  3 10:00:00 2025\n"
        out += message.as_bytes().replace(b"\r\n", b"\n").replace(b"\nFrom ", b"\n>From ")
        out += b"\n\n"
    return bytes(out)


def epub_bytes(chapters: list[tuple[str, str]]) -> bytes:
    """chapters: (title, paragraph); spine order is the list order, while the
    file names are deliberately in reverse order (the spine must win)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("mimetype", "application/epub+zip", compress_type=zipfile.ZIP_STORED)
        archive.writestr("META-INF/container.xml",
                         '<?xml version="1.0"?><container version="1.0" '
                         'xmlns="urn:oasis:names:tc:opendocument:xmlns:container"><rootfiles>'
                         '<rootfile full-path="OEBPS/content.opf" '
                         'media-type="application/oebps-package+xml"/></rootfiles></container>')
        items, refs = [], []
        for i, (title, text) in enumerate(chapters):
            name = f"ch{len(chapters) - i}.xhtml"
            items.append(f'<item id="c{i}" href="{name}" media-type="application/xhtml+xml"/>')
            refs.append(f'<itemref idref="c{i}"/>')
            archive.writestr(f"OEBPS/{name}",
                             f'<?xml version="1.0" encoding="utf-8"?><html '
                             f'xmlns="http://www.w3.org/1999/xhtml"><head><title>{title}</title>'
                             f'<style>p {{color: red}}</style></head><body><h1>{title}</h1>'
                             f'<p>{text}</p></body></html>')
        archive.writestr("OEBPS/content.opf",
                         '<?xml version="1.0"?><package xmlns="http://www.idpf.org/2007/opf" '
                         'version="3.0"><manifest>' + "".join(items) + '</manifest><spine>'
                         + "".join(refs) + "</spine></package>")
    return buffer.getvalue()


def write_all_formats(folder: Path) -> dict[str, Path]:
    """One small file per supported format; returns name -> path."""
    folder.mkdir(parents=True, exist_ok=True)
    files = {
        "notes.txt": "Plain notes\nsecond line\n".encode(),
        "readme.md": b"# Title\n\nSome *markdown* text.\n",
        "script.py": b"def answer():\n    return 42\n",
        "table.csv": b"name,amount\r\nAnn,10\r\nBob,20\r\n",
        "table.tsv": b"name\tamount\nAnn\t10\n",
        "data.json": b'{"name": "Ann", "items": [1, 2, 3]}',
        "events.jsonl": b'{"e": 1}\n{"e": 2}\n',
        "page.html": (b"<html><head><title>The Page</title><style>.x{color:red}</style>"
                      b"<script>var hidden = 1;</script></head><body><h1>Welcome</h1>"
                      b"<p>Visible &amp; clear</p></body></html>"),
        "feed.xml": b'<?xml version="1.0"?><items><item>Alpha</item><item>Beta</item></items>',
        "report.pdf": pdf_bytes(["First page text", "Second page text"]),
        "mail.eml": email_message("Budget", "Please review the budget.").as_bytes(),
        "archive.mbox": mbox_bytes([email_message("One", "first body"),
                                    email_message("Two", "second body")]),
        "book.epub": epub_bytes([("Opening", "It begins."), ("Ending", "It ends.")]),
    }
    paths = {}
    for name, data in files.items():
        (folder / name).write_bytes(data)
        paths[name] = folder / name
    paths["memo.docx"] = write_docx(folder / "memo.docx")
    paths["deck.pptx"] = write_pptx(folder / "deck.pptx")
    paths["book.xlsx"] = write_xlsx(folder / "book.xlsx")
    return paths
