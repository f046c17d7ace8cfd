"""Reading imported files into drafts, without the database (evaluation.services writes them)."""
