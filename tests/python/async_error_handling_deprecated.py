"""ddp-async-error-handling on PyTorch 2.2 and newer: async error handling is on by
default (TORCH_NCCL_ASYNC_ERROR_HANDLING=3); the old name NCCL_ASYNC_ERROR_HANDLING
is deprecated.  Each use of the old name is reported at its string literal, and
the fix-it renames it.
"""
# CONFIG: launch:
# CONFIG:   torch_version: "2.3"
import os
from datetime import timedelta

import torch
import torch.distributed as dist

# CHECK-MESSAGES: :[[@LINE+1]]:12: warning: deprecated [ddp-async-error-handling]
os.environ["NCCL_ASYNC_ERROR_HANDLING"] = "1"
# CHECK-FIXES: os.environ["TORCH_NCCL_ASYNC_ERROR_HANDLING"] = "1"
os.environ["TORCH_NCCL_BLOCKING_WAIT"] = "0"


def async_errors_on():
    # CHECK-MESSAGES: :[[@LINE+1]]:27: warning: deprecated [ddp-async-error-handling]
    return os.environ.get("NCCL_ASYNC_ERROR_HANDLING", "0") != "0"
    # CHECK-FIXES: return os.environ.get("TORCH_NCCL_ASYNC_ERROR_HANDLING", "0") != "0"


def main():
    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
    dist.init_process_group(backend="nccl", timeout=timedelta(minutes=5))
    if not async_errors_on():
        print("warning: async error handling looks off")
    t = torch.ones(1, device="cuda")
    dist.all_reduce(t)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
