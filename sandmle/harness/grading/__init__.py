"""The grading core: one submission file in, MLE-bench's ``CompetitionReport`` out.

``report`` grades (``grade_submission``), ``registry`` holds the ``@grader`` functions by name,
``bounded`` grades in a child process with a time and memory cap, ``metrics`` and ``medals``
compute scores and medal thresholds as MLE-bench does, and ``reading`` parses CSV files as
MLE-bench's reference environment parses them. Everything here runs on the host, never in
the agent's sandbox.
"""
