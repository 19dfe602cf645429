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


class VaeTrainer:
    # lucidrains' trainers (muse-maskgit-pytorch): `accelerator.save(obj,
    # path)` writes on the main process, here under the trainer's own
    # `is_main` property.  The wait before the block orders nothing after it:
    # the other ranks go on into the next step's all-reduce while it writes.
    def __init__(self, model, loader, results_folder, save_model_every):
        self.accelerator = Accelerator()
        self.model, self.loader = self.accelerator.prepare(model, loader)
        self.results_folder = results_folder
        self.save_model_every = save_model_every
        self.steps = 0

    @property
    def is_main(self):
        """Whether this is the main process."""
        return self.accelerator.is_main_process

    def train_step(self, batch):
        self.accelerator.backward(self.model(batch).mean())
        self.accelerator.wait_for_everyone()
        if self.is_main and not (self.steps % self.save_model_every):
            # CHECK-MESSAGES: :[[@LINE-1]]:9: warning: block runs only on rank 0 and writes files, with no barrier every rank reaches after it; {{.*}} [ddp-rank0-io-barrier]
            state_dict = self.accelerator.unwrap_model(self.model).state_dict()
            self.accelerator.save(state_dict, f"{self.results_folder}/vae.{self.steps}.pt")
# CHECK-FIXES: self.accelerator.save(state_dict, f"{self.results_folder}/vae.{self.steps}.pt")
# CHECK-FIXES: {{^}}        self.accelerator.wait_for_everyone(){{$}}
        self.steps += 1

    def train_step_every_rank(self, batch):
        # hard negative: every rank calls save; accelerate writes on the main one
        self.accelerator.backward(self.model(batch).mean())
        if not (self.steps % self.save_model_every):
            self.accelerator.save(self.model.state_dict(), f"{self.results_folder}/vae.pt")
        self.steps += 1

    def train_step_then_wait(self, batch):
        # hard negative: every rank waits after the main process's save
        self.accelerator.backward(self.model(batch).mean())
        if self.is_main:
            self.accelerator.save(self.model.state_dict(), f"{self.results_folder}/vae.pt")
        self.accelerator.wait_for_everyone()
        self.steps += 1

    def train(self):
        for batch in self.loader:
            self.train_step(batch)
            self.train_step_every_rank(batch)
            self.train_step_then_wait(batch)
