"""Lightning 1.x hands `validation_epoch_end(self, outputs)` one entry per
validation step, or one list per validation loader: as many on every rank
as there are batches (a DistributedSampler deals them alike).  LoFTR loops
over the loaders' lists and gathers each.  A list this rank filters from
them is this rank's own.
"""
import pytorch_lightning as pl
import torch.distributed as dist


def all_gather(data):
    out = [None] * dist.get_world_size()
    dist.all_gather_object(out, data)
    return out


class Module(pl.LightningModule):
    def validation_epoch_end(self, outputs):
        # hard negative: one pass per validation loader
        multi_outputs = [outputs] if not isinstance(outputs[0], (list, tuple)) else outputs
        for valset_idx, outputs in enumerate(multi_outputs):
            losses = [o["loss"] for o in outputs]
            gathered = all_gather(losses)
            if self.trainer.global_rank == 0:
                print(valset_idx, gathered)

    def test_epoch_end(self, outputs):
        failed = [o for o in outputs if o["loss"] > 10]
        for o in failed:
            all_gather(o)  # CHECK-MESSAGES: :[[@LINE]]:13: error: call to 'all_gather', which runs collective 'all_gather_object', runs in a loop whose trip count depends on 'failed'{{.*}} [ddp-divergent-collective]
