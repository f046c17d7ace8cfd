"""Benchmark suites: scores of systems (models, TTS voices, judges, detectors) on the project's
listening-form tasks, from plain inputs. Pure: no Django (tests/evaluation/test_pure_layers.py).

- answers: reading a system's raw answers (an option, stressed words, a stance), or why not.
- stresstest: StressTest SSR accuracy and SSD precision/recall/F1 of a system; humans beside systems.
- cast: CAST Hit, Pair-Contrast and Pair-Correct of a TTS system; detector-vs-listener kappa.
- stance: StanceBench failure rate, pole-order disagreement, AUROC/EER and Spearman of a judge.
- roc: ROC points, AUROC and EER with a bootstrap over instances (used by stance).
"""
