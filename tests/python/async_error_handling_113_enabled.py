"""ddp-async-error-handling, hard negative: PyTorch 1.13 with the variable it reads set to 1."""
# CONFIG: launch:
# CONFIG:   torch_version: "1.13"
import os
from datetime import timedelta

import torch
import torch.distributed as dist

# Must be set before the NCCL communicator is created.
os.environ["NCCL_ASYNC_ERROR_HANDLING"] = "1"


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group(backend="nccl", timeout=timedelta(minutes=5))
    t = torch.ones(1, device="cuda")
    dist.all_reduce(t)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
