# SPDX-License-Identifier: MIT
"""Scripts an example model and saves it for `optlog run --set model.source=torchscript`.

    /usr/bin/python3 script_model.py gpt gpt.pt --width 128 --layers 4 --heads 4
    optlog run --db study.optlog --set model.source=torchscript --set model.path=gpt.pt

gpt: the example PyTorch trainer's GPT (../pytorch/train.py), the engine's own shape.
rotary: rotary position embeddings, RMSNorm and a gated MLP (rotary.py).
moe: a retention-style mixer and a top-2 of 4 mixture of experts (moe.py).
The weights are initialised from --seed; the engine trains them from there.
"""
import argparse
import importlib.util
import os
import sys

try:
    import torch
except ImportError:
    sys.exit(f"script_model.py: needs PyTorch, which {sys.executable} cannot import: on Debian, "
             "sudo apt install python3-torch and run /usr/bin/python3")

HERE = os.path.dirname(os.path.abspath(__file__))


def load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def build(a):
    if a.model == "gpt":
        gpt = load("train", os.path.join(HERE, "..", "pytorch", "train.py"))
        return gpt.GPT(a.vocab, a.context, a.width, a.layers, a.heads)
    if a.model == "moe":
        moe = load("moe", os.path.join(HERE, "moe.py"))
        return moe.MixtureGPT(a.vocab, a.width, a.layers, a.heads)
    rotary = load("rotary", os.path.join(HERE, "rotary.py"))
    return rotary.RotaryGPT(a.vocab, a.width, a.layers, a.heads)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("model", choices=("gpt", "rotary", "moe"))
    p.add_argument("out", help="the TorchScript file to write")
    p.add_argument("--vocab", type=int, default=256, help="the data's vocabulary (256: byte-level text)")
    p.add_argument("--context", type=int, default=128, help="gpt: the longest sequence its position table covers")
    p.add_argument("--width", type=int, default=256)
    p.add_argument("--layers", type=int, default=4)
    p.add_argument("--heads", type=int, default=4)
    p.add_argument("--seed", type=int, default=1, help="seeds the initial weights")
    a = p.parse_args()
    if a.width % a.heads:
        sys.exit(f"script_model.py: --width {a.width} must be divisible by --heads {a.heads}")
    torch.manual_seed(a.seed)
    scripted = torch.jit.script(build(a))
    scripted.save(a.out)
    parameters = sum(t.numel() for t in scripted.parameters())
    print(f"{a.out}: {a.model}, {parameters} parameters, {len(scripted.blocks)} blocks")


if __name__ == "__main__":
    main()
