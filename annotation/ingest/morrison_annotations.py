"""Read Morrison et al.'s crowdsourced LibriTTS prominence annotations (ICASSP 2024) into drafts.

The `emphases` project (interactiveaudiolab/emphases) releases them as one JSON object, its
annotations.json: anonymised annotator id -> {"language", "country", "annotations": [{"stem",
"score": one 0/1 per word, "words": [[word, start, end], ...]}]}. Each stem is a LibriTTS
utterance (speaker_chapter_paragraph_sentence); its audio is `<stem>.wav` (or .flac) in the
folder given, directly or in LibriTTS's own `<speaker>/<chapter>/` folders.

The same project drops annotators before using their marks: fewer than 20 items, or more than
a third of their items with more than two thirds of the words marked. `annotator_filter_reasons`
says which rule an annotator breaks; the import records it as a rejection, so that the
agreement report and the label set leave them out, and say so.
"""

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path

from annotation.ingest.dataset_clips import (
    ClipDraft,
    DatasetProblem,
    RecordBad,
    audio_candidates,
    audio_file,
)
from annotation.ingest.source import Limits
from annotation.ingest.words import WordSpec, is_wordlike

DATASET = "Morrison et al. 2024, crowdsourced LibriTTS prominence"
MIN_ITEMS = 20  # fewer: an incomplete batch
MOST_MARKED_SHARE = 2 / 3  # an item with more than this share of its words marked is suspect
MOST_SUSPECT_ITEMS = 1 / 3  # more than this share of suspect items drops the annotator


@dataclass
class AnnotatorDraft:
    key: str  # the anonymised id the release gives ("000000")
    language: str
    country: str
    items: list[tuple[str, list[int]]] = field(default_factory=list)  # (stem, one 0/1 per word)
    given: int = 0  # the items the release lists for them, bad ones included


@dataclass
class CrowdDraft:
    file: str
    sha256: str
    clips: dict[str, ClipDraft]
    annotators: list[AnnotatorDraft]
    problems: list[DatasetProblem]


def annotator_filter_reasons(items: list[list[int]], given: int | None = None) -> list[str]:
    """Which of the emphases project's annotator filters these items (one 0/1 list each) break.
    `given`: how many items the release lists for the annotator, where some were skipped as bad
    (the batch was complete all the same: the import left items out, not the annotator)."""
    reasons = []
    count = len(items) if given is None else given
    if count < MIN_ITEMS:
        reasons.append(f"fewer than {MIN_ITEMS} items ({count})")
    suspect = sum(1 for scores in items if sum(scores) > MOST_MARKED_SHARE * len(scores))
    if items and suspect > MOST_SUSPECT_ITEMS * len(items):
        reasons.append(f"{suspect} of {len(items)} items with more than two thirds of the words marked")
    return reasons


def read_morrison(path: Path, audio_folder: Path, limits: Limits) -> CrowdDraft:
    raw = path.read_bytes()
    try:
        data = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        problem = DatasetProblem(0, path.name, "", "", f"is not JSON: {error}", skippable=False)
        return CrowdDraft(path.name, "", {}, [], [problem])
    problems: list[DatasetProblem] = []
    if not isinstance(data, dict) or not data:
        problems.append(
            DatasetProblem(0, path.name, "", "", "must be an object: annotator id -> their annotations", False)
        )
        return CrowdDraft(path.name, hashlib.sha256(raw).hexdigest(), {}, [], problems)
    reader = _Reader(path.name, audio_folder, limits, problems)
    annotators = [reader.annotator(order, key, value) for order, (key, value) in enumerate(sorted(data.items()))]
    return CrowdDraft(path.name, hashlib.sha256(raw).hexdigest(), reader.clips, annotators, problems)


class _Reader:
    def __init__(self, file: str, audio_folder: Path, limits: Limits, problems: list[DatasetProblem]):
        self.file, self.audio_folder, self.limits, self.problems = file, audio_folder, limits, problems
        self.clips: dict[str, ClipDraft] = {}
        self.without_audio: dict[str, str] = {}  # stem -> the first item that named it, where it was reported
        self.counter = 0

    def annotator(self, order: int, key: str, value: object) -> AnnotatorDraft:
        where = f"{self.file} annotator {key!r}"
        if not isinstance(value, dict) or not isinstance(value.get("annotations"), list):
            self._problem(where, "", "annotations", "each annotator needs a list of annotations")
            return AnnotatorDraft(key, "", "")
        draft = AnnotatorDraft(key, str(value.get("language") or ""), str(value.get("country") or ""))
        draft.given = len(value["annotations"])
        for number, item in enumerate(value["annotations"], start=1):
            stem = item.get("stem") if isinstance(item, dict) else None
            item_where = f"{where} item {number}"
            try:
                draft.items.append(self._item(item_where, item))
            except RecordBad as bad:
                self._problem(item_where, stem if isinstance(stem, str) else "", bad.field, bad.reason)
        return draft

    def _item(self, where: str, item: object) -> tuple[str, list[int]]:
        if not isinstance(item, dict):
            raise RecordBad("", "each annotation must be an object with stem, score and words")
        stem = item.get("stem")
        if not isinstance(stem, str) or not stem.strip():
            raise RecordBad("stem", "must be the LibriTTS utterance id")
        words = _words(item.get("words"))
        scores = _scores(item.get("score"), len(words))
        clip = self.clips.get(stem)
        if stem in self.without_audio:
            raise RecordBad("stem", f"has no audio file (see {self.without_audio[stem]})")
        if clip is None:
            self.clips[stem] = self._clip(where, stem, words)
        elif clip is not None and [(w.text, w.start, w.end) for w in clip.words] != [
            (w.text, w.start, w.end) for w in words
        ]:
            raise RecordBad("words", f"differ from the words given for this stem at {clip.where}")
        return stem, scores

    def _clip(self, where: str, stem: str, words: list[WordSpec]) -> ClipDraft:
        speaker, chapter = [*stem.split("_"), "", ""][:2]
        names = audio_candidates(stem) + [f"{speaker}/{chapter}/{name}" for name in audio_candidates(stem)]
        try:
            audio, name = audio_file(self.audio_folder, names, self.limits)
        except RecordBad:
            self.without_audio[stem] = where
            raise
        self.counter += 1
        return ClipDraft(self.counter, where, stem, audio, name, words, language="en", speaker=speaker)

    def _problem(self, where: str, clip_id: str, field_name: str, reason: str) -> None:
        self.counter += 1
        self.problems.append(DatasetProblem(self.counter, where, clip_id, field_name, reason))


def _words(value: object) -> list[WordSpec]:
    if not isinstance(value, list) or not value:
        raise RecordBad("words", "must be a non-empty list of [word, start, end]")
    words = []
    for position, entry in enumerate(value):
        if not (isinstance(entry, list | tuple) and len(entry) == 3 and isinstance(entry[0], str)):
            raise RecordBad("words", f"word {position} must be [word, start, end]")
        text, start, end = entry
        if not is_wordlike(text):
            raise RecordBad("words", f"word {position} ({text!r}) is not a word")
        if not all(isinstance(t, int | float) and not isinstance(t, bool) for t in (start, end)) or end <= start:
            raise RecordBad("words", f"word {position} ({text!r}) needs a start before its end, in seconds")
        words.append(WordSpec(text, float(start), float(end)))
    return words


def _scores(value: object, count: int) -> list[int]:
    if isinstance(value, str):  # the responses table's form, "0100", which the project also reads
        value = [int(char) if char in "01" else char for char in value]
    if not isinstance(value, list) or len(value) != count:
        raise RecordBad("score", f"must give one score per word ({count})")
    if any(isinstance(score, bool) or score not in (0, 1) for score in value):
        raise RecordBad("score", "each score must be 0 or 1 (this is a binary study)")
    return [int(score) for score in value]
