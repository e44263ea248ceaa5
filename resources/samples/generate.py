"""Write the sample documents in resources/samples/documents/ (deterministic).

    python -m resources.samples.generate        # rewrites the files; same bytes every time

The samples are self-written fiction about a small coffee roaster, Harbor Lane
Coffee: eight quarterly reports (Markdown and plain text), a table of monthly
sales (CSV) and the web shop's server log (about 150 KB). The figures in the
reports are computed from the same numbers as the CSV, and the incidents the
reports mention are in the log, so the suggested questions (questions.json)
have answers that need all three.
"""

from __future__ import annotations

import csv
import io
import random
from datetime import datetime, timedelta
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = HERE / "documents"

PRODUCTS = {                      # product: (price per bag in USD, base bags per month)
    "Harbor Blend": (14.0, 900),
    "Dark Pier": (15.5, 520),
    "Lighthouse Decaf": (13.0, 210),
    "Single Origin Ethiopia": (19.0, 260),
    "Cold Brew Pack": (17.0, 150),
}
REGIONS = {"Northeast": 1.0, "Midwest": 0.55, "West": 0.7}
MONTHS = [(y, m) for y in (2023, 2024) for m in range(1, 13)]

# Things that happened, by quarter; they move the sales and fill the reports.
EVENTS = {
    (2023, 1): ["a slow start after the holidays", "the new roaster (a 30 kg drum) was installed in March"],
    (2023, 2): ["the Lighthouse Decaf relaunch with a Swiss Water process",
                "a two-week green coffee shortage in May that cut Dark Pier output"],
    (2023, 3): ["the first Cold Brew Pack summer campaign", "a new wholesale account with Pine Street Cafes (Midwest)"],
    (2023, 4): ["the holiday gift boxes", "shipping costs up 9 % after a carrier price change"],
    (2024, 1): ["a subscription service launched in February", "Single Origin Ethiopia moved to a new importer"],
    (2024, 2): ["subscriptions passed 1,000 active customers", "a price rise of $0.50 a bag on Harbor Blend in April"],
    (2024, 3): ["the web shop payment outage on 14 August 2024 (about three hours, card payments failed)",
                "record Cold Brew Pack sales in a hot July"],
    (2024, 4): ["the second holiday season with gift boxes and subscriptions",
                "a West coast warehouse opened in October, cutting delivery times"],
}


def growth(product: str, year: int, month: int) -> float:
    """A sales multiplier per product and month (trend, season, events)."""
    t = (year - 2023) * 12 + month - 1
    f = 1.0 + 0.012 * t
    if product == "Cold Brew Pack":
        f *= {6: 1.6, 7: 2.4 if year == 2024 else 1.9, 8: 1.8 if year == 2023 else 2.0}.get(month, 0.7)
        f *= 1.0 + 0.05 * t            # the product that grows fastest
    if product == "Lighthouse Decaf" and (year, month) >= (2023, 5):
        f *= 1.35
    if product == "Dark Pier" and (year, month) == (2023, 5):
        f *= 0.55
    if month in (11, 12):
        f *= 1.45 if product != "Cold Brew Pack" else 1.0
    if (year, month) >= (2024, 2):      # subscriptions
        f *= 1.12
    if (year, month) == (2024, 8):      # the outage cost a few orders
        f *= 0.96
    return f


def sales_rows() -> list[dict]:
    rng = random.Random(2024)
    rows = []
    for year, month in MONTHS:
        for product, (price, base) in PRODUCTS.items():
            if product == "Harbor Blend" and (year, month) >= (2024, 4):
                price += 0.5
            for region, share in REGIONS.items():
                regional = share * (1.25 if region == "Midwest" and (year, month) >= (2023, 8) else 1.0)
                bags = round(base * regional * growth(product, year, month) * rng.uniform(0.93, 1.07))
                rows.append({"month": f"{year}-{month:02d}", "product": product, "region": region,
                             "bags": bags, "revenue_usd": round(bags * price, 2)})
    return rows


def write_csv(rows: list[dict]) -> str:
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=list(rows[0]), lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return buf.getvalue()


def quarter_of(month_text: str) -> tuple[int, int]:
    year, month = int(month_text[:4]), int(month_text[5:])
    return year, (month - 1) // 3 + 1


def report(year: int, quarter: int, rows: list[dict], previous: float | None) -> str:
    mine = [r for r in rows if quarter_of(r["month"]) == (year, quarter)]
    revenue = sum(r["revenue_usd"] for r in mine)
    bags = sum(r["bags"] for r in mine)
    by_product: dict[str, float] = {}
    by_region: dict[str, float] = {}
    for r in mine:
        by_product[r["product"]] = by_product.get(r["product"], 0) + r["revenue_usd"]
        by_region[r["region"]] = by_region.get(r["region"], 0) + r["revenue_usd"]
    change = "" if previous is None else \
        f" That is {100 * (revenue - previous) / previous:+.1f} % against the previous quarter."
    events = EVENTS[(year, quarter)]
    lines = [
        f"# Harbor Lane Coffee — quarterly report, Q{quarter} {year}",
        "",
        "## Summary",
        f"Revenue for the quarter was ${revenue:,.0f} from {bags:,} bags sold.{change}",
        f"The quarter was shaped by {events[0]}, and by {events[1]}.",
        "",
        "## Products",
    ]
    for product, value in sorted(by_product.items(), key=lambda kv: -kv[1]):
        lines.append(f"- {product}: ${value:,.0f}")
    lines += ["", "## Regions"]
    for region, value in sorted(by_region.items(), key=lambda kv: -kv[1]):
        lines.append(f"- {region}: ${value:,.0f}")
    lines += ["", "## Notes from operations", NOTES[(year, quarter)], "",
              "## Outlook", OUTLOOK[(year, quarter)], ""]
    return "\n".join(lines)


NOTES = {
    (2023, 1): "The old 12 kg roaster ran at capacity through February. The new drum roaster was commissioned on "
               "20 March; the first week of roasting on it was spent on profiles for Harbor Blend.",
    (2023, 2): "Green coffee for Dark Pier arrived two weeks late in May, so we roasted about half the usual amount "
               "that month. Decaf sales rose after the relaunch; customers mention the taste in reviews.",
    (2023, 3): "Pine Street Cafes started ordering weekly in August. The cold brew campaign ran on social media "
               "and in two farmers' markets. The web shop ran without incidents.",
    (2023, 4): "Gift boxes sold out in the second week of December. The carrier raised its prices on 1 October; we "
               "kept free shipping above $40.",
    (2024, 1): "Subscriptions opened on 5 February (every two or four weeks). The Ethiopia importer changed; the "
               "first lots were cupped and approved in January.",
    (2024, 2): "Active subscriptions reached 1,040 at the end of June. Harbor Blend went from $14.00 to $14.50 a "
               "bag on 1 April with no visible drop in orders.",
    (2024, 3): "On 14 August 2024 card payments in the web shop failed from about 09:40 to 12:55 after the "
               "payment gateway's certificate expired; orders were taken again once it was renewed. About 60 "
               "orders were lost or delayed. The log of the web shop has the details. July was the best cold brew "
               "month we have had.",
    (2024, 4): "The West coast warehouse in Sacramento opened on 7 October; delivery to California now takes two "
               "days instead of five. Gift boxes and subscriptions together made December the biggest month so far.",
}
OUTLOOK = {
    (2023, 1): "We expect the new roaster to lift capacity by 40 % from Q2.",
    (2023, 2): "Summer should favour cold brew; we plan a campaign.",
    (2023, 3): "Holiday gift boxes are planned for Q4.",
    (2023, 4): "A subscription service is planned for early 2024.",
    (2024, 1): "We aim for 1,000 active subscriptions by the summer.",
    (2024, 2): "A second cold brew summer; payment provider contract renews in the autumn.",
    (2024, 3): "Certificate renewals are now tracked in the operations calendar. A West coast warehouse opens in Q4.",
    (2024, 4): "For 2025: a second roaster shift and wholesale in the West.",
}


def server_log() -> str:
    """The web shop's log for 13 and 14 August 2024: routine lines and the outage."""
    rng = random.Random(814)
    out = []
    t = datetime(2024, 8, 13, 0, 0, 0)
    end = datetime(2024, 8, 15, 0, 0, 0)
    outage = (datetime(2024, 8, 14, 9, 41, 12), datetime(2024, 8, 14, 12, 54, 30))
    paths = ["/", "/shop", "/shop/harbor-blend", "/shop/dark-pier", "/shop/cold-brew-pack", "/cart",
             "/account", "/subscriptions"]
    order = 48100
    while t < end:
        t += timedelta(seconds=rng.randint(20, 130))
        stamp = t.strftime("%Y-%m-%d %H:%M:%S")
        roll = rng.random()
        in_outage = outage[0] <= t <= outage[1]
        if in_outage and roll < 0.55:
            order += 1
            out.append(f"{stamp} ERROR payments order={order} card payment failed: "
                       "gateway TLS handshake failed (certificate has expired)")
            if rng.random() < 0.2:
                out.append(f"{stamp} WARN  checkout retry queue length={rng.randint(5, 40)}")
        elif roll < 0.25:
            order += 1
            out.append(f"{stamp} INFO  payments order={order} paid amount={rng.randint(14, 96)}.{rng.randint(0, 99):02d} "
                       f"method={'card' if rng.random() < 0.8 else 'paypal'}")
        elif roll < 0.3:
            out.append(f"{stamp} INFO  subscriptions renewal ok customer={rng.randint(1000, 9999)}")
        elif roll < 0.305:
            out.append(f"{stamp} WARN  inventory low stock product=cold-brew-pack left={rng.randint(3, 20)}")
        elif roll < 0.307:
            out.append(f"{stamp} ERROR mailer smtp timeout after 30s (will retry)")
        else:
            path = rng.choice(paths)
            out.append(f"{stamp} INFO  http GET {path} 200 {rng.randint(8, 180)}ms")
        if t.replace(second=0) == datetime(2024, 8, 14, 9, 41) and not any("expired" in x for x in out[-30:]):
            out.append(f"{stamp} WARN  payments gateway certificate expires in 0 days (notAfter=2024-08-14 09:40:00)")
    out.insert(0, "# harborlane-webshop app log, host web-1, times in UTC")
    marker = outage[1].strftime("%Y-%m-%d %H:%M:%S")
    cut = next(i for i, line in enumerate(out) if line[:19] > marker)
    out.insert(cut, f"{marker} INFO  payments gateway certificate renewed; TLS handshake ok")
    return "\n".join(out) + "\n"


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "reports").mkdir(exist_ok=True)
    rows = sales_rows()
    (OUT / "sales.csv").write_text(write_csv(rows), encoding="utf-8")
    previous = None
    for year in (2023, 2024):
        for quarter in (1, 2, 3, 4):
            text = report(year, quarter, rows, previous)
            previous = sum(r["revenue_usd"] for r in rows if quarter_of(r["month"]) == (year, quarter))
            suffix = "md" if year == 2024 or quarter % 2 == 0 else "txt"
            (OUT / "reports" / f"{year}-Q{quarter}.{suffix}").write_text(text, encoding="utf-8")
    (OUT / "webshop.log").write_text(server_log(), encoding="utf-8")


if __name__ == "__main__":
    main()
