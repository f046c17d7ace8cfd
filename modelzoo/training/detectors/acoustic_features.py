"""Prosodic features of each word, relative to its clip (so a high voice or a loud recording does not
look like emphasis): pitch, intensity and duration, measured with Praat (praat-parselmouth)."""

import numpy as np

from modelzoo.training.data import SAMPLE_RATE, Clip

FEATURES = (
    "f0_mean_st",  # mean F0 of the word, semitones above the clip's median F0
    "f0_max_st",  # highest F0 of the word, semitones above the clip's median
    "f0_range_st",  # max - min F0 within the word, semitones
    "voiced_share",  # share of the word's pitch frames that are voiced
    "intensity_mean_db",  # mean intensity, dB above the clip's mean over its words
    "intensity_max_db",  # peak intensity, dB above the clip's mean
    "duration_log_ratio",  # log of duration / the clip's mean word duration
    "duration_per_letter_log_ratio",  # the same per letter: long words are not emphasis
)
PITCH_FLOOR, PITCH_CEILING, STEP = 75.0, 600.0, 0.01


def clip_features(clip: Clip) -> np.ndarray:
    """words x FEATURES for a clip whose words have times."""
    import parselmouth

    sound = parselmouth.Sound(clip.audio.astype(np.float64), SAMPLE_RATE)
    pitch = sound.to_pitch(time_step=STEP, pitch_floor=PITCH_FLOOR, pitch_ceiling=PITCH_CEILING)
    f0, f0_times = pitch.selected_array["frequency"], pitch.xs()
    intensity = sound.to_intensity(minimum_pitch=PITCH_FLOOR, time_step=STEP)
    db, db_times = intensity.values[0], intensity.xs()
    spans = [_span(*word.times) for word in clip.words]

    voiced = f0[f0 > 0]
    reference_f0 = float(np.median(voiced)) if voiced.size else 0.0
    in_words = np.concatenate([db[_inside(db_times, *span)] for span in spans]) if spans else db
    reference_db = float(in_words.mean()) if in_words.size else float(db.mean()) if db.size else 0.0
    durations = np.array([max(end - start, STEP) for start, end in (word.times for word in clip.words)])
    letters = np.array([max(1, sum(ch.isalnum() for ch in word.text)) for word in clip.words])
    rows = [
        [
            *_pitch_features(f0[_inside(f0_times, *span)], reference_f0),
            *_intensity_features(db[_inside(db_times, *span)], reference_db),
        ]
        for span in spans
    ]
    duration = np.log(durations / durations.mean())
    per_letter = np.log((durations / letters) / (durations / letters).mean())
    return np.column_stack([np.array(rows, dtype=np.float64).reshape(len(spans), 6), duration, per_letter])


def _span(start: float, end: float) -> tuple[float, float]:
    # at least one analysis frame wide, so a very short word still gets measured
    middle = (start + end) / 2
    return (min(start, middle - STEP), max(end, middle + STEP))


def _inside(times: np.ndarray, start: float, end: float) -> np.ndarray:
    return (times >= start) & (times < end)


def _semitones(hz: np.ndarray | float, reference: float) -> np.ndarray | float:
    return 12 * np.log2(hz / reference)


def _pitch_features(f0: np.ndarray, reference: float) -> list[float]:
    voiced = f0[f0 > 0]
    if voiced.size == 0 or reference <= 0:
        return [0.0, 0.0, 0.0, 0.0]  # unvoiced: no pitch evidence either way
    return [
        float(_semitones(voiced.mean(), reference)),
        float(_semitones(voiced.max(), reference)),
        float(_semitones(voiced.max(), voiced.min())),
        voiced.size / f0.size,
    ]


def _intensity_features(db: np.ndarray, reference: float) -> list[float]:
    if db.size == 0:
        return [0.0, 0.0]
    return [float(db.mean() - reference), float(db.max() - reference)]
