"""The headphone check's sounds: two published tests that headphones pass and loudspeakers do not,
and the reference noise the participant sets their volume by. Pure: numpy in, WAV bytes out.

Huggins pitch (Milne, Bianco, Poole, Zhao, Oxenham, Billig and Chait 2021, Behavior Research
Methods 53: 1551-1562): three noises, one of which hides a faint tone. Every noise is white and
the same in both ears, except that in one interval a narrow band around 600 Hz is phase-inverted
in the right ear. Each ear alone gets plain white noise; only the two ears together hear the
tone. A loudspeaker mixes the channels before they reach the ears, and the band cancels instead.

Antiphase (Woods, Siegel, Traer and McDermott 2017, Attention, Perception, & Psychophysics 79:
2064-2072): three 200 Hz tones, "which is quietest?". The target is 6 dB quieter; one of the
others is in antiphase between the channels (right = -left). Over headphones it is as loud as
the third; from loudspeakers the two channels cancel in the air, so it sounds quietest.

Each parameter below names its source. Where this module departs from the authors, it says so.

A trial is made again from a secret seed whenever one of its intervals is asked for, so nothing is
stored and which interval is the target never leaves the server. Every interval of a trial has
the same number of samples, so its WAV file (16-bit PCM, no compression) has the same number of
bytes; and serving any interval computes the whole trial, so the time taken says nothing either.
"""

import hashlib
import io
import math
import random
import wave

import numpy as np

HUGGINS = "huggins"
ANTIPHASE = "antiphase"
TESTS = (HUGGINS, ANTIPHASE)
INTERVALS = 3  # three-interval forced choice in both papers

RATE = 44_100  # Milne et al.: "sampling frequency 44.1 kHz, bandwidth 22.05 kHz"
SAMPLE_BYTES = 2  # 16-bit PCM: lossless, and a file's length depends on its duration alone

# Levels, in dB re full scale (RMS). The reference noise is what the participant sets a comfortable
# volume by; the tests then play at fixed levels relative to it. -20 dBFS leaves room for the
# noise's peaks (a Gaussian's largest of 88,200 samples is about 4.6 sigma, -6.8 dBFS).
REFERENCE_DBFS = -20.0
REFERENCE_SECONDS = 4.0
REFERENCE_RAMP_SECONDS = 0.02

# --- Huggins pitch: Milne et al. 2021 and the Chait lab's published generator
# (github.com/ChaitLabUCL/HeadphoneCheck_Test, generateStim_HugginsPitch) ---
HUGGINS_CENTRE_HZ = 600.0  # "A centre frequency of 600 Hz is used"
HUGGINS_HALF_WIDTH = 0.06  # "a frequency band (± 6%) surrounding 600 Hz": 564-636 Hz, 12 % wide
HUGGINS_SECONDS = 1.0  # "three intervals of white noise, each 1000 ms long"
HUGGINS_GAP_SECONDS = 1.0  # the silence between intervals in their stimulus files (measured: 1.0 s)
# Their noise starts and stops abruptly (no ramp in the generator or the files); ours is gated
# with 20 ms raised-cosine ramps so that no onset clicks. Both ears get the same ramp, which
# leaves the interaural relation (the only cue) as it was.
HUGGINS_RAMP_SECONDS = 0.02
# Their calibration noise and test noises have the same level (both -12.6 dBFS RMS in their files).
HUGGINS_DBFS = REFERENCE_DBFS

# --- Antiphase: Woods et al. 2017 and the McDermott lab's published stimuli
# (github.com/mcdermottLab/HeadphoneCheck, assets/antiphase_HC_*.wav) ---
ANTIPHASE_HZ = 200.0  # "three consecutive 200-Hz sinusoidal tones"
ANTIPHASE_SECONDS = 1.0  # 1000 ms tones (their files: three 1 s tones)
ANTIPHASE_RAMP_SECONDS = 0.1  # 100 ms raised-cosine on and off ramps
ANTIPHASE_GAP_SECONDS = 0.5  # their files: tones at 0, 1.5 and 3.0 s
ANTIPHASE_TARGET_DB = -6.0  # the target is 6 dB quieter than the standard and the foil
# In their files the standard tone is 6.4 dB below the calibration noise (-17.0 against -10.6 dBFS RMS).
ANTIPHASE_STANDARD_DBFS = REFERENCE_DBFS - 6.0

# The Huggins example shown before the test: a trial of their kind whose tone is in noise 2,
# as in the Chait lab's example ("The beep is hidden inside the second noise").
EXAMPLE_TARGET = 1
_EXAMPLE_SEED = "huggins-example"


def target_interval(seed: str) -> int:
    """Which interval (0, 1 or 2) of the trial made from `seed` is the one to find."""
    return random.Random(f"{seed}:target").randrange(INTERVALS)


def gap_seconds(test: str) -> float:
    """The silence the page leaves between two intervals of a trial."""
    return {HUGGINS: HUGGINS_GAP_SECONDS, ANTIPHASE: ANTIPHASE_GAP_SECONDS}[test]


def interval_seconds(test: str) -> float:
    return {HUGGINS: HUGGINS_SECONDS, ANTIPHASE: ANTIPHASE_SECONDS}[test]


def trial_intervals(test: str, seed: str) -> list[np.ndarray]:
    """The three intervals of a trial, each (samples, 2) float: left and right channel."""
    target = target_interval(seed)
    if test == HUGGINS:
        return huggins_intervals(seed, target)
    if test == ANTIPHASE:
        # Which of the two others is the antiphase foil is drawn from the seed too.
        foil = random.Random(f"{seed}:foil").choice([i for i in range(INTERVALS) if i != target])
        return antiphase_intervals(target, foil)
    raise ValueError(f"unknown headphone test {test!r}; the tests are {', '.join(TESTS)}")


def interval_wav(test: str, seed: str, interval: int) -> bytes:
    """The WAV file of one interval. The whole trial is made for every interval asked for, so
    that serving the target takes as long as serving any other."""
    intervals = trial_intervals(test, seed)
    return wav_bytes(intervals[interval])


def huggins_intervals(seed: str, target: int) -> list[np.ndarray]:
    rng = np.random.default_rng(_seed_number(seed))
    return [_huggins_interval(rng, dichotic=index == target) for index in range(INTERVALS)]


def antiphase_intervals(target: int, foil: int) -> list[np.ndarray]:
    intervals = []
    for index in range(INTERVALS):
        level = ANTIPHASE_STANDARD_DBFS + (ANTIPHASE_TARGET_DB if index == target else 0.0)
        intervals.append(_tone(level, right_polarity=-1.0 if index == foil else 1.0))
    return intervals


def example_interval_wav(interval: int) -> bytes:
    """An interval of the fixed Huggins example (its tone is in interval EXAMPLE_TARGET)."""
    return wav_bytes(huggins_intervals(_EXAMPLE_SEED, EXAMPLE_TARGET)[interval])


def reference_noise() -> np.ndarray:
    """The reference: white noise, the same in both ears, at REFERENCE_DBFS."""
    samples = round(REFERENCE_SECONDS * RATE)
    noise = np.random.default_rng(_seed_number("reference-noise")).standard_normal(samples)
    stereo = np.stack([noise, noise], axis=1)
    return _at_level(stereo, REFERENCE_DBFS) * raised_cosine_ramps(samples, REFERENCE_RAMP_SECONDS)[:, None]


def reference_noise_wav() -> bytes:
    return wav_bytes(reference_noise())


def wav_bytes(stereo: np.ndarray) -> bytes:
    """16-bit PCM stereo WAV at RATE: its length depends on the number of samples alone."""
    pcm = np.round(np.clip(stereo, -1.0, 1.0) * 32767).astype("<i2")
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as handle:
        handle.setnchannels(2)
        handle.setsampwidth(SAMPLE_BYTES)
        handle.setframerate(RATE)
        handle.writeframes(pcm.tobytes())
    return buffer.getvalue()


def raised_cosine_ramps(samples: int, ramp_seconds: float) -> np.ndarray:
    """An envelope of `samples` that rises from 0 over `ramp_seconds` by half a cosine period,
    holds at 1, and falls back to 0 at the end the same way."""
    ramp = round(ramp_seconds * RATE)
    envelope = np.ones(samples)
    rise = 0.5 * (1.0 - np.cos(np.pi * np.arange(ramp) / ramp))
    envelope[:ramp] = rise
    envelope[samples - ramp :] = rise[::-1]
    return envelope


def guessing_chance(*, trials: int, pass_mark: int, tries: int, alternatives: int = INTERVALS) -> float:
    """The chance of passing by guessing: at least `pass_mark` of `trials` right at 1/alternatives
    each, in any of `tries` attempts. 5 or 6 of 6 at 1/3: 13/729 = 1.8 %."""
    p = 1.0 / alternatives
    once = sum(math.comb(trials, k) * p**k * (1 - p) ** (trials - k) for k in range(pass_mark, trials + 1))
    return 1.0 - (1.0 - once) ** tries


def _huggins_interval(rng: np.random.Generator, *, dichotic: bool) -> np.ndarray:
    samples = round(HUGGINS_SECONDS * RATE)
    noise = rng.standard_normal(samples)
    right = noise
    if dichotic:
        # "a constant phase shift of 180° in a frequency band (± 6%) surrounding 600 Hz within the
        # noise sample delivered to the right ear, while the original sample is delivered to the
        # left ear": the band's Fourier components change sign, every magnitude stays.
        spectrum = np.fft.rfft(noise)
        frequencies = np.fft.rfftfreq(samples, 1.0 / RATE)
        band = np.abs(frequencies - HUGGINS_CENTRE_HZ) <= HUGGINS_CENTRE_HZ * HUGGINS_HALF_WIDTH
        spectrum[band] *= -1.0
        right = np.fft.irfft(spectrum, samples)
    stereo = np.stack([noise, right], axis=1)
    return _at_level(stereo, HUGGINS_DBFS) * raised_cosine_ramps(samples, HUGGINS_RAMP_SECONDS)[:, None]


def _tone(level_dbfs: float, *, right_polarity: float) -> np.ndarray:
    samples = round(ANTIPHASE_SECONDS * RATE)
    t = np.arange(samples) / RATE
    amplitude = math.sqrt(2.0) * 10 ** (level_dbfs / 20)  # a sine's RMS is its amplitude over sqrt(2)
    tone = amplitude * np.sin(2 * np.pi * ANTIPHASE_HZ * t) * raised_cosine_ramps(samples, ANTIPHASE_RAMP_SECONDS)
    return np.stack([tone, right_polarity * tone], axis=1)


def _at_level(stereo: np.ndarray, level_dbfs: float) -> np.ndarray:
    """Scaled to exactly `level_dbfs` RMS over both channels, so that no interval of a trial is
    louder than another by the luck of its noise."""
    return stereo * (10 ** (level_dbfs / 20) / np.sqrt(np.mean(stereo**2)))


def _seed_number(seed: str) -> int:
    return int.from_bytes(hashlib.sha256(seed.encode()).digest()[:8], "big")
