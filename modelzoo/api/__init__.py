"""The model zoo's resources of the REST API (benchmark and detection runs), on annotation/api's plumbing."""
