"""The Hugging Face Trainer's checkpoint (vendored by LMFlow's raft_trainer
and ChatGLM's p-tuning trainer): `_save_checkpoint` calls save_model, whose
arms each write on rank 0, then writes the optimizer on rank 0, then copies
to the hub on rank 0, and the training step's all-reduce comes next.  One
barrier before that step orders every write: one finding, the other blocks
its notes.  Under DeepSpeed the engine's save_checkpoint, which every rank
calls and which synchronises, follows the weights (`self.deepspeed` is the
engine where the module speaks of DeepSpeed: its `--deepspeed` option here).
"""
import datetime
import os

import torch
import torch.distributed as dist


class Trainer:
    def __init__(self, args, model, optimizer):
        self.args = args
        self.model = model
        self.optimizer = optimizer
        self.deepspeed = None
        self.fsdp = None

    def save_model(self, output_dir):
        if self.fsdp:
            state = self.model.state_dict()
            if self.args.should_save:
                torch.save(state, os.path.join(output_dir, "pytorch_model.bin"))
        else:
            if self.args.should_save:
                torch.save(self.model.state_dict(), os.path.join(output_dir, "pytorch_model.bin"))

    def push(self, output_dir):
        if self.args.should_save:
            torch.save(self.args, os.path.join(output_dir, "hub_args.bin"))

    def _save_checkpoint(self, output_dir):
        self.save_model(output_dir)
        # CHECK-MESSAGES: :[[@LINE+1]]:9: warning: block runs only on rank 0 and writes files{{.*}} [ddp-rank0-io-barrier]
        if self.args.should_save:
            torch.save(self.optimizer.state_dict(), os.path.join(output_dir, "optimizer.pt"))
        self.push(output_dir)

    def _save_deepspeed(self, output_dir):  # hard negative: the engine synchronises
        if self.args.should_save:
            torch.save(self.model.state_dict(), os.path.join(output_dir, "ds_model.bin"))
        self.deepspeed.save_checkpoint(output_dir)

    def train(self, loader):
        dist.init_process_group("nccl", timeout=datetime.timedelta(minutes=30))
        self.model = torch.nn.parallel.DistributedDataParallel(self.model)
        for step, x in enumerate(loader):
            self.model(x).sum().backward()
            self.optimizer.step()
            if step % 500 == 0:
                self._save_checkpoint("out")

    def train_deepspeed(self, loader, engine):
        self.deepspeed = engine  # transformers' deepspeed_init(...) made it
        assert self.args.deepspeed_config, "--deepspeed"
        for step, x in enumerate(loader):
            loss = self.deepspeed(x).sum()
            self.deepspeed.backward(loss)
            dist.all_reduce(loss.detach())
            self.deepspeed.step()
            if step % 500 == 0:
                self._save_deepspeed("out")
