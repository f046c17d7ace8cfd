"""Building live studies and simulating listening in tests."""

import re
from datetime import timedelta

from django.utils import timezone

from annotation.models import Annotation, Corpus, Participant, PlaybackEvent, Study, Task, TaskItem
from annotation.services.studies import ClipSelection, study_create
from tests.annotation.factories import ClipFactory


def live_study(*, clips: int = 6, words: str = "one two three four five six seven eight nine ten", **settings) -> Study:
    corpus = Corpus.objects.create(name=f"corpus-{Corpus.objects.count()}")
    for _ in range(clips):
        ClipFactory(corpus=corpus, transcript=words, duration=2.0)
    defaults = {
        "status": Study.Status.LIVE,
        "clips_per_task": 3,
        "target_annotations": 2,
        "attention_checks_per_task": 0,
        "headphone_check": Study.HeadphoneCheck.NONE,  # the tests of the check ask for it
    }
    return study_create(name=f"study-{corpus.pk}", corpus=corpus, selection=ClipSelection(), **{**defaults, **settings})


def ready_participant(study: Study, **fields) -> Participant:
    """A participant past consent and screening."""
    now = timezone.now()
    return Participant.objects.create(study=study, consented_at=now, screened_at=now, **fields)


def listened(item: TaskItem, *, seconds_ago: float | None = None, track: int = 0) -> None:
    """Record a straight play-through of one clip of the item that ended `seconds_ago` (server clock),
    on a clip handed out no later than its start."""
    duration = (item.presentation.get("durations") or [item.duration])[track]
    started = timezone.now() - timedelta(seconds=(seconds_ago or 0) + duration + 0.2)
    handed_out_before(item, started)
    steps = [("play", 0.0, 0.0)]
    t = 0.0
    while t < duration:
        t = min(duration, t + 0.25)
        steps.append(("timeupdate", t, t))
    steps.append(("ended", duration, duration))
    PlaybackEvent.objects.bulk_create(
        PlaybackEvent(
            item=item,
            kind=kind,
            track=track,
            media_time=media,
            rate=1.0,
            client_ms=at * 1000,
            received_at=started + timedelta(seconds=at),
        )
        for kind, media, at in steps
    )


def handed_out_before(item: TaskItem, moment) -> None:
    """Move the item's hand-out (the previous item's submission, or the task's
    start for the first) back to `moment`, if it was later."""
    if item.position == 0:
        Task.objects.filter(pk=item.task_id, created_at__gt=moment).update(created_at=moment)
    else:
        previous = Annotation.objects.filter(item__task_id=item.task_id, item__position=item.position - 1)
        previous.filter(submitted_at__gt=moment).update(submitted_at=moment)


def listened_to_all(item: TaskItem) -> None:
    """Every clip of the item (both of an A/B pair) played through, one after the other, the last ending now."""
    durations = item.presentation.get("durations") or [item.duration]
    for track in range(len(durations)):
        listened(item, track=track, seconds_ago=sum(duration + 0.3 for duration in durations[track + 1 :]))


def first_pending(task) -> TaskItem:
    return task.items.filter(status=TaskItem.Status.PENDING).order_by("position").first()


def marks(item: TaskItem, *marked: int, level: int = 1) -> list[int]:
    return [level if index in marked else 0 for index in range(item.word_count)]


def live_form(*, specs, clips: int = 4, **settings):
    """A live form study over fresh clips; `specs(clips)` returns ListeningFormItemSpec objects."""
    from annotation.services.listening_forms import listening_form_study_create

    corpus = Corpus.objects.create(name=f"form-corpus-{Corpus.objects.count()}")
    made = [ClipFactory(corpus=corpus, transcript="I did not say she stole it", duration=2.0) for _ in range(clips)]
    defaults = {"status": Study.Status.LIVE, "clips_per_task": len(specs(made))}
    return listening_form_study_create(
        name=f"form-{corpus.pk}", corpus=corpus, items=specs(made), **{**defaults, **settings}
    )


def page_text_for_leaks(text: str) -> str:
    """`text` in lower case without its random tokens (CSRF, signed audio links, cookies): one may
    spell "gold" or "expected" by chance, which is no leak."""
    return re.sub(r"[A-Za-z0-9_:.-]{20,}", "", text).lower()
