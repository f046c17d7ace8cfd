from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from modelzoo.training.checkpoints import REGISTRY, CheckpointMissing, backbone_path

TINY_RANDOM = "tiny-random"
# Tiny Whisper and XLS-R shapes with random weights (modelzoo/training/random_backbones.py), for
# trying a benchmark on a laptop's CPU: their scores mean nothing. Whisper's window stays 30 s,
# as the real one's, so that any clip fits.
TINY_RANDOM_FOLDERS = {"whisper": f"{TINY_RANDOM}/whisper", "xls-r": f"{TINY_RANDOM}/xls-r"}


class Command(BaseCommand):
    help = (
        "Put backbones into MODELZOO_CHECKPOINT_DIR for the GPU workers (make gpu-worker runs it): each NAME a "
        f"backbone of the registry ({', '.join(REGISTRY)}) or a Hugging Face repository id, downloaded once "
        f"from the Hugging Face hub; or {TINY_RANDOM!r}: tiny backbones with random weights, made here, "
        f"nothing downloaded ({', '.join(TINY_RANDOM_FOLDERS.values())}). A backbone already there is kept."
    )

    def add_arguments(self, parser):
        parser.add_argument("names", nargs="+", metavar="NAME")

    def handle(self, *args, names, **options):
        root = Path(settings.MODELZOO_CHECKPOINT_DIR)
        root.mkdir(parents=True, exist_ok=True)
        for name in names:
            if name == TINY_RANDOM:
                for folder in _tiny_random(root):
                    self.stdout.write(f"{folder}: ready (random weights)")
            else:
                self.stdout.write(f"{_downloaded(name, root)}: ready")
        self.stdout.write(f"Launch benchmarks with these backbones; the workers read them from {root}.")


def _tiny_random(root: Path) -> list[Path]:
    from modelzoo.training import random_backbones

    whisper_shape = {**random_backbones.TINY_WHISPER, "max_source_positions": 1500, "max_target_positions": 448}
    made = {
        "whisper": lambda folder: random_backbones.save_whisper(folder, whisper_shape),
        "xls-r": random_backbones.save_wav2vec2,
    }
    folders = []
    for kind, relative in TINY_RANDOM_FOLDERS.items():
        folder = root / relative
        if not (folder / "config.json").is_file():
            made[kind](folder)
        folders.append(folder)
    return folders


def _downloaded(name: str, root: Path) -> Path:
    try:
        return backbone_path(name, root)
    except CheckpointMissing:
        pass
    repo_id = REGISTRY[name].repo_id if name in REGISTRY else name
    if "/" not in repo_id:
        raise CommandError(
            f"{name!r} is neither a backbone of the registry ({', '.join(REGISTRY)}), "
            f"a Hugging Face repository id (owner/name) nor {TINY_RANDOM!r}"
        )
    from huggingface_hub import snapshot_download
    from huggingface_hub.errors import HfHubHTTPError

    try:
        snapshot_download(repo_id, local_dir=root / repo_id)
    except (HfHubHTTPError, OSError) as error:
        raise CommandError(f"could not download {repo_id!r} from the Hugging Face hub: {error}") from error
    return backbone_path(name, root)
