"""form_items_import: a draft listening-form study from items.jsonl and its audio, atomically.

1. read and check every row (annotation.ingest.listening_form_rows) and every audio path it names;
2. stage a corpus folder: a manifest.jsonl with one row per distinct audio file (its transcript
   from the rows, else from its file name) and the audio files themselves;
3. corpus_import the staged folder into the corpus and listening_form_study_create, in one transaction; if
   anything fails after files were stored, they are deleted: a refused import writes nothing.

The corpus import's problems name lines of the staged manifest; they are reported on the
items.jsonl lines that use the audio file. Row problems and missing files are reported together;
audio that cannot be decoded is found by the corpus import, so only once the rows are all good.

A .zip is extracted with source.extract_zip (its limits and path checks); open_source itself
looks for a corpus manifest, which a form folder does not have.
"""

import json
import re
import tempfile
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from django.core.files.storage import default_storage
from django.db import transaction

from annotation.ingest.errors import ImportRefused, RowProblem, SourceRefused
from annotation.ingest.listening_form_rows import ItemDraft, ItemProblem, read_items
from annotation.ingest.source import open_source, resolve_audio_path
from annotation.models import Clip, Corpus, Study
from annotation.services.corpus_import import corpus_import, limits_from_settings, staging_audio_add
from annotation.services.listening_forms import ListeningFormItemSpec, listening_form_study_create

ITEMS_NAME = "items.jsonl"


@dataclass
class AudioFile:
    """One distinct audio file of the form: a clip of the corpus."""

    audio: str  # the path as items.jsonl gives it, relative to items.jsonl
    transcript: str = ""
    words: list | None = None
    language: str = ""
    uses: list[tuple[int, str, str]] = field(default_factory=list)  # (line, item id, field)
    given_on: dict[str, int] = field(default_factory=dict)  # the line each fact came from
    path: Path | None = None

    @property
    def clip_id(self) -> str:
        return str(PurePosixPath(self.audio).with_suffix(""))

    def manifest_row(self) -> dict:
        # Without a transcript in any row, the file name stands in ("sample_01.wav" -> "sample 01").
        fallback = re.sub(r"[\s_.\-]+", " ", PurePosixPath(self.audio).stem).strip() or "audio"
        row = {
            "id": self.clip_id,
            "audio": self.audio,
            "transcript": self.transcript or fallback,
            "language": self.language,
        }
        return row | ({"words": self.words} if self.words else {})


@dataclass
class FormImportReport:
    study: Study
    corpus: str
    items: int
    clips_created: int
    clips_reused: int
    problems: list[RowProblem]  # rows left out with skip_invalid


def form_items_import(
    *,
    path: Path,
    study_name: str,
    corpus_name: str | None = None,
    skip_invalid: bool = False,
    with_ssd: bool = False,
    language: str = "",
    **study_settings,
) -> FormImportReport:
    if Study.objects.filter(name=study_name).exists():
        raise SourceRefused(f"a study named {study_name!r} already exists; choose another name")
    limits = limits_from_settings()
    with open_source(Path(path), limits, names=(ITEMS_NAME,)) as source:
        root, items_path, source_name = source.root, source.manifest, source.display_name
        drafts, problems = read_items(items_path, with_ssd=with_ssd, language=language)
        problems += _duplicate_ids(drafts)
        drafts = _without_bad_lines(drafts, problems)
        files = _audio_files(drafts, problems)
        _locate(root, items_path.parent, files, limits, problems)
        drafts = _keep_good(drafts, problems, skip_invalid)
        used = [files[audio] for audio in dict.fromkeys(a for d in drafts for a in (d.audio, d.audio_b) if a)]
        corpus = corpus_name or Path(source_name).stem or "forms"
        with tempfile.TemporaryDirectory(prefix="form-items-") as staging:
            _stage(Path(staging), used)
            return _import(Path(staging), corpus, study_name, drafts, used, problems, skip_invalid, study_settings)


def _without_bad_lines(drafts: list[ItemDraft], problems: list[ItemProblem]) -> list[ItemDraft]:
    bad = {problem.line for problem in problems}
    return [draft for draft in drafts if draft.line not in bad]


def _keep_good(drafts: list[ItemDraft], problems: list[ItemProblem], skip_invalid: bool) -> list[ItemDraft]:
    problems.sort(key=lambda problem: problem.line)
    good = _without_bad_lines(drafts, problems)
    if problems and (not skip_invalid or not good):
        raise ImportRefused(ITEMS_NAME, problems)
    return good


def _duplicate_ids(drafts: list[ItemDraft]) -> list[ItemProblem]:
    first: dict[str, int] = {}
    problems = []
    for draft in drafts:
        if draft.external_id in first:
            reason = f"duplicate id, first used on line {first[draft.external_id]}"
            problems.append(ItemProblem(draft.line, draft.external_id, "id", reason))
        else:
            first[draft.external_id] = draft.line
    return problems


def _audio_files(drafts: list[ItemDraft], problems: list[ItemProblem]) -> dict[str, AudioFile]:
    """The distinct audio files, each with the transcript and language the rows give it; a row
    that gives one file another transcript (or language) than an earlier row is a problem."""
    files: dict[str, AudioFile] = {}
    for draft in drafts:
        for name, audio, transcript, words in (
            ("audio", draft.audio, draft.transcript, draft.words),
            ("audio_b", draft.audio_b, draft.transcript_b, None),
        ):
            if not audio:
                continue
            file = files.setdefault(audio, AudioFile(audio))
            for fact, value in (("transcript", transcript), ("words", words), ("language", draft.language)):
                known = getattr(file, fact)
                if value and known and value != known:
                    reason = f"{audio!r} has the {fact} {known!r} on line {file.given_on[fact]}, here {value!r}"
                    problems.append(ItemProblem(draft.line, draft.external_id, name, reason))
                elif value and not known:
                    setattr(file, fact, value)
                    file.given_on[fact] = draft.line
            file.uses.append((draft.line, draft.external_id, name))
    return files


def _locate(root: Path, items_dir: Path, files: dict[str, AudioFile], limits, problems: list[ItemProblem]) -> None:
    for file in files.values():
        try:
            file.path = resolve_audio_path(root, items_dir, file.audio, limits)
        except (ValueError, OSError) as error:
            problems += [ItemProblem(line, item_id, name, str(error)) for line, item_id, name in file.uses]


def _stage(staging: Path, used: list[AudioFile]) -> None:
    rows = []
    for file in used:
        if file.path is None:  # _locate found every used file, or refused it
            raise ValueError(f"{file.audio} was not located")
        staging_audio_add(staging=staging, audio=file.audio, source=file.path)
        rows.append(json.dumps(file.manifest_row()) + "\n")
    (staging / "manifest.jsonl").write_text("".join(rows), encoding="utf-8")


def _import(staging, corpus, study_name, drafts, used, problems, skip_invalid, study_settings) -> FormImportReport:
    before = set(Clip.objects.filter(corpus__name=corpus).values_list("pk", flat=True))
    stored: list[str] = []
    try:
        with transaction.atomic():
            try:
                report = corpus_import(path=staging, corpus_name=corpus, skip_invalid=skip_invalid)
            except ImportRefused as refused:
                raise ImportRefused(ITEMS_NAME, _on_item_lines(refused.problems, used)) from None
            for clip in Clip.objects.filter(corpus__name=corpus).exclude(pk__in=before):
                stored += [clip.original_audio.name, clip.model_audio.name, clip.browser_audio.name]
            problems += _on_item_lines(report.problems, used)
            drafts = _keep_good(drafts, problems, skip_invalid)
            study = listening_form_study_create(
                name=study_name, corpus=Corpus.objects.get(name=corpus), items=_specs(corpus, drafts), **study_settings
            )
    except BaseException:
        for name in stored:
            default_storage.delete(name)
        raise
    return FormImportReport(study, corpus, len(drafts), report.created, report.unchanged, problems)


def _specs(corpus: str, drafts: list[ItemDraft]) -> list[ListeningFormItemSpec]:
    ids = {AudioFile(a).clip_id for draft in drafts for a in (draft.audio, draft.audio_b) if a}
    clips = {clip.external_id: clip for clip in Clip.objects.filter(corpus__name=corpus, external_id__in=ids)}

    def clip(audio: str) -> Clip:
        return clips[AudioFile(audio).clip_id]

    return [
        ListeningFormItemSpec(
            external_id=draft.external_id,
            item_type=draft.item_type,
            clip=clip(draft.audio),
            second_clip=clip(draft.audio_b) if draft.audio_b else None,
            prompt=draft.prompt,
            options=draft.options,
            settings=draft.settings,
            gold=draft.gold,
            metadata=draft.metadata,
        )
        for draft in drafts
    ]


def _on_item_lines(corpus_problems: list[RowProblem], used: list[AudioFile]) -> list[ItemProblem]:
    """The corpus import's problems (on staged manifest lines, one per file in `used` order),
    restated on every items.jsonl line that uses the file."""

    def items_line(match: re.Match) -> str:
        number = int(match.group(1))
        return f"line {used[number - 1].uses[0][0]}" if 0 < number <= len(used) else match.group(0)

    restated = []
    for problem in corpus_problems:
        file = used[problem.line - 1] if 0 < problem.line <= len(used) else None
        reason = re.sub(r"line (\d+)", items_line, problem.reason)
        if file is None:
            restated.append(ItemProblem(problem.line, "", problem.field, reason))
            continue
        if file.audio not in reason:
            reason = f"{file.audio}: {reason}"
        restated += [ItemProblem(line, item_id, name, reason) for line, item_id, name in file.uses]
    return restated
