"""A loss scaler called as `loss_scaler(loss, optimizer, parameters=...)`
runs backward: the DDP gradient allreduce.

timm's NativeScaler, and the copies MAE, DeiT, BEiT, ConvNeXt and
flow_matching keep as NativeScalerWithGradNormCount (held as `loss_scaler`
and handed to the training loop), run `self._scaler.scale(loss).backward()`
in `__call__`, then step the optimizer.  A rank that skips the call (a
non-finite loss, a bad batch) leaves the other ranks blocked inside it.
The class below is MAE's (util/misc.py), on CPU: the AMP scaler is off there
and `scale(loss)` is the loss itself.  Broken: only rank 0 calls the scaler;
fixed: both do.
"""
import sys
import warnings

from proof_harness import import_torch, run_proof

torch = import_torch()
from torch.nn.parallel import DistributedDataParallel as DDP  # noqa: E402


class NativeScalerWithGradNormCount:
    state_dict_key = "amp_scaler"

    def __init__(self):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # no CUDA: the scaler is off
            self._scaler = torch.cuda.amp.GradScaler(enabled=False)

    def __call__(self, loss, optimizer, clip_grad=None, parameters=None, create_graph=False,
                 update_grad=True):
        self._scaler.scale(loss).backward(create_graph=create_graph)
        if update_grad:
            self._scaler.unscale_(optimizer)
            self._scaler.step(optimizer)
            self._scaler.update()


def setup(rank):
    torch.manual_seed(0)
    ddp = DDP(torch.nn.Linear(4, 4))
    optimizer = torch.optim.SGD(ddp.parameters(), lr=0.1)
    loss = ddp(torch.randn(8, 4)).pow(2).mean()   # every rank runs the forward
    return ddp, optimizer, loss, NativeScalerWithGradNormCount()


def call(state, rank):
    ddp, optimizer, loss, loss_scaler = state
    loss_scaler(loss, optimizer, parameters=ddp.parameters())


if __name__ == "__main__":
    sys.exit(run_proof("implicit_loss_scaler", setup, call, caller=0))
