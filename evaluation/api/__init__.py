"""evaluation's resources of the REST API: agreement reports, label sets and their rows, dataset
exports, systems and their outputs, cast sets, suite reports; built on annotation/api's plumbing
(see its docstring) and listed in `routes.py`."""
