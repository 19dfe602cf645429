"""VL-BERT's train_end2end: `rank = distributed.get_rank()` (or a helper's
`int(os.environ['RANK'] or 0)`), then `if rank is None or rank == 0:` copies
the checkpoint.  A rank is a number in every run whose ranks can diverge, so
`rank is None` is the one-process run and the test picks rank 0; `rank is
not None` holds on every rank.
"""
import os
import shutil

import torch.distributed as distributed


def test_net(args):
    shutil.copy2(args.ckpt, os.path.join(args.result_path, "test_ckpt.model"))


def copy_every_rank(args):
    # CHECK-MESSAGES: :[[@LINE+1]]:5: error: every rank runs 'shutil.copy2' to the same path{{.*}} [ddp-unguarded-save]
    shutil.copy2(args.ckpt, os.path.join(args.result_path, "final.model"))


def get_rank():
    return int(os.environ["RANK"] or 0)


def main(args):
    rank = distributed.get_rank()
    if rank is None or rank == 0:
        test_net(args)
    if get_rank() == 0:
        test_net(args)
    if rank is not None:
        copy_every_rank(args)
