from django.contrib import admin

from annotation.admin.base import PlatformModelAdmin
from annotation.models import ListeningFormItem


@admin.register(ListeningFormItem)
class ListeningFormItemAdmin(PlatformModelAdmin):
    """Form items come from `import_form_items`; here they are read and searched."""

    list_display = ["external_id", "study", "item_type", "prompt", "clip", "second_clip"]
    list_filter = ["study", "item_type"]
    search_fields = ["external_id", "prompt", "clip__external_id", "clip__transcript"]
    list_select_related = ["study", "clip", "second_clip"]
    readonly_fields = [field.name for field in ListeningFormItem._meta.fields]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False
