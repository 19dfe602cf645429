"""Calls that hand a helper a constant, and the facts that follow a
broadcast (issue 16), reduced from a detector trainer's train.py
(ultralytics/yolov5): its `torch_distributed_zero_first(local_rank)` runs a
barrier for local_rank 0 and for the others, and none for -1, which its
rank-0-only validation loader passes (explicitly or by default).
"""
import os
from contextlib import contextmanager

import torch
import torch.distributed as dist

LOCAL_RANK = int(os.getenv("LOCAL_RANK", "-1"))
RANK = int(os.getenv("RANK", "-1"))


@contextmanager
def torch_distributed_zero_first(local_rank: int):
    if local_rank not in [-1, 0]:
        dist.barrier(device_ids=[local_rank])
    yield
    if local_rank == 0:
        dist.barrier(device_ids=[0])


def create_dataloader(path, batch_size, rank=-1, workers=8):
    with torch_distributed_zero_first(rank):
        dataset = torch.load(path)
    return torch.utils.data.DataLoader(dataset, batch_size=batch_size, num_workers=0)


def loaders(train_path, val_path):
    train_loader = create_dataloader(train_path, 16, rank=LOCAL_RANK)
    if RANK in {-1, 0}:
        # rank=-1 and the default: no barrier runs, so rank 0 alone may call it.
        val_loader = create_dataloader(val_path, 32, rank=-1)
        test_loader = create_dataloader(val_path, 32)
    return train_loader


def loaders_hazard(train_path, val_path):
    if RANK in {-1, 0}:
        # The local rank: rank 0 runs a barrier that the others never reach.
        val_loader = create_dataloader(val_path, 32, rank=LOCAL_RANK)  # CHECK-MESSAGES: :[[@LINE]]:22: error: call to 'create_dataloader', which runs barrier, runs only on ranks where 'RANK in {-1, 0}' holds{{.*}} [ddp-divergent-collective]
    return None


def helper_flag(model, sync=False):
    if sync:
        dist.all_reduce(model.weight)


def flags(model):
    if RANK == 0:
        helper_flag(model)  # sync left at False: no collective
        helper_flag(model, sync=False)
    if RANK == 0:
        helper_flag(model, True)  # CHECK-MESSAGES: :[[@LINE]]:9: error: call to 'helper_flag', which runs collective 'all_reduce', runs only on ranks where 'RANK == 0' holds{{.*}} [ddp-divergent-collective]


class ModelEMA:
    def __init__(self, model):
        self.model = model


def smart_resume(ckpt, optimizer, ema=None, epochs=300):
    start_epoch = ckpt["epoch"] + 1
    if ema:
        ema.model.load_state_dict(ckpt["ema"])
    return start_epoch, epochs


def early_stop(model, optimizer, ckpt, loader, epochs, stopper, opt):
    # ema exists on rank 0 only; what smart_resume returns is the checkpoint's.
    ema = ModelEMA(model) if RANK in {-1, 0} else None
    start_epoch, epochs = smart_resume(ckpt, optimizer, ema, epochs)
    for epoch in range(start_epoch, epochs):
        for x in loader:
            loss = model(x).sum()
            loss.backward()
        stop = loss.item() > 10  # this rank's batch
        # Rank 0 sends its decision; the others take it: `stop` is agreed.
        if RANK != -1:
            broadcast_list = [stop if RANK == 0 else None]
            dist.broadcast_object_list(broadcast_list, 0)
            if RANK != 0:
                stop = broadcast_list[0]
        if stop:
            break


def fit(model, loader):
    for x in loader:
        loss = model(x).sum()
        dist.all_reduce(loss)
    if RANK in {-1, 0}:
        torch.save(model.state_dict(), "final.pt")  # the run's last write


def run(model, loader, opt):
    if LOCAL_RANK != -1:
        assert not opt.evolve, "--evolve is not compatible with DDP"
    # Asserted off in the distributed run: fit is never called again after its save.
    if not opt.evolve:
        fit(model, loader)
    else:
        for generation in range(10):
            fit(model, loader)


def fit_hazard(model, loader):
    for x in loader:
        loss = model(x).sum()
        dist.all_reduce(loss)
    if RANK in {-1, 0}:  # CHECK-MESSAGES: :[[@LINE]]:5: warning: block runs only on rank 0 and writes files{{.*}} [ddp-rank0-io-barrier]
        torch.save(model.state_dict(), "final.pt")


def run_hazard(model, loader, opt):
    # Nothing says a distributed run has evolve off: the next fit's
    # all-reduce races with rank 0's save.
    if not opt.evolve:
        fit_hazard(model, loader)
    else:
        for generation in range(10):
            fit_hazard(model, loader)


def early_stop_hazard(model, loader, epochs, stopper):
    for epoch in range(epochs):
        for x in loader:
            loss = model(x).sum()
            loss.backward()
        stop = loss.item() > 10
        # Sent, but the others never take it: each rank decides on its own.
        broadcast_list = [stop if RANK == 0 else None]
        dist.broadcast_object_list(broadcast_list, 0)
        if stop:
            break  # CHECK-MESSAGES: :[[@LINE+1]]:9: error: barrier 'all_reduce' is skipped by ranks where 'loss.item() > 10' holds{{.*}} [ddp-divergent-collective]
        dist.all_reduce(torch.ones(1))


def eval_saves(model, loader, output_dir, evaluate):
    for epoch in range(10):
        for x in loader:
            model(x).sum().backward()
        stats = evaluate(model)
        if dist.get_rank() == 0:
            # A loop inside rank 0's block is rank 0's too.
            for name in ["latest.pth", f"{epoch:03}.pth"]:
                torch.save(stats, os.path.join(output_dir, name))
        dist.barrier()


def eval_saves_hazard(model, loader, output_dir):
    for epoch in range(10):
        for x in loader:
            model(x).sum().backward()
        for name in ["latest.pth"]:
            torch.save(model.state_dict(), os.path.join(output_dir, name))  # CHECK-MESSAGES: :[[@LINE]]:13: error: every rank runs 'torch.save' to the same path{{.*}} [ddp-unguarded-save]


def evaluate_or_train(model, loader, args):
    if args.eval:
        stats = model(torch.ones(1))
        if dist.get_rank() == 0:
            torch.save(stats, "eval.pth")  # nothing follows: the branch returns
        return
    for epoch in range(args.epochs):
        for x in loader:
            loss = model(x).sum()
            dist.all_reduce(loss)
        if dist.get_rank() == 0:  # CHECK-MESSAGES: :[[@LINE]]:9: warning: block runs only on rank 0 and writes files{{.*}} [ddp-rank0-io-barrier]
            torch.save(model.state_dict(), "checkpoint.pth")


def evaluate_coco(model, output_folder):
    if output_folder:
        torch.save(model.state_dict(), os.path.join(output_folder, "model_final.pth"))
    return 0


def train_with_inline_eval(model, loader):
    # hard negative: GLIP's trainer evaluates on rank 0 with
    # `output_folder=None`; the callee writes only when given a folder
    for step, x in enumerate(loader):
        dist.all_reduce(model(x))
        if RANK == 0 and step % 100 == 0:
            evaluate_coco(model, output_folder=None)


def train_with_saved_eval(model, loader, out):
    # ...and with a folder it writes, while the others go on
    for step, x in enumerate(loader):
        dist.all_reduce(model(x))
        if RANK == 0 and step % 100 == 0:
        # CHECK-MESSAGES: :[[@LINE-1]]:9: warning: block runs only on rank 0 and writes files, with no barrier every rank reaches after it; {{.*}} [ddp-rank0-io-barrier]
            evaluate_coco(model, output_folder=out)


def only_when_missing(model, loader, folder):
    # `folder is None` of a None argument: every rank skips the barrier
    if folder is not None:
        dist.barrier()
    return model


def caller_without_folder(model, loader):
    if RANK == 0:
        only_when_missing(model, loader, None)


def sync_all(x):
    dist.barrier()


def rank0_callback(model, sync_all):
    # The parameter shadows the module's sync_all: what runs is what the caller hands in.
    if dist.get_rank() == 0:
        sync_all(model)


def rank0_module_helper(model):
    if dist.get_rank() == 0:
        sync_all(model)  # CHECK-MESSAGES: :[[@LINE]]:9: error: call to 'sync_all', which runs barrier, runs only on ranks where{{.*}} [ddp-divergent-collective]
