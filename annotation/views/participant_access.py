"""Who is this participant? One signed cookie per study, holding their id.

Signed cookies keep the hot path (playback events, submissions) free of a
session lookup; the signature stops anyone from posing as another participant.

The participant pages find the participant, and their task items, through the
helpers here, which return what was asked for or raise: Http404 when the study
(or the item, for this participant) does not exist, UnknownParticipant (403)
when the browser is no participant of the study. Staff lookups are in
annotation/shared/access.py.
"""

import json
from datetime import datetime

from django.core.exceptions import PermissionDenied
from django.http import Http404
from django.shortcuts import get_object_or_404, redirect
from django.urls import reverse

from annotation.models import Participant, Study, TaskItem
from annotation.services.submission import item_for_participant
from annotation.sql.submission_rows import ItemState

_SALT = "annotation.participant"
_MAX_AGE = 60 * 60 * 24 * 30
_ENTRY_SALT = "annotation.entry"
_ENTRY_MAX_AGE = 60 * 60 * 24


class UnknownParticipant(PermissionDenied):
    """The browser has no valid participant cookie for `study`. A PermissionDenied,
    so 403 wherever it is not caught; participant_page catches it to show the
    "use your study link" page in the study's language."""

    def __init__(self, study: Study):
        super().__init__(f"no participant of {study.slug} in this browser")
        self.study = study


def cookie_name(slug: str) -> str:
    # Named by the study's slug, which the URL carries, so the hot paths
    # (playback events, submissions) need no query to find the study first.
    return f"p_{slug}"


def remember_participant(response, participant: Participant):
    response.set_signed_cookie(
        cookie_name(participant.study.slug),
        str(participant.pk),
        salt=_SALT,
        max_age=_MAX_AGE,
        httponly=True,
        samesite="Lax",
    )
    return response


def remember_entry(response, slug: str, entry: dict):
    """Before consent there is no participant yet, only the link they came by
    (its Prolific ids, or none): kept in a signed cookie until they decide."""
    response.set_signed_cookie(
        f"e_{slug}", json.dumps(entry), salt=_ENTRY_SALT, max_age=_ENTRY_MAX_AGE, httponly=True, samesite="Lax"
    )
    return response


def entry_from(request, slug: str) -> dict | None:
    """The link's ids as remember_entry kept them; None without a (valid) entry cookie."""
    raw = request.get_signed_cookie(f"e_{slug}", default=None, salt=_ENTRY_SALT, max_age=_ENTRY_MAX_AGE)
    try:
        entry = json.loads(raw) if raw else None
    except ValueError:
        return None
    names = ("prolific_pid", "prolific_study_id", "session_id")
    if not isinstance(entry, dict) or set(entry) != set(names):
        return None
    return entry if all(value is None or isinstance(value, str) for value in entry.values()) else None


def forget_entry(response, slug: str):
    response.delete_cookie(f"e_{slug}", samesite="Lax")
    return response


def participant_in_browser(request, slug: str) -> Participant | None:
    """The participant this browser already is in the study `slug`, or None."""
    participant_id = participant_id_from(request, slug)
    if participant_id is None:
        return None
    return Participant.objects.select_related("study").filter(pk=participant_id, study__slug=slug).first()


def participant_id_from(request, slug: str) -> int | None:
    raw = request.get_signed_cookie(cookie_name(slug), default=None, salt=_SALT, max_age=_MAX_AGE)
    return int(raw) if raw and raw.isdigit() else None


def get_participant(request, slug: str) -> Participant:
    """The participant this browser is in the study `slug` (with the study), in one
    query; only when there is none is the study looked up, for the 404 or the page."""
    found = participant_in_browser(request, slug)
    if found is not None:
        return found
    raise UnknownParticipant(get_object_or_404(Study, slug=slug))


def get_participant_by_key(slug: str, key: str) -> Participant:
    """The participant whose personal resume link this is; Http404 for another study's key or a wrong one."""
    return get_object_or_404(Participant.objects.select_related("study"), study__slug=slug, access_key=key)


def get_item_for_participant(request, slug: str, item_id: int, now: datetime) -> ItemState:
    """This browser's participant's task item, as it stands at `now`; Http404 for
    anyone else's item or none (it reveals nothing). One statement: the hot path."""
    try:
        return item_for_participant(
            participant_id=participant_id_from(request, slug), item_id=item_id, slug=slug, now=now
        )
    except TaskItem.DoesNotExist:
        raise Http404 from None


def looks_like_a_phone(request) -> bool:
    """A phone or a tablet, by the "Mobi" that MDN recommends looking for in the User-Agent
    (developer.mozilla.org, "Browser detection using the user agent"). Only to warn early: a
    headphone check is passed or failed by listening, never by the device."""
    return "Mobi" in request.headers.get("User-Agent", "")


def to_step(participant: Participant, step: str):
    return redirect(reverse(f"annotation:{step}", kwargs={"slug": participant.study.slug}))
