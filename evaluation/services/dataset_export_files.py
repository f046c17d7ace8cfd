"""The files of each export format, written into a folder that becomes the zip.

Rows are streamed from the database (evaluation.selectors.label_sets.label_set_rows, or
evaluation.selectors.raw_annotations) and written as they come, so an export never holds a set's
rows in memory; the text itself comes from the pure writers in
evaluation.reports.label_set_files. Each writer returns what the data card says about its files.

A label set's rows are checked against the checksum recorded when it was finalized as they are
read: a final set never changes, and an export that would not match it is refused.
"""

import csv
import hashlib
import shutil
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from django.core.files.storage import default_storage

from annotation.models import Study
from annotation.shared.jobs import JobFailed
from evaluation.models import DatasetExport, LabelSet, LabelSetClip
from evaluation.reports.label_set_files import (
    CLIP_COLUMNS,
    FORM_RAW_COLUMNS,
    MODEL_CLIP_COLUMNS,
    MODEL_WORD_COLUMNS,
    PARTICIPANT_TABLE_COLUMNS,
    RAW_COLUMNS,
    WORD_COLUMNS,
    all_words_timed,
    audiofolder_metadata,
    canonical_line,
    clip_summary_rows,
    csv_cells,
    has_word_times,
    safe_file_stem,
    word_rows,
    write_textgrid,
)
from evaluation.reports.label_set_parquet import ParquetSplits, parquet_record
from evaluation.selectors.label_sets import label_set_rows
from evaluation.selectors.raw_annotations import (
    PARTICIPANT_COLUMN,
    raw_annotation_count,
    raw_annotations,
    raw_participants,
)

Format = DatasetExport.Format
PROGRESS_EVERY = 200  # rows between progress calls (each is cheap, but not free at 1.5 M rows)


@dataclass
class Written:
    """What the data card says about the files: what each holds, and what was left out."""

    files: str
    left_out: list[str] = field(default_factory=list)
    facts: dict = field(default_factory=dict)


def label_set_files_write(*, export_format: str, label_set: LabelSet, folder: Path, progress) -> Written:
    writers = {
        Format.JSONL: _jsonl,
        Format.CSV: _csv,
        Format.AUDIOFOLDER: _audiofolder,
        Format.PARQUET: _parquet,
        Format.TEXTGRID: _textgrids,
    }
    return writers[Format(export_format)](label_set, folder, progress)


def checked_rows(label_set: LabelSet, progress: Callable | None, phase: str) -> Iterator[tuple[dict, str]]:
    """(row, its canonical JSON line) for each clip of the set in order; JobFailed at the end if
    the rows do not hash to the set's recorded checksum."""
    total = label_set.summary.get("clips", 0)
    digest = hashlib.sha256()
    done = 0
    for done, row in enumerate(label_set_rows(label_set_id=label_set.pk), start=1):
        line = canonical_line(row) + "\n"
        digest.update(line.encode())
        yield row, line
        if progress is not None and done % PROGRESS_EVERY == 0:
            progress(phase, done, total)
    if digest.hexdigest() != label_set.checksum:
        raise JobFailed(
            f"the rows of {label_set} do not match the checksum recorded when it was finalized; it was not exported"
        )
    if progress is not None:
        progress(phase, done, total)


def _text(path: Path) -> TextIO:
    path.parent.mkdir(parents=True, exist_ok=True)
    # newline="": "\n" on every platform, so the bytes are the same everywhere
    return path.open("w", encoding="utf-8", newline="")


def _jsonl(label_set: LabelSet, folder: Path, progress) -> Written:
    with _text(folder / "clips.jsonl") as clips, _text(folder / "words.jsonl") as words:
        for row, line in checked_rows(label_set, progress, "writing clips and words"):
            clips.write(line)
            words.writelines(canonical_line(word) + "\n" for word in word_rows([row]))
    return Written(_with_model(label_set, JSONL_FILES, MODEL_JSONL))


def _csv(label_set: LabelSet, folder: Path, progress) -> Written:
    model = bool(label_set.annotator_model)
    clip_columns = (*CLIP_COLUMNS, *MODEL_CLIP_COLUMNS) if model else CLIP_COLUMNS
    word_columns = (*WORD_COLUMNS, *MODEL_WORD_COLUMNS) if model else WORD_COLUMNS
    with _text(folder / "clips.csv") as clips_file, _text(folder / "words.csv") as words_file:
        clips, words = _csv_writer(clips_file, clip_columns), _csv_writer(words_file, word_columns)
        for row, _ in checked_rows(label_set, progress, "writing clips and words"):
            clips.writerows(csv_cells(clip, clip_columns) for clip in clip_summary_rows([row]))
            words.writerows(csv_cells(word, word_columns) for word in word_rows([row]))
    return Written(_with_model(label_set, CSV_FILES, MODEL_CSV))


def _with_model(label_set: LabelSet, files: str, model_files: str) -> str:
    """The files' description, with the annotator model's columns where the set has them."""
    return f"{files}\n{model_files}" if label_set.annotator_model else files


def _csv_writer(handle, columns: tuple[str, ...]) -> csv.DictWriter:
    writer = csv.DictWriter(handle, fieldnames=columns, lineterminator="\n", extrasaction="raise")
    writer.writeheader()
    return writer


def _audiofolder(label_set: LabelSet, folder: Path, progress) -> Written:
    # A first pass (rows only, no audio) decides whether the word times can go in (see audiofolder_metadata).
    timed = all(all_words_timed(row) for row, _ in checked_rows(label_set, progress, "checking word times"))
    audio = dict(LabelSetClip.objects.filter(label_set=label_set).values_list("clip_key", "clip__model_audio"))
    with ExitStack() as stack:
        metadata: dict[str, TextIO] = {}  # split -> its metadata.jsonl
        for row, _ in checked_rows(label_set, progress, "copying audio"):
            split, file_name = row["split"], f"{safe_file_stem(row['clip_id'])}.wav"
            _copy_stored(audio.get(row["clip_id"]), folder / split / file_name, row["clip_id"])
            if split not in metadata:
                metadata[split] = stack.enter_context(_text(folder / split / "metadata.jsonl"))
            metadata[split].write(canonical_line(audiofolder_metadata(row, file_name, word_times=timed)) + "\n")
    left_out = (
        []
        if timed
        else [
            "the word times (`start`, `end`) in metadata.jsonl: some clips have none, and `datasets` needs a column to "
            "have one type in every split; the JSONL export has them"
        ]
    )
    return Written(
        _with_model(label_set, AUDIOFOLDER_FILES, MODEL_LISTS),
        left_out=left_out,
        facts={"word times in metadata.jsonl": "yes" if timed else "no"},
    )


def _parquet(label_set: LabelSet, folder: Path, progress) -> Written:
    audio = dict(LabelSetClip.objects.filter(label_set=label_set).values_list("clip_key", "clip__model_audio"))
    with ParquetSplits(folder / "data", with_model=bool(label_set.annotator_model)) as splits:
        for row, _ in checked_rows(label_set, progress, "writing clips with their audio"):
            name = audio.get(row["clip_id"])
            with default_storage.open(_check_stored(name, row["clip_id"]), "rb") as source:
                splits.add(parquet_record(row, source.read(), f"{safe_file_stem(row['clip_id'])}.wav"))
    return Written(_with_model(label_set, PARQUET_FILES, MODEL_LISTS))


def _check_stored(name: str | None, clip_id: str) -> str:
    """`name`, where the file is on the storage."""
    if not name or not default_storage.exists(name):
        raise JobFailed(f"the 16 kHz audio of clip {clip_id!r} is missing from storage ({name or 'no file'})")
    return name


def _copy_stored(name: str | None, target: Path, clip_id: str) -> None:
    stored = _check_stored(name, clip_id)
    target.parent.mkdir(parents=True, exist_ok=True)
    with default_storage.open(stored, "rb") as source, target.open("wb") as copy:
        shutil.copyfileobj(source, copy, 1024 * 1024)


def _textgrids(label_set: LabelSet, folder: Path, progress) -> Written:
    from praatio.utilities.errors import PraatioException  # praatio only for this format

    (folder / "textgrids").mkdir()
    left_out, written = [], 0
    for row, _ in checked_rows(label_set, progress, "writing TextGrids"):
        if not has_word_times(row):
            left_out.append(f"{row['clip_id']}: no word times")
            continue
        try:
            write_textgrid(row, folder / "textgrids" / f"{safe_file_stem(row['clip_id'])}.TextGrid")
            written += 1
        except PraatioException as error:  # e.g. overlapping words
            left_out.append(f"{row['clip_id']}: its word times do not make a TextGrid ({error})")
    if not written:
        raise JobFailed(f"no clip of {label_set} has word times: there is nothing to write as TextGrids")
    return Written(
        TEXTGRID_FILES, left_out=left_out, facts={"TextGrids": f"{written} of {written + len(left_out)} clips"}
    )


def raw_files_write(*, study: Study, include_prolific_ids: bool, folder: Path, progress) -> Written:
    columns: tuple[str, ...] = FORM_RAW_COLUMNS if study.capabilities.answers_are_choices else RAW_COLUMNS
    if include_prolific_ids:
        columns = (*columns, PARTICIPANT_COLUMN)
    total, rows = raw_annotation_count(study=study), 0
    with _text(folder / "annotations.csv") as handle:
        writer = _csv_writer(handle, columns)
        done = 0
        for done, annotation in enumerate(raw_annotations(study=study, include_prolific_ids=include_prolific_ids), 1):
            writer.writerows(csv_cells(row, columns) for row in annotation)
            rows += len(annotation)
            if done % PROGRESS_EVERY == 0:
                progress("writing annotations", done, total)
        progress("writing annotations", done, total)
    people = _participants_write(study, include_prolific_ids, folder)
    files = RAW_FORM_FILES if study.capabilities.answers_are_choices else RAW_EMPHASIS_FILES
    facts = {"annotations": done, "rows in annotations.csv": rows, "rows in participants.csv": people}
    return Written(f"{files}\n{PARTICIPANTS_FILE}", facts=facts)


def _participants_write(study: Study, include_prolific_ids: bool, folder: Path) -> int:
    columns = (*PARTICIPANT_TABLE_COLUMNS, PARTICIPANT_COLUMN) if include_prolific_ids else PARTICIPANT_TABLE_COLUMNS
    table = raw_participants(study=study, include_prolific_ids=include_prolific_ids)
    with _text(folder / "participants.csv") as handle:
        _csv_writer(handle, columns).writerows(csv_cells(row, columns) for row in table)
    return len(table)


# What each file holds, for the data card: one bullet a file, one line a bullet.
_CLIP_FIELDS = "`clip_id` (the corpus manifest's id), `split` (train, validation, test), `language`, `variety`, `speaker`, `emotion`"
_LABELS = (
    "`binary` (1 when more than half of the annotators marked the word, at level 1 or 2) and "
    "`scalar` (the mean of the annotators' levels scored 0, 0.5 and 1)"
)
_SCALE_STEP = "`scale_step` (training clips: the smallest data-scale percentage whose subset holds the clip"
_WORD_EXTRAS = (
    "`study`, `arousal`, `scale_step` (as in the clip rows) and `levels` (each opaque annotator id of the clip with "
    "the level, 0 to 2, they gave the word)"
)
JSONL_FILES = "\n".join(
    [
        f"- `clips.jsonl`: one JSON object per clip, in the set's order (by study, then clip id), exactly the set's "
        f"stored rows: {_CLIP_FIELDS}, `study`, `arousal`, {_SCALE_STEP}; null otherwise), `duration` (seconds), "
        f"`annotators` (opaque annotator ids) and `words` (per word: `index`, `text`, `start` and `end` in seconds or "
        f"null, {_LABELS}, and `levels`, one per annotator in the order of `annotators`). Its SHA-256 is the set's "
        "checksum above.",
        f"- `words.jsonl`: one JSON object per word: {_CLIP_FIELDS}, `word_index`, `word`, `start`, `end`, {_LABELS}, "
        f"`annotators` (how many annotated the clip), {_WORD_EXTRAS}.",
    ]
)
CSV_FILES = "\n".join(
    [
        f"- `words.csv`: one row per word: {_CLIP_FIELDS}, `word_index`, `word`, `start` and `end` (seconds; empty when "
        f"unknown), {_LABELS}, `annotators` (how many annotated the clip), {_WORD_EXTRAS} (as JSON).",
        f"- `clips.csv`: one row per clip: {_CLIP_FIELDS}, `arousal`, {_SCALE_STEP}), `duration` (seconds), the clip's "
        "`words`, `binary` and `scalar` labels as JSON arrays in word order, `annotators` (how many).",
    ]
)
AUDIOFOLDER_FILES = "\n".join(
    [
        'A Hugging Face `datasets` audiofolder: `datasets.load_dataset("audiofolder", data_dir="<this folder>")` gives '
        "one split per folder (`datasets` 4 and later decode the audio column with `torchcodec`, which needs FFmpeg's "
        "libraries; the Parquet export needs neither).",
        "- `<split>/<clip>.wav`: the clip's audio as 16 kHz mono 16-bit WAV (the file models are trained on). Clip ids "
        "with characters unsafe in file names are changed and get a short hash of the original.",
        f"- `<split>/metadata.jsonl`: one JSON object per clip: `file_name`, {_CLIP_FIELDS}, `arousal`, {_SCALE_STEP}; "
        f"0 for validation and test clips), the lists `words`, {_LABELS} in word order, `start` and `end` (seconds; only "
        "when every clip has word times) and `annotators` (how many).",
    ]
)
PARQUET_FILES = "\n".join(
    [
        'Parquet, readable with no audio codec: `datasets.load_dataset("parquet", data_dir="<this folder>/data")` gives '
        'one split per file, and pandas reads each file (`pandas.read_parquet("data/train.parquet")`).',
        f"- `data/<split>.parquet`: one row per clip: {_CLIP_FIELDS}, `study`, `arousal`, {_SCALE_STEP}; null "
        "otherwise), `duration` (seconds), `audio` ({`bytes`: the clip's 16 kHz mono 16-bit WAV file, `path`: its file "
        "name}; cast the column to `datasets.Audio()` to decode it), the lists `words`, `start` and `end` (seconds; "
        f"null when unknown), {_LABELS} in word order, `annotators` (opaque annotator ids) and `levels` (per word, "
        "one level per annotator in the order of `annotators`).",
    ]
)
# A set built with an annotator model (the data card's facts say which, and when it was fitted).
_POSTERIOR = "`posterior` (the annotator model's probability that the word is truly emphasized)"
_RELIABILITY = (
    "reliability (Youden's J, P(mark | truly emphasized) - P(mark | not emphasized): 1 perfect, 0 no better than "
    "chance) and its standard error"
)
MODEL_JSONL = (
    f"- With the annotator model: each word of `clips.jsonl` has {_POSTERIOR}, and each clip "
    f"`annotator_reliability` ([{_RELIABILITY}] per annotator, in the order of `annotators`); `words.jsonl` has "
    f"{_POSTERIOR}, `reliability` and `reliability_se` (each opaque annotator id of the clip with their {_RELIABILITY})."
)
MODEL_CSV = (
    f"- With the annotator model: `words.csv` has {_POSTERIOR}, `reliability` and `reliability_se` (as JSON: each "
    f"opaque annotator id of the clip with their {_RELIABILITY}); `clips.csv` has `posterior` (a JSON array in word "
    "order), `annotator_reliability` and `annotator_reliability_se` (JSON arrays, one per annotator)."
)
MODEL_LISTS = (
    "- With the annotator model: the lists `posterior` (in word order: the model's probability that the word is "
    "truly emphasized), `annotator_reliability` and `annotator_reliability_se` (one per annotator: their "
    f"{_RELIABILITY})."
)
TEXTGRID_FILES = (
    "- `textgrids/<clip>.TextGrid`: one Praat TextGrid per clip with word times, with three interval tiers over the "
    "words: `words` (the text), `binary` (1 or 0) and `scalar` (0 to 1, four decimals). Clips without word times are "
    'listed under "Left out".'
)
_RAW_COMMON = (
    "`study`, `clip_id`, `annotator` (an opaque id, the same as in the study's reports and label sets; an export "
    "made with Prolific ids adds a last column, `participant`, the Prolific id or local #<pk>), `decision` (the researcher's decision on the participant: pending, approved, rejected "
    "or return_requested; rejected participants are left out of label sets but not here), `completed` (1 when the "
    "participant finished), `attention_check` (1 for answers to attention-check items), `attention_passed` (1 or 0 "
    "for those), `seconds_spent`, `submitted_at` (UTC)"
)
RAW_EMPHASIS_FILES = (
    f"- `annotations.csv`: one row per annotator, clip and word, for every submitted annotation of the study: "
    f"{_RAW_COMMON}, `language`, `word_index`, `word`, `level` (0 not emphasized, 1 emphasized, 2 strongly "
    "emphasized), `mismatch_reported` (1 when the annotator said the words did not match the audio)."
)
PARTICIPANTS_FILE = (
    "- `participants.csv`: one row per participant of the study, those screened out before they annotated "
    "included: `study`, `annotator` (and `participant` as in annotations.csv), `decision`, `completed`, "
    "`screened_out` (1 when taken out: consent refused, a screening answer, the sound check or the headphone "
    "check), `entered_at` (UTC), `screening_answers` (each screening question with the answer given, as JSON), "
    "`sound_check_passed`, `headphone_check` (the study's test: none, huggins, antiphase or both), "
    "`headphone_level_set` (1 when they set their volume by the reference noise), `headphone_check_passed` (1 "
    "passed, 0 failed, empty when not decided), `huggins_scores` and `antiphase_scores` (right answers in each "
    "try, e.g. `5/6;6/6`), `headphone_self_report` (their answer to the screening question on wearing "
    "headphones, when the study asks it) and `headphone_trials` (every answer as JSON: `test`, `try`, `trial`, "
    "`target` and `answer`, intervals 1 to 3, and `correct`)."
)
RAW_FORM_FILES = (
    f"- `annotations.csv`: one row per answer, for every submitted answer of the listening form: {_RAW_COMMON}, "
    "`item_id` and `item_type` (the form item), `second_clip_id` (clip B of a pair), `answer` (the answer as JSON, "
    "in the item's own terms), `levels` (stressed-word items: one level per word, as JSON)."
)
