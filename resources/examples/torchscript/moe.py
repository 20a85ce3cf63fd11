# SPDX-License-Identifier: MIT
"""A mixture-of-experts language model: a retention-style token mixer (causal linear attention
with a per-head decay, a group norm and a SiLU gate) and a top-2 of 4 experts MLP, each expert run
on the tokens routed to it. How many tokens each expert gets depends on the data and changes every
step, so its activations are not a fixed function of the shape: optlog's probes measure how much
they vary (docs/memory-model.md). Written to the TorchScript contract (docs/torchscript.md):
forward(idx) -> logits, with embed, blocks and head so that the engine can checkpoint its blocks.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class Retention(nn.Module):
    """Causal attention without a softmax: each head weighs a past position by its decay to the
    power of the distance, so its (heads, T, T) decay matrix depends on the context, not the batch."""

    def __init__(self, width: int, heads: int):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(width, 3 * width, bias=False)
        self.gate = nn.Linear(width, width, bias=False)
        self.proj = nn.Linear(width, width, bias=False)
        self.norm = nn.GroupNorm(heads, width)
        # One decay per head, from fast to slow forgetting: a buffer, never trained.
        self.register_buffer("log_decay", torch.log(1 - 2.0 ** (-5.0 - torch.arange(heads).float())))

    def forward(self, x):
        B, T, C = x.shape
        head_width = C // self.heads
        qkv = self.qkv(x).view(B, T, 3, self.heads, head_width).permute(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]
        position = torch.arange(T, device=x.device, dtype=torch.float32)
        distance = position[:, None] - position[None, :]
        decay = torch.exp(distance[None] * self.log_decay[:, None, None]).masked_fill(distance[None] < 0, 0.0)
        scores = (q @ k.transpose(-2, -1)) * (decay.to(q.dtype) / math.sqrt(head_width))
        mixed = (scores @ v).transpose(1, 2).reshape(B * T, C)
        # In the norm's own dtype: under autocast its weights stay FP32 while the mixer computes in 16 bits.
        mixed = self.norm(mixed.to(self.norm.weight.dtype)).view(B, T, C)
        return self.proj(F.silu(self.gate(x)) * mixed)


class Expert(nn.Module):
    def __init__(self, width: int):
        super().__init__()
        self.up = nn.Linear(width, 2 * width, bias=False)
        self.down = nn.Linear(2 * width, width, bias=False)

    def forward(self, x):
        return self.down(F.gelu(self.up(x)))


class TopTwoExperts(nn.Module):
    """A softmax router picks two of four experts per token; each expert runs on its own tokens
    (index_select) and its outputs, weighted by the router, are added back in place (index_add)."""

    def __init__(self, width: int, experts: int = 4, chosen: int = 2):
        super().__init__()
        self.chosen = chosen
        self.router = nn.Linear(width, experts, bias=False)
        self.experts = nn.ModuleList([Expert(width) for _ in range(experts)])

    def forward(self, x):
        B, T, C = x.shape
        flat = x.reshape(B * T, C)
        weights, picked = torch.softmax(self.router(flat), dim=-1).topk(self.chosen, dim=-1)
        weights = weights / weights.sum(-1, keepdim=True)
        out = torch.zeros_like(flat)
        for e, expert in enumerate(self.experts):
            routed = (picked == e).nonzero()
            token, slot = routed[:, 0], routed[:, 1]
            weight = weights[token, slot].unsqueeze(-1)
            # Under autocast the expert computes in 16 bits: its share is added back in the stream's dtype.
            out = out.index_add(0, token, (expert(flat.index_select(0, token)) * weight).to(out.dtype))
        return out.view(B, T, C)


class Block(nn.Module):
    def __init__(self, width: int, heads: int):
        super().__init__()
        self.norm1, self.norm2 = nn.LayerNorm(width), nn.LayerNorm(width)
        self.mixer = Retention(width, heads)
        self.experts = TopTwoExperts(width)

    def forward(self, x):
        x = x + self.mixer(self.norm1(x))
        return x + self.experts(self.norm2(x))


class MixtureGPT(nn.Module):
    def __init__(self, vocab: int, width: int, layers: int, heads: int):
        super().__init__()
        self.tokens = nn.Embedding(vocab, width)
        self.blocks = nn.ModuleList([Block(width, heads) for _ in range(layers)])
        self.final_norm = nn.LayerNorm(width)
        self.output = nn.Linear(width, vocab, bias=False)
        for name, p in self.named_parameters():
            if p.dim() == 2:
                scale = 0.02 / math.sqrt(2 * layers) if name.endswith(("proj.weight", "down.weight")) else 0.02
                nn.init.normal_(p, 0.0, scale)

    @torch.jit.export
    def embed(self, idx):
        return self.tokens(idx)

    @torch.jit.export
    def head(self, x):
        return self.output(self.final_norm(x))

    def forward(self, idx):
        x = self.embed(idx)
        for block in self.blocks:
            x = block(x)
        return self.head(x)
