"""detectron2's checkpointers write on the main process only.

`DetectionCheckpointer(model, out_dir)` saves to disk on the main process
(fvcore's Checkpointer with `save_to_disk=comm.is_main_process()`), and a
PeriodicCheckpointer's `step(iteration)` calls it every period.  In a loop
whose next iteration all-reduces, rank 0 writes while the others wait: a
rank-0 checkpoint with no barrier after it (omni3d's train_net.py, through
its own PeriodicCheckpointer subclass).  A `comm.synchronize()` after the
save orders it.
"""
import datetime

import torch
import torch.distributed as dist
from detectron2.checkpoint import DetectionCheckpointer, PeriodicCheckpointer
from detectron2.utils import comm


class PeriodicOnlyOne(PeriodicCheckpointer):
    def step(self, iteration, **kwargs):
        if (iteration + 1) % self.period == 0:
            self.checkpointer.save("model_recent", iteration=iteration)  # CHECK-MESSAGES: :[[@LINE]]:13: warning: 'self.checkpointer.save' writes files only on rank 0 (its own main-process guard), with no barrier every rank reaches after it{{.*}} [ddp-rank0-io-barrier]


def do_train(cfg, model, optimizer, data_loader):
    dist.init_process_group("nccl", timeout=datetime.timedelta(minutes=30))
    checkpointer = DetectionCheckpointer(model, cfg.OUTPUT_DIR, optimizer=optimizer)
    periodic = PeriodicCheckpointer(checkpointer, cfg.SOLVER.CHECKPOINT_PERIOD)
    for iteration, data in enumerate(data_loader):
        losses = sum(model(data).values())
        dist.all_reduce(losses)
        losses.backward()
        optimizer.step()
        periodic.step(iteration)  # CHECK-MESSAGES: :[[@LINE]]:9: warning: 'periodic.step' writes files only on rank 0 (its own main-process guard), with no barrier every rank reaches after it{{.*}} [ddp-rank0-io-barrier]


def do_train_own(cfg, model, optimizer, data_loader):
    dist.init_process_group("nccl", timeout=datetime.timedelta(minutes=30))
    checkpointer = DetectionCheckpointer(model, cfg.OUTPUT_DIR, optimizer=optimizer)
    own_periodic = PeriodicOnlyOne(checkpointer, cfg.SOLVER.CHECKPOINT_PERIOD)
    for iteration, data in enumerate(data_loader):
        losses = sum(model(data).values())
        dist.all_reduce(losses)
        losses.backward()
        optimizer.step()
        own_periodic.step(iteration)


def do_train_synchronized(cfg, model, optimizer, data_loader):
    dist.init_process_group("nccl", timeout=datetime.timedelta(minutes=30))
    checkpointer = DetectionCheckpointer(model, cfg.OUTPUT_DIR, optimizer=optimizer)
    for iteration, data in enumerate(data_loader):
        losses = sum(model(data).values())
        dist.all_reduce(losses)
        losses.backward()
        optimizer.step()
        if iteration % 1000 == 0:
            checkpointer.save(f"model_{iteration:07d}")
            comm.synchronize()
