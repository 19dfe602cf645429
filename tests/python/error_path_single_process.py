"""A script that never runs distributed: a caught failure strands no rank.

ml-mdm's run_torchmetrics.py computes FID in one process on cuda:0, with no
process group, launcher or DDP; torchmetrics synchronises its state in
compute() only when torch.distributed is initialised.  The handler that logs
the failure and goes on is not an error-path exit (before, it was reported).
"""
import logging

import torch
from torchmetrics.image.fid import FrechetInceptionDistance


def main(images_real, images_fake):
    device = torch.device("cuda", 0)
    fid = FrechetInceptionDistance(feature=2048).to(device)
    fid.update(images_real, real=True)
    fid.update(images_fake, real=False)
    try:
        fid_score = fid.compute().item()
        logging.info(f"FID {fid_score}")
    except Exception as e:
        logging.error(f"Encountered error {e}")


if __name__ == "__main__":
    main(None, None)
