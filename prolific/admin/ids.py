"""Admin fields that hold Prolific ids (a call's body, a webhook's payload), shown only to who
sees_prolific_ids (annotation.participant_names); everyone else reads PROLIFIC_IDS_HIDDEN in
their place. The bodies cannot be cut down to their Prolific-free parts: the ids sit anywhere in
them (csv_bonuses, participant_ids, each submission's participant_id)."""

from django.contrib import admin

from annotation.participant_names import PROLIFIC_IDS_HIDDEN, sees_prolific_ids

HIDDEN_SUFFIX = "_hidden"


def hidden_field(description: str):
    """The stand-in for a field that holds Prolific ids: `<field>_hidden = hidden_field("...")`."""

    @admin.display(description=description)
    def hidden(self, obj) -> str:
        return PROLIFIC_IDS_HIDDEN

    return hidden


class HidesProlificIds:
    """A read-only ModelAdmin mixin: each field named in `prolific_id_fields` is swapped for its
    `<field>_hidden` stand-in (hidden_field) unless the user sees Prolific ids."""

    prolific_id_fields: tuple[str, ...] = ()

    def _shown(self, request, fields) -> list[str]:
        if sees_prolific_ids(request.user):
            return list(fields)
        return [f"{name}{HIDDEN_SUFFIX}" if name in self.prolific_id_fields else name for name in fields]

    def get_fields(self, request, obj=None):
        return self._shown(request, super().get_fields(request, obj))

    def get_readonly_fields(self, request, obj=None):
        return self._shown(request, super().get_readonly_fields(request, obj))
