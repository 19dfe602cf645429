"""ddp-rank0-io-barrier fix-its in framework code wait the framework's way.

A block guarded by Accelerate's, Fabric's or a Lightning trainer's own
main-process test gets that framework's barrier: it works with one process,
where no torch.distributed group exists (`dist.barrier()` would raise there).
"""
import torch
import torch.distributed as dist


class Trainer:
    def __init__(self, accelerator, model, loader, optimizer):
        self.accelerator = accelerator
        self.model, self.loader, self.optimizer = accelerator.prepare(model, loader, optimizer)

    def train(self, epochs):
        for epoch in range(epochs):
            for batch in self.loader:
                loss = self.model(batch).sum()
                self.accelerator.backward(loss)
                self.optimizer.step()
            if self.accelerator.is_main_process:  # CHECK-MESSAGES: :[[@LINE]]:13: warning: {{.*}} no barrier every rank reaches after it; {{.*}} [ddp-rank0-io-barrier]
                torch.save(self.accelerator.unwrap_model(self.model).state_dict(), f"ckpt-{epoch}.pt")


# CHECK-FIXES: torch.save(self.accelerator.unwrap_model(self.model).state_dict(), f"ckpt-{epoch}.pt")
# CHECK-FIXES: {{^}}            self.accelerator.wait_for_everyone(){{$}}


def fabric_loop(fabric, model, loader, optimizer, epochs):
    model, optimizer = fabric.setup(model, optimizer)
    for epoch in range(epochs):
        for batch in loader:
            loss = model(batch).sum()
            fabric.backward(loss)
            optimizer.step()
        if fabric.is_global_zero:  # CHECK-MESSAGES: :[[@LINE]]:9: warning: {{.*}} no barrier every rank reaches after it; {{.*}} [ddp-rank0-io-barrier]
            torch.save(model.state_dict(), f"fabric-{epoch}.pt")


# CHECK-FIXES: torch.save(model.state_dict(), f"fabric-{epoch}.pt")
# CHECK-FIXES: {{^}}        fabric.barrier(){{$}}


def plain_rank_test(model, loader, optimizer, epochs):
    # Hard negative: a plain rank test in the same file is no framework's, so
    # its barrier is torch.distributed's, only when a group exists (this
    # module makes none itself).
    model = torch.nn.parallel.DistributedDataParallel(model)
    for epoch in range(epochs):
        for batch in loader:
            model(batch).sum().backward()
            optimizer.step()
        if dist.get_rank() == 0:  # CHECK-MESSAGES: :[[@LINE]]:9: warning: {{.*}} no barrier every rank reaches after it; {{.*}} [ddp-rank0-io-barrier]
            torch.save(model.state_dict(), f"plain-{epoch}.pt")


# CHECK-FIXES: torch.save(model.state_dict(), f"plain-{epoch}.pt")
# CHECK-FIXES: {{^}}        if dist.is_initialized():{{$}}
# CHECK-FIXES: {{^}}            dist.barrier(){{$}}
