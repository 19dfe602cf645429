"""ddp-unguarded-save: every rank writes one checkpoint path.

A save guarded by the LOCAL rank runs once per node: on shared storage every
node writes the same file, so it is flagged even between barriers.
"""
import datetime
import io
import os
import pickle
import uuid
from pathlib import Path

import torch
import torch.distributed as dist
import torch.distributed.checkpoint as dcp
import torch.multiprocessing as mp
from accelerate import Accelerator


# ---- true positives ---------------------------------------------------------


def save_every_rank(model, optimizer, epoch):
    state = {"model": model.state_dict(), "optimizer": optimizer.state_dict(), "epoch": epoch}
    torch.save(state, "checkpoint.pt")  # CHECK-MESSAGES: :[[@LINE]]:5: error: same path [ddp-unguarded-save]
    dist.barrier()


def save_epoch_file(args, model, epoch):
    path = os.path.join(args.output_dir, f"epoch_{epoch:03d}.pt")  # epoch is the same on every rank
    # CHECK-MESSAGES: :[[@LINE+1]]:5: error: same path [ddp-unguarded-save]
    torch.save(model.state_dict(), path)
    dist.barrier()


def save_on_schedule(args, model, epoch):
    if epoch % args.save_every == 0:  # a uniform condition guards nothing
        # CHECK-MESSAGES: :[[@LINE+1]]:9: error: same path [ddp-unguarded-save]
        torch.save(model.module.state_dict(), Path(args.output_dir) / "last.pt")
    dist.barrier()


def save_on_local_main_between_barriers(model, args):
    dist.barrier()
    if args.local_rank == 0:  # one writer per node, same path on every node
        # CHECK-MESSAGES: :[[@LINE+1]]:9: error: {{.*}} [ddp-unguarded-save]
        torch.save(model.state_dict(), "/mnt/shared/run42/model.pt")
    dist.barrier()


def save_on_local_rank_env(model, ckpt_dir):
    dist.barrier()
    if int(os.environ["LOCAL_RANK"]) == 0:
        # CHECK-MESSAGES: :[[@LINE+1]]:9: error: {{.*}} [ddp-unguarded-save]
        torch.save({"model": model.state_dict()}, os.path.join(ckpt_dir, "model.pt"))
    dist.barrier()


def save_on_local_main_process(accelerator, model, output_dir):
    accelerator.wait_for_everyone()
    if accelerator.is_local_main_process:
        unwrapped = accelerator.unwrap_model(model)
        # CHECK-MESSAGES: :[[@LINE+1]]:9: error: {{.*}} [ddp-unguarded-save]
        torch.save(unwrapped.state_dict(), os.path.join(output_dir, "pytorch_model.bin"))
    accelerator.wait_for_everyone()


def export_torchscript(model, example):
    scripted = torch.jit.trace(model.module, example)
    torch.jit.save(scripted, "model_scripted.pt")  # CHECK-MESSAGES: :[[@LINE]]:5: error: same path [ddp-unguarded-save]
    dist.barrier()


def write_ckpt(obj, path):
    # CHECK-MESSAGES: :[[@LINE+1]]:5: error: same path [ddp-unguarded-save]
    torch.save(obj, path)


def train_loop_calls_helper_unguarded(model, batches, optimizer, args):
    for epoch in range(args.epochs):
        for x, y in batches:
            optimizer.zero_grad()
            model(x).sub(y).pow(2).mean().backward()
            optimizer.step()
        write_ckpt(model.state_dict(), os.path.join(args.output_dir, "latest.pt"))
        dist.barrier()


def lora_rank_in_the_path(args, lora_state):
    # The LoRA rank makes the name look rank-specific; it is the same on every process.
    path = f"{args.output_dir}/adapter_r{args.lora_rank}.pt"
    torch.save(lora_state, path)  # CHECK-MESSAGES: :[[@LINE]]:5: error: same path [ddp-unguarded-save]
    dist.barrier()


# ---- hard negatives -----------------------------------------------------------


def save_on_rank0_between_barriers(model, path):
    dist.barrier()
    if dist.get_rank() == 0:
        torch.save(model.state_dict(), path)
    dist.barrier()


def save_per_rank_shard(model, ckpt_dir):
    rank = dist.get_rank()
    torch.save(model.state_dict(), os.path.join(ckpt_dir, f"shard_rank{rank:05d}.pt"))
    dist.barrier()


def save_per_rank_optimizer_state(optimizer, args):
    out_dir = os.path.join(args.output_dir, f"rank_{dist.get_rank()}")
    os.makedirs(out_dir, exist_ok=True)
    torch.save(optimizer.state_dict(), os.path.join(out_dir, "optim.pt"))
    dist.barrier()


def save_after_early_return(model, path):
    if dist.get_rank() != 0:
        return
    torch.save(model.state_dict(), path)


def finalize(model, path, t):
    dist.all_reduce(t)
    dist.barrier()
    save_after_early_return(model, path)
    dist.barrier()


def save_to_memory(model):
    buf = io.BytesIO()
    torch.save(model.state_dict(), buf)  # a buffer, no file
    payload = [buf.getvalue()]
    dist.broadcast_object_list(payload, src=0)
    return payload[0]


def accelerate_save(accelerator: Accelerator, model, output_dir):
    # accelerator.save writes on the main process only; save_state is collective.
    accelerator.wait_for_everyone()
    unwrapped = accelerator.unwrap_model(model)
    accelerator.save(unwrapped.state_dict(), os.path.join(output_dir, "model.bin"))
    accelerator.save_state(os.path.join(output_dir, "state"))
    unwrapped.save_pretrained(
        output_dir, is_main_process=accelerator.is_main_process, save_function=accelerator.save)


def sharded_dcp_save(model, optimizer, step):
    # torch.distributed.checkpoint is collective and writes one file per rank.
    state = {"model": model.state_dict(), "optim": optimizer.state_dict()}
    dcp.save(state, checkpoint_id=f"checkpoints/step_{step}")


def save_on_main_helper_guarded(model, args):
    dist.barrier()
    if dist.get_rank() == 0:
        write_ckpt(model.state_dict(), os.path.join(args.output_dir, "best.pt"))
    dist.barrier()


# The usual guard of code that also runs in one process: in the distributed
# run the process group is up, so it is the rank-0 test.
def save_unless_initialized(model, path):
    if not dist.is_initialized() or dist.get_rank() == 0:
        torch.save(model.state_dict(), path)
    if dist.is_initialized():
        dist.barrier()


def is_dist_avail_and_initialized():
    if not dist.is_available():
        return False
    if not dist.is_initialized():
        return False
    return True


def save_unless_helper_initialized(model, path):
    if not is_dist_avail_and_initialized() or dist.get_rank() == 0:
        torch.save(model.state_dict(), path)
    if is_dist_avail_and_initialized():
        dist.barrier()


def rankstr():
    return f"rank_{dist.get_rank()}"


def save_sharded(model, save_dir, name):
    # dinov2's FSDPCheckpointer: a helper names the file after the rank.
    basename = f"{name}.{rankstr()}.pth"
    with open(os.path.join(save_dir, basename), "wb") as f:
        torch.save(model.state_dict(), f)
    dist.barrier()


def dump_params(params):
    # swav's initialize_exp: every rank pickles the run's parameters to one file.
    import pickle
    pickle.dump(params, open(os.path.join(params.dump_path, "params.pkl"), "wb"))  # CHECK-MESSAGES: :[[@LINE]]:5: error: same path [ddp-unguarded-save]
    dist.barrier()


def dump_params_on_main(params):
    import pickle
    if dist.get_rank() == 0:
        with open(os.path.join(params.dump_path, "params.pkl"), "wb") as f:
            pickle.dump(params, f)
    dist.barrier()


def save_main_proc(cfg, model, t):
    # pycls's is_main_proc(): `cfg.NUM_GPUS == 1` is the one-process run (a
    # world size, in capitals); in a distributed run rank 0 alone saves.
    dist.all_reduce(t)
    if cfg.NUM_GPUS == 1 or dist.get_rank() == 0:
        torch.save(model.state_dict(), "model.pt")
    dist.barrier()


def is_main_proc(cfg, local=False):
    # pycls again: the divisor is the per-node count when asked for the node's
    # main process, the world size otherwise; `rank % world_size` is the rank.
    m = cfg.MAX_GPUS_PER_NODE if local else cfg.NUM_GPUS
    return cfg.NUM_GPUS == 1 or dist.get_rank() % m == 0


def save_on_main_proc(cfg, model, t):
    dist.all_reduce(t)
    if is_main_proc(cfg):
        torch.save(model.state_dict(), "model.pt")
    dist.barrier()


def save_on_rank_modulo_world(model, t):
    dist.all_reduce(t)
    if dist.get_rank() % dist.get_world_size() == 0:
        torch.save(model.state_dict(), "model.pt")
    dist.barrier()


def save_per_node_of_eight_rank_named(model, logdir):
    # Hard negative: each node's writer names its own file by its rank.
    rank = dist.get_rank()
    if rank % 8 == 0:
        torch.save(model.state_dict(), f"{logdir}/node{rank // 8}_latest.pth.tar")
    dist.barrier()


def save_on_rank_modulo_gpus_per_node(model, args, t):
    # One process per node of ngpus_per_node: the node's first rank.
    dist.all_reduce(t)
    if args.rank % args.ngpus_per_node == 0:
        # CHECK-MESSAGES: :[[@LINE+1]]:9: error: {{.*}}node-local rank{{.*}} [ddp-unguarded-save]
        torch.save(model.state_dict(), "/mnt/shared/model.pt")
    dist.barrier()


def save_to_backend(checkpoint, filename, backend):
    # mmengine's save_checkpoint: hard negatives, a temporary folder is this
    # process's own and a buffer is memory; the backend's put is not a torch.save
    import tempfile
    with tempfile.TemporaryDirectory() as tmp_dir:
        with open(os.path.join(tmp_dir, "model.pth"), "wb") as f:
            torch.save(checkpoint, f)
    with io.BytesIO() as f:
        torch.save(checkpoint, f)
        backend.put(f.getvalue(), filename)
    torch.save(checkpoint, filename)
    # CHECK-MESSAGES: :[[@LINE-1]]:5: error: every rank runs 'torch.save' to the same path, {{.*}} [ddp-unguarded-save]


def save_on_every_rank(checkpoint, backend):
    # Its caller: every rank hands it the same name.  (Uncalled, the writer
    # would be an API whose callers decide: uncalled_checkpoint_api.py.)
    save_to_backend(checkpoint, "ckpt.pth", backend)


class CheckpointConverter:
    """VISSL's converters, a hard negative: class methods that call each
    other through `cls`, and a static method called through the class's name.
    Their only caller runs on rank 0, between barriers, so neither write races
    (both were reported while such calls were not followed)."""

    @classmethod
    def convert(cls, src, dst):
        cls._write_slices(torch.load(src), dst)
        SliceWriter.write(dst + ".index")

    @classmethod
    def _write_slices(cls, state, dst):
        torch.save(state, dst)


class SliceWriter:
    @staticmethod
    def write(path):
        torch.save({}, path)


def convert_on_rank_zero(src, dst):
    dist.barrier()
    if dist.get_rank() == 0:
        CheckpointConverter.convert(src, dst)
    dist.barrier()



def _spawned_worker(rank, world_size):
    dist.init_process_group("gloo", rank=rank, world_size=world_size, timeout=datetime.timedelta(minutes=30))
    dist.barrier()


def spawn_then_merge(parts):
    # A hard negative: the launcher's process starts the ranks, waits for
    # them, and then writes in its one process.
    mp.spawn(_spawned_worker, args=(2,), nprocs=2)
    torch.save(parts, "merged.pt")


class TensorProbe:
    # A hard negative: lingua's probe keeps its tensors in a folder named by
    # uuid4 in another method: every process has its own.
    def setup(self, out_dir):
        self.tmpdir = Path(out_dir) / f"probe-{str(uuid.uuid4())[:8]}"
        self.tmpdir.mkdir(exist_ok=True)

    def log_tensor(self, name, x):
        dist.barrier()
        torch.save(x, self.tmpdir / f"{name}.pkl")


def _save_features(feats, filename):
    # A hard negative: every call of this helper names a file with the rank
    # in it (EVA-CLIP's `save_file` of per-rank embeddings).
    with open(filename, "wb") as fopen:
        pickle.dump(feats, fopen)


def _save_merged(feats, filename):
    torch.save(feats, filename)
    # CHECK-MESSAGES: :[[@LINE-1]]:5: error: every rank runs 'torch.save' to the same path, {{.*}} [ddp-unguarded-save]


def dump_features(model, loader, out_dir):
    for step, batch in enumerate(loader):
        feats = model(batch)
        _save_features(feats, f"{out_dir}/rank{dist.get_rank()}_feats_{step:08d}.pkl")
        _save_features(feats, os.path.join(out_dir, f"rank{dist.get_rank()}_last.pkl"))
        _save_merged(feats, f"{out_dir}/rank{dist.get_rank()}_merged.pt")
        _save_merged(feats, f"{out_dir}/merged.pt")
    dist.barrier()


def rwkv_save(args, trainer, dd, ff):
    if "deepspeed_stage_3" in args.strategy:
        trainer.save_checkpoint(ff, weights_only=True)  # every rank: a sharded save
    else:
        torch.save(dd, ff)  # only where the caller's rank-0 arm holds


def rwkv_epoch_end(args, trainer, model, t):
    # Hard negative (RWKV's train_callback): the caller lets every rank in
    # only for the DeepSpeed stage-3 save, and the helper's torch.save is on
    # the other arm of that same setting: rank 0 alone writes.
    dist.all_reduce(t)
    if trainer.is_global_zero or "deepspeed_stage_3" in args.strategy:
        rwkv_save(args, trainer, model.state_dict(), "rwkv.pth")
    dist.all_reduce(t)


def export_on_setting(args, dd, ff):
    if args.export:
        # CHECK-MESSAGES: :[[@LINE+1]]:9: error: every rank runs 'torch.save' to the same path, {{.*}} [ddp-unguarded-save]
        torch.save(dd, ff)


def export_epoch_end(args, trainer, model, t):
    # The same shape, but the helper writes on the arm every rank enters.
    dist.all_reduce(t)
    if trainer.is_global_zero or args.export:
        export_on_setting(args, model.state_dict(), "export.pth")
    dist.all_reduce(t)


def save_best_and_last(model, path, is_best=False):
    if is_best:
        torch.save(model.state_dict(), "best.pt")
    torch.save(model.state_dict(), path)


def train_saving_best(model, loader, t):
    # Hard negative (RepVGG): the helper's only call passes a setting it is
    # specialised on; that call is rank 0's, so the helper's own body is too.
    for batch in loader:
        dist.all_reduce(t)
        if dist.get_rank() == 0:
            save_best_and_last(model, "last.pt", is_best=True)
        dist.barrier()


class EmbeddingTrainer:
    def save_weights(self, file, embs):
        torch.save({"emb_params": embs}, file)

    def train(self, accelerator, model, loader, embs, output_dir):
        # hard negative (sd-scripts' textual inversion): the method is called
        # by a closure, and the closure only on the main process
        def save_model(ckpt_name):
            self.save_weights(os.path.join(output_dir, ckpt_name), embs)

        for batch in loader:
            accelerator.backward(model(batch).mean())
        accelerator.wait_for_everyone()
        if accelerator.is_main_process:
            save_model("last.pt")


def save_per_node_of_eight(model, logdir):
    # jukebox: rank 0 of each node of eight GPUs writes one shared path
    if dist.get_rank() % 8 == 0:
        torch.save(model.state_dict(), f"{logdir}/checkpoint_latest.pth.tar")
        # CHECK-MESSAGES: :[[@LINE-1]]:9: error: 'torch.save' is guarded by the node-local rank, so one process per node writes the same path{{.*}} [ddp-unguarded-save]


def _rank() -> int:
    # FastVideo: the rank once a process group is up, 0 before.
    if dist.is_available() and dist.is_initialized():
        return int(dist.get_rank())
    return 0


def save_rng_per_rank(checkpoint_dir):
    # hard negative: one file per rank, named by the helper's rank
    torch.save(torch.get_rng_state(), os.path.join(checkpoint_dir, f"rng_state_rank{_rank()}.pt"))
    dist.barrier()


def encode_shard(records, out_dir):
    # hard negative: each process encodes its share of the records, each to
    # the record's own file (Accelerate's split_between_processes)
    accelerator = Accelerator()
    with accelerator.split_between_processes(records) as shard:
        for record in shard:
            torch.save(record.encode(), os.path.join(out_dir, f"{record.stem}.pt"))
    accelerator.wait_for_everyone()
    torch.save(records, os.path.join(out_dir, "index.pt"))
    # CHECK-MESSAGES: :[[@LINE-1]]:5: error: every rank runs 'torch.save' to the same path{{.*}} [ddp-unguarded-save]


def save_bad_batch(batch, exp_dir):
    # hard negative: vall-e's dump of a failing batch, named by lhotse's uuid4
    # (uuid's, re-exported): every process writes its own file.
    from lhotse.utils import uuid4

    dist.barrier()
    torch.save(batch, f"{exp_dir}/batch-{uuid4()}.pt")
