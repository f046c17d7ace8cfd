"""Read published emphasis datasets whose labels are given per clip (no annotators) into drafts.

- EmphAssess (de Seyssel et al. 2023): `gold_df.json`, one JSON record a line (pandas' records
  lines), each with `id`, `src_sentence` (the token list; `tokens` is read the same) and
  `gold_emphasis` (indices into the tokens), optionally `voice`; its audio is `<id>.wav` in the
  audio folder. Labels: prescribed by the script the speech was synthesized from.
- TinyStress-15K (WhiStress, Yosha et al. 2025) and StressTest (Yosha et al. 2025) in the
  Hugging Face dataset layout: records in .jsonl, .json or .parquet files (a folder of them, the
  split named by the file or its folder: `train`, `validation`, `test`), each with
  `transcription` and either `emphasis_indices` (indices into the transcription's
  whitespace-separated words) or `stress_pattern` {`binary`, `indices`, `words`}; the audio is
  the `audio` column's path (a string or {"path"}), `audio_path` or `file_name`, else
  `<id>.wav`, inside the audio folder. Embedded audio bytes are not read: the researcher points
  to the folder that holds the files.

Punctuation tokens join the word before them (annotation.ingest.dataset_clips), so indices keep
pointing at the words they marked. Nothing here writes: evaluation.services.label_set_imports does.
"""

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from annotation.ingest.dataset_clips import (
    ClipDraft,
    DatasetProblem,
    RecordBad,
    audio_candidates,
    audio_file,
    indices_of,
    words_from_tokens,
)
from annotation.ingest.source import Limits
from annotation.ingest.words import WordSpec

SPLIT_NAMES = {"train": "train", "validation": "validation", "valid": "validation", "dev": "validation"}
SPLIT_NAMES |= {"val": "validation", "test": "test"}
DATA_SUFFIXES = (".jsonl", ".json", ".parquet")


@dataclass(frozen=True)
class DatasetFormat:
    key: str
    dataset: str  # the name the provenance shows
    label_source: str  # evaluation.LabelSet.LabelSource value
    about: str


FORMATS = {
    "emphassess": DatasetFormat(
        "emphassess", "EmphAssess", "prescribed", "gold_df.json: id, src_sentence (tokens), gold_emphasis"
    ),
    "tinystress": DatasetFormat(
        "tinystress", "TinyStress-15K", "llm", "Hugging Face layout: transcription, emphasis_indices"
    ),
    # StressTest's texts and their stressed words were written by annotators and recorded by an
    # actor reading them so (stresstest-paper.txt, section 3.1): prescribed by the script.
    "stresstest": DatasetFormat(
        "stresstest", "StressTest", "prescribed", "Hugging Face layout: transcription, stress_pattern"
    ),
}


@dataclass
class LabelledClip:
    clip: ClipDraft
    marked: list[int]  # indices of the emphasized words
    split: str = ""  # "" where the layout names none


@dataclass
class DatasetDraft:
    format: DatasetFormat
    files: list[str]
    sha256: str
    rows: list[LabelledClip] = field(default_factory=list)
    problems: list[DatasetProblem] = field(default_factory=list)


def read_dataset(format_key: str, path: Path, audio_folder: Path, limits: Limits) -> DatasetDraft:
    """Every record of the dataset at `path` (a file, or a folder of files), checked."""
    dataset_format = FORMATS[format_key]
    files = _data_files(path, dataset_format)
    digest = hashlib.sha256()
    draft = DatasetDraft(dataset_format, [_shown_name(path, file) for file in files], "")
    seen: dict[str, str] = {}
    for file in files:
        digest.update(file.read_bytes())
        shown = _shown_name(path, file)
        for number, unit, record in _records(file, shown, draft.problems, len(draft.rows) + len(draft.problems)):
            where = f"{shown} {unit} {number}"
            order = len(draft.rows) + len(draft.problems) + 1
            clip_id = _record_id(record) or (_audio_stem(record) if isinstance(record, dict) else "")
            try:
                row = _row(dataset_format, record, where, order, audio_folder, limits)
            except RecordBad as bad:
                draft.problems.append(DatasetProblem(order, where, clip_id, bad.field, bad.reason))
                continue
            if row.clip.clip_id in seen:
                draft.problems.append(
                    DatasetProblem(order, where, row.clip.clip_id, "id", f"repeats the id of {seen[row.clip.clip_id]}")
                )
                continue
            seen[row.clip.clip_id] = where
            row.split = _split_of(file, path)
            draft.rows.append(row)
    draft.sha256 = digest.hexdigest()
    return draft


def _data_files(path: Path, dataset_format: DatasetFormat) -> list[Path]:
    if path.is_file():
        return [path]
    if not path.is_dir():
        raise FileNotFoundError(f"{path} is neither a file nor a folder")
    if dataset_format.key == "emphassess":
        files = [file for file in (path / "gold_df.json", path / "gold_df.jsonl") if file.is_file()]
    else:
        files = sorted(
            file
            for file in path.rglob("*")
            if file.suffix in DATA_SUFFIXES
            and file.is_file()
            and not file.name.startswith(".")
            and file.name not in ("dataset_info.json", "state.json", "dataset_dict.json")
        )
    if not files:
        raise FileNotFoundError(f"no {dataset_format.dataset} records in {path} ({dataset_format.about})")
    return files


def _shown_name(root: Path, file: Path) -> str:
    return file.name if root == file else str(PurePosixPath(*file.relative_to(root).parts))


def _records(file: Path, shown: str, problems: list[DatasetProblem], order: int):
    """(number, "line" or "record", record) for each record; unreadable ones become problems."""
    if file.suffix == ".parquet":
        import pyarrow.parquet  # only where a Parquet file is read

        for number, record in enumerate(pyarrow.parquet.read_table(file).to_pylist(), start=1):
            yield number, "record", record
        return
    text = file.read_text(encoding="utf-8")
    stripped = text.lstrip()
    if stripped.startswith("["):
        try:
            records = json.loads(text)
        except json.JSONDecodeError as error:
            problems.append(DatasetProblem(order + 1, shown, "", "", f"is not JSON: {error}"))
            return
        for number, record in enumerate(records, start=1):
            yield number, "record", record
        return
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            yield number, "line", json.loads(line)
        except json.JSONDecodeError as error:
            problems.append(DatasetProblem(order + number, f"{shown} line {number}", "", "", f"not JSON: {error.msg}"))


def _record_id(record: object) -> str:
    value = record.get("id") if isinstance(record, dict) else None
    return str(value) if isinstance(value, str | int) and not isinstance(value, bool) else ""


def _row(dataset_format, record, where, order, audio_folder, limits) -> LabelledClip:
    if not isinstance(record, dict):
        raise RecordBad("", "each record must be a JSON object")
    if dataset_format.key == "emphassess":
        tokens = record.get("src_sentence", record.get("tokens"))
        if tokens is None:
            raise RecordBad("src_sentence", "missing: the token list (src_sentence or tokens)")
        words, marked = words_from_tokens(
            tokens, indices_of(record.get("gold_emphasis"), "gold_emphasis"), "gold_emphasis"
        )
        speaker = str(record.get("voice") or "")
    else:
        words, marked = _stress_words(record)
        speaker = str(record.get("speaker_id") or record.get("speaker") or "")
    clip_id = _record_id(record) or _audio_stem(record)
    if not clip_id:
        raise RecordBad("id", "missing, and no audio path to name the clip by")
    audio, name = audio_file(audio_folder, _audio_names(record, clip_id), limits)
    metadata = {"source_dataset": dataset_format.dataset}
    clip = ClipDraft(order, where, clip_id, audio, name, [WordSpec(word) for word in words], "en", speaker, metadata)
    return LabelledClip(clip, marked)


def _stress_words(record: dict) -> tuple[list[str], list[int]]:
    transcription = record.get("transcription")
    if not isinstance(transcription, str) or not transcription.strip():
        raise RecordBad("transcription", "missing or empty")
    tokens = transcription.split()
    pattern = record.get("stress_pattern")
    if pattern is not None:
        return words_from_tokens(tokens, _pattern_indices(pattern, tokens), "stress_pattern")
    if "emphasis_indices" not in record:
        raise RecordBad("emphasis_indices", "missing: give emphasis_indices or stress_pattern")
    return words_from_tokens(tokens, indices_of(record["emphasis_indices"], "emphasis_indices"), "emphasis_indices")


def _pattern_indices(pattern: object, tokens: list[str]) -> list[int]:
    """stress_pattern's indices, checked against its binary vector and its words."""
    if not isinstance(pattern, dict) or not isinstance(pattern.get("binary"), list):
        raise RecordBad("stress_pattern", "must be an object with binary, indices and words")
    binary = pattern["binary"]
    if len(binary) != len(tokens) or any(isinstance(v, bool) or v not in (0, 1) for v in binary):
        raise RecordBad("stress_pattern.binary", f"must be 0 or 1 for each of the {len(tokens)} words")
    indices = [index for index, value in enumerate(binary) if value]
    given = pattern.get("indices")
    if given is not None and sorted(indices_of(given, "stress_pattern.indices")) != indices:
        raise RecordBad("stress_pattern.indices", f"{given} do not match the binary vector {binary}")
    words = pattern.get("words")
    if words is not None and [_bare(w) for w in words] != [_bare(tokens[i]) for i in indices]:
        raise RecordBad("stress_pattern.words", f"{words} are not the words the binary vector marks")
    return indices


def _bare(word: object) -> str:
    return "".join(char for char in str(word).casefold() if char.isalnum())


def _audio_value(record: dict) -> str:
    for key in ("audio", "audio_path", "file_name"):
        value = record.get(key)
        if isinstance(value, dict):
            value = value.get("path")
        if isinstance(value, str) and value.strip():
            return value.strip()
    return ""


def _audio_stem(record: dict) -> str:
    value = _audio_value(record)
    return PurePosixPath(value.replace("\\", "/")).stem if value else ""


def _audio_names(record: dict, clip_id: str) -> list[str]:
    value = _audio_value(record).replace("\\", "/")
    if not value:
        return audio_candidates(clip_id)
    pure = PurePosixPath(value)
    # A path from the machine the dataset was made on: look for the file by its name.
    return [pure.name] if pure.is_absolute() else [value, pure.name] if len(pure.parts) > 1 else [value]


def _split_of(file: Path, root: Path) -> str:
    parts = file.relative_to(root).parts if root != file else (file.name,)
    for part in reversed(parts):
        name = part.split(".")[0].split("-")[0].lower()
        if name in SPLIT_NAMES:
            return SPLIT_NAMES[name]
    return ""
