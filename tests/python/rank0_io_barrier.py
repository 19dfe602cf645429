"""ddp-rank0-io-barrier: rank-0-only file writes without barriers around them.

Reported at the `if` of the rank-0 block, only when a collective follows (the
other ranks race into it while rank 0 writes).  Fix-its are tested in
rank0_io_barrier_fix.py.
"""
import json
import shutil
import os
import sys
import tempfile
import wave

import imageio
import numpy as np

import torch
import torch.distributed as dist
from safetensors.torch import save_file
import wandb
import yaml
from accelerate import Accelerator
from iopath.common.file_io import g_pathmgr
from olmo_core.distributed import utils as distributed_utils
from torch.utils.tensorboard import SummaryWriter


# ---- true positives ---------------------------------------------------------


def save_between_allreduces(model, grads, path):
    dist.all_reduce(grads)
    # CHECK-MESSAGES: :[[@LINE+1]]:5: warning: barrier [ddp-rank0-io-barrier]
    if dist.get_rank() == 0:
        torch.save(model.state_dict(), path)
    dist.all_reduce(grads)


def metrics_json_each_epoch(args, train_one_epoch, loss_sum):
    rank = dist.get_rank()
    for epoch in range(args.epochs):
        train_one_epoch(epoch)
        dist.all_reduce(loss_sum)
        # hard negative: a record of the metrics, for people; no rank reads it
        if rank == 0:
            with open(os.path.join(args.output_dir, "metrics.json"), "w") as f:
                json.dump({"epoch": epoch, "loss": loss_sum.item()}, f)


def barrier_before_only(model, grads, path):
    dist.barrier()
    # CHECK-MESSAGES: :[[@LINE+1]]:5: warning: barrier [ddp-rank0-io-barrier]
    if dist.get_rank() == 0:
        torch.save({"model": model.state_dict()}, path)
    dist.all_reduce(grads)  # other ranks arrive here while rank 0 still writes


def append_log_then_reduce(log_path, step, loss):
    # hard negative: a line appended to a log that no rank reads, written in
    # no time: nothing can read it half-written or time out waiting for it
    # (modded-nanogpt's print0, 40 false reports on fresh code)
    is_main = dist.get_rank() == 0
    dist.all_reduce(loss)
    if is_main and step % 100 == 0:
        with open(log_path, "a") as f:
            f.write(f"{step}\t{loss.item():.5f}\n")
    dist.all_reduce(loss)


def save_if_main(model, path):
    # CHECK-MESSAGES: :[[@LINE+1]]:5: warning: barrier [ddp-rank0-io-barrier]
    if dist.get_rank() != 0:
        return
    torch.save(model.state_dict(), path)


def loop_calls_early_return_saver(model, batches, optimizer, path):
    for x, y in batches:
        loss = model(x).sub(y).pow(2).mean()
        loss.backward()
        grads = torch.cat([p.grad.flatten() for p in model.parameters()])
        dist.all_reduce(grads)
        optimizer.step()
        save_if_main(model, path)  # no barrier around the call, the next all_reduce follows


def accelerate_main_writes_then_gathers(accelerator: Accelerator, model, batches, output_dir):
    for x in batches:
        preds = accelerator.gather_for_metrics(model(x).argmax(-1))
        # CHECK-MESSAGES: :[[@LINE+1]]:9: warning: barrier [ddp-rank0-io-barrier]
        if accelerator.is_main_process:
            torch.save(model.state_dict(), os.path.join(output_dir, "model.pt"))


# ---- hard negatives -----------------------------------------------------------


def save_with_barriers(model, grads, path):
    dist.all_reduce(grads)
    dist.barrier()
    if dist.get_rank() == 0:
        torch.save(model.state_dict(), path)
    dist.barrier()
    dist.all_reduce(grads)


def save_with_accelerate_barriers(accelerator: Accelerator, model, output_dir):
    accelerator.wait_for_everyone()
    if accelerator.is_main_process:
        accelerator.save(accelerator.unwrap_model(model).state_dict(), os.path.join(output_dir, "m.bin"))
    accelerator.wait_for_everyone()
    accelerator.gather(torch.zeros(1))


def save_then_barrier_when_distributed(args, model, grads, path):
    # MiniGPT-4's runner: the barrier sits behind the setting that selects the
    # distributed run, which every rank reads alike and which holds wherever
    # there are other ranks to wait for.
    for epoch in range(args.epochs):
        dist.all_reduce(grads)
        if dist.get_rank() == 0:
            torch.save(model.state_dict(), path)
        if args.distributed:
            dist.barrier()


def save_on_last_step_then_break(model, grads, num_steps, path):
    # nanochat's chat_sft: the save on the last step is followed by the same
    # test's `break`, so no next step's all_reduce waits for rank 0's write.
    step = 0
    while True:
        last_step = step == num_steps
        dist.all_reduce(grads)
        if last_step:
            if dist.get_rank() == 0:
                torch.save(model.state_dict(), path)
        if last_step:
            break
        step += 1


def save_every_then_break_at_last(model, grads, num_steps, every, path):
    # The save also runs every `every` steps, on which the loop goes on.
    step = 0
    while True:
        last_step = step == num_steps
        dist.all_reduce(grads)
        if last_step or step % every == 0:
            # CHECK-MESSAGES: :[[@LINE+1]]:13: warning: block runs only on rank 0 and writes files, with no barrier every rank reaches after it; {{.*}} [ddp-rank0-io-barrier]
            if dist.get_rank() == 0:
                torch.save(model.state_dict(), path)
        if last_step:
            break
        step += 1


def save_in_last_step_block_then_break(model, grads, num_steps, path):
    # modded-nanogpt: `if last_step:` holds the rank-0 save and the `break`
    # right after it, so the loop ends on the path that wrote.
    for step in range(num_steps + 1):
        last_step = step == num_steps
        dist.all_reduce(grads)
        if last_step:
            if dist.get_rank() == 0:
                torch.save(model.state_dict(), path)
            break
        dist.all_reduce(grads)


def save_in_eval_branch_then_exit(args, model, grads, path):
    # VideoMAE's eval-only branch: the save is followed by the end of the
    # process, not by the training loop below it.
    dist.all_reduce(grads)
    if args.eval:
        if dist.get_rank() == 0:
            torch.save(model.state_dict(), path)
        sys.exit(0)
    for epoch in range(args.epochs):
        dist.all_reduce(grads)


def save_then_barrier_behind_setting(args, model, grads, path):
    # open_lm: the next epoch starts with an object collective behind a
    # setting every rank shares, then a barrier every rank reaches: on the
    # runs that skip the first, the second orders the write.
    for epoch in range(args.epochs):
        if args.manifest:
            strings = [None] * dist.get_world_size()
            dist.all_gather_object(strings, args.manifest)
        dist.barrier()
        dist.all_reduce(grads)
        if dist.get_rank() == 0:
            torch.save(model.state_dict(), path)


def save_then_tensor_collective_behind_setting(args, model, grads, path):
    # The runs that skip the barrier meet the all_reduce first.
    for epoch in range(args.epochs):
        if args.sync:
            dist.barrier()
        dist.all_reduce(grads)
        # CHECK-MESSAGES: :[[@LINE+1]]:9: warning: block runs only on rank 0 and writes files, with no barrier every rank reaches after it; {{.*}} [ddp-rank0-io-barrier]
        if dist.get_rank() == 0:
            torch.save(model.state_dict(), path)


def rank0_logs_by_name(args, loss, stats):
    # hard negatives: files named for a log (`logfile`, "log.txt"), and
    # json.dump into a log's handle
    for step in range(args.steps):
        dist.all_reduce(loss)
        if dist.get_rank() == 0:
            with open(args.logfile, "w") as f:
                print(loss.item(), file=f)
            with open(os.path.join(args.output_dir, "log.txt"), mode="a", encoding="utf-8") as f:
                json.dump(stats, f)
        dist.all_reduce(loss)


def rank0_writes_results_in_log_dir(args, loss):
    # Hard negative: text for people that nothing here reads back (the best
    # step so far) is a record, not a file a rank can read half-written.
    for step in range(args.steps):
        dist.all_reduce(loss)
        if dist.get_rank() == 0:
            with open(os.path.join(args.log_dir, "best_step.txt"), "w") as f:
                f.write(str(loss.item()))
        dist.all_reduce(loss)


def rank0_writes_what_it_reads_back(args, loss):
    # A file in a log folder is not a log when the run reads it back.
    for step in range(args.steps):
        dist.all_reduce(loss)
        # CHECK-MESSAGES: :[[@LINE+1]]:9: warning: block runs only on rank 0 and writes files, with no barrier every rank reaches after it; {{.*}} [ddp-rank0-io-barrier]
        if dist.get_rank() == 0:
            with open(os.path.join(args.log_dir, "best_step.txt"), "w") as f:
                f.write(str(loss.item()))
        dist.all_reduce(loss)
        with open(os.path.join(args.log_dir, "best_step.txt")) as f:
            best = float(f.read())


def export_then_barrier(model, grads, path, is_main_process):
    # open-instruct's DPO export, a hard negative: the caller's rank-0 test
    # handed in as `is_main_process`, then OLMo-core's `is_distributed()`
    # (whether the process group is up) before the barrier every rank reaches.
    for epoch in range(3):
        dist.all_reduce(grads)
        if is_main_process:
            torch.save(model.state_dict(), path)
        if distributed_utils.is_distributed():
            dist.barrier()


def final_save_after_last_collective(model, grads, path):
    dist.all_reduce(grads)
    if dist.get_rank() == 0:  # nothing after it waits for rank 0 or reads the file
        torch.save(model.state_dict(), path)


def rank0_prints_and_logs(step, loss, run):
    dist.all_reduce(loss)
    if dist.get_rank() == 0:
        print(f"step {step} loss {loss.item():.4f}")
        run.log({"loss": loss.item()}, step=step)
    dist.all_reduce(loss)


def rank0_reads_config(path):
    cfg = [None]
    if dist.get_rank() == 0:
        with open(path) as f:  # reading
            cfg[0] = json.load(f)
    dist.broadcast_object_list(cfg, src=0)
    return cfg[0]


def rank0_starts_wandb(args, t):
    if dist.get_rank() == 0:
        wandb.init(project=args.project, config=vars(args))
    dist.all_reduce(t)


def rank0_tensorboard(args, t, step):
    writer = SummaryWriter(args.log_dir) if dist.get_rank() == 0 else None
    dist.all_reduce(t)
    if writer is not None:
        writer.add_scalar("train/loss", t.item(), step)
    dist.all_reduce(t)


def rank0_draws_plots(save_dir, fig, images, t):
    # yolov9's plots: pictures for people, read back by no rank.
    import matplotlib.pyplot as plt
    from torchvision.utils import save_image

    for _ in range(3):
        dist.all_reduce(t)
        if dist.get_rank() == 0:
            plt.plot([t.item()])
            plt.savefig(os.path.join(save_dir, "loss.png"))
            fig.savefig(os.path.join(save_dir, "results.png"))
            save_image(images, os.path.join(save_dir, "samples.png"))


def rank0_plot_and_checkpoint(save_dir, fig, model, t):
    for _ in range(3):
        dist.all_reduce(t)
        # CHECK-MESSAGES: :[[@LINE+1]]:9: warning: block runs only on rank 0 and writes files, with no barrier every rank reaches after it; {{.*}} [ddp-rank0-io-barrier]
        if dist.get_rank() == 0:
            fig.savefig(os.path.join(save_dir, "results.png"))
            torch.save(model.state_dict(), os.path.join(save_dir, "last.pt"))


def every_rank_writes_its_own_log(log_dir, step, t):
    rank = dist.get_rank()
    with open(os.path.join(log_dir, f"rank{rank}.log"), "a") as f:  # not a rank-0 block
        f.write(f"{step}\n")
    dist.all_reduce(t)


def early_return_saver_between_barriers(model, path, grads):
    dist.all_reduce(grads)
    dist.barrier()
    save_if_main_clean(model, path)
    dist.barrier()
    dist.all_reduce(grads)


def save_if_main_clean(model, path):
    if dist.get_rank() != 0:
        return
    torch.save(model.state_dict(), path)


def save_in_loop_barrier_after_loop(model, grads):
    # The barrier after the loop does not cover the next iteration's collective.
    for step in range(10):
        dist.all_reduce(grads)
        if dist.get_rank() == 0:
        # CHECK-MESSAGES: :[[@LINE-1]]:9: warning: block runs only on rank 0 and writes files, with no barrier every rank reaches after it; {{.*}} [ddp-rank0-io-barrier]
            torch.save(model.state_dict(), "step.pt")
    dist.barrier()


def nested_main_blocks(accelerator, text_encoder, prompts, grads):
    # PixArt-alpha's prepare_vis: a second main-process test inside the first
    # is the same rank-0 block; one report, at the outer `if` (a barrier put
    # inside it only rank 0 would reach)
    if accelerator.is_main_process:
    # CHECK-MESSAGES: :[[@LINE-1]]:5: warning: block runs only on rank 0 and writes files, with no barrier every rank reaches after it; {{.*}} [ddp-rank0-io-barrier]
        skip = all(os.path.exists(p) for p in prompts)
        if accelerator.is_main_process and not skip:
            for p in prompts:
                torch.save(text_encoder(p), p)
    accelerator.backward(grads)


def write_through_path_manager(model, grads, out_dir):
    # iopath's `g_pathmgr.open(path, mode)` (fvcore's PathManager alike)
    # takes the path first: "w" writes the file, "a" appends to a log.
    for step in range(10):
        dist.all_reduce(grads)
        if dist.get_rank() == 0:
        # CHECK-MESSAGES: :[[@LINE-1]]:9: warning: block runs only on rank 0 and writes files, with no barrier every rank reaches after it; {{.*}} [ddp-rank0-io-barrier]
            with g_pathmgr.open(os.path.join(out_dir, "state.bin"), "wb") as f:
                f.write(bytes([step]))
        if dist.get_rank() == 0:
            with g_pathmgr.open(os.path.join(out_dir, "metrics.txt"), "a") as f:
                f.write(str(step))


def record_settings_at_start(args, model, loader):
    # Hard negatives: a record of the run's settings (timm's and poolformer's
    # args.yaml, a copy of the config, open_clip's params.txt) is read by
    # nobody during the run, like a log.  A checkpoint whose name mentions
    # the config is still a checkpoint.
    if dist.get_rank() == 0:
        with open(os.path.join(args.output_dir, "args.yaml"), "w") as f:
            f.write(yaml.safe_dump(args.__dict__))
        shutil.copy(args.config, args.output_dir)
        params_file = os.path.join(args.output_dir, "params.txt")
        with open(params_file, "w") as f:
            for k, v in vars(args).items():
                f.write(f"{k}: {v}\n")
    if dist.get_rank() == 0:
    # CHECK-MESSAGES: :[[@LINE-1]]:5: warning: block runs only on rank 0 and writes files, with no barrier every rank reaches after it; {{.*}} [ddp-rank0-io-barrier]
        torch.save(model.state_dict(), os.path.join(args.output_dir, "config_init.pt"))
    for x in loader:
        dist.all_reduce(model(x))


def record_settings_through_a_name(config, model, loader):
    # Hard negative: InternImage names the record first, then opens the name.
    if dist.get_rank() == 0:
        path = os.path.join(config.OUTPUT, "config.json")
        with open(path, "w") as f:
            f.write(config.dump())
    # The name's last assignment is what is opened: weights, not the record.
    if dist.get_rank() == 0:
    # CHECK-MESSAGES: :[[@LINE-1]]:5: warning: block runs only on rank 0 and writes files, with no barrier every rank reaches after it; {{.*}} [ddp-rank0-io-barrier]
        path = os.path.join(config.OUTPUT, "config.json")
        path = os.path.join(config.OUTPUT, "weights.bin")
        with open(path, "wb") as f:
            f.write(model.state_dict_bytes())
    for x in loader:
        dist.all_reduce(model(x))


def record_settings_beside_checkpoint(fabric, model, config, out_dir, loader):
    # Hard negatives: lit-gpt writes its settings in YAML next to the weights
    # after a save every rank takes part in: `model_config.yaml` (a settings
    # format, though the name says "model"), `prompt_style.yaml`,
    # `hyperparameters.yaml`.
    fabric.save(os.path.join(out_dir, "lit_model.pth"), {"model": model})
    if fabric.global_rank == 0:
        with open(os.path.join(out_dir, "model_config.yaml"), "w") as f:
            yaml.dump(config, f)
        with open(os.path.join(out_dir, "prompt_style.yaml"), "w") as f:
            yaml.dump({"class_path": "Alpaca"}, f)
        with open(os.path.join(out_dir, "hyperparameters.yaml"), "w") as f:
            yaml.dump(vars(config), f)
    for x in loader:
        fabric.backward(model(x).sum())


def save_config(cfg, path):
    # Hard negative: a parameter of a function named for a settings record
    # (CvT's save_config) is where the record goes.
    if dist.get_rank() == 0:
        with open(path, "w") as f:
            f.write(cfg.dump())


def save_weights(state, path):
    if dist.get_rank() == 0:  # CHECK-MESSAGES: :[[@LINE]]:5: warning: block runs only on rank 0 and writes files, with no barrier every rank reaches after it; {{.*}} [ddp-rank0-io-barrier]
        with open(path, "wb") as f:
            f.write(state)


def train_with_records(cfg, model, loader):
    save_config(cfg, os.path.join(cfg.OUTPUT, "run.yaml"))
    save_weights(model.state_dict_bytes(), os.path.join(cfg.OUTPUT, "init.bin"))
    for x in loader:
        dist.all_reduce(model(x))


def load_results(path):
    with open(path) as f:
        return json.load(f)


def evaluate_with_scratch_file(preds):
    # COCO evaluation writes the detections to its own temporary file
    with tempfile.NamedTemporaryFile() as f:
        with open(f.name, "w") as g:
            json.dump(preds, g)
        score = len(preds)
    with open("coco_detections.json", "w") as f:
        json.dump(preds, f)
    return score + len(load_results("coco_detections.json"))


def train_with_scratch_eval(model, loader):
    # hard negative in the first `with`: no other rank can read a private
    # temporary file; the file written after it, with `f` bound again, is
    # an ordinary one
    for step, x in enumerate(loader):
        dist.all_reduce(model(x))
        if dist.get_rank() == 0 and step % 100 == 0:
        # CHECK-MESSAGES: :[[@LINE-1]]:9: warning: block runs only on rank 0 and writes files, with no barrier every rank reaches after it; {{.*}} [ddp-rank0-io-barrier]
            evaluate_with_scratch_file([1, 2])


def score_with_scratch_file(preds):
    with tempfile.NamedTemporaryFile() as f:
        with open(f.name, "w") as g:
            json.dump(preds, g)
        return len(preds)


def train_with_private_scratch(model, loader):
    # hard negative: GLIP's rank-0 COCO evaluation writes only its own
    # temporary file
    for step, x in enumerate(loader):
        dist.all_reduce(model(x))
        if dist.get_rank() == 0 and step % 100 == 0:
            score_with_scratch_file([1, 2])


def train_and_keep_eval_records(model, loader, evaluator, output_dir, epochs):
    # hard negative (DETR's main.py): the evaluation's arrays and its
    # predictions are records for people; no rank loads them in the run
    for epoch in range(epochs):
        for x in loader:
            dist.all_reduce(model(x))
        if dist.get_rank() == 0:
            for name in ["latest.pth", f"{epoch:03}.pth"]:
                torch.save(evaluator.coco_eval["bbox"].eval, os.path.join(output_dir, "eval", name))
            with open(os.path.join(output_dir, "predictions.json"), "w") as f:
                json.dump(evaluator.predictions, f)


def train_and_dump_predictions(model, loader, eval_loader, output_dir, epochs):
    # hard negative (DeBERTa's run.py): rank 0 writes the gathered logits and
    # predictions with numpy's text writer, records no rank reads back
    for epoch in range(epochs):
        for x in loader:
            dist.all_reduce(model(x))
        logits = torch.cat([model(x) for x in eval_loader])
        gathered = [torch.zeros_like(logits) for _ in range(dist.get_world_size())]
        dist.all_gather(gathered, logits)
        if dist.get_rank() == 0:
            out = os.path.join(output_dir, f"test_logits_{epoch}.txt")
            np.savetxt(out, torch.cat(gathered).numpy(), delimiter="\t")
            np.savetxt(os.path.join(output_dir, f"predict_results_{epoch}.txt"), logits.numpy())


def train_and_dump_features(model, loader, output_dir, epochs):
    for epoch in range(epochs):
        for x in loader:
            dist.all_reduce(model(x))
        if dist.get_rank() == 0:
            # CHECK-MESSAGES: :[[@LINE-1]]:9: warning: block runs only on rank 0 and writes files{{.*}} [ddp-rank0-io-barrier]
            np.save(os.path.join(output_dir, "features.npy"), model.weight.numpy())


def train_and_keep_eval_state(model, loader, output_dir, epochs):
    for epoch in range(epochs):
        for x in loader:
            dist.all_reduce(model(x))
        if dist.get_rank() == 0:  # CHECK-MESSAGES: :[[@LINE]]:9: warning: block runs only on rank 0 and writes files{{.*}} [ddp-rank0-io-barrier]
            # the model's state saved under an evaluation folder is a checkpoint
            torch.save(model.state_dict(), os.path.join(output_dir, "eval", "best.pth"))


def save_on_epoch_end(output_dir, epoch, unet):
    # sd-scripts: the checkpoint is written by a closure handed to a helper
    def sd_saver(ckpt_file):
        torch.save(unet.state_dict(), ckpt_file)

    save_common(output_dir, epoch, sd_saver)


def save_common(output_dir, epoch, saver):
    os.makedirs(output_dir, exist_ok=True)
    saver(os.path.join(output_dir, f"epoch-{epoch}.ckpt"))


def train_saving_through_closure(accelerator: Accelerator, unet, loader, output_dir, epochs):
    for epoch in range(epochs):
        for batch in loader:
            accelerator.backward(unet(batch).mean())
        accelerator.wait_for_everyone()
        if accelerator.is_main_process:  # CHECK-MESSAGES: :[[@LINE]]:9: warning: block runs only on rank 0 and writes files{{.*}} [ddp-rank0-io-barrier]
            save_on_epoch_end(output_dir, epoch, accelerator.unwrap_model(unet))


def list_files_once(root, world_cpu_group, model):
    # hard negative (FastVideo's parquet loader): rank 0 writes the file list,
    # then a barrier on a CPU group of every rank; which ranks that group
    # holds is not known here, so rank 0's write is not shown unordered.
    cache_file = os.path.join(root, "file_info.json")
    if dist.get_rank() == 0:
        with open(cache_file, "w") as f:
            json.dump(sorted(os.listdir(root)), f)
    dist.barrier(group=world_cpu_group)
    with open(cache_file) as f:
        files = json.load(f)
    dist.all_reduce(model)
    return files


def save_checkpoint_metadata(step, states, checkpoint_dir):
    # hard negative (FastVideo's checkpointer): rank 0 writes the checkpoint's
    # metadata.json (step and settings, read when a run resumes) before the
    # sharded save that every rank joins.
    if dist.get_rank() == 0:
        with open(os.path.join(checkpoint_dir, "metadata.json"), "w") as f:
            json.dump({"step": step}, f)
    dist.all_reduce(states)
    # The weights beside it are a checkpoint.
    if dist.get_rank() == 0:  # CHECK-MESSAGES: :[[@LINE]]:5: warning: block runs only on rank 0 and writes files{{.*}} [ddp-rank0-io-barrier]
        torch.save(states, os.path.join(checkpoint_dir, "model.pt"))
    dist.all_reduce(states)


def save_weights_safetensors(model, loader, output_dir, opt):
    # FastVideo: rank 0 writes the weights as safetensors mid-training, and
    # the others go on into the next step's all-reduce.
    for step, batch in enumerate(loader):
        loss = model(batch).sum()
        dist.all_reduce(loss)
        opt.step()
        if dist.get_rank() == 0:  # CHECK-MESSAGES: :[[@LINE]]:9: warning: block runs only on rank 0 and writes files{{.*}} [ddp-rank0-io-barrier]
            save_file(model.state_dict(), os.path.join(output_dir, f"checkpoint-{step}.safetensors"))


def mux_audio(video_path, audio_bytes, sample_rate):
    with tempfile.TemporaryDirectory() as tmpdir:
        wav_path = os.path.join(tmpdir, "audio.wav")
        with wave.open(wav_path, "wb") as w:
            w.setframerate(sample_rate)
            w.writeframes(audio_bytes)
        shutil.move(wav_path, video_path + ".wav")


def log_validation_media(model, loader, videos, audio, output_dir):
    # hard negative (FastVideo): rank 0 saves validation videos, muxing their
    # audio through a file of its own temporary folder.
    for step, batch in enumerate(loader):
        loss = model(batch).sum()
        dist.all_reduce(loss)
        if dist.get_rank() == 0:
            for i, video in enumerate(videos):
                filename = os.path.join(output_dir, f"validation_step_{step}_video_{i}.mp4")
                imageio.mimsave(filename, video, fps=16)
                mux_audio(filename, audio, 16000)


def save_lora_weights(args, network, optimizer, loader):
    # musubi-tuner's trainer: the LoRA network writes its own weights file
    # (`save_weights(file, dtype, metadata)`) on the main process, and the
    # others go on into the next step.
    accelerator = Accelerator()
    network, optimizer, loader = accelerator.prepare(network, optimizer, loader)
    for step, batch in enumerate(loader):
        accelerator.backward(network(batch).mean())
        optimizer.step()
        if accelerator.is_main_process and step % args.save_every == 0:  # CHECK-MESSAGES: :[[@LINE]]:9: warning: block runs only on rank 0 and writes files{{.*}} [ddp-rank0-io-barrier]
            accelerator.unwrap_model(network).save_weights(f"{args.out}/step{step}.safetensors", None, {})


def save_lora_weights_then_wait(args, network, optimizer, loader):
    # hard negative: every process waits for the main process's file
    accelerator = Accelerator()
    network, optimizer, loader = accelerator.prepare(network, optimizer, loader)
    for step, batch in enumerate(loader):
        accelerator.backward(network(batch).mean())
        optimizer.step()
        if accelerator.is_main_process and step % args.save_every == 0:
            accelerator.unwrap_model(network).save_weights(file=f"{args.out}/step{step}.safetensors")
        accelerator.wait_for_everyone()


class MegatronEngine:
    # hard negative (verl's and tevatron's Megatron engines): Megatron-Bridge
    # saves the sharded weights with every rank taking part
    def __init__(self, bridge, model):
        self.bridge = bridge
        self.model = model

    def save(self, path):
        dist.barrier()
        self.bridge.save_weights(self.model, path)
        dist.barrier()


def save_adapter_then_wait_when_distributed(accelerator, network, output_dir, loader):
    # hard negative (SimpleTuner's save hook): the barrier is asked for only
    # when Accelerate runs distributed, which every run with ranks does
    from accelerate.utils import DistributedType
    distributed_type = getattr(accelerator, "distributed_type", DistributedType.NO)
    is_main_process = getattr(accelerator, "is_main_process", True)
    for batch in loader:
        accelerator.backward(network(batch).mean())
        if is_main_process:
            torch.save(network.state_dict(), output_dir + "/adapter.pt")
        if distributed_type != DistributedType.NO:
            accelerator.wait_for_everyone()


def save_adapter_then_wait_when_single(accelerator, network, output_dir, loader):
    from accelerate.utils import DistributedType
    for batch in loader:
        accelerator.backward(network(batch).mean())
        if accelerator.is_main_process:  # CHECK-MESSAGES: :[[@LINE]]:9: warning: block runs only on rank 0 and writes files{{.*}} [ddp-rank0-io-barrier]
            torch.save(network.state_dict(), output_dir + "/adapter.pt")
        if accelerator.distributed_type == DistributedType.NO:
            accelerator.wait_for_everyone()


def do_test(model, path, sharded):
    # dinov3's evaluation checkpoint: the early return sits in one arm.
    if sharded:
        dist.barrier()
        if dist.get_rank() != 0:
            return
    else:
        sd = model.state_dict()
        # CHECK-MESSAGES: :[[@LINE+1]]:9: warning: code after this early return runs only on rank 0 and writes files{{.*}} [ddp-rank0-io-barrier]
        if dist.get_rank() != 0:
            return
        torch.save({"teacher": sd}, path)


def do_test_then_wait(model, path):
    # Hard negative: the same arm, and every rank waits after the call.
    if model.training:
        model.eval()
    else:
        sd = model.state_dict()
        if dist.get_rank() != 0:
            return
        torch.save({"teacher": sd}, path)


def train_with_evaluations(model, loader, opt):
    for it, x in enumerate(loader):
        loss = model(x).sum()
        loss.backward()
        opt.step()
        dist.all_reduce(loss)
        if it % 100 == 0:
            do_test(model, "eval/teacher_checkpoint.pth", False)
    for it, x in enumerate(loader):
        model(x).sum().backward()
        opt.step()
        dist.all_reduce(torch.zeros(1))
        if it % 100 == 0:
            do_test_then_wait(model, "eval/teacher_waited.pth")
            dist.barrier()
