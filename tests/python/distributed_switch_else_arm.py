"""transfuser's switch: `if parallel == True:` makes the world (torchrun's
RANK, init_process_group), `else:` is the one-process run.  A later `if
parallel == True:` holds wherever ranks can diverge, so the `else:` arm's
save is the single process's, not every rank's; a save on the parallel
arm with no rank test is every rank's.
"""
import datetime
import os

import torch
import torch.distributed as dist


class Engine:
    def __init__(self, model, logdir):
        self.model = model
        self.logdir = logdir

    def save(self):
        torch.save(self.model.state_dict(), os.path.join(self.logdir, "model.pth"))

    def save_every_rank(self):
        # CHECK-MESSAGES: :[[@LINE+1]]:9: error: every rank runs 'torch.save' to the same path{{.*}} [ddp-unguarded-save]
        torch.save(self.model.state_dict(), os.path.join(self.logdir, "last.pth"))


def main(args):
    parallel = bool(args.parallel_training)
    if parallel == True:
        rank = int(os.environ["RANK"])
        dist.init_process_group(backend="nccl", timeout=datetime.timedelta(minutes=30))
    else:
        rank = 0
    model = torch.nn.Linear(4, 4).cuda()
    if parallel == True:
        model = torch.nn.parallel.DistributedDataParallel(model)
    trainer = Engine(model, args.logdir)
    for epoch in range(args.epochs):
        model(torch.randn(2, 4).cuda()).sum().backward()
        if parallel == True:
            if rank == 0:
                trainer.save()
            dist.barrier()
            trainer.save_every_rank()
        else:
            trainer.save()
