"""corpus_import: take a corpus folder or .zip into the database, atomically.

Phases: read the manifest; locate and hash every audio file; compare with
what the corpus already holds (same id and content: unchanged; same id and
other content: reported, never overwritten); decode, check and convert the new
clips, storing each clip's files as soon as it is converted; then, only if no
row is bad (or --skip-invalid), write every row in one transaction. A refusal
or failure deletes the files stored: nothing is left of a refused import.

Each clip's converted copies are stored and removed from the temporary folder
as they are made, so the temporary disk an import takes is its source (an
upload's extraction) and the clips being converted at that moment, not a
second copy of the corpus (annotation/uploads.py states the bound).
"""

import os
import re
import shutil
import tempfile
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from django.conf import settings
from django.core.files import File
from django.core.files.storage import default_storage
from django.db import transaction

from annotation.ingest.audio import AudioRefused, ProcessedAudio, process_audio, sha256_of
from annotation.ingest.errors import ImportRefused, RowProblem
from annotation.ingest.manifest import ManifestRow, read_manifest
from annotation.ingest.source import Limits, open_source, resolve_audio_path
from annotation.ingest.words import check_times_within
from annotation.models import Clip, ClipWarning, Corpus, Speaker, Word

Progress = Callable[[str, int, int], None]
_BATCH = 500


@dataclass
class LocatedRow:
    row: ManifestRow
    path: Path
    checksum: str


@dataclass
class StagedClip:
    row: ManifestRow
    path: Path
    checksum: str
    audio: ProcessedAudio
    stored: dict[str, str]  # model field -> storage name of its file


@dataclass
class ImportReport:
    corpus: str
    manifest: str
    rows: int
    created: int
    unchanged: int
    clips_with_warnings: int
    problems: list[RowProblem] = field(default_factory=list)

    def as_dict(self) -> dict:
        return {
            "corpus": self.corpus,
            "manifest": self.manifest,
            "rows": self.rows,
            "created": self.created,
            "unchanged": self.unchanged,
            "clips_with_warnings": self.clips_with_warnings,
            "problems": [problem.as_dict() for problem in self.problems],
        }


def staging_audio_add(*, staging: Path, audio: str, source: Path) -> None:
    """Put an audio file into a corpus folder being staged for corpus_import, at `audio` (its
    manifest path): a hard link where the folder is on the same disk, else a copy."""
    target = staging.joinpath(*PurePosixPath(audio).parts)
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.link(source, target)
    except OSError:
        shutil.copyfile(source, target)


def limits_from_settings() -> Limits:
    return Limits(
        max_archive_bytes=settings.IMPORT_MAX_ARCHIVE_BYTES,
        max_file_bytes=settings.IMPORT_MAX_FILE_BYTES,
        max_files=settings.IMPORT_MAX_FILES,
        max_clip_seconds=settings.IMPORT_MAX_CLIP_SECONDS,
    )


def _no_progress(phase: str, done: int, total: int) -> None:
    return None


def corpus_import(
    *,
    path: Path,
    corpus_name: str | None = None,
    skip_invalid: bool = False,
    progress: Progress = _no_progress,
    workers: int | None = None,
) -> ImportReport:
    limits = limits_from_settings()
    with open_source(Path(path), limits) as source:
        manifest = read_manifest(source.manifest)
        name = corpus_name or _default_corpus_name(source.display_name)
        problems = list(manifest.problems)
        located = _locate(source.root, source.manifest.parent, manifest.rows, limits, problems, progress)
        new, unchanged = _classify(name, located, problems)
        saved: list[str] = []
        try:
            with tempfile.TemporaryDirectory(prefix="corpus-staging-") as staging:
                staged = _process(
                    new, Path(staging), limits, workers or settings.IMPORT_WORKERS, problems, progress, saved
                )
            problems.sort(key=lambda problem: problem.line)
            if problems and not skip_invalid:
                raise ImportRefused(source.manifest.name, problems)
            with transaction.atomic():
                _write_rows(name, staged)
        except BaseException:
            _delete_stored(saved)
            raise
    return ImportReport(
        corpus=name,
        manifest=source.manifest.name,
        rows=manifest.row_count,
        created=len(staged),
        unchanged=unchanged,
        clips_with_warnings=sum(1 for item in staged if item.audio.warnings),
        problems=problems,
    )


def _default_corpus_name(display_name: str) -> str:
    return Path(display_name).stem or "corpus"


def _locate(root, manifest_dir, rows, limits, problems, progress) -> list[LocatedRow]:
    located = []
    for done, row in enumerate(rows, start=1):
        try:
            path = resolve_audio_path(root, manifest_dir, row.audio, limits)
            located.append(LocatedRow(row, path, sha256_of(path)))
        except (ValueError, OSError) as error:
            problems.append(row.problem("audio", str(error)))
        progress("reading files", done, len(rows))
    return located


def _classify(corpus_name: str, located: list[LocatedRow], problems: list[RowProblem]):
    """Split rows into new ones and ones already imported unchanged."""
    existing = {clip.external_id: clip for clip in _existing_clips(corpus_name)}
    by_checksum = {clip.checksum: clip.external_id for clip in existing.values()}
    new, unchanged = [], 0
    seen_checksums: dict[str, LocatedRow] = {}
    for item in located:
        row = item.row
        clip = existing.get(row.clip_id)
        if clip is not None:
            differences = _differences(clip, item)
            if differences:
                problems.append(
                    row.problem(
                        differences[0],
                        f"clip already imported with a different {', '.join(differences)}; not overwritten",
                    )
                )
            else:
                unchanged += 1
            continue
        twin = by_checksum.get(item.checksum)
        if twin is not None:
            problems.append(row.problem("audio", f"same audio as clip {twin!r}, already imported"))
            continue
        first = seen_checksums.setdefault(item.checksum, item)
        if first is not item:
            problems.append(row.problem("audio", f"same audio as line {first.row.line} (clip {first.row.clip_id!r})"))
            continue
        new.append(item)
    return new, unchanged


def _existing_clips(corpus_name: str):
    return Clip.objects.filter(corpus__name=corpus_name).select_related("speaker").prefetch_related("words")


def _differences(clip: Clip, item: LocatedRow) -> list[str]:
    row = item.row
    stored_words = [(word.text, word.start, word.end) for word in clip.words.all()]
    given_words = [(word.text, word.start, word.end) for word in row.words]
    checks = {
        "audio": clip.checksum == item.checksum,
        "transcript": clip.transcript == row.transcript,
        "words": stored_words == given_words,
        "language": clip.language == row.language,
        "variety": clip.variety == row.variety,
        "emotion": clip.emotion == row.emotion,
        "speaker": (clip.speaker.name if clip.speaker else "") == row.speaker,
        "tags": clip.tags == row.tags,
        "metadata": clip.metadata == row.metadata,
    }
    return [name for name, same in checks.items() if not same]


def _process(new, staging, limits, workers, problems, progress, saved: list[str]) -> list[StagedClip]:
    def work(item: LocatedRow) -> StagedClip | RowProblem:
        return _process_one(item, staging / str(item.row.line), limits, saved)

    staged = []
    with ThreadPoolExecutor(max_workers=workers) as pool:
        for done, outcome in enumerate(pool.map(work, new), start=1):
            if isinstance(outcome, RowProblem):
                problems.append(outcome)
            else:
                staged.append(outcome)
            progress("decoding audio", done, len(new))
    return staged


def _process_one(item: LocatedRow, staging: Path, limits: Limits, saved: list[str]) -> StagedClip | RowProblem:
    row = item.row
    # a word has both times or neither (annotation.ingest.words)
    word_times = [(word.start, word.end) for word in row.words if word.start is not None and word.end is not None]
    try:
        try:
            audio = process_audio(item.path, staging, max_seconds=limits.max_clip_seconds, word_times=word_times)
        except AudioRefused as error:
            return row.problem("audio", f"{row.audio}: {error}")
        reason = check_times_within(row.words, audio.duration)
        if reason:
            return row.problem("words", reason)
        return StagedClip(row, item.path, item.checksum, audio, _store_files(item.path, audio, saved))
    finally:
        shutil.rmtree(staging, ignore_errors=True)  # the converted copies are stored, or not wanted


def _store_files(original: Path, audio: ProcessedAudio, saved: list[str]) -> dict[str, str]:
    # Random folder names: media paths must never be guessable or enumerable.
    folder = f"audio/{uuid.uuid4().hex}"
    names = {}
    for field_name, source, target in (
        ("original_audio", original, f"{folder}/original{_safe_suffix(original)}"),
        ("model_audio", audio.model_wav, f"{folder}/model.wav"),
        ("browser_audio", audio.browser_mp3, f"{folder}/browser.mp3"),
    ):
        with open(source, "rb") as handle:
            names[field_name] = default_storage.save(target, File(handle))
        saved.append(names[field_name])  # list.append is atomic: the pool's threads share the list
    return names


def _delete_stored(names: list[str]) -> None:
    for name in names:
        default_storage.delete(name)


def _safe_suffix(path: Path) -> str:
    suffix = path.suffix.lower()
    return suffix if re.fullmatch(r"\.[a-z0-9]{1,5}", suffix) else ".audio"


def _write_rows(corpus_name: str, staged: list[StagedClip]) -> None:
    corpus, _ = Corpus.objects.get_or_create(name=corpus_name)
    speakers = _speakers(corpus, {item.row.speaker for item in staged if item.row.speaker})
    clips = Clip.objects.bulk_create([_clip(corpus, speakers, item, item.stored) for item in staged], batch_size=_BATCH)
    words, warnings = [], []
    for clip, item in zip(clips, staged):
        words += [
            Word(clip=clip, index=index, text=word.text, start=word.start, end=word.end)
            for index, word in enumerate(item.row.words)
        ]
        warnings += [ClipWarning(clip=clip, code=w.code, detail=w.detail[:300]) for w in item.audio.warnings]
    Word.objects.bulk_create(words, batch_size=_BATCH)
    ClipWarning.objects.bulk_create(warnings, batch_size=_BATCH)


def _speakers(corpus: Corpus, names: set[str]) -> dict[str, Speaker]:
    existing = {speaker.name: speaker for speaker in corpus.speakers.filter(name__in=names)}
    missing = [Speaker(corpus=corpus, name=name) for name in sorted(names - existing.keys())]
    for speaker in Speaker.objects.bulk_create(missing):
        existing[speaker.name] = speaker
    return existing


def _clip(corpus: Corpus, speakers: dict[str, Speaker], item: StagedClip, names: dict) -> Clip:
    row, audio = item.row, item.audio
    return Clip(
        corpus=corpus,
        external_id=row.clip_id,
        speaker=speakers.get(row.speaker),
        transcript=row.transcript,
        language=row.language,
        variety=row.variety,
        emotion=row.emotion,
        source_path=row.audio,
        duration=audio.duration,
        sample_rate=audio.sample_rate,
        channels=audio.channels,
        checksum=item.checksum,
        tags=row.tags,
        metadata=row.metadata,
        **names,
    )
