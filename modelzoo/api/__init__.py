"""The model zoo's resources of the REST API: benchmark runs and detection runs; built on
annotation/api's plumbing (see its docstring) and listed in `routes.py`."""
