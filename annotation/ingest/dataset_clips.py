"""What the readers of published emphasis datasets share: a clip drafted from one record, the
record's place in its file for error messages, words from a token list, and the audio file a
record names inside the folder the researcher points to.

The readers (annotation.ingest.morrison_annotations, evaluation.ingest.emphasis_datasets) only
read and check; annotation.services.dataset_clips stages the drafts as a corpus manifest and
imports them with the corpus import (its audio checks and conversions), and the callers write
what the labels make of them.
"""

from dataclasses import asdict, dataclass, field
from pathlib import Path, PurePosixPath

from annotation.ingest.source import Limits, resolve_audio_path
from annotation.ingest.words import WordSpec, is_wordlike
from annotation.refusals import Problem

AUDIO_SUFFIXES = (".wav", ".flac")


@dataclass(frozen=True)
class DatasetProblem:
    """Why one record of a dataset file cannot be imported: `where` names the file and the line,
    record or row ("gold_df.json line 3", "data/test-00000-of-00001.parquet row 17",
    "annotations.json annotator '000002' item 5"); `order` sorts. A problem that is not
    `skippable` (a file that cannot be read at all, a choice that does not fit the layout)
    refuses the import even when the researcher asks to skip bad records."""

    order: int
    where: str
    clip_id: str
    field: str
    reason: str
    skippable: bool = True

    def __str__(self) -> str:
        clip = f" (clip {self.clip_id!r})" if self.clip_id else ""
        name = f", {self.field}" if self.field else ""
        return f"{self.where}{clip}{name}: {self.reason}"

    def as_dict(self) -> dict:
        values = asdict(self)
        values.pop("order")
        values.pop("skippable")
        return values

    def located(self, file: str) -> Problem:
        """The problem in the one shape the API answers: a record is not always a line of one
        file (a Parquet row, an annotator's item), so `where` alone says where it is."""
        return Problem(self.reason, where=self.where, item=self.clip_id, field=self.field)


class RecordBad(ValueError):
    """One field of a record is wrong; the reader turns it into a DatasetProblem."""

    def __init__(self, field_name: str, reason: str):
        super().__init__(reason)
        self.field, self.reason = field_name, reason


@dataclass
class ClipDraft:
    """One clip of an imported dataset, checked; `audio` is the file found for it and `audio_name`
    its path inside the audio folder (the staged manifest's `audio`)."""

    order: int
    where: str
    clip_id: str
    audio: Path
    audio_name: str
    words: list[WordSpec]
    language: str = "en"
    speaker: str = ""
    metadata: dict = field(default_factory=dict)

    @property
    def transcript(self) -> str:
        return " ".join(word.text for word in self.words)

    def manifest_row(self) -> dict:
        words = [
            {"text": word.text, "start": word.start, "end": word.end} if word.start is not None else word.text
            for word in self.words
        ]
        row = {"id": self.clip_id, "audio": self.audio_name, "transcript": self.transcript, "words": words}
        row.update({"language": self.language, "speaker": self.speaker, **self.metadata})
        return row

    def problem(self, field_name: str, reason: str) -> DatasetProblem:
        return DatasetProblem(self.order, self.where, self.clip_id, field_name, reason)


def words_from_tokens(tokens: list[str], marked: list[int], field_name: str) -> tuple[list[str], list[int]]:
    """Words and marked word indices from a token list whose indices `marked` refers to: a token of
    punctuation alone ("," "!") is no word to mark, so it joins the word before it (or, first, the
    one after), and the indices are renumbered. A marked index on such a token, or outside the
    list, is refused (RecordBad naming `field_name`)."""
    if not isinstance(tokens, list) or not tokens or not all(isinstance(token, str) for token in tokens):
        raise RecordBad("tokens", "must be a non-empty list of words")
    bad = [index for index in marked if not isinstance(index, int) or not 0 <= index < len(tokens)]
    if bad:
        raise RecordBad(field_name, f"indices {bad} are outside the {len(tokens)} tokens")
    words: list[str] = []
    word_of: dict[int, int] = {}
    leading = ""
    for position, token in enumerate(token.strip() for token in tokens):
        if not token:
            continue
        if not is_wordlike(token):
            if words:
                words[-1] += token
            else:
                leading += token
            continue
        word_of[position] = len(words)
        words.append(leading + token)
        leading = ""
    if not words:
        raise RecordBad("tokens", "has no word, only punctuation")
    not_words = sorted({index for index in marked if index not in word_of})
    if not_words:
        raise RecordBad(field_name, f"indices {not_words} mark punctuation, not a word")
    return words, sorted({word_of[index] for index in marked})


def indices_of(value: object, field_name: str) -> list[int]:
    if not isinstance(value, list) or not all(isinstance(item, int) and not isinstance(item, bool) for item in value):
        raise RecordBad(field_name, "must be a list of word indices (whole numbers)")
    return value


def audio_file(folder: Path, names: list[str], limits: Limits, field_name: str = "audio") -> tuple[Path, str]:
    """The first of `names` (paths inside `folder`) that exists, with its name; RecordBad if none
    does, naming what was looked for. Paths leaving the folder are refused."""
    reasons = []
    for name in names:
        try:
            return resolve_audio_path(folder, folder, name, limits), str(PurePosixPath(name.replace("\\", "/")))
        except ValueError as error:
            reasons.append(str(error))
    looked_for = " or ".join(repr(name) for name in names)
    if any("not found" not in reason for reason in reasons):
        raise RecordBad(field_name, "; ".join(reasons))
    raise RecordBad(field_name, f"no audio file {looked_for} in the audio folder {folder}")


def audio_candidates(stem: str) -> list[str]:
    return [f"{stem}{suffix}" for suffix in AUDIO_SUFFIXES]
