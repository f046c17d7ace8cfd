from django.urls import path

from evaluation import views_forms

app_name = "evaluation"

urlpatterns = [
    path("forms/<int:study_id>/", views_forms.form_report, name="form_report"),
    path("forms/<int:study_id>/scores.csv", views_forms.form_report_download, {"kind": "csv"}, name="form_report_csv"),
    path(
        "forms/<int:study_id>/scores.json", views_forms.form_report_download, {"kind": "json"}, name="form_report_json"
    ),
]
