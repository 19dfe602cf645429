"""timm's CheckpointSaver reached through `from timm.utils import *` (as
PoolFormer's and many timm-based train.py do): the class name alone says what
it is, since the project defines no class so named.  See library_knowledge.py
for the qualified spellings."""
import torch
import torch.distributed as dist
from timm.utils import *


def main(args, model, optimizer, loader, epochs):
    dist.init_process_group("nccl", timeout=__import__("datetime").timedelta(minutes=30))
    model = torch.nn.parallel.DistributedDataParallel(model)
    saver = None
    if args.rank == 0:
        saver = CheckpointSaver(model=model, optimizer=optimizer, args=args, checkpoint_dir="out")
    for epoch in range(epochs):
        for x in loader:
            model(x).sum().backward()
        if saver is not None:
        # CHECK-MESSAGES: :[[@LINE-1]]:9: warning: block runs only on rank 0 and writes files, with no barrier every rank reaches after it; {{.*}} [ddp-rank0-io-barrier]
            best_metric, best_epoch = saver.save_checkpoint(epoch, metric=0.0)
    # hard negative: an object of a class that is not a saver, same method name
    logger = Logger()
    if args.rank == 0:
        logger.save_checkpoint(0)
