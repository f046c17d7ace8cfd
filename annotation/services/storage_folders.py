"""A corpus folder already on the configured storage (local media or S3), imported as an upload is.

The folder is packed into a .zip the way the admin packs a folder uploaded file by file
(corpus_import_jobs.folder_upload_zip), so that it takes the same checked path: the archive limits,
then the import job with its refusals.
"""

from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import PurePosixPath

from django.core.files import File
from django.core.files.storage import default_storage

from annotation.ingest.source import relative_path_problem
from annotation.services.corpus_import_jobs import folder_upload_zip

MAX_FILES = 100_000  # a folder that large is a mistake (a bucket's root), not a corpus


def storage_folder_files(folder: str) -> list[str]:
    """Every file under `folder` on the storage, as storage names, in a stable order."""
    cleaned = folder.strip().strip("/")
    problem = relative_path_problem(cleaned) if cleaned else "is empty"
    if problem:
        raise ValueError(f"storage folder {folder!r} {problem}")
    names, pending = [], [cleaned]
    while pending:
        current = pending.pop()
        try:
            folders, files = default_storage.listdir(current)
        except (FileNotFoundError, NotADirectoryError):
            folders, files = [], []
        names += [f"{current}/{name}" for name in files]
        pending += [f"{current}/{name}" for name in folders]
        if len(names) > MAX_FILES:
            raise ValueError(f"storage folder {folder!r} holds more than {MAX_FILES} files")
    if not names:
        raise ValueError(f"storage folder {folder!r}: no files there on the configured storage")
    return sorted(names)


@contextmanager
def storage_folder_zip(folder: str) -> Iterator[File]:
    """The storage folder as one .zip (named after the folder), for corpus_import_create."""
    names = storage_folder_files(folder)
    root = PurePosixPath(folder.strip().strip("/"))
    paths = [(PurePosixPath(root.name) / PurePosixPath(name).relative_to(root)).as_posix() for name in names]
    with ExitStack() as opened:
        files = [opened.enter_context(default_storage.open(name, "rb")) for name in names]
        with folder_upload_zip(files=files, paths=paths) as zipped:
            assert zipped is not None  # storage_folder_files found at least one file
            yield zipped
