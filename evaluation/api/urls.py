"""/api/v1/: one router for every resource. A new resource is a viewset on annotation.api.base
and one register() line here, e.g. router.register("benchmark-runs", BenchmarkRunViewSet)."""

from django.urls import re_path
from rest_framework import routers

from annotation.api.annotations import StudyAnnotationViewSet
from annotation.api.clips import ClipViewSet
from annotation.api.corpora import CorpusViewSet
from annotation.api.errors import not_found
from annotation.api.studies import StudyViewSet
from evaluation.api.agreement_reports import AgreementReportViewSet
from evaluation.api.dataset_exports import DatasetExportViewSet
from evaluation.api.label_set_rows import LabelSetRowViewSet
from evaluation.api.label_sets import LabelSetViewSet
from evaluation.api.suite_reports import SuiteReportViewSet
from evaluation.api.systems import CastSetViewSet, SystemOutputViewSet, SystemViewSet
from modelzoo.api.benchmark_runs import BenchmarkRunViewSet
from modelzoo.api.detection_runs import DetectionRunViewSet


class ApiRootView(routers.APIRootView):
    """The list of endpoints, for any signed-in user (each endpoint checks its own permission)."""

    required_perms = ()


class Router(routers.DefaultRouter):
    APIRootView = ApiRootView
    include_format_suffixes = False  # ?format=json does the same, without doubling every path


app_name = "api"
router = Router(use_regex_path=False)
router.register("corpora", CorpusViewSet, basename="corpus")
router.register("clips", ClipViewSet, basename="clip")
router.register("studies", StudyViewSet, basename="study")
router.register("studies/<int:study_pk>/annotations", StudyAnnotationViewSet, basename="study-annotation")
router.register("agreement-reports", AgreementReportViewSet, basename="agreement-report")
router.register("label-sets", LabelSetViewSet, basename="label-set")
router.register("label-sets/<int:label_set_pk>/rows", LabelSetRowViewSet, basename="label-set-row")
router.register("dataset-exports", DatasetExportViewSet, basename="dataset-export")
router.register("benchmark-runs", BenchmarkRunViewSet, basename="benchmark-run")
router.register("systems", SystemViewSet, basename="system")
router.register("systems/<int:system_pk>/outputs", SystemOutputViewSet, basename="system-output")
router.register("cast-sets", CastSetViewSet, basename="cast-set")
router.register("detection-runs", DetectionRunViewSet, basename="detection-run")
router.register("suite-reports", SuiteReportViewSet, basename="suite-report")

urlpatterns = [*router.urls, re_path(r"", not_found)]
