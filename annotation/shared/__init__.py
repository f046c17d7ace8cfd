"""Infrastructure every app builds on, kept on the ground floor so that the apps above may use it:
the job runner (`jobs.py`), the permission-checked lookups of staff pages (`access.py`), the
download of what a job made (`downloads.py`) and the API's plumbing (`api/`: the viewset every
resource is built on, errors, pagination, idempotency, permissions, job polling, the router).

annotation's own code stands on it like the other apps'. Its modules sit on different layers of
annotation's contract (pyproject.toml, `annotation-layers`): `api` beside the views, `jobs` below
the services, `access` and `downloads` with the selectors.
"""
