"""The WhiStress-like token detector: words to tokens and back, the layer-9 wiring, and one tiny
benchmark run end to end."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from modelzoo.training.benchmark import run_benchmark  # noqa: E402
from modelzoo.training.config import WhisperTokenConfig  # noqa: E402
from modelzoo.training.data import Clip, Word, load_folder  # noqa: E402
from modelzoo.training.detectors import load_detector  # noqa: E402
from modelzoo.training.detectors.whisper_tokens import (  # noqa: E402
    WhisperTokenDetector,
    features_cut,
    features_to_window,
    token_loss,
)
from modelzoo.training.pooling import IGNORE  # noqa: E402
from modelzoo.training.synthetic import synthetic_set  # noqa: E402
from tests.modelzoo.helpers import QUICK, TINY_WHISPER  # noqa: E402


@pytest.fixture(scope="module")
def detector(checkpoint_dir):
    detector = WhisperTokenDetector(TINY_WHISPER, checkpoint_dir)
    detector.build(WhisperTokenConfig(device="cpu", batch_size=2, eval_batch_size=2))
    return detector


def test_each_token_knows_its_word(detector):
    tokenizer = detector.tokenizer
    words = ["the", "quickest", "fox", "jumps!"]
    encoded = tokenizer.encode(words, "en")
    vocabulary = tokenizer.vocabulary
    prompt = ["<|startoftranscript|>", "<|en|>", "<|transcribe|>", "<|notimestamps|>"]
    assert encoded.ids[:4] == [vocabulary[name] for name in prompt] and encoded.word_of_token[:4] == [-1] * 4
    for index, text in enumerate(words):
        ids = [i for i, w in zip(encoded.ids, encoded.word_of_token) if w == index]
        assert tokenizer.tokenizer.decode(ids) == " " + text  # a word is exactly its tokens
    assert encoded.word_of_token[4:] == sorted(encoded.word_of_token[4:])
    # the words' tokens are what the tokenizer makes of the whole sentence
    assert encoded.ids[4:] == tokenizer.tokenizer.encode(" " + " ".join(words), add_special_tokens=False)
    assert len([w for w in encoded.word_of_token if w == 1]) > 1  # "quickest" is more than one token


def test_the_language_token_comes_from_the_clip(detector):
    vocabulary = detector.tokenizer.vocabulary
    assert detector.tokenizer.prompt("pt-BR")[1] == vocabulary["<|pt|>"]
    assert len(detector.tokenizer.prompt("")) == 3  # no language: Whisper's own detection
    with pytest.raises(ValueError, match="no language token for 'xx'"):
        detector.tokenizer.prompt("xx")


def test_token_labels_are_the_words_labels_and_the_prompt_is_ignored(detector):
    clip = Clip(
        "c",
        "de",
        "train",
        (Word("over", 0, 1, 1, 0.9), Word("lazy", 1, 2, 0, 0.1)),
        samples=np.zeros(16000, np.float32),
    )
    batch = next(iter(detector.loader([clip], training=False)))
    words = batch["word"][0].tolist()
    assert batch["binary"][0].tolist() == [IGNORE if w < 0 else (1, 0)[w] for w in words]
    assert batch["scalar"][0].tolist() == pytest.approx([IGNORE if w < 0 else (0.9, 0.1)[w] for w in words])
    assert batch["input_features"].shape == (1, 80, 100)  # a silent clip: one frame, padded to a second
    window = features_to_window(batch["input_features"], batch["features_fill"], detector.model.window_frames)
    assert window.shape == (1, 80, 300)


def test_features_cut_to_the_clip_are_the_extractors_bit_for_bit_on_the_device(detector):
    """Each clip's log-mel travels without the frames after it; put back to Whisper's window on
    the device it is exactly what the feature extractor gives, for short, silent and full clips."""
    rng = np.random.default_rng(4)
    clips = synthetic_set(3, seed=8, words=3)  # about 1-1.5 s
    clips.append(Clip("full", "en", "train", clips[0].words, samples=rng.normal(0, 0.1, 48000).astype(np.float32)))
    clips.append(Clip("silent", "en", "train", clips[0].words, samples=np.zeros(8000, np.float32)))
    batch = next(iter(detector.loader(clips, training=False)))  # eval batches of 2
    extractor = detector.feature_extractor
    expected = [extractor(c.audio, sampling_rate=16000, return_tensors="np").input_features[0] for c in clips[:2]]
    window = features_to_window(batch["input_features"], batch["features_fill"], detector.model.window_frames)
    assert torch.equal(window, torch.from_numpy(np.stack(expected)))
    assert batch["input_features"].shape[-1] < 300 and batch["input_features"].shape[-1] % 100 == 0
    for clip in clips:
        whole = extractor(clip.audio, sampling_rate=16000, return_tensors="np").input_features[0]
        cut, fill = features_cut(whole)
        back = features_to_window(torch.from_numpy(cut)[None], torch.tensor([fill]), 300)[0]
        assert torch.equal(back, torch.from_numpy(whole))
        assert cut.shape[-1] <= 300 if clip.clip_id == "full" else cut.shape[-1] < 16 + len(clip.audio) // 160


def test_weighted_cross_entropy_and_bce_skip_the_prompt():
    logits, scalar_logits = torch.randn(1, 4, 2), torch.randn(1, 4)
    binary, scalar = torch.tensor([[IGNORE, 1, 0, 0]]), torch.tensor([[IGNORE, 0.8, 0.1, 0.3]])
    loss = token_loss(logits, scalar_logits, binary, scalar, class_weights=(1.0, 2.33))
    ce = torch.nn.functional.cross_entropy(logits[0, 1:], binary[0, 1:], weight=torch.tensor([1.0, 2.33]))
    bce = torch.nn.functional.binary_cross_entropy_with_logits(scalar_logits[0, 1:], scalar[0, 1:])
    assert loss.item() == pytest.approx((ce + bce).item(), rel=1e-6)


def run_with_hooks(model, batch, decoder_source, encoder_source):
    seen = {}
    handles = [
        decoder_source.register_forward_hook(lambda module, args, out: seen.__setitem__("decoder", out)),
        encoder_source.register_forward_hook(lambda module, args, out: seen.__setitem__("encoder", out)),
        model.extra_block.register_forward_pre_hook(
            lambda module, args, kwargs: seen.__setitem__("block", (args, kwargs)), with_kwargs=True
        ),
        model.extra_block.register_forward_hook(lambda module, args, out: seen.__setitem__("block_out", out)),
    ]
    model.eval()
    with torch.no_grad():
        model(batch["input_features"], batch["decoder_input_ids"], batch["features_fill"])
    for handle in handles:
        handle.remove()
    return seen


def test_the_extra_block_reads_the_chosen_decoder_and_encoder_layers(checkpoint_dir):
    detector = WhisperTokenDetector(TINY_WHISPER, checkpoint_dir)
    model = detector.build(WhisperTokenConfig(device="cpu", hidden_layer=1, eval_batch_size=2))
    batch = next(iter(detector.loader(synthetic_set(2, seed=5), training=False)))
    # hidden_states[1] is the output of layer 1, i.e. of layers[0]
    seen = run_with_hooks(model, batch, model.backbone.decoder.layers[0], model.backbone.encoder.layers[0])
    args, kwargs = seen["block"]
    assert torch.equal(args[0], seen["decoder"]) and torch.equal(kwargs["encoder_hidden_states"], seen["encoder"])
    assert isinstance(seen["block_out"], torch.Tensor)  # transformers 5: a tensor, not a tuple


def test_layer_9_is_clamped_to_the_last_layer_of_a_tiny_model(checkpoint_dir):
    detector = WhisperTokenDetector(TINY_WHISPER, checkpoint_dir)
    model = detector.build(WhisperTokenConfig(device="cpu", eval_batch_size=2))
    assert (model.decoder_layer, model.encoder_layer) == (3, 2)  # 3 decoder layers, 2 encoder layers
    batch = next(iter(detector.loader(synthetic_set(2, seed=5), training=False)))
    # the last hidden state is the final layer norm's output
    seen = run_with_hooks(model, batch, model.backbone.decoder.layer_norm, model.backbone.encoder.layer_norm)
    args, kwargs = seen["block"]
    assert torch.equal(args[0], seen["decoder"]) and torch.equal(kwargs["encoder_hidden_states"], seen["encoder"])


def test_the_backbone_stays_frozen(detector):
    model = detector.model
    model.train()
    assert not model.backbone.training and model.extra_block.training
    assert not any(p.requires_grad for p in model.backbone.parameters())
    trainer = detector.trainer(total_updates=1)
    assert {id(p) for p in trainer.parameters} == {id(p) for p in model.head_modules().parameters()}


def test_a_tiny_benchmark_run_end_to_end(export_folder, checkpoint_dir, tmp_path):
    result = run_benchmark(
        folder=export_folder,
        detector="whisper-tokens",
        backbone=TINY_WHISPER,
        checkpoint_dir=checkpoint_dir,
        setting={"kind": "multilingual"},
        config={**QUICK, "batch_size": 8},
        output_dir=tmp_path / "model",
        resamples=50,
    )
    assert result["clips"] == {"train": 32, "validation": 4, "test": 4}
    assert set(result["metrics"]["by_language"]) == {"de", "en"} and result["metrics"]["pooled"]["words"] == 16
    assert len(result["history"]) == 2 and result["config"]["weight_decay"] == 0.01  # the paper's default stays

    reloaded = load_detector(tmp_path / "model", checkpoint_dir=checkpoint_dir)
    test_clips = [clip for clip in load_folder(export_folder) if clip.split == "test"]
    again = [value for prediction in reloaded.predict(test_clips) for value in prediction.scalar]
    assert again == pytest.approx([row["scalar_pred"] for row in result["predictions"]], abs=1e-6)


def test_the_extra_block_can_start_as_a_copy_of_the_next_decoder_layer(checkpoint_dir):
    detector = WhisperTokenDetector(TINY_WHISPER, checkpoint_dir)
    model = detector.build(WhisperTokenConfig(device="cpu", hidden_layer=1, extra_block_init="copy"))
    source = model.backbone.decoder.layers[1]  # reads hidden_states[1] in the backbone
    copied, original = model.extra_block.state_dict(), source.state_dict()
    assert all(torch.equal(copied[name], original[name]) for name in original)
    assert all(p.requires_grad for p in model.extra_block.parameters())
    assert not any(p.requires_grad for p in source.parameters())
