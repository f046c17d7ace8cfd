"""The REST API under /api/v1/ (README "REST API"), with its OpenAPI schema at /api/schema/.

One module per resource holds its serializers, filters and viewset, and `urls.py` registers every
viewset on one router (a new resource, such as the model zoo's benchmark runs, is one module and
one `register` line). What all endpoints share: `base.py` (the viewset they are built on),
`permissions.py` (Django model permissions, view_<model> for reads), `errors.py` (every error is
JSON), `pagination.py` and `jobs.py` (how a background job is polled).

Views only translate between HTTP and the services: every write goes through
annotation.services or evaluation.services, and a refusal comes back as 400 with the service's
reason. The API lives in evaluation because it reads both apps and calls both apps' services;
evaluation already depends on annotation, never the other way round.
"""
