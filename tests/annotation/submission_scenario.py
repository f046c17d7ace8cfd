"""One scripted run of submissions through the hand-written SQL of the submit path
(annotation.sql.submission_rows), and the rows it leaves, in terms that do not depend on
the backend's ids or clock. Imported by the tests, and run as a script on a fresh database of
another backend (`python -m tests.annotation.submission_scenario DATABASE_URL`), so that a test
can compare the rows of SQLite and PostgreSQL side by side."""

import json
import os
import sys

THRESHOLD = 2  # the study's mismatch_threshold: the first clip's two reports send it to review


def run_scenario() -> dict:
    """Four participants on a study of two clips. The first two complete their tasks and report a
    mismatch on the first clip, whose second report sends it to review: the third and fourth are
    given the second clip only. The third has an answer refused (not listened to; its report kept),
    then listens and completes; the fourth claims the clip and stops."""
    from annotation.models import StudyItem
    from annotation.services.assignment import assignment_claim
    from annotation.services.submission import SubmissionRefused, annotation_submit
    from tests.annotation.study_helpers import first_pending, listened, live_study, marks, ready_participant

    study = live_study(clips=2, clips_per_task=2, target_annotations=4, mismatch_threshold=THRESHOLD)
    first_clip = StudyItem.objects.filter(study=study).order_by("clip_id").values_list("clip_id", flat=True)[0]
    for number in range(4):
        participant = ready_participant(study)
        task = assignment_claim(participant=participant)
        if number == 2:
            item = first_pending(task)
            played = [{"kind": "play", "track": 0, "t": 0, "rate": 1, "at": 100}]
            try:
                annotation_submit(
                    participant_id=participant.pk, item_id=item.pk, levels=marks(item, 4), mismatch=False, events=played
                )
            except SubmissionRefused:
                pass  # as it should be: the report is kept all the same
            else:
                raise AssertionError("an answer to a clip not listened to was accepted")
        while number < 3 and (item := first_pending(task)) is not None:
            listened(item)
            annotation_submit(
                participant_id=participant.pk,
                item_id=item.pk,
                levels=marks(item, number),
                mismatch=item.clip_id == first_clip,
            )
    return stored_rows(study)


def stored_rows(study) -> dict:
    """The rows the run left: clips by their rank in the study, participants by arrival."""
    from annotation.models import Annotation, Participant, PlaybackEvent, StudyItem, Task, TaskItem

    clips = {
        pk: rank
        for rank, pk in enumerate(
            StudyItem.objects.filter(study=study).order_by("clip_id").values_list("clip_id", flat=True)
        )
    }
    people = {
        pk: rank
        for rank, pk in enumerate(Participant.objects.filter(study=study).order_by("pk").values_list("pk", flat=True))
    }
    items = {
        item.pk: (people[item.task.participant_id], clips[item.clip_id])
        for item in TaskItem.objects.filter(task__study=study).select_related("task")
    }
    return {
        "study_items": sorted(
            [clips[s.clip_id], s.completed_count, s.reserved_count, s.mismatch_count, s.review]
            for s in StudyItem.objects.filter(study=study)
        ),
        "tasks": sorted(
            [people[t.participant_id], t.status, t.completed_at is not None] for t in Task.objects.filter(study=study)
        ),
        "participants": sorted(
            [people[p.pk], p.completed_at is not None] for p in Participant.objects.filter(study=study)
        ),
        # Not the positions: the order of a task's clips is drawn at random.
        "task_items": sorted([*items[i.pk], i.status] for i in TaskItem.objects.filter(task__study=study)),
        "annotations": sorted(
            [*items[a.item_id], a.levels, a.mismatch_reported, a.coverage, a.attention_passed]
            for a in Annotation.objects.filter(item__task__study=study)
        ),
        "events": sorted(
            [*items[e.item_id], e.kind, e.track, e.media_time, e.rate, e.client_ms, e.page]
            for e in PlaybackEvent.objects.filter(item__task__study=study)
        ),
    }


def main(database_url: str) -> None:
    """Migrate a fresh database at `database_url`, run the scenario, print its rows as JSON."""
    os.environ["DATABASE_URL"] = database_url
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    os.environ.setdefault("SECRET_KEY", "scenario-only")
    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", verbosity=0)
    print(json.dumps(run_scenario()))


if __name__ == "__main__":
    main(sys.argv[1])
