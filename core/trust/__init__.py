"""Trust what a run says: citations, coverage, verify by re-execution, fork,
cost preview, per-run results, the reproducibility manifest and compare.
See docs/trust.md. Nothing here imports Qt or app/."""
