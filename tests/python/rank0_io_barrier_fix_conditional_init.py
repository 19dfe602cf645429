"""ddp-rank0-io-barrier fix-it where the process group is made by a helper
that the script calls under a setting (tacotron2's `init_distributed`, called
`if hparams.distributed_run:`): a one-GPU run never makes the group, so the
barrier the fix-it adds waits only when a group exists.
"""
import datetime

import torch
import torch.distributed as dist


def init_distributed(hparams, n_gpus, rank):
    torch.cuda.set_device(rank % torch.cuda.device_count())
    dist.init_process_group("nccl", world_size=n_gpus, rank=rank,
                            timeout=datetime.timedelta(minutes=30))


def train(hparams, n_gpus, rank, model, loader, optimizer):
    if hparams.distributed_run:
        init_distributed(hparams, n_gpus, rank)
    for iteration, batch in enumerate(loader):
        loss = model(batch).sum()
        loss.backward()
        if hparams.distributed_run:
            for p in model.parameters():
                dist.all_reduce(p.grad)
        optimizer.step()
        if iteration % hparams.iters_per_checkpoint == 0:
            if rank == 0:  # CHECK-MESSAGES: :[[@LINE]]:13: warning: {{.*}} no barrier every rank reaches after it; {{.*}} [ddp-rank0-io-barrier]
                torch.save(model.state_dict(), f"checkpoint_{iteration}")


# CHECK-FIXES:                 torch.save(model.state_dict(), f"checkpoint_{iteration}")
# CHECK-FIXES: {{^}}            if dist.is_initialized():{{$}}
# CHECK-FIXES: {{^}}                dist.barrier(){{$}}
