"""detectron2's `launch(main, num_gpus, ...)` starts one process per GPU and
runs `main` in each: a script that calls it is distributed, though it never
imports torch.distributed (detectron2's and ODISE's lazyconfig_train_net.py).
Its PeriodicCheckpointer hook, registered on the main process only, saves
between training steps while the other ranks go on into the next step's
gradient all-reduce.  The same script without `launch` (a one-process tool,
detectron2_one_process_tool.py) has no ranks to race.
"""
from detectron2.checkpoint import DetectionCheckpointer
from detectron2.config import instantiate
from detectron2.engine import SimpleTrainer, create_ddp_model, default_argument_parser, hooks, launch
from detectron2.utils import comm


def do_train(cfg, model, optim, train_loader):
    model = create_ddp_model(model, **cfg.train.ddp)
    trainer = SimpleTrainer(model, train_loader, optim)
    checkpointer = DetectionCheckpointer(model, cfg.train.output_dir, trainer=trainer)
    trainer.register_hooks(
        [
            hooks.IterationTimer(),
            # CHECK-MESSAGES: :[[@LINE+1]]:13: warning: 'hooks.PeriodicCheckpointer' hook writes checkpoints only on rank 0 (registered under comm.is_main_process()), every period between training steps, with no barrier every rank reaches after it{{.*}} [ddp-rank0-io-barrier]
            hooks.PeriodicCheckpointer(checkpointer, **cfg.train.checkpointer)
            if comm.is_main_process()
            else None,
        ]
    )
    trainer.train(0, cfg.train.max_iter)


def main(args):
    cfg = instantiate(args.config)
    do_train(cfg, instantiate(cfg.model), instantiate(cfg.optimizer), instantiate(cfg.dataloader.train))


if __name__ == "__main__":
    args = default_argument_parser().parse_args()
    launch(main, args.num_gpus, num_machines=args.num_machines, machine_rank=args.machine_rank,
           dist_url=args.dist_url, args=(args,))
