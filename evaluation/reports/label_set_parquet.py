"""A label set as Parquet: one row per clip, its words as lists, its audio's bytes embedded.
Pure: clip rows (evaluation.reports.label_set_files) and WAV bytes in, Parquet files out.

Nothing needs an audio codec to read it: `audio` is a plain struct {bytes, path} (the layout of a
Hugging Face `datasets` Audio column, without the feature metadata that would make `datasets`
decode it), so `datasets.load_dataset("parquet", ...)` and pandas read the bytes as they are; a
reader who wants samples casts the column to `datasets.Audio()` or decodes the WAV itself.

Every file has the same explicit schema, so a column that is null throughout one split
(`scale_step` outside train, `start` and `end` of clips without word times) keeps its type, and
`datasets` accepts the splits together. pyarrow is imported by the writer only: web processes that
import this module do not load it.
"""

from pathlib import Path
from typing import Any

from evaluation.reports.label_set_files import MODEL_CLIP_COLUMNS, has_model, model_clip_columns

ROWS_PER_GROUP = 64  # clips per row group: about 8 MB of 4 s clips, the memory a writer holds per split


def parquet_schema(*, with_model: bool = False):
    """`with_model`: the annotator model's columns too (evaluation.reports.label_set_files.MODEL_CLIP_COLUMNS)."""
    import pyarrow as pa

    model = [(name, pa.list_(pa.float64())) for name in MODEL_CLIP_COLUMNS] if with_model else []
    return pa.schema(
        [
            ("clip_id", pa.string()),
            ("study", pa.string()),
            ("split", pa.string()),
            ("language", pa.string()),
            ("variety", pa.string()),
            ("speaker", pa.string()),
            ("emotion", pa.string()),
            ("arousal", pa.string()),
            ("scale_step", pa.int64()),
            ("duration", pa.float64()),
            ("audio", pa.struct([("bytes", pa.binary()), ("path", pa.string())])),
            ("words", pa.list_(pa.string())),
            ("start", pa.list_(pa.float64())),
            ("end", pa.list_(pa.float64())),
            ("binary", pa.list_(pa.int64())),
            ("scalar", pa.list_(pa.float64())),
            ("annotators", pa.list_(pa.string())),
            ("levels", pa.list_(pa.list_(pa.int64()))),
            *model,
        ]
    )


def parquet_record(row: dict, audio: bytes, file_name: str) -> dict:
    """One clip row as a Parquet record; `levels`: per word, one level per annotator, in the order of
    `annotators`."""
    words = row["words"]
    return {
        **{key: row[key] for key in ("clip_id", "study", "split", "language", "variety", "speaker", "emotion")},
        "arousal": row["arousal"],
        "scale_step": row["scale_step"],
        "duration": row["duration"],
        "audio": {"bytes": audio, "path": file_name},
        "words": [w["text"] for w in words],
        "start": [w["start"] for w in words],
        "end": [w["end"] for w in words],
        "binary": [int(w["binary"]) for w in words],
        "scalar": [None if w["scalar"] is None else float(w["scalar"]) for w in words],  # None: binary-only set
        "annotators": list(row["annotators"]),
        "levels": [list(w["levels"]) for w in words],
        **(model_clip_columns(row) if has_model(row) else {}),
    }


class ParquetSplits:
    """One Parquet file per split under `folder` (`<split>.parquet`), written a row group at a time."""

    def __init__(self, folder: Path, *, with_model: bool = False):
        self.folder = folder
        self.with_model = with_model
        self.pending: dict[str, list[dict]] = {}
        self.writers: dict[str, Any] = {}  # split -> pyarrow.parquet.ParquetWriter (pyarrow has no types)

    def __enter__(self) -> "ParquetSplits":
        return self

    def add(self, record: dict) -> None:
        pending = self.pending.setdefault(record["split"], [])
        pending.append(record)
        if len(pending) >= ROWS_PER_GROUP:
            self._flush(record["split"])

    def __exit__(self, *exc) -> None:
        try:
            if exc[0] is None:
                for split in list(self.pending):
                    self._flush(split)
        finally:
            for writer in self.writers.values():
                writer.close()

    def _flush(self, split: str) -> None:
        import pyarrow as pa
        import pyarrow.parquet as pq

        records: list[dict] = self.pending.pop(split, [])
        schema = parquet_schema(with_model=self.with_model)
        table = pa.Table.from_pydict(
            {name: [record[name] for record in records] for name in schema.names}, schema=schema
        )
        if split not in self.writers:
            self.folder.mkdir(parents=True, exist_ok=True)
            # No dictionary for the audio: no two clips share their bytes, and trying costs time.
            dictionary = [name for name in schema.names if name != "audio"]
            self.writers[split] = pq.ParquetWriter(self.folder / f"{split}.parquet", schema, use_dictionary=dictionary)
        self.writers[split].write_table(table)
