"""Minimal ctypes binding to libespeak-ng for synchronous SSML synthesis with word timings.

Only what the demo corpus needs: synthesize one SSML string with one voice and get back
the 16-bit samples plus the WORD and MARK events, each with its absolute sample offset.

Why the library and not the command line: ``espeak-ng --pho`` prints nothing for the
normal (non-MBROLA) voices, so the only source of word timings is the event stream that
the library hands to the synth callback.

The library keeps global state (one voice, one callback, one output mode per process), so
every call goes through a single lazily initialised engine guarded by a lock.
"""

from __future__ import annotations

import ctypes
import threading
from dataclasses import dataclass, field

import numpy as np

LIBRARY_NAME = "libespeak-ng.so.1"

# espeak_AUDIO_OUTPUT: the callback receives all samples before espeak_Synth returns.
_AUDIO_OUTPUT_SYNCHRONOUS = 2
# espeak_Initialize option: return an error instead of calling exit() when data is missing.
_INITIALIZE_DONT_EXIT = 0x8000
# espeak_POSITION_TYPE: start position counted in characters.
_POS_CHARACTER = 1
# espeak_Synth flags.
_CHARS_UTF8 = 0x1
_SSML = 0x10
# espeak_EVENT_TYPE values we read.
_EVENT_LIST_TERMINATED = 0
_EVENT_WORD = 1
_EVENT_MARK = 3
_EE_OK = 0


class EspeakUnavailable(RuntimeError):
    """libespeak-ng cannot be loaded or initialised on this machine."""


class EspeakError(RuntimeError):
    """libespeak-ng is loaded but refused a request (unknown voice, synthesis error)."""


class _EventId(ctypes.Union):
    _fields_ = [
        ("number", ctypes.c_int),
        ("name", ctypes.c_char_p),
        ("string", ctypes.c_char * 8),
    ]


class _Event(ctypes.Structure):
    """Mirror of ``espeak_EVENT`` from speak_lib.h (40 bytes on x86-64)."""

    _fields_ = [
        ("type", ctypes.c_int),
        ("unique_identifier", ctypes.c_uint),
        ("text_position", ctypes.c_int),  # 1-based, in characters of the input text
        ("length", ctypes.c_int),  # characters, for WORD events
        ("audio_position", ctypes.c_int),  # milliseconds
        ("sample", ctypes.c_int),  # absolute sample offset in the synthesized output
        ("user_data", ctypes.c_void_p),
        ("id", _EventId),
    ]


_SynthCallback = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ctypes.c_short), ctypes.c_int, ctypes.POINTER(_Event))


@dataclass(frozen=True)
class WordEvent:
    """A WORD event: where espeak thinks a word starts, in the audio and in the input text.

    ``text_position`` is 0-based and counts characters (not bytes) of the SSML string,
    markup included; it points at the first letter, so leading punctuation such as the
    Spanish "¿" is not covered.
    """

    text_position: int
    length: int
    sample: int


@dataclass(frozen=True)
class MarkEvent:
    """A MARK event emitted for ``<mark name="..."/>``."""

    name: str
    sample: int


@dataclass
class Synthesis:
    samples: np.ndarray  # int16, mono
    sample_rate: int
    words: list[WordEvent] = field(default_factory=list)
    marks: list[MarkEvent] = field(default_factory=list)

    @property
    def duration(self) -> float:
        return len(self.samples) / self.sample_rate


class _Collector:
    """Receives what the synth callback reports during one espeak_Synth call."""

    def __init__(self) -> None:
        self.chunks: list[np.ndarray] = []
        self.words: list[WordEvent] = []
        self.marks: list[MarkEvent] = []

    def add_samples(self, wav, count: int) -> None:
        if count > 0 and wav:
            # Copy: the buffer belongs to the library and is reused for the next chunk.
            self.chunks.append(np.ctypeslib.as_array(wav, shape=(count,)).copy())

    def add_events(self, events) -> None:
        if not events:
            return
        index = 0
        while events[index].type != _EVENT_LIST_TERMINATED:
            event = events[index]
            if event.type == _EVENT_WORD:
                self.words.append(WordEvent(event.text_position - 1, event.length, event.sample))
            elif event.type == _EVENT_MARK and event.id.name:
                self.marks.append(MarkEvent(event.id.name.decode("utf-8"), event.sample))
            index += 1

    def samples(self) -> np.ndarray:
        if not self.chunks:
            return np.zeros(0, dtype=np.int16)
        return np.concatenate(self.chunks).astype(np.int16, copy=False)


class _Engine:
    def __init__(self) -> None:
        try:
            self.lib = ctypes.CDLL(LIBRARY_NAME)
        except OSError as exc:
            raise EspeakUnavailable(
                f"cannot load {LIBRARY_NAME} ({exc}); install espeak-ng "
                "(Debian/Ubuntu: apt-get install libespeak-ng1 espeak-ng-data)"
            ) from exc
        self._declare_signatures()
        self.sample_rate = self.lib.espeak_Initialize(_AUDIO_OUTPUT_SYNCHRONOUS, 0, None, _INITIALIZE_DONT_EXIT)
        if self.sample_rate <= 0:
            raise EspeakUnavailable(
                f"espeak_Initialize failed (returned {self.sample_rate}); is espeak-ng-data installed?"
            )
        self.version = self.lib.espeak_Info(None).decode("ascii")
        self._collector: _Collector | None = None
        # Keep a reference: if the CFUNCTYPE object is garbage collected the library
        # would call freed memory.
        self._callback = _SynthCallback(self._on_synth)
        self.lib.espeak_SetSynthCallback(self._callback)
        self.lock = threading.Lock()

    def _declare_signatures(self) -> None:
        lib = self.lib
        lib.espeak_Initialize.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_char_p, ctypes.c_int]
        lib.espeak_Initialize.restype = ctypes.c_int
        lib.espeak_Info.argtypes = [ctypes.POINTER(ctypes.c_char_p)]
        lib.espeak_Info.restype = ctypes.c_char_p
        lib.espeak_SetSynthCallback.argtypes = [_SynthCallback]
        lib.espeak_SetSynthCallback.restype = None
        lib.espeak_SetVoiceByName.argtypes = [ctypes.c_char_p]
        lib.espeak_SetVoiceByName.restype = ctypes.c_int
        lib.espeak_Synth.argtypes = [
            ctypes.c_char_p,  # text
            ctypes.c_size_t,  # size in bytes, including the terminating NUL
            ctypes.c_uint,  # position
            ctypes.c_int,  # position type
            ctypes.c_uint,  # end position (0: no end)
            ctypes.c_uint,  # flags
            ctypes.c_void_p,  # unique identifier out-parameter
            ctypes.c_void_p,  # user data
        ]
        lib.espeak_Synth.restype = ctypes.c_int

    def _on_synth(self, wav, count, events) -> int:
        collector = self._collector
        if collector is not None:
            collector.add_samples(wav, count)
            collector.add_events(events)
        return 0  # 0 = keep synthesizing

    def synthesize(self, ssml: str, voice: str) -> Synthesis:
        with self.lock:
            if self.lib.espeak_SetVoiceByName(voice.encode("utf-8")) != _EE_OK:
                raise EspeakError(f"espeak-ng has no voice named {voice!r}")
            collector = _Collector()
            self._collector = collector
            try:
                text = ssml.encode("utf-8")
                status = self.lib.espeak_Synth(
                    text, len(text) + 1, 0, _POS_CHARACTER, 0, _CHARS_UTF8 | _SSML, None, None
                )
            finally:
                self._collector = None
            if status != _EE_OK:
                raise EspeakError(f"espeak_Synth failed with status {status}")
            return Synthesis(collector.samples(), self.sample_rate, collector.words, collector.marks)


_engine: _Engine | None = None
_engine_lock = threading.Lock()


def _get_engine() -> _Engine:
    global _engine
    with _engine_lock:
        if _engine is None:
            _engine = _Engine()
        return _engine


def is_available() -> bool:
    try:
        _get_engine()
    except EspeakUnavailable:
        return False
    return True


def library_version() -> str:
    """Version string reported by the loaded library, e.g. "1.51"."""
    return _get_engine().version


def synthesize_ssml(ssml: str, voice: str) -> Synthesis:
    """Synthesize one SSML document (``<speak>...</speak>``) with ``voice``.

    ``voice`` is an espeak-ng voice name, optionally with a variant: "en-us+f2".
    Raises EspeakUnavailable if the library cannot be used, EspeakError if it rejects
    the voice or the text.
    """
    return _get_engine().synthesize(ssml, voice)
