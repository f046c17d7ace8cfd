"""Uploaded files, within a bound on the temporary disk each request may take (issue 30).

The upload limit is IMPORT_MAX_ARCHIVE_BYTES, the bytes of the files one request may send:

- `LimitedUploadHandler`, first of FILE_UPLOAD_HANDLERS, counts the bytes of a request's files as
  they arrive and refuses the request (400, naming the limit) when they pass it: before Django's
  next handler has written them to a temporary file, and at once when the request's Content-Length
  already says so. Without it Django spools any upload whole before a view could look at its size.
- `upload_on_disk` hands the view the file as a path: Django's own temporary file under the name
  the view asks for (a hard link) when it spooled one, else (an upload small enough to be kept in
  memory) one copy; never a second copy.
- An archive then expands into at most IMPORT_MAX_ARCHIVE_BYTES more, as it declares and as it is
  written (annotation.ingest.source.extract_zip); `uploaded_archive` deletes the upload as soon as
  it is extracted.

So a request takes at most 2 x IMPORT_MAX_ARCHIVE_BYTES of temporary disk: the upload and its
extraction (tests/api/test_upload_limits.py measures it). The audio an import converts is stored
clip by clip as it is converted (annotation.services.corpus_import), so it adds only the clips
being converted at that moment (IMPORT_WORKERS of them, a few MB each), which the freed upload
leaves room for. An upload a service extracts itself (a CAST renditions .zip) keeps its upload
until the import ends: there, that and the clips being converted come on top of the 2x.
"""

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from django.conf import settings
from django.core.files.uploadhandler import FileUploadHandler
from django.http.multipartparser import MultiPartParserError

from annotation.ingest.source import extract_zip
from annotation.services.corpus_import import limits_from_settings

SETTING = "IMPORT_MAX_ARCHIVE_BYTES"


class UploadTooLarge(MultiPartParserError):
    """A request's files pass the upload limit. Django answers a MultiPartParserError with 400, and
    DRF's multipart parser with 400 and its message."""


class LimitedUploadHandler(FileUploadHandler):
    """Stops reading a request's files once they pass IMPORT_MAX_ARCHIVE_BYTES in all."""

    def handle_raw_input(self, input_data, META, content_length, boundary, encoding=None):
        self.limit = settings.IMPORT_MAX_ARCHIVE_BYTES
        self.received = 0
        # The form's other fields may add up to DATA_UPLOAD_MAX_MEMORY_SIZE to the files' bytes.
        if content_length > self.limit + (settings.DATA_UPLOAD_MAX_MEMORY_SIZE or 0):
            raise UploadTooLarge(
                f"the request is {content_length} bytes; uploads are limited to {self.limit} bytes ({SETTING})"
            )

    def receive_data_chunk(self, raw_data, start):
        self.received += len(raw_data)
        if self.received > self.limit:
            self._drop_partial_files()
            raise UploadTooLarge(
                f"{self.file_name}: the upload passes {self.limit} bytes ({SETTING}); refused as it arrived"
            )
        return raw_data  # the next handler (memory or temporary file) keeps it

    def _drop_partial_files(self) -> None:
        # What the next handlers hold of the file cut short: the request keeps its handlers until it
        # ends, so their temporary file would stay on disk until then (Django's StopUpload does this too).
        for handler in self.request.upload_handlers if self.request is not None else []:
            partial = getattr(handler, "file", None)
            if partial is not None and handler is not self:
                partial.close()  # a TemporaryUploadedFile deletes its file when closed

    def file_complete(self, file_size):
        return None  # the next handler makes the file


@contextmanager
def upload_on_disk(upload, *, name: str = "upload") -> Iterator[Path]:
    """The uploaded file as `<a temporary folder>/<name>`, removed when the block ends: another
    name for Django's temporary file (a hard link, no second copy) when it spooled one on this disk,
    else one copy. Django's own name for the spooled file is dropped at once, so the upload's bytes
    are on disk once while the block runs."""
    with tempfile.TemporaryDirectory(prefix="upload-") as folder:
        path = Path(folder) / name
        spooled = upload.temporary_file_path() if hasattr(upload, "temporary_file_path") else None
        if spooled is None or not _linked(spooled, path):
            with open(path, "wb") as handle:
                for chunk in upload.chunks():
                    handle.write(chunk)
        if spooled is not None:
            upload.close()  # a TemporaryUploadedFile deletes its file when closed
        yield path


@contextmanager
def uploaded_archive(upload, *, folder_name: str = "archive") -> Iterator[Path]:
    """An uploaded .zip extracted (annotation.ingest.source.extract_zip, with its checks and
    limits) into `<a temporary folder>/<folder_name>`, removed when the block ends. The upload itself
    is deleted as soon as it is extracted: while the block runs, only what it expanded to is on disk.
    SourceRefused, naming the upload, for an archive that its checks refuse."""
    with tempfile.TemporaryDirectory(prefix="extracted-") as folder, upload_on_disk(upload) as archive:
        root = Path(folder) / folder_name
        extract_zip(archive, root, limits_from_settings(), name=upload.name)
        archive.unlink()
        yield root


def _linked(source: str, target: Path) -> bool:
    try:
        os.link(source, target)
    except OSError:  # another file system (FILE_UPLOAD_TEMP_DIR elsewhere), or links not allowed
        return False
    return True
