"""Emphasis detectors trained and benchmarked on finalized label sets.

- modelzoo/training/: PURE (torch, transformers, scikit-learn, Praat; never Django): detectors,
  training, the MMEE settings, metrics. Entry point: training.benchmark.run_benchmark. The GPU
  worker's task (modelzoo.tasks) imports it inside its body; the web processes read only its
  torch-free declarations (configurations, settings) to check a launch.
- plans.py, results.py: PURE: what a launch trains, and results as tables.
- the rest: the Django side: benchmark runs (models/), their launch and cancelling
  (services/benchmark_runs.py), the worker's side (services/benchmark_training.py), admin, pages.
"""
