from django.urls import path

from evaluation.views import dataset_exports, listening_form_reports

app_name = "evaluation"

urlpatterns = [
    path("exports/download/<str:token>", dataset_exports.export_download, name="export_download"),
    path("forms/<int:study_id>/", listening_form_reports.form_report, name="form_report"),
    path("forms/reports/<int:pk>/progress/", listening_form_reports.form_report_progress, name="form_report_progress"),
    path(
        "forms/<int:study_id>/scores.csv",
        listening_form_reports.form_report_download,
        {"kind": "csv"},
        name="form_report_csv",
    ),
    path(
        "forms/<int:study_id>/scores.json",
        listening_form_reports.form_report_download,
        {"kind": "json"},
        name="form_report_json",
    ),
]
