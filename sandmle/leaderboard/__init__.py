"""sandmle.leaderboard: Inspect logs as a leaderboard (Streamlit app, Plotly charts, HTML export).

Import the modules themselves (``logs``, ``tables``, ``stats``, ``charts``, ``export``, ...):
this package re-exports nothing, so ``sandmle leaderboard --help`` does not pay for pandas,
Plotly and Inspect's log readers.
"""
