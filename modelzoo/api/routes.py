"""The model zoo's resources under /api/v1/ (composed in config/urls.py by annotation.shared.api.routers)."""

from annotation.shared.api.routers import Route
from modelzoo.api.benchmark_runs import BenchmarkRunViewSet
from modelzoo.api.detection_runs import DetectionRunViewSet

ROUTES: list[Route] = [
    ("benchmark-runs", BenchmarkRunViewSet, "benchmark-run"),
    ("detection-runs", DetectionRunViewSet, "detection-run"),
]
