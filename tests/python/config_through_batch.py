"""A setting reached through a rank's data (ai-toolkit's
`batch.file_items[0].dataset_config.guidance_type`): the dataset's
configuration, shared by the ranks, decides the same way on each of them.
A value of the samples themselves still differs across ranks.
"""
import datetime

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def guided_loss(model, batch):
    loss = model(batch.latents).mean()
    loss.backward()
    return loss.detach()


def train(loader):
    dist.init_process_group("nccl", timeout=datetime.timedelta(minutes=30))
    model = DDP(torch.nn.Linear(4, 4))
    for batch in loader:
        # Hard negative: the guidance type is the dataset's setting.
        guidance_type = batch.file_items[0].dataset_config.guidance_type
        if guidance_type == "direct":
            guided_loss(model, batch)
        elif guidance_type == "polarity":
            dist.all_reduce(batch.latents)
        # A sample's own field is this rank's.
        if batch.file_items[0].is_reg:
            dist.all_reduce(batch.latents)
            # CHECK-MESSAGES: :[[@LINE-1]]:13: error: collective 'all_reduce' runs only on ranks where 'batch.file_items[0].is_reg' holds (a rank-local value){{.*}} [ddp-divergent-collective]


@torch.no_grad()
def evaluate(model, loader, meters):
    for data in loader:
        task_type = data["task_info"]["task_type"]
        meters.update(model(data))
    # Hard negative (Uni-Perceiver's tester): a sample's field naming its
    # task, tested against names the code wrote, is the datasets' setting.
    if task_type in ["image_classification", "video_classification"]:
        dist.barrier()
    if data.get("split") != "val":
        dist.barrier()
    # A sample's own value, or a name the code did not write, is this rank's.
    if data["label"] == 3:
        dist.barrier()
        # CHECK-MESSAGES: :[[@LINE-1]]:9: error: barrier runs only on ranks where `data["label"] == 3` holds (a rank-local value){{.*}} [ddp-divergent-collective]
    if task_type == data["other_task"]:
        dist.barrier()
        # CHECK-MESSAGES: :[[@LINE-1]]:9: error: barrier runs only on ranks where `task_type == data["other_task"]` holds (a rank-local value){{.*}} [ddp-divergent-collective]
