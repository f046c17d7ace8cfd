"""Import a generated corpus of N clips and report clips per second and peak memory.

    .venv/bin/python bench/import_speed.py [--clips 1000] [--workers N]

Runs on the embedded default (a fresh SQLite database and media folder in a
temporary directory) unless DATABASE_URL is set. In the same run it measures
a baseline -- bare ffmpeg decoding of the same files with the same number of
threads, the least work any importer must do -- and reports the import rate as
a fraction of it, plus the time spent in each phase of the import.
"""

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def main() -> None:
    args = parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-import-") as scratch:
        scratch = Path(scratch)
        setup_django(scratch / "data")
        corpus = make_corpus(scratch / "corpus", args.clips)
        baseline = bare_decode_seconds(corpus, args.workers)
        seconds, phases = timed_import(corpus, args.workers)
    report(args, seconds, baseline, phases)


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clips", type=int, default=1000)
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    return parser.parse_args()


def setup_django(data_dir: Path) -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    os.environ["DATA_DIR"] = str(data_dir)
    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", verbosity=0)


def make_corpus(folder: Path, count: int) -> Path:
    """Clips of 2-4 s at 22.05 kHz: WAV, with every fifth as FLAC and every tenth as MP3."""
    from tests.audio_files import speechlike, write_audio

    words = ["the", "quick", "brown", "fox", "jumps", "over", "a", "lazy", "dog", "today"]
    rows = []
    for index in range(count):
        seconds = 2.0 + (index % 21) / 10
        suffix = ".mp3" if index % 10 == 0 else ".flac" if index % 5 == 0 else ".wav"
        audio = f"audio/{index:05d}{suffix}"
        write_audio(folder / audio, speechlike(seconds, 22050, seed=index), 22050)
        transcript = " ".join(words[(index + k) % len(words)] for k in range(6 + index % 5))
        step = (seconds - 0.2) / len(transcript.split())
        timed = [
            {"text": w, "start": round(0.1 + i * step, 3), "end": round(0.1 + (i + 1) * step, 3)}
            for i, w in enumerate(transcript.split())
        ]
        rows.append(
            {
                "id": f"clip-{index:05d}",
                "audio": audio,
                "transcript": transcript,
                "words": timed,
                "language": ["en", "de", "es", "pt", "zh"][index % 5],
                "speaker": f"s{index % 40}",
            }
        )
    (folder / "manifest.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    return folder


def bare_decode_seconds(corpus: Path, workers: int) -> float:
    from annotation.ingest.audio import FFMPEG

    files = sorted((corpus / "audio").iterdir())

    def decode(path: Path) -> None:
        subprocess.run(
            [FFMPEG, "-nostdin", "-v", "error", "-i", str(path), "-f", "s16le", "-"], check=True, capture_output=True
        )

    started = time.perf_counter()
    with ThreadPoolExecutor(max_workers=workers) as pool:
        list(pool.map(decode, files))
    return time.perf_counter() - started


def timed_import(corpus: Path, workers: int) -> tuple[float, dict[str, float]]:
    from annotation.services.corpus_import import corpus_import

    marks: dict[str, list[float]] = {}

    def progress(phase: str, done: int, total: int) -> None:
        now = time.perf_counter()
        marks.setdefault(phase, [now, now])[1] = now

    started = time.perf_counter()
    report = corpus_import(path=corpus, corpus_name="bench", progress=progress, workers=workers)
    seconds = time.perf_counter() - started
    assert report.created == len(list((corpus / "audio").iterdir())), report.problems[:3]
    phases = {phase: end - begin for phase, (begin, end) in marks.items()}
    last_progress = max(end for _, end in marks.values())
    phases["database write"] = started + seconds - last_progress
    return seconds, phases


def report(args, seconds: float, baseline: float, phases: dict[str, float]) -> None:
    peak_self = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    peak_child = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    rate = args.clips / seconds
    print(f"clips: {args.clips}, workers: {args.workers}")
    for phase, spent in phases.items():
        print(f"  {phase:<16} {spent:7.2f} s ({100 * spent / seconds:4.1f} %)")
    print(f"bare ffmpeg decode of the same files: {baseline:.2f} s ({args.clips / baseline:.1f} clips/s)")
    print(f"peak memory: {peak_self:.0f} MB (this process), {peak_child:.0f} MB (largest ffmpeg child)")
    print(
        f"import_speed: {args.clips} clips in {seconds:.1f} s = {rate:.1f} clips/s, "
        f"{baseline / seconds:.2f} x bare decode rate, peak RSS {peak_self:.0f} MB"
    )


if __name__ == "__main__":
    main()
