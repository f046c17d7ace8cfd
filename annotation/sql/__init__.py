"""Statements written out as SQL, where building them through the ORM cost too much: the
submission hot path (submission_rows). Data access only, no rules: the services call them
(annotation.services.submission) and own the decisions; every other read and write uses the ORM."""
