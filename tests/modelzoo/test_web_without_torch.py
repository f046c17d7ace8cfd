"""The web processes never import torch: the settings, the URLs and every admin, views and API
module (and the apps' Celery task modules) import in a fresh interpreter without it; the training
stack is only for the GPU worker."""

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
for app in ("annotation", "evaluation"):
    for area in ("admin", "views", "api", "tasks"):
        try:
            package = importlib.import_module(f"{app}.{area}")
        except ModuleNotFoundError:
            continue
        web.append(package.__name__)
        for module in pkgutil.iter_modules(getattr(package, "__path__", [])):
            web.append(importlib.import_module(f"{package.__name__}.{module.name}").__name__)
print(json.dumps({"web": web, "heavy": sorted(m for m in ("torch", "transformers") if m in sys.modules)}))
"""


def test_importing_the_web_app_does_not_import_torch():
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings", "SECRET_KEY": "x", "PYTHONPATH": str(ROOT)}
    result = subprocess.run([sys.executable, "-c", PROBE], cwd=ROOT, env=env, capture_output=True, text=True,
                            check=True)  # fmt: skip
    found = json.loads(result.stdout.strip().splitlines()[-1])
    assert {"annotation.admin.study", "annotation.views.task", "evaluation.views.agreement_reports"} <= set(
        found["web"]
    )
    assert found["heavy"] == []
