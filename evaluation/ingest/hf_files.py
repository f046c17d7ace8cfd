"""The files a Hugging Face dataset is distributed as, read row by row, and the audio they embed.

- Parquet (the hub's `data/<split>-00000-of-00001.parquet`, what `push_to_hub` writes) and the
  Arrow files of a `save_to_disk` folder (`data-00000-of-00001.arrow`, an Arrow IPC stream, beside
  `dataset_info.json` and `state.json`; a DatasetDict has one such folder per split and a
  `dataset_dict.json`). Rows are read a batch at a time, so a shard of many clips is never held
  whole in memory.
- An `Audio` column is stored as a struct {bytes: binary, path: string}: `bytes` holds the whole
  file (WAV, FLAC, MP3...) and `path` the name it had. EmbeddedAudio writes those bytes to a
  folder of its own, under a name unique in the import, where the corpus import reads them as it
  reads any audio file (its decoding checks decide whether the bytes are audio at all).

Nothing here knows a dataset: evaluation.ingest.emphasis_datasets reads the columns.
"""

import json
import re
from collections.abc import Iterator
from pathlib import Path, PurePosixPath

from annotation.ingest.dataset_clips import RecordBad, audio_file
from annotation.ingest.source import Limits

TABLE_SUFFIXES = (".parquet", ".arrow")
BATCH_ROWS = 64  # rows of embedded audio held at once
SAFE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,150}")
MAGIC_SUFFIXES = ((b"RIFF", ".wav"), (b"fLaC", ".flac"), (b"OggS", ".ogg"), (b"ID3", ".mp3"), (b"\xff\xfb", ".mp3"))


class TableUnreadable(ValueError):
    """The file as a whole is no Parquet or Arrow table."""


def table_rows(file: Path) -> Iterator[dict]:
    """Each row of a Parquet file or a save_to_disk Arrow file, as a dict (struct columns as
    dicts, binary as bytes); TableUnreadable if the file cannot be read as a table."""
    import pyarrow  # only where a table is read

    try:
        for batch in _batches(file):
            yield from batch.to_pylist()
    except (pyarrow.ArrowException, OSError) as error:
        raise TableUnreadable(f"cannot be read as a {file.suffix[1:]} table: {error}") from None


def _batches(file: Path):
    import pyarrow
    import pyarrow.parquet

    if file.suffix == ".parquet":
        yield from pyarrow.parquet.ParquetFile(file).iter_batches(batch_size=BATCH_ROWS)
        return
    source = pyarrow.memory_map(str(file))
    try:  # save_to_disk writes an Arrow stream; an Arrow file (random access) is read the same
        reader = pyarrow.ipc.open_stream(source)
    except pyarrow.ArrowInvalid:
        reader = pyarrow.ipc.open_file(source)
        yield from (reader.get_batch(index) for index in range(reader.num_record_batches))
        return
    yield from reader


def saved_split(file: Path) -> str:
    """The split a save_to_disk folder's state.json names for its Arrow files ("" if none)."""
    state = file.parent / "state.json"
    if file.suffix != ".arrow" or not state.is_file():
        return ""
    try:
        split = json.loads(state.read_text(encoding="utf-8")).get("_split")
    except (json.JSONDecodeError, UnicodeDecodeError, AttributeError):
        return ""
    return split if isinstance(split, str) else ""


def embedded_bytes(value: object) -> bytes | None:
    """The audio file an Audio column's struct holds, or None where it only names a path."""
    data = value.get("bytes") if isinstance(value, dict) else None
    return bytes(data) if isinstance(data, bytes | bytearray) and data else None


class EmbeddedAudio:
    """Writes the audio bytes of rows into `folder`, each under a name of its own."""

    def __init__(self, folder: Path, limits: Limits):
        self.folder, self.limits = folder, limits
        self.names: set[str] = set()

    def add(self, data: bytes, path: str, clip_id: str) -> tuple[Path, str]:
        """(the file written, its name); RecordBad("audio.bytes") if it is too large."""
        if len(data) > self.limits.max_file_bytes:
            raise RecordBad(
                "audio.bytes",
                f"is {len(data)} bytes; the limit is {self.limits.max_file_bytes} (IMPORT_MAX_FILE_BYTES)",
            )
        name = self._name(path, clip_id, _suffix(path, data))
        self.folder.mkdir(parents=True, exist_ok=True)
        (self.folder / name).write_bytes(data)
        self.names.add(name)
        return audio_file(self.folder, [name], self.limits, "audio.bytes")

    def _name(self, path: str, clip_id: str, suffix: str) -> str:
        # The name the file had, where it is a plain one not taken yet: the clip's source_path
        # then says which file of the dataset it was.
        given = PurePosixPath(path.replace("\\", "/")).name if path else ""
        if SAFE_NAME.fullmatch(given) and given not in self.names:
            return given
        stem = re.sub(r"[^A-Za-z0-9._-]+", "_", clip_id).strip("._") or "clip"
        name, number = f"{stem}{suffix}", 1
        while name in self.names:
            number += 1
            name = f"{stem}-{number}{suffix}"
        return name


def _suffix(path: str, data: bytes) -> str:
    suffix = PurePosixPath(path).suffix.lower() if path else ""
    if suffix in (".wav", ".flac", ".mp3", ".ogg", ".opus", ".m4a"):
        return suffix
    return next((found for magic, found in MAGIC_SUFFIXES if data.startswith(magic)), ".audio")
