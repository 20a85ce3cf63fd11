# SPDX-License-Identifier: MIT
"""A small GPT trained by PyTorch and recorded into an optlog study as it trains.

    python3 train.py --study runs.optlog --name "bf16 s1" --group bf16 --seed 1 --precision autocast-bf16
    python3 train.py --study runs.optlog --device cuda --attention sdpa --fused --tf32   # PyTorch 2's fast paths

The model, data and optimizer are the engine's for the same flags (pre-LayerNorm blocks with
biases, exact GELU, tied head; AdamW decaying matrices only; cosine learning rate; byte-level
corpora), so `optlog compare` sets this run beside an `optlog run` of the same shape.
"""
import argparse
import contextlib
import math
import os
import random
import sys
import time

try:
    import torch
except ImportError:
    sys.exit(f"train.py: needs PyTorch, which {sys.executable} cannot import: on Debian, "
             "sudo apt install python3-torch and run /usr/bin/python3; elsewhere, pip install torch")
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint

try:
    import optlog
except ImportError:  # run from optlog's source tree
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "app", "python"))
    import optlog

MEASURED_STEP = 2  # memory is measured on this step, once the optimizer state exists
VALIDATION_FRACTION = 0.1  # the tail of a text corpus validates, as in the engine
EVAL_SEED = 0  # the validation sequences are the same for every run and seed

# The engine's generated text (core/engine/data/textdata.cpp), in words if not in bytes.
SUBJECTS = ("the old sailor|a quiet student|my neighbour|the tired engineer|a small dog|the teacher|every programmer|"
            "the cook|a stranger|the mayor|our team|the child").split("|")
VERBS = "found|lost|built|painted|remembered|carried|repaired|forgot|wrote|opened|measured|sold".split("|")
OBJECTS = ("a wooden boat|the broken clock|an old letter|the red door|a long poem|the garden wall|a new compiler|"
           "the heavy box|a bright lamp|the last train ticket").split("|")
ENDINGS = ("before the rain came|after a long day|in the middle of the night|without a word|because nobody else "
           "would|and smiled|on the way home|for the first time").split("|")


def generated_text(nbytes=1 << 20):
    pick = random.Random(20261129).choice
    parts, size = [], 0
    while size < nbytes:
        sentence = f"{pick(SUBJECTS)} {pick(VERBS)} {pick(OBJECTS)} {pick(ENDINGS)}."
        parts.append(sentence[0].upper() + sentence[1:] + ("\n" if pick(range(4)) == 0 else " "))
        size += len(parts[-1])
    return "".join(parts).encode()


def fortunes_text(folder="/usr/share/games/fortunes"):
    """Debian's fortunes without their '%' separator lines; empty when not installed."""
    if not os.path.isdir(folder):
        return b""
    text = bytearray()
    for name in sorted(os.listdir(folder)):  # no extension: *.dat are indexes, *.u8 the same text
        path = os.path.join(folder, name)
        if os.path.splitext(name)[1] or os.path.islink(path) or not os.path.isfile(path):
            continue
        with open(path, "rb") as f:
            lines = f.read().split(b"\n")
        if lines[-1] == b"":
            lines.pop()
        text += b"".join(line + b"\n" for line in lines if line != b"%")
    return bytes(text)


def load_tokens(a):
    """(train, validation) token ids, one byte per token for text, uint16 ids for nanoGPT's bins."""
    if a.corpus == "tokens":
        splits = []
        for name in ("train.bin", "val.bin"):
            with open(os.path.join(a.data, name), "rb") as f:
                data = bytearray(f.read())
            if len(data) % 2:
                sys.exit(f"train.py: {name} has an odd size; expected uint16 token ids as nanoGPT writes them")
            splits.append(torch.frombuffer(data, dtype=torch.int16).to(torch.int32) & 0xFFFF if data
                          else torch.zeros(0, dtype=torch.int32))
            if data and splits[-1].max().item() >= a.vocab:
                sys.exit(f"train.py: {name} holds id {splits[-1].max().item()}, not below --vocab {a.vocab}")
    else:
        if a.corpus == "text":
            with open(a.data, "rb") as f:
                text = f.read()
        else:
            text = fortunes_text() if a.corpus == "fortunes" else b""
            if not text:
                if a.corpus == "fortunes":
                    print("train.py: fortunes are not installed (apt-get install fortunes): generated text instead")
                text = generated_text()
        if not text:
            sys.exit(f"train.py: {a.data} is empty")
        ids = torch.frombuffer(bytearray(text), dtype=torch.uint8)
        cut = int(len(ids) * (1 - VALIDATION_FRACTION))
        splits = [ids[:cut], ids[cut:]]
    for split, ids in zip(("training", "validation"), splits):
        if len(ids) < a.context + 1:
            sys.exit(f"train.py: the {split} split holds {len(ids)} tokens, fewer than --context + 1")
    return splits


def batch(ids, sequences, context, generator, device):
    """(inputs, targets), each (sequences, context), from random offsets into ids."""
    offsets = torch.randint(0, len(ids) - context, (sequences,), generator=generator)
    rows = ids[offsets[:, None] + torch.arange(context + 1)].long().to(device)
    return rows[:, :-1], rows[:, 1:]


class Block(nn.Module):
    def __init__(self, width, heads):
        super().__init__()
        self.heads = heads
        self.ln1, self.ln2 = nn.LayerNorm(width), nn.LayerNorm(width)
        self.qkv, self.proj = nn.Linear(width, 3 * width), nn.Linear(width, width)
        self.fc, self.fc_proj = nn.Linear(width, 4 * width), nn.Linear(4 * width, width)

    def attention(self, x):
        B, T, C = x.shape
        qkv = self.qkv(x).view(B, T, 3, self.heads, C // self.heads).permute(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]
        return self.proj(self.attend(q, k, v).transpose(1, 2).reshape(B, T, C))

    def attend(self, q, k, v):  # (B, H, T, head width) each -> the same
        # The engine's naive attention: the (B, H, T, T) scores are kept for backward.
        T = q.shape[-2]
        scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
        future = torch.ones(T, T, dtype=torch.bool, device=q.device).triu(1)
        weights = torch.softmax(scores.masked_fill(future, float("-inf")), dim=-1)
        return weights @ v

    def forward(self, x):
        x = x + self.attention(self.ln1(x))
        return x + self.fc_proj(F.gelu(self.fc(self.ln2(x))))


class SdpaBlock(Block):
    # PyTorch 2.0's fused attention (the engine's memory.attention = "sdpa"): a FlashAttention or
    # memory-efficient kernel on CUDA keeps no (B, H, T, T) scores. A subclass rather than a flag,
    # so that TorchScript compiles it only where it is used: PyTorch 1.13 cannot compile the call.
    def attend(self, q, k, v):
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)


class GPT(nn.Module):
    def __init__(self, vocab, context, width, layers, heads, checkpointed=False, attention="naive"):
        super().__init__()
        self.checkpointed = checkpointed
        self.tokens, self.positions = nn.Embedding(vocab, width), nn.Embedding(context, width)
        block = SdpaBlock if attention == "sdpa" else Block
        self.blocks = nn.ModuleList(block(width, heads) for _ in range(layers))
        self.final_norm = nn.LayerNorm(width)
        # GPT-2's initialisation, as the engine's: N(0, 0.02), zero biases, residual projections
        # scaled by 1/sqrt(2L) so that the residual stream's variance does not grow with depth.
        for name, p in self.named_parameters():
            if name.startswith("final_norm") or ".ln" in name:
                continue  # LayerNorm keeps weight 1, bias 0
            if name.endswith("bias"):
                nn.init.zeros_(p)
            else:
                nn.init.normal_(p, 0.0, 0.02 / math.sqrt(2 * layers) if name.endswith("proj.weight") else 0.02)

    # embed, blocks and head are the TorchScript contract's optional parts (docs/torchscript.md):
    # with them the engine checkpoints a scripted copy of this model block by block.
    @torch.jit.export
    def embed(self, idx):  # (B, T) token ids -> (B, T, width)
        return self.tokens(idx) + self.positions(torch.arange(idx.shape[1], device=idx.device))

    @torch.jit.export
    def head(self, x):  # (B, T, width) -> (B, T, vocab) logits, the head tied to the token embedding
        return self.final_norm(x) @ self.tokens.weight.t()

    def forward(self, idx):  # (B, T) token ids -> (B, T, vocab) logits
        x = self.embed(idx)
        if self.checkpointed and self.training:
            x = self.checkpointed_blocks(x)
        else:
            for block in self.blocks:
                x = block(x)
        return self.head(x)

    @torch.jit.unused
    def checkpointed_blocks(self, x):
        # Reentrant checkpointing saves each block's input through autograd, where optlog's
        # saved-tensor count sees it; the non-reentrant kind hides its saves behind its own hooks.
        for block in self.blocks:
            x = checkpoint(block, x, use_reentrant=True)
        return x


def learning_rate(step, a):  # linear warm-up, then cosine decay to a tenth (the engine's schedule)
    if step < a.warmup:
        return a.lr * (step + 1) / a.warmup
    progress = min(1.0, (step - a.warmup) / max(1, a.steps - 1 - a.warmup))
    return a.lr / 10 + 0.5 * (1 + math.cos(math.pi * progress)) * (a.lr - a.lr / 10)


def sdpa_refusal():
    """Why --attention sdpa cannot run on this PyTorch; None when it can."""
    if hasattr(F, "scaled_dot_product_attention"):
        return None
    return (f"--attention sdpa needs PyTorch 2.0 or newer (scaled_dot_product_attention); this is PyTorch "
            f"{torch.__version__}: use --attention naive")


def fused_refusal(device):
    """Why --fused cannot run on `device` with this PyTorch, in AdamW's own words; None when it can.
    Fused AdamW came with PyTorch 2.0 for CUDA and 2.4 for the CPU."""
    probe = torch.zeros(1, device=device, requires_grad=True)  # a missing device fails here, as itself
    try:
        torch.optim.AdamW([probe], fused=True)
        return None
    except (TypeError, RuntimeError) as e:  # TypeError: no such argument (1.13); RuntimeError: not on this device
        return (f"--fused: PyTorch {torch.__version__} has no fused AdamW on {device} (it needs 2.0 on CUDA, 2.4 on "
                f"the CPU; AdamW says: {e}); leave out --fused for PyTorch's default AdamW")


def arguments():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--study", required=True, help="the optlog study to record into (created if new)")
    p.add_argument("--name", help="the run's name in the study; default: precision, seed and time")
    p.add_argument("--group", help="replicates over seeds share a group; default: the run's name")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--steps", type=int, default=300)
    p.add_argument("--microbatch", type=int, default=8, help="sequences per forward/backward")
    p.add_argument("--accumulation", type=int, default=1, help="microbatches per optimizer step")
    p.add_argument("--context", type=int, default=128, help="tokens per sequence")
    p.add_argument("--width", type=int, default=256)
    p.add_argument("--layers", type=int, default=4)
    p.add_argument("--heads", type=int, default=4)
    p.add_argument("--vocab", type=int, default=256, help="256 for bytes; more for --corpus tokens")
    p.add_argument("--lr", type=float, default=1e-3, help="peak learning rate, after warm-up")
    p.add_argument("--warmup", type=int, default=20, help="optimizer steps of linear learning-rate warm-up")
    p.add_argument("--eval-interval", type=int, default=50, help="optimizer steps between validations")
    p.add_argument("--eval-sequences", type=int, default=32)
    p.add_argument("--precision", choices=["fp32", "autocast-bf16", "autocast-fp16"], default="fp32")
    p.add_argument("--checkpoint", action="store_true", help="recompute each block's activations in backward")
    p.add_argument("--attention", choices=["naive", "sdpa"], default="naive",
                   help="naive: the engine's, keeping the (B, H, T, T) scores; sdpa: scaled_dot_product_attention "
                        "(PyTorch 2.0+)")
    p.add_argument("--fused", action="store_true", help="AdamW as one multi-tensor kernel (fused=True)")
    p.add_argument("--tf32", action="store_true", help="FP32 matrix products on TF32 tensor cores (CUDA, Ampere+)")
    p.add_argument("--device", choices=["cpu", "cuda", "mps"], default="cpu")
    p.add_argument("--corpus", choices=["fortunes", "generated", "text", "tokens"], default="fortunes")
    p.add_argument("--data", help="the text file (--corpus text) or folder of train.bin, val.bin (tokens)")
    p.add_argument("--threads", type=int, default=0, help="intra-op threads; 0: PyTorch's default")
    a = p.parse_args()
    if a.precision == "autocast-fp16" and a.device != "cuda":
        p.error("--precision autocast-fp16 needs --device cuda: its loss scaler (GradScaler) is CUDA's; "
                "use autocast-bf16 elsewhere")
    if a.tf32 and a.device != "cuda":
        p.error("--tf32 needs --device cuda: TF32 is a tensor-core format of NVIDIA GPUs (Ampere and newer); "
                f"{'the CPU' if a.device == 'cpu' else a.device.upper()} has none")
    if a.attention == "sdpa" and sdpa_refusal():
        p.error(sdpa_refusal())
    if a.fused and fused_refusal(a.device):
        p.error(fused_refusal(a.device))
    if a.corpus in ("text", "tokens") and not a.data:
        p.error(f"--corpus {a.corpus} needs --data")
    if a.width % a.heads:
        p.error(f"--width {a.width} is not divisible by --heads {a.heads}")
    return a


def main():
    a = arguments()
    if a.threads > 0:
        torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    device = torch.device(a.device)
    if a.tf32:  # FP32 matrix products may round their inputs to TF32's 10-bit mantissa, as the engine's precision.tf32
        torch.backends.cuda.matmul.allow_tf32 = True
        torch.backends.cudnn.allow_tf32 = True
    train_ids, val_ids = load_tokens(a)
    model = GPT(a.vocab, a.context, a.width, a.layers, a.heads, a.checkpoint, a.attention).to(device)
    matrices = [p for p in model.parameters() if p.dim() >= 2]
    others = [p for p in model.parameters() if p.dim() < 2]
    optimizer = torch.optim.AdamW([{"params": matrices, "weight_decay": 0.1}, {"params": others, "weight_decay": 0.0}],
                                  lr=a.lr, betas=(0.9, 0.95), eps=1e-8,
                                  **({"fused": True} if a.fused else {}))  # PyTorch 1.13's AdamW has no `fused`
    fp16 = a.precision == "autocast-fp16"
    scaler = (torch.amp.GradScaler("cuda", enabled=fp16) if hasattr(torch.amp, "GradScaler")  # PyTorch 2.3+
              else torch.cuda.amp.GradScaler(enabled=fp16))
    batches = torch.Generator().manual_seed(a.seed)
    evals = torch.Generator().manual_seed(EVAL_SEED)
    eval_set = [batch(val_ids, min(a.microbatch, a.eval_sequences - i), a.context, evals, device)
                for i in range(0, a.eval_sequences, a.microbatch)]
    tokens_per_step = a.microbatch * a.accumulation * a.context

    def loss_of(x, y):  # mean cross-entropy in nats per token, on float32 logits as the engine's
        with (torch.autocast(device.type, dtype=torch.float16 if fp16 else torch.bfloat16)
              if a.precision != "fp32" else contextlib.nullcontext()):  # PyTorch 1.13 has no autocast on MPS
            logits = model(x)
        return F.cross_entropy(logits.float().flatten(0, 1), y.flatten(), reduction="none").view(y.shape)

    def train_step(step):
        lr = learning_rate(step, a)
        for group in optimizer.param_groups:
            group["lr"] = lr
        optimizer.zero_grad(set_to_none=True)
        loss = torch.zeros((), device=device)
        for _ in range(a.accumulation):
            micro = loss_of(*batch(train_ids, a.microbatch, a.context, batches, device)).mean() / a.accumulation
            scaler.scale(micro).backward()
            loss += micro.detach()
        scaler.unscale_(optimizer)  # clipping reads true gradients, not scaled ones
        grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        scale = scaler.get_scale() if fp16 else None
        scaler.step(optimizer)
        scaler.update()
        skipped = fp16 and scaler.get_scale() < scale  # the scaler lowers its scale when it skips
        return loss.item(), grad_norm, lr, scale, skipped  # loss.item(): the step's host read

    @torch.no_grad()
    def validate():
        model.eval()
        per_sequence = torch.cat([loss_of(x, y).mean(dim=1).double() for x, y in eval_set])
        model.train()
        spread = per_sequence.std().item() if len(per_sequence) > 1 else 0.0
        return per_sequence.mean().item(), spread, len(per_sequence)

    name = a.name or f"pytorch {a.precision} s{a.seed} {time.strftime('%Y-%m-%d %H:%M:%S')}"
    message = f"{sum(p.numel() for p in model.parameters())} parameters, {a.corpus} corpus, PyTorch {torch.__version__}"
    # The config is the trainer's own flags: `optlog runs --filter precision:autocast-bf16` reads them.
    config = {key: value for key, value in vars(a).items() if key not in ("study", "name", "group")}
    # The same GPT in the engine's config keys: optlog's memory model predicts its memory, stored
    # beside what run.memory measures.
    engine_config = {"model.vocab_size": a.vocab, "model.context_length": a.context, "model.width": a.width,
                     "model.layers": a.layers, "model.heads": a.heads, "train.microbatch": a.microbatch,
                     "train.accumulation": a.accumulation, "precision.mode": a.precision,
                     "memory.checkpoint_every": 1 if a.checkpoint else 0, "memory.attention": a.attention,
                     "precision.tf32": a.tf32, "runtime.device": a.device}
    with optlog.Run(a.study, name=name, group=a.group, config=config, steps=a.steps, device=device,
                    message=message, engine_config=engine_config) as run:
        for step in range(a.steps):
            started = time.perf_counter()
            if step == min(MEASURED_STEP, a.steps - 1):
                # The measured step is this training step itself, recorded below like every other,
                # so the run trains exactly the steps an engine run of its config does; its time
                # includes the profiler's.
                loss, grad_norm, lr, scale, skipped = run.memory(model, optimizer, step=lambda: train_step(step))
            else:
                loss, grad_norm, lr, scale, skipped = train_step(step)
            run.step(step, loss, tokens=(step + 1) * tokens_per_step, lr=lr, grad_norm=grad_norm, loss_scale=scale,
                     skipped=skipped, step_seconds=time.perf_counter() - started)
            if not math.isfinite(loss):
                print(f"train.py: the training loss became {loss} at step {step}; stopping", file=sys.stderr)
                break  # the run's outcome says diverged
            if (step + 1) % a.eval_interval == 0 or step + 1 == a.steps:
                val_loss, spread, sequences = validate()
                run.validation(val_loss, sequences=sequences, sequence_sd=spread)
                print(f"step {step + 1}/{a.steps}: train {loss:.4f}, validation {val_loss:.4f}")


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:  # the study already says cancelled; no traceback for a Ctrl-C
        sys.exit("train.py: interrupted")
