"""Accelerate's `save_state` under the guard its documentation gives
(diffusers' and CogVideo's training scripts): `if distributed_type ==
DEEPSPEED or is_main_process:`.  Under DeepSpeed every rank enters the block
and makes the engine's call together; under plain DDP the main process alone
saves.  So it is no rank-0-only collective; it is a rank-0 checkpoint, and a
mid-training one with no barrier after it is reported by ddp-rank0-io-barrier,
with the Accelerator's own wait after the whole `if` (never inside it).
"""
import os

from accelerate import Accelerator
from accelerate.utils import DistributedType


def train(args, model, optimizer, loader):
    accelerator = Accelerator()
    model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
    global_step = 0
    for batch in loader:
        accelerator.backward(model(batch).mean())
        optimizer.step()
        global_step += 1
        if accelerator.distributed_type == DistributedType.DEEPSPEED or accelerator.is_main_process:
            if global_step % args.checkpointing_steps == 0:
                accelerator.save_state(os.path.join(args.output_dir, f"checkpoint-{global_step}"))
                # CHECK-MESSAGES: :[[@LINE-1]]:17: warning: 'accelerator.save_state' writes files only on rank 0 (its own main-process guard), with no barrier every rank reaches after it; {{.*}} [ddp-rank0-io-barrier]
# CHECK-FIXES: accelerator.save_state(os.path.join(args.output_dir, f"checkpoint-{global_step}"))
# CHECK-FIXES: {{^}}        accelerator.wait_for_everyone(){{$}}


def train_with_wait(args, model, optimizer, loader):
    # hard negative: the same guard, and every rank waits after it
    accelerator = Accelerator()
    model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
    for step, batch in enumerate(loader):
        accelerator.backward(model(batch).mean())
        optimizer.step()
        if (accelerator.distributed_type == DistributedType.DEEPSPEED
                or accelerator.is_main_process):
            accelerator.save_state(os.path.join(args.output_dir, f"checkpoint-{step}"))
        accelerator.wait_for_everyone()


def train_every_rank(args, model, optimizer, loader):
    # hard negative: every rank calls it; accelerate picks the writer itself
    accelerator = Accelerator()
    model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
    for step, batch in enumerate(loader):
        accelerator.backward(model(batch).mean())
        optimizer.step()
        if step % args.checkpointing_steps == 0:
            accelerator.save_state(os.path.join(args.output_dir, f"checkpoint-{step}"))


def train_main_only(args, model, optimizer, loader):
    # The main process alone, in a module that runs DeepSpeed: the engine's
    # save waits for ranks that never call it.
    accelerator = Accelerator()
    model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
    for step, batch in enumerate(loader):
        accelerator.backward(model(batch).mean())
        optimizer.step()
        if accelerator.is_main_process:
            accelerator.save_state(os.path.join(args.output_dir, f"checkpoint-{step}"))
            # CHECK-MESSAGES: :[[@LINE-1]]:13: error: barrier 'accelerator.save_state() (DeepSpeed and FSDP: every rank)' runs only on ranks where {{.*}} [ddp-divergent-collective]


def train_then_final_save_nested(args, model, optimizer, loader):
    # EasyAnimate's last save: the documented guard nested in a main-process
    # test.  The outer `if` keeps the other ranks out even under DeepSpeed.
    accelerator = Accelerator()
    model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
    for batch in loader:
        accelerator.backward(model(batch).mean())
        optimizer.step()
    accelerator.wait_for_everyone()
    if accelerator.is_main_process:
        if args.use_deepspeed or accelerator.is_main_process:
            accelerator.save_state(os.path.join(args.output_dir, "final"))
            # CHECK-MESSAGES: :[[@LINE-1]]:13: error: barrier 'accelerator.save_state() (DeepSpeed and FSDP: every rank)' runs only on ranks where 'accelerator.is_main_process' holds{{.*}} [ddp-divergent-collective]
    accelerator.end_training()


class Trainer:
    # CogVideo's finetune trainer: the Accelerator reaches its attribute through
    # a local name, and a private method saves under the documented guard.
    def __init__(self, args):
        self.args = args
        accelerator = Accelerator(gradient_accumulation_steps=2)
        self.accelerator = accelerator

    def prepare(self, model, opt, loader):
        self.model, self.opt, self.loader = self.accelerator.prepare(model, opt, loader)

    def train(self):
        global_step = 0
        for batch in self.loader:
            self.accelerator.backward(self.model(batch).mean())
            self.opt.step()
            global_step += 1
            self.__maybe_save_checkpoint(global_step)

    def __maybe_save_checkpoint(self, global_step):
        if (
            self.accelerator.distributed_type == DistributedType.DEEPSPEED
            or self.accelerator.is_main_process
        ):
            if global_step % self.args.checkpointing_steps == 0:
                self.accelerator.save_state("out/ckpt", safe_serialization=True)
                # CHECK-MESSAGES: :[[@LINE-1]]:17: warning: 'self.accelerator.save_state' writes files only on rank 0{{.*}} [ddp-rank0-io-barrier]
# CHECK-FIXES: {{^}}        self.accelerator.wait_for_everyone(){{$}}
