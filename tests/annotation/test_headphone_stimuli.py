"""The headphone check's sounds against their definitions (Milne et al. 2021's Huggins pitch,
Woods et al. 2017's antiphase tones), measured on the WAV bytes a participant is sent.
Pure numpy: no database."""

import io
import math
import wave
from itertools import permutations

import numpy as np
import pytest

from annotation import headphone_stimuli as hs

SEEDS = [f"seed-{n}" for n in range(12)]


def decoded(wav: bytes) -> np.ndarray:
    """The WAV as (samples, 2) floats in [-1, 1], with its format checked."""
    with wave.open(io.BytesIO(wav)) as handle:
        assert (handle.getnchannels(), handle.getsampwidth(), handle.getframerate()) == (2, 2, hs.RATE)
        frames = handle.readframes(handle.getnframes())
    return np.frombuffer(frames, dtype="<i2").reshape(-1, 2) / 32767


def trial(test: str, seed: str) -> list[np.ndarray]:
    return [decoded(hs.interval_wav(test, seed, index)) for index in range(hs.INTERVALS)]


def spectra(stereo: np.ndarray):
    left, right = np.fft.rfft(stereo[:, 0]), np.fft.rfft(stereo[:, 1])
    return np.fft.rfftfreq(len(stereo), 1 / hs.RATE), left, right


def between(frequencies, low, high):
    return (frequencies >= low) & (frequencies <= high)


# Inside the phase-inverted band (564-636 Hz), away from its edges; and well outside it.
IN_BAND = (575.0, 625.0)
OUTSIDE = [(150.0, 540.0), (660.0, 4000.0)]
FLANKS = [(400.0, 540.0), (660.0, 800.0)]


def coherence(frequencies, left, right, bands) -> float:
    """The interaural coherence over the bands: +1 in phase, -1 in antiphase, 0 unrelated."""
    chosen = np.zeros(len(frequencies), dtype=bool)
    for low, high in bands:
        chosen |= between(frequencies, low, high)
    cross = np.sum(left[chosen] * np.conj(right[chosen])).real
    return cross / math.sqrt(np.sum(np.abs(left[chosen]) ** 2) * np.sum(np.abs(right[chosen]) ** 2))


def band_power(frequencies, spectrum, bands) -> float:
    """Mean power per frequency bin over the bands."""
    chosen = np.zeros(len(frequencies), dtype=bool)
    for low, high in bands:
        chosen |= between(frequencies, low, high)
    return float(np.mean(np.abs(spectrum[chosen]) ** 2))


def db(ratio: float) -> float:
    return 10 * math.log10(ratio)


def rms_dbfs(samples: np.ndarray) -> float:
    return 20 * math.log10(math.sqrt(np.mean(samples**2)))


# --- Huggins pitch ---


@pytest.mark.parametrize("seed", SEEDS)
def test_only_the_target_is_phase_inverted_between_the_ears_and_only_in_the_band(seed):
    target = hs.target_interval(seed)
    for index, stereo in enumerate(trial(hs.HUGGINS, seed)):
        frequencies, left, right = spectra(stereo)
        outside = coherence(frequencies, left, right, OUTSIDE)
        assert outside > 0.999, f"interval {index}: outside the band the ears should get the same noise"
        inside = coherence(frequencies, left, right, [IN_BAND])
        if index == target:
            assert inside < -0.99, f"the target's band should be in antiphase between the ears (coherence {inside})"
            phase = np.angle(left[between(frequencies, *IN_BAND)] * np.conj(right[between(frequencies, *IN_BAND)]))
            off = np.abs(np.abs(phase) - np.pi)  # each component's distance from antiphase, in radians
            # (the weakest few are moved by the ramps' leakage and the 16-bit rounding)
            assert np.mean(off < 0.35) > 0.95 and np.median(off) < 0.1, "the band's components are inverted"
        else:
            assert np.array_equal(stereo[:, 0], stereo[:, 1]), f"interval {index} is diotic: the same in both ears"


@pytest.mark.parametrize("seed", SEEDS)
def test_the_band_is_600_hz_plus_or_minus_6_percent(seed):
    """Just inside the band's edges the ears are in antiphase, just outside in phase."""
    stereo = trial(hs.HUGGINS, seed)[hs.target_interval(seed)]
    frequencies, left, right = spectra(stereo)
    assert coherence(frequencies, left, right, [(568.0, 574.0)]) < -0.9
    assert coherence(frequencies, left, right, [(626.0, 632.0)]) < -0.9
    assert coherence(frequencies, left, right, [(552.0, 558.0)]) > 0.9
    assert coherence(frequencies, left, right, [(642.0, 648.0)]) > 0.9


@pytest.mark.parametrize("seed", SEEDS)
def test_each_ear_alone_hears_plain_noise_and_a_loudspeakers_mono_sum_holds_no_tone(seed):
    target = hs.target_interval(seed)
    for index, stereo in enumerate(trial(hs.HUGGINS, seed)):
        frequencies, left, right = spectra(stereo)
        for name, ear in (("left", left), ("right", right)):
            peak = db(band_power(frequencies, ear, [IN_BAND]) / band_power(frequencies, ear, FLANKS))
            assert abs(peak) < 2.5, f"interval {index}, {name} ear alone: {peak:+.1f} dB at 600 Hz, a monaural cue"
        mono = np.fft.rfft(stereo[:, 0] + stereo[:, 1])
        peak = db(band_power(frequencies, mono, [IN_BAND]) / band_power(frequencies, mono, FLANKS))
        assert peak < 2.5, f"interval {index}: the mono sum has {peak:+.1f} dB at 600 Hz: a tone a loudspeaker passes"
        if index == target:
            assert peak < -20, "mixed in the air, the target's band cancels: no tone, a gap"
            # What the two ears compare (their difference) is the band alone: the tone headphones give.
            difference = np.fft.rfft(stereo[:, 0] - stereo[:, 1])
            assert db(band_power(frequencies, difference, [IN_BAND]) / band_power(frequencies, difference, FLANKS)) > 30


@pytest.mark.parametrize("seed", SEEDS)
def test_the_three_noises_are_equally_loud_at_the_reference_level(seed):
    levels = []
    for stereo in trial(hs.HUGGINS, seed):
        middle = stereo[round(0.1 * hs.RATE) : round(0.9 * hs.RATE)]
        assert rms_dbfs(middle) == pytest.approx(hs.HUGGINS_DBFS, abs=0.25)
        assert rms_dbfs(stereo[:, 0]) == pytest.approx(rms_dbfs(stereo[:, 1]), abs=0.05)
        levels.append(rms_dbfs(stereo))
    assert max(levels) - min(levels) < 0.05, f"no interval is louder than another: {levels}"
    assert hs.HUGGINS_DBFS == hs.REFERENCE_DBFS


# --- Antiphase ---


@pytest.mark.parametrize("seed", SEEDS)
def test_antiphase_target_is_6_db_quieter_and_one_other_tone_is_in_antiphase(seed):
    target = hs.target_interval(seed)
    intervals = trial(hs.ANTIPHASE, seed)
    steady = slice(round(0.2 * hs.RATE), round(0.8 * hs.RATE))
    kinds = []
    for index, stereo in enumerate(intervals):
        left, right = stereo[:, 0], stereo[:, 1]
        level = rms_dbfs(left[steady])
        if np.array_equal(left, -right):
            kinds.append("foil")
            assert level == pytest.approx(hs.ANTIPHASE_STANDARD_DBFS, abs=0.05)
            assert not np.any(left + right), "from loudspeakers the foil's channels cancel: its mono sum is silence"
        else:
            assert np.array_equal(left, right)
            kinds.append("target" if index == target else "standard")
            expected = hs.ANTIPHASE_STANDARD_DBFS + (hs.ANTIPHASE_TARGET_DB if index == target else 0.0)
            assert level == pytest.approx(expected, abs=0.05)
    assert sorted(kinds) == ["foil", "standard", "target"] and kinds[target] == "target"
    assert hs.REFERENCE_DBFS - hs.ANTIPHASE_STANDARD_DBFS == 6.0


def test_antiphase_tones_are_200_hz_and_one_second():
    for stereo in trial(hs.ANTIPHASE, "frequency"):
        assert len(stereo) == hs.RATE
        frequencies, left, _ = spectra(stereo)
        assert frequencies[np.argmax(np.abs(left))] == pytest.approx(200.0, abs=1.0)


def test_every_arrangement_of_target_and_foil_occurs_and_the_target_is_uniform():
    arrangements, positions = set(), np.zeros(hs.INTERVALS)
    for n in range(3000):
        seed = f"uniform-{n}"
        target = hs.target_interval(seed)
        positions[target] += 1
        if n < 300:
            kinds = []
            for stereo in hs.trial_intervals(hs.ANTIPHASE, seed):
                level = rms_dbfs(stereo[:, 0])
                kinds.append("O" if np.array_equal(stereo[:, 0], -stereo[:, 1]) else "S" if level < -29 else "I")
            arrangements.add("".join(kinds))
    assert arrangements == {"".join(p) for p in permutations("ISO")}
    assert np.all(np.abs(positions / 3000 - 1 / 3) < 0.03), positions


# --- No clicks: raised-cosine ramps ---


def splatter_db(tone: np.ndarray) -> float:
    """Energy more than 60 Hz away from 200 Hz, against the tone's, with the tone between
    silences as it is played: a click spreads energy across the spectrum, a smooth onset keeps
    it near the tone."""
    silence = np.zeros(hs.RATE // 4)
    spectrum = np.abs(np.fft.rfft(np.concatenate([silence, tone, silence]))) ** 2
    frequencies = np.fft.rfftfreq(len(tone) + 2 * len(silence), 1 / hs.RATE)
    away = np.abs(frequencies - hs.ANTIPHASE_HZ) > 60
    return db(spectrum[away].sum() / spectrum.sum())


def test_tones_start_and_end_without_a_click():
    for stereo in trial(hs.ANTIPHASE, "clicks"):
        left = stereo[:, 0]
        assert left[0] == 0 and left[-1] == 0
        assert splatter_db(left) < -60
        amplitude = np.max(np.abs(left))
        # A sine changes by at most 2 pi f A / rate a sample; a click would jump.
        assert np.max(np.abs(np.diff(left))) <= 2 * np.pi * hs.ANTIPHASE_HZ * amplitude / hs.RATE * 1.01 + 2 / 32767
    # The measure sees a click: the same tone switched on and off abruptly.
    t = np.arange(hs.RATE) / hs.RATE
    assert splatter_db(np.sin(2 * np.pi * hs.ANTIPHASE_HZ * t + 1.0)) > -45


def onset_envelope(channel: np.ndarray, window_seconds: float = 0.0025) -> np.ndarray:
    window = round(window_seconds * hs.RATE)
    frames = len(channel) // window
    return np.sqrt(np.mean(channel[: frames * window].reshape(frames, window) ** 2, axis=1))


@pytest.mark.parametrize("test", hs.TESTS)
def test_every_interval_rises_from_silence_over_its_ramp_and_falls_back(test):
    ramp = {hs.HUGGINS: hs.HUGGINS_RAMP_SECONDS, hs.ANTIPHASE: hs.ANTIPHASE_RAMP_SECONDS}[test]
    for stereo in trial(test, "ramps"):
        assert np.all(stereo[0] == 0) and np.all(stereo[-1] == 0)
        for channel in (stereo[:, 0], stereo[-1::-1, 1]):  # the onset, and the offset read backwards
            envelope = onset_envelope(channel)
            steady = np.median(envelope[len(envelope) // 4 : 3 * len(envelope) // 4])
            assert envelope[0] < 0.15 * steady, "full level within 2.5 ms: an abrupt onset"
            reached = np.argmax(envelope > 0.9 * steady) * 0.0025
            assert 0.4 * ramp <= reached <= ramp


def test_the_reference_noise_is_diotic_white_noise_at_the_reference_level():
    stereo = decoded(hs.reference_noise_wav())
    assert np.array_equal(stereo[:, 0], stereo[:, 1])
    assert len(stereo) == round(hs.REFERENCE_SECONDS * hs.RATE)
    assert rms_dbfs(stereo[round(0.1 * hs.RATE) : -round(0.1 * hs.RATE)]) == pytest.approx(hs.REFERENCE_DBFS, abs=0.1)
    assert np.max(np.abs(stereo)) < 0.9, "no clipping"
    assert stereo[0, 0] == 0 and stereo[-1, 0] == 0
    frequencies, left, _ = spectra(stereo)
    low, high = band_power(frequencies, left, [(100, 1000)]), band_power(frequencies, left, [(5000, 15000)])
    assert abs(db(high / low)) < 1.0, "white: as much power a hertz high as low"


# --- Nothing tells the target apart but listening ---


@pytest.mark.parametrize("test", hs.TESTS)
@pytest.mark.parametrize("seed", SEEDS)
def test_the_three_intervals_have_the_same_duration_and_byte_length(test, seed):
    files = [hs.interval_wav(test, seed, index) for index in range(hs.INTERVALS)]
    assert len({len(file) for file in files}) == 1
    assert len(files[0]) == 44 + hs.RATE * 2 * hs.SAMPLE_BYTES  # one second, stereo, 16-bit: 176,444 bytes
    assert len({file[:44] for file in files}) == 1, "the same header: same format, same length"
    assert all(np.max(np.abs(decoded(file))) < 0.99 for file in files), "nothing clipped"


def test_a_trial_is_the_same_every_time_it_is_made_and_differs_between_seeds():
    assert hs.interval_wav(hs.HUGGINS, "again", 1) == hs.interval_wav(hs.HUGGINS, "again", 1)
    assert hs.interval_wav(hs.HUGGINS, "again", 1) != hs.interval_wav(hs.HUGGINS, "other", 1)
    assert hs.interval_wav(hs.HUGGINS, "again", 0) != hs.interval_wav(hs.HUGGINS, "again", 2)
    with pytest.raises(ValueError, match="unknown headphone test"):
        hs.trial_intervals("beats", "x")


def test_the_example_hides_its_tone_in_the_second_noise():
    intervals = [decoded(hs.example_interval_wav(index)) for index in range(hs.INTERVALS)]
    inverted = []
    for stereo in intervals:
        frequencies, left, right = spectra(stereo)
        inverted.append(coherence(frequencies, left, right, [IN_BAND]) < -0.99)
    assert inverted == [False, True, False] and hs.EXAMPLE_TARGET == 1


# --- The chance of passing by guessing ---


def test_the_chance_of_passing_by_guessing():
    assert hs.guessing_chance(trials=6, pass_mark=5, tries=1) == pytest.approx(13 / 729)
    assert hs.guessing_chance(trials=6, pass_mark=6, tries=1) == pytest.approx(1 / 729)
    assert hs.guessing_chance(trials=6, pass_mark=5, tries=2) == pytest.approx(1 - (1 - 13 / 729) ** 2)
    assert hs.guessing_chance(trials=6, pass_mark=0, tries=1) == pytest.approx(1.0)
    # Both tests: each must be passed.
    both = hs.guessing_chance(trials=6, pass_mark=6, tries=1) * hs.guessing_chance(trials=6, pass_mark=5, tries=1)
    assert both == pytest.approx(13 / 729**2)
