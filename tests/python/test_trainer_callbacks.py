# SPDX-License-Identifier: MIT
"""optlog's callbacks for the trainers people already log from, with the real packages from PyPI
(packaging/pytorch.sh installs them beside PyPI's torch): PyTorch Lightning's Trainer and the
Hugging Face Trainer each train a tiny language model with nothing added but the callback, into a
study through a real `optlog record`, and `optlog compare` judges the runs. CTest sets OPTLOG and
OPTLOG_SOURCE_DIR; PYTHONPATH holds app/python."""
import json
import os
import subprocess
import sys
import tempfile
import tomllib
import unittest

OPTLOG = os.environ.get("OPTLOG", "optlog")

LIGHTNING = r'''
import sys
import lightning, torch
from optlog.lightning import OptlogCallback

study, name, seed, precision = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
lightning.seed_everything(seed)
torch.set_num_threads(1)

class TinyLm(lightning.LightningModule):
    def __init__(self, width=32, vocab=64):
        super().__init__()
        self.save_hyperparameters()
        self.embed = torch.nn.Embedding(vocab, width)
        self.mix = torch.nn.Linear(width, width)
        self.head = torch.nn.Linear(width, vocab)

    def loss(self, batch):
        x, y = batch
        logits = self.head(torch.relu(self.mix(self.embed(x))))
        return torch.nn.functional.cross_entropy(logits.float().reshape(-1, logits.size(-1)), y.reshape(-1))

    def training_step(self, batch, batch_idx):
        return self.loss(batch)

    def validation_step(self, batch, batch_idx):
        self.log("val_loss", self.loss(batch))

    def configure_optimizers(self):
        return torch.optim.AdamW(self.parameters(), lr=1e-2)

tokens = torch.randint(0, 64, (64, 17), generator=torch.Generator().manual_seed(0))
data = torch.utils.data.TensorDataset(tokens[:, :-1], tokens[:, 1:])
loader = lambda: torch.utils.data.DataLoader(data, batch_size=4)
trainer = lightning.Trainer(max_steps=12, accelerator="cpu", precision=precision, accumulate_grad_batches=2,
                            val_check_interval=12, check_val_every_n_epoch=None, limit_val_batches=2,
                            logger=False, enable_checkpointing=False, enable_progress_bar=False,
                            enable_model_summary=False,
                            callbacks=[OptlogCallback(study, name, group=name.split()[0], seed=seed)])
trainer.fit(TinyLm(), loader(), loader())
'''

TRANSFORMERS = r'''
import sys
import torch, transformers
from optlog.transformers import OptlogCallback

study, name, seed, bf16, output = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4] == "bf16", sys.argv[5]
torch.set_num_threads(1)
transformers.set_seed(seed)
model = transformers.GPT2LMHeadModel(transformers.GPT2Config(vocab_size=64, n_positions=16, n_embd=32, n_layer=1,
                                                             n_head=2))
tokens = torch.randint(0, 64, (64, 16), generator=torch.Generator().manual_seed(0))
rows = [{"input_ids": t, "labels": t} for t in tokens]
args = transformers.TrainingArguments(output_dir=output, max_steps=12, per_device_train_batch_size=4,
                                      gradient_accumulation_steps=2, learning_rate=1e-3, eval_strategy="steps",
                                      eval_steps=6, per_device_eval_batch_size=8, save_strategy="no", report_to=[],
                                      use_cpu=True, seed=seed, bf16=bf16, disable_tqdm=True, logging_strategy="no",
                                      dataloader_num_workers=0)
trainer = transformers.Trainer(model=model, args=args, train_dataset=rows, eval_dataset=rows[:16],
                               callbacks=[OptlogCallback(study, name, group="bf16" if bf16 else "fp32")])
trainer.train()
'''


def config(run):
    return tomllib.loads(run["config_toml"])


def optlog(*args):
    done = subprocess.run([OPTLOG, *args], capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        raise AssertionError(f"optlog {' '.join(args)} exited {done.returncode}: {done.stderr}")
    return done.stdout


class TrainerCallbacks(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        optlog("tune", "--peak-only", "--threads", "1")  # the peak MFU divides by

    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.study = os.path.join(self.dir.name, "callbacks.sqlite")

    def tearDown(self):
        self.dir.cleanup()

    def train(self, script, *args):
        done = subprocess.run([sys.executable, "-c", script, self.study, *args], capture_output=True, text=True,
                              timeout=600)
        self.assertEqual(done.returncode, 0, done.stderr[-3000:])
        self.assertNotIn("optlog:", done.stderr)  # nothing was lost
        self.assertNotIn("CPUAllocator", done.stderr)
        return done

    def judged(self, steps, microbatch_tokens):
        """Every run as the callback recorded it, and `optlog compare`'s verdicts over them."""
        runs = {r["name"]: r for r in json.loads(optlog("export", self.study, "--format", "json"))["runs"]}
        for name, run in runs.items():
            self.assertEqual(run["outcome"], "completed", name)
            self.assertEqual([m["step"] for m in run["metrics"]], list(range(steps)), name)
            # Two microbatches a step, every token counted.
            self.assertEqual(run["metrics"][-1]["tokens"], steps * 2 * microbatch_tokens, name)
            self.assertEqual(len(run["validation"]), 2, name)
            measured = {m["role"]: m for m in run["memory"] if m["source"] == "measured"}
            for role in ("parameters", "gradients", "optimizer_state", "saved_activations", "peak"):
                self.assertGreater(measured[role]["bytes"], 0, f"{name}: {role}")
            self.assertEqual(measured["optimizer_state"]["bytes"], 2 * measured["parameters"]["bytes"], name)
            self.assertEqual(run["environment"]["model_flops"]["how"], "counted", name)
        compared = optlog("compare", self.study, "--baseline", "fp32")
        report = os.path.join(self.dir.name, "report.json")
        optlog("report", self.study, "--baseline", "fp32", "--format", "json", "-o", report)
        with open(report, encoding="utf-8") as file:
            groups = {g["name"]: g for g in json.load(file)["groups"]}
        for name, group in groups.items():
            self.assertGreater(group["mfu"], 0, name)
            self.assertNotIn("different machines", group["verdict"], name)
        return runs, groups, compared

    def test_lightning(self):
        for name, seed, precision in (("fp32 s1", 1, "32-true"), ("fp32 s2", 2, "32-true"),
                                      ("bf16 s1", 1, "bf16-mixed")):
            self.train(LIGHTNING, name, str(seed), precision)
        runs, groups, compared = self.judged(steps=12, microbatch_tokens=4 * 16)
        self.assertEqual(config(runs["fp32 s1"])["trainer"]["accumulate_grad_batches"], 2)
        self.assertEqual(config(runs["bf16 s1"])["trainer"]["precision"], "bf16-mixed")
        self.assertEqual(runs["bf16 s1"]["dtypes"]["compute"], "bfloat16")
        self.assertEqual(runs["fp32 s1"]["dtypes"]["compute"], "float32")
        self.assertIn("bf16", compared)
        self.assertEqual(groups["fp32"]["seeds"], 2)

    def test_hugging_face_trainer(self):
        for name, seed, precision in (("fp32 s1", 1, "fp32"), ("fp32 s2", 2, "fp32"), ("bf16 s1", 1, "bf16")):
            self.train(TRANSFORMERS, name, str(seed), precision, os.path.join(self.dir.name, "out"))
        runs, groups, compared = self.judged(steps=12, microbatch_tokens=4 * 16)
        self.assertEqual(config(runs["fp32 s2"])["trainer"]["seed"], 2)
        self.assertEqual(runs["bf16 s1"]["dtypes"]["compute"], "bfloat16")
        self.assertIn("bf16", compared)
        self.assertEqual(groups["fp32"]["seeds"], 2)


if __name__ == "__main__":
    unittest.main()
