"""Inspect AI entry point: importing this module registers sandmle's tasks, solvers,
sandboxes and model APIs (named in ``[project.entry-points.inspect_ai]``)."""
