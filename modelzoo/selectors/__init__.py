"""Reads that several views share: ORM rows turned into what pages, the API and the pure core need."""
