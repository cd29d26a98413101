"""Registers the built-in workloads (filled in by the workload-zoo work)."""
