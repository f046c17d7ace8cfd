"""The participant's pages before and after the task (the task is in task.py)."""

from functools import wraps

from django import forms
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils import translation
from django.utils.translation import gettext as _
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods, require_safe

from annotation import tones
from annotation.models import Study
from annotation.services.assignment import NoTaskAvailable, assignment_claim, task_current
from annotation.services.participants import (
    EntryRefused,
    entry_check,
    next_step,
    participant_consent,
    participant_enter,
    participant_returning,
    participant_screen,
    participant_screen_out,
    sound_check_answer,
    sound_check_seed,
)
from annotation.views.participant_access import (
    UnknownParticipant,
    entry_from,
    forget_entry,
    get_participant,
    get_participant_by_key,
    looks_like_a_phone,
    participant_in_browser,
    remember_entry,
    remember_participant,
    to_step,
)

PROLIFIC_COMPLETE_URL = "https://app.prolific.com/submissions/complete?cc={code}"


def message(
    request, study, title: str, text: str, *, status: int = 200, code: str = "", link: str = "", finished: bool = False
):
    """A page with one sentence; `finished` when the participant's part is over, so that one who
    has no Prolific link to go back by is told so."""
    context = {"study": study, "title": title, "text": text, "code": code, "link": link, "finished": finished}
    return render(request, "participant/message.html", context, status=status)


def participant_page(step: str, *, before_entry=None, open_task: bool = False):
    """Load the participant from their cookie and keep them on their current step.
    `before_entry(request, study)` may answer for a browser that is no participant
    yet (None: the "use your study link" page). With `open_task`, the view gets the
    participant's open task too (annotation.services.assignment.task_current), read
    once for the step and the page: every round trip holds one of the web server's
    few threads (bench/annotate_load.py --mode realistic)."""

    def decorate(view):
        @wraps(view)
        @never_cache
        def wrapper(request, slug, *args, **kwargs):
            try:
                participant = get_participant(request, slug)
            except UnknownParticipant as unknown:
                with translation.override(unknown.study.interface_language):
                    if before_entry is not None and (answer := before_entry(request, unknown.study)) is not None:
                        return answer
                    return message(
                        request,
                        unknown.study,
                        _("Please use your study link"),
                        _("We could not find your place in this study. Open the link you were given again."),
                        status=403,
                    )
            with translation.override(participant.study.interface_language):
                if open_task:
                    task = task_current(participant=participant)
                    current = next_step(participant, has_open_task=task is not None)
                    args = (task, *args)
                else:
                    current = next_step(participant)
                if current != step:
                    return to_step(participant, current)
                return view(request, participant, *args, **kwargs)

        return wrapper

    return decorate


def in_study_language(view):
    """Views that find the study themselves still speak its interface language."""

    @wraps(view)
    def wrapper(request, slug, *args, **kwargs):
        language = get_object_or_404(Study.objects.values_list("interface_language", flat=True), slug=slug)
        with translation.override(language):
            return view(request, slug, *args, **kwargs)

    return wrapper


@require_safe
@never_cache
@in_study_language
def study_entry(request, slug):
    """The study link: back to their place for someone who has taken part (this
    browser's participant, or the link's Prolific id); to consent for a newcomer,
    whose participant row is made only when they decide there."""
    study = get_object_or_404(Study, slug=slug)
    if study.status == Study.Status.CLOSED:
        return message(request, study, _("This study is closed"), _("Thank you for your interest."), status=410)
    entry = {
        "prolific_pid": request.GET.get("PROLIFIC_PID"),
        "prolific_study_id": request.GET.get("STUDY_ID"),
        "session_id": request.GET.get("SESSION_ID"),
    }
    try:
        entry_check(study=study, **entry)
    except EntryRefused as refused:
        return message(request, study, _("This link does not work"), str(refused), status=400)
    participant = participant_returning(
        study=study,
        known=participant_in_browser(request, slug),
        prolific_pid=entry["prolific_pid"],
        session_id=entry["session_id"],
    )
    if participant is None:
        return remember_entry(redirect("annotation:consent", slug=slug), slug, entry)
    return remember_participant(to_step(participant, next_step(participant)), participant)


@require_safe
@in_study_language
def study_resume(request, slug, key):
    """A local participant's own link back to their place, from any browser."""
    participant = get_participant_by_key(slug, key)
    return remember_participant(to_step(participant, next_step(participant)), participant)


def _consent_on_entry(request, study):
    """Consent for someone who came by the study link and is no participant yet:
    their row is made by their decision (either way), from the link's ids."""
    entry = entry_from(request, study.slug)
    if entry is None:
        return None
    if request.method != "POST":
        return consent_page(request, study)
    try:
        participant = participant_enter(study=study, **entry)
    except EntryRefused as refused:
        return message(request, study, _("This link does not work"), str(refused), status=400)
    return forget_entry(remember_participant(_decided(request, participant), participant), study.slug)


@require_http_methods(["GET", "POST"])
@participant_page("consent", before_entry=_consent_on_entry)
def consent(request, participant):
    if request.method == "POST":
        return _decided(request, participant)
    return consent_page(request, participant.study)


def consent_page(request, study):
    """Consent; a study with a headphone check says so here, before anyone commits, and tells
    someone on a phone that its loudspeaker cannot pass it."""
    headphones = study.headphone_check != Study.HeadphoneCheck.NONE
    context = {"study": study, "headphone_check": headphones, "on_a_phone": headphones and looks_like_a_phone(request)}
    return render(request, "participant/consent.html", context)


def _decided(request, participant):
    if request.POST.get("agree") == "yes":
        participant_consent(participant=participant)
        participant.refresh_from_db()
        return to_step(participant, next_step(participant))
    participant_screen_out(participant=participant)
    return screen_out_page(request, participant, _("You did not give your consent, so you cannot take part."))


def resume_link(request, participant) -> str:
    """A local participant's own link back to their place, shown once they have one."""
    if participant.prolific_pid:
        return ""
    return request.build_absolute_uri(
        reverse("annotation:resume", args=[participant.study.slug, participant.access_key])
    )


class ScreeningForm(forms.Form):
    def __init__(self, questions, *args, **kwargs):
        super().__init__(*args, **kwargs)
        for question in questions:
            self.fields[f"q{question.pk}"] = forms.ChoiceField(
                label=question.text, choices=[(choice, choice) for choice in question.choices], widget=forms.RadioSelect
            )

    def answers(self) -> dict[int, str]:
        return {int(name[1:]): value for name, value in self.cleaned_data.items()}


@require_http_methods(["GET", "POST"])
@participant_page("screening")
def screening(request, participant):
    form = ScreeningForm(participant.study.prerequisites.all(), request.POST or None)
    if request.method == "POST" and form.is_valid():
        if participant_screen(participant=participant, answers=form.answers()):
            participant.refresh_from_db()
            return to_step(participant, next_step(participant))
        return screen_out_page(request, participant, _("Thank you. This study is for a different group of people."))
    context = {"study": participant.study, "form": form, "resume_link": resume_link(request, participant)}
    return render(request, "participant/screening.html", context)


@require_safe
@participant_page("screened_out")
def screened_out(request, participant):
    # Who failed a headphone check that the study only records, and then the sound check, was
    # screened out by the sound check.
    if participant.headphone_check_passed is False and participant.sound_check_passed is not False:
        return screen_out_page(request, participant, _("The headphone check did not succeed, so you cannot take part."))
    return screen_out_page(request, participant, _("Thank you. This study is for a different group of people."))


def screen_out_page(request, participant, text: str):
    """The thank-you page of someone already screened out (by a service: this page writes nothing),
    with the study's screen-out code: on Prolific, the code that pays a screen-out."""
    study = participant.study
    code = study.screen_out_code if participant.prolific_pid else ""
    link = PROLIFIC_COMPLETE_URL.format(code=code) if code else ""
    return message(request, study, _("Thank you for your time"), text, code=code, link=link, finished=True)


@require_http_methods(["GET", "POST"])
@participant_page("sound_check")
def sound_check(request, participant):
    study = participant.study
    error = ""
    if request.method == "POST":
        try:
            count = int(request.POST.get("count", ""))
        except ValueError:
            error = _("Please type the number of tones as a number.")
        else:
            outcome = sound_check_answer(participant=participant, count=count)
            if outcome == "failed":
                return screen_out_page(
                    request, participant, _("The sound check did not succeed, so you cannot take part.")
                )
            participant.refresh_from_db()
            if outcome == "passed":
                return to_step(participant, next_step(participant))
            error = _("That was not right. Listen to the new clip and try again.")
    tries_left = study.sound_check_tries - participant.sound_check_attempts
    context = {
        "study": study,
        "error": error,
        "tries_left": tries_left,
        "attempt": participant.sound_check_attempts,
    }
    return render(request, "participant/sound_check.html", context)


@require_safe
@participant_page("sound_check")
def sound_check_audio(request, participant):
    response = HttpResponse(tones.tone_clip_wav(sound_check_seed(participant)), content_type="audio/wav")
    response["Cache-Control"] = "no-store"
    return response


@require_http_methods(["GET", "POST"])
@participant_page("instructions")
def instructions(request, participant):
    study = participant.study
    if request.method == "POST":
        try:
            assignment_claim(participant=participant)
        except NoTaskAvailable as unavailable:
            return message(request, study, _("No task available"), str(unavailable))
        return to_step(participant, "task")
    context = {"study": study, "resume_link": resume_link(request, participant), **example_context(study)}
    return render(request, "participant/instructions.html", context)


def example_context(study) -> dict:
    if study.example_clip is None:
        return {}
    words = list(study.example_clip.words.values_list("text", flat=True))
    levels = list(study.example_levels) + [0] * (len(words) - len(study.example_levels))
    return {"example_words": list(zip(words, levels))}


@require_safe
@participant_page("done")
def done(request, participant):
    study = participant.study
    code = study.completion_code
    link = PROLIFIC_COMPLETE_URL.format(code=code) if participant.prolific_pid else ""
    return render(request, "participant/done.html", {"study": study, "code": code, "link": link})


@require_safe
@participant_page("ended")
def ended(request, participant):
    return message(
        request,
        participant.study,
        _("Your task has ended"),
        _("The time limit for your task has passed, or you have already taken part. Thank you."),
        finished=True,
    )
