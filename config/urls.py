from django.contrib import admin
from django.urls import include, path
from django.views.generic import RedirectView
from drf_spectacular.views import SpectacularAPIView, SpectacularRedocView, SpectacularSwaggerView

urlpatterns = [
    path("admin/", admin.site.urls),
    # The REST API (README "REST API"); its schema, and the two ways of reading it.
    path("api/v1/", include("evaluation.api.urls")),
    path("api/schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path("api/docs/", SpectacularSwaggerView.as_view(url_name="api-schema"), name="api-docs"),
    path("api/redoc/", SpectacularRedocView.as_view(url_name="api-schema"), name="api-redoc"),
    path("", include("annotation.urls")),
    path("evaluation/", include("evaluation.urls")),
    path("modelzoo/", include("modelzoo.urls")),
    path("", RedirectView.as_view(pattern_name="admin:index", permanent=False)),
]
