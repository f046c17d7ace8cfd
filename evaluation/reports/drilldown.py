"""The report's "drilldown" section: clips, word positions, frequent words and annotator pairs, as
plain data. Pure: called by evaluation.reports.agreement with the arrays the pooled agreement is
computed from (the same subsampled annotations), so it costs one more pass over the counts.

Clips come as columns and rows (a row per clip, lowest agreement first), not as a dict per clip:
at ten times MMEE's size there are 100,000 of them, and the keys repeated on every row would make
up most of the report.
"""

import math
from collections.abc import Callable

import numpy as np

from evaluation.stats.cohen import PairTables
from evaluation.stats.drilldown import (
    ALPHA_METRIC,
    CONTESTED_HIGH,
    CONTESTED_LOW,
    GroupAgreement,
    group_agreement,
    lowest_first,
    top_pair_confusions,
    unit_positions,
)
from evaluation.stats.ratings import Ratings
from evaluation.stats.study_data import StudyData

PAIRS = 20  # annotator pairs with the most shared clips
FREQUENT_WORD_MIN = 10  # a word's occurrences (rated words) to be listed
FREQUENT_WORDS = 200  # at most this many words, the most frequent first
CLIP_COLUMNS = (
    "clip",
    "annotators",
    "words",
    "agreement",
    "agreement_measure",
    "fleiss_kappa",
    "observed_agreement",
    f"alpha_{ALPHA_METRIC}",
    "contested_share",
    "marked_share",
    "mismatch_reports",
)


def drilldown_compute(
    data: StudyData,
    ratings: Ratings,
    counts: np.ndarray,
    unit_clip: np.ndarray,
    tables: PairTables,
    mismatch_reports: np.ndarray,
    *,
    annotator_name: Callable[[str], str] = str,
) -> dict:
    """counts, unit_clip: Ratings.unit_counts() of the annotations used; mismatch_reports: per clip,
    over every annotation in scope (as the report's mismatch summary counts them)."""
    return {
        "methods": _methods(),
        "clips": _clips(data, ratings, counts, unit_clip, mismatch_reports),
        "positions": _positions(data, counts),
        "words": _words(data, counts, unit_clip),
        "pairs": _pairs(data, tables, annotator_name),
    }


def _clips(data, ratings, counts, unit_clip, mismatch_reports) -> dict:
    per_clip = group_agreement(counts, unit_clip, len(data.clip_keys))
    annotators = np.bincount(ratings.clip, minlength=len(data.clip_keys))
    used = np.flatnonzero(annotators > 0)
    keys = np.asarray(data.clip_keys, dtype=object)[used]
    agreement = per_clip.agreement[used]
    order = used[lowest_first(agreement, per_clip.alpha[used], keys)]
    measure = np.where(per_clip.kappa_defined, "fleiss_kappa", "observed_agreement")
    measure[np.isnan(per_clip.agreement)] = ""
    columns = [
        np.asarray(data.clip_keys, dtype=object)[order].tolist(),
        annotators[order].tolist(),
        per_clip.words[order].tolist(),
        _floats(per_clip.agreement[order]),
        [value or None for value in measure[order].tolist()],
        _floats(per_clip.kappa[order]),
        _floats(per_clip.observed[order]),
        _floats(per_clip.alpha[order]),
        _floats(per_clip.contested[order]),
        _floats(per_clip.marked_share[order]),
        mismatch_reports[order].astype(np.int64).tolist(),
    ]
    return {"columns": list(CLIP_COLUMNS), "rows": [list(row) for row in zip(*columns)]}


def _positions(data, counts) -> list[dict]:
    positions = unit_positions(data.clip_words)
    width = int(data.clip_words.max()) if data.clip_words.size else 0
    by_position = group_agreement(counts, positions, width)
    return [{"position": i + 1, **_group_row(by_position, i)} for i in range(width) if by_position.words[i] > 0]


def _words(data, counts, unit_clip) -> dict:
    """The frequent words: by text (evaluation.stats.drilldown.word_key), over every clip used."""
    if data.word_codes is None:
        return {"min_count": FREQUENT_WORD_MIN, "rows": [], "undefined": "the clips' word texts are not known"}
    positions = unit_positions(data.clip_words)
    codes = data.word_codes[unit_clip, positions].astype(np.int64)
    known = (codes >= 0) & (counts.sum(axis=1) > 0)
    vocabulary = len(data.vocabulary)
    by_word = group_agreement(counts[known], codes[known], vocabulary)
    frequent = np.flatnonzero(by_word.words >= FREQUENT_WORD_MIN)
    frequent = frequent[np.lexsort((frequent, -by_word.words[frequent]))][:FREQUENT_WORDS]
    return {
        "min_count": FREQUENT_WORD_MIN,
        "rows": [{"word": data.vocabulary[i], **_group_row(by_word, i)} for i in frequent.tolist()],
        "undefined": None,
    }


def _group_row(groups: GroupAgreement, i: int) -> dict:
    return {
        "words": int(groups.words[i]),
        "marked_share": _float(groups.marked_share[i]),
        "fleiss_kappa": _float(groups.kappa[i]),
        "observed_agreement": _float(groups.observed[i]),
        f"alpha_{ALPHA_METRIC}": _float(groups.alpha[i]),
        "contested_share": _float(groups.contested[i]),
    }


def _pairs(data, tables, annotator_name) -> list[dict]:
    top = top_pair_confusions(tables, pairs=PAIRS)
    rows = []
    for a, b, clips, joint, kappa in zip(top.a, top.b, top.clips, top.joint, top.kappa):
        words = int(joint.sum())
        rows.append(
            {
                "a": annotator_name(data.annotator_keys[a]),
                "b": annotator_name(data.annotator_keys[b]),
                "clips": int(clips),
                "words": words,
                "confusion": joint.astype(np.int64).tolist(),
                "observed_agreement": float(np.trace(joint)) / words if words else None,
                "cohen_kappa": _float(kappa),
            }
        )
    return rows


def _float(value) -> float | None:
    return None if np.isnan(value) else float(value)


def _floats(values: np.ndarray) -> list:
    return [None if math.isnan(value) else value for value in values.tolist()]


def _methods() -> dict:
    low, high = CONTESTED_LOW * 20, CONTESTED_HIGH * 20
    return {
        "clips": "one row per clip used, lowest agreement first (then lower alpha, then clip key); agreement: "
        "Fleiss' kappa of the clip's words on the binary collapse, or, where it is 0/0 (every rating of "
        "the clip in one category), the observed agreement p_a (agreement_measure says which); alpha: "
        f"Krippendorff's alpha, {ALPHA_METRIC}, on the levels 0, 1, 2; contested_share: the share of the "
        f"clip's words with two ratings or more that {low} % to {high} % of their annotators marked; "
        "marked_share: ratings at level 1 or 2 over all ratings; mismatch_reports: every annotation in "
        "scope (as the mismatch summary). All on the annotations the report uses (after subsampling)",
        "positions": "per word position in the clip (1 = first word), over every clip used: the same "
        "measures over the words at that position",
        "words": f"per word text (case-folded, without surrounding punctuation) occurring at least "
        f"{FREQUENT_WORD_MIN} times among the rated words, the {FREQUENT_WORDS} most frequent: the same "
        "measures over its occurrences",
        "pairs": f"the {PAIRS} annotator pairs that share the most clips (ties: more shared words): the "
        "3 x 3 confusion of levels (rows: a's level, columns: b's) over the words both labelled, the "
        "observed agreement on the three levels and Cohen's kappa on the binary collapse",
    }


def drilldown_csv_rows(section: dict | None):
    """The drill-down as rows of the report's CSV (evaluation.reports.agreement_format.CSV_COLUMNS);
    nothing for a report stored before it had one."""
    if not section:
        return
    columns = section["clips"]["columns"]
    for values in section["clips"]["rows"]:
        row = dict(zip(columns, values))
        base = {"section": "clip", "dimension": "clip", "group": row["clip"], "words": row["words"]}
        for measure in columns[3:]:
            if measure != "agreement_measure":
                note = row["agreement_measure"] if measure == "agreement" else None
                yield base | {"measure": measure, "value": row[measure], "note": note}
    for section_name, key, rows in (
        ("word_position", "position", section["positions"]),
        ("word", "word", section["words"]["rows"]),
    ):
        for row in rows:
            base = {"section": section_name, "dimension": key, "group": row[key], "words": row["words"]}
            for measure in ("marked_share", "fleiss_kappa", "observed_agreement", f"alpha_{ALPHA_METRIC}"):
                yield base | {"measure": measure, "value": row[measure]}
            yield base | {"measure": "contested_share", "value": row["contested_share"]}
    for row in section["pairs"]:
        base = {"section": "annotator_pair", "dimension": "pair", "group": f"{row['a']} {row['b']}"}
        base |= {"clips": row["clips"], "words": row["words"]}
        for i, levels in enumerate(row["confusion"]):
            for j, count in enumerate(levels):
                yield base | {"measure": f"confusion_{i}_{j}", "value": count, "note": "rows: a's level, columns: b's"}
        yield base | {"measure": "observed_agreement", "value": row["observed_agreement"]}
        yield base | {"measure": "cohen_kappa", "value": row["cohen_kappa"], "method": "binary collapse"}


SORTABLE = tuple(column for column in CLIP_COLUMNS if column != "agreement_measure")


def clip_rows(section: dict, *, order_by: str = "agreement") -> list[dict]:
    """The drill-down's clip rows as dicts, sorted by a column ("-column": descending); rows without
    a value for it last either way, ties in the report's order (lowest agreement first)."""
    descending, column = order_by.startswith("-"), order_by.lstrip("-")
    if column not in SORTABLE:
        raise ValueError(f"cannot sort clips by {column!r}; sortable: {', '.join(SORTABLE)}")
    columns = section["clips"]["columns"]
    rows = [dict(zip(columns, row)) for row in section["clips"]["rows"]]
    present = [row for row in rows if row[column] is not None]
    present.sort(key=lambda row: row[column], reverse=descending)  # stable: ties keep the report's order
    return present + [row for row in rows if row[column] is None]
