"""The Prolific integration: studies created and followed on Prolific, the participant review and its
decisions sent there, submissions by poll and webhook, bonus batches, and the API client.

It stands on annotation (studies, participants, tasks, the job runner) and beside evaluation: the
import contract `floors` in pyproject.toml keeps annotation from importing it, and it and evaluation
from importing each other (docs/development.md, "Layout").
"""
