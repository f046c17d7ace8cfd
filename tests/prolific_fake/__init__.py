"""A contract fake of Prolific's API v1, served on 127.0.0.1 for tests (these machines reach no
outside host). server.py: the HTTP server, its state and the route registry; rules.py: every rule
it enforces, each with the words of Prolific's documentation it comes from; one module per area
registers its endpoints (studies.py: studies, filters, participant groups). The fixture
`prolific_fake` (fixtures.py) starts it on a free port and points the settings at it."""
