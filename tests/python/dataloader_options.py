"""ddp-dataloader-options: a DataLoader with worker processes (num_workers > 0, a
variable counts as > 0) that does not pass persistent_workers=True, or, in a
program that trains on CUDA, pin_memory=True.  One finding per DataLoader; the
fix-it adds persistent_workers=True.
"""
import os
from datetime import timedelta

import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler


def setup():
    dist.init_process_group(backend="gloo", timeout=timedelta(minutes=5))
    local_rank = int(os.environ["LOCAL_RANK"])
    device = torch.device("cuda", local_rank)  # this program trains on CUDA
    torch.cuda.set_device(device)
    return device


# ---- true positives ---------------------------------------------------------


def no_persistent_workers(train_ds):
    sampler = DistributedSampler(train_ds)
    # CHECK-MESSAGES: :[[@LINE+1]]:20: warning: persistent_workers [ddp-dataloader-options]
    train_loader = DataLoader(train_ds, batch_size=32, sampler=sampler, num_workers=4, pin_memory=True)
    # CHECK-FIXES: train_loader = DataLoader(train_ds, batch_size=32, sampler=sampler, num_workers=4, {{.*}}persistent_workers=True
    return train_loader


def no_pin_memory(val_ds, args):
    # CHECK-MESSAGES: :[[@LINE+1]]:18: warning: pin_memory [ddp-dataloader-options]
    val_loader = DataLoader(val_ds, batch_size=64, num_workers=args.workers, persistent_workers=True)
    return val_loader


def neither(test_ds):
    test_loader = DataLoader(test_ds, batch_size=64, num_workers=8)  # CHECK-MESSAGES: :[[@LINE]]:19: warning: {{.*}} [ddp-dataloader-options]
    # CHECK-FIXES: test_loader = DataLoader(test_ds, batch_size=64, num_workers=8{{.*}}persistent_workers=True
    return test_loader


def hf_style_multiline(train_dataset, collate_fn, args):
    # CHECK-MESSAGES: :[[@LINE+1]]:12: warning: persistent_workers [ddp-dataloader-options]
    return torch.utils.data.DataLoader(
        train_dataset,
        shuffle=True,
        collate_fn=collate_fn,
        batch_size=args.per_device_train_batch_size,
        num_workers=args.preprocessing_num_workers,
        pin_memory=True,
    )


# ---- hard negatives -----------------------------------------------------------


def main_process_loading(ds):
    a = DataLoader(ds, batch_size=32)  # no workers
    b = DataLoader(ds, batch_size=32, num_workers=0, pin_memory=True)
    return a, b


def both_options(train_ds):
    return DataLoader(train_ds, batch_size=32, num_workers=6, pin_memory=True,
                      persistent_workers=True, prefetch_factor=4)


def conditional_idioms(ds, num_workers):
    # persistent only when there are workers; pinning only when CUDA is there
    return DataLoader(ds, batch_size=16, num_workers=num_workers,
                      persistent_workers=num_workers > 0,
                      pin_memory=torch.cuda.is_available())


def main():
    device = setup()
    ds = torch.utils.data.TensorDataset(torch.randn(256, 8), torch.randn(256, 1))
    model = torch.nn.Linear(8, 1).to(device)
    for x, y in both_options(ds):
        model(x.to(device, non_blocking=True)).sum().backward()
    dist.destroy_process_group()


def options_in_a_dict(dataset, batch_size):
    # unicom's extract_feat: the options spelled out in a dict handed on with
    # `**kwargs`; it starts workers and pins nothing.
    kwargs = {"batch_size": batch_size, "num_workers": 4, "drop_last": False}
    return DataLoader(dataset, **kwargs)  # CHECK-MESSAGES: :[[@LINE]]:12: warning: data loader 'DataLoader' with num_workers=4 does not pass persistent_workers=True{{.*}} [ddp-dataloader-options]


def options_in_a_dict_complete(dataset, batch_size):
    # hard negative: the dict sets both
    kwargs = dict(batch_size=batch_size, num_workers=4, persistent_workers=True, pin_memory=True)
    return DataLoader(dataset, **kwargs)


def options_in_a_dict_no_workers(dataset, batch_size):
    # hard negative: no workers to keep
    kwargs = {"batch_size": batch_size, "num_workers": 0}
    return DataLoader(dataset, **kwargs)
