"""A label set's rows as the files researchers open: JSONL, CSV, a Hugging Face audiofolder's
metadata, Praat TextGrids, and the data card. Pure: plain dicts in, text or files out.

A clip row (as stored on a finalized set, see evaluation.models.LabelSetClip.as_row):
    {"clip_id", "study", "split", "language", "variety", "speaker", "emotion", "arousal",
     "scale_step", "duration", "annotators": [opaque ids],
     "words": [{"index", "text", "start", "end", "binary", "scalar", "levels": [one per annotator]}]}
A set built with an annotator model (evaluation.stats.annotator_models) also has, per word,
"posterior" (P(truly emphasized)), and per clip "annotator_reliability": [reliability, SE] of each
annotator in the order of "annotators"; the files then get the extra columns MODEL_WORD_COLUMNS
and MODEL_CLIP_COLUMNS. A set without one has neither, and its files are as before.

Everything is written in one canonical form (sorted keys, no timestamps), so the same set gives
the same bytes on any database.
"""

import hashlib
import json
import re
from collections.abc import Iterable, Iterator
from pathlib import Path

# Everything a training script needs without a join (issue 21): `levels` maps each opaque
# annotator id of the clip to the level they gave the word.
WORD_COLUMNS = (
    "clip_id",
    "split",
    "language",
    "variety",
    "speaker",
    "emotion",
    "word_index",
    "word",
    "start",
    "end",
    "binary",
    "scalar",
    "annotators",
    "study",
    "arousal",
    "scale_step",
    "levels",
)
CLIP_COLUMNS = (
    "clip_id",
    "split",
    "language",
    "variety",
    "speaker",
    "emotion",
    "arousal",
    "scale_step",
    "duration",
    "words",
    "binary",
    "scalar",
    "annotators",
)
# With an annotator model: the word's posterior, and each annotator's reliability and its SE by id.
MODEL_WORD_COLUMNS = ("posterior", "reliability", "reliability_se")
# With an annotator model: the posteriors in word order, the reliabilities in annotator order.
MODEL_CLIP_COLUMNS = ("posterior", "annotator_reliability", "annotator_reliability_se")


def has_model(clip: dict) -> bool:
    return "annotator_reliability" in clip


# Raw exports: one row per annotator, clip and word (emphasis studies) or per answer (listening
# forms). `decision` is the researcher's decision on the participant (rejected ones are kept here,
# unlike in label sets); `attention_check` marks the answers to attention-check items.
RAW_COLUMNS = (
    "study",
    "clip_id",
    "language",
    "annotator",
    "decision",
    "completed",
    "attention_check",
    "attention_passed",
    "word_index",
    "word",
    "level",
    "mismatch_reported",
    "seconds_spent",
    "submitted_at",
)
FORM_RAW_COLUMNS = (
    "study",
    "item_id",
    "item_type",
    "clip_id",
    "second_clip_id",
    "annotator",
    "decision",
    "completed",
    "attention_check",
    "attention_passed",
    "answer",
    "levels",
    "seconds_spent",
    "submitted_at",
)


# Raw exports' participant table: one row per participant of the study, those screened out
# before they annotated included, with how they got through the screening (the questions, the
# sound check and the headphone check). `*_scores` are a test's right answers per try ("5/6;6/6");
# `headphone_trials` lists every answer (test, try, trial, the interval to find and the one chosen).
PARTICIPANT_TABLE_COLUMNS = (
    "study",
    "annotator",
    "decision",
    "completed",
    "screened_out",
    "entered_at",
    "screening_answers",
    "sound_check_passed",
    "headphone_check",
    "headphone_level_set",
    "headphone_check_passed",
    "huggins_scores",
    "antiphase_scores",
    "headphone_self_report",
    "headphone_trials",
)


def canonical_line(row: dict) -> str:
    return json.dumps(row, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def word_rows(clips: Iterable[dict]) -> Iterator[dict]:
    for clip in clips:
        for word in clip["words"]:
            yield {
                "clip_id": clip["clip_id"],
                "split": clip["split"],
                "language": clip["language"],
                "variety": clip["variety"],
                "speaker": clip["speaker"],
                "emotion": clip["emotion"],
                "word_index": word["index"],
                "word": word["text"],
                "start": word["start"],
                "end": word["end"],
                "binary": int(word["binary"]),
                "scalar": word["scalar"],
                "annotators": len(clip["annotators"]),
                "study": clip["study"],
                "arousal": clip["arousal"],
                "scale_step": clip["scale_step"],
                "levels": dict(zip(clip["annotators"], word["levels"], strict=True)),
                **(_model_word(clip, word) if has_model(clip) else {}),
            }


def _model_word(clip: dict, word: dict) -> dict:
    pairs = list(zip(clip["annotators"], clip["annotator_reliability"], strict=True))
    return {
        "posterior": word.get("posterior"),
        "reliability": {annotator: values[0] for annotator, values in pairs},
        "reliability_se": {annotator: values[1] for annotator, values in pairs},
    }


def model_clip_columns(clip: dict, *, as_json: bool = False) -> dict:
    values = {
        "posterior": [w.get("posterior") for w in clip["words"]],
        "annotator_reliability": [pair[0] for pair in clip["annotator_reliability"]],
        "annotator_reliability_se": [pair[1] for pair in clip["annotator_reliability"]],
    }
    return {key: json.dumps(value) for key, value in values.items()} if as_json else values


def clip_summary_rows(clips: Iterable[dict]) -> Iterator[dict]:
    """One row per clip, the word lists as JSON arrays (for CSV)."""
    for clip in clips:
        words = clip["words"]
        yield {
            **{key: clip[key] for key in CLIP_COLUMNS if key in clip and key not in ("words", "annotators")},
            "words": json.dumps([w["text"] for w in words], ensure_ascii=False),
            "binary": json.dumps([int(w["binary"]) for w in words]),
            "scalar": json.dumps([w["scalar"] for w in words]),
            "annotators": len(clip["annotators"]),
            **(model_clip_columns(clip, as_json=True) if has_model(clip) else {}),
        }


def csv_cells(row: dict, columns: tuple[str, ...]) -> dict:
    """The row's cells for csv.DictWriter: None is written as an empty cell, a dict or list as JSON."""
    return {key: _cell(row.get(key)) for key in columns}


def _cell(value):
    if value is None:
        return ""
    if isinstance(value, dict | list):
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return value


def audiofolder_metadata(clip: dict, file_name: str, *, word_times: bool = True) -> dict:
    """One line of an audiofolder split's metadata.jsonl (`file_name` relative to that file).

    Hugging Face `datasets` infers each split's column types from its own metadata file and
    refuses splits whose types differ, and a column holding only nulls has a type of its own. So
    no column may be null throughout a split: `scale_step` is 0 for validation and test clips (in
    no training subset), and the word times are left out (`word_times=False`) unless every clip
    of the set has them."""
    words = clip["words"]
    row = {
        "file_name": file_name,
        "clip_id": clip["clip_id"],
        "language": clip["language"],
        "variety": clip["variety"],
        "speaker": clip["speaker"],
        "emotion": clip["emotion"],
        "arousal": clip["arousal"],
        "scale_step": clip["scale_step"] or 0,
        "words": [w["text"] for w in words],
        "binary": [int(w["binary"]) for w in words],
        "scalar": [None if w["scalar"] is None else float(w["scalar"]) for w in words],  # None: binary only
        "annotators": len(clip["annotators"]),
        **(model_clip_columns(clip, as_json=False) if has_model(clip) else {}),
    }
    if word_times:
        row |= {"start": [float(w["start"]) for w in words], "end": [float(w["end"]) for w in words]}
    return row


def all_words_timed(clip: dict) -> bool:
    """Every word has a start and an end (what the audiofolder's time columns need)."""
    return all(w["start"] is not None and w["end"] is not None for w in clip["words"])


def safe_file_stem(clip_id: str) -> str:
    """A file name for the clip, safe in any zip and file system; ids that had to be changed get
    a short hash of the original, so two ids never share a name."""
    safe = re.sub(r"[^A-Za-z0-9._-]", "_", clip_id).strip(".")[:150] or "clip"
    if safe == clip_id:
        return safe
    return f"{safe}-{hashlib.sha256(clip_id.encode()).hexdigest()[:10]}"


def has_word_times(clip: dict) -> bool:
    """Every word has a start before its end (what a TextGrid's intervals need)."""
    words = clip["words"]
    return bool(words) and all(w["start"] is not None and w["end"] is not None and w["end"] > w["start"] for w in words)


def write_textgrid(clip: dict, path: Path) -> None:
    """Three interval tiers over the clip's words: the words, the binary label (1 or 0) and the
    scalar label. Needs word times (see has_word_times)."""
    from praatio import textgrid  # imported here: only the TextGrid export needs it

    duration = max(float(clip["duration"]), *(w["end"] for w in clip["words"]))
    grid = textgrid.Textgrid()
    tiers = {
        "words": lambda w: w["text"],
        "binary": lambda w: str(int(w["binary"])),
        "scalar": lambda w: "" if w["scalar"] is None else f"{w['scalar']:.4f}",
    }
    for name, label in tiers.items():
        entries = [(w["start"], w["end"], label(w)) for w in clip["words"]]
        grid.addTier(textgrid.IntervalTier(name, entries, 0.0, duration))
    grid.save(str(path), format="long_textgrid", includeBlankSpaces=True, reportingMode="error")


def data_card(
    *,
    title: str,
    facts: dict,
    counts: dict[str, dict[str, int]],
    agreement: dict,
    files: str,
    left_out: Iterable[str] = (),
) -> str:
    """The README of an export: what the set is, how it was made, how big it is, how much the
    annotators agreed, what was left out, and what the files hold."""
    lines = [f"# {title}", ""]
    lines += [f"- **{key}**: {value}" for key, value in facts.items()]
    if counts:
        splits = sorted({split for per_language in counts.values() for split in per_language})
        lines += [
            "",
            "## Clips per language and split",
            "",
            "| language | " + " | ".join(splits) + " | all |",
            "|---|" + "---|" * (len(splits) + 1),
        ]
        for language, per_split in sorted(counts.items()):
            cells = [str(per_split.get(split, 0)) for split in splits]
            lines.append(f"| {language or '(none)'} | " + " | ".join(cells) + f" | {sum(per_split.values())} |")
    if agreement:
        lines += ["", "## Agreement of the annotations in this set", ""]
        lines += [f"- {name}: {value}" for name, value in agreement.items()]
    left_out = list(left_out)
    if left_out:
        lines += ["", "## Left out", ""]
        lines += [f"- {line}" for line in left_out]
    lines += ["", "## Files", "", files.strip(), ""]
    return "\n".join(lines)
