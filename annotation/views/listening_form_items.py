"""The listening-form page: one item at a time, answered with a server-rendered form."""

from annotation.answer_forms import answer_form
from annotation.audio_links import signed_audio_url
from annotation.models import ListeningFormItem, Task, TaskItem, Word


def form_item_context(task: Task, item: TaskItem, data=None, errors=None) -> dict:
    form_item = ListeningFormItem.objects.select_related("clip", "second_clip").get(study_item__pk=item.study_item_id)
    words = list(Word.objects.filter(clip_id=form_item.clip_id).order_by("index").values_list("text", flat=True))
    total = task.items.count()
    return {
        "study": task.study,
        "item_id": item.pk,
        "number": item.position + 1,
        "total": total,
        "form_item": form_item,
        "form": answer_form(form_item, item.presentation, words, data=data),
        "clips": _clips_in_order(form_item, item.presentation),
        "transcript": form_item.clip.transcript if form_item.item_type == ListeningFormItem.Type.SINGLE_CHOICE else "",
        "errors": errors or [],
    }


def _clips_in_order(form_item: ListeningFormItem, presentation: dict) -> list[dict]:
    """The clips as this participant hears them; track 0 is always the item's clip A."""
    by_key = {"a": (0, form_item.clip), "b": (1, form_item.second_clip)}
    order = presentation.get("clip_order") or ["a"]
    return [
        {"track": by_key[key][0], "url": signed_audio_url(by_key[key][1].browser_audio.name), "number": number}
        for number, key in enumerate(order, start=1)
    ]
