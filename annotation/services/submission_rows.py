"""The statements of the submission hot path, written out as SQL.

Why not the ORM here, as everywhere else: each clip a participant annotates
costs two requests (a playback report, then the submit), and
bench/annotate_load.py found that building a query through the ORM costs
about half a millisecond of CPU on our 2-core machines, against a tenth of
that to send the same statement as written; query building was a third of a
submit's time. So the few statements on that path live here, in standard SQL
that SQLite (3.35+, for RETURNING) and PostgreSQL both run, with parameters
adapted by the backend's own operations. Nothing else writes these rows
differently: every state change the ORM code makes elsewhere (assignment,
expiry, review) locks or guards the same rows.
"""

import json
from dataclasses import dataclass
from datetime import datetime, timezone as dt_timezone

from django.db import connection
from django.utils.dateparse import parse_datetime

from annotation import listening
from annotation.models import Annotation, Clip, Participant, PlaybackEvent, Study, StudyItem, Task, TaskItem, Word

PENDING, SUBMITTED = TaskItem.Status.PENDING.value, TaskItem.Status.SUBMITTED.value
OPEN = Task.Status.OPEN.value

_ITEM, _TASK, _STUDY = TaskItem._meta.db_table, Task._meta.db_table, Study._meta.db_table
_STUDY_ITEM, _EVENT, _ANNOTATION = StudyItem._meta.db_table, PlaybackEvent._meta.db_table, Annotation._meta.db_table
_CLIP, _WORD, _PARTICIPANT = Clip._meta.db_table, Word._meta.db_table, Participant._meta.db_table


@dataclass(frozen=True)
class StudyRules:
    """The study's fields a submission is judged and shown by (attribute names as on Study)."""

    pk: int
    slug: str
    kind: str
    interface_language: str
    language: str
    text_direction: str
    min_marked_words: int
    max_marked_fraction: float
    required_coverage: float
    mismatch_threshold: int


@dataclass(frozen=True)
class ItemState:
    """A participant's task item as it stands (attribute names as on TaskItem)."""

    pk: int
    task_id: int
    participant_id: int
    position: int
    status: str
    clip_id: int
    study_item_id: int | None
    attention_check_id: int | None
    form_item_id: int | None
    word_count: int
    duration: float
    presentation: dict
    task_open: bool  # open and within its time limit at the time asked
    next_position: int | None  # the first pending position of the task
    pending_count: int  # pending items of the task, this one included if pending
    study: StudyRules


_ITEM_STATE = f"""
    SELECT ti.id, ti.task_id, t.participant_id, ti.position, ti.status, ti.clip_id, ti.study_item_id,
           ti.attention_check_id, si.form_item_id, ti.word_count, ti.duration, ti.presentation,
           CASE WHEN t.status = %s AND t.expires_at > %s THEN 1 ELSE 0 END,
           (SELECT MIN(p.position) FROM {_ITEM} p WHERE p.task_id = ti.task_id AND p.status = %s),
           (SELECT COUNT(*) FROM {_ITEM} p WHERE p.task_id = ti.task_id AND p.status = %s),
           s.id, s.slug, s.kind, s.interface_language, s.language, s.text_direction, s.min_marked_words,
           s.max_marked_fraction, s.required_coverage, s.mismatch_threshold
    FROM {_ITEM} ti
    JOIN {_TASK} t ON t.id = ti.task_id
    JOIN {_STUDY} s ON s.id = t.study_id
    LEFT JOIN {_STUDY_ITEM} si ON si.id = ti.study_item_id
    WHERE ti.id = %s AND t.participant_id = %s
"""


def item_state(*, item_id: int, participant_id: int | None, now: datetime, slug: str | None = None) -> ItemState | None:
    """The item if it is this participant's (and in the study `slug`, when given); else None."""
    if participant_id is None:
        return None
    sql, params = _ITEM_STATE, [OPEN, _when(now), PENDING, PENDING, item_id, participant_id]
    if slug is not None:
        sql, params = sql + " AND s.slug = %s", params + [slug]
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        row = cursor.fetchone()
    if row is None:
        return None
    presentation = row[11] if isinstance(row[11], dict) else json.loads(row[11] or "{}")
    return ItemState(*row[:11], presentation, bool(row[12]), row[13], row[14], StudyRules(*row[15:]))


def item_events(item_id: int) -> list[tuple[int, listening.Event]]:
    """(track, event) for every playback report stored for the item."""
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT track, kind, media_time, rate, client_ms, received_at FROM {_EVENT} WHERE item_id = %s", [item_id]
        )
        rows = cursor.fetchall()
    return [
        (track, listening.Event(kind, media_time, rate, client_ms / 1000, _as_datetime(received).timestamp()))
        for track, kind, media_time, rate, client_ms, received in rows
    ]


def insert_events(item_id: int, events: list[tuple[str, int, float, float, float]], received_at: datetime) -> None:
    """One statement for all of a report's events: (kind, track, media_time, rate, client_ms) each."""
    if not events:
        return
    when = _when(received_at)
    values = ", ".join(["(%s, %s, %s, %s, %s, %s, %s)"] * len(events))
    params = [value for event in events for value in (item_id, *event, when)]
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {_EVENT} (item_id, kind, track, media_time, rate, client_ms, received_at) VALUES {values}",
            params,
        )


def claim_for_submission(*, item_id: int, task_id: int, now: datetime) -> bool:
    """Mark the item submitted if it is still pending in an open, unexpired task.

    The guard is the claim: of two identical submits racing, the second waits
    for the first's row lock, then finds the item no longer pending; an expiry
    that got there first leaves it released, not pending."""
    with connection.cursor() as cursor:
        cursor.execute(
            f"""UPDATE {_ITEM} SET status = %s
                WHERE id = %s AND status = %s
                  AND EXISTS (SELECT 1 FROM {_TASK} t WHERE t.id = %s AND t.status = %s AND t.expires_at > %s)""",
            [SUBMITTED, item_id, PENDING, task_id, OPEN, _when(now)],
        )
        return cursor.rowcount == 1


def insert_annotation(annotation: Annotation) -> int:
    """Store an Annotation built in memory; returns its id."""
    a = annotation
    with connection.cursor() as cursor:
        cursor.execute(
            f"""INSERT INTO {_ANNOTATION} (item_id, participant_id, clip_id, levels, response, mismatch_reported,
                                           attention_passed, coverage, seconds_spent, submitted_at)
                VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s) RETURNING id""",
            [a.item_id, a.participant_id, a.clip_id, json.dumps(a.levels), json.dumps(a.response), a.mismatch_reported,
             a.attention_passed, a.coverage, a.seconds_spent, _when(a.submitted_at)],
        )  # fmt: skip
        return cursor.fetchone()[0]


def count_submission(*, study_item_id: int, mismatch: bool, threshold: int) -> None:
    """Completed +1, reserved -1 and, with a mismatch report, the report counted
    and the clip taken out for review once the reports reach the threshold."""
    report = 1 if mismatch else 0
    with connection.cursor() as cursor:
        cursor.execute(
            f"""UPDATE {_STUDY_ITEM}
                SET completed_count = completed_count + 1, reserved_count = reserved_count - 1,
                    mismatch_count = mismatch_count + %s,
                    review = CASE WHEN %s = 1 AND review = %s AND mismatch_count + 1 >= %s THEN %s ELSE review END
                WHERE id = %s""",
            [report, report, StudyItem.Review.ACTIVE.value, threshold, StudyItem.Review.NEEDS_REVIEW.value,
             study_item_id],
        )  # fmt: skip


def complete_task(*, task_id: int, participant_id: int, now: datetime) -> None:
    when = _when(now)
    with connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE {_TASK} SET status = %s, completed_at = %s WHERE id = %s AND status = %s",
            [Task.Status.COMPLETED.value, when, task_id, OPEN],
        )
        cursor.execute(
            f"UPDATE {_PARTICIPANT} SET completed_at = %s WHERE id = %s AND completed_at IS NULL",
            [when, participant_id],
        )


def has_pending(task_id: int) -> bool:
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT 1 FROM {_ITEM} WHERE task_id = %s AND status = %s LIMIT 1", [task_id, PENDING])
        return cursor.fetchone() is not None


@dataclass(frozen=True)
class NextClip:
    """What the annotation page shows of the task's current item."""

    item_id: int
    position: int
    total: int
    word_count: int
    browser_audio: str
    words: list[tuple[int, str]]


def current_clip(task_id: int) -> NextClip | None:
    """The task's first pending item with its clip's words, in one statement."""
    with connection.cursor() as cursor:
        cursor.execute(
            f"""SELECT ti.id, ti.position, (SELECT COUNT(*) FROM {_ITEM} a WHERE a.task_id = ti.task_id),
                       ti.word_count, c.browser_audio, w.{connection.ops.quote_name("index")}, w.text
                FROM {_ITEM} ti
                JOIN {_CLIP} c ON c.id = ti.clip_id
                LEFT JOIN {_WORD} w ON w.clip_id = ti.clip_id
                WHERE ti.task_id = %s AND ti.position =
                      (SELECT MIN(p.position) FROM {_ITEM} p WHERE p.task_id = %s AND p.status = %s)
                ORDER BY w.{connection.ops.quote_name("index")}""",
            [task_id, task_id, PENDING],
        )
        rows = cursor.fetchall()
    if not rows:
        return None
    first = rows[0]
    words = [(index, text) for *_, index, text in rows if index is not None]
    return NextClip(first[0], first[1], first[2], first[3], first[4], words)


def _when(moment: datetime):
    """A datetime as the backend stores it (naive UTC text on SQLite)."""
    return connection.ops.adapt_datetimefield_value(moment)


def _as_datetime(value) -> datetime:
    """A stored datetime read back: PostgreSQL gives a datetime, SQLite its text."""
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=dt_timezone.utc)
    return parse_datetime(value).replace(tzinfo=dt_timezone.utc)
