"""Sentence material and per-clip choices (voice, emphasized word) for the demo corpus.

Every choice is drawn from ``random.Random`` seeded with the corpus seed, so the same seed
always yields the same clips. The material avoids digits, hyphens, apostrophes and
abbreviations because espeak-ng expands those into several spoken words, which would break
the one-token-one-word alignment the manifest promises.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass

DEFAULT_SEED = 20240611

ENGLISH = [
    "The quick brown fox jumped across the sleeping dog.",
    "My sister bought a red bicycle yesterday.",
    "We should visit the museum before it closes.",
    "Please bring your umbrella when you leave tonight.",
    "Daniel never drinks coffee after lunch.",
    "The old bridge was closed for repairs last winter.",
    "She painted the kitchen walls bright yellow.",
    "Our neighbours are moving to a smaller house next spring.",
    "I left my keys beside the front door.",
    "The outdoor concert started exactly when the heavy rain finally stopped.",
    "Maria wrote a very long letter to her grandmother last Sunday.",
    "These apples taste sweeter than the green ones.",
    "The train from Glasgow arrived twenty minutes late.",
    "He forgot to water the tomatoes again.",
    "Nobody expected the little team to win.",
    "Could you close the window behind you?",
    "The library opens early every Saturday morning.",
    "Thomas plays the piano much better than his own teacher does.",
    "After a long search we finally found a quiet table.",
    "The baker sold every loaf before noon.",
    "Her brother lives in a tiny flat downtown.",
    "They spent the whole summer fixing the old wooden boat together.",
    "The children built a tall sandcastle yesterday.",
    "I only wanted a small cup of tea.",
    "The doctor told him to rest all week.",
    "Anna found an old photograph inside the book.",
    "The wind blew the hat straight off his head.",
    "Everyone laughed loudly when the old parrot suddenly started singing.",
    "You must sign the form with blue ink.",
    "The farmer counted his sheep twice that evening.",
    "Peter usually takes the bus to work.",
    "A strange noise woke the whole family.",
    "The friendly museum guide spoke very slowly and clearly to everyone.",
    "Lucy hid the chocolate behind the flour jar.",
    "We watched the golden sunset together.",
    "The office printer is broken again.",
    "He carried the heavy suitcase up the stairs.",
    "The cat knocked the blue vase over.",
    "Nobody remembered to feed the goldfish.",
    "The students handed in their essays on Friday.",
    "Robert parked his car behind the bakery.",
    "The soup needs a little more salt.",
]

SPANISH = [
    "Mi hermana compró una bicicleta roja ayer.",
    "El tren llegó muy tarde esta mañana.",
    "Nosotros preparamos la cena para toda la familia este domingo.",
    "La biblioteca abre temprano los sábados.",
    "Carlos nunca bebe café por la noche.",
    "¿Dónde está la pequeña estación de trenes?",
    "Los niños construyeron un castillo de arena.",
    "Ella pintó la cocina de color amarillo.",
    "Mañana visitaremos el museo con mis abuelos.",
    "El perro viejo durmió toda la tarde en el jardín soleado.",
    "Necesito comprar pan y leche en la tienda.",
]

GERMAN = [
    "Die Kinder spielen heute im großen Garten.",
    "Meine Schwester kaufte gestern ein rotes Fahrrad.",
    "Der letzte Zug aus Berlin hatte gestern zwanzig Minuten Verspätung.",
    "Wir besuchen morgen das neue Museum.",
    "Thomas trinkt abends niemals Kaffee.",
    "Die Bibliothek öffnet samstags sehr früh.",
    "Der Bäcker verkaufte alle Brote vor Mittag.",
    "Unsere netten Nachbarn ziehen im nächsten Frühling in ein kleineres Haus.",
    "Anna fand ein altes Foto in dem Buch.",
    "Der Wind wehte ihm den Hut vom Kopf.",
    "Bitte schließ das Fenster hinter dir.",
]

# Words that rarely carry contrastive emphasis in a neutral demo; excluding them keeps the
# intended emphasis on content words, which is what annotators will be asked about.
FUNCTION_WORDS = {
    "en": {
        "a",
        "an",
        "the",
        "and",
        "or",
        "but",
        "to",
        "of",
        "in",
        "on",
        "at",
        "by",
        "for",
        "from",
        "with",
        "up",
        "out",
        "off",
        "into",
        "than",
        "when",
        "before",
        "after",
        "behind",
        "beside",
        "near",
        "over",
        "his",
        "her",
        "its",
        "my",
        "our",
        "your",
        "their",
        "it",
        "he",
        "she",
        "we",
        "i",
        "you",
        "they",
        "him",
        "them",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "must",
        "should",
        "could",
        "only",
        "very",
        "that",
        "does",
        "these",
        "those",
        "there",
        "every",
    },
    "es": {
        "el",
        "la",
        "los",
        "las",
        "un",
        "una",
        "y",
        "o",
        "de",
        "del",
        "en",
        "por",
        "para",
        "con",
        "mi",
        "mis",
        "su",
        "sus",
        "es",
        "está",
        "esta",
        "este",
        "muy",
    },
    "de": {
        "der",
        "die",
        "das",
        "dem",
        "den",
        "des",
        "ein",
        "eine",
        "einer",
        "im",
        "in",
        "am",
        "an",
        "aus",
        "vom",
        "von",
        "vor",
        "mit",
        "und",
        "ihm",
        "dir",
        "sehr",
        "alle",
        "ist",
        "hinter",
    },
}


@dataclass(frozen=True)
class VoiceChoice:
    voice: str  # espeak-ng voice name, with an optional "+variant"
    variety: str  # language variety the voice aims at


VOICES = {
    "en": [
        VoiceChoice("en-us", "en-US"),
        VoiceChoice("en-us+f2", "en-US"),
        VoiceChoice("en-us+m3", "en-US"),
        VoiceChoice("en", "en-GB"),  # espeak-ng's "en" voice is British English
        VoiceChoice("en+f3", "en-GB"),
        VoiceChoice("en-gb-scotland", "en-GB-scotland"),
        VoiceChoice("en-gb-scotland+f2", "en-GB-scotland"),
    ],
    "es": [
        VoiceChoice("es", "es-ES"),
        VoiceChoice("es+f2", "es-ES"),
        VoiceChoice("es-419", "es-419"),
    ],
    "de": [
        VoiceChoice("de", "de-DE"),
        VoiceChoice("de+f2", "de-DE"),
        VoiceChoice("de+m3", "de-DE"),
    ],
}

MATERIAL = {"en": ENGLISH, "es": SPANISH, "de": GERMAN}


@dataclass(frozen=True)
class ClipSpec:
    clip_id: str
    language: str
    variety: str
    voice: str
    transcript: str
    emphasis_index: int

    @property
    def tokens(self) -> list[str]:
        return self.transcript.split()

    @property
    def speaker(self) -> str:
        return f"espeak-{self.voice}"


def bare_word(token: str) -> str:
    """The token without surrounding punctuation, lower-cased ("¿Dónde" -> "dónde")."""
    return re.sub(r"^\W+|\W+$", "", token).lower()


def emphasis_candidates(tokens: list[str], language: str) -> list[int]:
    function_words = FUNCTION_WORDS[language]
    return [i for i, token in enumerate(tokens) if bare_word(token) not in function_words]


def choose_emphasis(tokens: list[str], language: str, clip_number: int, rng: random.Random) -> int:
    """Pick one content word, rotating between the start, middle and end of the sentence.

    Rotating the region (instead of a uniform pick) guarantees that emphasis position varies
    across the corpus, so position alone cannot predict the answer.
    """
    candidates = emphasis_candidates(tokens, language)
    region = clip_number % 3
    third = len(tokens) / 3
    in_region = [i for i in candidates if region * third <= i < (region + 1) * third]
    return rng.choice(in_region or candidates)


def balanced_voices(language: str, count: int, rng: random.Random) -> list[VoiceChoice]:
    """Every voice of the language used about equally often, in shuffled order."""
    voices = VOICES[language]
    cycled = [voices[i % len(voices)] for i in range(count)]
    rng.shuffle(cycled)
    return cycled


def build_clip_specs(seed: int = DEFAULT_SEED) -> list[ClipSpec]:
    rng = random.Random(seed)
    specs = []
    for language, sentences in MATERIAL.items():
        voices = balanced_voices(language, len(sentences), rng)
        for number, (sentence, voice) in enumerate(zip(sentences, voices), start=1):
            tokens = sentence.split()
            specs.append(
                ClipSpec(
                    clip_id=f"demo-{language}-{number:03d}",
                    language=language,
                    variety=voice.variety,
                    voice=voice.voice,
                    transcript=sentence,
                    emphasis_index=choose_emphasis(tokens, language, number, rng),
                )
            )
    return specs
