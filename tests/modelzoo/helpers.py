"""Names and settings the modelzoo tests share."""

TINY_WHISPER = "tiny-whisper"
TINY_WAV2VEC2 = "tiny-wav2vec2"
# a few quick epochs at a learning rate that moves tiny random models
QUICK = {"epochs": 2, "learning_rate": 1e-3, "warmup_ratio": 0.0, "gradient_accumulation": 1}
