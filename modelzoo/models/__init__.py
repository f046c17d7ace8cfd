from modelzoo.models.benchmark_run import BenchmarkRun

__all__ = ["BenchmarkRun"]
