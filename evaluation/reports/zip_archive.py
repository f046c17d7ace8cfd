"""A folder as a reproducible zip: the same files give the same bytes, on any machine and database.

zipfile otherwise stamps each entry with the file's modification time and the order the folder
lists it in; here every entry gets 1980-01-01 00:00 (the earliest time zip can hold), the same
permissions and the same creator, and entries are written in sorted order. Files are copied in
chunks, so a large export never sits in memory.
"""

import shutil
import zipfile
from pathlib import Path

FIXED_TIME = (1980, 1, 1, 0, 0, 0)
# Already compressed, or barely compressible: stored as they are, which saves the CPU.
STORED_SUFFIXES = {".wav", ".flac", ".mp3", ".ogg", ".zip", ".parquet"}  # Parquet compresses its own pages
_CHUNK = 1024 * 1024


def zip_folder(folder: Path, target: Path, *, progress=None) -> int:
    """Write every file under `folder` into the zip `target`, with paths relative to `folder`;
    returns the number of entries. `progress(done, total)` is called after each file."""
    files = sorted(
        (path for path in folder.rglob("*") if path.is_file()), key=lambda p: p.relative_to(folder).as_posix()
    )
    with zipfile.ZipFile(target, "w") as archive:
        for done, path in enumerate(files, start=1):
            _add(archive, path, path.relative_to(folder).as_posix())
            if progress is not None:
                progress(done, len(files))
    return len(files)


def _add(archive: zipfile.ZipFile, path: Path, name: str) -> None:
    info = zipfile.ZipInfo(name, date_time=FIXED_TIME)
    info.create_system = 3  # Unix, wherever it runs: the field is part of the bytes
    info.external_attr = 0o644 << 16
    # Deflate at zlib's default level (6); the same zlib gives the same bytes.
    stored = path.suffix.lower() in STORED_SUFFIXES
    info.compress_type = zipfile.ZIP_STORED if stored else zipfile.ZIP_DEFLATED
    size = path.stat().st_size
    with path.open("rb") as source, archive.open(info, "w", force_zip64=size > zipfile.ZIP64_LIMIT) as entry:
        shutil.copyfileobj(source, entry, _CHUNK)
