"""Emphasis detectors, training and benchmarks on the Celery GPU queue (later issues)."""
