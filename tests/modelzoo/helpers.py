"""Names and settings the modelzoo tests share."""

TINY_WHISPER = "tiny-whisper"
TINY_WAV2VEC2 = "tiny-wav2vec2"
# the tiny Wav2Vec2 without dropout, layerdrop or SpecAugment masking: the same inputs give the
# same weights, whatever draws the random generators make
TINY_WAV2VEC2_DETERMINISTIC = "tiny-wav2vec2-deterministic"
WAV2VEC2_WITHOUT_RANDOMNESS = {
    "hidden_dropout": 0.0,
    "activation_dropout": 0.0,
    "attention_dropout": 0.0,
    "feat_proj_dropout": 0.0,
    "final_dropout": 0.0,
    "layerdrop": 0.0,
    "mask_time_prob": 0.0,
}
# a few quick epochs at a learning rate that moves tiny random models
QUICK = {"epochs": 2, "learning_rate": 1e-3, "warmup_ratio": 0.0, "gradient_accumulation": 1}
