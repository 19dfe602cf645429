"""The criteria of DETR's family loop over `outputs["aux_outputs"]`, one
entry per decoder layer: as many on every rank, whatever the values.  A loss
that gathers across ranks (ODISE's grounding loss) may run inside it.  A
loop over the outputs themselves (this rank's results, one per sample or
per object) is still read as this rank's count.
"""
import torch
import torch.distributed as dist
import torch.nn as nn


def concat_all_gather(t):
    out = [torch.zeros_like(t) for _ in range(dist.get_world_size())]
    dist.all_gather(out, t)
    return torch.cat(out)


class Criterion(nn.Module):
    def forward(self, outputs, targets):
        losses = {}
        losses.update(self.get_loss(outputs, targets))
        if "aux_outputs" in outputs:
            # hard negative: one entry per decoder layer
            for i, aux in enumerate(outputs["aux_outputs"]):
                l_dict = self.get_loss(aux, targets)
                losses.update({k + f"_{i}": v for k, v in l_dict.items()})
        return losses

    def get_loss(self, outputs, targets):
        emb = outputs["mask_embed"]
        sim = concat_all_gather(emb) @ emb.t()
        return {"loss": sim.mean()}


class PerTargetCriterion(nn.Module):
    def forward(self, outputs, targets):
        total = 0
        for t in outputs:
            total = total + concat_all_gather(t).sum()  # CHECK-MESSAGES: :[[@LINE]]:29: error: call to 'concat_all_gather', which runs collective 'all_gather', runs in a loop whose trip count depends on 'outputs'{{.*}} [ddp-divergent-collective]
        return total
