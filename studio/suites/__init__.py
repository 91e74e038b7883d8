"""Test suites: test cases (saved, imported, exported), runs and their reports, lint, the overlap checkup, threshold tuning, and the smallest fix for a failing case."""
