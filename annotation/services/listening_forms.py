"""Listening-form studies: the same participant machinery, items instead of clips."""

from dataclasses import dataclass, field

from django.db import transaction

from annotation.models import Clip, Corpus, ListeningFormItem, PrerequisiteQuestion, Study, StudyItem
from annotation.services.studies import default_prerequisites, free_slug

FORM_DEFAULTS = {"clips_per_task": 15, "target_annotations": 3, "attention_checks_per_task": 0, "min_marked_words": 0}


@dataclass(frozen=True)
class ListeningFormItemSpec:
    external_id: str
    item_type: str
    clip: Clip
    prompt: str = ""
    second_clip: Clip | None = None
    options: list = field(default_factory=list)
    settings: dict = field(default_factory=dict)
    gold: object = None
    metadata: dict = field(default_factory=dict)


@transaction.atomic
def listening_form_study_create(*, name: str, corpus: Corpus, items: list[ListeningFormItemSpec], **settings) -> Study:
    """A draft form study (15 items per form, 3 answers per item unless given),
    with the same default screening questions as an emphasis study."""
    if not items:
        raise ValueError("a form needs at least one item")
    languages = {spec.clip.language for spec in items}
    study = Study.objects.create(
        name=name,
        slug=settings.pop("slug", None) or free_slug(name),
        kind=Study.Kind.LISTENING_FORM,
        corpus=corpus,
        language=settings.pop("language", None) or (languages.pop() if len(languages) == 1 else ""),
        **{**FORM_DEFAULTS, **settings},
    )
    form_items = ListeningFormItem.objects.bulk_create(
        ListeningFormItem(study=study, **spec.__dict__) for spec in items
    )
    StudyItem.objects.bulk_create(StudyItem(study=study, clip_id=item.clip_id, form_item=item) for item in form_items)
    PrerequisiteQuestion.objects.bulk_create(
        PrerequisiteQuestion(study=study, position=position, **question)
        for position, question in enumerate(default_prerequisites(study.language, study.interface_language))
    )
    return study
