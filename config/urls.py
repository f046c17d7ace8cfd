from django.contrib import admin
from django.urls import include, path
from django.views.generic import RedirectView
from drf_spectacular.views import SpectacularAPIView, SpectacularRedocView, SpectacularSwaggerView

from annotation.api.routes import ROUTES as ANNOTATION_API
from annotation.shared.api.routers import api_urls
from evaluation.api.routes import ROUTES as EVALUATION_API
from modelzoo.api.routes import ROUTES as MODELZOO_API
from prolific.api.routes import ROUTES as PROLIFIC_API

urlpatterns = [
    path("admin/", admin.site.urls),
    # The REST API (README "REST API"): each app's resources on one router, one schema, and the
    # two ways of reading it.
    path("api/v1/", include(api_urls(ANNOTATION_API, PROLIFIC_API, EVALUATION_API, MODELZOO_API))),
    path("api/schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path("api/docs/", SpectacularSwaggerView.as_view(url_name="api-schema"), name="api-docs"),
    path("api/redoc/", SpectacularRedocView.as_view(url_name="api-schema"), name="api-redoc"),
    path("", include("annotation.urls")),
    path("", include("prolific.urls")),
    path("evaluation/", include("evaluation.urls")),
    path("modelzoo/", include("modelzoo.urls")),
    path("", RedirectView.as_view(pattern_name="admin:index", permanent=False)),
]

# An upload refused as it arrived names its limit (annotation/views/errors.py).
handler400 = "annotation.views.errors.bad_request"
