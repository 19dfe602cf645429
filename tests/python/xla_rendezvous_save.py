"""torch_xla's synchronisation in the Hugging Face Trainer's `_save_tpu`
(vendored by LMFlow and ChatGLM's p-tuning): the master ordinal writes, then
every ordinal meets at `xm.rendezvous(...)`; `save_pretrained(...,
save_function=xm.save)` is called by every ordinal and xm.save meets the
others after the master writes.  The same write without the rendezvous is
the missing barrier.
"""
import datetime
import os

import torch
import torch.distributed as dist
import torch_xla.core.xla_model as xm


class Trainer:
    def __init__(self, args, model):
        self.args = args
        self.model = model

    def _save_tpu(self, output_dir):
        if xm.is_master_ordinal():
            os.makedirs(output_dir, exist_ok=True)
            torch.save(self.args, os.path.join(output_dir, "training_args.bin"))
            # One master ordinal per host (is_master_ordinal's local=True):
            # CHECK-MESSAGES: :[[@LINE-2]]:13: error: 'torch.save' is guarded by the node-local rank{{.*}} [ddp-unguarded-save]
        xm.rendezvous("saving_checkpoint")
        self.model.save_pretrained(output_dir, is_main_process=self.args.should_save, save_function=xm.save)

    def _save_unsynced(self, output_dir):
        # CHECK-MESSAGES: :[[@LINE+1]]:9: warning: block runs only on each node's local rank 0 and writes files{{.*}} [ddp-rank0-io-barrier]
        if xm.is_master_ordinal():
            torch.save(self.model.state_dict(), os.path.join(output_dir, "weights.bin"))
            # CHECK-MESSAGES: :[[@LINE-1]]:13: error: 'torch.save' is guarded by the node-local rank{{.*}} [ddp-unguarded-save]

    def train(self, loader):
        dist.init_process_group("gloo", timeout=datetime.timedelta(minutes=30))
        self.model = torch.nn.parallel.DistributedDataParallel(self.model)
        for step, x in enumerate(loader):
            self.model(x).sum().backward()
            if step % 100 == 0:
                self._save_tpu("out")
                self._save_unsynced("out")
