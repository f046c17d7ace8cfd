"""Admin uploads: queue an archive for import, and run the queued job."""

import logging
import tempfile
import time
import uuid
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path, PurePosixPath

from django.core.files import File
from django.core.files.storage import default_storage
from django.db import transaction
from django.utils import timezone

from annotation.ingest.errors import ImportRefused, SourceRefused
from annotation.ingest.pipeline import corpus_import
from annotation.ingest.source import relative_path_problem
from annotation.models import ImportJob

logger = logging.getLogger(__name__)
_PROGRESS_EVERY_SECONDS = 0.5


def import_job_create(*, upload, corpus_name: str, skip_invalid: bool, user) -> ImportJob:
    """Store an uploaded .zip and queue its import once the job row is committed."""
    from annotation.tasks import corpus_import_job_run

    if not zipfile.is_zipfile(upload):
        raise ValueError(f"{upload.name}: not a .zip archive")
    upload.seek(0)
    stored = default_storage.save(f"imports/{uuid.uuid4().hex}.zip", upload)
    job = ImportJob.objects.create(
        corpus_name=corpus_name,
        archive=stored,
        archive_name=upload.name[:300],
        skip_invalid=skip_invalid,
        created_by=user,
    )
    transaction.on_commit(lambda: corpus_import_job_run.delay(job.pk))
    return job


@contextmanager
def folder_upload_zip(*, files: list, paths: list[str]) -> Iterator[File | None]:
    """Pack a folder uploaded file by file into a .zip, so that it takes the
    same checked path as an uploaded archive. Yields None when there are no files."""
    if not files:
        yield None
        return
    with tempfile.NamedTemporaryFile(suffix=".zip") as handle:
        with zipfile.ZipFile(handle, "w", compression=zipfile.ZIP_STORED) as bundle:
            for upload, path in zip(files, paths, strict=True):
                problem = relative_path_problem(path)
                if problem:
                    raise ValueError(f"{path!r} {problem}")
                with bundle.open(path, "w") as target:
                    for chunk in upload.chunks():
                        target.write(chunk)
        handle.seek(0)
        top = PurePosixPath(paths[0]).parts[0] if len(PurePosixPath(paths[0]).parts) > 1 else "folder"
        yield File(handle, name=f"{top}.zip")


def import_job_run(*, job_id: int) -> None:
    # The conditional update is the claim: a second delivery finds it taken.
    claimed = ImportJob.objects.filter(pk=job_id, status=ImportJob.Status.QUEUED).update(
        status=ImportJob.Status.RUNNING, phase="starting"
    )
    if not claimed:
        return
    job = ImportJob.objects.get(pk=job_id)
    try:
        summary, problems, status = _run(job)
    except Exception as error:  # the job must never stay "running" after a crash
        logger.exception("import job %s crashed", job_id)
        summary, problems, status = {"error": f"internal error: {error}"}, [], ImportJob.Status.FAILED
    finally:
        _delete_quietly(job.archive.name)
    ImportJob.objects.filter(pk=job_id).update(
        status=status, summary=summary, problems=problems, finished_at=timezone.now(), phase="finished"
    )


def _delete_quietly(name: str) -> None:
    # A storage hiccup here must not leave the job "running" forever.
    try:
        default_storage.delete(name)
    except Exception:
        logger.exception("could not delete uploaded archive %s", name)


def _run(job: ImportJob):
    with tempfile.TemporaryDirectory(prefix="import-job-") as folder:
        local = Path(folder) / "upload.zip"
        with default_storage.open(job.archive.name, "rb") as source, open(local, "wb") as sink:
            while chunk := source.read(1024 * 1024):
                sink.write(chunk)
        try:
            report = corpus_import(
                path=local,
                corpus_name=job.corpus_name,
                skip_invalid=job.skip_invalid,
                progress=_progress_writer(job.pk),
            )
        except ImportRefused as refused:
            problems = [problem.as_dict() for problem in refused.problems]
            return {"error": f"{len(problems)} bad row(s); nothing was imported"}, problems, ImportJob.Status.FAILED
        except SourceRefused as refused:
            return {"error": str(refused)}, [], ImportJob.Status.FAILED
    result = report.as_dict()
    problems = result.pop("problems")
    return result, problems, ImportJob.Status.SUCCEEDED


def _progress_writer(job_id: int):
    last = {"at": 0.0, "phase": None}

    def write(phase: str, done: int, total: int) -> None:
        now = time.monotonic()
        if phase == last["phase"] and done < total and now - last["at"] < _PROGRESS_EVERY_SECONDS:
            return
        last.update(at=now, phase=phase)
        ImportJob.objects.filter(pk=job_id).update(phase=phase, done=done, total=total)

    return write
