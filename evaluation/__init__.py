"""Listening forms, aggregation, agreement and reports (later issues)."""
