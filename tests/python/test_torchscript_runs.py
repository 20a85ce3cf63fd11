# SPDX-License-Identifier: MIT
"""Your own model on the engine, end to end: Debian's python3-torch scripts the examples
(resources/examples/torchscript), a real `optlog run` trains them with each technique, and
PyTorch reads the final weights back. A module that breaks the contract is refused with exit 2
and no study. CTest sets OPTLOG (the binary) and OPTLOG_SOURCE_DIR."""
import glob
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import unittest

import torch

OPTLOG = os.environ.get("OPTLOG", "optlog")
SOURCE = os.environ.get("OPTLOG_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
SCRIPT = os.path.join(SOURCE, "resources", "examples", "torchscript", "script_model.py")
SHAPE = ["--width", "32", "--layers", "2", "--heads", "2", "--context", "32"]


def run(study, module, name, *settings, check=True):
    command = [OPTLOG, "run", "--db", study, "--preset", "smoke", "--set", f"name={name}",
               "--set", "data.corpus=generated", "--set", "model.source=torchscript", "--set", f"model.path={module}",
               "--set", "model.context_length=32", "--set", "train.steps=8", "--set", "memory.warmup_steps=2"]
    for setting in settings:
        command += ["--set", setting]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300)
    if check and done.returncode != 0:
        raise AssertionError(f"{name}: optlog run exited {done.returncode}: {done.stderr}")
    return done


def runs(study):
    done = subprocess.run([OPTLOG, "export", study, "--format", "json"], capture_output=True, text=True, check=True)
    return {r["name"]: r for r in json.loads(done.stdout)["runs"]}


class TorchScriptRuns(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.TemporaryDirectory()
        cls.modules = {}
        for model in ("gpt", "rotary"):
            path = os.path.join(cls.dir.name, model + ".pt")
            subprocess.run([sys.executable, SCRIPT, model, path, *SHAPE], check=True, capture_output=True)
            cls.modules[model] = path

    @classmethod
    def tearDownClass(cls):
        cls.dir.cleanup()

    def study(self, name):
        return os.path.join(self.dir.name, name + ".sqlite")

    def test_every_technique_trains_it_and_pytorch_reads_the_final_weights(self):
        study = self.study("techniques")
        techniques = {
            "fp32": [],
            "autocast-bf16": ["precision.mode=autocast-bf16"],
            "master-bf16": ["precision.mode=master-bf16"],
            "pure-bf16": ["precision.mode=pure-bf16"],
            "accumulation": ["train.microbatch=2", "train.accumulation=2"],
            "checkpointing": ["memory.checkpoint_every=1"],
            "zero-1 over 2 ranks": ["distributed.ranks=2", "distributed.zero_stage=1"],
        }
        for model, module in self.modules.items():
            for name, settings in techniques.items():
                run(study, module, f"{model} {name}", *settings)
        initial = {model: dict(torch.jit.load(path).named_parameters()) for model, path in self.modules.items()}
        stored = runs(study)
        for model in self.modules:
            for name in techniques:
                record = stored[f"{model} {name}"]
                self.assertEqual(record["outcome"], "completed")
                weights = "bfloat16" if name in ("master-bf16", "pure-bf16") else "float32"
                self.assertEqual(record["dtypes"]["weights"], weights)
                sixteen = name in ("autocast-bf16", "master-bf16", "pure-bf16")
                self.assertEqual(record["dtypes"]["compute"], "bfloat16" if sixteen else "float32")
                predicted = {m["role"]: m["bytes"] for m in record["memory"] if m["source"] == "predicted"}
                measured = {m["role"]: m["bytes"] for m in record["memory"] if m["source"] == "measured"}
                for role in ("parameters", "gradients", "optimizer_state"):
                    self.assertEqual(predicted[role], measured[role], f"{model} {name}: {role}")
                self.assertEqual(record["environment"]["torchscript_model"]["blocks"], 2)
                final = glob.glob(f"{study}.weights/run-{record['id']}/final.pt")
                self.assertEqual(len(final), 1, f"{model} {name}")
                trained = torch.jit.load(final[0])
                changed = [n for n, p in trained.named_parameters()
                           if not torch.equal(p.float(), initial[model][n].float())]
                # Pure BF16 loses updates below half a BF16 step (the numerics diagnostics' vanishing
                # updates): in 8 warm-up steps a small tensor can keep every value.
                expected = len(initial[model]) if name != "pure-bf16" else 0.75 * len(initial[model])
                self.assertGreaterEqual(len(changed), expected, f"{model} {name}: the parameters trained")
                self.assertEqual(trained(torch.zeros(1, 32, dtype=torch.long)).shape, (1, 32, 256))

    def test_a_module_that_breaks_the_contract_is_refused_before_the_study_exists(self):
        truncated = os.path.join(self.dir.name, "truncated.pt")
        with open(self.modules["gpt"], "rb") as whole, open(truncated, "wb") as part:
            part.write(whole.read()[:1000])
        study = self.study("refused")
        for module, settings, says in (
                (truncated, [], "is not a TorchScript file"),
                (self.modules["gpt"], ["model.vocab_size=300"], "has a vocabulary of 256 tokens"),
                (self.modules["gpt"], ["model.context_length=64"], "forward fails on int64 tokens of shape [2, 64]")):
            done = run(study, module, "refused", *settings, check=False)
            self.assertEqual(done.returncode, 2, done.stderr)
            self.assertIn(says, done.stderr)
            self.assertFalse(os.path.exists(study), "nothing written")
        # Over its budget, with the model state the largest role: the lever named is the module's.
        done = run(study, self.modules["gpt"], "refused", "model.context_length=16", "train.microbatch=1",
                   "memory.budget=\"256KiB\"", check=False)
        self.assertEqual(done.returncode, 2, done.stderr)
        self.assertIn("(the module's probes; optimizer state takes the most)", done.stderr)
        self.assertIn("choose a 16-bit precision.mode, or shard the model state", done.stderr)
        self.assertNotIn("model.width", done.stderr)
        self.assertFalse(os.path.exists(study), "nothing written")

    def test_the_optimization_log_study_skips_only_what_the_module_cannot_take(self):
        # The shipped plan as it is, at a tiny width: its T = 512 pair needs a position table that long.
        module = os.path.join(self.dir.name, "gpt512.pt")
        subprocess.run([sys.executable, SCRIPT, "gpt", module, "--width", "32", "--layers", "2", "--heads", "2",
                        "--context", "512"], check=True, capture_output=True)
        study = self.study("optimization-log")
        settings = ["model.source=torchscript", f"model.path={module}", "data.corpus=generated", "train.steps=6",
                    "train.warmup_steps=1", "memory.warmup_steps=2", "data.eval_sequences=4", "runtime.threads=1"]
        done = subprocess.run([OPTLOG, "study", "optimization-log", "--db", study,
                               *[arg for s in settings for arg in ("--set", s)]],
                              capture_output=True, text=True, timeout=600)
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertIn('optlog study: skipped chunked-T512: config: memory.attention = "chunked" with '
                      'model.source = "torchscript"', done.stderr)
        stored = runs(study)
        self.assertEqual(sorted(stored), sorted(["fp32", "microbatch4-accum2", "autocast-bf16", "master-bf16",
                                                 "pure-bf16", "checkpoint-every-block", "naive-T512"]))
        for name, record in stored.items():
            self.assertEqual(record["outcome"], "completed", name)
        self.assertIn("naive-T512", done.stdout)  # the comparison, without the skipped run
        self.assertNotIn("chunked-T512", done.stdout)

        # Without its baseline a study has nothing to compare against: refused whole, nothing written.
        plan = os.path.join(self.dir.name, "chunked-first.toml")
        with open(plan, "w") as f:
            f.write('name = "chunked-first"\nbaseline = "chunked"\n'
                    '[[run]]\nname = "chunked"\npreset = "smoke"\noverrides = ["memory.attention=chunked"]\n'
                    '[[run]]\nname = "naive"\npreset = "smoke"\n')
        refused = self.study("chunked-first")
        done = subprocess.run([OPTLOG, "study", plan, "--db", refused, "--set", "model.source=torchscript",
                               "--set", f"model.path={module}"], capture_output=True, text=True, timeout=300)
        self.assertEqual(done.returncode, 2, done.stderr)
        self.assertIn("the baseline run 'chunked' cannot apply to this model", done.stderr)
        self.assertFalse(os.path.exists(refused), "nothing written")

    def test_a_stopped_run_resumes_and_quantizes(self):
        study = self.study("resume")
        command = [OPTLOG, "run", "--db", study, "--preset", "smoke", "--set", "name=resumed",
                   "--set", "data.corpus=generated", "--set", "model.source=torchscript",
                   "--set", f"model.path={self.modules['rotary']}", "--set", "model.context_length=32",
                   "--set", "train.steps=150", "--set", "train.checkpoint_interval=5"]
        engine = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 120
        while not glob.glob(f"{study}.weights/run-1/checkpoint-step-*.pt") and time.monotonic() < deadline:
            time.sleep(0.2)
        engine.send_signal(signal.SIGINT)
        _, stderr = engine.communicate(timeout=120)
        self.assertEqual(engine.returncode, 4, stderr)
        # The module file changed since the run started: refused, the run untouched.
        module = self.modules["rotary"]
        os.rename(module, module + ".kept")
        subprocess.run([sys.executable, SCRIPT, "rotary", module, *SHAPE, "--seed", "2"], check=True,
                       capture_output=True)
        done = subprocess.run([OPTLOG, "run", "--resume", study, "resumed"], capture_output=True, text=True,
                              timeout=300)
        os.replace(module + ".kept", module)
        self.assertEqual(done.returncode, 2, done.stderr)
        self.assertIn("it changed after the run started", done.stderr)
        self.assertEqual(runs(study)["resumed"]["outcome"], "cancelled")
        done = subprocess.run([OPTLOG, "run", "--resume", study, "resumed"], capture_output=True, text=True,
                              timeout=600)
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertEqual(runs(study)["resumed"]["outcome"], "completed")
        done = subprocess.run([OPTLOG, "quantize", study, "resumed", "--scheme", "int8"], capture_output=True,
                              text=True, timeout=300)
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertIn("int8", done.stdout)

    @unittest.skipUnless(os.environ.get("OPTLOG_OTHER_PYTHON"),
                         "no second PyTorch here: packaging/setup.sh test names PyPI's or Debian's as OPTLOG_OTHER_PYTHON")
    def test_a_module_scripted_by_the_other_pytorch_trains(self):
        # A user's PyTorch is rarely the engine's LibTorch: Debian's 1.13 engine with a module
        # from pip's 2.x, or an engine built against 2.x with a module from Debian's 1.13.
        other = os.environ["OPTLOG_OTHER_PYTHON"]
        version = subprocess.run([other, "-c", "import torch; print(torch.__version__)"], capture_output=True,
                                 text=True, check=True).stdout.strip()
        self.assertNotEqual(version.split("+")[0], torch.__version__.split("+")[0], "the other PyTorch is this one")
        study = self.study("other-pytorch")
        for model in ("gpt", "rotary"):
            module = os.path.join(self.dir.name, f"{model}-other.pt")
            subprocess.run([other, SCRIPT, model, module, *SHAPE], check=True, capture_output=True)
            for name, settings in {"fp32": [], "autocast-bf16": ["precision.mode=autocast-bf16"],
                                   "checkpointing": ["memory.checkpoint_every=1"]}.items():
                run(study, module, f"{model} {name} (torch {version})", *settings)
        for name, record in runs(study).items():
            self.assertEqual(record["outcome"], "completed", name)


if __name__ == "__main__":
    unittest.main()
