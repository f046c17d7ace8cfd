from evaluation.models.exports import DatasetExport
from evaluation.models.label_sets import LabelSet, LabelSetClip
from evaluation.models.reports import ListeningFormReport, StudyReport

__all__ = ["DatasetExport", "LabelSet", "LabelSetClip", "ListeningFormReport", "StudyReport"]
