"""A data-preparation script that imports Lightning's helpers but not Lightning
(litgpt's extensions/xla/scripts/prepare_alpaca.py: `lightning_utilities` is
another package than `lightning`), and a test that only seeds with
`lightning.fabric.seed_everything` before saving a model for a subprocess
(litgpt's tests/test_serve.py): one process each, so a save on "every rank" is
one save.  No finding expected.
"""
import torch
from lightning.fabric import seed_everything
from lightning_utilities.core.imports import RequirementCache


def prepare(destination):
    if RequirementCache("datasets"):
        torch.save([1, 2, 3], destination + "/train.pt")


def test_serve(tmp_path):
    seed_everything(123)
    torch.save({"w": torch.zeros(1)}, tmp_path / "lit_model.pth")
