# SPDX-License-Identifier: MIT
"""Writes the TorchScript modules tst_scriptedmodel trains and refuses, made here by Debian's
python3-torch so that the engine meets what PyTorch itself writes.

    /usr/bin/python3 torchscript_modules.py OUT_DIR

OUT_DIR/gpt.pt and rotary.pt are the examples (resources/examples/torchscript) at a tiny size,
plain.pt a module without the contract's optional blocks;
expected.json holds a batch and PyTorch's FP32 loss of each on it. OUT_DIR/bad/*.pt each break
the contract in one way.
"""
import importlib.util
import json
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

OUT = sys.argv[1]
EXAMPLES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "resources", "examples")
VOCAB, CONTEXT, WIDTH, LAYERS, HEADS = 256, 16, 32, 2, 2


def load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class TwoArguments(nn.Module):  # forward(idx, targets): the engine computes the loss itself
    def __init__(self):
        super().__init__()
        self.tokens = nn.Embedding(VOCAB, VOCAB)

    def forward(self, idx, targets):
        return F.cross_entropy(self.tokens(idx).flatten(0, 1), targets.flatten())


class Flat(nn.Module):  # returns (B, T): one number per position
    def __init__(self):
        super().__init__()
        self.tokens = nn.Embedding(VOCAB, 1)

    def forward(self, idx):
        return self.tokens(idx).squeeze(-1)


class Vocabulary(nn.Module):  # logits over another vocabulary
    def __init__(self, vocab: int):
        super().__init__()
        self.tokens = nn.Embedding(VOCAB, vocab)

    def forward(self, idx):
        return self.tokens(idx)


class NoParameters(nn.Module):
    def __init__(self):
        super().__init__()
        self.vocab = VOCAB

    def forward(self, idx):
        return F.one_hot(idx, self.vocab).float()


class PartialContract(nn.Module):  # embed and head, but no blocks
    def __init__(self):
        super().__init__()
        self.tokens = nn.Embedding(VOCAB, WIDTH)
        self.output = nn.Linear(WIDTH, VOCAB)

    @torch.jit.export
    def embed(self, idx):
        return self.tokens(idx)

    @torch.jit.export
    def head(self, x):
        return self.output(x)

    def forward(self, idx):
        return self.head(self.embed(idx))


class Disagreeing(PartialContract):  # blocks that forward skips
    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleList([nn.Linear(WIDTH, WIDTH)])


class FixedFloat32(nn.Module):  # a float32 matrix made in forward: breaks with 16-bit weights
    def __init__(self):
        super().__init__()
        self.tokens = nn.Embedding(VOCAB, WIDTH)
        self.shape = [WIDTH, VOCAB]

    def forward(self, idx):
        return self.tokens(idx) @ torch.ones(self.shape)


def save(module, name):
    torch.jit.script(module).save(os.path.join(OUT, name))


def main():
    os.makedirs(os.path.join(OUT, "bad"), exist_ok=True)
    train = load("train", os.path.join(EXAMPLES, "pytorch", "train.py"))
    rotary = load("rotary", os.path.join(EXAMPLES, "torchscript", "rotary.py"))
    torch.manual_seed(3)
    models = {"gpt": train.GPT(VOCAB, CONTEXT, WIDTH, LAYERS, HEADS),
              "rotary": rotary.RotaryGPT(VOCAB, WIDTH, LAYERS, HEADS)}
    rows = torch.randint(0, VOCAB, (3, CONTEXT + 1), generator=torch.Generator().manual_seed(7))
    tokens, targets = rows[:, :-1], rows[:, 1:]
    expected = {"vocab": VOCAB, "context": CONTEXT, "tokens": tokens.tolist(), "targets": targets.tolist()}
    for name, model in models.items():
        save(model, name + ".pt")
        with torch.no_grad():
            logits = model(tokens)
            expected[name + "_loss"] = F.cross_entropy(logits.reshape(-1, VOCAB).float(), targets.reshape(-1)).item()
    with open(os.path.join(OUT, "expected.json"), "w") as f:
        json.dump(expected, f)

    save(Vocabulary(VOCAB), "plain.pt")  # keeps the contract, without its optional blocks
    save(TwoArguments(), "bad/two_arguments.pt")
    save(Flat(), "bad/flat.pt")
    save(Vocabulary(300), "bad/vocabulary_300.pt")
    save(NoParameters(), "bad/no_parameters.pt")
    nan = Vocabulary(VOCAB)
    with torch.no_grad():
        nan.tokens.weight[5, 7] = float("nan")
    save(nan, "bad/nan_weight.pt")
    save(PartialContract(), "bad/partial_contract.pt")
    save(Disagreeing(), "bad/disagreeing_blocks.pt")
    save(FixedFloat32(), "bad/fixed_float32.pt")
    with open(os.path.join(OUT, "bad", "not_torchscript.pt"), "w") as f:
        f.write("weights = [1, 2, 3]\n")
    whole = open(os.path.join(OUT, "gpt.pt"), "rb").read()
    with open(os.path.join(OUT, "bad", "truncated.pt"), "wb") as f:
        f.write(whole[: len(whole) // 2])


if __name__ == "__main__":
    main()
