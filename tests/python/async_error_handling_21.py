"""ddp-async-error-handling, hard negative: PyTorch 2.1 defaults
NCCL_ASYNC_ERROR_HANDLING to 1 (TearDown), so a program that never sets it is fine,
and so is a Gloo-only helper."""
# CONFIG: launch:
# CONFIG:   torch_version: "2.1"
import os
from datetime import timedelta

import torch
import torch.distributed as dist


def main():
    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
    dist.init_process_group(backend="nccl", timeout=timedelta(minutes=5))
    cpu = dist.new_group(backend="gloo", timeout=timedelta(minutes=5))
    t = torch.ones(1, device="cuda")
    dist.all_reduce(t)
    dist.barrier(group=cpu)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
