"""The research pipeline as code: a Python client generated from the published schema
(tests/api/fixtures/openapi_v1.json, by openapi-python-client, into the test's tmp folder, offline)
drives the platform with a token only, on the stack a deployment runs (tests/journey/stack.py:
granian, a Celery worker and a GPU worker on Redis, PostgreSQL):

corpus .zip upload (an import job, polled) -> its words -> an emphasis study with a screening
question and an attention check -> "Set live" refused for want of consent text, configured, live
-> simulated participants through the participant pages over HTTP until every clip has its target
-> paused, closed -> agreement report -> label set, finalized -> JSONL export, downloaded ->
the acoustic baseline benchmarked, and its results.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/NAME CELERY_TEST_BROKER_URL=redis://127.0.0.1:6379/N \
        .venv/bin/python -m pytest tests/api/test_generated_client_pipeline.py
"""

import concurrent.futures
import importlib
import io
import json
import math
import os
import subprocess
import sys
import time
import urllib.request
import uuid
import zipfile
from pathlib import Path

import pytest
from rest_framework.authtoken.models import Token

from tests.api.callers import staff_with
from tests.conftest import require_service
from tests.journey.corpus import CHECK_WORD, write_corpus_zip
from tests.journey.crowd import scripted_participant

BROKER_URL = os.environ.get("CELERY_TEST_BROKER_URL", "redis://127.0.0.1:6379/15")
ON_POSTGRES = os.environ.get("DATABASE_URL", "").startswith(("postgres://", "postgresql://"))
SCHEMA = Path(__file__).parent / "fixtures" / "openapi_v1.json"
PACKAGE = "emphasis_api_client"
# No formatter run on the generated code (post_hooks), so generating needs nothing but the schema.
GENERATOR_CONFIG = f"package_name_override: {PACKAGE}\npost_hooks: []\n"


# Exactly what the script's token may do.
PERMS = (
    "annotation.add_importjob",
    "annotation.view_importjob",
    "annotation.view_clip",
    "annotation.add_study",
    "annotation.change_study",
    "annotation.view_study",
    "evaluation.add_agreementreport",
    "evaluation.view_agreementreport",
    "evaluation.add_labelset",
    "evaluation.change_labelset",
    "evaluation.view_labelset",
    "evaluation.add_datasetexport",
    "evaluation.view_datasetexport",
    "modelzoo.add_benchmarkrun",
    "modelzoo.view_benchmarkrun",
)
TARGET, CLIPS_PER_TASK = 3, 5
SCREENING = {"text": "Are you 18 years or older?", "choices": ["Yes", "No"], "accepted": ["Yes"]}


def generate_client(folder: Path):
    """openapi-python-client's package for the schema fixture, imported from `folder`."""
    config = folder / "generator.yaml"
    folder.mkdir(parents=True)
    config.write_text(GENERATOR_CONFIG)
    generator = Path(sys.executable).with_name("openapi-python-client")
    command = [str(generator), "generate", "--path", str(SCHEMA), "--output-path", str(folder / PACKAGE)]
    command += ["--meta", "none", "--config", str(config)]
    # Offline: any download the generator tried would go to a proxy that is not there, and fail.
    nowhere = dict.fromkeys(("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"), "http://127.0.0.1:9")
    environment = {**os.environ, **nowhere, "NO_PROXY": "", "no_proxy": ""}
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, env=environment)
    assert done.returncode == 0, done.stdout + done.stderr
    sys.path.insert(0, str(folder))
    try:
        return importlib.import_module(PACKAGE)
    finally:
        sys.path.remove(str(folder))


@pytest.fixture
def api(tmp_path):
    """The generated package and its modules; forgotten afterwards."""
    package = generate_client(tmp_path / "client")
    yield package
    for name in [name for name in sys.modules if name == PACKAGE or name.startswith(f"{PACKAGE}.")]:
        del sys.modules[name]


@pytest.fixture
def stack(transactional_db, tmp_path):
    from django.db import connection

    from tests.journey.stack import database_url, served

    require_service("Celery broker", BROKER_URL)
    with served(database=database_url(connection.settings_dict), broker=BROKER_URL, scratch=tmp_path / "stack") as s:
        yield s


class Script:
    """The researcher's script: the generated client, a token, nothing else."""

    def __init__(self, api, base_url: str, token: str):
        self.api = api
        self.client = api.AuthenticatedClient(base_url=base_url, token=token, prefix="Token", timeout=60.0)

    def call(self, operation: str, expect: int, **kwargs):
        """Call the generated function `operation` (e.g. "studies_create"); the parsed answer, or for a
        refusal its JSON body."""
        api_folder = Path(self.api.__file__).parent / "api"
        groups = sorted((path.name for path in api_folder.iterdir() if path.is_dir()), key=len, reverse=True)
        group = next(name for name in groups if operation.startswith(f"{name}_"))
        module = importlib.import_module(f"{self.api.__name__}.api.{group}.{operation}")
        reply = module.sync_detailed(client=self.client, **kwargs)
        assert reply.status_code == expect, (operation, reply.status_code, reply.content[:2000])
        return json.loads(reply.content) if expect >= 400 else reply.parsed

    def wait(self, operation: str, id: int, *, seconds: float = 300):
        """Poll a job until it has finished, as a script does."""
        deadline = time.monotonic() + seconds
        while True:
            job = self.call(operation, 200, id=id)
            if str(job.status) in ("succeeded", "failed") or time.monotonic() > deadline:
                return job
            time.sleep(0.5)


def test_the_generated_client_sends_json_bodies_and_multipart_uploads(api):
    """What each kind of write sends, on any database: a generated client picks the body's encoding
    from the schema, and one that sent a JSON body as a form would lose its nested lists."""
    from emphasis_api_client.api.import_jobs import import_jobs_create
    from emphasis_api_client.api.studies import studies_create

    models, types = importlib.import_module(f"{PACKAGE}.models"), importlib.import_module(f"{PACKAGE}.types")
    study = models.StudyCreateRequest(name="s", corpus=1, prerequisites=[models.PrerequisiteRequest(**SCREENING)])
    sent = studies_create._get_kwargs(body=study, idempotency_key="k")
    assert sent["json"]["prerequisites"] == [SCREENING] and "files" not in sent
    assert sent["headers"] == {"Idempotency-Key": "k", "Content-Type": "application/json"}
    archive = types.File(payload=io.BytesIO(b"zip"), file_name="c.zip")
    upload = import_jobs_create._get_kwargs(body=models.ImportUploadRequest(corpus_name="c", archive=archive))
    assert "files" in upload and "json" not in upload


@pytest.mark.postgres
@pytest.mark.worker
@pytest.mark.skipif(not ON_POSTGRES, reason="the worker part runs on PostgreSQL (DATABASE_URL=postgres://...)")
@pytest.mark.django_db(transaction=True)
def test_the_generated_client_runs_the_pipeline_with_a_token_only(api, stack, tmp_path):
    models, types = importlib.import_module(f"{PACKAGE}.models"), importlib.import_module(f"{PACKAGE}.types")
    token = Token.objects.create(user=staff_with(*PERMS)).key  # as manage.py drf_create_token does
    script = Script(api, stack.url, token)
    corpus_files = write_corpus_zip(tmp_path / "corpus")

    # The corpus: an import job, polled; a retry with the same key answers the same job.
    upload_key = str(uuid.uuid4())

    def upload():
        archive = types.File(payload=io.BytesIO(corpus_files.zip_path.read_bytes()), file_name="journey.zip")
        body = models.ImportUploadRequest(corpus_name="pipeline", archive=archive)
        return script.call("import_jobs_create", 202, body=body, idempotency_key=upload_key)

    job = upload()
    assert upload().id == job.id
    job = script.wait("import_jobs_retrieve", job.id)
    assert str(job.status) == "succeeded", job.error
    corpus = job.corpus
    words = script.call("corpora_words_list", 200, corpus_pk=corpus, page_size=500).results
    check_clip = next(word.clip for word in words if word.clip_id == corpus_files.check_clip_id)
    assert len({word.clip_id for word in words}) == corpus_files.clips + 1

    # The study: created with its question and check, refused live without consent text.
    body = models.StudyCreateRequest(
        name="Pipeline study",
        corpus=corpus,
        selection=models.ClipSelectionRequest(clip_ids=corpus_files.clip_ids),
        clips_per_task=CLIPS_PER_TASK,
        target_annotations=TARGET,
        attention_checks_per_task=1,
        completion_code="PIPEDONE",
        headphone_check=models.HeadphoneCheckEnum.NONE,  # the scripted participants have no ears
        prerequisites=[models.PrerequisiteRequest(**SCREENING)],
        attention_checks=[
            models.AttentionCheckRequest(
                clip=check_clip, expected=models.AttentionCheckRequestExpected.from_dict({str(CHECK_WORD): 2})
            )
        ],
    )
    study = script.call("studies_create", 201, body=body, idempotency_key=str(uuid.uuid4()))
    assert study.clips == corpus_files.clips and study.completion_code == "PIPEDONE"
    refused = script.call("studies_live_create", 400, id=study.id)
    assert "no consent text" in refused["status"][0]
    consent = models.PatchedStudySettingsRequest(consent_text="I agree to take part.")
    script.call("studies_partial_update", 200, id=study.id, body=consent)
    assert str(script.call("studies_live_create", 200, id=study.id).status) == "live"

    # Participants, through the participant pages, until every clip has its target.
    answers = {f"q{question.id}": question.accepted[0] for question in study.prerequisites}
    port, seed, results = int(stack.url.rsplit(":", 1)[1]), 100, []
    for _ in range(5):  # rounds: a round asks for the tasks still missing
        progress = script.call("studies_retrieve", 200, id=study.id).progress
        missing = progress.annotations_target - progress.annotations_done
        if missing <= 0:
            break
        tasks = math.ceil(missing / CLIPS_PER_TASK)
        with concurrent.futures.ThreadPoolExecutor(max_workers=min(tasks, 6)) as pool:
            runs = [pool.submit(scripted_participant, port, study.slug, answers, seed + n) for n in range(tasks)]
            results += [run.result() for run in runs]
        seed += tasks
    assert not [error for result in results for error in result.errors]
    progress = script.call("studies_retrieve", 200, id=study.id).progress
    assert progress.annotations_done == progress.annotations_target == corpus_files.clips * TARGET
    assert str(script.call("studies_pause_create", 200, id=study.id).status) == "paused"
    assert str(script.call("studies_close_create", 200, id=study.id).status) == "closed"

    # The agreement report.
    parameters = models.ReportParametersRequest(resamples=20)
    report = script.call(
        "agreement_reports_create", 202, body=models.ReportRequestRequest(study=study.id, parameters=parameters)
    )
    report = script.wait("agreement_reports_retrieve", report.id)
    assert str(report.status) == "succeeded", report.error

    # The label set, finalized.
    parameters = models.LabelSetParametersRequest(proportions=[0.6, 0.2, 0.2], resamples=20)
    body = models.LabelSetCreateRequest(name="pipeline-labels", studies=[study.id], parameters=parameters)
    label_set = script.wait("label_sets_retrieve", script.call("label_sets_create", 202, body=body).id)
    assert str(label_set.status) == "succeeded", label_set.error
    label_set = script.call("label_sets_finalize_create", 200, id=label_set.id)
    assert str(label_set.state) == "final" and len(label_set.checksum) == 64

    # The export, downloaded by its link (which needs no token).
    body = models.ExportRequestRequest(format_=models.FormatEnum.JSONL, label_set=label_set.id)
    export = script.wait("dataset_exports_retrieve", script.call("dataset_exports_create", 202, body=body).id)
    assert str(export.status) == "succeeded", export.error
    link = script.call("dataset_exports_link_retrieve", 200, id=export.id)
    with urllib.request.urlopen(link.url, timeout=30) as download:
        archive = zipfile.ZipFile(io.BytesIO(download.read()))
    word_rows = [json.loads(line) for line in archive.read("words.jsonl").splitlines()]
    assert {row["clip_id"] for row in word_rows} == set(corpus_files.clip_ids)

    # The acoustic baseline on the GPU worker's queue, and its results.
    body = models.BenchmarkLaunchRequest(
        label_set=label_set.id,
        detector=models.DetectorEnum.ACOUSTIC,
        label_mode=models.LabelModeEnum.BINARY,
        setting=models.BenchmarkSettingRequest(kind=models.BenchmarkSettingKindEnum.MONOLINGUAL, languages=["en"]),
        resamples=200,
    )
    [run] = script.call("benchmark_runs_create", 202, body=body).runs
    run = script.wait("benchmark_runs_retrieve", run.id, seconds=600)
    assert str(run.status) == "succeeded", (run.error, stack.log_tails())
    results = script.call("benchmark_runs_results_retrieve", 200, id=run.id)
    pooled = results.metrics.to_dict()["pooled"]
    f1 = pooled["f1"]
    if pooled["clips"] >= 5:
        assert 0 <= f1["low"] <= f1["value"] <= f1["high"] <= 1
    else:  # no interval from fewer than 5 test clips, and the reason given
        assert 0 <= f1["value"] <= 1 and f1["low"] is None and "too few clips" in f1["interval_undefined"]
