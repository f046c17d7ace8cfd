"""evaluation's resources under /api/v1/ (composed in config/urls.py by annotation.shared.api.routers)."""

from annotation.shared.api.routers import Route
from evaluation.api.agreement_reports import AgreementReportViewSet
from evaluation.api.dataset_exports import DatasetExportViewSet
from evaluation.api.dataset_imports import DatasetImportViewSet
from evaluation.api.label_set_rows import LabelSetRowViewSet
from evaluation.api.label_sets import LabelSetViewSet
from evaluation.api.study_designs import StudyDesignViewSet
from evaluation.api.suite_reports import SuiteReportViewSet
from evaluation.api.systems import CastSetViewSet, SystemOutputViewSet, SystemViewSet

ROUTES: list[Route] = [
    ("agreement-reports", AgreementReportViewSet, "agreement-report"),
    ("label-sets", LabelSetViewSet, "label-set"),
    ("label-sets/<int:label_set_pk>/rows", LabelSetRowViewSet, "label-set-row"),
    ("dataset-exports", DatasetExportViewSet, "dataset-export"),
    ("dataset-imports", DatasetImportViewSet, "dataset-import"),
    ("systems", SystemViewSet, "system"),
    ("systems/<int:system_pk>/outputs", SystemOutputViewSet, "system-output"),
    ("cast-sets", CastSetViewSet, "cast-set"),
    ("suite-reports", SuiteReportViewSet, "suite-report"),
    ("study-designs", StudyDesignViewSet, "study-design"),
]
