"""Studies: models × scaffolds × benchmarks through Inspect's eval_set, and the demo."""
