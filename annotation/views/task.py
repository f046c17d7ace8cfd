"""The annotation page: one clip at a time, playback reported, every gate on the server."""

import json

from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import translation
from django.utils.translation import gettext as _
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_POST, require_safe

from annotation.audio_links import signed_audio_url
from annotation.forms_participant import answer_form
from annotation.models import Clip, FormItem, Study, Task, TaskItem, Word
from annotation.services.assignment import task_current
from annotation.services.participants import next_step
from annotation.services.submission import SubmissionRefused, annotation_submit, max_marks, playback_record
from annotation.views.form_items import form_item_context
from annotation.views.participant import participant_page
from annotation.views.participant_access import _get_item_for_participant, to_step


@require_safe
@participant_page("task")
def task_page(request, participant):
    task = task_current(participant=participant)
    if task is None:
        return to_step(participant, next_step(participant))
    return _render_item(request, task)


def _render_item(request, task: Task, *, data=None, errors=None, status: int = 200, partial: bool = False):
    if task.study.kind == Study.Kind.FORM:
        item = task.items.filter(status=TaskItem.Status.PENDING).order_by("position").first()
        context = form_item_context(task, item, data=data, errors=errors)
        template = "participant/form_task.html"
    else:
        context, template = item_context(task, errors), "participant/task.html"
    return render(request, template + ("#item" if partial else ""), context, status=status)


def item_context(task: Task, errors: list[str] | None = None) -> dict:
    study = task.study
    items = list(task.items.values_list("pk", "position", "status", "clip_id", "word_count"))
    pk, position, _, clip_id, word_count = next(row for row in items if row[2] == TaskItem.Status.PENDING)
    clip = Clip.objects.only("browser_audio", "transcript").get(pk=clip_id)
    words = list(Word.objects.filter(clip_id=clip_id).order_by("index").values_list("index", "text"))
    return {
        "study": study,
        "item_id": pk,
        "number": position + 1,
        "total": len(items),
        "words": words,
        "audio_url": signed_audio_url(clip.browser_audio.name),
        "min_marks": study.min_marked_words,
        "max_marks": max_marks(
            word_count=word_count, min_marked=study.min_marked_words, max_fraction=study.max_marked_fraction
        ),
        "errors": errors or [],
    }


@require_POST
def task_events(request, slug, item_id):
    """Playback events from the page, as they happen."""
    item = _get_item_for_participant(request, slug, item_id)
    try:
        playback_record(item=item, events=json.loads(request.body or b"[]"))
    except (ValueError, json.JSONDecodeError) as error:
        return HttpResponse(str(error), status=400, content_type="text/plain")
    return HttpResponse(status=204)


@require_POST
@never_cache
def task_submit(request, slug, item_id):
    item = _get_item_for_participant(request, slug, item_id)
    with translation.override(item.task.study.interface_language):
        return _submit(request, slug, item)


def _submit(request, slug, item: TaskItem):
    try:
        events = json.loads(request.POST.get("events") or "[]")
        levels, response = _answer(item, request.POST)
    except (ValueError, json.JSONDecodeError):
        return _refused(request, item, [_("The answer could not be read; reload the page and try again.")], 400)
    except SubmissionRefused as refused:
        return _refused(request, item, refused.reasons, 422)
    try:
        result = annotation_submit(
            participant_id=item.task.participant_id,
            item_id=item.pk,
            levels=levels,
            response=response,
            mismatch=request.POST.get("mismatch") == "on",
            events=events,
        )
    except ValueError:
        return _refused(request, item, [_("The answer could not be read; reload the page and try again.")], 400)
    except SubmissionRefused as refused:
        return _refused(request, item, refused.reasons, 409 if refused.final else 422)
    if result.task_completed:
        return _go(request, reverse("annotation:done", args=[slug]))
    if not request.htmx:
        return redirect("annotation:task", slug=slug)
    return _render_item(request, item.task, partial=True)


def _answer(item: TaskItem, post) -> tuple[list[int], dict]:
    """(levels, response) from the posted form: word levels for emphasis
    studies, the item type's form for listening forms."""
    if not item.study_item_id or item.study_item.form_item_id is None:
        return [int(level) for level in post.get("levels", "").split(",") if level != ""], {}
    form_item = FormItem.objects.get(pk=item.study_item.form_item_id)
    words = list(Word.objects.filter(clip_id=form_item.clip_id).order_by("index").values_list("text", flat=True))
    form = answer_form(form_item, item.presentation, words, data=post)
    if not form.is_valid():
        raise SubmissionRefused([str(error) for errors in form.errors.values() for error in errors])
    return form.levels(), form.response()


def _refused(request, item: TaskItem, reasons: list[str], status: int):
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
