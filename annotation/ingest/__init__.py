"""Taking corpora in: manifests, archives, audio decoding and signal checks."""
