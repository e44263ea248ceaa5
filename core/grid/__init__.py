"""The review grid: questions (columns) over documents (rows), each cell an ordinary
stored run with its answer, typed value, citations and cost; one dollar cap for all.

    model.py    Column, Row, parse_columns, the cell's question
    values.py   typed values parsed and checked (flagged, never guessed)
    store.py    the grid tables (m010_grids): committed cell by cell, resumable
    runner.py   GridRun: the local scheduler, one shared Budget
    preview.py  what the grid will cost before it starts
"""
