"""The agreement report at MMEE scale: time, peak memory, and the gain over calling krippendorff per resample.

    .venv/bin/python bench/agreement_scale.py [--clips 10000] [--per-clip 10] [--words 15]
        [--resamples 1000] [--seed 0] [--package-resamples 20] [--large-clips 100000]

Generates a study shaped like MMEE (evaluation.stats.simulation: 10 varieties in 7 languages, 34
emotions, tasks of 20 clips, 3 % of clips with one or two extra annotations from reruns, levels
0/1/2 at about 20 % marked words), then times, in this process:

1. the required core: subsample to 10 per clip; pooled and per-language average pairwise Cohen's
   kappa, Fleiss' kappa with its interval, Krippendorff's ordinal alpha with a clip bootstrap of
   --resamples resamples; emphasis rates;
2. the full report as the report page computes it (also per variety and emotion, the four alpha
   metrics, Gwet's AC1 and AC2 with their intervals, pairwise kappas on the three levels, annotator
   quality, the drill-down per clip, word position, word and annotator pair) and its JSON, with the
   time of each part and its ratio to step 1's time (a baseline of the same run, so that a busy
   machine shows less in the ratio than in the seconds);
3. the pooled ordinal-alpha bootstrap done the slow way: the krippendorff package called once per
   resample on that resample's words, timed on --package-resamples resamples and scaled to
   --resamples, against the same bootstrap from per-clip sums. The first resamples are the same
   clips both ways, and their alphas are compared.
4. Light's kappa's clip bootstrap (pooled, --resamples resamples) from per-clip statistics
   (evaluation.stats.light_bootstrap), which the full report includes, with how many annotator
   pairs share one clip and how many several.
5. the full report of a study ten times MMEE's size (--large-clips clips, 1 million annotations at
   the default), in a process of its own so that its peak memory is its own; 0 skips it.

Peak memory is the process's peak resident set (ru_maxrss), generation included. Targets: the
core within 3 s, the full report within 5 s, peak within 2 GB; at ten times the size, the full
report within 60 s and 2 GB. The exit status is 1 if one is missed. Times are wall-clock: run it
on an otherwise quiet machine.
"""

import argparse
import re
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from evaluation.reports.agreement import ReportParameters, report_compute
from evaluation.reports.agreement_format import report_json
from evaluation.stats.aggregation import subsample
from evaluation.stats.alpha import alpha_cluster_statistics, alpha_from_sums, alpha_layout
from evaluation.stats.cohen import average_pairwise_kappa, clip_pair_tables
from evaluation.stats.emphasis import emphasis_rates
from evaluation.stats.fleiss import fleiss_kappa
from evaluation.stats.light_bootstrap import clip_pair_statistics, light_kappa_resampled
from evaluation.stats.quality import Thresholds
from evaluation.stats.ratings import binary_counts
from evaluation.stats.resampling import bootstrap_sums, cluster_codes, generator, percentile_interval
from evaluation.stats.simulation import simulated_study

CORE_SECONDS, FULL_SECONDS, TARGET_BYTES = 3.0, 5.0, 2 * 1024**3
LARGE_SECONDS = 60.0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clips", type=int, default=10_000)
    parser.add_argument("--per-clip", type=int, default=10)
    parser.add_argument("--words", type=int, default=15)
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--package-resamples", type=int, default=20)
    parser.add_argument("--large-clips", type=int, default=100_000, help="clips of the 10x study (0: skip it)")
    parser.add_argument("--full-report-only", action="store_true", help=argparse.SUPPRESS)  # step 5's process
    args = parser.parse_args()
    if args.full_report_only:
        return full_report_only(args)

    started = time.perf_counter()
    data = simulated_study(clips=args.clips, per_clip=args.per_clip, words=args.words, seed=args.seed)
    generated = time.perf_counter() - started
    print(
        f"study: {len(data.clip_keys)} clips, {data.n_annotations} annotations "
        f"({len(data.annotator_keys)} annotators), {args.words} words a clip, "
        f"{int((data.levels >= 0).sum())} word judgements; generated in {generated:.2f} s"
    )

    core_seconds, pooled = core(data, args)
    print(
        f"\n1. required core (subsample, pooled + per-language Cohen, Fleiss with CI, ordinal alpha with "
        f"{args.resamples}-resample clip bootstrap, emphasis rates): {core_seconds:.2f} s"
    )
    for line in pooled:
        print("   " + line)

    phases = []
    started = time.perf_counter()
    parameters = ReportParameters(
        subsample=args.per_clip,
        seed=args.seed,
        resamples=args.resamples,
        thresholds=Thresholds(min_kappa=0.1, min_attention=1.0, min_time_ratio=1.0),
    )
    report = report_compute(
        data, parameters, progress=lambda phase, done, total: phases.append((phase, time.perf_counter()))
    )
    computed = time.perf_counter()
    text = report_json(report)
    full_seconds = time.perf_counter() - started
    print(
        f"\n2. full report ({len(report['agreement']['variety'])} varieties, {len(report['agreement']['emotion'])} "
        f"emotions, 4 alpha metrics, Gwet AC1/AC2, pairwise kappas on 3 levels, annotator quality) and its "
        f"JSON ({len(text) / 1e6:.1f} MB): full report time {full_seconds:.2f} s, "
        f"{full_seconds / core_seconds:.2f}x the core's time in this run"
    )
    print("   " + _phase_summary(phases, computed, full_seconds - (computed - started)))

    ours, package, agree = package_comparison(data, args)
    scaled = package * args.resamples / args.package_resamples
    print(
        f"\n3. pooled ordinal-alpha bootstrap, {args.resamples} resamples: per-clip sums {ours:.2f} s; "
        f"krippendorff package per resample {package:.2f} s for {args.package_resamples} -> "
        f"{scaled:.1f} s scaled; ratio {scaled / ours:.0f}x; largest difference over the shared resamples "
        f"{agree:.1e}"
    )

    light_seconds, light_line = light_interval(data, args)
    print(f"\n4. Light's kappa clip bootstrap, pooled, {args.resamples} resamples: {light_seconds:.2f} s; {light_line}")

    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # Linux reports KiB
    print(f"\npeak memory (max RSS, whole process): {peak / 1024**2:.0f} MiB")
    misses = [
        name
        for name, missed in [
            (f"core {core_seconds:.2f} s > {CORE_SECONDS} s", core_seconds > CORE_SECONDS),
            (f"full report {full_seconds:.2f} s > {FULL_SECONDS} s", full_seconds > FULL_SECONDS),
            (f"peak {peak / 1024**3:.2f} GiB > 2 GiB", peak > TARGET_BYTES),
        ]
        if missed
    ]
    large = ""
    if args.large_clips:
        large_seconds, large_peak, large_annotations = large_study(args)
        print(
            f"\n5. ten times MMEE: {args.large_clips} clips, {large_annotations} annotations: full report time "
            f"{large_seconds:.1f} s, peak memory {large_peak / 1024**2:.0f} MiB"
        )
        large = f"; 10x full report {large_seconds:.1f} s, {large_peak / 1024**2:.0f} MiB"
        if large_seconds > LARGE_SECONDS:
            misses.append(f"10x full report {large_seconds:.1f} s > {LARGE_SECONDS:.0f} s")
        if large_peak > TARGET_BYTES:
            misses.append(f"10x peak {large_peak / 1024**3:.2f} GiB > 2 GiB")
    print(
        f"summary: full report {full_seconds:.2f} s ({full_seconds / core_seconds:.2f}x core), Light's kappa interval {light_seconds:.2f} s, "
        f"peak {peak / 1024**2:.0f} MiB{large}; targets " + ("met" if not misses else "MISSED: " + "; ".join(misses))
    )
    return 1 if misses else 0


def light_interval(data, args):
    keys = np.asarray(data.clip_keys, dtype=object)[data.clip]
    names = np.asarray(data.annotator_keys, dtype=object)[data.annotator]
    ratings = data.ratings(subsample(keys, names, n=args.per_clip, seed=args.seed).keep)
    tables = clip_pair_tables(ratings)
    started = time.perf_counter()
    statistics = clip_pair_statistics(tables, np.unique(ratings.clip))
    values = light_kappa_resampled(statistics, resamples=args.resamples, seed=args.seed)
    seconds = time.perf_counter() - started
    interval = percentile_interval(values)
    value = average_pairwise_kappa(tables).value
    single, two, several = (
        int(statistics.single_count.sum()),
        statistics.two.first_clip.size,
        statistics.several[0].shape[0],
    )
    low, high = (f"{interval.low:.3f}", f"{interval.high:.3f}") if interval.low is not None else ("-", "-")
    return seconds, (
        f"{value:.3f} [{low}, {high}]; annotator pairs sharing one clip {single} (with a defined kappa), "
        f"two clips {two}, three or more {several}"
    )


def large_study(args) -> tuple[float, int, int]:
    """Step 5 in a process of its own: (full report seconds, its peak RSS in bytes, annotations)."""
    command = [
        sys.executable,
        __file__,
        "--full-report-only",
        "--clips",
        str(args.large_clips),
        "--per-clip",
        str(args.per_clip),
        "--words",
        str(args.words),
        "--resamples",
        str(args.resamples),
        "--seed",
        str(args.seed),
    ]
    output = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    found = re.search(r"full report (\S+) s, peak (\d+) bytes, (\d+) annotations", output)
    return float(found.group(1)), int(found.group(2)), int(found.group(3))


def full_report_only(args) -> int:
    data = simulated_study(clips=args.clips, per_clip=args.per_clip, words=args.words, seed=args.seed)
    started = time.perf_counter()
    parameters = ReportParameters(
        subsample=args.per_clip,
        seed=args.seed,
        resamples=args.resamples,
        thresholds=Thresholds(min_kappa=0.1, min_attention=1.0, min_time_ratio=1.0),
    )
    report_json(report_compute(data, parameters))
    seconds = time.perf_counter() - started
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    print(f"full report {seconds:.3f} s, peak {peak} bytes, {data.n_annotations} annotations")
    return 0


def core(data, args):
    started = time.perf_counter()
    keys = np.asarray(data.clip_keys, dtype=object)[data.clip]
    names = np.asarray(data.annotator_keys, dtype=object)[data.annotator]
    ratings = data.ratings(subsample(keys, names, n=args.per_clip, seed=args.seed).keep)
    counts, unit_clip = ratings.unit_counts()
    tables = clip_pair_tables(ratings)
    languages = np.asarray(data.clip_groups["language"], dtype=object)
    lines = []
    for name in ["pooled", *sorted(set(languages.tolist()))]:
        clips = np.ones(len(data.clip_keys), dtype=bool) if name == "pooled" else languages == name
        units = clips[unit_clip] & (counts.sum(axis=1) > 0)
        cohen = average_pairwise_kappa(tables, clips)
        fleiss = fleiss_kappa(binary_counts(counts[units]), unit_clip[units])
        codes, n = cluster_codes(unit_clip[units])
        layout = alpha_layout(counts[units])
        per_clip = alpha_cluster_statistics(counts[units], codes, n, layout)
        value = alpha_from_sums(per_clip.sum(axis=0), layout, "ordinal")[0]
        sums = bootstrap_sums(per_clip, resamples=args.resamples, seed=args.seed)
        interval = percentile_interval(alpha_from_sums(sums, layout, "ordinal"))
        rate = emphasis_rates(counts[units])["label_rate"]
        lines.append(
            f"{name:<7} Cohen {cohen.value:.3f}  Fleiss {fleiss.value:.3f} [{fleiss.ci[0]:.3f}, "
            f"{fleiss.ci[1]:.3f}]  alpha ordinal {value:.3f} [{interval.low:.3f}, {interval.high:.3f}]  "
            f"emphasis rate {rate:.3f}"
        )
    return time.perf_counter() - started, lines


def package_comparison(data, args):
    import krippendorff

    keys = np.asarray(data.clip_keys, dtype=object)[data.clip]
    names = np.asarray(data.annotator_keys, dtype=object)[data.annotator]
    counts, unit_clip = data.ratings(subsample(keys, names, n=args.per_clip, seed=args.seed).keep).unit_counts()
    rated = counts.sum(axis=1) > 0
    counts, unit_clip = counts[rated], unit_clip[rated]
    codes, n = cluster_codes(unit_clip)

    started = time.perf_counter()
    layout = alpha_layout(counts)
    per_clip = alpha_cluster_statistics(counts, codes, n, layout)
    fast = alpha_from_sums(bootstrap_sums(per_clip, resamples=args.resamples, seed=args.seed), layout, "ordinal")
    ours = time.perf_counter() - started

    order = np.argsort(codes, kind="stable")
    starts = np.searchsorted(codes[order], np.arange(n))
    sizes = np.bincount(codes, minlength=n)
    drawn = generator(seed=args.seed).integers(0, n, size=(args.package_resamples, n), dtype=np.uint32)
    started = time.perf_counter()
    slow = []
    for clips in drawn:
        lengths = sizes[clips]
        shift = np.repeat(starts[clips] - np.concatenate([[0], np.cumsum(lengths)[:-1]]), lengths)
        units = order[shift + np.arange(int(lengths.sum()))]
        slow.append(
            krippendorff.alpha(value_counts=counts[units], level_of_measurement="ordinal", value_domain=[0, 1, 2])
        )
    package = time.perf_counter() - started
    agree = float(np.max(np.abs(np.array(slow) - fast[: len(slow)]))) if slow else 0.0
    return ours, package, agree


def _phase_summary(phases, computed: float, json_seconds: float) -> str:
    """Seconds per part of the report: the steps report_compute announces, agreement summed per dimension."""
    if not phases:
        return ""
    marks = [t for _, t in phases] + [computed]
    parts: dict[str, float] = {}
    for (phase, start), end in zip(phases, marks[1:]):
        name = phase.split(":")[0] + (" " + phase.split()[1] if phase.startswith("agreement:") else "")
        if phase == "subsampling":
            name = "subsampling and pair tables"
        parts[name] = parts.get(name, 0.0) + end - start
    return ", ".join(f"{name} {seconds:.2f} s" for name, seconds in parts.items()) + f", JSON {json_seconds:.2f} s"


if __name__ == "__main__":
    sys.exit(main())
