"""annotation's resources of the REST API, and what every app's API is built on (see evaluation/api)."""
