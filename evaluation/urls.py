from django.urls import path

from evaluation.views import dataset_exports, listening_form_reports, suite_reports

app_name = "evaluation"

urlpatterns = [
    path("exports/download/<str:token>", dataset_exports.export_download, name="export_download"),
    path("listening-forms/<int:study_id>/", listening_form_reports.listening_form_report, name="listening_form_report"),
    path(
        "listening-forms/reports/<int:pk>/progress/",
        listening_form_reports.listening_form_report_progress,
        name="listening_form_report_progress",
    ),
    path(
        "listening-forms/<int:study_id>/scores.csv",
        listening_form_reports.listening_form_report_download,
        {"kind": "csv"},
        name="listening_form_report_csv",
    ),
    path(
        "listening-forms/<int:study_id>/scores.json",
        listening_form_reports.listening_form_report_download,
        {"kind": "json"},
        name="listening_form_report_json",
    ),
    path("suites/<suite>/<int:pk>/", suite_reports.suite_report, name="suite_report"),
    path("suites/reports/<int:report_id>/progress/", suite_reports.suite_report_progress, name="suite_report_progress"),
    path("suites/<suite>/<int:pk>/scores.csv", suite_reports.suite_report_download, {"kind": "csv"}, name="suite_csv"),
    path(
        "suites/<suite>/<int:pk>/scores.json", suite_reports.suite_report_download, {"kind": "json"}, name="suite_json"
    ),
]
