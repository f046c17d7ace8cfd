"""Read manifest.jsonl / manifest.csv into rows, with the line each came from.

One row per clip. Required: `audio` and `transcript`. Optional: `id` (default:
the audio path without its extension), `words`, `language`, `variety`,
`speaker`, `emotion`. Every other key is kept as clip metadata.
"""

import csv
import json
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from annotation.ingest.errors import RowProblem, SourceRefused
from annotation.ingest.words import WordSpec, parse_word_list, split_transcript, written_without_spaces

REQUIRED = ("audio", "transcript")
KNOWN = ("id", "audio", "transcript", "words", "language", "variety", "speaker", "emotion", "tags")
_TEXT_LIMITS = {"id": 200, "language": 35, "variety": 35, "emotion": 64, "speaker": 200}
AUDIO_PATH_LIMIT = 500  # Clip.source_path keeps it


@dataclass
class ManifestRow:
    line: int
    clip_id: str
    audio: str
    transcript: str
    words: list[WordSpec]
    language: str = ""
    variety: str = ""
    speaker: str = ""
    emotion: str = ""
    tags: list[str] = field(default_factory=list)
    metadata: dict = field(default_factory=dict)

    def problem(self, field_name: str, reason: str) -> RowProblem:
        return RowProblem(self.line, self.clip_id, field_name, reason)


@dataclass
class Manifest:
    path: Path
    rows: list[ManifestRow]
    problems: list[RowProblem]
    row_count: int


def read_manifest(path: Path) -> Manifest:
    raw_rows = _read_jsonl(path) if path.suffix == ".jsonl" else _read_csv(path)
    rows: list[ManifestRow] = []
    problems: list[RowProblem] = []
    for line, raw in raw_rows:
        if isinstance(raw, RowProblem):
            problems.append(raw)
            continue
        row, row_problems = _build_row(line, raw)
        problems.extend(row_problems)
        if row is not None and not row_problems:
            rows.append(row)
    duplicates = _duplicate_ids(rows)
    duplicate_lines = {problem.line for problem in duplicates}
    rows = [row for row in rows if row.line not in duplicate_lines]
    problems.extend(duplicates)
    return Manifest(path, rows, sorted(problems, key=lambda p: p.line), len(raw_rows))


def _read_jsonl(path: Path) -> list[tuple[int, dict | RowProblem]]:
    out: list[tuple[int, dict | RowProblem]] = []
    for line, text in enumerate(_read_text(path).splitlines(), start=1):
        if not text.strip():
            continue
        try:
            value = json.loads(text)
        except json.JSONDecodeError as error:
            out.append((line, RowProblem(line, "", "", f"not valid JSON ({error.msg})")))
            continue
        except RecursionError:
            out.append((line, RowProblem(line, "", "", "not valid JSON (nested too deeply)")))
            continue
        if not isinstance(value, dict):
            out.append((line, RowProblem(line, "", "", "a row must be a JSON object")))
            continue
        missing = [name for name in REQUIRED if name not in value]
        if missing:
            out.append(
                (line, RowProblem(line, str(value.get("id", "")), missing[0], f"missing required field {missing[0]!r}"))
            )
            continue
        out.append((line, value))
    if not out:
        raise SourceRefused(f"{path.name}: the manifest has no rows")
    return out


def _read_csv(path: Path) -> list[tuple[int, dict | RowProblem]]:
    reader = csv.DictReader(_read_text(path).splitlines(keepends=True))
    header = reader.fieldnames or []
    missing = [name for name in REQUIRED if name not in header]
    if missing:
        raise SourceRefused(f"{path.name}, line 1: missing required column {missing[0]!r}")
    out: list[tuple[int, dict | RowProblem]] = []
    for record in reader:
        line = reader.line_num
        if None in record:
            out.append((line, RowProblem(line, "", "", "more values than columns")))
            continue
        values = {key: value for key, value in record.items() if value not in (None, "")}
        values.setdefault("transcript", "")
        values.setdefault("audio", "")
        if "words" in values:
            try:
                values["words"] = json.loads(values["words"])
            except (json.JSONDecodeError, RecursionError) as error:
                why = getattr(error, "msg", "nested too deeply")
                out.append((line, RowProblem(line, values.get("id", ""), "words", f"not a JSON list ({why})")))
                continue
        out.append((line, values))
    if not out:
        raise SourceRefused(f"{path.name}: the manifest has no rows")
    return out


def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as error:
        raise SourceRefused(f"{path.name}: not UTF-8 text (byte {error.start})") from None


def _build_row(line: int, raw: dict) -> tuple[ManifestRow | None, list[RowProblem]]:
    audio = raw.get("audio")
    clip_id = raw.get("id")
    if clip_id is None and isinstance(audio, str):
        clip_id = str(PurePosixPath(audio.replace("\\", "/")).with_suffix(""))
    clip_id = "" if clip_id is None else str(clip_id).strip()
    problems = []

    def problem(field_name: str, reason: str) -> None:
        problems.append(RowProblem(line, clip_id, field_name, reason))

    if not isinstance(audio, str) or not audio.strip():
        problem("audio", "empty audio path")
    elif len(audio) > AUDIO_PATH_LIMIT:
        problem("audio", f"a path of {len(audio)} characters; at most {AUDIO_PATH_LIMIT} are kept")
    transcript = raw.get("transcript")
    if not isinstance(transcript, str) or not transcript.strip():
        problem("transcript", "empty transcript")
    if not clip_id:
        problem("id", "empty clip id")
    texts = {}
    for name, limit in _TEXT_LIMITS.items():
        value = raw.get(name, "")
        if value is None:
            value = ""
        if not isinstance(value, (str, int)):
            problem(name, f"must be text, not {type(value).__name__}")
            continue
        value = str(value).strip()
        if len(value) > limit:
            problem(name, f"longer than {limit} characters")
        texts[name] = value
    tags = _tags(raw.get("tags"))
    if tags is None:
        problem("tags", "must be a list of strings or a comma-separated string")
    if problems:
        return None, problems
    if raw.get("words") is None and written_without_spaces(texts["language"] or texts["variety"]):
        problem(
            "words",
            f"language {texts['language'] or texts['variety']!r} is written without spaces between "
            "words, so the clip needs a word list; it is never split into characters",
        )
        return None, problems
    try:
        if raw.get("words") is not None:
            words = parse_word_list(raw["words"], transcript)
        else:
            words = split_transcript(transcript)
    except ValueError as error:
        problem("words", str(error))
        return None, problems
    if not words:
        problem("transcript", "no words to mark (only punctuation)")
        return None, problems
    metadata = {key: value for key, value in raw.items() if key not in KNOWN}
    row = ManifestRow(
        line=line,
        clip_id=clip_id,
        audio=audio.strip(),
        transcript=transcript.strip(),
        words=words,
        language=texts["language"],
        variety=texts["variety"],
        speaker=texts["speaker"],
        emotion=texts["emotion"],
        tags=tags,
        metadata=metadata,
    )
    return row, problems


def _tags(value) -> list[str] | None:
    if value is None:
        return []
    if isinstance(value, str):
        value = value.split(",")
    if not isinstance(value, list) or not all(isinstance(tag, str) for tag in value):
        return None
    return sorted({tag.strip() for tag in value if tag.strip()})


def _duplicate_ids(rows: list[ManifestRow]) -> list[RowProblem]:
    first_line: dict[str, int] = {}
    problems = []
    for row in rows:
        if row.clip_id in first_line:
            problems.append(row.problem("id", f"duplicate clip id, first used on line {first_line[row.clip_id]}"))
        else:
            first_line[row.clip_id] = row.line
    return problems
