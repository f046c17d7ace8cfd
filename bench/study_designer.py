"""The study designer against replication, on crowds it was not built on (evaluation.stats.crowds).

    .venv/bin/python bench/study_designer.py [--clips 2000] [--pilot 200] [--pilot-listeners 10]
        [--pilots 4] [--designs 5 8 10 15] [--replications 200] [--replicates 40] [--mixtures NAME ...]

For every harness mixture and each of --pilots pilots (seeds --seed, --seed + 1, ...): a pilot of
--pilot clips with --pilot-listeners listeners each is fed to
the designer as the study designer service feeds a study's pilot (assumptions_from_pilot, the
pilot's own flips and kappa error, its resampled listeners and clips); the designer predicts, for a
study of --clips clips and each of --designs listeners a clip (fixed), the share of labels one more
listener flips and the width of kappa's 95 % interval. Replication runs the same designs on
--replications fresh crowds of the mixture: the flip share's mean and 2 x 1.96 x kappa's standard
deviation. A row is within when the prediction is within 25 % of replication; "cannot tell" when
the designer says so (flips: its check against the pilot fails, or the pilot leaves the flip share
more than 25 % open; kappa width: the pilot's kappa error, its uncertainty about its crowd and the
designer's replicates leave it more than 25 % open on either side in 90 % of pilots, or the
designer's crowd's kappa error does not move with listeners as the pilot's). A pilot is one in a
hundred in some crowds (which heavy markers it drew moves its kappa error by a quarter), so the
designer's claim is a rate: the last line sums it up, with the pilots that had a width told and
OUTSIDE.
"""

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from evaluation.stats.crowds import MIXTURES, crowd
from evaluation.stats.design_check import pilot_kappas, pilot_measurements, pilot_resamples
from evaluation.stats.fleiss import fleiss_kappa
from evaluation.stats.pilot_assumptions import assumptions_from_pilot
from evaluation.stats.study_designer import FIT_TOLERANCE, design_study


def replicated(mixture: str, designs, clips: int, replications: int) -> dict:
    """Per design: the flip share's mean and the kappa interval's width over fresh crowds."""
    flips = {n: [] for n in designs}
    kappas = {n: [] for n in designs}
    for replication in range(replications):
        made = crowd(mixture, clips=clips, listeners=max(designs) + 1, seed=100_000 + replication)
        marks = np.cumsum(made.levels >= 1, axis=1)
        for n in designs:
            first = marks[:, n - 1]
            flips[n].append(float(((2 * first > n) != (2 * marks[:, n] > n + 1)).mean()))
            kappas[n].append(fleiss_kappa(np.stack([n - first.ravel(), first.ravel()], axis=1)).value)
    return {n: (float(np.mean(flips[n])), 2 * 1.959964 * float(np.std(kappas[n], ddof=1))) for n in designs}


def designed(mixture: str, options, seed: int):
    pilot = crowd(mixture, clips=options.pilot, listeners=options.pilot_listeners, seed=seed)
    clip, annotator, levels = pilot.annotations(options.pilot_listeners)
    estimate = {"clip": clip, "annotator": annotator, "levels": levels, "clips": options.clips}
    return design_study(
        assumptions_from_pilot(**estimate),
        annotators=tuple(options.designs),
        modes=("fixed",),
        replicates=options.replicates,
        measured=pilot_measurements(clip, levels),
        measured_kappa=pilot_kappas(clip, annotator, levels),
        resamples=pilot_resamples(**estimate, draws=options.replicates // 2, seed=seed),
        seed=seed,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clips", type=int, default=2000)
    parser.add_argument("--pilot", type=int, default=200)
    parser.add_argument("--pilot-listeners", type=int, default=10)
    parser.add_argument("--designs", type=int, nargs="+", default=[5, 8, 10, 15])
    parser.add_argument("--pilots", type=int, default=4)
    parser.add_argument("--replications", type=int, default=200)
    parser.add_argument("--replicates", type=int, default=40)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--mixtures", nargs="+", default=list(MIXTURES), choices=list(MIXTURES))
    options = parser.parse_args()
    print(
        f"study {options.clips} clips; pilot {options.pilot} clips x {options.pilot_listeners} listeners; "
        f"{options.pilots} pilots a mixture; {options.replications} replications; designer {options.replicates} replicates"
    )
    print(
        f"{'mixture':26} {'pilot':>5} {'N':>3} {'flips':>7} {'band':>15} {'replic.':>8} {'ratio':>6} {'flips?':>11}  "
        f"{'kappa w':>8} {'replic.':>8} {'ratio':>6} {'kappa w?':>11}"
    )
    counts = dict.fromkeys(("flips within", "flips cannot tell", "kappa within", "kappa cannot tell"), 0)
    rows = pilots = 0
    missed = {"flips": 0, "kappa": 0}  # pilots with a figure told and OUTSIDE
    started = time.perf_counter()
    for mixture in options.mixtures:
        truth = replicated(mixture, options.designs, options.clips, options.replications)
        for seed in range(options.seed, options.seed + options.pilots):
            pilots += 1
            outside = set()
            for row in designed(mixture, options, seed).rows:
                flips, width = truth[row.annotators]
                flip_ratio, width_ratio = row.flip_share / flips, row.kappa_width / width
                rows += 1
                flip_verdict = verdict(row.can_tell, flip_ratio)
                kappa_verdict = verdict(row.kappa_can_tell, width_ratio)
                for name, said in (("flips", flip_verdict), ("kappa", kappa_verdict)):
                    counts[f"{name} {said}"] = counts.get(f"{name} {said}", 0) + 1
                    outside |= {name} if said == "OUTSIDE" else set()
                band = f"{row.flip_share_low:.2%}-{row.flip_share_high:.2%}"
                print(
                    f"{mixture:26} {seed:>5} {row.annotators:>3} {row.flip_share:>7.2%} {band:>15} {flips:>8.2%} "
                    f"{flip_ratio:>6.2f} {flip_verdict:>11}  {row.kappa_width:>8.4f} {width:>8.4f} {width_ratio:>6.2f} "
                    f"{kappa_verdict:>11}"
                )
            for name in outside:
                missed[name] += 1
    held = {name: counts[f"{name} within"] + counts[f"{name} cannot tell"] for name in ("flips", "kappa")}
    print(
        f"summary: of {rows} (mixture, N), flip share within {FIT_TOLERANCE:.0%} of replication on "
        f"{counts['flips within']}, cannot tell on {counts['flips cannot tell']}, OUTSIDE on {rows - held['flips']}; "
        f"kappa width within {FIT_TOLERANCE:.0%} on {counts['kappa within']}, cannot tell on "
        f"{counts['kappa cannot tell']}, OUTSIDE on {rows - held['kappa']}; pilots with a figure told and OUTSIDE: "
        f"flips {missed['flips']}, kappa {missed['kappa']} of {pilots}; {time.perf_counter() - started:.0f} s"
    )


def verdict(can_tell: bool, ratio: float) -> str:
    """ "cannot tell" where the designer says so, else whether its figure is within FIT_TOLERANCE."""
    if not can_tell:
        return "cannot tell"
    return "within" if abs(ratio - 1) <= FIT_TOLERANCE else "OUTSIDE"


if __name__ == "__main__":
    main()
