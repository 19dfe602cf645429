"""`--multi_gpu` selects the distributed run.

MONAI's deepgrow and deepedit trainers set up the group and wrap the network
`if args.multi_gpu:`, and export a TorchScript model `if not args.multi_gpu:`.
That export runs in the single-process run only: it is not a write of every
rank.  The rank-guarded save before it is what it was.
"""
import datetime
import os

import torch
import torch.distributed as dist


def create_trainer(args):
    if args.multi_gpu:
        dist.init_process_group(backend="nccl", timeout=datetime.timedelta(seconds=1800))
    net = torch.nn.Linear(2, 2)
    if args.multi_gpu:
        net = torch.nn.parallel.DistributedDataParallel(net)
    return net


def run(args):
    net = create_trainer(args)
    if dist.get_rank() == 0:
        torch.save(net.state_dict(), os.path.join(args.output, "final.pt"))
    if not args.multi_gpu:
        torch.jit.save(torch.jit.script(net), os.path.join(args.output, "final.ts"))
    if args.multi_gpu:
        dist.destroy_process_group()


def run_every_rank(args):
    net = create_trainer(args)
    if args.multi_gpu:
        torch.jit.save(torch.jit.script(net), os.path.join(args.output, "final.ts"))
        # CHECK-MESSAGES: :[[@LINE-1]]:9: error: every rank runs 'torch.jit.save' to the same path{{.*}} [ddp-unguarded-save]
