"""ddp-dataloader-recreated: a DataLoader built inside the epoch loop when its
dataset does not depend on the loop variable (every epoch re-forks the workers).

Severity `note` (rules/catalog.yaml); reported at the DataLoader call, or at the
call of a helper that builds one.
"""
import copy
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler, Subset
from torch.utils.data import DataLoader as TorchLoader


def make_train_loader(dataset, batch_size):
    sampler = DistributedSampler(dataset, shuffle=True)
    return DataLoader(dataset, batch_size=batch_size, sampler=sampler)


# ---- true positives ---------------------------------------------------------


def train_rebuilds_loader(model, train_ds, optimizer, epochs, batch_size):
    sampler = DistributedSampler(train_ds)
    for epoch in range(epochs):
        sampler.set_epoch(epoch)
        # CHECK-MESSAGES: :[[@LINE+1]]:18: note: loop [ddp-dataloader-recreated]
        loader = DataLoader(train_ds, batch_size=batch_size, sampler=sampler, drop_last=True)
        for x, y in loader:
            optimizer.zero_grad()
            model(x).sub(y).pow(2).mean().backward()
            optimizer.step()


def eval_rebuilds_qualified(model, val_ds, max_steps):
    step = 0
    while step < max_steps:
        # CHECK-MESSAGES: :[[@LINE+1]]:22: note: loop [ddp-dataloader-recreated]
        val_loader = torch.utils.data.DataLoader(val_ds, batch_size=64, shuffle=False)
        for x, _ in val_loader:
            model(x)
            step += 1


def train_with_helper(model, train_ds, optimizer, epochs):
    for epoch in range(epochs):
        for x, y in make_train_loader(train_ds, 32):  # CHECK-MESSAGES: :[[@LINE]]:21: note: loop [ddp-dataloader-recreated]
            optimizer.zero_grad()
            model(x).sub(y).pow(2).mean().backward()
            optimizer.step()


def evaluate(model, val_ds):
    loader = DataLoader(val_ds, batch_size=64)
    return sum(model(x).argmax(1).eq(y).sum().item() for x, y in loader)


def accuracy_history(model, val_ds, epochs):
    # The helper's result kept in a list is an accuracy: the loader inside it
    # is still built every epoch.
    accs = []
    for epoch in range(epochs):
        acc = evaluate(model, val_ds)  # CHECK-MESSAGES: :[[@LINE]]:15: note: loop [ddp-dataloader-recreated]
        accs.append(acc)
    return accs


def aliased_loader(train_ds, epochs, step_fn):
    for _ in range(epochs):
        # CHECK-MESSAGES: :[[@LINE+1]]:22: note: loop [ddp-dataloader-recreated]
        for batch in TorchLoader(train_ds, batch_size=16):
            step_fn(batch)


# ---- hard negatives -----------------------------------------------------------


def train_builds_once(model, train_ds, optimizer, epochs):
    sampler = DistributedSampler(train_ds)
    loader = DataLoader(train_ds, batch_size=32, sampler=sampler)
    for epoch in range(epochs):
        sampler.set_epoch(epoch)
        for x, y in loader:
            optimizer.zero_grad()
            model(x).sub(y).pow(2).mean().backward()
            optimizer.step()


def curriculum_stages(model, stage_datasets, step_fn):
    # One loader per stage: the dataset is the loop variable.
    for stage_ds in stage_datasets:
        loader = DataLoader(stage_ds, batch_size=32, sampler=DistributedSampler(stage_ds))
        for batch in loader:
            step_fn(model, batch)


def per_epoch_subset(full_ds, epochs, step_fn, subset_size):
    # The dataset changes every epoch (a fresh random subset).
    for epoch in range(epochs):
        g = torch.Generator().manual_seed(epoch)
        idx = torch.randperm(len(full_ds), generator=g)[:subset_size].tolist()
        loader = DataLoader(Subset(full_ds, idx), batch_size=32)
        for batch in loader:
            step_fn(batch)


def loaders_per_task(task_datasets):
    loaders = []
    for i in range(len(task_datasets)):
        loaders.append(DataLoader(task_datasets[i], batch_size=8))
    return loaders


def bootstrap_loaders(cfg, model):
    # DensePose's build_inference_based_loaders: one loader per configured
    # dataset, built by a helper and kept in a list (not rebuilt each pass).
    loaders = []
    for dataset_spec in cfg.BOOTSTRAP_DATASETS:
        dataset_cfg = cfg.clone()
        dataset_cfg.merge_from_other_cfg(dataset_spec)
        loader = make_train_loader(dataset_cfg.DATASET, 8)
        loaders.append(loader)
    return loaders


def loaders_per_split(splits):
    return {name: DataLoader(ds, batch_size=64) for name, ds in splits.items()}


def factory_defined_in_loop(datasets, epochs):
    makers = []
    for epoch in range(epochs):
        def make(ds=datasets[0]):
            return DataLoader(ds, batch_size=4)
        makers.append(make)
    return makers


def helper_called_once(model, train_ds, epochs, step_fn):
    loader = make_train_loader(train_ds, 32)
    for epoch in range(epochs):
        loader.sampler.set_epoch(epoch)
        for batch in loader:
            step_fn(model, batch)
    dist.barrier()


def run_linear_eval(args):
    loader = DataLoader(args.dataset, batch_size=64, num_workers=args.workers, persistent_workers=True)
    for epoch in range(args.epochs):
        for batch in loader:
            pass


def evaluate_each_checkpoint(args):
    # Hard negative: ibot's eval scripts run one whole evaluation per
    # checkpoint key, handing each its own copy of the settings; the loop
    # is over inputs, not epochs.
    for checkpoint_key in args.checkpoint_key.split(","):
        args_copy = copy.deepcopy(args)
        args_copy.checkpoint_key = checkpoint_key
        run_linear_eval(args_copy)


def evaluate_same_settings_repeatedly(args, repeats):
    # The same settings object every pass: the loader is built again for
    # nothing (the loop's variable reaches the call through no argument).
    for _ in range(repeats):
        args.seed = 0
        run_linear_eval(args)  # CHECK-MESSAGES: :[[@LINE]]:9: warning: 'run_linear_eval' builds a data loader{{.*}} [ddp-dataloader-recreated]


def evaluate_best_checkpoint(args):
    # Hard negative (CodeT5's `for criteria in ['best-f1']`): a loop over a
    # written list of one element runs once, and builds one loader.
    for criteria in ["best-f1"]:
        print("reload model from", criteria)
        run_linear_eval(args)


def evaluate_halving_the_batch(model, val_ds, batch_size, validate):
    # Hard negative (VMamba's analyze/eval.py): a retry loop whose body ends in
    # `break` builds the loader again only after an out-of-memory failure.
    while batch_size > 0:
        try:
            loader = DataLoader(val_ds, batch_size=batch_size, num_workers=4, persistent_workers=True)
            validate(model, loader)
            break
        except RuntimeError:
            batch_size = batch_size // 2


def evaluate_until_break_on_a_condition(model, val_ds, batch_size, validate):
    # Only the last statement counts: a `break` under a condition leaves the
    # loader built on every pass that goes on.
    for _ in range(10):
        loader = DataLoader(val_ds, batch_size=batch_size, num_workers=4, persistent_workers=True)  # CHECK-MESSAGES: :[[@LINE]]:18: warning: data loader built by 'DataLoader' inside a loop{{.*}} [ddp-dataloader-recreated]
        if validate(model, loader):
            break


def extract_features(model, dataset, batch_size, num_workers):
    # unicom's extract_feat: the options in a dict handed on with `**kwargs`.
    kwargs = {"batch_size": batch_size, "num_workers": num_workers, "drop_last": False}
    kwargs["pin_memory"] = True
    loader = DataLoader(dataset, **kwargs, persistent_workers=True)
    return [model(x) for x, _ in loader]


def extract_features_inline(model, dataset, batch_size):
    kwargs = dict(batch_size=batch_size, num_workers=0)
    loader = DataLoader(dataset, **kwargs)
    return [model(x) for x, _ in loader]


def evaluate_every_epoch_with_workers(model, val_ds, epochs, num_workers):
    # The splatted dict says the loader has workers: a warning, and no claim
    # that it has none.
    for epoch in range(epochs):
        extract_features(model, val_ds, 64, num_workers)  # CHECK-MESSAGES: :[[@LINE]]:9: warning: 'extract_features' builds a data loader (via 'DataLoader') and is called inside a loop; its worker processes are started and joined every epoch{{.*}} [ddp-dataloader-recreated]
        extract_features_inline(model, val_ds, 64)  # CHECK-MESSAGES: :[[@LINE]]:9: note: 'extract_features_inline' builds a data loader (via 'DataLoader') and is called inside a loop; it has no worker processes{{.*}} [ddp-dataloader-recreated]
