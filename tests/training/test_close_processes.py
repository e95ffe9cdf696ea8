"""close_processes keeps the closed gloo group alive past the trainer: freeing the DDP reducer
must not run gloo's destructor (it joins a worker thread under the GIL, which hung a rank of
bench/gpu_smoke.sh's two-process run on CPU)."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

pytest.importorskip(
    "trl", reason="needs the train extra: pip install -e '.[train]'"
)  # the script imports torch and sandmle.training.grpo

SCRIPT = textwrap.dedent(
    """
    import gc, socket
    import torch
    import torch.distributed as dist
    from sandmle.training import grpo

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=0, world_size=1)
    world = dist.group.WORLD
    model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(2, 1))
    model(torch.ones(1, 2)).sum().backward()


    class Accelerator:  # the two calls close_processes makes, as accelerate makes them on CPU
        def wait_for_everyone(self):
            dist.barrier()

        def end_training(self):
            dist.destroy_process_group()


    grpo.close_processes(Accelerator())
    assert not dist.is_initialized()
    del model  # the reducer goes; the group it held must not
    gc.collect()
    assert grpo._CLOSED_GROUPS == [world], grpo._CLOSED_GROUPS
    print("closed")
    """
)


def test_the_closed_group_outlives_the_ddp_model() -> None:
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip() == "closed"
