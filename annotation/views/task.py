"""The annotation page: one clip at a time, playback reported, every gate on the server.

The submit is the one request of every clip (the page's playback reports
travel with it; only a long listen sends some ahead), so it and the playback
report read the item once (annotation.sql.submission_rows), the next clip
with it, and a submit writes in one more statement: two round trips, each of
which holds one of the web server's threads; the rest of the app is ORM as usual."""

import json

from django.http import HttpResponse
from django.middleware.csrf import get_token
from django.shortcuts import redirect, render
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone, translation
from django.utils.translation import gettext as _
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_POST, require_safe

from annotation.answer_forms import answer_form
from annotation.audio_links import signed_audio_url
from annotation.models import ListeningFormItem, Task, TaskItem, Word
from annotation.services.gates import marking_rule
from annotation.services.submission import (
    NotTheCurrentClip,
    SubmissionRefused,
    annotation_submit,
    max_marks,
    playback_keep_refused,
    playback_record,
    submission_check_turn,
)
from annotation.sql.submission_rows import NextClip, current_clip
from annotation.views.listening_form_items import form_item_context
from annotation.views.participant import participant_page
from annotation.views.participant_access import get_item_for_participant


@require_safe
@participant_page("task", open_task=True)
def task_page(request, participant, task: Task):
    return _render_item(request, task)


def _render_item(request, task: Task, *, data=None, errors=None, status: int = 200, partial: bool = False):
    if task.study.capabilities.answers_are_choices:
        item = task.items.filter(status=TaskItem.Status.PENDING).order_by("position").first()
        context = form_item_context(task, item, data=data, errors=errors)
        template = "participant/listening_form_task.html"
    else:
        context, template = item_context(task.pk, task.study, errors), "participant/task.html"
    return render(request, template + ("#item" if partial else ""), context, status=status)


def item_context(task_id: int, study, errors: list[str] | None = None, clip: NextClip | None = None) -> dict:
    """The current clip of an emphasis task; `study` is a Study or the StudyRules read with the item.
    Word indexes go in as text and the links are built here: the page is
    rendered after every submit, and number formatting and {% url %} were
    most of its cost."""
    clip = clip or current_clip(task_id)
    route = [study.slug, clip.item_id]
    most = max_marks(
        word_count=clip.word_count, min_marked=study.min_marked_words, max_fraction=study.max_marked_fraction
    )
    return {
        "study": study,
        "item_id": str(clip.item_id),
        "number": clip.position + 1,
        "total": clip.total,
        "words": [(str(index), text) for index, text in clip.words],
        "no_marks": ",".join("0" * len(clip.words)),
        "events_url": reverse("annotation:task_events", args=route),
        "submit_url": reverse("annotation:task_submit", args=route),
        "audio_url": signed_audio_url(clip.browser_audio),
        "min_marks": study.min_marked_words,
        "max_marks": most,
        "marking_rule": marking_rule(fewest=study.min_marked_words, most=most, word_count=clip.word_count),
        "errors": errors or [],
    }


@require_POST
def task_events(request, slug, item_id):
    """Playback events from the page that did not wait for the submit."""
    now = timezone.now()
    item = get_item_for_participant(request, slug, item_id, now)
    try:
        playback_record(item=item, events=json_value(request.body or b"[]"), received_at=now)
    except NotTheCurrentClip as error:
        return HttpResponse(str(error), status=409, content_type="text/plain")
    except ValueError as error:
        return HttpResponse(str(error), status=400, content_type="text/plain")
    return HttpResponse(status=204)


def json_value(text: str | bytes):
    """Parsed JSON from a request, or ValueError for anything unreadable: bad
    syntax or encoding, and nesting too deep for the parser (RecursionError)."""
    try:
        return json.loads(text)
    except RecursionError:
        raise ValueError("the JSON is nested too deeply") from None


@require_POST
@never_cache
def task_submit(request, slug, item_id):
    now = timezone.now()
    item = get_item_for_participant(request, slug, item_id, now)
    with translation.override(item.study.interface_language):
        return _submit(request, slug, item, now)


def _submit(request, slug, item, now):
    unreadable = [_("The answer could not be read; reload the page and try again.")]
    try:
        events = json_value(request.POST.get("events") or "[]")
        submission_check_turn(item)
        levels, response = _answer(item, request.POST, events=events, now=now)
        result = annotation_submit(
            participant_id=item.participant_id,
            item_id=item.pk,
            levels=levels,
            response=response,
            mismatch=request.POST.get("mismatch") == "on",
            events=events,
            now=now,
            item=item,
        )
    except ValueError:
        return _refused(request, item, unreadable, 400)
    except SubmissionRefused as refused:
        return _refused(request, item, refused.reasons, 409 if refused.final else 422)
    if result.task_completed:
        return _go(request, reverse("annotation:done", args=[slug]))
    if not request.htmx:
        return redirect("annotation:task", slug=slug)
    if item.study.capabilities.answers_are_choices:
        return _render_item(request, Task.objects.select_related("study").get(pk=item.task_id), partial=True)
    # A fresh submission's next clip was read with the item; a resend's is the task's first pending one.
    following = None if result.duplicate else item.next_clip
    return _next_clip(request, item_context(item.task_id, item.study, clip=following))


def _next_clip(request, context: dict) -> HttpResponse:
    """The next clip's part of the page. Rendered without the context processors
    (the fragment shows no user, messages or request, only its CSRF token): they
    were a fifth of the render, which follows every submit."""
    context["csrf_token"] = get_token(request)
    return HttpResponse(render_to_string("participant/task.html#item", context))


def _answer(item, post, *, events, now) -> tuple[list[int], dict]:
    """(levels, response) from the posted form: word levels for emphasis
    studies, the item type's form for listening forms. A form answer refused
    here keeps the playback reports its submit carried, as every refusal does."""
    if not item.study.capabilities.answers_are_choices:
        return [int(level) for level in post.get("levels", "").split(",") if level != ""], {}
    form_item = ListeningFormItem.objects.get(pk=item.form_item_id)
    words = list(Word.objects.filter(clip_id=form_item.clip_id).order_by("index").values_list("text", flat=True))
    form = answer_form(form_item, item.presentation, words, data=post)
    if not form.is_valid():
        playback_keep_refused(item=item, events=events, received_at=now)
        raise SubmissionRefused([str(error) for errors in form.errors.values() for error in errors])
    return form.levels(), form.response()


def _refused(request, item, reasons: list[str], status: int):
    if request.htmx:
        response = render(request, "participant/task.html#gate-errors", {"errors": reasons}, status=status)
        response["HX-Retarget"] = "#gate-errors"
        response["HX-Reswap"] = "innerHTML"
        return response
    task = Task.objects.select_related("study").get(pk=item.task_id)
    if task.status != Task.Status.OPEN:
        return redirect("annotation:task", slug=task.study.slug)
    return _render_item(request, task, data=request.POST, errors=reasons, status=status)


def _go(request, url: str):
    if request.htmx:
        response = HttpResponse(status=200)
        response["HX-Redirect"] = url
        return response
    return redirect(url)
