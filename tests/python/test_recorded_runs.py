# SPDX-License-Identifier: MIT
"""The Python recorder on the real path: Debian's python3-torch trains the example trainer
(resources/examples/pytorch/train.py) into a study through a real `optlog record` child, and
optlog reads those runs as it reads the engine's. CTest sets OPTLOG (the binary) and
OPTLOG_SOURCE_DIR; PYTHONPATH holds app/python."""
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import unittest

OPTLOG = os.environ.get("OPTLOG", "optlog")
SOURCE = os.environ.get("OPTLOG_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
TRAINER = os.path.join(SOURCE, "resources", "examples", "pytorch", "train.py")
# The smoke preset's GPT: what the engine trains with `--preset smoke`.
SMOKE_SHAPE = ["--width", "32", "--layers", "2", "--heads", "2", "--context", "32", "--microbatch", "4",
               "--eval-sequences", "16", "--threads", "1", "--corpus", "generated"]


def trainer(study, name, *flags, steps=30):
    return [sys.executable, TRAINER, "--study", study, "--name", name, "--steps", str(steps),
            "--eval-interval", "10", *SMOKE_SHAPE, *flags]


def optlog(*args, check=True):
    done = subprocess.run([OPTLOG, *args], capture_output=True, text=True, timeout=300)
    if check and done.returncode != 0:
        raise AssertionError(f"optlog {' '.join(args)} exited {done.returncode}: {done.stderr}")
    return done


def exported(study):
    return {run["name"]: run for run in json.loads(optlog("export", study, "--format", "json").stdout)["runs"]}


def report_json(study, *args):
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "report.json")
        optlog("report", study, "--format", "json", "-o", path, *args)
        with open(path, encoding="utf-8") as report:
            return json.load(report)


def wait_for(predicate, what, seconds=120):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.2)
    raise AssertionError(f"waited {seconds} s for {what}")


def measured(run, role):
    rows = [m for m in run["memory"] if m["role"] == role and m["source"] == "measured"]
    return (rows[0]["bytes"], rows[0]["dtype"]) if rows else None


class RecordedRuns(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.study = os.path.join(self.dir.name, "mine.sqlite")

    def tearDown(self):
        self.dir.cleanup()

    def train(self, name, *flags, steps=30):
        done = subprocess.run(trainer(self.study, name, *flags, steps=steps), capture_output=True, text=True,
                              timeout=600)
        self.assertEqual(done.returncode, 0, done.stderr)
        return done

    # Three techniques over seeds, then what a user does next: compare, filter, show, export.
    def test_three_configurations_are_compared_like_engine_runs(self):
        for seed in (1, 2):
            self.train(f"fp32 s{seed}", "--group", "fp32", "--seed", str(seed))
            self.train(f"bf16 s{seed}", "--group", "bf16", "--seed", str(seed), "--precision", "autocast-bf16")
        self.train("accumulate", "--microbatch", "2", "--accumulation", "2", "--checkpoint")

        runs = exported(self.study)
        self.assertEqual(sorted(runs), ["accumulate", "bf16 s1", "bf16 s2", "fp32 s1", "fp32 s2"])
        for name, run in runs.items():
            self.assertEqual(run["outcome"], "completed", name)
            self.assertEqual(len(run["metrics"]), 30, name)
            self.assertEqual(run["metrics"][-1]["tokens"], 30 * 4 * 32, name)  # every microbatch's tokens
            self.assertTrue(run["validation"], name)
            self.assertTrue(run["recorder"].startswith("optlog Python module"), name)
            self.assertIn("torch_version", run["environment"], name)
            for role in ("parameters", "gradients", "optimizer_state", "saved_activations", "peak"):
                self.assertIsNotNone(measured(run, role), f"{name}: no measured {role}")
        self.assertEqual(runs["bf16 s1"]["dtypes"]["compute"], "bfloat16")
        self.assertEqual(runs["fp32 s1"]["dtypes"]["compute"], "float32")
        # The measured step's memory timeline: its highest point is the run's peak to the byte, in
        # the phases the trainer's hooks see, each microbatch's own under accumulation.
        for name, run in runs.items():
            timelines = run["memory_timelines"]
            self.assertEqual(len(timelines), 1, name)
            timeline = timelines[0]
            self.assertEqual(timeline["source"], "allocations", name)
            self.assertEqual(max(timeline["points"]["bytes"]), measured(run, "peak")[0], name)
            parts = [phase["part"] for phase in timeline["phases"]]
            self.assertEqual(parts[:3], ["forward", "loss", "backward"], name)
            self.assertEqual(parts[-1], "optimizer step", name)
            self.assertEqual(timeline["states_before"]["parameters"], measured(run, "parameters")[0], name)
        microbatches = [phase.get("microbatch", 0) for phase in runs["accumulate"]["memory_timelines"][0]["phases"]]
        self.assertEqual(microbatches, [0, 0, 0, 1, 1, 1, 0])
        self.assertIn("<- here", optlog("show", self.study, "accumulate", "--timeline").stdout)
        # Checkpointing keeps fewer activations for backward than the same run without it.
        self.assertLess(measured(runs["accumulate"], "saved_activations")[0],
                        measured(runs["fp32 s1"], "saved_activations")[0])

        compared = optlog("compare", self.study, "--baseline", "fp32").stdout
        self.assertIn("bf16", compared)
        self.assertRegex(compared, r"bf16\s+2 ")  # a group of two seeds
        self.assertIn("Recorded runs (", compared)
        # The trainer's own keys are config fields: the filter reads them.
        listed = optlog("runs", self.study, "--filter", "precision:autocast-bf16").stdout
        self.assertIn("bf16 s1", listed)
        self.assertNotIn("fp32 s1", listed)
        self.assertIn("[recorded]", listed)
        shown = optlog("show", self.study, "bf16 s2").stdout
        self.assertIn("recorded by: optlog Python module", shown)
        self.assertIn("peak_measure", shown)
        # The trainer names its GPT in engine config keys: the memory model's prediction is kept
        # beside the measurement, and it agrees on the state exactly.
        for name, run in runs.items():
            predicted = {m["role"]: m["bytes"] for m in run["memory"] if m["source"] == "predicted"}
            for role in ("parameters", "gradients", "optimizer_state"):
                self.assertEqual(predicted.get(role), measured(run, role)[0], f"{name}: {role}")
            self.assertIn("saved_activations", predicted, name)

    # The parameters, gradients and optimizer state of one GPT shape are the same bytes and dtypes
    # whoever trains it: counted from PyTorch's tensors, and from LibTorch's by the engine. And the
    # two ran on one machine: their speeds compare.
    def test_model_state_equals_the_engines_for_the_same_shape(self):
        optlog("run", "--preset", "smoke", "--db", self.study, "--set", "name=\"engine\"", "--set", "train.steps=12",
               "--set", "data.corpus=\"generated\"")
        self.train("python", steps=12)
        runs = exported(self.study)
        for role in ("parameters", "gradients", "optimizer_state"):
            self.assertEqual(measured(runs["python"], role), measured(runs["engine"], role), role)
        for state in ("weights", "gradients", "master_weights", "optimizer_state", "compute"):
            self.assertEqual(runs["python"]["dtypes"][state], runs["engine"]["dtypes"][state], state)
        groups = {g["name"]: g for g in report_json(self.study, "--baseline", "engine")["groups"]}
        python = groups["python"]
        self.assertNotIn("different machines", python["verdict"])
        self.assertGreater(python["speedup"], 0, python["verdict"])
        self.assertNotEqual(python["speed"], "not called", python["verdict"])

    # Your own model, not a transformer: a character-level LSTM over two seeds each of FP32 and
    # autocast BF16, compared. Its speed verdict is what its interval says, its MFU is there (its
    # FLOPs given, the peak from `optlog tune --peak-only`), and LibTorch printed nothing.
    def test_an_lstm_over_seeds_is_judged_by_its_interval(self):
        optlog("tune", "--peak-only", "--threads", "1")
        for precision in ("fp32", "autocast-bf16"):
            for seed in (1, 2):
                done = subprocess.run([sys.executable, os.path.join(os.path.dirname(__file__), "char_lstm.py"),
                                       "--study", self.study, "--name", f"{precision} s{seed}", "--group", precision,
                                       "--seed", str(seed), "--precision", precision],
                                      capture_output=True, text=True, timeout=600)
                self.assertEqual(done.returncode, 0, done.stderr)
                self.assertNotIn("CPUAllocator", done.stderr)
                self.assertNotIn("unknown size", done.stderr)
        groups = {g["name"]: g for g in report_json(self.study, "--baseline", "fp32")["groups"]}
        bf16 = groups["autocast-bf16"]
        interval, call = bf16["speedup_interval_95"], bf16["speed"]
        # Two levels: the blocks of steps, widened by the seeds where they disagree more.
        self.assertIn(interval["over"], ("seeds", "blocks of steps"))
        self.assertLess(interval["low"], bf16["speedup"])
        self.assertGreater(interval["high"], bf16["speedup"])
        expected = ("faster" if interval["low"] >= 1.03 else "slower" if interval["high"] <= 0.97
                    else "same" if 0.97 <= interval["low"] and interval["high"] <= 1.03 else "too noisy")
        self.assertEqual(call, expected, bf16["verdict"])
        words = {"faster": "x faster", "slower": "slower", "same": "same speed", "too noisy": "too noisy to call"}
        self.assertIn(words[call], bf16["verdict"])
        for name, group in groups.items():
            self.assertGreater(group["mfu"], 0, name)
        # The narrow table shows the same interval.
        self.assertIn(f"{bf16['speedup']:.2f}x [{interval['low']:.2f}-{interval['high']:.2f}]",
                      optlog("compare", self.study, "--baseline", "fp32").stdout)

    def start_long_run(self, name):
        process = subprocess.Popen(trainer(self.study, name, steps=100000), stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, text=True)

        def trained_a_few_steps():
            listed = optlog("export", self.study, "--format", "json", check=False)
            if listed.returncode != 0:
                return False
            runs = [r for r in json.loads(listed.stdout)["runs"] if r["name"] == name]
            return bool(runs) and len(runs[0].get("metrics") or []) >= 3

        wait_for(trained_a_few_steps, f"{name} to store three steps")
        return process

    def test_a_killed_trainer_leaves_a_crashed_run(self):
        process = self.start_long_run("killed")
        process.send_signal(signal.SIGKILL)
        process.wait()
        wait_for(lambda: exported(self.study)["killed"]["outcome"] == "crashed", "the run to read crashed")
        run = exported(self.study)["killed"]
        self.assertIn("without a finished event", run["message"])
        self.assertGreaterEqual(len(run["metrics"]), 3)  # every step stored before it stays

    def test_a_killed_recorder_never_stops_training(self):
        process = self.start_long_run("orphan")
        children = open(f"/proc/{process.pid}/task/{process.pid}/children").read().split()
        recorders = [pid for pid in children if "record" in open(f"/proc/{pid}/cmdline").read()]
        self.assertEqual(len(recorders), 1, children)
        os.kill(int(recorders[0]), signal.SIGKILL)
        time.sleep(2)  # the trainer goes on training past the recorder's end
        self.assertIsNone(process.poll())
        process.send_signal(signal.SIGINT)  # the user's Ctrl-C ends training
        _, stderr = process.communicate(timeout=60)
        self.assertEqual(stderr.count("optlog:"), 1, stderr)  # said once, on stderr
        # Its writer is gone: the run reads crashed, never running.
        self.assertEqual(exported(self.study)["orphan"]["outcome"], "crashed")


if __name__ == "__main__":
    unittest.main()
