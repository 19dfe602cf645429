"""ddp-async-error-handling, hard negative: PyTorch 1.13 with the variable set by
os.environ.setdefault (a launcher may override it) inside the setup helper."""
# CONFIG: launch:
# CONFIG:   torch_version: "1.13"
import os
from datetime import timedelta

import torch
import torch.distributed as dist


def init_distributed():
    os.environ.setdefault("NCCL_ASYNC_ERROR_HANDLING", "1")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group(backend="nccl", init_method="env://", timeout=timedelta(minutes=15))
    return local_rank


def main():
    local_rank = init_distributed()
    t = torch.full((4,), float(dist.get_rank()), device=f"cuda:{local_rank}")
    dist.all_reduce(t)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
