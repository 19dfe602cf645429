"""`raise SystemExit` inside a try whose handler is `except Exception`: a
SystemExit is no Exception, so the handler does not catch it and the rank
leaves before the backward's all-reduce.  The try holds no comment: the
annotations come after it (a comment in the try once changed the verdict).
"""
import torch
import torch.distributed as dist


def stop_on_nonfinite_loss(model, loader, optimizer, rank):
    nonfinite_model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[rank])
    for x, y in loader:
        loss = torch.nn.functional.mse_loss(nonfinite_model(x), y)
        try:
            if not torch.isfinite(loss):
                raise SystemExit("loss is not finite")
            loss.backward()
            optimizer.step()
        except Exception as e:
            print(e)
        # CHECK-MESSAGES: :[[@LINE-4]]:13: error: collective 'backward (DDP gradient allreduce)' is skipped by ranks where 'torch.isfinite(loss)' does not hold (a rank-local value): they throw while the other ranks run it; {{.*}} [ddp-divergent-collective]
        # The handler still swallows what backward itself raises:
        # CHECK-MESSAGES: :[[@LINE-4]]:9: warning: error-path exit: when an exception is caught on one rank, that rank goes on past collective 'backward (DDP gradient allreduce)' {{.*}} [ddp-error-path-exit]


def stop_on_uniform_setting(model, loader, optimizer, rank, max_steps):
    # hard negative: the same SystemExit on a setting every rank reads alike:
    # every rank leaves at the same step.
    capped_model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[rank])
    for step, (x, y) in enumerate(loader):
        loss = torch.nn.functional.mse_loss(capped_model(x), y)
        try:
            if step >= max_steps:
                raise SystemExit("step budget reached")
            loss.backward()
            optimizer.step()
        except KeyboardInterrupt:
            print("interrupted")
