from evaluation.models.exports import DatasetExport
from evaluation.models.label_sets import LabelSet, LabelSetClip
from evaluation.models.reports import AgreementReport, ListeningFormReport
from evaluation.models.suite_reports import SuiteReport
from evaluation.models.suites import CastItem, CastRendition, CastSet, RenditionDetection, System, SystemOutput

__all__ = [
    "AgreementReport",
    "CastItem",
    "CastRendition",
    "CastSet",
    "DatasetExport",
    "LabelSet",
    "LabelSetClip",
    "ListeningFormReport",
    "RenditionDetection",
    "SuiteReport",
    "System",
    "SystemOutput",
]
