# SPDX-License-Identifier: MIT
"""Memory predictions for a mixture of experts, on configs the probes never saw. Debian's
python3-torch scripts the example (resources/examples/torchscript/moe.py: a retention-style mixer
and a top-2 of 4 experts MLP) at width 128, 3 blocks, 4 heads; fourteen configs drawn from a fixed
seed over microbatch 1-16, context 32-128, every CPU precision mode, checkpointing and accumulation
each train 4 steps with a real `optlog run`, sharing one probe cache as a user's runs do, and the
run's stored prediction is set beside its measured peak. A module whose memory depends on its data
(ReLU routing: each token goes to every expert whose router logit is positive, so how many tokens
the experts run on changes with the batch) says so in `optlog estimate` and in the run's stored
prediction, and its run's peak is covered. CTest sets OPTLOG and OPTLOG_SOURCE_DIR."""
import json
import os
import random
import sqlite3
import subprocess
import sys
import tempfile
import unittest

import torch
import torch.nn as nn
import torch.nn.functional as F

OPTLOG = os.environ.get("OPTLOG", "optlog")
SOURCE = os.environ.get("OPTLOG_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
SCRIPT = os.path.join(SOURCE, "resources", "examples", "torchscript", "script_model.py")
VARIES = "this module's memory varies with its data"


class ReluRoutedExperts(nn.Module):
    """Every expert whose router logit is positive takes the token: the routed count is the data's.
    A residual block, as the contract's blocks are."""

    def __init__(self, width: int, experts: int = 4):
        super().__init__()
        self.router = nn.Linear(width, experts, bias=False)
        nn.init.normal_(self.router.weight, 0.0, 1.0)  # decided by the token, not near a tie
        self.experts = nn.ModuleList([nn.Sequential(nn.Linear(width, 4 * width), nn.GELU(),
                                                    nn.Linear(4 * width, width)) for _ in range(experts)])

    def forward(self, x):
        B, T, C = x.shape
        flat = x.reshape(B * T, C)
        gates = F.relu(self.router(flat))
        out = torch.zeros_like(flat)
        for e, expert in enumerate(self.experts):
            token = (gates[:, e] > 0).nonzero().squeeze(1)
            share = gates.index_select(0, token)[:, e].unsqueeze(-1)
            out = out.index_add(0, token, (expert(flat.index_select(0, token)) * share).to(out.dtype))
        return x + out.view(B, T, C)


class ReluMoE(nn.Module):
    def __init__(self, vocab: int = 256, width: int = 64, layers: int = 2):
        super().__init__()
        self.tokens = nn.Embedding(vocab, width)
        self.blocks = nn.ModuleList([ReluRoutedExperts(width) for _ in range(layers)])
        self.output = nn.Linear(width, vocab, bias=False)

    @torch.jit.export
    def embed(self, idx):
        return self.tokens(idx)

    @torch.jit.export
    def head(self, x):
        return self.output(x)

    def forward(self, idx):
        x = self.embed(idx)
        for block in self.blocks:
            x = block(x)
        return self.head(x)


def held_out_configs(seed, count):
    draw = random.Random(seed)
    return [{"train.microbatch": draw.choice([1, 2, 3, 4, 6, 8, 12, 16]),
             "model.context_length": draw.choice([32, 48, 64, 80, 96, 128]),
             "precision.mode": draw.choice(["fp32", "autocast-bf16", "master-bf16", "pure-bf16"]),
             "memory.checkpoint_every": draw.choice([0, 1]),
             "train.accumulation": draw.choice([1, 1, 2, 4])} for _ in range(count)]


class MixtureOfExpertsMemory(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.TemporaryDirectory()
        # Probes of our own, never a user's cached ones, and no minute of thread tuning per mode.
        cls.env = dict(os.environ, XDG_CACHE_HOME=os.path.join(cls.dir.name, "cache"), OPTLOG_PROBE_UNTUNED="0")

    @classmethod
    def tearDownClass(cls):
        cls.dir.cleanup()

    def path(self, name):
        return os.path.join(self.dir.name, name)

    def run_optlog(self, *arguments):
        done = subprocess.run([OPTLOG, *arguments], env=self.env, capture_output=True, text=True, timeout=600)
        self.assertEqual(done.returncode, 0, f"optlog {' '.join(arguments)}: {done.stderr}")
        return done.stdout

    def trained(self, module, study, settings):
        command = ["run", "--db", study, "--set", "model.source=torchscript", "--set", f"model.path={module}",
                   "--set", "data.corpus=generated", "--set", "train.steps=4"]
        for key, value in settings.items():
            command += ["--set", f"{key}={value}"]
        self.run_optlog(*command)
        with sqlite3.connect(study) as db:
            peak = dict(db.execute("SELECT source, bytes FROM memory WHERE role = 'peak' AND rank = 0"))
            environment = json.loads(db.execute("SELECT environment FROM runs").fetchone()[0])
        return peak["predicted"], peak["measured"], environment["memory_prediction"]["activations_from"]

    def test_held_out_configs_of_the_example_are_within_five_percent(self):
        module = self.path("moe.pt")
        subprocess.run([sys.executable, SCRIPT, "moe", module, "--width", "128", "--layers", "3", "--heads", "4"],
                       check=True, capture_output=True)
        errors, lines = [], []
        for i, settings in enumerate(held_out_configs(seed=75, count=14)):
            predicted, measured, _ = self.trained(module, self.path(f"grid-{i}.optlog"), settings)
            errors.append((predicted - measured) / measured)
            lines.append(f"{settings}: predicted {predicted}, measured {measured}, {100 * errors[-1]:+.1f}%")
        report = "\n".join(lines)
        print(report, file=sys.stderr)
        within = sum(abs(e) <= 0.05 for e in errors)
        self.assertGreaterEqual(within, 13, f"{within} of 14 within 5%:\n{report}")  # at least 90%
        self.assertLessEqual(max(abs(e) for e in errors), 0.10, report)

    def test_memory_that_varies_with_the_data_is_named_and_covered(self):
        module = self.path("relu_moe.pt")
        torch.manual_seed(3)
        torch.jit.script(ReluMoE()).save(module)
        settings = {"train.microbatch": 4, "model.context_length": 64}
        command = ["estimate", "--set", "model.source=torchscript", "--set", f"model.path={module}",
                   "--set", "data.corpus=generated"]
        for key, value in settings.items():
            command += ["--set", f"{key}={value}"]
        estimate = json.loads(self.run_optlog(*command, "--json"))
        self.assertIn(VARIES, estimate["activations_from"])
        self.assertRegex(estimate["activations_from"], r"±\d+\.\d% over 4 batches at this shape \(2 x 64 tokens\)")
        self.assertIn(VARIES, self.run_optlog(*command))  # the terminal's words too
        predicted, measured, stored = self.trained(module, self.path("relu.optlog"), settings)
        self.assertIn(VARIES, stored)
        self.assertEqual(predicted, estimate["peak_bytes"])
        self.assertGreaterEqual(predicted, measured * 0.99, "the worst batch seen covers the run's")

    def test_memory_that_does_not_vary_is_not_said_to(self):
        module = self.path("rotary.pt")
        subprocess.run([sys.executable, SCRIPT, "rotary", module, "--width", "32", "--layers", "2", "--heads", "2"],
                       check=True, capture_output=True)
        estimate = json.loads(self.run_optlog("estimate", "--set", "model.source=torchscript", "--set",
                                              f"model.path={module}", "--set", "data.corpus=generated",
                                              "--set", "model.context_length=32", "--json"))
        self.assertNotIn(VARIES, estimate["activations_from"])


if __name__ == "__main__":
    unittest.main()
