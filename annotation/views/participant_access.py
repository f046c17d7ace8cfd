"""Who is this participant? One signed cookie per study, holding their id.

Signed cookies keep the hot path (playback events, submissions) free of a
session lookup; the signature stops anyone from posing as another participant.
"""

from django.shortcuts import redirect
from django.urls import reverse

from annotation.models import Participant

_SALT = "annotation.participant"
_MAX_AGE = 60 * 60 * 24 * 30


def cookie_name(slug: str) -> str:
    # Named by the study's slug, which the URL carries, so the hot paths
    # (playback events, submissions) need no query to find the study first.
    return f"p_{slug}"


def remember_participant(response, participant: Participant):
    response.set_signed_cookie(
        cookie_name(participant.study.slug), str(participant.pk), salt=_SALT, max_age=_MAX_AGE,
        httponly=True, samesite="Lax",
    )  # fmt: skip
    return response


def participant_id_from(request, slug: str) -> int | None:
    raw = request.get_signed_cookie(cookie_name(slug), default=None, salt=_SALT, max_age=_MAX_AGE)
    return int(raw) if raw and raw.isdigit() else None


def _get_participant(request, slug: str) -> Participant | None:
    participant_id = participant_id_from(request, slug)
    if participant_id is None:
        return None
    return Participant.objects.select_related("study").filter(pk=participant_id, study__slug=slug).first()


def to_step(participant: Participant, step: str):
    return redirect(reverse(f"annotation:{step}", kwargs={"slug": participant.study.slug}))
