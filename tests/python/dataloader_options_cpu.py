"""ddp-dataloader-options on a CPU-only (Gloo) program: pin_memory is not asked
for, persistent_workers still is."""
from datetime import timedelta

import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler


def main():
    dist.init_process_group(backend="gloo", timeout=timedelta(minutes=5))
    ds = torch.utils.data.TensorDataset(torch.randn(512, 16), torch.randint(0, 2, (512,)))
    sampler = DistributedSampler(ds)
    good = DataLoader(ds, batch_size=32, sampler=sampler, num_workers=2, persistent_workers=True)
    # CHECK-MESSAGES: :[[@LINE+1]]:11: warning: persistent_workers [ddp-dataloader-options]
    bad = DataLoader(ds, batch_size=32, sampler=sampler, num_workers=2)
    model = torch.nn.Linear(16, 2)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(2):
        sampler.set_epoch(epoch)
        for x, y in good:
            opt.zero_grad()
            torch.nn.functional.cross_entropy(model(x), y).backward()
            for p in model.parameters():
                dist.all_reduce(p.grad)
            opt.step()
        with torch.no_grad():
            errors = sum((model(x).argmax(-1) != y).sum().item() for x, y in bad)
        print(f"epoch {epoch}: {errors} local errors")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
