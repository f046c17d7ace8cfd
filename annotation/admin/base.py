"""The one ModelAdmin every admin of the platform stands on (annotation's, evaluation's, modelzoo's,
and the accounts' and API tokens' pages, re-registered in annotation.admin.accounts).

Django's changelist applies any lookup of the query string to the model's own fields: whoever may
view a list could ask `?prolific_pid__regex=^[0-7]` and read a hidden value off the row count, one
bit per request (a Prolific id in about a hundred requests, a signing secret in a few hundred). Here
a changelist accepts only what its admin declares: the parameters of its `list_filter` (each filter
takes its own), the `date_hierarchy` drill-down and the raw-id popups' `limit_choices_to`. Anything
else is refused with 400 (Django's DisallowedModelAdminLookup, a SuspiciousOperation, logged to
django.security) before a query runs. Searches are the admin's `search_fields` and nothing else.

The fields that hold secrets or Prolific ids (NEVER_FILTERED, plus an admin's
`prolific_id_fields`) may be declared in no list filter, date drill-down, search or sortable column:
a system check (platform.E001) refuses such an admin at start-up. The pages that let who holds the
participant permission search by Prolific id add that search per request (get_search_fields), never
in the class's declaration.
"""

from functools import cache

from django.contrib import admin
from django.contrib.admin import widgets
from django.contrib.admin.exceptions import DisallowedModelAdminLookup
from django.contrib.admin.views.main import ChangeList
from django.core import checks
from django.db.models.constants import LOOKUP_SEP

from annotation.page_extensions import list_actions, object_tools

# Fields named so hold a secret (signing secrets, API tokens, password hashes, a participant's
# resume key) or a Prolific id, or a body or payload that carries Prolific ids.
NEVER_FILTERED = frozenset(
    {
        "prolific_pid",
        "prolific_session_id",
        "access_key",
        "secret",
        "key",
        "password",
        "payload",
        "request_body",
        "response_body",
        "body_sent",
    }
)


class DeclaredLookupsOnly:
    """A ChangeList mixin: after the declared filters have taken their parameters, any parameter
    left over is refused (Django would pass it to QuerySet.filter)."""

    def get_filters(self, request):
        specs, has_filters, remaining, may_have_duplicates, has_active = super().get_filters(request)
        undeclared = [key for key in remaining if not self._declared_elsewhere(key, request.GET.getlist(key))]
        if undeclared:
            raise DisallowedModelAdminLookup(
                f"{self.model._meta.label} list: filtering by {', '.join(sorted(undeclared))} is not offered"
            )
        return specs, has_filters, remaining, may_have_duplicates, has_active

    def _declared_elsewhere(self, key: str, values: list[str]) -> bool:
        # The date drill-down turns its year/month/day into these two bounds itself.
        if self.date_hierarchy and key in (f"{self.date_hierarchy}__gte", f"{self.date_hierarchy}__lt"):
            return True
        return _raw_id_popup_lookup(self.model, key, values)


def _raw_id_popup_lookup(model, key: str, values: list[str]) -> bool:
    """A raw-id popup's filter from a ForeignKey's limit_choices_to, with its very value (Django
    allows these too)."""
    for lookups in model._meta.related_fkey_lookups:
        params = widgets.url_params_from_lookup_dict(lookups() if callable(lookups) else lookups)
        if key in params and values == [params[key]]:
            return True
    return False


@cache
def declared_lookups_changelist(changelist_class: type[ChangeList]) -> type[ChangeList]:
    """`changelist_class` refusing undeclared lookups (an admin may bring its own ChangeList)."""
    return type(f"DeclaredLookups{changelist_class.__name__}", (DeclaredLookupsOnly, changelist_class), {})


class PlatformModelAdmin(admin.ModelAdmin):
    """The platform's ModelAdmin: only declared lookups, and never a filter over NEVER_FILTERED."""

    prolific_id_fields: tuple[str, ...] = ()

    def get_actions(self, request):
        return {**super().get_actions(request), **self.actions_from_above(request)}

    def actions_from_above(self, request) -> dict:
        """The list actions that apps on higher floors add to this model (annotation.page_extensions)."""
        actions = [
            self.get_action(action) for action in list_actions(model=self.model._meta.label_lower, user=request.user)
        ]
        return {name: (func, name, description) for func, name, description in actions}

    def change_view(self, request, object_id, form_url="", extra_context=None):
        # The object tools that apps on higher floors add (annotation.page_extensions); the page's
        # template includes them where its own links are.
        tools = object_tools(model=self.model._meta.label_lower)
        return super().change_view(
            request, object_id, form_url, {"object_tools_from_above": tools, **(extra_context or {})}
        )

    def get_changelist(self, request, **kwargs):
        return declared_lookups_changelist(super().get_changelist(request, **kwargs))

    def check(self, **kwargs):
        return [*super().check(**kwargs), *self._check_never_filtered()]

    def _check_never_filtered(self) -> list[checks.Error]:
        protected = NEVER_FILTERED | set(self.prolific_id_fields)
        declared = [("list_filter", path) for path in _filter_paths(self.list_filter)]
        declared += [("search_fields", name.lstrip("^=@")) for name in self.search_fields]
        declared += [("date_hierarchy", self.date_hierarchy)] if self.date_hierarchy else []
        declared += [("ordering", name.lstrip("-")) for name in self.ordering or () if isinstance(name, str)]
        declared += [("list_display", path) for path in self._sortable_paths()]
        return [
            checks.Error(
                f"{type(self).__name__}.{option} names {path!r}, which holds a secret or Prolific ids: "
                "it may be shown to who may see it, never filtered, searched or sorted by",
                obj=type(self),
                id="platform.E001",
            )
            for option, path in declared
            if protected & set(path.split(LOOKUP_SEP))
        ]

    def _sortable_paths(self) -> list[str]:
        """The fields a click on a column header sorts by."""
        paths = []
        for name in self.list_display:
            if not isinstance(name, str):
                continue
            attribute = getattr(self, name, None) or getattr(self.model, name, None)
            ordering = getattr(attribute, "admin_order_field", None)
            paths.append(str(ordering).lstrip("-") if isinstance(ordering, str) else name)
        return paths


def _filter_paths(list_filter) -> list[str]:
    """The field paths of list_filter's entries (a SimpleListFilter class is code: it names none)."""
    paths = []
    for entry in list_filter:
        if isinstance(entry, str):
            paths.append(entry)
        elif isinstance(entry, (list, tuple)) and isinstance(entry[0], str):
            paths.append(entry[0])
    return paths
