# SPDX-License-Identifier: MIT
"""A language model optlog's built-in GPT cannot express: rotary position embeddings in the
attention instead of a position table, RMSNorm instead of LayerNorm, a gated (SwiGLU) MLP, and an
untied head. Written to the TorchScript contract (docs/torchscript.md): forward(idx) -> logits,
with embed, blocks and head so that the engine can checkpoint its blocks.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class RMSNorm(nn.Module):
    def __init__(self, width: int, eps: float = 1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(width))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def rotate(x, cos, sin):
    """Rotates each pair of channels (first half, second half) of q or k by its position's angle."""
    half = x.shape[-1] // 2
    x1, x2 = x[..., :half], x[..., half:]
    return torch.cat((x1 * cos - x2 * sin, x1 * sin + x2 * cos), dim=-1)


class RotaryBlock(nn.Module):
    def __init__(self, width: int, heads: int):
        super().__init__()
        self.heads = heads
        head_width = width // heads
        # The angles' frequencies, a buffer: saved with the module, cast with it, never trained.
        self.register_buffer("frequencies", 1.0 / 10000 ** (torch.arange(0, head_width, 2).float() / head_width))
        self.norm1, self.norm2 = RMSNorm(width), RMSNorm(width)
        self.qkv = nn.Linear(width, 3 * width, bias=False)
        self.proj = nn.Linear(width, width, bias=False)
        hidden = 4 * width * 2 // 3  # the gated MLP's three matrices cost what a 4x MLP's two do
        self.gate, self.up = nn.Linear(width, hidden, bias=False), nn.Linear(width, hidden, bias=False)
        self.down = nn.Linear(hidden, width, bias=False)

    def attention(self, x):
        B, T, C = x.shape
        qkv = self.qkv(x).view(B, T, 3, self.heads, C // self.heads).permute(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]
        angles = torch.arange(T, device=x.device, dtype=torch.float32)[:, None] * self.frequencies.float()[None, :]
        cos, sin = angles.cos().to(q.dtype), angles.sin().to(q.dtype)
        q, k = rotate(q, cos, sin), rotate(k, cos, sin)
        scores = q @ k.transpose(-2, -1) / math.sqrt(C // self.heads)
        future = torch.ones(T, T, dtype=torch.bool, device=x.device).triu(1)
        weights = torch.softmax(scores.masked_fill(future, float("-inf")), dim=-1)
        return self.proj((weights @ v).transpose(1, 2).reshape(B, T, C))

    def forward(self, x):
        x = x + self.attention(self.norm1(x))
        h = self.norm2(x)
        return x + self.down(F.silu(self.gate(h)) * self.up(h))


class RotaryGPT(nn.Module):
    def __init__(self, vocab: int, width: int, layers: int, heads: int):
        super().__init__()
        self.tokens = nn.Embedding(vocab, width)
        self.blocks = nn.ModuleList([RotaryBlock(width, heads) for _ in range(layers)])
        self.final_norm = RMSNorm(width)
        self.output = nn.Linear(width, vocab, bias=False)
        for name, p in self.named_parameters():
            if "norm" not in name:
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
