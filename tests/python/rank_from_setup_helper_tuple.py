"""A set-up helper longer than a predicate hands the rank back in a tuple.

ml-mdm's `init_distributed_singlenode()` reads RANK, WORLD_SIZE and
LOCAL_RANK into locals, returns early when MASTER_ADDR is unset, sets up the
group and a barrier otherwise, and returns `local_rank, rank, world_size`.
The caller's `global_rank == 0` is a rank test: the save under it is rank 0's
alone (before, the element was not known to be the rank and the guarded save
was reported as every rank's), and a rank-0 checkpoint in the loop with no
barrier after it is the hazard it is.
"""
import datetime
import os

import torch
import torch.distributed as dist


def init_distributed_singlenode(timeout=0):
    rank = int(os.environ.get("RANK", "0"))
    world_size = int(os.environ.get("WORLD_SIZE", "1"))
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    if "MASTER_ADDR" not in os.environ or world_size == 1:
        return local_rank, rank, world_size
    dist.init_process_group(backend="nccl", timeout=datetime.timedelta(seconds=timeout))
    dist.barrier()
    return local_rank, rank, world_size


def setup_counted():
    rank = 0
    world = int(os.environ.get("WORLD_SIZE", "1"))
    if world > 1:
        dist.init_process_group(backend="gloo", timeout=datetime.timedelta(seconds=1800))
        rank = dist.get_rank()
    dist.barrier()
    print("set up", rank, world)
    return world, rank


def guarded_between_barriers(args, model):
    local_rank, global_rank, world_size = init_distributed_singlenode(timeout=36000)
    for batch_num in range(1, args.steps + 1):
        if global_rank == 0 and batch_num % args.save_freq == 0:
            torch.save(model.state_dict(), os.path.join(args.output_dir, f"m_{batch_num}.pth"))
        if batch_num % args.save_freq == 0:
            dist.barrier()


def rank0_checkpoint_mid_training(args, model, opt):
    local_rank, global_rank, world_size = init_distributed_singlenode(timeout=36000)
    for step in range(args.steps):
        loss = model(step).sum()
        loss.backward()
        opt.step()
        dist.all_reduce(loss)
        if global_rank == 0:  # CHECK-MESSAGES: :[[@LINE]]:9: warning: block runs only on rank 0 and writes files, with no barrier every rank reaches after it{{.*}} [ddp-rank0-io-barrier]
            torch.save(model.state_dict(), os.path.join(args.output_dir, "last.pth"))


# `rank = 0` until the group is up, then the group's rank: still the rank,
# and the final save is rank 0's alone.
def assigned_twice(args, model):
    world, rank = setup_counted()
    if rank == 0:
        torch.save(model.state_dict(), os.path.join(args.output_dir, "final.pth"))


# AlgoPerf's `pytorch_setup()`: `return use_pytorch_ddp, rank, device, n_gpus`
# where `rank` is LOCAL_RANK: one writer per node, said as such.
def pytorch_setup():
    use_ddp = "LOCAL_RANK" in os.environ
    rank = int(os.environ["LOCAL_RANK"]) if use_ddp else 0
    return use_ddp, rank


def save_on_local_zero(args, model):
    dist.init_process_group(backend="nccl", timeout=datetime.timedelta(seconds=1800))
    use_ddp, rank = pytorch_setup()
    if args.log_dir is not None and rank == 0:
        torch.save(model.state_dict(), os.path.join(args.log_dir, "checkpoint.pt"))  # CHECK-MESSAGES: :[[@LINE]]:9: error: 'torch.save' is guarded by the node-local rank, so one process per node writes the same path{{.*}} [ddp-unguarded-save]
    dist.barrier()


# AlgoPerf's input pipelines: rank 0 reads the batch and, when the run has
# ranks, broadcasts it; the others receive it.  The flag is the launcher's
# variable being set, so in a run with ranks both arms broadcast alike
# (hard negative).  The flag's name here says nothing (AlgoPerf's
# USE_PYTORCH_DDP would be known by its name): only the helper's return says it.


def batches(iterator, device):
    sharded, rank = pytorch_setup()
    while True:
        if rank == 0:
            inputs = next(iterator).to(device)
            if sharded:
                dist.broadcast(inputs, src=0)
        else:
            inputs = torch.empty((4, 8), device=device)
            dist.broadcast(inputs, src=0)
        yield inputs
