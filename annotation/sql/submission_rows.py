"""The statements of the submission hot path, written out as SQL.

Why not the ORM here, as everywhere else: each clip a participant annotates
costs a submit (and, for a long listen, a playback report or two), and on our 2-core
machines building a query through the ORM cost about 0.5 ms of CPU against
0.15-0.25 ms to send the same statement as written (bench/annotate_load.py
found query building to be a third of a submit's time). So the few
statements on that path live here, in SQL that SQLite (3.35+, for RETURNING)
and PostgreSQL both run, with datetimes adapted by the backend's own
operations. The ORM code elsewhere that changes the same rows (assignment,
expiry, review) locks or guards them, so the two never overwrite each other.
"""

import json
from dataclasses import dataclass
from datetime import UTC, datetime

from django.db import connection, transaction
from django.utils.dateparse import parse_datetime

from annotation import playback
from annotation.models import Annotation, Clip, Participant, PlaybackEvent, Study, StudyItem, Task, TaskItem, Word
from annotation.study_kinds import Capabilities, capabilities_of

PENDING, SUBMITTED = TaskItem.Status.PENDING.value, TaskItem.Status.SUBMITTED.value
OPEN = Task.Status.OPEN.value

_ITEM, _TASK, _STUDY = TaskItem._meta.db_table, Task._meta.db_table, Study._meta.db_table
_STUDY_ITEM, _EVENT, _ANNOTATION = StudyItem._meta.db_table, PlaybackEvent._meta.db_table, Annotation._meta.db_table
_CLIP, _WORD, _PARTICIPANT = Clip._meta.db_table, Word._meta.db_table, Participant._meta.db_table
_JSON = "CAST(%s AS JSONB)" if connection.vendor == "postgresql" else "%s"
_INDEX = connection.ops.quote_name("index")
# A clip's words as one JSON value, [[index, text], ...] in no particular order.
_WORDS_JSON = (
    f"json_agg(json_build_array(w.{_INDEX}, w.text))"
    if connection.vendor == "postgresql"
    else f"json_group_array(json_array(w.{_INDEX}, w.text))"
)


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
    max_marked_fraction: float | None  # None: no limit
    required_coverage: float
    mismatch_threshold: int
    adaptive_mode: str

    @property
    def capabilities(self) -> Capabilities:
        return capabilities_of(self.kind)


@dataclass(frozen=True)
class ClipState:
    """An adaptive design's state of a clip (attribute names as on StudyItem), as a submission
    computed it from the clip's counts as it read them (`seen_before` annotations, `marks_before`,
    `heavy_before`): the submission is written, with it, only if the clip still holds exactly
    those. All three are compared: a rejection takes annotations out of the counts
    (annotation.services.review), so a count can come back to a value it had with other marks
    under it, and the state is a function of all three."""

    seen_before: int
    marks_before: list[int]
    heavy_before: list[int]
    word_marks: list[int]
    word_heavy: list[int]
    settled: bool
    priority: float


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
    handed_out: datetime  # when it became the task's current item: the previous one's submission, or the task's start
    stored_events: int  # playback events stored for it so far
    study: StudyRules
    # Its clip's adaptive counts as they stand: completed_count, word_marks, word_heavy (None without
    # a clip of the study, as an attention check's item)
    clip_counts: tuple[int, list, list] | None
    # The item after it, as the page shows it once this one is submitted: read with the item, so
    # that a submit answers with the next clip without another round trip (each one holds a web
    # server thread, and the GIL must be taken back after it). None for the task's last item.
    next_clip: "NextClip | None" = None


_ITEM_STATE = f"""
    SELECT ti.id, ti.task_id, t.participant_id, ti.position, ti.status, ti.clip_id, ti.study_item_id,
           ti.attention_check_id, si.form_item_id, ti.word_count, ti.duration, ti.presentation,
           CASE WHEN t.status = %s AND t.expires_at > %s THEN 1 ELSE 0 END,
           (SELECT MIN(p.position) FROM {_ITEM} p WHERE p.task_id = ti.task_id AND p.status = %s),
           (SELECT COUNT(*) FROM {_ITEM} p WHERE p.task_id = ti.task_id AND p.status = %s),
           COALESCE((SELECT a.submitted_at FROM {_ITEM} p JOIN {_ANNOTATION} a ON a.item_id = p.id
                     WHERE p.task_id = ti.task_id AND p.position = ti.position - 1), t.created_at),
           (SELECT COUNT(*) FROM {_EVENT} e WHERE e.item_id = ti.id),
           s.id, s.slug, s.kind, s.interface_language, s.language, s.text_direction, s.min_marked_words,
           s.max_marked_fraction, s.required_coverage, s.mismatch_threshold, s.adaptive_mode,
           si.completed_count, si.word_marks, si.word_heavy,
           nx.id, nx.position, (SELECT COUNT(*) FROM {_ITEM} a WHERE a.task_id = ti.task_id), nx.word_count,
           nc.browser_audio, (SELECT {_WORDS_JSON} FROM {_WORD} w WHERE w.clip_id = nx.clip_id)
    FROM {_ITEM} ti
    JOIN {_TASK} t ON t.id = ti.task_id
    JOIN {_STUDY} s ON s.id = t.study_id
    LEFT JOIN {_STUDY_ITEM} si ON si.id = ti.study_item_id
    LEFT JOIN {_ITEM} nx ON nx.task_id = ti.task_id AND nx.position = ti.position + 1
    LEFT JOIN {_CLIP} nc ON nc.id = nx.clip_id
    WHERE ti.id = %s AND t.participant_id = %s
"""


def item_state(*, item_id: int, participant_id: int | None, now: datetime, slug: str | None = None) -> ItemState | None:
    """The item if it is this participant's (and in the study `slug`, when given); else None."""
    if participant_id is None:
        return None
    sql, params = _ITEM_STATE, [OPEN, _when(now), PENDING, PENDING, item_id, participant_id]
    if slug is not None:
        sql, params = sql + " AND s.slug = %s", [*params, slug]
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        row = cursor.fetchone()
    if row is None:
        return None
    presentation = row[11] if isinstance(row[11], dict) else json.loads(row[11] or "{}")
    rules, counts, following = row[17:28], row[28:31], row[31:]
    return ItemState(
        *row[:11],
        presentation,
        bool(row[12]),
        row[13],
        row[14],
        _as_datetime(row[15]),
        row[16],
        StudyRules(*rules),
        None if counts[0] is None else (counts[0], *(_json(value) for value in counts[1:])),
        _next_clip(*following),
    )


def _json(value):
    """A JSON column or value as Python: PostgreSQL's driver may give it parsed or as text, SQLite as text."""
    return json.loads(value) if isinstance(value, str) else value


def _next_clip(item_id, position, total, word_count, browser_audio, words) -> "NextClip | None":
    if item_id is None:
        return None
    words = _json(words) or []
    return NextClip(item_id, position, total, word_count, browser_audio, sorted((i, text) for i, text in words))


def item_events(item_id: int) -> list[tuple[int, playback.Event]]:
    """(track, event) for every playback report stored for the item."""
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT track, kind, media_time, rate, client_ms, page, received_at FROM {_EVENT} WHERE item_id = %s"
            " ORDER BY id",
            [item_id],
        )
        rows = cursor.fetchall()
    return [
        (track, playback.Event(kind, media_time, rate, client_ms / 1000, _as_datetime(received).timestamp(), page))
        for track, kind, media_time, rate, client_ms, page, received in rows
    ]


def playback_events_insert(
    item_id: int, events: list[tuple], received_at: datetime, *, limit: int | None = None
) -> bool:
    """One statement for all of a report's events: (kind, track, media_time, rate, client_ms, page) each.
    With a `limit`, nothing is written (and False returned) when the item would hold more events than that."""
    if not events:
        return True
    guard, extra = "1 = 1", []
    if limit is not None:
        guard, extra = f"(SELECT COUNT(*) FROM {_EVENT} WHERE item_id = %s) <= %s", [item_id, limit - len(events)]
    sql, params = _events_insert(item_id, events, received_at, guard=guard)
    with connection.cursor() as cursor:
        cursor.execute(sql, params + extra)
        return cursor.rowcount > 0


def submission_store(
    annotation: Annotation,
    *,
    task_id: int,
    events: list[tuple],
    study_item_id: int | None,
    threshold: int,
    completes_task: bool,
) -> int | None:
    """`submission_store_with_state` without a clip state to write: the annotation's id, or None."""
    return submission_store_with_state(
        annotation,
        task_id=task_id,
        events=events,
        study_item_id=study_item_id,
        threshold=threshold,
        completes_task=completes_task,
    )[0]


def submission_store_with_state(
    annotation: Annotation,
    *,
    task_id: int,
    events: list[tuple],
    study_item_id: int | None,
    threshold: int,
    completes_task: bool,
    state: ClipState | None = None,
) -> tuple[int | None, bool]:
    """Claim the item and write everything a submission writes, atomically:
    the annotation, the reports that came with it, the clip's counts (when
    `study_item_id` is given) and, for the task's last item, the task's and
    the participant's completion. Returns the annotation's id, or None with
    nothing written when the item is no longer pending in an open, unexpired
    task. The claim is the guard: of two identical submits racing, the second
    waits for the first's row lock, then finds the item submitted; an expiry
    that got there first has released it.

    On PostgreSQL all of it is one statement (data-modifying WITH queries, each
    write conditional on the claim), so a submit costs one round trip and no
    BEGIN/COMMIT; SQLite runs the same statements in a transaction.

    `state`, an adaptive design's new state of the clip, is written in the same
    statement, so that no lock is held between statements (while the web
    server's thread waits for the GIL), if the clip's counts are still those it
    was computed from; otherwise nothing at all is written. Returns (the
    annotation's id or None, whether the counts had moved): the caller then
    stores the submission again and counts it in under the clip's lock, in one
    transaction (annotation.services.adaptive). Writing the submission without
    its state and adding the state in a later transaction would let others
    read, and a failure between the two leave, a clip whose completed count
    holds an annotation that its marks and settled flag do not."""
    now = annotation.submitted_at
    writes = [_annotation_insert(annotation)]
    if events:
        writes.append(_events_insert(annotation.item_id, events, now, guard="{claimed}"))
    if study_item_id is not None:
        writes.append(_counts_update(study_item_id, annotation.mismatch_reported, threshold, state))
    else:
        state = None
    if completes_task:
        writes += _completion_updates(task_id, annotation.participant_id, now)
    if connection.vendor == "postgresql":
        return _in_one_statement(annotation.item_id, task_id, now, writes, study_item_id, state)
    return _in_one_transaction(_claim(annotation.item_id, task_id, now), writes, study_item_id, state)


# With a clip state: the item, locked if it may be claimed, then its clip, locked (in that order,
# as a submission without a state and an expiry lock them), and whether the clip's counts are
# still those the state was computed from. Each locked read returns the row's latest version (a
# concurrent writer is waited for), and the lock holds it so until the statement ends.
_CLAIMABLE = f"""SELECT id FROM {_ITEM}
                 WHERE id = %s AND status = %s
                   AND EXISTS (SELECT 1 FROM {_TASK} t WHERE t.id = %s AND t.status = %s AND t.expires_at > %s)
                 FOR NO KEY UPDATE"""
_FRESH = f"""SELECT completed_count = %s AND word_marks = CAST(%s AS JSONB) AND word_heavy = CAST(%s AS JSONB) AS ok
             FROM {_STUDY_ITEM}
             WHERE id = %s AND EXISTS (SELECT 1 FROM claimable) FOR NO KEY UPDATE"""


def _in_one_statement(item_id, task_id, now, writes, study_item_id, state: ClipState | None) -> tuple[int | None, bool]:
    """(the annotation's id, whether the clip's counts had moved) from one statement. With a
    state, the claim, and with it every write, is made only where the locked read of the clip
    (`fresh`) finds the counts the state was computed from."""
    claim, params = _claim(item_id, task_id, now)
    parts = []
    if state is not None:
        parts += [f"claimable AS MATERIALIZED ({_CLAIMABLE})", f"fresh AS MATERIALIZED ({_FRESH})"]
        params = [item_id, PENDING, task_id, OPEN, _when(now)]
        params += [state.seen_before, json.dumps(state.marks_before), json.dumps(state.heavy_before), study_item_id]
        claim = f"""UPDATE {_ITEM} SET status = %s
                    WHERE id = (SELECT id FROM claimable) AND status = %s AND (SELECT ok FROM fresh) RETURNING id"""
        params += [SUBMITTED, PENDING]
    guard = "EXISTS (SELECT 1 FROM claimed)"
    parts.append(f"claimed AS ({claim})")
    parts += [f"w{number} AS ({sql.format(claimed=guard)})" for number, (sql, _) in enumerate(writes)]
    params += [value for _, values in writes for value in values]
    moved = "(SELECT ok FROM fresh) = FALSE" if state is not None else "FALSE"
    with connection.cursor() as cursor:
        cursor.execute("WITH " + ",\n".join(parts) + f"\nSELECT (SELECT id FROM w0), {moved}", params)
        row = cursor.fetchone()
    return (row[0], bool(row[1])) if row else (None, False)


def _in_one_transaction(claim, writes, study_item_id, state: ClipState | None) -> tuple[int | None, bool]:
    """SQLite: the same writes in one transaction, which holds the database's write lock from its
    start (IMMEDIATE), so the clip's counts read in it stand until it commits."""
    with transaction.atomic(), connection.cursor() as cursor:
        if state is not None and not _counts_stand(cursor, study_item_id, state):
            return None, True
        cursor.execute(*claim)
        if cursor.fetchone() is None:
            return None, False
        for number, (sql, params) in enumerate(writes):
            cursor.execute(sql.format(claimed="1 = 1"), params)
            if number == 0:
                annotation_id = cursor.fetchone()[0]
    return annotation_id, False


def _counts_stand(cursor, study_item_id: int, state: ClipState) -> bool:
    cursor.execute(f"SELECT completed_count, word_marks, word_heavy FROM {_STUDY_ITEM} WHERE id = %s", [study_item_id])
    completed, marks, heavy = cursor.fetchone()
    return (completed, _json(marks), _json(heavy)) == (state.seen_before, state.marks_before, state.heavy_before)


def _claim(item_id: int, task_id: int, now: datetime) -> tuple[str, list]:
    return (
        f"""UPDATE {_ITEM} SET status = %s
            WHERE id = %s AND status = %s
              AND EXISTS (SELECT 1 FROM {_TASK} t WHERE t.id = %s AND t.status = %s AND t.expires_at > %s)
            RETURNING id""",
        [SUBMITTED, item_id, PENDING, task_id, OPEN, _when(now)],
    )


def _annotation_insert(a: Annotation) -> tuple[str, list]:
    # INSERT ... SELECT, so that PostgreSQL can make it wait on the claim; the
    # casts type the JSON and a NULL, which a bare parameter in a SELECT would not.
    return (
        f"""INSERT INTO {_ANNOTATION} (item_id, participant_id, clip_id, levels, response, mismatch_reported,
                                       attention_passed, coverage, seconds_spent, submitted_at)
            SELECT %s, %s, %s, {_JSON}, {_JSON}, %s, CAST(%s AS BOOLEAN), %s, %s, %s WHERE {{claimed}}
            RETURNING id""",
        [
            a.item_id,
            a.participant_id,
            a.clip_id,
            json.dumps(a.levels),
            json.dumps(a.response),
            a.mismatch_reported,
            a.attention_passed,
            a.coverage,
            a.seconds_spent,
            _when(a.submitted_at),
        ],
    )


def _events_insert(item_id: int, events: list[tuple], received_at: datetime, *, guard: str) -> tuple[str, list]:
    """The events go as one JSON parameter, [[kind, track, media_time, rate, client_ms, page], ...],
    so that the statement's text is the same for any number of them (PostgreSQL prepares it once)
    and the driver adapts one value instead of eight per event."""
    if connection.vendor == "postgresql":
        columns = (
            "e->>0, CAST(e->>1 AS INTEGER), CAST(e->>2 AS DOUBLE PRECISION), CAST(e->>3 AS DOUBLE PRECISION), "
            "CAST(e->>4 AS DOUBLE PRECISION), CAST(e->>5 AS BIGINT)"
        )
        source = "jsonb_array_elements(CAST(%s AS JSONB)) AS e"
    else:
        columns = ", ".join(f"json_extract(value, '$[{index}]')" for index in range(6))
        source = "json_each(%s)"
    return (
        f"""INSERT INTO {_EVENT} (item_id, kind, track, media_time, rate, client_ms, page, received_at)
            SELECT %s, {columns}, %s FROM {source} WHERE {guard}""",
        [item_id, _when(received_at), json.dumps(events)],
    )


def _counts_update(study_item_id: int, mismatch: bool, threshold: int, state: ClipState | None) -> tuple[str, list]:
    """Completed +1, reserved -1 and, with a mismatch report, the report counted
    and the clip taken out for review once the reports reach the threshold: the
    rule of annotation.services.study_item_review, applied in the statement, between the
    states the model names (StudyItem.REPORTED_FROM, REPORTED_TO).
    With a `state`, also the adaptive design's state of the clip (the statement
    runs only where the clip's counts are those the state was computed from)."""
    report = 1 if mismatch else 0
    adaptive, extra = "", []
    if state is not None:
        adaptive = f", word_marks = {_JSON}, word_heavy = {_JSON}, settled = %s, priority = %s"
        extra = [json.dumps(state.word_marks), json.dumps(state.word_heavy), state.settled, state.priority]
    return (
        f"""UPDATE {_STUDY_ITEM}
            SET completed_count = completed_count + 1, reserved_count = reserved_count - 1,
                mismatch_count = mismatch_count + %s,
                review = CASE WHEN %s = 1 AND review = %s AND mismatch_count + 1 >= %s THEN %s ELSE review END{adaptive}
            WHERE id = %s AND {{claimed}}""",
        [report, report, StudyItem.REPORTED_FROM.value, threshold, StudyItem.REPORTED_TO.value, *extra, study_item_id],
    )


def _completion_updates(task_id: int, participant_id: int, now: datetime) -> list[tuple[str, list]]:
    when = _when(now)
    return [
        (
            f"UPDATE {_TASK} SET status = %s, completed_at = %s WHERE id = %s AND status = %s AND {{claimed}}",
            [Task.Status.COMPLETED.value, when, task_id, OPEN],
        ),
        (
            f"UPDATE {_PARTICIPANT} SET completed_at = %s WHERE id = %s AND completed_at IS NULL AND {{claimed}}",
            [when, participant_id],
        ),
    ]


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
        return value if value.tzinfo else value.replace(tzinfo=UTC)
    return parse_datetime(value).replace(tzinfo=UTC)
