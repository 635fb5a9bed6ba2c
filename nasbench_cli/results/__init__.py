"""Results: reading and validating result files, truncation, aggregation, report tables, baselines, export."""
