"""The answers of a listening-form study, turned into the inputs of evaluation.stats.listening_forms.

Answers of participants whose work was rejected are left out (their count is reported); every
other submitted answer counts, in the item's own terms (Annotation.response / levels).
`listening_form_answers_fingerprint` says what a report was computed from, so that a stored one is reused
until something it depends on changes.
"""

import hashlib
import json
from collections import defaultdict

from django.db.models import Count, Max

from annotation.answer_forms import SLIDER_MAX
from annotation.models import Annotation, ListeningFormItem, Participant, Study
from evaluation.stats import listening_forms as scoring

Kind = ListeningFormItem.Type


def listening_form_report_data(*, study: Study) -> dict:
    """Every score of the form, as plain JSON-ready values."""
    items, answers, left_out = _scored_items_and_answers(study)
    inputs = _inputs_by_kind(items, answers)
    marked_with_gold = [item for item in inputs[Kind.STRESSED_WORDS] if item.gold]
    report = {
        "study": {"id": study.pk, "name": study.name, "slug": study.slug},
        "items": len(items),
        "answers": sum(len(rows) for rows in answers.values()),
        "participants": len({participant for rows in answers.values() for participant, _, _ in rows}),
        "answers_left_out_rejected": left_out,
        "agreement": scoring.form_agreement(
            choices=inputs[Kind.SINGLE_CHOICE],
            pairs=inputs[Kind.PAIRWISE],
            stances=inputs[Kind.STANCE],
            markings=inputs[Kind.STRESSED_WORDS],
        ),
    }
    if inputs[Kind.SINGLE_CHOICE]:
        report["single_choice"] = scoring.choice_scores(inputs[Kind.SINGLE_CHOICE])
    if marked_with_gold:
        report["stressed_words"] = scoring.stressed_word_scores(marked_with_gold)
    if inputs[Kind.RATING]:
        report["rating"] = scoring.rating_scores(inputs[Kind.RATING])
    if inputs[Kind.PAIRWISE]:
        report["pairwise"] = scoring.pairwise_scores(inputs[Kind.PAIRWISE])
    if inputs[Kind.STANCE]:
        report["stance"] = scoring.stance_scores(inputs[Kind.STANCE])
    return report


def listening_form_scoring_inputs(*, study: Study) -> dict[str, list]:
    """{item type: the scoring inputs of its items}, each in the item's own terms; attention
    checks left out, as in listening_form_report_data. Other reports put systems beside these humans."""
    items, answers, _ = _scored_items_and_answers(study)
    return _inputs_by_kind(items, answers)


def _scored_items_and_answers(study: Study) -> tuple[list[ListeningFormItem], dict[int, list], int]:
    # Attention-check items test the listener, not the stimuli: never scored.
    items = [
        item for item in ListeningFormItem.objects.filter(study=study).order_by("pk") if not item.is_attention_check
    ]
    answers, left_out = _answers_by_item(study)
    return items, answers, left_out


def _inputs_by_kind(items: list[ListeningFormItem], answers: dict[int, list]) -> dict[str, list]:
    inputs: dict[str, list] = {kind: [] for kind in Kind.values}
    for item in items:
        inputs[item.item_type].append(_scoring_input(item, answers.get(item.pk, [])))
    return inputs


def listening_form_answers_fingerprint(*, study: Study) -> str:
    """Changes whenever what listening_form_report_data reads changes: an answer added or removed, a
    participant rejected or no longer rejected, a form item (its gold, options, metadata) or the
    study's name edited."""
    answers = Annotation.objects.filter(item__study_item__form_item__study=study).aggregate(
        count=Count("pk"), last_id=Max("pk"), last_at=Max("submitted_at")
    )
    rejected = Participant.objects.filter(study=study, decision=Participant.Decision.REJECTED).order_by("pk")
    items = (
        ListeningFormItem.objects.filter(study=study)
        .order_by("pk")
        .values_list("pk", "external_id", "item_type", "options", "settings", "gold", "metadata")
    )
    last_at = answers["last_at"].isoformat() if answers["last_at"] else "-"
    return (
        f"answers={answers['count']};last_id={answers['last_id']};last_at={last_at};"
        f"rejected={_digest(list(rejected.values_list('pk', flat=True)))};"
        f"items={_digest([study.name, study.slug, *items])}"
    )


def _digest(values: list) -> str:
    # sort_keys: PostgreSQL's jsonb hands JSON fields back with their keys in its own order.
    return hashlib.sha256(json.dumps(values, sort_keys=True, default=str).encode()).hexdigest()[:16]


def _answers_by_item(study: Study) -> tuple[dict[int, list], int]:
    """{form item pk: [(participant pk, levels, response)]}, and how many answers were left out."""
    answers = Annotation.objects.filter(item__study_item__form_item__study=study)
    rejected = answers.filter(participant__decision=Participant.Decision.REJECTED)
    by_item = defaultdict(list)
    rows = (
        answers.exclude(pk__in=rejected.values("pk"))
        .order_by("pk")
        .values_list("item__study_item__form_item_id", "participant_id", "levels", "response")
    )
    for item_id, participant_id, levels, response in rows:
        by_item[item_id].append((participant_id, levels, response))
    return by_item, rejected.count()


def _rating_scale(item: ListeningFormItem) -> tuple[float, float]:
    """The lowest and highest rating the item offered: its labelled values (1..n by default), or the slider's."""
    if not item.options:
        return 0.0, float(SLIDER_MAX)
    values = [float(v) for v in item.settings.get("values") or range(1, len(item.options) + 1)]
    return min(values), max(values)


def _scoring_input(item: ListeningFormItem, answers: list):
    if item.item_type == Kind.SINGLE_CHOICE:
        gold = item.gold if isinstance(item.gold, int) else None
        return scoring.ChoiceItem(item.external_id, gold, tuple(r["choice"] for _, _, r in answers), item.metadata)
    if item.item_type == Kind.STRESSED_WORDS:
        markings = tuple((str(participant), tuple(levels)) for participant, levels, _ in answers)
        return scoring.MarkedItem(item.external_id, tuple(item.gold or ()), markings, item.metadata)
    if item.item_type == Kind.RATING:
        values = tuple(r["value"] for _, _, r in answers)
        return scoring.RatedItem(item.external_id, values, item.metadata, scale=_rating_scale(item))
    if item.item_type == Kind.PAIRWISE:
        return scoring.PairItem(item.external_id, tuple(r["prefer"] for _, _, r in answers), item.metadata)
    settings = item.settings
    dimension = settings.get("dimension") or f"{settings.get('positive', 'P')} / {settings.get('negative', 'N')}"
    stance = tuple((r["pole"], float(r["confidence"]), r["pole_order"]) for _, _, r in answers)
    return scoring.StanceItem(item.external_id, dimension, stance)
