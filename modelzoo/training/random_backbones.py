"""Backbones with random weights, built from configs and saved in the Hugging Face layout the
checkpoint registry reads: tiny ones for tests, real-size shapes (whisper-small, XLS-R 1B) for
throughput benchmarks. No pretrained weights are involved, so nothing is downloaded.

The Whisper tokenizer is a byte-level BPE trained in-process on a few sentences, with Whisper's
special tokens, wrapped as transformers' WhisperTokenizer: it splits words into Whisper-like
"Ġword" tokens, which is all the token detector relies on."""

from pathlib import Path

from modelzoo.training.synthetic import VOCABULARY

LANGUAGES = ("en", "de", "fr", "es", "it", "pt", "zh", "ja", "nl", "pl")
SPECIAL_TOKENS = (
    "<|endoftext|>",
    "<|startoftranscript|>",
    *(f"<|{code}|>" for code in LANGUAGES),
    "<|transcribe|>",
    "<|notimestamps|>",
)

TINY_WHISPER = {
    "d_model": 64,
    "encoder_layers": 2,
    "decoder_layers": 3,
    "encoder_attention_heads": 2,
    "decoder_attention_heads": 2,
    "encoder_ffn_dim": 128,
    "decoder_ffn_dim": 128,
    "num_mel_bins": 80,
    # 3 s windows instead of 30 s: 300 mel frames, 150 encoder positions
    "max_source_positions": 150,
    "max_target_positions": 64,
}
WHISPER_SMALL = {
    "d_model": 768,
    "encoder_layers": 12,
    "decoder_layers": 12,
    "encoder_attention_heads": 12,
    "decoder_attention_heads": 12,
    "encoder_ffn_dim": 3072,
    "decoder_ffn_dim": 3072,
    "num_mel_bins": 80,
    "max_source_positions": 1500,
    "max_target_positions": 448,
    "vocab_size": 51865,
}
TINY_WAV2VEC2 = {
    "hidden_size": 64,
    "num_hidden_layers": 2,
    "num_attention_heads": 2,
    "intermediate_size": 128,
    "conv_dim": (16, 16, 16),
    "conv_stride": (10, 4, 8),
    "conv_kernel": (10, 4, 8),  # 320 samples a frame, as XLS-R
    "num_conv_pos_embeddings": 16,
    "num_conv_pos_embedding_groups": 4,
}
XLS_R_1B = {
    "hidden_size": 1280,
    "num_hidden_layers": 48,
    "num_attention_heads": 16,
    "intermediate_size": 5120,
    "conv_dim": (512,) * 7,
    "conv_stride": (5, 2, 2, 2, 2, 2, 2),
    "conv_kernel": (10, 3, 3, 3, 3, 2, 2),
    "num_conv_pos_embeddings": 128,
    "num_conv_pos_embedding_groups": 16,
}
# XLS-R's layout: layer norm in the feature encoder, pre-norm transformer, trained with attention masks
XLS_R_STYLE = {"feat_extract_norm": "layer", "do_stable_layer_norm": True, "conv_bias": True, "vocab_size": 32}


def whisper_tokenizer(vocab_size: int = 400):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import WhisperTokenizer

    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=list(SPECIAL_TOKENS),
        show_progress=False,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    sentences = [" ".join(VOCABULARY[i:] + VOCABULARY[:i]) for i in range(len(VOCABULARY))]
    bpe.train_from_iterator(sentences, trainer)
    end = "<|endoftext|>"
    return WhisperTokenizer(tokenizer_object=bpe, unk_token=end, bos_token=end, eos_token=end, pad_token=end)


def save_whisper(folder: Path, shape: dict = TINY_WHISPER, *, chunk_seconds: int | None = None) -> Path:
    """A random Whisper model, its feature extractor and a tokenizer, saved to `folder`."""
    from transformers import WhisperConfig, WhisperFeatureExtractor, WhisperModel

    tokenizer = whisper_tokenizer()
    ids = tokenizer.get_vocab()
    config = WhisperConfig(
        **{"vocab_size": len(ids), **shape},
        pad_token_id=ids["<|endoftext|>"],
        bos_token_id=ids["<|endoftext|>"],
        eos_token_id=ids["<|endoftext|>"],
        decoder_start_token_id=ids["<|startoftranscript|>"],
    )
    seconds = chunk_seconds or config.max_source_positions * 2 // 100  # 2 mel frames per position, 100 a second
    extractor = WhisperFeatureExtractor(
        feature_size=config.num_mel_bins, chunk_length=seconds, n_samples=seconds * 16000, nb_max_frames=seconds * 100
    )
    WhisperModel(config).save_pretrained(folder)
    extractor.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def save_wav2vec2(folder: Path, shape: dict = TINY_WAV2VEC2) -> Path:
    """A random Wav2Vec2 encoder in XLS-R's layout, saved to `folder`."""
    from transformers import Wav2Vec2Config, Wav2Vec2FeatureExtractor, Wav2Vec2Model

    Wav2Vec2Model(Wav2Vec2Config(**XLS_R_STYLE, **shape)).save_pretrained(folder)
    Wav2Vec2FeatureExtractor(do_normalize=True, return_attention_mask=True).save_pretrained(folder)
    return folder
