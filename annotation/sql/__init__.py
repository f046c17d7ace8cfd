"""Statements written out as SQL, where building them through the ORM cost too much: the
submission hot path (submission_rows). So that a submission is one statement, they apply the rules
that go with the write (the claim, the task's completion, the mismatch rule); whether an answer is
taken at all is decided before them by the services that call them (annotation.services.submission,
annotation.services.adaptive). Every other read and write uses the ORM."""
