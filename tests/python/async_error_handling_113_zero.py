"""ddp-async-error-handling on PyTorch 1.13: the program sets the variable, but to 0."""
# CONFIG: launch:
# CONFIG:   torch_version: "1.13"
import os
from datetime import timedelta

import torch
import torch.distributed as dist

os.environ["NCCL_ASYNC_ERROR_HANDLING"] = "0"  # explicitly off: still a hazard


def main():
    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
    # CHECK-MESSAGES: :[[@LINE+1]]:5: warning: NCCL_ASYNC_ERROR_HANDLING [ddp-async-error-handling]
    dist.init_process_group("nccl", timeout=timedelta(minutes=5))
    t = torch.ones(1, device="cuda")
    dist.all_reduce(t)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
