"""The REST API under /api/v1/ (README "REST API"), with its OpenAPI schema at /api/schema/.

Each app serves its own resources from its own `api` package: annotation/api (corpora, clips,
studies, a study's annotations), evaluation/api (agreement reports, label sets, dataset exports,
systems, cast sets, suite reports) and modelzoo/api (benchmark and detection runs). One module per
resource holds its serializers, filters and viewset; each package's `routes.py` lists its
resources, and config/urls.py puts them all on one router (annotation/shared/api/routers.py), so there is one
/api/v1/ and one schema.

What every endpoint shares lives in annotation/shared/api/, on the ground floor, where the apps
above can build on it: `base.py` (the viewset they are built on), `permissions.py` (Django model
permissions, view_<model> for reads), `errors.py` (every error is JSON), `pagination.py`, `jobs.py`
(how a background job is polled), `idempotency.py` (the Idempotency-Key header of every POST) and
`routers.py`; the throttle is DRF's, set in config/settings.py. The writes of corpora and studies
are here, in `corpus_writes.py` and `study_writes.py`.

Views only translate between HTTP and the services: every write goes through the app's services,
and a refusal comes back as 400 with the service's reason.
"""
