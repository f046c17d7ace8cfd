"""Read system outputs, CAST items and CAST renditions from JSONL into drafts, with the line each
came from. No database: evaluation.services.system_outputs checks the drafts against the items
and writes them.

- outputs (`read_outputs`), one answer a line. StressTest: {"item", "answer"} (an option index or
  the model's text, for single_choice and stressed_words items) or {"item", "stressed"} (word
  indices, stressed_words items). StanceBench: {"item", "order": "PN" | "NP", "answer"}. Answers
  are kept as given: parsing them is part of the score (evaluation.stats.suites.answers).
- CAST items (`read_cast_items`): {"id", "sentence", "context_a", "context_b", "word_a", "word_b",
  "words", "metadata"}; word_a and word_b are indices into the words, or a word that occurs once.
- CAST renditions (`read_renditions`): {"item", "side": "A" | "B", "mode", "audio"}.

A row that is wrong in any way gives one problem and no draft; problems across rows (the same
item twice) are found here too. Problems are ItemProblems: line, item, field, reason.
"""

import json
import math
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from annotation.ingest.errors import ImportRefused, SourceRefused
from annotation.ingest.listening_form_rows import ItemProblem
from annotation.ingest.source import relative_path_problem
from annotation.ingest.words import parse_word_list, split_transcript
from evaluation.models.suites import CastRendition

# A file is read whole; a benchmark of thousands of items stays far below these.
MAX_FILE_BYTES = 20 * 1024 * 1024
# A judge's raw output holds its evidence, so an answer may be longer than an item's text.
MAX_ANSWER_CHARS = 20_000
MAX_FIELD_CHARS = 5000  # a sentence, a context, the metadata (as JSON)
MAX_ID = 200  # ListeningFormItem.external_id, CastItem.external_id

SUITES = ("stresstest", "stance")
POLE_ORDERS = ("PN", "NP")
SIDES = tuple(CastRendition.Side.values)
MODES = tuple(CastRendition.Mode.values)
OUTPUT_FIELDS = {"stresstest": {"item", "answer", "stressed"}, "stance": {"item", "order", "answer"}}
CAST_ITEM_FIELDS = {"id", "sentence", "context_a", "context_b", "word_a", "word_b", "words", "metadata"}
RENDITION_FIELDS = {"item", "side", "mode", "audio", "word_times"}


@dataclass
class OutputDraft:
    line: int
    item: str
    field: str  # "answer" or "stressed": which the row gave
    raw: object
    order: str = ""  # stance: "PN" or "NP"


@dataclass
class CastItemDraft:
    line: int
    external_id: str
    sentence: str
    words: list[str]
    context_a: str
    context_b: str
    word_a: int
    word_b: int
    metadata: dict = field(default_factory=dict)


@dataclass
class RenditionDraft:
    line: int
    item: str
    side: str
    mode: str
    audio: str  # relative to renditions.jsonl, with forward slashes
    # [start, end] seconds of each of the item's words, when the TTS system reports them; else the
    # clip's words are untimed and a detector that needs times aligns them (English only)
    word_times: tuple[tuple[float, float], ...] | None = None


class _Bad(Exception):
    def __init__(self, field_name: str, reason: str):
        super().__init__(reason)
        self.field_name, self.reason = field_name, reason


def refuse_if_any(file_name: str, problems: list[ItemProblem]) -> None:
    """Raise ImportRefused (its message shows the first 20 problems and counts the rest)."""
    if problems:
        raise ImportRefused(file_name, sorted(problems, key=lambda problem: problem.line))


# -- outputs -------------------------------------------------------------------------------------


def read_outputs(path: Path, *, suite: str) -> tuple[list[OutputDraft], list[ItemProblem]]:
    if suite not in SUITES:
        raise ValueError(f"unknown suite {suite!r}")

    def build(line: int, raw: dict) -> OutputDraft:
        _known_fields(raw, OUTPUT_FIELDS[suite])
        _check_sizes(raw, MAX_ANSWER_CHARS)
        item = _identifier(raw, "item")
        return _stance(line, item, raw) if suite == "stance" else _stresstest(line, item, raw)

    drafts, problems = _read(path, build, id_field="item")
    problems += _duplicates(drafts, key=lambda draft: (draft.item, draft.order), what=_output_key)
    return _without_bad_lines(drafts, problems), problems


def _output_key(draft: OutputDraft) -> str:
    return f"item {draft.item!r}" + (f" in order {draft.order}" if draft.order else "")


def _stresstest(line: int, item: str, raw: dict) -> OutputDraft:
    given = [name for name in ("answer", "stressed") if name in raw]
    if len(given) != 1:
        raise _Bad("answer", 'give "answer" (an option index or the raw text) or "stressed" (word indices), once')
    name = given[0]
    value = _not_null(raw, name)
    if name == "stressed" and not _indices(value):
        raise _Bad("stressed", f"must be a list of word indices (whole numbers from 0), not {_shown(value)}")
    return OutputDraft(line, item, name, value)


def _stance(line: int, item: str, raw: dict) -> OutputDraft:
    order = raw.get("order")
    if order not in POLE_ORDERS:
        raise _Bad("order", f'must be "PN" (positive pole shown first) or "NP", not {_shown(order)}')
    if "answer" not in raw:
        raise _Bad("answer", "missing answer (the judge's raw output)")
    return OutputDraft(line, item, "answer", _not_null(raw, "answer"), order)


def _not_null(raw: dict, name: str):
    if raw[name] is None:
        raise _Bad(name, f"{name} is null; give the system's raw output as it came (an empty text if it was empty)")
    return raw[name]


def _indices(value) -> bool:
    return isinstance(value, list) and all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in value)


# -- CAST items ----------------------------------------------------------------------------------


def read_cast_items(path: Path) -> tuple[list[CastItemDraft], list[ItemProblem]]:
    def build(line: int, raw: dict) -> CastItemDraft:
        _known_fields(raw, CAST_ITEM_FIELDS)
        _check_sizes(raw, MAX_FIELD_CHARS)
        external_id = _identifier(raw, "id")
        sentence = _text(raw, "sentence")
        words = _sentence_words(raw.get("words"), sentence)
        word_a, word_b = _word_index(raw, "word_a", words), _word_index(raw, "word_b", words)
        if word_a == word_b:
            raise _Bad("word_b", f"word_a and word_b are both word {word_a} ({words[word_a]!r}); a pair needs two")
        metadata = raw.get("metadata") or {}
        if not isinstance(metadata, dict):
            raise _Bad("metadata", "must be a JSON object")
        return CastItemDraft(
            line,
            external_id,
            sentence,
            words,
            _text(raw, "context_a"),
            _text(raw, "context_b"),
            word_a,
            word_b,
            metadata,
        )

    drafts, problems = _read(path, build, id_field="id")
    problems += _duplicates(drafts, key=lambda draft: draft.external_id, what=lambda d: f"id {d.external_id!r}")
    return _without_bad_lines(drafts, problems), problems


def _sentence_words(given, sentence: str) -> list[str]:
    """The words the renditions' clips get: the sentence split at spaces (punctuation-only tokens
    are no words, as in a corpus import), or the list given, checked against the sentence."""
    if given is None:
        words = [word.text for word in split_transcript(sentence)]
        if not words:
            raise _Bad("sentence", "no words (only punctuation)")
        return words
    if not isinstance(given, list) or not all(isinstance(word, str) for word in given):
        raise _Bad("words", "must be a list of the sentence's words, as texts")
    try:
        return [word.text for word in parse_word_list(given, sentence)]
    except ValueError as error:
        raise _Bad("words", str(error)) from None


def _word_index(raw: dict, name: str, words: list[str]) -> int:
    value = raw.get(name)
    if isinstance(value, int) and not isinstance(value, bool):
        if not 0 <= value < len(words):
            raise _Bad(name, f"{value} is out of range: the sentence has {len(words)} words, 0 to {len(words) - 1}")
        return value
    if not isinstance(value, str) or not value.strip():
        raise _Bad(name, f"must be a word index or the word itself, not {_shown(value)}")
    found = [index for index, word in enumerate(words) if _comparable(word) == _comparable(value)]
    if not found:
        raise _Bad(name, f"{value!r} is not a word of the sentence")
    if len(found) > 1:
        raise _Bad(name, f"{value!r} occurs {len(found)} times in the sentence (words {found}); give its index")
    return found[0]


def _comparable(text: str) -> str:
    text = unicodedata.normalize("NFC", text).casefold()
    return "".join(char for char in text if unicodedata.category(char)[0] != "P").strip()


# -- CAST renditions -----------------------------------------------------------------------------


def read_renditions(path: Path) -> tuple[list[RenditionDraft], list[ItemProblem]]:
    def build(line: int, raw: dict) -> RenditionDraft:
        _known_fields(raw, RENDITION_FIELDS)
        _check_sizes(raw, MAX_FIELD_CHARS)
        item = _identifier(raw, "item")
        side, mode = raw.get("side"), raw.get("mode")
        if side not in SIDES:
            raise _Bad("side", f'must be "A" or "B" (the context the rendition was conditioned on), not {_shown(side)}')
        if mode not in MODES:
            raise _Bad("mode", f"must be one of {', '.join(MODES)}, not {_shown(mode)}")
        return RenditionDraft(line, item, side, mode, _audio(raw.get("audio")), _word_times(raw.get("word_times")))

    drafts, problems = _read(path, build, id_field="item")
    problems += _duplicates(
        drafts, key=lambda d: (d.item, d.side, d.mode), what=lambda d: f"item {d.item!r}, side {d.side}, mode {d.mode}"
    )
    return _without_bad_lines(drafts, problems), problems


def _word_times(value) -> tuple[tuple[float, float], ...] | None:
    """[[start, end], ...] in seconds, in order; whether there is one per word is checked against the item."""
    if value is None:
        return None
    if not isinstance(value, list) or not value:
        raise _Bad("word_times", "must be a list of [start, end] pairs in seconds, one per word of the sentence")
    times, previous_end = [], 0.0
    for position, pair in enumerate(value):
        if (
            not isinstance(pair, list)
            or len(pair) != 2
            or not all(isinstance(t, (int, float)) and not isinstance(t, bool) and math.isfinite(t) for t in pair)
        ):
            raise _Bad("word_times", f"word {position}: {_shown(pair)} is not a [start, end] pair of seconds")
        start, end = float(pair[0]), float(pair[1])
        if start < previous_end - 1e-9 or end <= start:
            raise _Bad(
                "word_times",
                f"word {position}: [{start}, {end}] must start at or after the previous word's "
                "end and end after its start",
            )
        times.append((start, end))
        previous_end = end
    return tuple(times)


def _audio(value) -> str:
    if not isinstance(value, str) or not value.strip():
        raise _Bad("audio", "missing audio path")
    problem = relative_path_problem(value.strip())
    if problem:
        raise _Bad("audio", f"path {value!r} {problem}; paths are relative to renditions.jsonl")
    return str(PurePosixPath(value.strip().replace("\\", "/")))


# -- shared --------------------------------------------------------------------------------------


def _read(path: Path, build, *, id_field: str) -> tuple[list, list[ItemProblem]]:
    drafts, problems = [], []
    for line, row_text in enumerate(_file_text(path).splitlines(), start=1):
        if not row_text.strip():
            continue
        shown_id = ""
        try:
            raw = json.loads(row_text)
            if not isinstance(raw, dict):
                raise _Bad("", "a row must be a JSON object")
            shown_id = str(raw.get(id_field, "")).strip()[:MAX_ID]
            drafts.append(build(line, raw))
        except json.JSONDecodeError as error:
            problems.append(ItemProblem(line, "", "", f"not valid JSON ({error.msg})"))
        except RecursionError:
            problems.append(ItemProblem(line, "", "", "not valid JSON (nested too deeply)"))
        except _Bad as bad:
            problems.append(ItemProblem(line, shown_id, bad.field_name, bad.reason))
    if not drafts and not problems:
        raise SourceRefused(f"{path.name}: no rows")
    return drafts, problems


def _file_text(path: Path) -> str:
    if not path.is_file():
        raise SourceRefused(f"{path}: no such file")
    size = path.stat().st_size
    if size > MAX_FILE_BYTES:
        raise SourceRefused(f"{path.name} is {size} bytes; the limit is {MAX_FILE_BYTES}")
    try:
        return path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as error:
        raise SourceRefused(f"{path.name}: not UTF-8 text (byte {error.start})") from None


def _known_fields(raw: dict, known: set[str]) -> None:
    # A misspelt field ("anwser") would otherwise import as a missing answer.
    unknown = sorted(set(raw) - known)
    if unknown:
        raise _Bad(unknown[0], f"unknown field {unknown[0]!r}; a row has {', '.join(sorted(known))}")


def _check_sizes(raw: dict, limit: int) -> None:
    for name, value in raw.items():
        size = len(value) if isinstance(value, str) else len(json.dumps(value, ensure_ascii=False))
        if size > limit:
            raise _Bad(name, f"too long ({size} characters; at most {limit})")


def _identifier(raw: dict, name: str) -> str:
    value = raw.get(name)
    if isinstance(value, bool) or not isinstance(value, (str, int)) or not str(value).strip():
        raise _Bad(name, f"missing {name} id" if value is None else f"the {name} id must be non-empty text")
    if len(str(value).strip()) > MAX_ID:
        raise _Bad(name, f"longer than {MAX_ID} characters")
    return str(value).strip()


def _text(raw: dict, name: str) -> str:
    value = raw.get(name)
    if not isinstance(value, str) or not value.strip():
        raise _Bad(name, f"{name} must be non-empty text")
    return value.strip()


def _shown(value) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 60 else text[:57] + "..."


def _duplicates(drafts: list, *, key, what) -> list[ItemProblem]:
    first: dict = {}
    problems = []
    for draft in drafts:
        seen = first.setdefault(key(draft), draft.line)
        if seen != draft.line:
            item = getattr(draft, "item", None) or getattr(draft, "external_id", "")
            problems.append(
                ItemProblem(
                    draft.line,
                    item,
                    "item" if hasattr(draft, "item") else "id",
                    f"{what(draft)} again; first on line {seen}",
                )
            )
    return problems


def _without_bad_lines(drafts: list, problems: list[ItemProblem]) -> list:
    bad = {problem.line for problem in problems}
    return [draft for draft in drafts if draft.line not in bad]
