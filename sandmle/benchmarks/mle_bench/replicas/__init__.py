"""Micro replicas of MLE-bench(-lite) competitions: small data in the exact layout, columns and
id schemes that ``mlebench prepare`` writes, for offline smoke tests of the whole pipeline."""
