"""A conversion script that imports Accelerate only to build the model on the
meta device (`from accelerate import init_empty_weights`, SimpleTuner's and
sd-scripts' converters): one process, so its save is one save.  No finding
expected.
"""
import argparse

import torch
from accelerate import init_empty_weights


def convert(args, model_cls):
    with init_empty_weights():
        model = model_cls()
    torch.save(model.state_dict(), f"{args.output_path}/transformer.pt")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--output_path")
    convert(parser.parse_args(), torch.nn.Linear)
