import json

from django import forms
from django.conf import settings


class MultipleFileInput(forms.ClearableFileInput):
    allow_multiple_selected = True


class MultipleFileField(forms.FileField):
    widget = MultipleFileInput

    def clean(self, data, initial=None):
        if not data:
            return []
        files = data if isinstance(data, (list, tuple)) else [data]
        return [super(MultipleFileField, self).clean(item, initial) for item in files]


class ImportUploadForm(forms.Form):
    archive = forms.FileField(
        required=False, help_text="A .zip holding manifest.jsonl or manifest.csv and the audio files."
    )
    folder = MultipleFileField(required=False, help_text="Or choose the corpus folder itself.")
    # Browsers send only base names; the page's script lists each file's path
    # inside the chosen folder (webkitRelativePath), in the order of the files.
    folder_paths = forms.CharField(required=False, widget=forms.HiddenInput)
    corpus_name = forms.CharField(max_length=200, help_text="A new or existing corpus.")
    skip_invalid = forms.BooleanField(
        required=False, help_text="Import the good rows and list the bad ones, instead of refusing the whole upload."
    )

    def clean(self):
        data = super().clean()
        archive, folder = data.get("archive"), data.get("folder") or []
        if bool(archive) == bool(folder):
            raise forms.ValidationError("Choose either a .zip archive or a folder.")
        size = archive.size if archive else sum(item.size for item in folder)
        if size > settings.IMPORT_MAX_ARCHIVE_BYTES:
            raise forms.ValidationError(
                f"The upload is {size} bytes; the limit is {settings.IMPORT_MAX_ARCHIVE_BYTES} (IMPORT_MAX_ARCHIVE_BYTES)."
            )
        if folder:
            data["folder_paths"] = self._folder_paths(data.get("folder_paths"), len(folder))
        return data

    def _folder_paths(self, raw: str | None, count: int) -> list[str]:
        try:
            paths = json.loads(raw or "")
        except (json.JSONDecodeError, RecursionError):
            paths = None
        if not isinstance(paths, list) or len(paths) != count or not all(isinstance(p, str) for p in paths):
            raise forms.ValidationError(
                "The browser did not send the folder's file paths; upload the folder as a .zip instead."
            )
        return paths
