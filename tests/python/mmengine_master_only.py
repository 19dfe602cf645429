"""mmengine's @master_only (mmengine/dist/utils.py) runs the method on rank 0
alone: Runner.save_checkpoint writes the checkpoint through it
(mmengine/runner/runner.py).  A save inside it is rank 0's; the same save
without the decorator is every rank's."""
import torch
from mmengine.dist import init_dist, master_only


class Runner:
    def __init__(self, model):
        init_dist("pytorch")
        self.model = model

    @master_only
    def save_checkpoint(self, out_dir):
        # hard negative: rank 0 only
        torch.save(self.model.state_dict(), out_dir + "/epoch.pth")

    def save_everywhere(self, out_dir):
        torch.save(self.model.state_dict(), out_dir + "/latest.pth")
        # CHECK-MESSAGES: :[[@LINE-1]]:9: error: every rank runs 'torch.save' to the same path, {{.*}} [ddp-unguarded-save]
