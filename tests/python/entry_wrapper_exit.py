"""denoiser's and svoice's entry: `@hydra.main def main(args): try:
_main(args) except Exception: ...; os._exit(1)`.  The function is the
script's outermost frame (its whole body is the try, the top level calls
it), so the failure status ends the process as an uncaught exception
would, and the launcher stops every worker.  The same shape in a function
the training loop calls leaves that rank alone.
"""
import datetime
import os

import hydra
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def one_epoch(model, opt):
    loss = model(torch.randn(2, 4).cuda()).sum()
    opt.zero_grad()
    loss.backward()
    opt.step()


def guarded_epoch(model, opt):
    try:
        one_epoch(model, opt)
    except RuntimeError:
        os._exit(1)
        # CHECK-MESSAGES: :[[@LINE-1]]:9: warning: error-path exit{{.*}} [ddp-error-path-exit]


def run(args):
    dist.init_process_group("nccl", timeout=datetime.timedelta(minutes=30))
    model = DDP(torch.nn.Linear(4, 4).cuda())
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(args.epochs):
        guarded_epoch(model, opt)
        dist.barrier()


@hydra.main(config_path="conf", config_name="config.yaml")
def main(args):
    try:
        run(args)
    except Exception:
        print("Some error happened")
        os._exit(1)


if __name__ == "__main__":
    main()
