"""A label set at MMEE scale: build, finalize, JSONL, CSV and Parquet exports; time and peak memory of each.

    .venv/bin/python bench/export_scale.py [--clips 10000] [--per-clip 10] [--words 15] [--resamples 1000]

Runs on a fresh SQLite database and media folder in a temporary directory (DATABASE_URL is ignored). The study comes from
evaluation.stats.simulation (10 varieties in 7 languages, 34 emotions, tasks of 20 clips, 3 % of
clips with extra annotations), written with bulk_create as clips, words, participants, tasks and
annotations. Then, each step in a process of its own (forked once the study is written, so that
its peak resident memory is its own and not that of an earlier step):

1. build: the label set's background job, in this process (annotation selection, labels, splits,
   data-scale steps, and the agreement summary with --resamples bootstrap resamples);
2. finalize: the checksum of the rows;
3. the JSONL export, 4. the CSV export and 5. the Parquet export (audio embedded): the background
   job, from the stored rows to a stored zip. Every clip's 16 kHz audio is one stored WAV of
   --audio-seconds of noise (its bytes are read once per clip, as for distinct files).

Baseline, measured in the same run: a bare loop that json.dumps the same clip and word rows,
already in memory, into two files: the least work a JSONL export does. Peak memory is the step's
process peak (ru_maxrss; the forked process starts with the parent's ~100 MB of imports). Target:
finalize + JSONL export within 30 s and 1 GB (on two cores); the exit status is 1 if missed.
"""

import argparse
import json
import multiprocessing
import os
import resource
import sys
import tempfile
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

TARGET_SECONDS, TARGET_BYTES = 30.0, 1024**3
NAME = "bench"


def main() -> int:
    args = parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-export-") as scratch:
        scratch = Path(scratch)
        setup_django(scratch / "data")
        steps = {}
        for name, step in [
            ("write the study", write_study),
            ("1. build", build),
            ("2. finalize", finalize),
            ("3. JSONL export", export_jsonl),
            ("4. CSV export", export_csv),
            ("5. Parquet export", export_parquet),
            ("baseline", baseline),
        ]:
            steps[name] = in_own_process(step, args, scratch)
            seconds, peak, note = steps[name]
            print(f"{name:<16} {seconds:7.2f} s   peak {peak / 1024**2:6.0f} MiB   {note}", flush=True)
    return report(args, steps)


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clips", type=int, default=10_000)
    parser.add_argument("--per-clip", type=int, default=10)
    parser.add_argument("--words", type=int, default=15)
    parser.add_argument("--resamples", type=int, default=1000, help="bootstrap resamples of the agreement summary")
    parser.add_argument("--audio-seconds", type=float, default=4.0, help="length of the clips' audio (Parquet)")
    parser.add_argument("--seed", type=int, default=0)
    return parser.parse_args()


def setup_django(data_dir: Path) -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    os.environ["DATA_DIR"] = str(data_dir)
    # Always the fresh SQLite database in DATA_DIR: the bench fills it with a whole study, and
    # must never do that in a database DATABASE_URL names (the suite runs on PostgreSQL too).
    os.environ.pop("DATABASE_URL", None)
    os.environ.setdefault("SECRET_KEY", "bench-only")
    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", verbosity=0)


def in_own_process(step, args, scratch: Path) -> tuple[float, int, str]:
    """Run `step(args, scratch)` in a forked process: (seconds, its peak RSS in bytes, its note)."""
    from django.db import connections

    connections.close_all()  # a forked process must open its own connection
    results = multiprocessing.get_context("fork").Queue()
    process = multiprocessing.get_context("fork").Process(target=_run, args=(step, args, scratch, results))
    process.start()
    outcome = results.get()
    process.join()
    if "error" in outcome:
        sys.exit(f"{step.__name__} failed:\n{outcome['error']}")
    return outcome["seconds"], outcome["peak"], outcome["note"]


def _run(step, args, scratch, results) -> None:
    try:
        started = time.perf_counter()
        note = step(args, scratch)
        seconds = time.perf_counter() - started
        if isinstance(note, tuple):  # a step that times only part of its work (the baseline)
            note, seconds = note
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # Linux reports KiB
        results.put({"seconds": seconds, "peak": peak, "note": note})
    except BaseException:
        results.put({"error": traceback.format_exc()})


def write_study(args, scratch) -> str:
    """The simulated study as database rows (bulk_create), with no audio files."""
    from datetime import timedelta

    import numpy as np
    from django.db import transaction
    from django.utils import timezone

    from annotation.models import Annotation, Clip, Corpus, Participant, Study, StudyItem, Task, TaskItem, Word
    from evaluation.stats.simulation import simulated_study

    data = simulated_study(clips=args.clips, per_clip=args.per_clip, words=args.words, seed=args.seed)
    now = timezone.now()
    audio = _store_wav(args.audio_seconds)
    with transaction.atomic():
        corpus = Corpus.objects.create(name=NAME)
        groups = data.clip_groups
        clips = Clip.objects.bulk_create(
            [
                Clip(
                    corpus=corpus,
                    external_id=key,
                    transcript=" ".join(f"w{k}" for k in range(args.words)),
                    language=groups["language"][i],
                    variety=groups["variety"][i],
                    emotion=groups["emotion"][i],
                    source_path=f"{key}.wav",
                    original_audio=f"{key}.wav",
                    model_audio=audio,
                    browser_audio=f"{key}.mp3",
                    duration=4.0,
                    sample_rate=16000,
                    checksum=f"{i:064x}",
                )
                for i, key in enumerate(data.clip_keys)
            ],
            batch_size=2000,
        )
        Word.objects.bulk_create(
            (
                Word(clip=clip, index=k, text=f"w{k}", start=0.2 * k, end=0.2 * (k + 1))
                for clip in clips
                for k in range(args.words)
            ),
            batch_size=5000,
        )
        study = Study.objects.create(name=NAME, slug=NAME, corpus=corpus, target_annotations=args.per_clip)
        StudyItem.objects.bulk_create((StudyItem(study=study, clip=clip) for clip in clips), batch_size=5000)
        participants = Participant.objects.bulk_create(
            [
                Participant(study=study, prolific_pid=key, access_key=f"k{i}")
                for i, key in enumerate(data.annotator_keys)
            ],
            batch_size=2000,
        )
        tasks = Task.objects.bulk_create(
            [
                Task(participant=p, study=study, status=Task.Status.COMPLETED, expires_at=now + timedelta(hours=1))
                for p in participants
            ],
            batch_size=2000,
        )
        positions = np.zeros(len(participants), dtype=np.int64)
        items = []
        for clip_index, annotator in zip(data.clip.tolist(), data.annotator.tolist()):
            items.append(
                TaskItem(
                    task=tasks[annotator],
                    position=int(positions[annotator]),
                    clip=clips[clip_index],
                    word_count=args.words,
                    duration=4.0,
                    status=TaskItem.Status.SUBMITTED,
                )
            )
            positions[annotator] += 1
        items = TaskItem.objects.bulk_create(items, batch_size=5000)
        Annotation.objects.bulk_create(
            (
                Annotation(
                    item=item,
                    participant=participants[a],
                    clip=clips[c],
                    levels=levels[: args.words].tolist(),
                    mismatch_reported=bool(m),
                    coverage=1.0,
                    seconds_spent=float(s),
                )
                for item, a, c, levels, m, s in zip(
                    items,
                    data.annotator.tolist(),
                    data.clip.tolist(),
                    data.levels,
                    data.mismatch.tolist(),
                    data.seconds.tolist(),
                )
            ),
            batch_size=5000,
        )
    return (
        f"{len(clips)} clips, {len(clips) * args.words} words, {len(items)} annotations, {len(participants)} annotators"
    )


def _store_wav(seconds: float) -> str:
    """One 16 kHz mono 16-bit WAV of noise in the media storage; its name."""
    import io
    import wave

    import numpy as np
    from django.core.files.base import ContentFile
    from django.core.files.storage import default_storage

    samples = np.random.default_rng(0).integers(-3000, 3000, size=int(16000 * seconds), dtype=np.int16)
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as writer:
        writer.setnchannels(1)
        writer.setsampwidth(2)
        writer.setframerate(16000)
        writer.writeframes(samples.tobytes())
    return default_storage.save("bench/model.wav", ContentFile(buffer.getvalue()))


def _label_set():
    from evaluation.models import LabelSet

    return LabelSet.objects.get(name=NAME)


def build(args, scratch) -> str:
    from annotation.models import Study
    from evaluation.models import LabelSet
    from evaluation.services.label_sets import label_set_build, label_set_create, label_set_default_parameters

    studies = [Study.objects.get(slug=NAME)]
    parameters = label_set_default_parameters(studies=studies, resamples=args.resamples)
    label_set = label_set_create(name=NAME, studies=studies, parameters=parameters, enqueue=False)
    label_set_build(label_set_id=label_set.pk)
    label_set.refresh_from_db()
    if label_set.status != LabelSet.Status.SUCCEEDED:
        raise RuntimeError(label_set.error)
    summary = label_set.summary
    return (
        f"{summary['clips']} clips, {summary['words']} words, {summary['annotations']} annotations kept; "
        f"agreement summary with {args.resamples} bootstrap resamples"
    )


def finalize(args, scratch) -> str:
    from evaluation.services.label_sets import label_set_finalize

    label_set = label_set_finalize(label_set=_label_set())
    return f"checksum {label_set.checksum[:16]}..."


def _export(format: str) -> str:
    from evaluation.models import DatasetExport
    from evaluation.services.dataset_exports import dataset_export_request, dataset_export_run

    export = dataset_export_request(format=format, label_set=_label_set(), enqueue=False)
    dataset_export_run(export_id=export.pk)
    export.refresh_from_db()
    if export.status != DatasetExport.Status.SUCCEEDED:
        raise RuntimeError(export.error)
    return f"{export.file_name}: {export.size / 1024**2:.1f} MiB zipped"


def export_jsonl(args, scratch) -> str:
    return _export("jsonl")


def export_csv(args, scratch) -> str:
    return _export("csv")


def export_parquet(args, scratch) -> str:
    return _export("parquet")


def baseline(args, scratch) -> tuple[str, float]:
    """json.dumps of the same clip and word rows, read into memory first (not timed)."""
    from evaluation.reports.label_set_files import word_rows
    from evaluation.selectors.label_sets import label_set_rows

    rows = list(label_set_rows(label_set_id=_label_set().pk))
    started = time.perf_counter()
    dump = {"sort_keys": True, "ensure_ascii": False, "separators": (",", ":")}
    with open(scratch / "clips.jsonl", "w") as clips, open(scratch / "words.jsonl", "w") as words:
        for row in rows:
            clips.write(json.dumps(row, **dump) + "\n")
            for word in word_rows([row]):
                words.write(json.dumps(word, **dump) + "\n")
    seconds = time.perf_counter() - started
    size = (scratch / "clips.jsonl").stat().st_size + (scratch / "words.jsonl").stat().st_size
    return f"json.dumps of the rows, already in memory, into {size / 1024**2:.0f} MiB of JSONL", seconds


def report(args, steps) -> int:
    seconds = {name: step[0] for name, step in steps.items()}
    peaks = {name: step[1] for name, step in steps.items()}
    dumps = seconds["baseline"]
    jsonl = seconds["3. JSONL export"]
    target = seconds["2. finalize"] + jsonl
    peak = max(peaks["2. finalize"], peaks["3. JSONL export"])
    print(f"\nJSONL export / bare json.dumps of the same rows: {jsonl:.2f} s / {dumps:.2f} s = {jsonl / dumps:.1f}x")
    if args.resamples < 1000:
        print(f"note: the build computed its agreement summary with {args.resamples} resamples, not the default 1000")
    missed = target > TARGET_SECONDS or peak > TARGET_BYTES
    print(
        f"export_scale: {args.clips} clips x {args.per_clip} annotators x {args.words} words: build "
        f"{seconds['1. build']:.1f} s, finalize + JSONL export {target:.1f} s (peak {peak / 1024**2:.0f} MiB), "
        f"CSV export {seconds['4. CSV export']:.1f} s, Parquet export (audio embedded) "
        f"{seconds['5. Parquet export']:.1f} s (peak {peaks['5. Parquet export'] / 1024**2:.0f} MiB; JSONL's "
        f"{peaks['3. JSONL export'] / 1024**2:.0f} MiB); target <= 30 s and 1 GB: {'MISSED' if missed else 'met'}"
    )
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
