"""A library writer nothing calls, named in another function's docstring.

icefall's utils.py defines a writer of alignments (a
torch.save to the path it is handed) and `load_alignments`, whose docstring
says the file "should be saved by :func:`save_alignments`".  Nothing calls
the writer: whoever does chooses its ranks.  A mention in prose is not a use
(before, it made the writer read as called here, on every rank).
"""
import torch
import torch.distributed as dist


def get_rank():
    return dist.get_rank() if dist.is_initialized() else 0


def save_alignments(alignments, filename):
    torch.save({"alignments": alignments}, filename)


def load_alignments(filename):
    """The file should be saved by :func:`save_alignments`."""
    return torch.load(filename)["alignments"]


def save_everywhere(model):
    # still reported: every rank that runs this writes the same file
    torch.save(model.state_dict(), "model.pt")
    # CHECK-MESSAGES: :[[@LINE-1]]:5: error: every rank runs 'torch.save' to the same path{{.*}} [ddp-unguarded-save]


def train(model, loader):
    for x in loader:
        model(x).sum().backward()
    save_everywhere(model)


# NVAE's utils.py: `def save(model, model_path)` beside functions whose
# parameter is called `save` (a folder) and calls of `torch.save`: neither
# names the module's own `save`, which nothing calls (hard negative).
def save(model, model_path):
    torch.save(model.state_dict(), model_path)


def save_checkpoint(state, save):
    print(save)
