"""/api/v1/: one router for every app's resources, one OpenAPI schema (config/urls.py composes them).

Each app's API package lists its resources in `routes.py` (annotation/api, evaluation/api,
modelzoo/api), as (URL prefix, viewset, basename); a new resource is a viewset on
annotation.shared.api.base and one line there, e.g. ("benchmark-runs", BenchmarkRunViewSet, "benchmark-run").
The router lives on the ground floor so that no app imports a floor above its own to be served.
"""

from collections.abc import Iterable

from django.urls import URLPattern, re_path
from rest_framework import routers

from annotation.shared.api.errors import not_found

Route = tuple[str, type, str]  # URL prefix, viewset, basename (URL names are api:<basename>-list, ...)


class ApiRootView(routers.APIRootView):
    """The list of endpoints, for any signed-in user (each endpoint checks its own permission)."""

    required_perms = ()


class Router(routers.DefaultRouter):
    APIRootView = ApiRootView
    include_format_suffixes = False  # ?format=json does the same, without doubling every path


def api_urls(*apps: Iterable[Route]) -> tuple[list[URLPattern], str]:
    """The URL patterns of every app's routes on one router, for include() under the "api" namespace;
    a path under it that names no endpoint answers a JSON 404."""
    router = Router(use_regex_path=False)
    for routes in apps:
        for prefix, viewset, basename in routes:
            router.register(prefix, viewset, basename=basename)
    return [*router.urls, re_path(r"", not_found)], "api"
