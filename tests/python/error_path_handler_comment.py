"""A comment that opens a handler (tree-sitter makes it the `except`
clause's child, before the block) names no exception: the verdict is the
same as without it.  The raise is caught by the try's own handler, which
swallows it: one report, at the handler.
"""
import torch


def skip_nonfinite_with_note(model, loader, optimizer, rank):
    noted_model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[rank])
    for x, y in loader:
        loss = torch.nn.functional.mse_loss(noted_model(x), y)
        try:
            if not torch.isfinite(loss):
                raise ValueError("loss is not finite")
            loss.backward()
            optimizer.step()
        except Exception as e:
            # skip this batch
            print(e)
        # CHECK-MESSAGES: :[[@LINE-3]]:9: warning: error-path exit: when an exception is caught on one rank, that rank goes on past collective 'backward (DDP gradient allreduce)' {{.*}} [ddp-error-path-exit]


def skip_nonfinite_bare_except(model, loader, optimizer, rank):
    bare_model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[rank])
    for x, y in loader:
        loss = torch.nn.functional.mse_loss(bare_model(x), y)
        try:
            if not torch.isfinite(loss):
                raise ValueError("loss is not finite")
            loss.backward()
            optimizer.step()
        except:  # noqa: E722
            print("skipped")
        # CHECK-MESSAGES: :[[@LINE-2]]:9: warning: error-path exit: when an exception is caught on one rank, that rank goes on past collective 'backward (DDP gradient allreduce)' {{.*}} [ddp-error-path-exit]


def skip_nonfinite_reraise_with_note(model, loader, optimizer, rank):
    # hard negative: the commented handler hands the exception on (torchrun
    # then stops every worker); the comment does not change that either.
    reraise_model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[rank])
    for x, y in loader:
        loss = torch.nn.functional.mse_loss(reraise_model(x), y)
        try:
            loss.backward()
            optimizer.step()
        except RuntimeError:
            # log, then hand it on
            print("step failed")
            raise
