"""ddp-async-error-handling on PyTorch 1.13: it reads NCCL_ASYNC_ERROR_HANDLING,
default 0 (off), and this program never sets it.

One finding per file, at the first NCCL process group; Gloo groups and other
NCCL_* variables do not matter.
"""
# CONFIG: launch:
# CONFIG:   torch_version: "1.13"
import datetime
import os

import torch
import torch.distributed as dist


def setup():
    os.environ.setdefault("NCCL_DEBUG", "WARN")
    os.environ["NCCL_IB_DISABLE"] = "1"
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    # CHECK-MESSAGES: :[[@LINE+1]]:5: warning: NCCL_ASYNC_ERROR_HANDLING [ddp-async-error-handling]
    dist.init_process_group(backend="nccl", timeout=datetime.timedelta(minutes=10))
    return local_rank


def tensor_parallel_group(world_size):
    # The same missing setting: not reported again.
    return dist.new_group(ranks=list(range(world_size)), backend="nccl",
                          timeout=datetime.timedelta(minutes=10))


def cpu_group(world_size):
    return dist.new_group(ranks=list(range(world_size)), backend="gloo",
                          timeout=datetime.timedelta(minutes=10))


def main():
    setup()
    tp = tensor_parallel_group(dist.get_world_size())
    cpu = cpu_group(dist.get_world_size())
    t = torch.ones(1, device="cuda")
    dist.all_reduce(t, group=tp)
    dist.barrier(group=cpu)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
