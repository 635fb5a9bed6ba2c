"""The harness: the event-driven simulator, one trial, the local and Dask runners, the run lock."""
