"""Suites: named, versioned lists of tasks (benchmark, objectives, constraints, budget, workers)."""
