"""detectron2's trainer runs its hooks between iterations.

`trainer.train()` calls every registered hook's `before_step` and
`after_step` on each iteration, between one iteration's gradient all-reduce
and the next.  `hooks.PeriodicCheckpointer(checkpointer, period)` saves
through its checkpointer every period: a DetectionCheckpointer writes on the
main process only, and a hook registered under `comm.is_main_process()`
exists only there.  Either way rank 0 writes while the other ranks go on
into the next iteration's all-reduce, with nothing to order them (the
detectron2 projects' `build_hooks` and `lazyconfig_train_net.py`; unbiased
teacher, RegionCLIP).  A project's own hook (a subclass of HookBase) runs
every step the same way: its rank-0 save without a barrier races with the
next step, one followed by `comm.synchronize()` does not, and `after_train`
runs once after the last step, when nothing follows.
"""
import os

import torch
import detectron2.utils.comm as comm
from detectron2.checkpoint import DetectionCheckpointer
from detectron2.engine import DefaultTrainer, HookBase, SimpleTrainer, hooks
from fvcore.common.checkpoint import Checkpointer
from torch.nn.parallel import DistributedDataParallel


class Trainer(DefaultTrainer):
    def __init__(self, cfg, model, optimizer, data_loader):
        model = DistributedDataParallel(model, device_ids=[comm.get_local_rank()])
        self._trainer = SimpleTrainer(model, data_loader, optimizer)
        self.checkpointer = DetectionCheckpointer(model, cfg.OUTPUT_DIR, optimizer=optimizer)
        self.cfg = cfg
        self.register_hooks(self.build_hooks())

    def build_hooks(self):
        ret = [hooks.IterationTimer()]
        if comm.is_main_process():
            ret.append(
                hooks.PeriodicCheckpointer(self.checkpointer, self.cfg.SOLVER.CHECKPOINT_PERIOD)
                # CHECK-MESSAGES: :[[@LINE-1]]:17: warning: 'hooks.PeriodicCheckpointer' hook writes checkpoints only on rank 0 (registered under comm.is_main_process()), every period between training steps, with no barrier every rank reaches after it{{.*}} [ddp-rank0-io-barrier]
            )
        return ret


def do_train(cfg, model, optim, train_loader, max_iter):
    model = DistributedDataParallel(model, device_ids=[comm.get_local_rank()])
    trainer = SimpleTrainer(model, train_loader, optim)
    checkpointer = DetectionCheckpointer(model, cfg.train.output_dir, optimizer=optim, trainer=trainer)
    trainer.register_hooks(
        [
            hooks.IterationTimer(),
            # CHECK-MESSAGES: :[[@LINE+1]]:13: warning: 'hooks.PeriodicCheckpointer' hook writes checkpoints only on rank 0 (registered under comm.is_main_process()), every period between training steps, with no barrier every rank reaches after it; {{.*}}; put a barrier after the hook's save: register after it, on every rank, a hook whose after_step waits at a barrier in the iterations it saves [ddp-rank0-io-barrier]
            hooks.PeriodicCheckpointer(checkpointer, **cfg.train.checkpointer)
            if comm.is_main_process()
            else None,
        ]
    )
    trainer.train(0, max_iter)


def do_train_every_rank(cfg, model, optim, train_loader, max_iter):
    model = DistributedDataParallel(model, device_ids=[comm.get_local_rank()])
    trainer = SimpleTrainer(model, train_loader, optim)
    checkpointer = DetectionCheckpointer(model, cfg.OUTPUT_DIR, optimizer=optim, trainer=trainer)
    # CHECK-MESSAGES: :[[@LINE+1]]:29: warning: 'hooks.PeriodicCheckpointer' hook writes checkpoints only on rank 0 (its checkpointer's own main-process guard), every period between training steps{{.*}} [ddp-rank0-io-barrier]
    trainer.register_hooks([hooks.PeriodicCheckpointer(checkpointer, cfg.SOLVER.CHECKPOINT_PERIOD)])
    trainer.train(0, max_iter)


def do_train_own_folders(cfg, model, optim, train_loader, max_iter):
    # hard negative: every rank saves into its own folder on every rank
    model = DistributedDataParallel(model, device_ids=[comm.get_local_rank()])
    trainer = SimpleTrainer(model, train_loader, optim)
    own = Checkpointer(model, os.path.join(cfg.OUTPUT_DIR, f"rank{comm.get_rank()}"), optimizer=optim)
    trainer.register_hooks([hooks.PeriodicCheckpointer(own, cfg.SOLVER.CHECKPOINT_PERIOD)])
    trainer.train(0, max_iter)


class BestCheckpoint(HookBase):
    def __init__(self, path):
        self.path = path

    def after_step(self):
        if comm.is_main_process() and (self.trainer.iter + 1) % 5000 == 0:
            # CHECK-MESSAGES: :[[@LINE-1]]:9: warning: block runs only on rank 0 and writes files, with no barrier every rank reaches after it{{.*}} [ddp-rank0-io-barrier]
            torch.save(self.trainer.model.state_dict(), self.path)


class SynchronizedCheckpoint(HookBase):
    def __init__(self, path):
        self.path = path

    def after_step(self):
        # hard negative: the save is ordered before the next step
        if comm.is_main_process() and (self.trainer.iter + 1) % 5000 == 0:
            torch.save(self.trainer.model.state_dict(), self.path)
        comm.synchronize()

    def after_train(self):
        # hard negative: after the last step nothing follows
        if comm.is_main_process():
            torch.save(self.trainer.model.state_dict(), self.path + ".final")
