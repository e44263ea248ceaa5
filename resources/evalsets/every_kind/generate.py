"""Write the documents and the question set "every kind" (deterministic: the same bytes every time).

    python -m resources.evalsets.every_kind.generate

Self-written fiction about a ferry company on an imagined coast, free to use. Eight kinds of
question over inputs of 5k to 500k characters: a passage's words (lookup), the items of a list,
a count, a sum or an average over a table, a date, a comparison of two documents, a two-hop
question (a fact in one document leads to the answer in another) and a question whose answer
is not in the documents. Every expected answer is computed here from the same data the
documents are written from (tests/unit/evaluation/test_every_kind_set.py checks them again
against the files).
"""

from __future__ import annotations

import csv
import io
import json
import random
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = HERE / "documents"
SET = HERE / "questions.jsonl"

ROUTES = ["Kelp Bay - Sorrel Point", "Sorrel Point - Gannet Isle", "Gannet Isle - Morrow Quay",
          "Morrow Quay - Kelp Bay"]
VESSELS = {"MV Tern": "VX-201", "MV Petrel": "VX-202", "MV Skua": "VX-203", "MV Fulmar": "VX-204"}
HOME_PORTS = {"VX-201": "Kelp Bay", "VX-202": "Morrow Quay", "VX-203": "Gannet Isle", "VX-204": "Sorrel Point"}
CAPTAINS = {"Ilse Varga": "VX-203", "Tomas Orrin": "VX-201", "Marit Kessel": "VX-204", "Odile Brann": "VX-202"}
ENGINEERS = {"Ruben Sark": "VX-202", "Hanne Lowe": "VX-204", "Pavel Dorn": "VX-201", "Greta Fenn": "VX-203"}
MONTHS = [f"2024-{m:02d}" for m in range(1, 13)]
FILLER = ("The harbour office keeps its ledgers in the back room, beside the tide tables and a kettle "
          "that has outlived three harbour masters. ", "Gulls argue over the fish market's scraps while "
          "the morning crossing loads its cars. ", "Deck hands repaint the railings every spring, and the "
          "salt takes the paint back by autumn. ", "Passengers on the upper deck watch the islands "
          "come out of the mist one by one. ", "The timetable on the quay wall is older than most of the "
          "crew and still mostly right. ")


def memo() -> str:
    return "\n\n".join([
        "MEMO: winter operations, from the operations office to all crews",
        "Winter timetable. From the first Monday of November the early crossing from Kelp Bay leaves "
        "at 06:40 instead of 06:10, so that the deck can be gritted before cars board.",
        "Gritting. Crews grit the car deck and the gangway before every crossing when the air "
        "temperature is below two degrees; the bosun signs the gritting sheet.",
        "Lifejacket checks. Every lifejacket is counted on the first day of each month and the "
        "count is written in the safety book, with any missing jacket reported to the office.",
        "Parking on the quay. Crew cars park behind the net sheds, never on the marked loading lanes, "
        "because the lanes must stay clear for the evening freight trucks.",
        "Storm rule. A crossing is cancelled when the forecast gust at Gannet Isle exceeds 45 knots; "
        "the master of the vessel may cancel at lower wind if the swell makes boarding unsafe.",
        "Radio. Every vessel calls the harbour office on channel 14 when it leaves and when it berths.",
    ]) + "\n" + "".join(FILLER) * 9


def ferry_log(rng: random.Random) -> tuple[str, dict]:
    lines, delayed, cancelled = [], 0, 0
    fault_first = None
    for day in range(1, 31):
        for hour in range(6, 22):
            for vessel, code in VESSELS.items():
                stamp = f"2024-09-{day:02d} {hour:02d}:{rng.randrange(60):02d}"
                roll = rng.random()
                if day == 17 and vessel == "MV Petrel" and 9 <= hour <= 13:
                    status = "FAULT engine 2 coolant pressure low"
                    fault_first = fault_first or stamp
                elif roll < 0.06:
                    status = f"DELAYED {rng.randrange(5, 40)} min"
                    delayed += 1
                elif roll < 0.075:
                    status = "CANCELLED weather"
                    cancelled += 1
                else:
                    status = "ON TIME"
                lines.append(f"{stamp} {code} {vessel:<10} {rng.choice(ROUTES):<28} {status}")
    return "\n".join(lines) + "\n", {"delayed": delayed, "cancelled": cancelled, "fault_first": fault_first}


def fares(rng: random.Random) -> tuple[str, dict]:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["month", "route", "passengers", "revenue_eur"])
    rows = []
    for month in MONTHS:
        for route in ROUTES:
            passengers = rng.randrange(800, 4000)
            revenue = round(passengers * rng.choice([6.5, 7.0, 8.25, 9.5]), 2)
            rows.append((month, route, passengers, revenue))
            writer.writerow([month, route, passengers, f"{revenue:.2f}"])
    facts = {
        "passengers_total": sum(r[2] for r in rows),
        "revenue_july": round(sum(r[3] for r in rows if r[0] == "2024-07"), 2),
        "avg_passengers_gannet": round(sum(r[2] for r in rows if r[1] == ROUTES[1]) / 12, 2),
    }
    return out.getvalue(), facts


def inspections(year: int, rng: random.Random, inspectors: list[str]) -> tuple[str, dict]:
    parts, failed = [f"# Safety inspections {year}", ""], 0
    for n, vessel in enumerate(VESSELS, start=1):
        for quarter in range(1, 5):
            who = inspectors[(n + quarter) % len(inspectors)]
            result = "failed" if rng.random() < (0.3 if year == 2023 else 0.12) else "passed"
            failed += result == "failed"
            parts.append(f"## {vessel}, Q{quarter} {year}\nInspector: {who}. Result: {result}. "
                         + rng.choice(FILLER) + rng.choice(FILLER) + "\n")
    return "\n".join(parts), {"failed": failed}


def roster() -> str:
    lines = ["CREW ROSTER (masters and chief engineers)", ""]
    for name, code in CAPTAINS.items():
        lines.append(f"Master {name} commands vessel {code}.")
    for name, code in ENGINEERS.items():
        lines.append(f"Chief engineer {name} serves on vessel {code}.")
    return "\n".join(lines) + "\n\n" + "".join(FILLER) * 8


def registry() -> str:
    lines = ["VESSEL REGISTRY", ""]
    for vessel, code in VESSELS.items():
        lines.append(f"{code}: {vessel}, home port {HOME_PORTS[code]}, built by the Lund yard.")
    return "\n".join(lines) + "\n\n" + "".join(FILLER) * 8


def archive(rng: random.Random) -> str:
    """About 500,000 characters of the company's chronicle, with three planted passages."""
    paragraphs = []
    planted = {
        300: "In the spring of 1962 the company bought its first roll-on ferry, the Old Auk, paid for "
             "with a loan from the fishermen's cooperative.",
        1700: "The lighthouse keepers who served the Sorrel Point light were, in order: Anselm Rood, "
              "Berit Haukland and Cyprian Vell.",
        3100: "The great storm of 1987 tore the pier at Morrow Quay loose, and for eleven weeks the "
              "crossing landed passengers by tender.",
    }
    for n in range(3600):
        if n in planted:
            paragraphs.append(planted[n])
        else:
            paragraphs.append("".join(rng.choice(FILLER) for _ in range(1)))
    return "\n".join(paragraphs) + "\n"


def build() -> tuple[dict[str, str], list[dict]]:
    rng = random.Random(20241205)
    log, log_facts = ferry_log(rng)
    table, fare_facts = fares(rng)
    early = ["Agnes Holt", "Birger Lamm", "Cora Vinter"]
    late = ["Birger Lamm", "Dagny Strand", "Elof Varn"]
    insp23, f23 = inspections(2023, rng, early)
    insp24, f24 = inspections(2024, rng, late)
    files = {"memo.txt": memo(), "ferry_log.txt": log, "fares.csv": table,
             "inspections_2023.md": insp23, "inspections_2024.md": insp24,
             "crew_roster.txt": roster(), "vessel_registry.txt": registry(), "archive.txt": archive(rng)}
    more_failed = "2023" if f23["failed"] > f24["failed"] else "2024"
    day, time_ = log_facts["fault_first"].split()
    not_in = r"(?i)\bnot\b.*\b(in|found|mention|stat|give|contain|say)|\bno\b.*\b(mention|information|record)"
    q = [
        # lookup: a passage's words
        ("memo-gritting", "lookup", "In memo.txt, when must crews grit the car deck?", ["two degrees"], "contains"),
        ("memo-parking", "lookup", "What does memo.txt say about where crew cars park?", ["net sheds"], "contains"),
        ("memo-storm", "lookup", "According to memo.txt, when is a crossing cancelled?", ["45 knots"], "contains"),
        ("archive-first-ferry", "lookup", "In archive.txt, how was the company's first roll-on ferry paid for?",
         ["cooperative"], "contains"),
        # list of items
        ("keepers", "list", "Which lighthouse keepers served the Sorrel Point light, according to archive.txt?",
         ["Rood", "Haukland", "Vell"], "contains"),
        ("vessels", "list", "List the vessel names in vessel_registry.txt.",
         ["Tern", "Petrel", "Skua", "Fulmar"], "contains"),
        ("inspectors-2024", "list", "Which inspectors appear in inspections_2024.md?", late, "contains"),
        # count
        ("delayed", "count", "How many crossings in ferry_log.txt were DELAYED?", log_facts["delayed"], "number"),
        ("cancelled", "count", "How many crossings in ferry_log.txt were CANCELLED?", log_facts["cancelled"],
         "number"),
        ("failed-2023", "count", "How many inspections in inspections_2023.md failed?", f23["failed"], "number"),
        # sum or average over a table
        ("passengers-total", "sum", "What is the total of the passengers column in fares.csv?",
         fare_facts["passengers_total"], "number"),
        ("revenue-july", "sum", "What is the total revenue_eur in fares.csv for the month 2024-07?",
         fare_facts["revenue_july"], "number"),
        ("avg-gannet", "sum", f"What is the average number of passengers per month on the route "
         f"\"{ROUTES[1]}\" in fares.csv?", fare_facts["avg_passengers_gannet"], "number"),
        # date
        ("fault-day", "date", "On which date did MV Petrel first log an engine FAULT in ferry_log.txt?",
         day.replace("-", r"-"), "regex"),
        ("storm-year", "date", "In which year did the great storm tear loose the pier at Morrow Quay (archive.txt)?",
         "1987", "regex"),
        ("winter-start", "date", "From when does the winter timetable in memo.txt apply?",
         r"(?i)first monday of november", "regex"),
        # comparison of two documents
        ("more-failed", "compare", "Did inspections_2023.md or inspections_2024.md record more failed "
         "inspections? Answer with the year.", more_failed, "regex"),
        ("both-years", "compare", "Which inspector appears in both inspections_2023.md and inspections_2024.md?",
         ["Birger Lamm"], "contains"),
        ("new-2024", "compare", "Which inspectors in inspections_2024.md do not appear in inspections_2023.md?",
         ["Dagny Strand", "Elof Varn"], "contains"),
        # two hops: crew_roster.txt gives the vessel code, vessel_registry.txt its name or port
        ("varga-port", "two-hop", "What is the home port of the vessel that Master Ilse Varga commands?",
         [HOME_PORTS[CAPTAINS["Ilse Varga"]]], "contains"),
        ("sark-vessel", "two-hop", "What is the name of the vessel chief engineer Ruben Sark serves on?",
         [next(v for v, c in VESSELS.items() if c == ENGINEERS["Ruben Sark"])], "contains"),
        ("kessel-port", "two-hop", "Master Marit Kessel commands a vessel; what is that vessel's home port?",
         [HOME_PORTS[CAPTAINS["Marit Kessel"]]], "contains"),
        # not in the documents
        ("no-ticket-price", "not-found", "What does a child's single ticket cost according to memo.txt?",
         not_in, "regex"),
        ("no-keeper-1990", "not-found", "Who kept the Gannet Isle lighthouse in 1990, according to archive.txt?",
         not_in, "regex"),
        ("no-diesel", "not-found", "How many litres of diesel did MV Tern burn in 2024, according to the documents?",
         not_in, "regex"),
    ]
    over = {"memo": ["memo.txt"], "archive": ["archive.txt"], "log": ["ferry_log.txt"],
            "fares": ["fares.csv", "memo.txt"], "inspections": ["inspections_2023.md", "inspections_2024.md"],
            "crew": ["crew_roster.txt", "vessel_registry.txt"], "all": []}
    where = {"memo-gritting": "memo", "memo-parking": "memo", "memo-storm": "memo", "archive-first-ferry": "archive",
             "keepers": "archive", "vessels": "crew", "inspectors-2024": "inspections", "delayed": "log",
             "cancelled": "log", "failed-2023": "inspections", "passengers-total": "fares", "revenue-july": "fares",
             "avg-gannet": "fares", "fault-day": "log", "storm-year": "archive", "winter-start": "memo",
             "more-failed": "inspections", "both-years": "inspections", "new-2024": "inspections",
             "varga-port": "crew", "sark-vessel": "crew", "kessel-port": "crew", "no-ticket-price": "memo",
             "no-keeper-1990": "archive", "no-diesel": "all"}
    # names a right answer must not hold: the other year's inspectors
    absent = {"inspectors-2024": sorted(set(early) - set(late)), "both-years": sorted(set(early) ^ set(late)),
              "new-2024": sorted(set(early) & set(late))}
    questions = [{"id": i, "kind": k, "question": text, "expected": exp, "checker": chk}
                 | ({"tolerance": 0.01} if chk == "number" and isinstance(exp, float) else {})
                 | ({"documents": over[where[i]]} if over[where[i]] else {})
                 | ({"absent": absent[i]} if i in absent else {})
                 for i, k, text, exp, chk in q]
    return files, questions


def main() -> None:
    files, questions = build()
    OUT.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (OUT / name).write_text(text, encoding="utf-8", newline="\n")
    SET.write_text("".join(json.dumps(q, ensure_ascii=False) + "\n" for q in questions), encoding="utf-8")
    print(f"{len(files)} documents, {sum(map(len, files.values())):,} characters; {len(questions)} questions")


if __name__ == "__main__":
    main()
