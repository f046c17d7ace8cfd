"""The headphone check's pages: the level set by the reference noise, then one trial a page, each
answer posted from the page and checked here (annotation.services.headphone_check); and the
sounds, through signed links (annotation.headphone_links) that name no answer."""

from functools import cache

from django.core import signing
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods, require_safe

from annotation import headphone_stimuli
from annotation.headphone_links import StimulusGrant, granted_stimulus, stimulus_url
from annotation.models import Participant
from annotation.services.headphone_check import (
    headphone_answer,
    headphone_check_position,
    headphone_check_settle,
    headphone_level_set,
    trial_seed,
)
from annotation.services.participants import next_step
from annotation.views.participant import participant_page, screen_out_page
from annotation.views.participant_access import looks_like_a_phone, to_step

PUBLIC_AUDIO = "public, max-age=86400"
PRIVATE_AUDIO = "private, no-store, no-transform"  # no-transform: no proxy may compress it (its size would tell)


@require_http_methods(["GET", "POST"])
@participant_page("headphone_level")
def headphone_level(request, participant):
    if request.method == "POST":
        headphone_level_set(participant=participant)
        participant.refresh_from_db()
        return to_step(participant, next_step(participant))
    context = {"study": participant.study, "on_a_phone": looks_like_a_phone(request)}
    return render(request, "participant/headphone_level.html", context)


@require_http_methods(["GET", "POST"])
@participant_page("headphone_check")
def headphone_check(request, participant):
    study = participant.study
    if request.method == "POST":
        return _answered(request, participant)
    position = headphone_check_position(participant)
    if position is None:  # decided meanwhile (another tab), or nothing left to answer since the settings changed
        headphone_check_settle(participant=participant)
        participant.refresh_from_db()
        return to_step(participant, next_step(participant))
    grants = [
        StimulusGrant(participant.pk, position.test, position.attempt, position.trial, interval)
        for interval in range(headphone_stimuli.INTERVALS)
    ]
    context = {
        "study": study,
        "position": position,
        "huggins": position.test == headphone_stimuli.HUGGINS,
        "trial_number": position.trial + 1,
        "trials": study.headphone_check_trials,
        "tries_left": study.headphone_check_tries - position.attempt,
        "retry": position.attempt > 0 and position.trial == 0,
        "interval_urls": [stimulus_url(grant) for grant in grants],
        "gap_ms": round(headphone_stimuli.gap_seconds(position.test) * 1000),
        "example_urls": [
            reverse("annotation:headphone_example", args=[interval]) for interval in range(headphone_stimuli.INTERVALS)
        ],
        "example_answer": headphone_stimuli.EXAMPLE_TARGET + 1,
    }
    return render(request, "participant/headphone_check.html", context)


def _answered(request, participant):
    try:
        shown = [int(request.POST.get(name, "")) for name in ("attempt", "trial", "answer")]
    except ValueError:
        return redirect("annotation:headphone_check", slug=participant.study.slug)
    attempt, trial, answer = shown
    test = request.POST.get("test", "")
    if answer not in range(1, headphone_stimuli.INTERVALS + 1):
        return redirect("annotation:headphone_check", slug=participant.study.slug)
    outcome = headphone_answer(participant=participant, test=test, attempt=attempt, trial=trial, answer=answer - 1)
    participant.refresh_from_db()
    if outcome == "failed" and participant.screened_out:
        return screen_out_page(request, participant, _("The headphone check did not succeed, so you cannot take part."))
    if outcome in ("passed", "failed"):
        return to_step(participant, next_step(participant))
    return redirect("annotation:headphone_check", slug=participant.study.slug)


@require_safe
def headphone_audio(request, token: str):
    """One interval of a trial, for whoever holds its signed link. The whole trial is made for any
    interval (headphone_stimuli.interval_wav), and every interval's file has the same length."""
    try:
        grant = granted_stimulus(token)
    except signing.BadSignature:
        raise Http404("This audio link is invalid or has expired.") from None
    if grant.test not in headphone_stimuli.TESTS or grant.interval not in range(headphone_stimuli.INTERVALS):
        raise Http404("This audio link is invalid.")
    participant = Participant.objects.filter(pk=grant.participant_id).only("pk", "access_key").first()
    if participant is None:
        raise Http404("This audio link is invalid.")
    seed = trial_seed(participant, grant.test, grant.attempt, grant.trial)
    return _wav(headphone_stimuli.interval_wav(grant.test, seed, grant.interval), PRIVATE_AUDIO)


@require_safe
def headphone_reference(request):
    """The reference noise the participant sets their volume by: the same for everyone."""
    return _wav(_reference(), PUBLIC_AUDIO)


@require_safe
def headphone_example(request, interval: int):
    """The Huggins example, whose answer the page says."""
    if interval not in range(headphone_stimuli.INTERVALS):
        raise Http404("No such interval.")
    return _wav(_example(interval), PUBLIC_AUDIO)


@cache
def _reference() -> bytes:
    return headphone_stimuli.reference_noise_wav()


@cache
def _example(interval: int) -> bytes:
    return headphone_stimuli.example_interval_wav(interval)


def _wav(body: bytes, cache_control: str) -> HttpResponse:
    response = HttpResponse(body, content_type="audio/wav")
    response["Cache-Control"] = cache_control
    return response
