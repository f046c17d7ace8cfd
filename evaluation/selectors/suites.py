"""What a benchmark suite is scored from, read from the database into the inputs of
evaluation.stats.suites: the humans' answers and the systems' outputs for the same items.

- StressTest: a listening-form study's single-choice (SSR) and stressed-words (SSD) items, the
  humans' answers as the form's report reads them, and each system's imported answer per item.
  An item a system has no answer for is scored as a failure of that system, not left out, so
  that every system is scored on the same items as the humans.
- StanceBench: the study's stance items, each with its weak label (item metadata "weak_label")
  and dimension; per judge, its raw answer under each pole order; the humans' consensus score.
- CAST: a CAST set's items; per TTS system and conditioning mode, the stressed words of each
  rendition according to each source: a detector (RenditionDetection) or the listeners of an
  emphasis study over the set's renditions corpus (binary label: more than half marked the word).

`suite_fingerprint` changes whenever any of these inputs changes, so a stored report is reused
until then.
"""

import hashlib
import json
from collections import defaultdict

from django.db.models import Count, Max

from annotation.models import ListeningFormItem, Study, Word
from annotation.selectors.study_data import annotations_fingerprint, study_data, study_thresholds
from annotation.study_kinds import kinds_with
from evaluation.models import CastRendition, CastSet, RenditionDetection, System, SystemOutput
from evaluation.selectors.listening_form_reports import (
    listening_form_answers_fingerprint,
    listening_form_scoring_inputs,
)
from evaluation.stats.label_sets import labelled_clips
from evaluation.stats.selection import select_annotations
from evaluation.stats.suites.cast import CastPair
from evaluation.stats.suites.stance import JudgeInstance
from evaluation.stats.suites.stresstest import SystemChoiceItem, SystemMarkedItem

Kind = ListeningFormItem.Type
HUMANS_PREFIX = "listeners: "  # the source name of an emphasis study's binary labels


def system_summary(system: System) -> dict:
    return {"name": system.name, "version": system.version, "kind": system.kind, "metadata": system.metadata}


def _outputs(study: Study, suite: str) -> dict[int, dict[int, dict[str, object]]]:
    """{system pk: {form item pk: {pole order ("" outside stance): raw answer}}}."""
    rows = SystemOutput.objects.filter(form_item__study=study, suite=suite).values_list(
        "system_id", "form_item_id", "pole_order", "raw"
    )
    outputs: dict = defaultdict(lambda: defaultdict(dict))
    for system_id, item_id, order, raw in rows:
        outputs[system_id][item_id][order] = raw
    return outputs


def _systems(ids) -> list[System]:
    return list(System.objects.filter(pk__in=list(ids)).order_by("name"))


def _scored_items(study: Study, item_type: str) -> list[ListeningFormItem]:
    items = ListeningFormItem.objects.filter(study=study, item_type=item_type).select_related("clip").order_by("pk")
    return [item for item in items if not item.is_attention_check]


def _clip_words(clip_ids) -> dict[int, tuple[str, ...]]:
    words = defaultdict(list)
    for clip_id, text in (
        Word.objects.filter(clip_id__in=list(clip_ids)).order_by("index").values_list("clip_id", "text")
    ):
        words[clip_id].append(text)
    return {clip_id: tuple(texts) for clip_id, texts in words.items()}


def stresstest_inputs(*, study: Study) -> dict:
    """{"humans": {"ssr": [ChoiceItem], "ssd": [MarkedItem]}, "systems": [(System, {"ssr": [...] or
    None, "ssd": [...] or None})]}: a system that answered any SSR (SSD) item is scored on every
    one, an item it left out counting as a failure; one that answered none (a detector has no SSR
    answers) is not scored on that task at all."""
    human = listening_form_scoring_inputs(study=study)
    choice_items = _scored_items(study, Kind.SINGLE_CHOICE)
    marked_items = [item for item in _scored_items(study, Kind.STRESSED_WORDS) if item.gold]
    words = _clip_words(item.clip_id for item in marked_items)
    outputs = _outputs(study, "stresstest")
    systems = []
    for system in _systems(outputs):
        answers = outputs[system.pk]
        ssr = [
            SystemChoiceItem(
                item.external_id,
                item.gold if isinstance(item.gold, int) else None,
                tuple(item.options),
                answers.get(item.pk, {}).get(""),
                item.metadata,
            )
            for item in choice_items
        ]
        ssd = [
            SystemMarkedItem(
                item.external_id,
                tuple(int(v) for v in item.gold or ()),  # marked_items all have a gold
                words.get(item.clip_id, ()),
                answers.get(item.pk, {}).get(""),
            )
            for item in marked_items
        ]
        answered = set(answers)
        systems.append(
            (
                system,
                {
                    "ssr": ssr if answered & {item.pk for item in choice_items} else None,
                    "ssd": ssd if answered & {item.pk for item in marked_items} else None,
                },
            )
        )
    marked_with_gold = [item for item in human[Kind.STRESSED_WORDS] if item.gold]
    return {"humans": {"ssr": human[Kind.SINGLE_CHOICE], "ssd": marked_with_gold}, "systems": systems}


def stance_inputs(*, study: Study) -> dict:
    """{"humans": [StanceItem], "judges": [(System, [JudgeInstance])], "weak_labels": {item: "P"/"N"}}."""
    human = listening_form_scoring_inputs(study=study)[Kind.STANCE]
    items = _scored_items(study, Kind.STANCE)
    outputs = _outputs(study, "stance")
    judges = []
    for system in _systems(outputs):
        answers = outputs[system.pk]
        instances = [
            JudgeInstance(item.external_id, _dimension(item), _weak_label(item), dict(answers.get(item.pk, {})))
            for item in items
        ]
        judges.append((system, instances))
    weak_labels = {item.external_id: _weak_label(item) for item in items if _weak_label(item)}
    return {"humans": human, "judges": judges, "weak_labels": weak_labels}


def _dimension(item: ListeningFormItem) -> str:
    # The same name the listening-form report gives the item's dimension.
    settings = item.settings
    return settings.get("dimension") or f"{settings.get('positive', 'P')} / {settings.get('negative', 'N')}"


def _weak_label(item: ListeningFormItem) -> str | None:
    label = item.metadata.get("weak_label")
    return label if label in ("P", "N") else None


def cast_inputs(*, cast_set: CastSet) -> dict:
    """{"items": n, "renditions": n, "sources": [source name], "groups": [{"system", "mode", "source",
    "pairs": [CastPair]}], "labels": {source: {"item/side/mode/system": 0/1 per word}}}."""
    items = list(cast_set.items.order_by("external_id"))
    renditions = list(
        CastRendition.objects.filter(item__cast_set=cast_set).select_related("system", "clip", "item").order_by("pk")
    )
    labels = {**_detector_labels(renditions), **_listener_labels(cast_set, renditions)}
    keys = {r.pk: f"{r.item.external_id}/{r.side}/{r.mode}/{r.system.name}" for r in renditions}
    by_key = {(r.system_id, r.mode, r.item_id, r.side): r for r in renditions}
    systems = {r.system_id: r.system for r in renditions}
    groups = []
    for system_id, mode in sorted(
        {(r.system_id, r.mode) for r in renditions}, key=lambda k: (systems[k[0]].name, k[1])
    ):
        for source, stressed in labels.items():
            pairs = [
                CastPair(
                    item.external_id,
                    item.word_a,
                    item.word_b,
                    _stressed(stressed, by_key.get((system_id, mode, item.pk, "A"))),
                    _stressed(stressed, by_key.get((system_id, mode, item.pk, "B"))),
                )
                for item in items
            ]
            groups.append(
                {"system": system_summary(systems[system_id]), "mode": mode, "source": source, "pairs": pairs}
            )
    by_rendition_key = {
        source: {keys[pk]: words for pk, words in stressed.items()} for source, stressed in labels.items()
    }
    return {
        "items": len(items),
        "renditions": len(renditions),
        "sources": list(labels),
        "groups": groups,
        "labels": by_rendition_key,
    }


def _stressed(labels: dict[int, tuple[int, ...]], rendition) -> frozenset | None:
    """The indices of the words a source found stressed; None when the rendition or its labels are missing."""
    if rendition is None or rendition.pk not in labels:
        return None
    return frozenset(index for index, value in enumerate(labels[rendition.pk]) if value)


def _detector_labels(renditions) -> dict[str, dict[int, tuple[int, ...]]]:
    """{"detector: <name>": {rendition pk: 0/1 per word}}."""
    words = {r.pk: len(r.item.words) for r in renditions}  # a rendition's clip has its item's words
    labels: dict = defaultdict(dict)
    detections = RenditionDetection.objects.filter(rendition__in=[r.pk for r in renditions]).select_related("detector")
    for detection in detections.order_by("detector__name", "rendition_id"):
        stressed = set(detection.stressed)
        labels[f"detector: {detection.detector.name}"][detection.rendition_id] = tuple(
            int(index in stressed) for index in range(words[detection.rendition_id])
        )
    return dict(labels)


def listener_studies(cast_set: CastSet) -> list[Study]:
    """The emphasis studies run over the set's renditions."""
    if cast_set.corpus_id is None:
        return []
    return list(
        Study.objects.filter(corpus_id=cast_set.corpus_id, kind__in=kinds_with("answers_are_word_marks")).order_by(
            "name"
        )
    )


def _listener_labels(cast_set: CastSet, renditions) -> dict[str, dict[int, tuple[int, ...]]]:
    """{"listeners: <study>": {rendition pk: binary label per word}}: every annotation the study's
    report would count (rejected participants and clips excluded in review left out), no subsample."""
    # One clip may be several renditions (both sides of mode "none" from one file, or byte-identical
    # audio from two systems): its listeners' labels are each one's.
    renditions_of_clip = defaultdict(list)
    for rendition in renditions:
        renditions_of_clip[rendition.clip.external_id].append(rendition.pk)
    labels = {}
    for study in listener_studies(cast_set):
        data = study_data(study=study)
        selection = select_annotations(
            data, thresholds=study_thresholds(study=study), exclude_flagged=False, n=None, seed=0
        )
        labels[HUMANS_PREFIX + study.name] = {
            rendition: tuple(int(v) for v in clip.labels.binary)
            for clip in labelled_clips(data, selection.kept)
            for rendition in renditions_of_clip.get(clip.key, ())
        }
    return labels


def suite_fingerprint(*, suite: str, study: Study | None = None, cast_set: CastSet | None = None) -> str:
    """Changes whenever what the suite's report reads changes."""
    if suite == "cast":
        if cast_set is None:
            raise ValueError("the CAST suite's fingerprint needs its cast set")
        return _cast_fingerprint(cast_set)
    if study is None:
        raise ValueError(f"the {suite} suite's fingerprint needs its study")
    outputs = SystemOutput.objects.filter(form_item__study=study, suite=suite)
    summary = outputs.aggregate(count=Count("pk"), last_id=Max("pk"))
    systems = System.objects.filter(pk__in=outputs.values("system_id")).order_by("pk")
    return _digest(
        [
            listening_form_answers_fingerprint(study=study),
            summary,
            list(systems.values_list("pk", "name", "version", "kind", "metadata")),
        ]
    )


def _cast_fingerprint(cast_set: CastSet) -> str:
    renditions = CastRendition.objects.filter(item__cast_set=cast_set)
    detections = RenditionDetection.objects.filter(rendition__item__cast_set=cast_set)
    return _digest(
        [
            cast_set.name,
            list(
                cast_set.items.order_by("pk").values_list("pk", "external_id", "words", "word_a", "word_b", "metadata")
            ),
            list(renditions.order_by("pk").values_list("pk", "item_id", "system_id", "side", "mode", "clip_id")),
            list(detections.order_by("pk").values_list("pk", "rendition_id", "detector_id", "stressed")),
            [annotations_fingerprint(study=study) for study in listener_studies(cast_set)],
        ]
    )


def _digest(values) -> str:
    # sort_keys: PostgreSQL's jsonb hands JSON fields back with their keys in its own order.
    return hashlib.sha256(json.dumps(values, sort_keys=True, default=str).encode()).hexdigest()[:32]
