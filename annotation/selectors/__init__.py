"""Reads that several views share: ORM rows turned into what pages and the pure core need."""
