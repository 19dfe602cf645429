"""detectron2_launch_script.py without `launch`: a one-process tool that
calls `main` itself and imports nothing distributed.  `comm.is_main_process()`
is true in its one process, and its checkpoint hook races with nobody.
"""
from detectron2.checkpoint import DetectionCheckpointer
from detectron2.config import instantiate
from detectron2.engine import SimpleTrainer, create_ddp_model, default_argument_parser, hooks
from detectron2.utils import comm


def do_train(cfg, model, optim, train_loader):
    model = create_ddp_model(model, **cfg.train.ddp)
    trainer = SimpleTrainer(model, train_loader, optim)
    checkpointer = DetectionCheckpointer(model, cfg.train.output_dir, trainer=trainer)
    trainer.register_hooks(
        [
            hooks.IterationTimer(),
            # hard negative: one process, nobody to race
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
    main(args)
