"""The parts of an export's data card that come from a label set's summary, as text lines.
Pure: the summary as stored (evaluation.services.label_sets._summary) in, lines out.

Every dict is walked in sorted order: PostgreSQL's jsonb hands JSON back with its keys in an
order of its own, and the card must be the same bytes on any database.
"""


def agreement_lines(agreement: dict) -> dict[str, str]:
    """{"<study>, all languages": "...", "<study>, <language>": "..."}: the headline figures."""
    lines = {}
    for study, result in sorted(agreement.items()):
        lines[f"{study}, all languages"] = _figures(result["pooled"])
        for language, figures in sorted(result.get("language", {}).items()):
            lines[f"{study}, {language or '(none)'}"] = _figures(figures)
    return lines


def _figures(figures: dict) -> str:
    return (
        f"{figures['clips']} clips, {figures['words']} words, {figures['annotators']} annotators; "
        f"mean pairwise Cohen's kappa {_number(figures['cohen'])}; "
        f"Fleiss' kappa {_number(figures['fleiss'])}{_interval(figures.get('fleiss_ci95'))}; "
        f"Krippendorff's alpha (ordinal) {_number(figures['alpha_ordinal'])}"
        f"{_interval(figures.get('alpha_ordinal_ci95'))}"
    )


def _number(value) -> str:
    return "undefined" if value is None else f"{value:.4f}"


def _interval(interval) -> str:
    if not interval or None in interval:
        return ""
    return f" (95 % CI {interval[0]:.4f} to {interval[1]:.4f})"


def left_out_lines(left_out: dict) -> list[str]:
    """What each study's build left out of the set, and why."""
    lines = []
    for study, what in sorted(left_out.items()):
        excluded = what.get("clips_excluded_in_review", 0)
        if excluded:
            lines.append(f"{study}: {excluded} clip(s) excluded in review")
        short = sorted(what.get("clips_short", []), key=lambda clip: clip["clip"])
        if short:
            clips = ", ".join(f"{clip['clip']} ({clip['annotations']})" for clip in short)
            lines.append(f"{study}: {len(short)} clip(s) with fewer annotations than the subsample: {clips}")
        for clip in what.get("clips_without_annotations", []):
            lines.append(f"{study}: clip {clip['clip']}: {clip['why']}")
        unsettled = sorted(what.get("clips_not_settled", []), key=lambda clip: clip["clip"])
        if unsettled:
            clips = ", ".join(f"{clip['clip']} ({clip['kept']} kept of {clip['annotations']})" for clip in unsettled)
            lines.append(
                f"{study}: {len(unsettled)} clip(s) not settled under this set's exclusions (the study's stopping "
                f"rule asks more listeners of the annotations kept; their labels may differ from the full design's): "
                f"{clips}"
            )
        annotators = sorted(what.get("annotators_excluded", []), key=lambda a: a["annotator"])
        for annotator in annotators:
            reasons = list(annotator["flags"]) + (["failed attention checks"] if annotator["failed_checks"] else [])
            lines.append(f"{study}: annotator {annotator['annotator']} excluded ({', '.join(reasons) or 'flagged'})")
        for source, count in sorted(what.get("annotations_left_out_by_source", {}).items()):
            lines.append(f"{study}: {count} {source}")
    return lines


def adaptive_lines(adaptive: dict) -> dict[str, str]:
    """{"adaptive design (<study>)": "...", "selection effect (<study>)": "..."} for each study of
    the set run with an adaptive design (evaluation.reports.adaptive_disclosure's section, on the
    set's annotations): which design, what it spent, and the selection effect in numbers."""
    lines = {}
    for study, section in sorted(adaptive.items()):
        target, clips = section["target"], section["clips"]
        below = "stopped early" if section.get("stops_early", True) else f"got fewer than {target}"
        lines[f"adaptive design ({study})"] = (
            f"{section['design']}; {section['annotations']} annotations where the fixed design of {target} a clip "
            f"would have taken {section['fixed_design_annotations']}; {clips['stopped_early']} clip(s) {below}, "
            f"{clips['at_target']} at {target}, {clips['past_target']} past it"
        )
        lines[f"selection effect ({study})"] = _selection_effect(section["selection_effect"], target)
    return lines


def _selection_effect(effect: dict, target: int) -> str:
    text = (
        f"Fleiss' kappa over all clips {_number(effect['kappa_all_clips'])}, over the clips annotated to {target} "
        f"or more {_number(effect['kappa_clips_at_target'])} (difference {_number(effect['kappa_at_target_less_all'])})"
    )
    replication = effect["replication"]
    if effect["kappa_fixed_design_replicated"] is None:
        return f"{text}; the fixed design could not be replicated ({replication.get('undefined', 'undefined')})"
    text += (
        f"; the fixed design of {target} a clip, replicated by the study designer from the study's annotations "
        f"({replication['replicates']} replicates of {replication['simulated_clips']} clips): "
        f"{_number(effect['kappa_fixed_design_replicated'])}"
    )
    if effect["kappa_adaptive_design_replicated"] is not None:
        text += f", this design replicated the same way {_number(effect['kappa_adaptive_design_replicated'])}"
    return text
