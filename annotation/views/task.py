"""The annotation page: one clip at a time, playback reported, every gate on the server."""

import json

from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_POST, require_safe

from annotation.audio_links import signed_audio_url
from annotation.models import Clip, Task, TaskItem, Word
from annotation.services.assignment import task_current
from annotation.services.participants import next_step
from annotation.services.submission import SubmissionRefused, annotation_submit, max_marks, playback_record
from annotation.views.participant import participant_page
from annotation.views.participant_access import _get_item_for_participant, to_step


@require_safe
@participant_page("task")
def task_page(request, participant):
    task = task_current(participant=participant)
    if task is None:
        return to_step(participant, next_step(participant))
    return render(request, "participant/task.html", item_context(task))


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
    try:
        levels = [int(level) for level in request.POST.get("levels", "").split(",") if level != ""]
        playback_record(item=item, events=json.loads(request.POST.get("events") or "[]"))
    except (ValueError, json.JSONDecodeError):
        return _refused(request, item, ["The answer could not be read; reload the page and try again."], 400)
    try:
        result = annotation_submit(
            participant_id=item.task.participant_id,
            item_id=item.pk,
            levels=levels,
            mismatch=request.POST.get("mismatch") == "on",
        )
    except SubmissionRefused as refused:
        return _refused(request, item, refused.reasons, 409 if refused.final else 422)
    if result.task_completed:
        return _go(request, reverse("annotation:done", args=[slug]))
    if not request.htmx:
        return redirect("annotation:task", slug=slug)
    task = Task.objects.select_related("study").get(pk=item.task_id)
    return render(request, "participant/task.html#item", item_context(task))


def _refused(request, item: TaskItem, reasons: list[str], status: int):
    if request.htmx:
        response = render(request, "participant/task.html#gate-errors", {"errors": reasons}, status=status)
        response["HX-Retarget"] = "#gate-errors"
        response["HX-Reswap"] = "innerHTML"
        return response
    task = Task.objects.select_related("study").get(pk=item.task_id)
    if task.status != Task.Status.OPEN:
        return redirect("annotation:task", slug=task.study.slug)
    return render(request, "participant/task.html", item_context(task, reasons), status=status)


def _go(request, url: str):
    if request.htmx:
        response = HttpResponse(status=200)
        response["HX-Redirect"] = url
        return response
    return redirect(url)
