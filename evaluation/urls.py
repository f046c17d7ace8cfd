"""Evaluation's pages outside the admin: the signed export download (a link that needs no login,
as a presigned S3 URL would), and redirects from the score pages' old addresses (before they
moved into the admin, /admin/evaluation/...; the README and older notes link them)."""

from django.urls import path
from django.views.generic import RedirectView

from evaluation.views import dataset_exports

app_name = "evaluation"


def moved(name: str) -> RedirectView:
    return RedirectView.as_view(pattern_name=f"admin:{name}", permanent=True, query_string=True)


urlpatterns = [
    path("exports/download/<str:token>", dataset_exports.export_download, name="export_download"),
    path("forms/<int:study_id>/", moved("evaluation_listeningformreport_study")),
    path("forms/<int:study_id>/scores.csv", moved("evaluation_listeningformreport_csv")),
    path("forms/<int:study_id>/scores.json", moved("evaluation_listeningformreport_json")),
    path("suites/<str:suite>/<int:pk>/", moved("evaluation_suitereport_page")),
    path("suites/<str:suite>/<int:pk>/scores.csv", moved("evaluation_suitereport_csv")),
    path("suites/<str:suite>/<int:pk>/scores.json", moved("evaluation_suitereport_json")),
]
