from modelzoo.models.benchmark_run import BenchmarkRun
from modelzoo.models.detection_run import DetectionRun

__all__ = ["BenchmarkRun", "DetectionRun"]
