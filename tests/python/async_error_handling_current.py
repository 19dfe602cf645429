"""ddp-async-error-handling, hard negative: PyTorch 2.4 with the current name set
explicitly (the recommended spelling); other TORCH_NCCL_* variables are unrelated."""
# CONFIG: launch:
# CONFIG:   torch_version: "2.4"
import os
from datetime import timedelta

import torch
import torch.distributed as dist

os.environ["TORCH_NCCL_ASYNC_ERROR_HANDLING"] = "1"
os.environ.setdefault("TORCH_NCCL_DUMP_ON_TIMEOUT", "1")


def main():
    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
    dist.init_process_group(backend="nccl", timeout=timedelta(minutes=5))
    t = torch.ones(1, device="cuda")
    dist.all_reduce(t)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
