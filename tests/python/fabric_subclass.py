"""A Fabric (LightningLite) subclass: `self` is the Fabric object.

co-tracker's train_on_kubric.py subclasses LightningLite and calls
`self.setup(...)`, `self.barrier()` and `self.backward(loss)`; a sample that
failed on one rank makes that rank `continue` past them (issue 16, fresh25).
The same calls on a `fabric = Fabric(...)` object were reported; through
`self` they were not.
"""
import torch
from lightning.fabric import Fabric
from pytorch_lightning.lite import LightningLite


class Lite(LightningLite):
    def run(self, model, optimizer, loader):
        model, optimizer = self.setup(model, optimizer)
        loader = self.setup_dataloaders(loader)
        for batch in loader:
            batch, gotit = batch
            if not all(gotit):
                continue
            loss = model(batch).sum()
            # CHECK-MESSAGES: :[[@LINE+1]]:13: error: barrier 'self.barrier' is never reached by ranks where 'all(gotit)' does not hold {{.*}} [ddp-divergent-collective]
            self.barrier()
            self.backward(loss)
            optimizer.step()


class Trainer(Fabric):
    def fit(self, model, optimizer, loader, epochs):
        model, optimizer = self.setup(model, optimizer)
        for epoch in range(epochs):
            for step, batch in enumerate(loader):
                # Every rank skips the same steps: a decision on the step count.
                if step % 100 == 99:
                    continue
                loss = model(batch).sum()
                self.backward(loss)
                optimizer.step()
            self.barrier()
            if self.global_rank == 0:
                print(f"epoch {epoch} done")


class Plain:
    # Not a Fabric: its own barrier() and backward() are plain methods.
    def barrier(self):
        pass

    def backward(self, loss):
        loss.backward()

    def run(self, model, loader):
        for batch, gotit in loader:
            if not all(gotit):
                continue
            self.backward(model(batch).sum())
            self.barrier()


if __name__ == "__main__":
    Lite(strategy="ddp", devices=4, accelerator="gpu").run(None, None, None)
