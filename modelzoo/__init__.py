"""Emphasis detectors trained and benchmarked on finalized label sets.

- modelzoo/training/: PURE (torch, transformers, scikit-learn, Praat; never Django): detectors,
  training, the MMEE settings, metrics. The web processes never import it; the GPU worker's task
  (modelzoo.tasks) imports it inside its body. Entry point: training.benchmark.run_benchmark.
- the rest: the Django side (benchmark runs, their queue, admin, pages).
"""
