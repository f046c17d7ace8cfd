"""Small files in the published layouts of the public emphasis datasets, with audio made here.

- EmphAssess: gold_df.json, one record a line (pandas' records lines): id, src_sentence (tokens,
  punctuation as tokens of its own), gold_emphasis (token indices), voice; audio `<id>.wav`.
- TinyStress-15K / StressTest: the Hugging Face layout, one file per split
  (`data/train.jsonl`, `data/test.jsonl`), transcription and emphasis_indices (TinyStress) or
  stress_pattern {binary, indices, words} (StressTest), audio {"path": ...} (FLAC for TinyStress).
- Morrison et al.: annotations.json, anonymised annotator -> language, country, annotations
  [{stem, score, words: [[word, start, end]]}]; audio `<speaker>/<chapter>/<stem>.wav`.

As the Hugging Face hub distributes them (written with `datasets`, as push_to_hub and
save_to_disk write them: an Audio column stored as {bytes, path} with the file's bytes inside):
- TinyStress-15K (slprl/TinyStress-15K): `data/<split>-00000-of-00001.parquet`, splits train and
  test; columns id (int64), original_sample_index (int64), ssml, transcription,
  emphasis_indices (list of int64), metadata (a struct; its fields here are made up),
  word_start_timestamps (list of float64), aligned_whisper_transcriptions, audio (FLAC bytes).
  The column names are those WhiStress's own loader (whistress/training/data_loader.py) drops or
  reads.
- StressTest (slprl/StressTest): `data/test-00000-of-00001.parquet`, split test; columns
  transcription_id, transcription, description, intonation, interpretation_id, audio (WAV bytes),
  metadata {gender, language, voice_name}, possible_answers, label, stress_pattern {binary,
  indices, words}, audio_lm_prompt; no id column.
"""

import json
import subprocess
import tempfile
from pathlib import Path

from tests.audio_files import FFMPEG, speechlike, write_audio

SENTENCES = (
    ["I", "never", "said", "she", "stole", "my", "money", "."],
    ["we", "walked", "home", ",", "slowly", "!"],
    ["the", "cat", "sat", "on", "the", "mat"],
    ["give", "it", "back", "to", "me", "now"],
)


def emphassess_folder(root: Path, count: int = 4) -> tuple[Path, Path]:
    """(gold_df.json, audio folder)."""
    audio = root / "audio"
    rows = []
    for n in range(count):
        tokens = SENTENCES[n % len(SENTENCES)]
        words = [i for i, token in enumerate(tokens) if token not in ",.!"]
        clip_id = f"emph_{n:03d}"
        write_audio(audio / f"{clip_id}.wav", speechlike(1.2 + 0.1 * n, seed=n))
        rows.append({"id": clip_id, "src_sentence": tokens, "gold_emphasis": [words[n % len(words)]], "voice": "v1"})
    gold = root / "gold_df.json"
    gold.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return gold, audio


def tinystress_folder(root: Path, per_split: dict[str, int] | None = None) -> tuple[Path, Path]:
    """(dataset folder, audio folder): data/<split>.jsonl, FLAC audio."""
    per_split = per_split or {"train": 4, "test": 2}
    audio, data = root / "audio", root / "dataset" / "data"
    data.mkdir(parents=True)
    number = 0
    for split, count in per_split.items():
        rows = []
        for _ in range(count):
            tokens = [token for token in SENTENCES[number % len(SENTENCES)] if token not in ",.!"]
            name = f"ts_{number:04d}.flac"
            write_audio(audio / name, speechlike(1.3, seed=100 + number))
            rows.append(
                {
                    "id": number,
                    "transcription": " ".join(tokens),
                    "emphasis_indices": [number % len(tokens), (number + 2) % len(tokens)],
                    "audio": {"path": name, "sampling_rate": 16000},
                }
            )
            number += 1
        (data / f"{split}.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return root / "dataset", audio


def stresstest_file(root: Path, count: int = 3) -> tuple[Path, Path]:
    """(test.jsonl, audio folder), StressTest's columns."""
    audio = root / "audio"
    rows = []
    for n in range(count):
        tokens = [token for token in SENTENCES[n % len(SENTENCES)] if token not in ",.!"]
        binary = [int(i == n + 1) for i in range(len(tokens))]
        write_audio(audio / f"st_{n}.wav", speechlike(1.4, seed=200 + n))
        rows.append(
            {
                "transcription": " ".join(tokens),
                "stress_pattern": {"binary": binary, "indices": [n + 1], "words": [tokens[n + 1]]},
                "audio": {"path": f"st_{n}.wav"},
                "possible_answers": ["a", "b"],
                "label": 0,
            }
        )
    path = root / "test.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path, audio


def morrison_annotations(root: Path, *, stems: int = 20, good: int = 3, eager: int = 1, short: int = 1):
    """(annotations.json, audio folder, marks): `good` annotators mark word 1 of every stem (and
    the first of them word 0 too), `eager` ones mark every word of each item (more than two thirds),
    `short` ones annotate only 5 items. marks[stem] is the list of score lists given."""
    audio = root / "LibriTTS"
    clips = {}
    for n in range(stems):
        stem = f"{40 + n % 2}_121026_{n:06d}_000000"
        words = ["he", "never", "came", "back"]
        times = [[word, round(0.1 + 0.25 * k, 3), round(0.3 + 0.25 * k, 3)] for k, word in enumerate(words)]
        speaker, chapter = stem.split("_")[:2]
        write_audio(audio / speaker / chapter / f"{stem}.wav", speechlike(1.3, seed=300 + n))
        clips[stem] = times
    data = {}
    for k in range(good + eager + short):
        kind = "good" if k < good else "eager" if k < good + eager else "short"
        chosen = list(clips)[:5] if kind == "short" else list(clips)
        annotations = []
        for stem in chosen:
            score = [1.0] * 4 if kind == "eager" else [float(k == 0), 1.0, 0.0, 0.0]
            annotations.append({"stem": stem, "score": score, "words": clips[stem]})
        data[f"{k:06d}"] = {"language": "English", "country": "United States", "annotations": annotations}
    path = root / "annotations.json"
    path.write_text(json.dumps(data, indent=1), encoding="utf-8")
    return path, audio


def demo_emphassess_folder(root: Path, count: int = 24) -> tuple[Path, Path]:
    """(gold_df.json, audio folder) in EmphAssess's layout, made from the demo corpus's first
    `count` English clips (espeak-ng speech, which the aligner can place words in): their words
    as src_sentence, the word the generator stressed as gold_emphasis, the audio as <id>.wav."""
    demo = Path(__file__).resolve().parents[2] / "annotation" / "demo_corpus"
    rows = [json.loads(line) for line in (demo / "manifest.jsonl").read_text().splitlines()]
    english = [row for row in rows if row["language"] == "en"][:count]
    audio = root / "audio"
    audio.mkdir(parents=True)
    records = []
    for row in english:
        clip_id = f"ea-{row['id']}"
        subprocess.run(
            [FFMPEG, "-v", "error", "-y", "-i", str(demo / row["audio"]), str(audio / f"{clip_id}.wav")], check=True
        )
        tokens = [word["text"] for word in row["words"]]
        records.append(
            {"id": clip_id, "src_sentence": tokens, "gold_emphasis": row["intended_emphasis"], "voice": "espeak"}
        )
    gold = root / "gold_df.json"
    gold.write_text("".join(json.dumps(record) + "\n" for record in records), encoding="utf-8")
    return gold, audio


def audio_bytes(suffix: str, seconds: float, seed: int) -> bytes:
    """The bytes of a small audio file in the format the suffix names."""
    with tempfile.TemporaryDirectory() as folder:
        return write_audio(Path(folder) / f"clip{suffix}", speechlike(seconds, seed=seed)).read_bytes()


def _tinystress_rows(first: int, count: int) -> dict[str, list]:
    rows: dict[str, list] = {name: [] for name in TINYSTRESS_COLUMNS}
    for number in range(first, first + count):
        tokens = [token for token in SENTENCES[number % len(SENTENCES)] if token not in ",.!"]
        transcription = " ".join(tokens)
        rows["id"].append(number)
        rows["original_sample_index"].append(1000 + number)
        rows["ssml"].append(f"<speak>{transcription}</speak>")
        rows["transcription"].append(transcription)
        rows["emphasis_indices"].append([number % len(tokens)])
        rows["metadata"].append({"gender": "female", "language": "en"})
        rows["word_start_timestamps"].append([0.1 + 0.2 * k for k in range(len(tokens))])
        rows["aligned_whisper_transcriptions"].append(transcription)
        name = f"tinystress_{number:05d}.flac"
        rows["audio"].append({"bytes": audio_bytes(".flac", 1.2, 400 + number), "path": name})
    return rows


TINYSTRESS_COLUMNS = (
    "id",
    "original_sample_index",
    "ssml",
    "transcription",
    "emphasis_indices",
    "metadata",
    "word_start_timestamps",
    "aligned_whisper_transcriptions",
    "audio",
)


def _hf_dataset(rows: dict[str, list]):
    import datasets  # the test extra; only these layouts need it

    return datasets.Dataset.from_dict(rows).cast_column("audio", datasets.Audio(sampling_rate=16000))


def tinystress_parquet(root: Path, per_split: dict[str, int] | None = None) -> Path:
    """The hub's layout of TinyStress-15K: <root>/data/<split>-00000-of-00001.parquet."""
    per_split = per_split or {"train": 3, "test": 2}
    data = root / "data"
    data.mkdir(parents=True)
    first = 0
    for split, count in per_split.items():
        _hf_dataset(_tinystress_rows(first, count)).to_parquet(data / f"{split}-00000-of-00001.parquet")
        first += count
    return root


def tinystress_saved(root: Path, per_split: dict[str, int] | None = None) -> Path:
    """TinyStress-15K as `load_dataset(...).save_to_disk(root)` leaves it: a DatasetDict folder."""
    import datasets

    per_split = per_split or {"train": 3, "test": 2}
    splits, first = {}, 0
    for split, count in per_split.items():
        splits[split] = _hf_dataset(_tinystress_rows(first, count))
        first += count
    datasets.DatasetDict(splits).save_to_disk(str(root))
    return root


def stresstest_parquet(root: Path, count: int = 3, *, paths: bool = False) -> Path:
    """The hub's layout of StressTest: <root>/data/test-00000-of-00001.parquet. Its audio keeps no
    file name unless `paths`."""
    rows: dict[str, list] = {}
    for n in range(count):
        tokens = [token for token in SENTENCES[n % len(SENTENCES)] if token not in ",.!"]
        binary = [int(i == n + 1) for i in range(len(tokens))]
        row = {
            "transcription_id": n // 2,
            "transcription": " ".join(tokens),
            "description": "a contrast",
            "intonation": " ".join(token.upper() if b else token for token, b in zip(tokens, binary, strict=True)),
            "interpretation_id": n,
            "audio": {"bytes": audio_bytes(".wav", 1.3, 500 + n), "path": f"stresstest_{n}.wav" if paths else None},
            "metadata": {"gender": "male", "language": "en", "voice_name": "actor"},
            "possible_answers": ["one meaning", "another meaning"],
            "label": n % 2,
            "stress_pattern": {"binary": binary, "indices": [n + 1], "words": [tokens[n + 1]]},
            "audio_lm_prompt": "Which word is stressed?",
        }
        for key, value in row.items():
            rows.setdefault(key, []).append(value)
    data = root / "data"
    data.mkdir(parents=True)
    _hf_dataset(rows).to_parquet(data / "test-00000-of-00001.parquet")
    return root


def emphassess_with_punctuation_marks(root: Path) -> tuple[Path, Path]:
    """(gold_df.json, audio folder) of 5 records, two of which cannot be imported: line 2 marks a
    comma, as 12 rows of the published gold_df.json mark punctuation, and line 4 an index past
    its tokens."""
    gold, audio = emphassess_folder(root, count=5)
    records = [json.loads(line) for line in gold.read_text().splitlines()]
    records[1]["gold_emphasis"] = [3]  # ["we", "walked", "home", ",", ...]: the comma
    records[3]["gold_emphasis"] = [1, 6]  # "give it back to me now": 6 is outside the tokens
    gold.write_text("".join(json.dumps(record) + "\n" for record in records), encoding="utf-8")
    return gold, audio
