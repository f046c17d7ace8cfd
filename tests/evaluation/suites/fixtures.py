"""Small benchmark-suite inputs for tests: a StressTest form and a stance form (items.jsonl with
audio, imported with import_form_items), CAST items and renditions made of generated tones, and
systems' output files. The write_* helpers need no database; the import_* ones do."""

import json
import wave
import zipfile
from pathlib import Path

from django.core.management import call_command

from annotation.models import Study
from annotation.tones import tone_clip_wav
from tests.audio_files import speechlike, write_audio

STRESSTEST_SENTENCE = "I didn't say she stole the money"  # 7 words
STRESSTEST_OPTIONS = ["Someone else said it", "I only implied it", "She took something else"]
# id -> (gold option index, stressed word index, category)
STRESSTEST_ITEMS = {"st-001": (0, 0, "contrastive"), "st-002": (1, 2, "contrastive"), "st-003": (2, 6, "emphatic")}

STANCE_DIMENSION = "warmth"
# id -> weak label; two of each pole, so AUROC is defined
STANCE_ITEMS = {"warm-01": "P", "warm-02": "N", "warm-03": "P", "warm-04": "N"}

CAST_ITEMS = [
    {
        "id": "c01",
        "sentence": "I never said she stole it",
        "context_a": "Someone says you said it.",
        "context_b": "You said someone else stole it.",
        "word_a": 1,
        "word_b": "she",
        "metadata": {"topic": "theft"},
    },
    {
        "id": "c02",
        "sentence": "Ann bought the red car",
        "context_a": "Who bought it?",
        "context_b": "Which car did Ann buy?",
        "word_a": "Ann",
        "word_b": 3,
    },
    {
        "id": "c03",
        "sentence": "We meet on Tuesday, not Monday.",
        "context_a": "Who meets?",
        "context_b": "When do you meet?",
        "word_a": 0,
        "word_b": "Tuesday",
    },
]
# word_a / word_b above, as indices into each sentence's words
CAST_WORDS = {"c01": (1, 3), "c02": (0, 3), "c03": (0, 3)}


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def write_stresstest_items(root: Path) -> Path:
    """A form folder (items.jsonl + audio) of the 3 STRESSTEST_ITEMS in the StressTest layout; returns root."""
    rows = []
    for seed, (item_id, (gold, stressed, category)) in enumerate(STRESSTEST_ITEMS.items(), start=1):
        audio = f"audio/{item_id}.wav"
        write_audio(root / audio, speechlike(1.0, seed=seed))
        binary = [int(index == stressed) for index in range(7)]
        rows.append(
            {
                "id": item_id,
                "transcription": STRESSTEST_SENTENCE,
                "audio": audio,
                "possible_answers": STRESSTEST_OPTIONS,
                "label": gold,
                "stress_pattern": {"binary": binary, "indices": [stressed]},
                "metadata": {"category": category},
            }
        )
    write_jsonl(root / "items.jsonl", rows)
    return root


def write_stance_items(root: Path) -> Path:
    """A form folder of the 4 STANCE_ITEMS (generic layout, type "stance", weak labels in metadata); returns root."""
    rows = []
    for seed, (item_id, weak_label) in enumerate(STANCE_ITEMS.items(), start=11):
        audio = f"audio/{item_id}.wav"
        write_audio(root / audio, speechlike(1.0, seed=seed))
        rows.append(
            {
                "id": item_id,
                "type": "stance",
                "audio": audio,
                "transcript": "I will see what I can do",
                "question": "How does the speaker sound?",
                "settings": {"dimension": STANCE_DIMENSION, "positive": "warm", "negative": "cold"},
                "metadata": {"weak_label": weak_label},
            }
        )
    write_jsonl(root / "items.jsonl", rows)
    return root


def import_stresstest_study(root: Path, *, name: str = "stresstest pilot") -> Study:
    """The StressTest form study (with the SSD items "<id>-ssd"), imported from write_stresstest_items(root)."""
    call_command(
        "import_form_items",
        str(write_stresstest_items(root)),
        "--study",
        name,
        "--with-ssd",
        "--language",
        "en",
        "--corpus",
        f"{name} clips",
    )
    return Study.objects.get(name=name)


def import_stance_study(root: Path, *, name: str = "stance pilot") -> Study:
    """The stance form study, imported from write_stance_items(root)."""
    call_command(
        "import_form_items",
        str(write_stance_items(root)),
        "--study",
        name,
        "--language",
        "en",
        "--corpus",
        f"{name} clips",
    )
    return Study.objects.get(name=name)


def write_cast_items(path: Path, rows: list[dict] | None = None) -> Path:
    """CAST_ITEMS (or `rows`) as a JSONL file; returns path."""
    return write_jsonl(path, CAST_ITEMS if rows is None else rows)


def write_cast_renditions(
    root: Path,
    *,
    system: str = "tts-a",
    items=("c01", "c02", "c03"),
    sides=("A", "B"),
    modes=("context",),
    timed: bool = False,
) -> Path:
    """A renditions folder: renditions.jsonl and one tone WAV per (item, side, mode), each distinct
    (seeded by system, item, side and mode); with `timed`, each row gives word times spread evenly
    over the clip, as a TTS system that reports durations would. Returns root."""
    words = {item["id"]: len(item["sentence"].split()) for item in CAST_ITEMS}
    rows = []
    for item in items:
        for side in sides:
            for mode in modes:
                audio = f"wav/{item}-{side}-{mode}.wav"
                (root / audio).parent.mkdir(parents=True, exist_ok=True)
                (root / audio).write_bytes(tone_clip_wav(f"{system}/{item}/{side}/{mode}"))
                row = {"item": item, "side": side, "mode": mode, "audio": audio}
                if timed:
                    row["word_times"] = _even_word_times(root / audio, words[item])
                rows.append(row)
    write_jsonl(root / "renditions.jsonl", rows)
    return root


def _even_word_times(path: Path, words: int) -> list[list[float]]:
    with wave.open(str(path)) as audio:
        seconds = audio.getnframes() / audio.getframerate()
    step = seconds / words
    return [[round(k * step, 3), round((k + 1) * step, 3)] for k in range(words)]


def zip_folder(folder: Path, archive: Path) -> Path:
    """The folder's files in a .zip, at its root; returns archive."""
    with zipfile.ZipFile(archive, "w") as bundle:
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                bundle.write(path, path.relative_to(folder).as_posix())
    return archive


def stresstest_outputs(*, wrong: bool = False) -> list[dict]:
    """A model's answers to the StressTest items: SSR (an index, then texts) and SSD (indices, then a text)."""
    rows = []
    for position, (item_id, (gold, stressed, _)) in enumerate(STRESSTEST_ITEMS.items()):
        answer = (gold + 1) % 3 if wrong else gold
        rows.append({"item": item_id, "answer": answer if position == 0 else STRESSTEST_OPTIONS[answer]})
        if position < 2:
            rows.append({"item": f"{item_id}-ssd", "stressed": [(stressed + wrong) % 7]})
        else:
            rows.append({"item": f"{item_id}-ssd", "answer": STRESSTEST_SENTENCE.split()[stressed]})
    return rows


def stance_outputs(*, confidence: float = 0.8) -> list[dict]:
    """A judge that picks each item's weak label, in both pole orders (a JSON string, then an object)."""
    rows = []
    for item_id, weak_label in STANCE_ITEMS.items():
        answer = {"choice": weak_label, "confidence": confidence, "evidence": ["tone"]}
        rows.append({"item": item_id, "order": "PN", "answer": json.dumps(answer)})
        rows.append({"item": item_id, "order": "NP", "answer": answer})
    return rows
