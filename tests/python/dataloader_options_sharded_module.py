"""A data module that starts nothing distributed itself but makes a
DistributedSampler (sam-hq's train/utils/dataloader.py, imported by the DDP
trainer): its loaders serve ranks, so the loader rules apply
(dataloader_options_single_process.py is the hard negative).
"""
from torch.utils.data import DataLoader, DistributedSampler


def create_loaders(dataset, batch_size):
    sampler = DistributedSampler(dataset)
    return DataLoader(dataset, batch_size=batch_size, sampler=sampler, num_workers=8)
    # CHECK-MESSAGES: :[[@LINE-1]]:12: warning: data loader 'DataLoader' with num_workers=8 does not pass persistent_workers=True, so its worker processes are shut down and started again every epoch; pass persistent_workers=True [ddp-dataloader-options]
