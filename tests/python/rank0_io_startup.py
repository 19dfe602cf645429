"""ddp-rank0-io-barrier before the program's first collective.

Until the ranks first synchronise, no rank can be reading what an earlier
phase wrote, so a rank-0 write at start-up (the output folder, the run's
config, as Accelerate's examples do) needs the barrier after it, not one
before it.  Only the program's entry is known to start the run: a function
that nothing here calls may be called between collectives elsewhere.
"""
# With RequireBarrierBefore (off by default) the barrier before is asked for too.
# CONFIG: options:
# CONFIG:   ddp-rank0-io-barrier.RequireBarrierBefore: true
import datetime
import json
import os

import torch
import torch.distributed as dist
from accelerate import Accelerator


def main():
    accelerator = Accelerator()
    output_dir = "runs/exp"
    # ---- hard negative: start-up write, the others wait after it
    if accelerator.is_main_process:
        os.makedirs(output_dir, exist_ok=True)
        with open(os.path.join(output_dir, "config.json"), "w") as f:
            json.dump({"lr": 1e-3}, f)
    accelerator.wait_for_everyone()

    model = torch.nn.Linear(2, 2)
    for step in range(10):
        out = accelerator.gather(model(torch.ones(2)))
        # ---- true positive: the previous step's gather came before it
        # CHECK-MESSAGES: :[[@LINE+1]]:9: warning: barrier [ddp-rank0-io-barrier]
        if accelerator.is_main_process:
            torch.save(out, os.path.join(output_dir, f"out{step}.pt"))


def save_between_unknown_collectives(model, path):
    # ---- true positive: not the entry and not called here; its callers
    # (another module) may run collectives before it
    # CHECK-MESSAGES: :[[@LINE+1]]:5: warning: barrier [ddp-rank0-io-barrier]
    if dist.get_rank() == 0:
        torch.save(model.state_dict(), path)
    dist.barrier()


if __name__ == "__main__":
    main()


def run(rank, n_gpus, hps):
    # ---- hard negative: vits' start-up, before the process group exists.
    # init_process_group is the world's rendezvous: no rank leaves it before
    # rank 0 has come, and no barrier could go here (no group yet).
    if rank == 0:
        os.makedirs(hps.model_dir, exist_ok=True)
        with open(os.path.join(hps.model_dir, "githash"), "w") as f:
            f.write("abc123")
    dist.init_process_group("gloo", world_size=n_gpus, rank=rank,
                            timeout=datetime.timedelta(minutes=30))
    t = torch.zeros(1)
    for _ in range(hps.epochs):
        dist.all_reduce(t)


def spawn_main(hps):
    torch.multiprocessing.spawn(run, nprocs=2, args=(2, hps))
