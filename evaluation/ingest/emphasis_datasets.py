"""Read published emphasis datasets whose labels are given per clip (no annotators) into drafts.

- EmphAssess (de Seyssel et al. 2023): `gold_df.json` as its tarball and repository give it, one
  JSON record a line (pandas' records lines), each with `id`, `src_sentence` (the token list;
  `tokens` is read the same) and `gold_emphasis` (indices into the tokens), optionally `voice`
  and `tgt_audiopath` (the repository's df_test.json); its audio is `<id>.wav` in the audio
  folder (or in a `<voice>/` folder, or the file `tgt_audiopath` names). Labels: prescribed by
  the script the speech was synthesized from.
- TinyStress-15K (WhiStress, Yosha et al. 2025) and StressTest (Yosha et al. 2025) as the hub
  distributes them: Parquet files (`data/train-00000-of-00002.parquet`), a `save_to_disk`
  folder (Arrow files with dataset_info.json and state.json, one folder per split), or
  .jsonl/.json records; the split is named by the file or its folder, or the folder's
  state.json. Each record has `transcription` and either `emphasis_indices` (indices into the
  transcription's whitespace-separated words) or `stress_pattern` {`binary`, `indices`,
  `words`}. The audio is the `audio` column: its embedded bytes (the `datasets` Audio layout,
  {bytes, path}), else the file its path names (or `audio_path`, `file_name`, else `<id>.wav`)
  inside the audio folder. The clip is named by `id`, else its audio's name, else the file and
  row it came from (StressTest's rows have no id).

Punctuation tokens join the word before them (annotation.ingest.dataset_clips), so indices keep
pointing at the words they marked. A record that cannot be read is a DatasetProblem naming its
file, line (JSON lines) or row (Parquet and Arrow, counted from 0 as `dataset[i]` counts) and
field; a file that cannot be read at all is one that no skipping gets past. Nothing here writes
to the database: evaluation.services.label_set_imports does.
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
from evaluation.ingest.hf_files import (
    TABLE_SUFFIXES,
    EmbeddedAudio,
    TableUnreadable,
    embedded_bytes,
    saved_split,
    table_rows,
)

SPLIT_NAMES = {"train": "train", "validation": "validation", "valid": "validation", "dev": "validation"}
SPLIT_NAMES |= {"val": "validation", "test": "test"}
DATA_SUFFIXES = (".jsonl", ".json", *TABLE_SUFFIXES)
HF_METADATA = ("dataset_info.json", "state.json", "dataset_dict.json")
HASH_CHUNK = 1 << 20


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
        "tinystress",
        "TinyStress-15K",
        "llm",
        "Hugging Face layout (Parquet, save_to_disk, .jsonl): transcription, emphasis_indices",
    ),
    # StressTest's texts and their stressed words were written by annotators and recorded by an
    # actor reading them so (stresstest-paper.txt, section 3.1): prescribed by the script.
    "stresstest": DatasetFormat(
        "stresstest",
        "StressTest",
        "prescribed",
        "Hugging Face layout (Parquet, save_to_disk, .jsonl): transcription, stress_pattern",
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


def read_dataset(
    format_key: str, path: Path, audio_folder: Path | None, limits: Limits, extract_to: Path
) -> DatasetDraft:
    """Every record of the dataset at `path` (a file, or a folder of files), checked. Embedded
    audio is written into `extract_to` (the caller's temporary folder); `audio_folder` holds the
    files that records name instead (None: every record must embed its audio)."""
    dataset_format = FORMATS[format_key]
    files = _data_files(path, dataset_format)
    digest = hashlib.sha256()
    draft = DatasetDraft(dataset_format, [_shown_name(path, file) for file in files], "")
    reader = _Reader(dataset_format, audio_folder, limits, EmbeddedAudio(extract_to, limits), draft)
    for file in files:
        _hash_into(digest, file)
        reader.read_file(file, _shown_name(path, file), _split_of(file, path))
    draft.sha256 = digest.hexdigest()
    return draft


class _Reader:
    def __init__(self, dataset_format, audio_folder, limits, embedded: EmbeddedAudio, draft: DatasetDraft):
        self.format, self.audio_folder, self.limits, self.embedded = dataset_format, audio_folder, limits, embedded
        self.draft = draft
        self.seen: dict[str, str] = {}

    @property
    def order(self) -> int:
        return len(self.draft.rows) + len(self.draft.problems) + 1

    def read_file(self, file: Path, shown: str, split: str) -> None:
        try:
            for number, unit, record in _records(file, shown, self.draft.problems, self.order - 1):
                self._record(record, f"{shown} {unit} {number}", _row_key(shown, number, unit), split)
        except TableUnreadable as unreadable:
            self.draft.problems.append(DatasetProblem(self.order, shown, "", "", str(unreadable), skippable=False))

    def _record(self, record: object, where: str, row_key: str, split: str) -> None:
        order = self.order
        clip_id = _record_id(record) or (_audio_stem(record) if isinstance(record, dict) else "")
        try:
            row = _row(self.format, record, where, order, row_key, self)
        except RecordBad as bad:
            self.draft.problems.append(DatasetProblem(order, where, clip_id or row_key, bad.field, bad.reason))
            return
        if row.clip.clip_id in self.seen:
            repeated = f"repeats the id of {self.seen[row.clip.clip_id]}"
            self.draft.problems.append(DatasetProblem(order, where, row.clip.clip_id, "id", repeated))
            return
        self.seen[row.clip.clip_id] = where
        row.split = split
        self.draft.rows.append(row)

    def audio(self, record: dict, clip_id: str, names: list[str]) -> tuple[Path, str]:
        data = embedded_bytes(record.get("audio"))
        if data is not None:
            return self.embedded.add(data, _audio_value(record), clip_id)
        if self.audio_folder is None:
            raise RecordBad("audio", "embeds no audio bytes and names a file, but no audio folder was given")
        return audio_file(self.audio_folder, names, self.limits)


def _hash_into(digest, file: Path) -> None:
    with file.open("rb") as stream:
        while chunk := stream.read(HASH_CHUNK):
            digest.update(chunk)


def _row_key(shown: str, number: int, unit: str) -> str:
    """A clip name for a table row without id or audio name: its file and row."""
    if unit != "row":
        return ""
    return f"{str(PurePosixPath(shown).with_suffix('')).replace('/', '-')}-{number}"


def _data_files(path: Path, dataset_format: DatasetFormat) -> list[Path]:
    if path.is_file():
        return [path]
    if not path.is_dir():
        raise FileNotFoundError(f"{path} is neither a file nor a folder")
    if dataset_format.key == "emphassess":
        files = [
            file for file in (path / "gold_df.json", path / "gold_df.jsonl", path / "df_test.json") if file.is_file()
        ][:1]
    else:
        files = sorted(
            file
            for file in path.rglob("*")
            if file.suffix in DATA_SUFFIXES
            and file.is_file()
            and not file.name.startswith("cache-")  # datasets' cache files beside a saved dataset
            and not any(part.startswith(".") for part in file.relative_to(path).parts)  # .cache/ of a download
            and file.name not in HF_METADATA
        )
    if not files:
        raise FileNotFoundError(f"no {dataset_format.dataset} records in {path} ({dataset_format.about})")
    return files


def _shown_name(root: Path, file: Path) -> str:
    return file.name if root == file else str(PurePosixPath(*file.relative_to(root).parts))


def _records(file: Path, shown: str, problems: list[DatasetProblem], order: int):
    """(number, "line", "record" or "row", record) for each record; unreadable ones become
    problems. Table rows count from 0, as the dataset's own index does; lines from 1."""
    if file.suffix in TABLE_SUFFIXES:
        for number, record in enumerate(table_rows(file)):
            yield number, "row", record
        return
    try:
        text = file.read_text(encoding="utf-8")
    except UnicodeDecodeError as error:
        problems.append(DatasetProblem(order + 1, shown, "", "", f"is not UTF-8 text: {error}", skippable=False))
        return
    stripped = text.lstrip()
    if stripped.startswith("["):
        try:
            records = json.loads(text)
        except json.JSONDecodeError as error:
            problems.append(DatasetProblem(order + 1, shown, "", "", f"is not JSON: {error}", skippable=False))
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


def _row(dataset_format, record, where, order, row_key: str, reader: _Reader) -> LabelledClip:
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
        speaker = _speaker(record)
    clip_id = _record_id(record) or _audio_stem(record) or row_key
    if not clip_id:
        raise RecordBad("id", "missing, and no audio path to name the clip by")
    names = _emphassess_audio_names(record, clip_id) if dataset_format.key == "emphassess" else None
    audio, name = reader.audio(record, clip_id, names or _audio_names(record, clip_id))
    metadata = {"source_dataset": dataset_format.dataset}
    clip = ClipDraft(order, where, clip_id, audio, name, [WordSpec(word) for word in words], "en", speaker, metadata)
    return LabelledClip(clip, marked)


def _speaker(record: dict) -> str:
    metadata = record.get("metadata")
    voice = metadata.get("voice_name") if isinstance(metadata, dict) else None  # StressTest's metadata
    return str(record.get("speaker_id") or record.get("speaker") or voice or "")


def _emphassess_audio_names(record: dict, clip_id: str) -> list[str]:
    """<id>.wav, in the folder or its <voice>/ folder, then the file tgt_audiopath names."""
    voice = str(record.get("voice") or "")
    names = audio_candidates(clip_id)
    if voice and "/" not in voice and "\\" not in voice:
        names += [f"{voice}/{name}" for name in audio_candidates(clip_id)]
    target = record.get("tgt_audiopath")
    if isinstance(target, str) and target.strip():
        names.append(PurePosixPath(target.strip().replace("\\", "/")).name)
    return names


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
    saved = saved_split(file)
    if saved:
        return SPLIT_NAMES.get(saved.lower(), "")
    parts = file.relative_to(root).parts if root != file else (file.name,)
    for part in reversed(parts):
        name = part.split(".")[0].split("-")[0].lower()
        if name in SPLIT_NAMES:
            return SPLIT_NAMES[name]
    return ""
