"""Read items.jsonl into listening-form item drafts, with the line each came from. No database.

Two layouts, told apart row by row:

- StressTest samples (a row with "possible_answers"): "transcription", "audio" or "audio_path"
  (a path, or an object with "path" as a Hugging Face export writes it), "possible_answers",
  "label" (the index of the correct answer, or its text), "stress_pattern" {"binary", "indices",
  "words"}, "metadata", optional "id" (default: the audio file name without its extension). Each
  row gives a single_choice item and, with `with_ssd`, a stressed_words item "<id>-ssd" on the
  same clip whose gold is the binary vector.
- the generic layout (a row with "type"): "id", "type", "audio", "audio_b" (pairwise only),
  "question", "options", "gold", "settings", "transcript", "transcript_b", "words" (the word list of
  the clip of "audio", for languages written without spaces), "language", "metadata".

A row that is wrong in any way gives one problem and no item. Problems across rows (duplicate ids,
one audio file given two transcripts) are found by annotation.services.form_items_import.
"""

import json
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from annotation.ingest.errors import RowProblem, SourceRefused
from annotation.ingest.source import relative_path_problem
from annotation.ingest.words import split_transcript, written_without_spaces
from annotation.models import ListeningFormItem

TYPES = tuple(ListeningFormItem.Type.values)
GENERIC_FIELDS = {
    "id",
    "type",
    "audio",
    "audio_b",
    "question",
    "options",
    "gold",
    "settings",
    "transcript",
    "transcript_b",
    "words",
    "language",
    "metadata",
}
STRESSTEST_FIELDS = {
    "id",
    "transcription",
    "audio",
    "audio_path",
    "possible_answers",
    "label",
    "stress_pattern",
    "metadata",
    "language",
    "question",
}
_MAX_ID = 200  # ListeningFormItem.external_id
# An items file is read whole; a form of thousands of items stays far below these.
MAX_ITEMS_FILE_BYTES = 10 * 1024 * 1024
MAX_FIELD_CHARS = 5000  # a question, an option, a transcript, the metadata (as JSON)


@dataclass(frozen=True)
class ItemProblem(RowProblem):
    """A RowProblem that names the item, not a clip."""

    def __str__(self) -> str:
        where = f"line {self.line}" + (f" (item {self.clip_id!r})" if self.clip_id else "")
        return f"{where}{', ' + self.field if self.field else ''}: {self.reason}"


@dataclass
class ItemDraft:
    line: int
    external_id: str
    item_type: str
    audio: str
    transcript: str = ""  # of `audio`; empty: from another row, else from the file name
    words: list | None = None  # of `audio`; None: the transcript split at spaces
    audio_b: str = ""
    transcript_b: str = ""
    language: str = ""
    prompt: str = ""
    options: list = field(default_factory=list)
    settings: dict = field(default_factory=dict)
    gold: object = None
    metadata: dict = field(default_factory=dict)


class _Bad(Exception):
    def __init__(self, field_name: str, reason: str):
        super().__init__(reason)
        self.field_name, self.reason = field_name, reason


def read_items(path: Path, *, with_ssd: bool = False, language: str = "") -> tuple[list[ItemDraft], list[ItemProblem]]:
    drafts, problems = [], []
    size = path.stat().st_size
    if size > MAX_ITEMS_FILE_BYTES:
        raise SourceRefused(f"{path.name} is {size} bytes; the limit is {MAX_ITEMS_FILE_BYTES}")
    try:
        text = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as error:
        raise SourceRefused(f"{path.name}: not UTF-8 text (byte {error.start})") from None
    for line, row_text in enumerate(text.splitlines(), start=1):
        if not row_text.strip():
            continue
        item_id = ""
        try:
            raw = json.loads(row_text)
            if not isinstance(raw, dict):
                raise _Bad("", "a row must be a JSON object")
            item_id = _shown_id(raw)[:_MAX_ID]
            _check_sizes(raw)
            drafts += _row_drafts(line, raw, with_ssd, language)
        except json.JSONDecodeError as error:
            problems.append(ItemProblem(line, "", "", f"not valid JSON ({error.msg})"))
        except RecursionError:
            problems.append(ItemProblem(line, "", "", "not valid JSON (nested too deeply)"))
        except _Bad as bad:
            problems.append(ItemProblem(line, item_id, bad.field_name, bad.reason))
    if not drafts and not problems:
        raise SourceRefused(f"{path.name}: no rows")
    return drafts, problems


def _check_sizes(raw: dict) -> None:
    for name, value in raw.items():
        size = len(value) if isinstance(value, str) else len(json.dumps(value, ensure_ascii=False))
        if size > MAX_FIELD_CHARS:
            raise _Bad(name, f"too long ({size} characters; at most {MAX_FIELD_CHARS})")


def _row_drafts(line: int, raw: dict, with_ssd: bool, language: str) -> list[ItemDraft]:
    if "type" in raw:
        return [_generic(line, raw, language)]
    if "possible_answers" in raw:
        return _stresstest(line, raw, with_ssd, language)
    raise _Bad("type", 'unknown layout: give "type" (generic layout) or "possible_answers" (StressTest layout)')


def _stresstest(line: int, raw: dict, with_ssd: bool, language: str) -> list[ItemDraft]:
    audio = _audio(raw.get("audio", raw.get("audio_path")), "audio")
    transcript = _text(raw, "transcription", required=True)
    answers = _options(raw.get("possible_answers"), "possible_answers")
    if len(answers) < 2:
        raise _Bad("possible_answers", f"needs at least 2 answers, got {len(answers)}")
    label = raw.get("label")
    gold = answers.index(label) if isinstance(label, str) and label in answers else label
    _check_index(gold, answers, "label")
    extra = {
        key: value
        for key, value in raw.items()
        if key not in STRESSTEST_FIELDS and isinstance(value, (str, int, float, bool))
    }
    common = {
        "audio": audio,
        "transcript": transcript,
        "language": _text(raw, "language") or language,
        "metadata": {**extra, **_dict(raw, "metadata")},
    }
    item_id = _item_id(raw.get("id", PurePosixPath(audio).stem))
    drafts = [
        ItemDraft(
            line,
            item_id,
            ListeningFormItem.Type.SINGLE_CHOICE,
            prompt=_text(raw, "question"),
            options=answers,
            gold=gold,
            **common,
        )
    ]
    if with_ssd:
        binary = _stress_vector(raw.get("stress_pattern"), transcript)
        drafts.append(ItemDraft(line, f"{item_id}-ssd", ListeningFormItem.Type.STRESSED_WORDS, gold=binary, **common))
    return drafts


def _stress_vector(pattern, transcript: str) -> list[int]:
    if not isinstance(pattern, dict) or "binary" not in pattern:
        raise _Bad("stress_pattern", "--with-ssd needs stress_pattern.binary (0 or 1 for each word)")
    binary = _word_vector(pattern["binary"], transcript, "stress_pattern.binary")
    indices = pattern.get("indices")  # redundant with binary, so a disagreement means a broken row
    if indices is not None and indices != [index for index, value in enumerate(binary) if value]:
        raise _Bad("stress_pattern", f"indices {indices} do not match the binary vector {binary}")
    return binary


def _generic(line: int, raw: dict, language: str) -> ItemDraft:
    unknown = sorted(set(raw) - GENERIC_FIELDS)
    if unknown:
        known = ", ".join(sorted(GENERIC_FIELDS))
        raise _Bad(unknown[0], f"unknown field {unknown[0]!r}; the generic layout has {known}")
    item_type = raw["type"]
    if item_type not in TYPES:
        raise _Bad("type", f"unknown item type {item_type!r}; expected one of {', '.join(TYPES)}")
    if "id" not in raw:
        raise _Bad("id", "missing id")
    draft = ItemDraft(
        line,
        _item_id(raw["id"]),
        item_type,
        audio=_audio(raw.get("audio"), "audio"),
        transcript=_text(raw, "transcript"),
        transcript_b=_text(raw, "transcript_b"),
        words=_words(raw),
        language=_text(raw, "language") or language,
        prompt=_text(raw, "question"),
        options=_options(raw.get("options", []), "options"),
        settings=_dict(raw, "settings"),
        gold=raw.get("gold"),
        metadata=_dict(raw, "metadata"),
    )
    if draft.settings.get("attention_check") and draft.gold is None:
        raise _Bad("gold", "an attention-check item needs a gold answer")
    if item_type == ListeningFormItem.Type.PAIRWISE:
        draft.audio_b = _audio(raw.get("audio_b"), "audio_b", missing="a pairwise item needs audio_b (clip B)")
        draft.transcript_b = draft.transcript_b or draft.transcript  # an A/B pair usually says one sentence twice
    elif "audio_b" in raw:
        raise _Bad("audio_b", f"audio_b is only for pairwise items, not {item_type}")
    CHECKS[item_type](draft)
    return draft


def _check_single_choice(draft: ItemDraft) -> None:
    if len(draft.options) < 2:
        raise _Bad("options", f"a single_choice item needs at least 2 options, got {len(draft.options)}")
    _check_index(draft.gold, draft.options, "gold")


def _check_pairwise(draft: ItemDraft) -> None:
    _no_options(draft)
    allowed = ["a", "b", "none"] if draft.settings.get("allow_tie") else ["a", "b"]
    if draft.gold is not None and draft.gold not in allowed:
        raise _Bad("gold", f"gold {draft.gold!r} must be one of {allowed}")


def _check_rating(draft: ItemDraft) -> None:
    values = draft.settings.get("values")
    if values is not None and (
        not isinstance(values, list) or len(values) != len(draft.options) or not all(map(_is_number, values))
    ):
        raise _Bad("settings", "settings.values must be one number for each option")
    if draft.gold is not None and not _is_number(draft.gold):
        raise _Bad("gold", f"gold {draft.gold!r} must be a number")


def _check_stance(draft: ItemDraft) -> None:
    _no_options(draft)
    settings = draft.settings
    definitions = settings.pop("definitions", None) or {}
    if not isinstance(definitions, dict):
        raise _Bad("settings", 'settings.definitions must be an object {"positive": ..., "negative": ...}')
    for pole in ("positive", "negative"):
        if not isinstance(settings.get(pole), str) or not settings[pole].strip():
            raise _Bad("settings", "a stance item needs its two poles: settings.positive and settings.negative")
        if definitions.get(pole):
            settings[f"{pole}_definition"] = str(definitions[pole])
    settings.setdefault("dimension", f"{settings['positive']} / {settings['negative']}")
    if draft.gold is not None and draft.gold not in ("P", "N"):
        raise _Bad("gold", f'gold {draft.gold!r} must be "P" (positive pole) or "N" (negative pole)')


def _check_stressed_words(draft: ItemDraft) -> None:
    _no_options(draft)
    if not draft.transcript:
        raise _Bad("transcript", "a stressed_words item needs the transcript whose words are marked")
    if draft.words is None and written_without_spaces(draft.language):
        raise _Bad("words", f'{draft.language!r} is written without spaces: give the clip\'s word list in "words"')
    if draft.gold is not None:
        draft.gold = _word_vector(draft.gold, draft.transcript, "gold", draft.words)


CHECKS = {
    ListeningFormItem.Type.SINGLE_CHOICE: _check_single_choice,
    ListeningFormItem.Type.PAIRWISE: _check_pairwise,
    ListeningFormItem.Type.RATING: _check_rating,
    ListeningFormItem.Type.STANCE: _check_stance,
    ListeningFormItem.Type.STRESSED_WORDS: _check_stressed_words,
}


def _words(raw: dict) -> list | None:
    """The clip's word list as given; the corpus import checks each word against the transcript."""
    words = raw.get("words")
    if words is not None and (not isinstance(words, list) or not words):
        raise _Bad("words", "must be a non-empty list of words")
    return words


def _word_vector(value, transcript: str, name: str, words: list | None = None) -> list[int]:
    words = len(words) if words else len(split_transcript(transcript))
    if not isinstance(value, list) or not all(v in (0, 1) and not isinstance(v, float) for v in value):
        raise _Bad(name, "must be a list of 0 and 1, one for each word")
    if len(value) != words:
        raise _Bad(name, f"has {len(value)} values but the transcript has {words} words")
    return [int(v) for v in value]


def _check_index(gold, options: list, name: str) -> None:
    if gold is None:
        if name == "gold":
            return  # an item may have no correct answer
        raise _Bad(name, f"missing {name} (the index of the correct answer)")
    if isinstance(gold, bool) or not isinstance(gold, int) or not 0 <= gold < len(options):
        raise _Bad(name, f"{gold!r} is out of range: the item has {len(options)} options, 0 to {len(options) - 1}")


def _no_options(draft: ItemDraft) -> None:
    if draft.options:
        raise _Bad("options", f"{draft.item_type} items have no options")


def _audio(value, name: str, *, missing: str = "missing audio path") -> str:
    if isinstance(value, dict):  # a Hugging Face Audio column exported as {"path": ..., ...}
        value = value.get("path")
    if not isinstance(value, str) or not value.strip():
        raise _Bad(name, missing)
    problem = relative_path_problem(value.strip())
    if problem:
        raise _Bad(name, f"path {value!r} {problem}; paths are relative to items.jsonl")
    return str(PurePosixPath(value.strip().replace("\\", "/")))


def _shown_id(raw: dict) -> str:
    """The id a problem names: the row's, else (StressTest rows) the one its audio file gives."""
    audio = raw.get("audio", raw.get("audio_path"))
    audio = audio.get("path") if isinstance(audio, dict) else audio
    if "possible_answers" not in raw or not isinstance(audio, str):
        return str(raw.get("id", "")).strip()
    return str(raw.get("id", PurePosixPath(audio.replace("\\", "/")).stem)).strip()


def _item_id(value) -> str:
    if not isinstance(value, (str, int)) or isinstance(value, bool) or not str(value).strip():
        raise _Bad("id", "the id must be non-empty text")
    if len(str(value).strip()) > _MAX_ID - 4:  # room for "-ssd"
        raise _Bad("id", f"longer than {_MAX_ID - 4} characters")
    return str(value).strip()


def _text(raw: dict, name: str, *, required: bool = False) -> str:
    value = raw.get(name)
    if value is None and not required:
        return ""
    if not isinstance(value, str) or (required and not value.strip()):
        raise _Bad(name, f"{name} must be {'non-empty ' if required else ''}text")
    return value.strip()


def _options(value, name: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(o, str) and o.strip() for o in value):
        raise _Bad(name, "must be a list of non-empty texts")
    return [option.strip() for option in value]


def _dict(raw: dict, name: str) -> dict:
    value = raw.get(name) or {}
    if not isinstance(value, dict):
        raise _Bad(name, "must be a JSON object")
    return dict(value)


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)
