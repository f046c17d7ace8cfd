"""What an app on a higher floor adds to a lower floor's admin pages: links among a change page's
object tools, actions on a list, and sections of a page of its own (the top-ups page's growing of
the study on Prolific).

A floor names nothing above it (docs/development.md, "Layout"): the study page may not name
evaluation's reports, nor the label set list the model zoo's launch form, not even in a template or
a permission's name, where the import contracts cannot see it. The app above registers here, in the
admin module that serves what the link leads to (as `admin.register` does, when the admin loads),
and PlatformModelAdmin (annotation/admin/base.py) shows on a page what is registered for its model.
Models are named by their label, "app_label.modelname", so that this module imports none.
"""

from collections import defaultdict
from collections.abc import Callable

STUDY_TOPUPS = "annotation.study.topup"  # the study's top-ups page (annotation/admin/study.py)

_object_tools: dict[str, list[str]] = defaultdict(list)
_list_actions: dict[str, list[tuple[Callable, tuple[str, ...]]]] = defaultdict(list)
_page_sections: dict[str, list[tuple[str, Callable]]] = defaultdict(list)


def object_tools_add(*, model: str, template: str) -> None:
    """Show `template` (<li> items, rendered with the change page's context) among the object
    tools of `model`'s change page."""
    if template not in _object_tools[model]:
        _object_tools[model].append(template)


def object_tools(*, model: str) -> list[str]:
    """The templates registered for `model`'s change page, in the order they were added."""
    return list(_object_tools[model])


def list_action_add(*, model: str, action: Callable, permissions: tuple[str, ...]) -> None:
    """Offer `action` (an admin action: `action(modeladmin, request, queryset)`) on `model`'s list
    to the users who hold every one of `permissions`."""
    if all(added is not action for added, _ in _list_actions[model]):
        _list_actions[model].append((action, permissions))


def list_actions(*, model: str, user) -> list[Callable]:
    """The actions registered for `model`'s list that `user` may take."""
    return [action for action, permissions in _list_actions[model] if user.has_perms(permissions)]


def page_section_add(*, page: str, template: str, context: Callable) -> None:
    """Show `template` on `page` (one of the page names above, which the page's view gives),
    rendered with `context(request, obj)` (a dict), where that returns one; None leaves it out (the
    user may not act there, or the object has nothing to show)."""
    if all(added != template for added, _ in _page_sections[page]):
        _page_sections[page].append((template, context))


def page_sections(*, page: str, request, obj) -> list[tuple[str, dict]]:
    """(template, context) of each section registered for `page` that has something to show."""
    sections = ((template, context(request, obj)) for template, context in _page_sections[page])
    return [(template, context) for template, context in sections if context is not None]
