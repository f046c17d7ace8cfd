from django.contrib import admin
from django.urls import include, path
from django.views.generic import RedirectView

urlpatterns = [
    path("admin/", admin.site.urls),
    path("", include("annotation.urls")),
    path("evaluation/", include("evaluation.urls")),
    path("", RedirectView.as_view(pattern_name="admin:index", permanent=False)),
]
