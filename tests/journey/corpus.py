"""The journey's corpus: 20 clips of about a second in English and German, with word times,
speakers and emotions as the README's manifest table names them, and one instructed attention
check clip; zipped for the admin's upload."""

import json
import zipfile
from dataclasses import dataclass
from pathlib import Path

from tests.audio_files import speechlike, write_wav

CLIP_SECONDS = 1.0
SPEECH = (0.1, 0.9)  # speechlike() is silent for 0.1 s at each end

ENGLISH = [
    "she never said he stole",
    "we will meet at noon",
    "the red car is mine",
    "i did not take it",
    "they sold the old house",
    "you should call him now",
    "my brother likes green tea",
    "our train leaves at six",
    "he wrote the letter twice",
    "this song is too loud",
]
GERMAN = [
    "sie hat das nie gesagt",
    "wir treffen uns am mittag",
    "das rote auto ist meins",
    "ich habe es nicht genommen",
    "sie verkauften das alte haus",
    "du solltest ihn jetzt anrufen",
    "mein bruder mag grünen tee",
    "unser zug fährt um sechs",
    "er schrieb den brief zweimal",
    "dieses lied ist zu laut",
]
CHECK_TRANSCRIPT = "please mark the word blue"
CHECK_WORD = 4  # "blue", to be marked heavily emphasized
SPEAKERS = {"en": ["en-anna", "en-ben", "en-cara", "en-dan"], "de": ["de-eva", "de-finn", "de-greta", "de-hans"]}
EMOTIONS = ["angry", "sad"]  # the README's form of MMEE's nouns ("anger", "sadness"): high and low arousal


@dataclass(frozen=True)
class JourneyCorpus:
    zip_path: Path
    clip_ids: list[str]  # the clips the study annotates
    check_clip_id: str
    speakers: list[str]

    @property
    def clips(self) -> int:
        return len(self.clip_ids)


def word_times(transcript: str) -> list[dict]:
    words = transcript.split()
    start, end = SPEECH
    step = (end - start) / len(words)
    return [
        {"text": word, "start": round(start + i * step, 3), "end": round(start + (i + 1) * step, 3)}
        for i, word in enumerate(words)
    ]


def write_corpus_zip(folder: Path) -> JourneyCorpus:
    rows, clip_ids = [], []
    seed = 0
    for language, transcripts in (("en", ENGLISH), ("de", GERMAN)):
        for index, transcript in enumerate(transcripts):
            clip_id = f"{language}-{index + 1:02d}"
            clip_ids.append(clip_id)
            rows.append(
                _row(
                    folder,
                    clip_id,
                    transcript,
                    language=language,
                    seed=seed,
                    speaker=SPEAKERS[language][index % 4],
                    emotion=EMOTIONS[index % 2],
                )
            )
            seed += 1
    check_id = "check-blue"
    rows.append(_row(folder, check_id, CHECK_TRANSCRIPT, language="en", seed=seed, speaker="instructor", emotion=""))
    (folder / "manifest.jsonl").write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows))
    zip_path = folder.with_suffix(".zip")
    with zipfile.ZipFile(zip_path, "w") as archive:
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                archive.write(path, path.relative_to(folder).as_posix())
    speakers = [name for names in SPEAKERS.values() for name in names]
    return JourneyCorpus(zip_path=zip_path, clip_ids=clip_ids, check_clip_id=check_id, speakers=speakers)


def _row(folder: Path, clip_id: str, transcript: str, *, language: str, seed: int, **extra) -> dict:
    audio = f"audio/{clip_id}.wav"
    write_wav(folder / audio, speechlike(CLIP_SECONDS, seed=seed))
    row = {
        "id": clip_id,
        "audio": audio,
        "transcript": transcript,
        "words": word_times(transcript),
        "language": language,
        **extra,
    }
    return {key: value for key, value in row.items() if value != ""}
