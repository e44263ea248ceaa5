"""Big single files generated for tests and benchmarks: a mailbox, a server log, a CSV, each
of about `size` bytes, with a planted thing to count whose right count is returned."""

from __future__ import annotations

from pathlib import Path

PLANT = "ZEBRAFISH"
_BODY = ("The quarterly figures were reviewed by the team and the numbers look fine. " * 135)[:10_000]
_SENDERS = ("alice@example.org", "bob@example.com", "carol@example.net")


def write_mbox(path: Path, size: int, body: int = 10_000) -> tuple[int, int]:
    """An mbox of messages of about `body` bytes until `size` bytes: (messages, planted), the
    word planted once in every 7th message."""
    text = (_BODY * (body // len(_BODY) + 1))[:body]
    written = messages = planted = 0
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        while written < size:
            sender = _SENDERS[messages % 3]
            mark = f"\nReference {PLANT} {messages}\n" if messages % 7 == 0 else "\n"
            message = (f"From {sender} Mon Jan  1 00:00:00 2024\nFrom: {sender}\nTo: team@example.org\n"
                       f"Subject: Report {messages}\nDate: Mon, 1 Jan 2024 00:00:00 +0000\n\n"
                       f"{text}{mark}\n")
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


def write_log(path: Path, size: int) -> tuple[int, int]:
    """A log of about `size` bytes: (lines, lines with ' ERROR ')."""
    return _lines(path, size, lambda i: f"2024-01-01T00:{i // 60 % 60:02d}:{i % 60:02d} web-{i % 8} "
                                        f"app[{i % 977}]: {'ERROR' if i % 13 == 0 else 'INFO'} request {i} "
                                        f"served in {i % 250} ms\n", lambda i: i % 13 == 0)


_STATUSES = ("paid", "open", "paid", "refunded", "paid")


def write_csv(path: Path, size: int) -> tuple[int, int]:
    """A CSV of about `size` bytes with a header: (rows, rows whose status is 'refunded')."""
    return _lines(path, size, lambda i: f"{i},region-{i % 12},customer-{i % 5011},{(i * 37) % 10_000}."
                                        f"{i % 100:02d},{_STATUSES[i % 5]}\n", lambda i: i % 5 == 3,
                  header="id,region,customer,amount,status\n")
