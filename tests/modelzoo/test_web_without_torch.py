"""The web processes never import torch: the settings, the URLs, every admin, views and API
module, the apps' Celery task modules and the model zoo's launch form and web services import in
a fresh interpreter without it; the training stack is only for the GPU worker. The web side may
read the torch-free declarations of modelzoo.training (configurations, settings) to check a
launch, never its training entry point."""

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PROBE = """
import importlib, json, pkgutil, sys
import django
django.setup()
import config.urls
web = []
for app in ("annotation", "evaluation", "modelzoo"):
    for area in ("admin", "views", "api", "tasks", "urls"):
        try:
            package = importlib.import_module(f"{app}.{area}")
        except ModuleNotFoundError:
            continue
        web.append(package.__name__)
        for module in pkgutil.iter_modules(getattr(package, "__path__", [])):
            web.append(importlib.import_module(f"{package.__name__}.{module.name}").__name__)
# what the web side of the model zoo uses besides its pages (the worker's service stays out)
for name in ("modelzoo.forms", "modelzoo.selectors.benchmark_runs", "modelzoo.services.benchmark_runs"):
    web.append(importlib.import_module(name).__name__)
heavy = ("torch", "transformers", "modelzoo.training.benchmark", "modelzoo.services.benchmark_training")
print(json.dumps({"web": web, "heavy": sorted(m for m in heavy if m in sys.modules)}))
"""


def test_importing_the_web_app_does_not_import_torch():
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings", "SECRET_KEY": "x", "PYTHONPATH": str(ROOT)}
    result = subprocess.run(
        [sys.executable, "-c", PROBE], cwd=ROOT, env=env, capture_output=True, text=True, check=True
    )
    found = json.loads(result.stdout.strip().splitlines()[-1])
    assert {
        "annotation.admin.study",
        "annotation.views.task",
        "evaluation.views.agreement_reports",
        "modelzoo.api.benchmark_runs",
        "modelzoo.admin.benchmark_runs",
        "modelzoo.views.benchmark_results",
        "modelzoo.tasks",
        "modelzoo.forms",
        "modelzoo.services.benchmark_runs",
    } <= set(found["web"])
    assert found["heavy"] == []
