"""dataset_clips_import: the clips of an imported dataset, through the corpus import.

The drafts (annotation.ingest.dataset_clips) are staged as a corpus folder (manifest.jsonl and
hard links to the audio) and imported with corpus_import, its audio checks and conversions and
its refusals; a clip already in the corpus unchanged is reused. Run inside the caller's
transaction: the caller deletes the stored files (`stored`) if that transaction fails, so a
refused import leaves neither rows nor files.
"""

import json
import re
import tempfile
from pathlib import Path

from annotation.ingest.dataset_clips import ClipDraft, DatasetProblem
from annotation.ingest.errors import ImportRefused, RowProblem
from annotation.models import Clip
from annotation.services.corpus_import import corpus_import, staging_audio_add


def dataset_clips_import(
    *, drafts: list[ClipDraft], corpus_name: str, file_name: str, stored: list[str]
) -> dict[str, Clip]:
    """The corpus's clips by draft clip id; ImportRefused (naming each record) if any is refused."""
    before = set(Clip.objects.filter(corpus__name=corpus_name).values_list("pk", flat=True))
    with tempfile.TemporaryDirectory(prefix="dataset-clips-") as folder:
        staging = Path(folder)
        rows = []
        for draft in drafts:
            staging_audio_add(staging=staging, audio=draft.audio_name, source=draft.audio)
            rows.append(json.dumps(draft.manifest_row(), ensure_ascii=False) + "\n")
        (staging / "manifest.jsonl").write_text("".join(rows), encoding="utf-8")
        try:
            corpus_import(path=staging, corpus_name=corpus_name)
        except ImportRefused as refused:
            raise ImportRefused(file_name, [_on_record(problem, drafts) for problem in refused.problems]) from None
    clips = {clip.external_id: clip for clip in Clip.objects.filter(corpus__name=corpus_name)}
    for clip in clips.values():
        if clip.pk not in before:
            stored += [clip.original_audio.name, clip.model_audio.name, clip.browser_audio.name]
    return {draft.clip_id: clips[draft.clip_id] for draft in drafts}


def _on_record(problem: RowProblem, drafts: list[ClipDraft]) -> DatasetProblem:
    """A problem of the staged manifest's line n, said of the record it came from."""

    def record(match: re.Match) -> str:
        number = int(match.group(1))
        return drafts[number - 1].where if 0 < number <= len(drafts) else match.group(0)

    reason = re.sub(r"line (\d+)", record, problem.reason)
    if 0 < problem.line <= len(drafts):
        draft = drafts[problem.line - 1]
        return draft.problem(problem.field, reason)
    return DatasetProblem(problem.line, "manifest", problem.clip_id, problem.field, reason, skippable=False)
