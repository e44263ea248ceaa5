"""Spreadsheets for the `tables` tests and benchmark: several sheets, empty cells,
dates, numbers, text that looks like numbers."""

from __future__ import annotations

import datetime as dt
from pathlib import Path


def write_workbook(path: Path) -> Path:
    import openpyxl
    workbook = openpyxl.Workbook()
    orders = workbook.active
    orders.title = "Orders"
    orders.append(["Date", "Region", "Amount", "Paid", "Note"])
    orders.append([dt.date(2024, 3, 1), "North", 1200, True, None])
    orders.append([dt.datetime(2024, 3, 2, 14, 30), "South", 250.5, False, "late"])
    orders.append([None, None, None, None, None])                 # an empty row in between
    orders.append([dt.date(2024, 3, 4), "North", 80, None, "007"])
    costs = workbook.create_sheet("Q2 Costs")
    costs.append(["Item", "Cost"])
    costs.append(["Rent", 900])
    costs.append(["Power", None])
    workbook.create_sheet("Empty")
    workbook.save(path)
    return path


def write_big_csv(path: Path, rows: int) -> Path:
    with open(path, "w", encoding="utf-8") as f:
        f.write("id,date,region,amount,comment\n")
        for i in range(rows):
            f.write(f"{i},2024-03-{i % 28 + 1:02d},{('North', 'South', 'East')[i % 3]},"
                    f"{(i * 37) % 1000 / 4},\"note {i}, ok\"\n")
    return path
