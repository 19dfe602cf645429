"""A project's own pytest smoke tests (FastVideo's tests/train/methods): a
process group of one made by a fixture, and asserts that are the test's
verdict.  An assert in a test case is not a training job's health check; the
same assert in the training code it tests is."""
import os

import pytest
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

os.environ.setdefault("MASTER_ADDR", "localhost")
os.environ.setdefault("LOCAL_RANK", "0")


@pytest.fixture
def distributed_setup():
    dist.init_process_group("gloo", rank=int(os.environ.get("RANK", 0)),
                            world_size=int(os.environ.get("WORLD_SIZE", 1)), timeout=timedelta_30m())
    yield
    dist.destroy_process_group()


def timedelta_30m():
    import datetime
    return datetime.timedelta(minutes=30)


@pytest.mark.usefixtures("distributed_setup")
def test_single_train_step():
    model = DDP(torch.nn.Linear(4, 4))
    loss = model(torch.randn(2, 4)).sum()
    assert torch.isfinite(loss).item(), f"loss not finite: {loss.item()}"
    loss.backward()


def train_step(model, batch):
    loss = model(batch).sum()
    assert torch.isfinite(loss).item()
    loss.backward()  # CHECK-MESSAGES: :[[@LINE]]:5: error: collective 'backward (DDP gradient allreduce)' is never reached by ranks where 'torch.isfinite(loss).item()' does not hold{{.*}} [ddp-divergent-collective]


@pytest.mark.usefixtures("distributed_setup")
def test_save_to_tmp_path(tmp_path):
    # Hard negative (llm-foundry's tests): pytest makes `tmp_path` for each
    # test in each process, so each rank writes its own file.
    model = DDP(torch.nn.Linear(4, 4))
    torch.save(model.state_dict(), tmp_path / "model.pt")
    model.module.save_pretrained(str(tmp_path))


@pytest.mark.usefixtures("distributed_setup")
def test_save_to_shared_path(tmpdir):
    model = DDP(torch.nn.Linear(4, 4))
    torch.save(model.state_dict(), "/shared/model.pt")  # CHECK-MESSAGES: :[[@LINE]]:5: error: every rank runs 'torch.save' to the same path{{.*}} [ddp-unguarded-save]


def save_helper(model, tmp_path):
    # not a test: a parameter of that name is whatever its caller hands it
    torch.save(model.state_dict(), tmp_path)  # CHECK-MESSAGES: :[[@LINE]]:5: error: every rank runs 'torch.save' to the same path{{.*}} [ddp-unguarded-save]


def train_and_save(model, path):
    model(torch.randn(2, 4)).sum().backward()
    save_helper(model, path)
