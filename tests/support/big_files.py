"""Big single files generated for tests and benchmarks: a mailbox, a server log, a CSV, each
of about `size` bytes, with a planted thing to count whose right count is returned."""

from __future__ import annotations

from pathlib import Path

PLANT = "ZEBRAFISH"
_BODY = ("The quarterly figures were reviewed by the team and the numbers look fine. " * 135)[:10_000]
_SENDERS = ("alice@example.org", "bob@example.com", "carol@example.net")


# Not all ASCII: accents (two UTF-8 bytes, one character), CJK (three) and emoji (four, and
# two UTF-16 units in Qt), so a character offset and a byte offset differ more at every line.
_INTL_BODY = ("Les chiffres du trimestre ont été revus par l'équipe de Zoë à Málaga; 東京 aussi 😀. " * 140)


def write_mbox(path: Path, size: int, body: int = 10_000, intl: bool = False) -> tuple[int, int]:
    """An mbox of messages of about `body` bytes until `size` bytes: (messages, planted), the
    word planted once in every 7th message. `intl`: bodies in UTF-8 with accents and emoji,
    and message m's second body line "Référence REF-<m, 6 digits> für Zoë 😀"."""
    sample = _INTL_BODY if intl else _BODY
    text = (sample * (body // len(sample) + 1))[:body]
    written = messages = planted = 0
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        while written < size:
            sender = _SENDERS[messages % 3]
            mark = f"\nReference {PLANT} {messages}\n" if messages % 7 == 0 else "\n"
            head = ("MIME-Version: 1.0\nContent-Type: text/plain; charset=utf-8\n"
                    "Content-Transfer-Encoding: 8bit\n") if intl else ""
            lead = f"Bonjour à tous 👋\nRéférence REF-{messages:06d} für Zoë 😀\n" if intl else ""
            message = (f"From {sender} Mon Jan  1 00:00:00 2024\nFrom: {sender}\nTo: team@example.org\n"
                       f"Subject: Report {messages}\nDate: Mon, 1 Jan 2024 00:00:00 +0000\n{head}\n"
                       f"{lead}{text}{mark}\n")
            planted += messages % 7 == 0
            messages += 1
            written += f.write(message)
    return messages, planted


def _lines(path: Path, size: int, line, marked, header: str = "") -> tuple[int, int]:
    """Lines `line(i)` written 10,000 at a time until `size` bytes: (lines, lines where marked(i))."""
    written = count = hits = 0
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        written += f.write(header)
        while written < size:
            block = range(count, count + 10_000)
            written += f.write("".join(map(line, block)))
            hits += sum(1 for i in block if marked(i))
            count += 10_000
    return count, hits


def write_log(path: Path, size: int, intl: bool = False) -> tuple[int, int]:
    """A log of about `size` bytes: (lines, lines with ' ERROR '); its lines are log_line(i)."""
    return _lines(path, size, lambda i: log_line(i, intl) + "\n", lambda i: i % 13 == 0)


def log_line(i: int, intl: bool = False) -> str:
    """Line i (from 0) of write_log's log, without its newline. `intl`: it ends
    " user=Zoë-<i % 50> trace=TR<i, 7 digits>X ✓ 😀 東京" (UTF-8, not all ASCII)."""
    return (f"2024-01-01T00:{i // 60 % 60:02d}:{i % 60:02d} web-{i % 8} app[{i % 977}]: "
            f"{'ERROR' if i % 13 == 0 else 'INFO'} request {i} served in {i % 250} ms"
            + (f" user=Zoë-{i % 50} trace=TR{i:07d}X ✓ 😀 東京" if intl else ""))


_STATUSES = ("paid", "open", "paid", "refunded", "paid")


def write_csv(path: Path, size: int) -> tuple[int, int]:
    """A CSV of about `size` bytes with a header: (rows, rows whose status is 'refunded')."""
    return _lines(path, size, lambda i: f"{i},region-{i % 12},customer-{i % 5011},{(i * 37) % 10_000}."
                                        f"{i % 100:02d},{_STATUSES[i % 5]}\n", lambda i: i % 5 == 3,
                  header="id,region,customer,amount,status\n")


# What the tests and the bench ask of each kind of big file: (file name, writer, the scripted
# root's count in Python over the REPL's names, the right answer from the writer's (total,
# counted)). The mailbox is counted message by message (documents[0]["messages"], each cut from
# `context` on its own); the CSV in its text and through its `tables` view (its rows and the
# last row's id, read when the file was read).
COUNTS = {
    "mbox": ("export.mbox", write_mbox,
             f"sum({PLANT!r} in m['text'] for d in documents for m in d.get('messages', ()))",
             lambda total, counted: str(counted)),
    "log": ("server.log", write_log, "context.count(' ERROR ')", lambda total, counted: str(counted)),
    "csv": ("sales.csv", write_csv, "' '.join(map(str, (context.count(',refunded\\n'), len(tables[0]['rows']),"
                                    " tables[0]['rows'][-1][0])))",
            lambda total, counted: f"{counted} {total} {total - 1}"),
}
