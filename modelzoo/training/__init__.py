"""Training and inference of emphasis detectors (torch, transformers). No Django: the web
processes never import this package; the Celery task (modelzoo.tasks) imports it in its body."""
