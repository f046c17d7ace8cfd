"""torchrun (torch.distributed.run's main), set to die with the process that started it:

    python -m modelzoo.training.agent --standalone --nproc-per-node 2 ... -m modelzoo.training.rank spec.json

A GPU worker killed outright (SIGKILL, the out-of-memory killer) would otherwise leave torchrun and
its ranks training on, holding the GPUs, while the run is given to another worker. With SIGTERM
torchrun stops its ranks before it exits.
"""

import signal
import sys

from torch.distributed.run import main

from modelzoo.training.rank import die_with_parent

if __name__ == "__main__":
    die_with_parent(signal.SIGTERM)
    main(sys.argv[1:])
