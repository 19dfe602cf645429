"""LoftQ's glue/run_glue.py: a copy of the Accelerate example whose
`accelerator.prepare(...)` and `accelerator.backward(...)` lines are all
commented out.  It runs in one process, so the checkpoint every "rank" writes
is the one process's (hard negative for ddp-unguarded-save).
"""
import torch
from torch.utils.data import DataLoader


def main(args, model, dataset):
    # accelerator = Accelerator()
    # model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
    loader = DataLoader(dataset, batch_size=8)
    optimizer = torch.optim.AdamW(model.parameters())
    for epoch in range(3):
        for batch in loader:
            loss = model(**batch).loss
            # accelerator.backward(loss)
            loss.backward()
            optimizer.step()
        torch.save(model.state_dict(), args.output_dir + f"/{epoch}.bin")
