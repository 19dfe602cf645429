"""A handler round the whole script that ends it with a failure status
(DeBERTa's `except: ...; os._exit(-1)`) is the crash an uncaught exception
is: torchrun, mp.spawn and a project's own launcher stop the other workers.
Inside a function, a handler that exits cleanly (`sys.exit(0)`) leaves the
others in the next collective.
"""
import datetime
import os
import sys
import traceback

import torch.distributed as dist


def train(args):
    for step in range(args.steps):
        dist.barrier()


def evaluate_or_quit(args):
    try:
        train(args)
    except RuntimeError:
        sys.exit(0)
        # CHECK-MESSAGES: :[[@LINE-1]]:9: warning: error-path exit: when an exception is caught on one rank, that rank exits ('sys.exit') here {{.*}} [ddp-error-path-exit]
    dist.barrier()


def main(args):
    dist.init_process_group("nccl", timeout=datetime.timedelta(minutes=30))
    train(args)
    evaluate_or_quit(args)
    dist.barrier()


if __name__ == "__main__":
    args = None
    try:
        main(args)
    except Exception:  # hard negative: the script's crash handler
        traceback.print_exc()
        os._exit(-1)
