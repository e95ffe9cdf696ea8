"""The harness: competition format, grading core, metrics, Inspect tasks, sandboxes, scorer."""
