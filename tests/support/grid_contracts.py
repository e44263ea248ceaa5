"""Ten short supplier contracts (1-2 kB each) with a renewal date, a liability cap and a
governing law written the way contracts write them (dates and sums in several forms),
and what each typed column should hold: the real-model grid of tests/bench/bench_grid.py.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

COLUMNS = [
    {"name": "renewal", "question": "On what date does the agreement renew or expire?", "type": "date"},
    {"name": "cap", "question": "What is the supplier's liability cap, in US dollars?", "type": "number"},
    {"name": "law", "question": "Which law governs the agreement?", "type": "text",
     "instruction": "Answer with the jurisdiction only (e.g. the State of New York)."},
]

# supplier, buyer, goods, renewal date, how the date is written, cap, how the cap is written, law
CONTRACTS = [
    ("Northwind Packaging Ltd", "Acme Retail Inc", "corrugated shipping boxes",
     dt.date(2026, 3, 14), "14 March 2026", 250_000, "USD 250,000", "England and Wales"),
    ("Brightline Logistics LLC", "Acme Retail Inc", "regional freight services",
     dt.date(2025, 11, 30), "November 30, 2025", 1_500_000, "$1,500,000", "the State of New York"),
    ("Kestrel Software GmbH", "Harbor Health Partners", "a scheduling software licence",
     dt.date(2027, 1, 1), "2027-01-01", 400_000, "four hundred thousand US dollars (US$400,000)", "Germany"),
    ("Pinecrest Foods Co", "Acme Retail Inc", "private-label snack products",
     dt.date(2026, 6, 30), "30 June 2026", 75_000, "$75,000", "the State of California"),
    ("Orion Industrial Supply", "Delta Manufacturing Corp", "spare parts for packaging lines",
     dt.date(2025, 9, 15), "September 15, 2025", 2_000_000, "USD 2,000,000", "the State of Texas"),
    ("Bluewater Cleaning Services", "Harbor Health Partners", "facility cleaning",
     dt.date(2026, 4, 1), "1 April 2026", 500_000, "$500,000", "the Province of Ontario"),
    ("Summit Data Centers Inc", "Delta Manufacturing Corp", "colocation and hosting",
     dt.date(2028, 2, 28), "February 28, 2028", 3_000_000, "three million dollars ($3,000,000)",
     "the State of Delaware"),
    ("Evergreen Print Works", "Acme Retail Inc", "in-store signage printing",
     dt.date(2025, 12, 31), "31 December 2025", 120_000, "USD 120,000", "Scotland"),
    ("Atlas Security Group", "Harbor Health Partners", "on-site security staffing",
     dt.date(2026, 8, 1), "August 1, 2026", 1_000_000, "$1,000,000", "the State of Illinois"),
    ("Meridian Office Supplies", "Delta Manufacturing Corp", "office consumables",
     dt.date(2026, 10, 15), "15 October 2026", 50_000, "fifty thousand US dollars ($50,000)",
     "the Commonwealth of Massachusetts"),
]


def contract_text(i: int) -> str:
    supplier, buyer, goods, _, when, _, cap, law = CONTRACTS[i]
    return f"""SUPPLY AGREEMENT No. SA-{2024 + i % 3}-{100 + i}

This Supply Agreement (the "Agreement") is made between {supplier} (the "Supplier") and
{buyer} (the "Customer") for the supply of {goods}.

1. Scope. The Supplier shall deliver the goods and services described in Schedule A in
accordance with the delivery dates agreed in each purchase order. Title passes on delivery.

2. Price and payment. Prices are fixed for the initial term. The Customer shall pay each
undisputed invoice within forty-five (45) days of receipt. Late amounts bear interest at
one percent (1%) per month.

3. Term and renewal. The Agreement starts on the date of the last signature and runs until
{when} (the "Renewal Date"), on which it renews for successive one-year terms unless either
party gives at least ninety (90) days' written notice of non-renewal.

4. Warranties. The Supplier warrants that the goods conform to the specifications for
twelve (12) months from delivery and are free from defects in materials and workmanship.

5. Limitation of liability. Except for fraud, death or personal injury, the Supplier's total
aggregate liability arising out of or in connection with this Agreement shall not exceed
{cap}. Neither party is liable for indirect or consequential loss.

6. Confidentiality. Each party keeps the other's confidential information secret during
the Agreement and for three (3) years after it ends.

7. Governing law. This Agreement and any dispute arising from it are governed by the laws
of {law}, and the courts of that jurisdiction have exclusive jurisdiction.

Signed for the Supplier: ____________    Signed for the Customer: ____________
"""


def write_contracts(folder: Path) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for i, (supplier, *_rest) in enumerate(CONTRACTS):
        path = folder / f"{i + 1:02d}_{supplier.split()[0].lower()}.txt"
        path.write_text(contract_text(i), encoding="utf-8")
        paths.append(path)
    return paths


def expected(i: int) -> dict:
    """The value each column should hold for contract i."""
    _, _, _, renewal, _, cap, _, law = CONTRACTS[i]
    return {"renewal": renewal.isoformat(), "cap": cap, "law": law}


def law_matches(answer: str, law: str) -> bool:
    """A governing-law answer names the jurisdiction (with or without 'the State of')."""
    core = law.lower().removeprefix("the ").replace("state of ", "").replace("province of ", "") \
        .replace("commonwealth of ", "")
    return core in answer.lower()
