"""Two simulated listeners for the headphone check, who hear the sounds the page plays (the WAV
files behind its signed links, fetched as the browser fetches them) and pick an interval:

- with headphones each ear hears its own channel: the Huggins-pitch interval is the one whose
  ears differ in the band around 600 Hz, the antiphase target the one quietest in either ear;
- from loudspeakers the two channels mix in the air before they reach the ears (their sum):
  the Huggins band cancels, leaving no tone anywhere (the listener goes by the most energy near
  600 Hz, which the cancelled band lacks), and the antiphase foil cancels, sounding quietest.

They know nothing the page does not send; the server checks their answers.
"""

import io
import wave

import numpy as np

RATE = 44_100


def channels(wav: bytes) -> np.ndarray:
    with wave.open(io.BytesIO(wav)) as handle:
        frames = handle.readframes(handle.getnframes())
    return np.frombuffer(frames, dtype="<i2").reshape(-1, 2).astype(float) / 32767


def _band(signal: np.ndarray, low: float, high: float) -> np.ndarray:
    spectrum = np.fft.rfft(signal)
    frequencies = np.fft.rfftfreq(len(signal), 1 / RATE)
    return spectrum[(frequencies >= low) & (frequencies <= high)]


def headphone_choice(test: str, intervals: list[bytes]) -> int:
    """The interval (0-2) a listener wearing headphones picks."""
    sounds = [channels(wav) for wav in intervals]
    if test == "huggins":
        # The tone is heard where the ears disagree: the interaural difference near 600 Hz.
        differences = [np.sum(np.abs(_band(s[:, 0] - s[:, 1], 570, 630)) ** 2) for s in sounds]
        return int(np.argmax(differences))
    loudness = [min(np.sqrt(np.mean(s[:, 0] ** 2)), np.sqrt(np.mean(s[:, 1] ** 2))) for s in sounds]
    return int(np.argmin(loudness))


def loudspeaker_choice(test: str, intervals: list[bytes]) -> int:
    """The interval (0-2) a listener hearing loudspeakers picks: what both channels give, mixed."""
    mixed = [channels(wav).sum(axis=1) for wav in intervals]
    if test == "huggins":
        return int(np.argmax([np.sum(np.abs(_band(m, 570, 630)) ** 2) for m in mixed]))
    return int(np.argmin([np.sqrt(np.mean(m**2)) for m in mixed]))
