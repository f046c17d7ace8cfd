"""Import what benchmark systems gave: answers to listening-form items (StressTest, StanceBench),
CAST items, and CAST renditions (audio, which becomes clips of the set's renditions corpus).

Every import is atomic: the file is read and checked whole (evaluation.ingest.system_outputs),
then against the database (the items exist and have the suite's type, word indices are in range,
the system has no outputs here yet unless `replace`), and only if nothing is wrong is anything
written, in one transaction. Refusals raise ImportRefused (bad rows: file, line, item, field),
SourceRefused (the file as a whole) or OutputsRefused (the import as a whole).

Renditions' audio goes through the corpus import (annotation.services.corpus_import): their rows are
staged as a manifest.jsonl with the audio beside it, one row per distinct audio content, and its
problems are restated on the renditions.jsonl lines. Audio whose content the corpus already holds
is not imported again: the rendition points at that clip.
"""

import json
import tempfile
from collections import defaultdict
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, TypeAlias, TypedDict

from django.core.files.storage import default_storage
from django.db import IntegrityError, transaction
from django.db.models import Count

from annotation.ingest.audio import sha256_of
from annotation.ingest.errors import ImportRefused, RowProblem
from annotation.ingest.listening_form_rows import ItemProblem
from annotation.ingest.source import open_source, resolve_audio_path
from annotation.models import Clip, Corpus, ListeningFormItem, Study
from annotation.refusals import Refused
from annotation.services.corpus_import import corpus_import, limits_from_settings, staging_audio_add
from annotation.study_kinds import kinds_with
from evaluation.ingest.system_outputs import (
    CastItemDraft,
    OutputDraft,
    RenditionDraft,
    read_cast_items,
    read_outputs,
    read_renditions,
    refuse_if_any,
)
from evaluation.models import CastItem, CastRendition, CastSet, System, SystemOutput

if TYPE_CHECKING:
    from django_stubs_ext import WithAnnotations  # the type checker's only (the test extra installs it)


class _WordCount(TypedDict):
    word_count: int


CountedItem: TypeAlias = "WithAnnotations[ListeningFormItem, _WordCount]"  # with its words counted

RENDITIONS_NAME = "renditions.jsonl"
SUITES = ("stresstest", "stance", "cast")
DEFAULT_KINDS = {"stresstest": System.Kind.MODEL, "stance": System.Kind.JUDGE, "cast": System.Kind.TTS}
ITEM_TYPES = {
    "stresstest": (ListeningFormItem.Type.SINGLE_CHOICE, ListeningFormItem.Type.STRESSED_WORDS),
    "stance": (ListeningFormItem.Type.STANCE,),
}
RENDITIONS_CORPUS_SUFFIX = " renditions"


class OutputsRefused(Refused):
    """The import as a whole cannot be done (outputs already there, a wrong argument); nothing was written."""


@dataclass(frozen=True)
class SystemSpec:
    name: str
    version: str
    kind: str
    replace: bool
    metadata: dict  # merged into the system's: a key given replaces the one stored


# A system's free metadata (a checkpoint's path, a prompt, a voice's settings) is a description,
# not data: kept small so that every system list stays cheap to read.
MAX_METADATA_BYTES = 64 * 1024


# -- answers to form items (StressTest, StanceBench) ---------------------------------------------


def system_outputs_import(
    *,
    path: Path,
    suite: str,
    system_name: str,
    version: str = "",
    kind: str = "",
    study: Study | None = None,
    cast_set: CastSet | None = None,
    replace: bool = False,
    metadata: dict | None = None,
) -> dict:
    """Import one system's outputs for one suite; returns a summary of what was written.
    `metadata` (a JSON object) is merged into the system's free metadata."""
    spec = _system_spec(suite, system_name, version, kind, replace, metadata)
    _check_scope(suite, study, cast_set)
    if suite == "cast" and cast_set is not None:  # _check_scope refused a CAST import without its set
        return _renditions_import(path=Path(path), cast_set=cast_set, spec=spec)
    path = Path(path)
    drafts, problems = read_outputs(path, suite=suite)
    items = _form_items(drafts, study)
    problems += _item_problems(suite, drafts, items, study)
    refuse_if_any(path.name, problems)
    studies = {items[draft.item][0].study for draft in drafts}
    existing = SystemOutput.objects.filter(system__name=spec.name, suite=suite, form_item__study__in=studies)
    _check_system(spec, existing.exists(), where=f"answers to {_names(studies)}")
    with _one_import_at_a_time(), transaction.atomic():
        system = _system_save(spec, suite_kind=DEFAULT_KINDS[suite])
        replaced, _ = existing.delete()
        outputs = SystemOutput.objects.bulk_create(
            SystemOutput(
                system=system,
                suite=suite,
                form_item=items[draft.item][0],
                pole_order=draft.order,
                raw=draft.raw,
                line=draft.line,
            )
            for draft in drafts
        )
    return {
        "system": system.name,
        "system_id": system.pk,
        "suite": suite,
        "file": path.name,
        "studies": sorted(study.slug for study in studies),
        "outputs": len(outputs),
        "items": len({draft.item for draft in drafts}),
        "replaced": replaced,
    }


def _system_spec(suite: str, name: str, version: str, kind: str, replace: bool, metadata) -> SystemSpec:
    if suite not in SUITES:
        raise OutputsRefused(f"unknown suite {suite!r}; expected one of {', '.join(SUITES)}")
    name, version = (name or "").strip(), (version or "").strip()
    if not name or len(name) > 200:
        raise OutputsRefused("the system name must be non-empty text of at most 200 characters")
    if len(version) > 100:
        raise OutputsRefused("the system version is longer than 100 characters")
    if kind and kind not in System.Kind.values:
        raise OutputsRefused(f"unknown system kind {kind!r}; expected one of {', '.join(System.Kind.values)}")
    return SystemSpec(name, version, kind or "", replace, _checked_metadata(metadata))


def _checked_metadata(metadata) -> dict:
    if metadata is None:
        return {}
    if not isinstance(metadata, dict):
        raise OutputsRefused(f"the system metadata must be a JSON object, not {type(metadata).__name__}")
    try:
        size = len(json.dumps(metadata, ensure_ascii=False).encode())
    except (TypeError, ValueError, RecursionError) as error:
        raise OutputsRefused(f"the system metadata is not JSON: {error}") from None
    if size > MAX_METADATA_BYTES:
        raise OutputsRefused(f"the system metadata is {size} bytes as JSON; the limit is {MAX_METADATA_BYTES}")
    return metadata


def metadata_argument(text: str) -> dict:
    """The metadata given as JSON text (the command's --metadata, the API's form field)."""
    try:
        value = json.loads(text)
    except (ValueError, RecursionError) as error:  # RecursionError: nested too deep to parse
        reason = error if isinstance(error, ValueError) else "nested too deeply"
        raise OutputsRefused(f"the system metadata is not valid JSON: {reason}") from None
    return _checked_metadata(value)


def _check_scope(suite: str, study: Study | None, cast_set: CastSet | None) -> None:
    if suite == "cast":
        if cast_set is None:
            raise OutputsRefused("CAST renditions need the CAST set they render (--set)")
        if study is not None:
            raise OutputsRefused("CAST renditions belong to a CAST set, not to a study; leave out --study")
        return
    if cast_set is not None:
        raise OutputsRefused(f"{suite} outputs answer items of a listening-form study, not of a CAST set")
    if study is not None and not study.capabilities.answers_are_choices:
        raise OutputsRefused(f"study {study.slug!r} is not a listening-form study; outputs answer form items")


def _form_items(drafts: list[OutputDraft], study: Study | None) -> dict[str, list[CountedItem]]:
    """The form items of the drafts' ids (in `study`, else in any form study), with their word counts."""
    items = ListeningFormItem.objects.filter(external_id__in={draft.item for draft in drafts})
    items = items.filter(study=study) if study else items.filter(study__kind__in=kinds_with("answers_are_choices"))
    found: defaultdict[str, list[CountedItem]] = defaultdict(list)
    for item in items.select_related("study").annotate(word_count=Count("clip__words")).order_by("study__slug"):
        found[item.external_id].append(item)
    return dict(found)


def _item_problems(suite, drafts: list[OutputDraft], items: dict[str, list[CountedItem]], study) -> list[ItemProblem]:
    problems = []
    for draft in drafts:
        matches = items.get(draft.item, [])
        reason = _unusable(suite, draft, matches, study)
        if reason:
            problems.append(ItemProblem(draft.line, draft.item, reason[0], reason[1]))
    return problems


def _unusable(suite: str, draft: OutputDraft, matches: list[CountedItem], study) -> tuple[str, str] | None:
    """(field, reason) when the row cannot answer the item it names, else None."""
    if not matches:
        where = f"study {study.slug!r} has no item" if study else "no listening-form item has"
        return "item", f"unknown item {draft.item!r}: {where} this id"
    if len(matches) > 1:
        return "item", f"item {draft.item!r} is in several studies ({_names(m.study for m in matches)}); give --study"
    item = matches[0]
    if item.item_type not in ITEM_TYPES[suite]:
        wanted = " or ".join(ITEM_TYPES[suite])
        return "item", f"item {draft.item!r} is a {item.item_type} item; {suite} answers {wanted} items"
    if draft.field == "stressed":
        return _stressed_problem(draft, item)
    return None


def _stressed_problem(draft: OutputDraft, item: CountedItem) -> tuple[str, str] | None:
    if item.item_type != ListeningFormItem.Type.STRESSED_WORDS:
        return "stressed", f'item {draft.item!r} is {item.item_type}, not stressed_words (SSD); give "answer"'
    words = len(item.gold) if isinstance(item.gold, list) else item.word_count
    indices = draft.raw if isinstance(draft.raw, list) else []  # the reader made a "stressed" raw a list
    outside = [index for index in indices if index >= words]
    if outside:
        return "stressed", f"word indices {outside} are out of range: the item has {words} words, 0 to {words - 1}"
    return None


def _names(studies) -> str:
    return ", ".join(sorted({f"study {study.slug!r}" for study in studies}))


# -- the system ----------------------------------------------------------------------------------


def _check_system(spec: SystemSpec, has_outputs: bool, *, where: str) -> None:
    """Refuse before anything is written: outputs already there (without replace), another kind or version."""
    system = System.objects.filter(name=spec.name).first()
    if system is None:
        return
    if has_outputs and not spec.replace:
        raise OutputsRefused(
            f"system {spec.name!r} already has {where}; nothing was imported. Give --replace "
            "(replace=true in the API) to replace them with this file's."
        )
    if spec.kind and spec.kind != system.kind:
        raise OutputsRefused(f"system {spec.name!r} is a {system.kind} system, not {spec.kind}")
    if spec.version and spec.version != system.version and not spec.replace:
        raise OutputsRefused(
            f"system {spec.name!r} is version {system.version or '(none)'!r}, not {spec.version!r}: "
            "import a new version under its own name, or give --replace to change it"
        )


def _system_save(spec: SystemSpec, *, suite_kind: str = "") -> System:
    system, created = System.objects.get_or_create(
        name=spec.name, defaults={"version": spec.version, "kind": spec.kind or suite_kind, "metadata": spec.metadata}
    )
    changed = []
    if not created and spec.version and spec.version != system.version:
        system.version = spec.version  # with replace only (_check_system)
        changed.append("version")
    if not created and spec.metadata:
        system.metadata = {**system.metadata, **spec.metadata}
        changed.append("metadata")
    if changed:
        system.save(update_fields=changed)
    return system


# -- CAST items ----------------------------------------------------------------------------------

ITEM_FACTS = ("sentence", "words", "context_a", "context_b", "word_a", "word_b", "metadata")


@contextmanager
def _one_import_at_a_time():
    """Two imports of the same system or items at once: the checks above passed for both, and the
    database's unique constraints stop the second, which is refused with a word rather than a 500."""
    try:
        yield
    except IntegrityError:
        raise OutputsRefused(
            "another import of the same system or items ran at the same time; "
            "nothing of this one was written: try again"
        ) from None


def cast_items_import(*, path: Path, set_name: str) -> dict:
    """Add CAST items to a set (made if new); an item already there must be unchanged."""
    path, set_name = Path(path), (set_name or "").strip()
    if not set_name or len(set_name) > 200:
        raise OutputsRefused("the CAST set name must be non-empty text of at most 200 characters")
    drafts, problems = read_cast_items(path)
    existing = {item.external_id: item for item in CastItem.objects.filter(cast_set__name=set_name)}
    new = []
    for draft in drafts:
        item = existing.get(draft.external_id)
        differences = [fact for fact in ITEM_FACTS if item and getattr(item, fact) != getattr(draft, fact)]
        if differences:
            reason = f"already in set {set_name!r} with a different {', '.join(differences)}; not overwritten"
            problems.append(ItemProblem(draft.line, draft.external_id, differences[0], reason))
        elif item is None:
            new.append(draft)
    refuse_if_any(path.name, problems)
    with _one_import_at_a_time(), transaction.atomic():
        cast_set, _ = CastSet.objects.get_or_create(name=set_name)
        CastItem.objects.bulk_create(_cast_item(cast_set, draft) for draft in new)
    return {
        "set": cast_set.name,
        "set_id": cast_set.pk,
        "file": path.name,
        "created": len(new),
        "unchanged": len(drafts) - len(new),
        "items": cast_set.items.count(),
    }


def _cast_item(cast_set: CastSet, draft: CastItemDraft) -> CastItem:
    return CastItem(
        cast_set=cast_set, external_id=draft.external_id, **{fact: getattr(draft, fact) for fact in ITEM_FACTS}
    )


# -- CAST renditions -----------------------------------------------------------------------------


@dataclass
class RenditionAudio:
    """One audio file named by renditions.jsonl: a clip of the renditions corpus."""

    audio: str  # as renditions.jsonl gives it
    item: CastItem
    uses: list[RenditionDraft] = field(default_factory=list)
    path: Path | None = None
    checksum: str = ""

    def problem(self, field_name: str, reason: str) -> list[ItemProblem]:
        return [ItemProblem(use.line, use.item, field_name, reason) for use in self.uses]


def _renditions_import(*, path: Path, cast_set: CastSet, spec: SystemSpec) -> dict:
    limits = limits_from_settings()
    with open_source(path, limits, names=(RENDITIONS_NAME,)) as source:
        drafts, problems = read_renditions(source.manifest)
        items = {item.external_id: item for item in cast_set.items.all()}
        files = _rendition_files(drafts, items, cast_set, problems)
        for file in files.values():
            try:
                file.path = resolve_audio_path(source.root, source.manifest.parent, file.audio, limits)
                file.checksum = sha256_of(file.path)
            except (ValueError, OSError) as error:
                problems += file.problem("audio", str(error))
        refuse_if_any(RENDITIONS_NAME, problems)
        existing = CastRendition.objects.filter(system__name=spec.name, item__cast_set=cast_set)
        _check_system(spec, existing.exists(), where=f"renditions of CAST set {cast_set.name!r}")
        corpus_name = _renditions_corpus_name(cast_set)
        reused, new = _split_by_content(corpus_name, list(files.values()))
        with tempfile.TemporaryDirectory(prefix="cast-renditions-") as staging:
            _stage(Path(staging), new, spec.name, cast_set)
            summary = _renditions_write(Path(staging), cast_set, spec, drafts, files, new, corpus_name)
    return {**summary, "clips_reused": len(reused)}


def _rendition_files(drafts, items, cast_set, problems) -> dict[str, RenditionAudio]:
    """The distinct audio files; rows naming unknown items are problems, and so is one file
    given as the rendition of two items (it can say only one sentence)."""
    files: dict[str, RenditionAudio] = {}
    for draft in drafts:
        item = items.get(draft.item)
        if item is None:
            reason = f"unknown item {draft.item!r}: CAST set {cast_set.name!r} has no item with this id"
            problems.append(ItemProblem(draft.line, draft.item, "item", reason))
            continue
        file = files.setdefault(draft.audio, RenditionAudio(draft.audio, item))
        if file.item != item:
            reason = f"{draft.audio!r} is item {file.item.external_id!r}'s rendition on line {file.uses[0].line}"
            problems.append(ItemProblem(draft.line, draft.item, "audio", reason))
            continue
        if draft.word_times is not None and len(draft.word_times) != len(item.words):
            reason = f"{len(draft.word_times)} [start, end] pairs for the {len(item.words)} words of item {item.external_id!r}"
            problems.append(ItemProblem(draft.line, draft.item, "word_times", reason))
            continue
        file.uses.append(draft)
    return files


def _renditions_corpus_name(cast_set: CastSet) -> str:
    if cast_set.corpus is not None:
        return cast_set.corpus.name
    name = cast_set.name[: 200 - len(RENDITIONS_CORPUS_SUFFIX)] + RENDITIONS_CORPUS_SUFFIX
    if Corpus.objects.filter(name=name).exists():
        raise OutputsRefused(
            f"a corpus named {name!r} already exists and is not CAST set {cast_set.name!r}'s; rename that corpus first"
        )
    return name


def _split_by_content(corpus_name: str, files: list[RenditionAudio]) -> tuple[list, list[RenditionAudio]]:
    """(files whose content the corpus holds already, files to import: one per distinct content).
    A file with the content of another one becomes the same clip, which must say the same sentence."""
    known = dict(Clip.objects.filter(corpus__name=corpus_name).values_list("checksum", "transcript"))
    reused, new, problems = [], [], []
    first: dict[str, RenditionAudio] = {}  # checksum -> the first file with that content
    for file in files:
        twin = first.setdefault(file.checksum, file)
        sentence = known.get(file.checksum, twin.item.sentence)
        if sentence != file.item.sentence:
            problems += file.problem("audio", f"same audio as a rendition of another sentence ({sentence!r})")
        elif file.checksum in known:
            reused.append(file)
        elif twin is file:
            new.append(file)
    refuse_if_any(RENDITIONS_NAME, problems)
    return reused, new


def _clip_id(system_name: str, file: RenditionAudio) -> str:
    # The content's hash in the id: new audio for a rendition (after --replace) is a new clip, and
    # the old one stays for whatever else uses it (a listening study of the renditions).
    use = file.uses[0]
    return f"{system_name}/{use.item}-{use.side}-{use.mode}"[:186] + f"-{file.checksum[:12]}"


def _stage(staging: Path, new: list[RenditionAudio], system_name: str, cast_set: CastSet) -> None:
    """A corpus folder: manifest.jsonl (line n is new[n - 1]) and the audio files."""
    rows = []
    for file in new:
        if file.path is None:  # _locate found every file it kept
            raise ValueError(f"{file.audio} was not located")
        staging_audio_add(staging=staging, audio=file.audio, source=file.path)
        use = file.uses[0]
        row = {
            "id": _clip_id(system_name, file),
            "audio": file.audio,
            "transcript": file.item.sentence,
            "words": _timed_words(file.item.words, use.word_times),
            "speaker": system_name,
            "cast_set": cast_set.name,
            "cast_item": file.item.external_id,
            "side": use.side,
            "mode": use.mode,
        }
        rows.append(json.dumps(row) + "\n")
    (staging / "manifest.jsonl").write_text("".join(rows), encoding="utf-8")


def _timed_words(words: list[str], times) -> list:
    """The manifest's words: texts, with the rendition's [start, end] when it gave them."""
    if times is None:
        return words
    return [{"text": word, "start": start, "end": end} for word, (start, end) in zip(words, times, strict=True)]


def _renditions_write(staging, cast_set, spec, drafts, files, new, corpus_name) -> dict:
    stored: list[str] = []
    try:
        with _one_import_at_a_time(), transaction.atomic():
            system = _system_save(spec, suite_kind=DEFAULT_KINDS["cast"])
            _, deleted = CastRendition.objects.filter(system=system, item__cast_set=cast_set).delete()
            replaced = deleted.get(CastRendition._meta.label, 0)  # not counting their detections
            corpus, _ = Corpus.objects.get_or_create(name=corpus_name)
            if cast_set.corpus_id is None:
                cast_set.corpus = corpus
                cast_set.save(update_fields=["corpus"])
            before = set(corpus.clips.values_list("pk", flat=True))
            _corpus_import_restated(staging, corpus_name, new)
            for clip in corpus.clips.exclude(pk__in=before):
                stored += [clip.original_audio.name, clip.model_audio.name, clip.browser_audio.name]
            clips = {
                clip.checksum: clip for clip in corpus.clips.filter(checksum__in={f.checksum for f in files.values()})
            }
            renditions = CastRendition.objects.bulk_create(
                CastRendition(
                    item=files[d.audio].item,
                    system=system,
                    side=d.side,
                    mode=d.mode,
                    clip=clips[files[d.audio].checksum],
                    line=d.line,
                )
                for d in drafts
            )
    except BaseException:
        for name in stored:
            default_storage.delete(name)
        raise
    return {
        "system": system.name,
        "system_id": system.pk,
        "suite": "cast",
        "set": cast_set.name,
        "set_id": cast_set.pk,
        "file": RENDITIONS_NAME,
        "corpus": corpus_name,
        "renditions": len(renditions),
        "replaced": replaced,
        "clips_created": len(new),
    }


def _corpus_import_restated(staging: Path, corpus_name: str, new: list[RenditionAudio]) -> None:
    """corpus_import the staged folder; its problems (staged manifest lines) restated on renditions.jsonl lines."""
    if not new:
        return
    try:
        corpus_import(path=staging, corpus_name=corpus_name)
    except ImportRefused as refused:
        raise ImportRefused(RENDITIONS_NAME, _on_rendition_lines(refused.problems, new)) from None


def _on_rendition_lines(problems: list[RowProblem], new: list[RenditionAudio]) -> list[ItemProblem]:
    restated = []
    for problem in problems:
        if 0 < problem.line <= len(new):
            file = new[problem.line - 1]
            reason = problem.reason if file.audio in problem.reason else f"{file.audio}: {problem.reason}"
            restated += file.problem(problem.field or "audio", reason)
        else:
            restated.append(ItemProblem(problem.line, "", problem.field, problem.reason))
    return sorted(restated, key=lambda problem: problem.line)
