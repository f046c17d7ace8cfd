"""Training and inference of emphasis detectors (torch, transformers). No Django. The web
processes import only its torch-free modules (config, plans, experiments, detector_table: what a
run asks for and which detectors there are); the Celery task (modelzoo.tasks) imports the rest in
its body, and tests/modelzoo/test_web_without_torch.py holds the web processes to that."""
