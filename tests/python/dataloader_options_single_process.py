"""Hard negative for ddp-dataloader-options and ddp-dataloader-recreated: a
trainer that never runs distributed (Marigold's: one process, no process
group, no DDP, no launcher) has no ranks to keep in step.  The same loaders
in a distributed program are reported (dataloader_options.py).
"""
import torch
from torch.utils.data import DataLoader


def train(model, dataset, optimizer, epochs):
    loader = DataLoader(dataset, batch_size=8, shuffle=True, num_workers=4)
    for epoch in range(epochs):
        for x, y in loader:
            loss = torch.nn.functional.mse_loss(model(x.cuda()), y.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        val = DataLoader(dataset, batch_size=8, num_workers=2)
        for x, y in val:
            model(x.cuda())
