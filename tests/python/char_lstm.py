# SPDX-License-Identifier: MIT
"""A character-level LSTM language model trained as a user's own script trains, not written for
optlog's engine, and recorded with optlog.Run: what test_recorded_runs.py records over seeds and
compares. Its FLOPs per token are given (6 x parameters: torch.utils.flop_counter does not count
a CPU's fused LSTM kernel)."""
import argparse
import contextlib
import math
import time

import torch

import optlog

TEXT = " ".join(f"the {w} fox jumps over the lazy {v} dog number {i}."
                for i, (w, v) in enumerate(zip(["quick", "slow", "red", "sly"] * 64, ["old", "young"] * 128)))


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--study", required=True)
    parser.add_argument("--name", required=True)
    parser.add_argument("--group")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--hidden", type=int, default=64)
    parser.add_argument("--precision", choices=["fp32", "autocast-bf16"], default="fp32")
    args = parser.parse_args()
    torch.manual_seed(args.seed)
    torch.set_num_threads(1)
    data = torch.tensor(list(TEXT.encode()), dtype=torch.long)
    batch, context = 8, 32

    class CharLstm(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = torch.nn.Embedding(256, 32)
            self.lstm = torch.nn.LSTM(32, args.hidden, batch_first=True)
            self.head = torch.nn.Linear(args.hidden, 256)

        def forward(self, x):
            return self.head(self.lstm(self.embed(x))[0])

    model = CharLstm()
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3)
    generator = torch.Generator().manual_seed(args.seed)

    def windows(count, offset=0):
        starts = torch.randint(offset, len(data) - context - 1, (count,), generator=generator)
        return (torch.stack([data[s:s + context] for s in starts]), torch.stack([data[s + 1:s + context + 1] for s in starts]))

    def onednn_refuses_bf16_lstm():
        """oneDNN's BF16 LSTM needs AVX-512: PyTorch 2.11 refuses it on an AVX2 EPYC ("could not
        create a primitive descriptor"); ATen's own LSTM then runs the step instead."""
        try:
            with torch.autocast("cpu", dtype=torch.bfloat16):
                torch.nn.LSTM(4, 4, batch_first=True)(torch.zeros(1, 2, 4))
            return False
        except RuntimeError:
            return True

    aten_lstm = args.precision == "autocast-bf16" and onednn_refuses_bf16_lstm()

    def autocast():
        if args.precision != "autocast-bf16":
            return contextlib.nullcontext()
        scope = contextlib.ExitStack()
        if aten_lstm:
            scope.enter_context(torch.backends.mkldnn.flags(enabled=False))
        scope.enter_context(torch.autocast("cpu", dtype=torch.bfloat16))
        return scope

    def loss_of(x, y):
        with autocast():
            logits = model(x)
        return torch.nn.functional.cross_entropy(logits.float().reshape(-1, 256), y.reshape(-1))

    parameters = sum(p.numel() for p in model.parameters())
    with optlog.Run(args.study, args.name, group=args.group, seed=args.seed, steps=args.steps,
                    config={"model": "char-lstm", "hidden": args.hidden, "precision": args.precision}) as run:
        run.flops_per_token(6 * parameters)
        for step in range(args.steps):
            x, y = windows(batch)

            def train_step():
                optimizer.zero_grad(set_to_none=True)
                loss = loss_of(x, y)
                loss.backward()
                optimizer.step()
                return loss

            start = time.perf_counter()
            loss = run.memory(model, optimizer, step=train_step) if step == 2 else train_step()
            run.step(step, loss, tokens=(step + 1) * batch * context, step_seconds=time.perf_counter() - start)
            if (step + 1) % 20 == 0:
                with torch.no_grad():
                    run.validation(loss_of(*windows(16)).item())
    assert math.isfinite(loss.item())


if __name__ == "__main__":
    main()
