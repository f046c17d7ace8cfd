"""Open a corpus folder or .zip safely and find its manifest.

Archives are untrusted: members may try to escape the extraction folder, be
links, or expand far past their compressed size. An archive is refused from the
sizes it declares before a byte is extracted (a 20 MB bomb would otherwise fill
the temporary disk up to the limit first), and every byte written is still
counted, so a header that lies about its size cannot get past the limits either.

Its names are checked before anything is extracted too, each refusal naming the
entry: a file that is not a zip at all, an entry named twice, a file where
another entry needs a folder (`audio/x` beside `audio/x/y.wav`), a name part
longer than file systems take (255 bytes) or a path longer than MAX_PATH_CHARS.
"""

import shutil
import stat
import tempfile
import zipfile
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from annotation.ingest.errors import SourceRefused

MANIFEST_NAMES = ("manifest.jsonl", "manifest.csv")
_CHUNK = 1024 * 1024
_READABLE = {zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED, zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA}
# A file name (one part of a path) as most file systems take it (NAME_MAX), in UTF-8 bytes.
MAX_NAME_BYTES = 255
# An entry's whole path: well below PATH_MAX (4096) once the temporary folder is in front of it.
MAX_PATH_CHARS = 1024


@dataclass(frozen=True)
class Limits:
    max_archive_bytes: int
    max_file_bytes: int
    max_files: int
    max_clip_seconds: float


@dataclass(frozen=True)
class CorpusSource:
    root: Path
    manifest: Path
    display_name: str


@contextmanager
def open_source(path: Path, limits: Limits, names: tuple[str, ...] = MANIFEST_NAMES) -> Iterator[CorpusSource]:
    """Yield the folder and its manifest, one of `names` (extracting a .zip to a
    temporary folder first)."""
    path = Path(path)
    if path.is_dir():
        yield CorpusSource(path.resolve(), find_manifest(path.resolve(), names), path.name)
        return
    if not path.is_file():
        raise SourceRefused(f"{path}: no such folder or file")
    if not zipfile.is_zipfile(path):
        raise SourceRefused(f"{path.name}: not a folder or a .zip archive")
    workdir = Path(tempfile.mkdtemp(prefix="corpus-import-")).resolve()
    try:
        extract_zip(path, workdir, limits)
        yield CorpusSource(workdir, find_manifest(workdir, names), path.name)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def find_manifest(root: Path, names: tuple[str, ...] = MANIFEST_NAMES) -> Path:
    """The manifest at the root, or inside a single top-level folder (a zipped folder)."""
    wanted = " or ".join(names)
    for folder in candidate_folders(root):
        found = [folder / name for name in names if (folder / name).is_file()]
        if len(found) > 1:
            raise SourceRefused(f"{folder.name or root}: holds both {' and '.join(names)}; keep one")
        if found:
            if found[0].is_symlink():
                raise SourceRefused(f"{found[0].name}: the manifest is a link; links are not followed")
            return found[0]
    raise SourceRefused(f"{root.name}: no {wanted} found")


def candidate_folders(root: Path) -> list[Path]:
    entries = [entry for entry in root.iterdir() if not entry.name.startswith((".", "__MACOSX"))]
    if len(entries) == 1 and entries[0].is_dir() and not entries[0].is_symlink():
        return [root, entries[0]]
    return [root]


def extract_zip(archive: Path, target: Path, limits: Limits, *, name: str | None = None) -> None:
    """Extract `archive` into `target` once every check has passed; refusals name the archive
    as `name` (an upload's own name; default the file's)."""
    name = name or archive.name
    with _opened(archive, name) as bundle:
        members = bundle.infolist()
        check_members(name, members, limits)
        written = 0
        for member in members:
            written = _extract_member(bundle, member, target, written, limits, name)


def check_members(archive_name: str, members: list[zipfile.ZipInfo], limits: Limits) -> None:
    """Every check an archive's directory allows, before a byte is extracted: how many entries,
    each entry's name and kind, the names together, the sizes declared."""
    if len(members) > limits.max_files:
        raise SourceRefused(
            f"{archive_name}: holds {len(members)} entries; the limit is {limits.max_files} (IMPORT_MAX_FILES)"
        )
    for member in members:
        _check_member(archive_name, member)
    check_layout(archive_name, members)
    check_declared_sizes(archive_name, members, limits)


@contextmanager
def _opened(archive: Path, name: str) -> Iterator[zipfile.ZipFile]:
    try:
        bundle = zipfile.ZipFile(archive)
    except (zipfile.BadZipFile, zipfile.LargeZipFile, ValueError, EOFError, OSError) as error:
        raise SourceRefused(f"{name}: not a .zip archive ({error})") from None
    with bundle:
        yield bundle


def check_layout(archive_name: str, members: list[zipfile.ZipInfo]) -> None:
    """Refuse names that cannot all be extracted: one named twice (the second would overwrite the
    first), and a file where another entry needs a folder of the same name."""
    files: set[str] = set()
    folders: dict[str, str] = {}  # folder path -> an entry inside it
    for member in members:
        path = _normalized(member.filename)
        if not member.is_dir():
            if path in files:
                raise SourceRefused(f"{archive_name}: entry {member.filename!r} is named twice")
            files.add(path)
        parts = PurePosixPath(path).parts
        for depth in range(1, len(parts) if not member.is_dir() else len(parts) + 1):
            folders.setdefault("/".join(parts[:depth]), member.filename)
    clashes = sorted(files & folders.keys())
    if clashes:
        path = clashes[0]
        raise SourceRefused(
            f"{archive_name}: entry {path!r} is a file, but {folders[path]!r} needs a folder of that name"
        )


def _normalized(name: str) -> str:
    return "/".join(part for part in name.replace("\\", "/").split("/") if part not in ("", "."))


def check_declared_sizes(archive_name: str, members: list[zipfile.ZipInfo], limits: Limits) -> None:
    """Refuse an archive whose members declare more than the limits, before extracting any."""
    for member in members:
        if member.file_size > limits.max_file_bytes:
            raise SourceRefused(
                f"{archive_name}: entry {member.filename!r} declares {member.file_size} bytes; "
                f"the limit is {limits.max_file_bytes} (IMPORT_MAX_FILE_BYTES)"
            )
    declared = sum(member.file_size for member in members)
    if declared > limits.max_archive_bytes:
        raise SourceRefused(
            f"{archive_name}: declares {declared} bytes uncompressed; the limit is {limits.max_archive_bytes} "
            "(IMPORT_MAX_ARCHIVE_BYTES); refusing a possible zip bomb"
        )


def relative_path_problem(name: str) -> str | None:
    """Why a path taken from an archive, manifest or upload may not be used, or None."""
    pure = PurePosixPath(name.replace("\\", "/"))
    if pure.is_absolute() or (pure.parts and pure.parts[0].endswith(":")):
        return "has an absolute path"
    if ".." in pure.parts:
        return "escapes its folder with '..'"
    return None


def _check_member(archive_name: str, member: zipfile.ZipInfo) -> None:
    name = member.filename
    problem = relative_path_problem(name) or _length_problem(name)
    if problem:
        raise SourceRefused(f"{archive_name}: entry {_shown(name)} {problem}")
    if member.compress_type not in _READABLE:
        raise SourceRefused(
            f"{archive_name}: entry {_shown(name)} is compressed with method {member.compress_type}, "
            "which cannot be read (store or deflate it)"
        )
    mode = member.external_attr >> 16
    if stat.S_ISLNK(mode):
        raise SourceRefused(f"{archive_name}: entry {name!r} is a link; links are refused")
    if member.flag_bits & 0x1:
        raise SourceRefused(f"{archive_name}: entry {name!r} is encrypted")


def _length_problem(name: str) -> str | None:
    if len(name) > MAX_PATH_CHARS:
        return f"has a path of {len(name)} characters; at most {MAX_PATH_CHARS} are taken"
    for part in name.replace("\\", "/").split("/"):
        if len(part.encode("utf-8", "surrogatepass")) > MAX_NAME_BYTES:
            return (
                f"has a name of {len(part.encode('utf-8', 'surrogatepass'))} bytes; at most {MAX_NAME_BYTES} are taken"
            )
    return None


def _shown(name: str) -> str:
    """An entry's name in a message: a very long one cut to its start and end."""
    return repr(name) if len(name) <= 120 else repr(f"{name[:60]}...{name[-40:]}")


def _extract_member(bundle, member, target: Path, written: int, limits: Limits, archive_name: str) -> int:
    destination = target.joinpath(*PurePosixPath(member.filename.replace("\\", "/")).parts)
    if member.is_dir():
        destination.mkdir(parents=True, exist_ok=True)
        return written
    destination.parent.mkdir(parents=True, exist_ok=True)
    size = 0
    with bundle.open(member) as source, open(destination, "wb") as sink:
        while chunk := _read(source, member, archive_name):
            size += len(chunk)
            written += len(chunk)
            if size > limits.max_file_bytes:
                raise SourceRefused(
                    f"{archive_name}: entry {member.filename!r} is larger than "
                    f"{limits.max_file_bytes} bytes (IMPORT_MAX_FILE_BYTES)"
                )
            if written > limits.max_archive_bytes:
                raise SourceRefused(
                    f"{archive_name}: expands past {limits.max_archive_bytes} bytes "
                    "(IMPORT_MAX_ARCHIVE_BYTES); refusing a possible zip bomb"
                )
            sink.write(chunk)
    return written


def _read(source, member: zipfile.ZipInfo, archive_name: str) -> bytes:
    # zipfile stops at the declared size and then finds the checksum wrong: a header that
    # lies about its size (or damaged data) ends here, with the entry named.
    try:
        return source.read(_CHUNK)
    except (zipfile.BadZipFile, zlib.error, EOFError, OSError, ValueError) as error:  # lzma and bz2 raise these
        raise SourceRefused(
            f"{archive_name}: entry {member.filename!r} does not match its header (declared {member.file_size} "
            f"bytes; {error}); the archive is damaged or crafted"
        ) from None


def resolve_audio_path(root: Path, manifest_dir: Path, relative: str, limits: Limits) -> Path:
    """The file a manifest row names, refused if it leaves the corpus folder.

    Raises ValueError with a reason fit for the row's error message.
    """
    if not relative:
        raise ValueError("no audio path given")
    problem = relative_path_problem(relative)
    if problem:
        raise ValueError(f"path {relative!r} {problem}; paths are relative to the manifest")
    candidate = manifest_dir.joinpath(*PurePosixPath(relative.replace("\\", "/")).parts)
    _refuse_links(candidate, root, relative)
    if not candidate.exists():
        raise ValueError(f"audio file {relative!r} not found")
    if not candidate.is_file():
        raise ValueError(f"{relative!r} is not a file")
    size = candidate.stat().st_size
    if size > limits.max_file_bytes:
        raise ValueError(
            f"audio file {relative!r} is {size} bytes; the limit is {limits.max_file_bytes} (IMPORT_MAX_FILE_BYTES)"
        )
    if size == 0:
        raise ValueError(f"audio file {relative!r} is empty")
    return candidate


def _refuse_links(candidate: Path, root: Path, relative: str) -> None:
    # Check every component, so a linked folder cannot smuggle a file in either.
    current = candidate
    while current != root and root in current.parents:
        if current.is_symlink():
            raise ValueError(f"{relative!r} goes through a link; links are refused")
        current = current.parent
    if root not in candidate.resolve().parents:
        raise ValueError(f"path {relative!r} escapes the corpus folder")
