# SPDX-License-Identifier: MIT
"""The same GPT and training step as optlog's engine, in PyTorch from Python: the baseline that
users would otherwise run. Prints one line: the median tokens/s over the steps after warm-up.

Same shape and hyperparameters as optlog's presets: pre-LayerNorm blocks, biases, exact GELU,
tied head, AdamW with decay on matrices only, clipping at 1.0, cross-entropy on FP32 logits.
"""
import argparse
import importlib.util
import math
import os
import statistics
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


class Block(nn.Module):
    def __init__(self, width, heads):
        super().__init__()
        self.heads = heads
        self.ln1 = nn.LayerNorm(width)
        self.qkv = nn.Linear(width, 3 * width)
        self.proj = nn.Linear(width, width)
        self.ln2 = nn.LayerNorm(width)
        self.fc = nn.Linear(width, 4 * width)
        self.fc_proj = nn.Linear(4 * width, width)

    def attention(self, x):
        B, T, C = x.shape
        q, k, v = self.qkv(x).view(B, T, 3, self.heads, C // self.heads).permute(2, 0, 3, 1, 4)
        scores = torch.matmul(q, k.transpose(-2, -1)) * (1.0 / math.sqrt(C // self.heads))
        future = torch.ones(T, T, dtype=torch.bool).triu(1)
        weights = torch.softmax(scores.masked_fill(future, float("-inf")), -1)
        return self.proj(torch.matmul(weights, v).transpose(1, 2).reshape(B, T, C))

    def forward(self, x):
        x = x + self.attention(self.ln1(x))
        return x + self.fc_proj(F.gelu(self.fc(self.ln2(x))))


class GPT(nn.Module):
    def __init__(self, vocab, context, width, layers, heads):
        super().__init__()
        self.tokens = nn.Embedding(vocab, width)
        self.positions = nn.Embedding(context, width)
        self.blocks = nn.ModuleList(Block(width, heads) for _ in range(layers))
        self.final_norm = nn.LayerNorm(width)

    def loss(self, idx, targets):
        T = idx.shape[1]
        x = self.tokens(idx) + self.positions(torch.arange(T))
        for block in self.blocks:
            x = block(x)
        logits = torch.matmul(self.final_norm(x), self.tokens.weight.t())
        return F.cross_entropy(logits.view(-1, logits.shape[-1]).float(), targets.reshape(-1))


class ExampleLoss(nn.Module):
    """The example trainer's GPT with this file's loss: FP32 cross-entropy over its logits."""

    def __init__(self, gpt):
        super().__init__()
        self.gpt = gpt

    def loss(self, idx, targets):
        logits = self.gpt(idx)
        return F.cross_entropy(logits.view(-1, logits.shape[-1]).float(), targets.reshape(-1))


def example_gpt(a):
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "resources", "examples", "pytorch",
                        "train.py")
    spec = importlib.util.spec_from_file_location("train", path)
    train = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(train)
    return ExampleLoss(train.GPT(256, a.context, a.width, a.layers, a.heads))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--context", type=int, default=128)
    p.add_argument("--width", type=int, default=256)
    p.add_argument("--layers", type=int, default=4)
    p.add_argument("--heads", type=int, default=4)
    p.add_argument("--microbatch", type=int, default=8)
    p.add_argument("--steps", type=int, default=30)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--threads", type=int, default=0, help="0: PyTorch's own default")
    p.add_argument("--precision", choices=["fp32", "autocast-bf16"], default="fp32")
    p.add_argument("--example", action="store_true",
                   help="train resources/examples/pytorch/train.py's GPT instead, the model script_model.py scripts")
    a = p.parse_args()

    if a.threads > 0:
        torch.set_num_threads(a.threads)
    torch.manual_seed(1)
    model = example_gpt(a) if a.example else GPT(256, a.context, a.width, a.layers, a.heads)
    decayed = [q for q in model.parameters() if q.dim() >= 2]
    plain = [q for q in model.parameters() if q.dim() < 2]
    optimizer = torch.optim.AdamW([{"params": decayed, "weight_decay": 0.1}, {"params": plain, "weight_decay": 0.0}],
                                  lr=1e-3, betas=(0.9, 0.95), eps=1e-8)
    rates = []
    for step in range(a.steps):
        start = time.perf_counter()
        idx = torch.randint(0, 256, (a.microbatch, a.context + 1))
        optimizer.zero_grad(set_to_none=False)
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=a.precision == "autocast-bf16"):
            loss = model.loss(idx[:, :-1], idx[:, 1:])
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        loss.item()
        if step >= a.warmup:
            rates.append(a.microbatch * a.context / (time.perf_counter() - start))
    print(f"{statistics.median(rates):.1f}")


if __name__ == "__main__":
    main()
