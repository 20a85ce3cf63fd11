# SPDX-License-Identifier: MIT
"""The Python module optlog (app/python/optlog) without the optlog binary: its config flattening,
event lines, outcomes, memory counting, and what it does when the recorder fails.

    python3 -m unittest discover -s tests/python
"""
import argparse
import contextlib
import io
import json
import math
import os
import pathlib
import stat
import subprocess
import sys
import tempfile
import unittest
import unittest.mock

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "app" / "python"))

from optlog import events, recorder  # noqa: E402
from optlog.config import flatten_config  # noqa: E402
from optlog.run import Run  # noqa: E402

try:
    import torch
except ImportError:
    if os.environ.get("OPTLOG_REQUIRE_TORCH"):  # CTest: Debian's python3-torch is installed, never skip
        raise
    torch = None


def strict_json(text):
    """Parses like a strict JSON reader: NaN and Infinity are refused, not read."""
    def refuse(name):
        raise ValueError(f"not JSON: {name}")
    return json.loads(text, parse_constant=refuse)


class FlattenConfigTest(unittest.TestCase):
    def test_nested_dicts_become_dotted_keys(self):
        self.assertEqual(flatten_config({"train": {"lr": 0.001, "opt": {"beta1": 0.9}}, "amp": "bf16"}),
                         {"train.lr": 0.001, "train.opt.beta1": 0.9, "amp": "bf16"})

    def test_namespace_is_read_through_vars(self):
        args = argparse.Namespace(lr=0.01, layers=4, checkpoint=True, sizes=(1, 2))
        self.assertEqual(flatten_config(args), {"lr": 0.01, "layers": 4, "checkpoint": True, "sizes": [1, 2]})

    def test_none_values_are_left_out(self):
        self.assertEqual(flatten_config({"data": None, "model": {"path": None, "width": 64}}), {"model.width": 64})

    def test_a_path_is_kept_as_its_string(self):
        self.assertEqual(flatten_config({"data": pathlib.Path("/tmp/x.txt")}), {"data": "/tmp/x.txt"})

    def test_a_bad_value_names_its_key_and_type(self):
        with self.assertRaises(TypeError) as raised:
            flatten_config({"model": {"init": object()}})
        self.assertIn("'model.init'", str(raised.exception))
        self.assertIn("object", str(raised.exception))
        self.assertIn("bool, int, float, str", str(raised.exception))

    def test_a_bad_list_item_names_its_index(self):
        with self.assertRaises(TypeError) as raised:
            flatten_config({"sizes": [1, {2}]})
        self.assertIn("'sizes[1]'", str(raised.exception))

    def test_a_non_finite_value_is_refused(self):
        with self.assertRaises(ValueError):
            flatten_config({"lr": math.nan})

    def test_a_key_that_is_value_and_prefix_is_refused(self):
        with self.assertRaises(ValueError) as raised:
            flatten_config({"a": 1, "a.b": 2})
        self.assertIn("'a'", str(raised.exception))
        with self.assertRaises(ValueError):
            flatten_config({"train": 1, "x": {"y": 2}, "train.lr": 3})

    def test_a_key_given_nested_and_dotted_is_refused(self):
        with self.assertRaises(ValueError):
            flatten_config({"a.b": 1, "a": {"b": 2}})

    def test_other_objects_are_refused(self):
        with self.assertRaises(TypeError):
            flatten_config(object())

    def test_seed_is_added_unless_the_config_has_one(self):
        self.assertEqual(flatten_config({"lr": 1.0}, seed=3), {"lr": 1.0, "seed": 3})
        self.assertEqual(flatten_config({"seed": 7}, seed=3), {"seed": 7})

    def test_run_refuses_a_bad_config_at_creation(self):
        with self.assertRaises(TypeError):
            Run("study", "name", config={"f": print})


class EventLineTest(unittest.TestCase):
    def test_non_finite_numbers_are_null_and_never_nan(self):
        for bad in (math.nan, math.inf, -math.inf):
            text = events.line("step", step=3, tokens=96, train_loss=events.number(bad), grad_norm=events.number(bad))
            body = strict_json(text)
            self.assertIsNone(body["train_loss"])
            self.assertNotIn("grad_norm", body)  # an absent optional number is unknown
            self.assertNotIn("NaN", text)
            self.assertNotIn("Infinity", text)

    def test_non_finite_values_in_nested_fields_are_null(self):
        text = events.line("memory", rows=[{"role": "peak", "bytes": 1}], dtypes={"x": math.nan})
        self.assertIsNone(strict_json(text)["dtypes"]["x"])

    def test_a_line_is_one_object_ending_in_a_newline(self):
        text = events.line("note", message="a\nb")
        self.assertTrue(text.endswith("\n"))
        self.assertEqual(text.count("\n"), 1)
        self.assertEqual(strict_json(text), {"event": "note", "message": "a\nb"})

    @unittest.skipUnless(torch, "needs torch")
    def test_a_tensor_is_read_as_its_number(self):
        self.assertAlmostEqual(events.number(torch.tensor(2.5)), 2.5)
        self.assertIsNone(events.number(torch.tensor(float("nan"))))


class OutcomeTest(unittest.TestCase):
    def test_a_normal_end_completes_at_the_last_step(self):
        self.assertEqual(events.ending(None, 41), {"outcome": "completed", "step": 41})

    def test_a_non_finite_loss_diverges_at_its_step(self):
        finished = events.ending(None, 41, divergence=(17, math.nan))
        self.assertEqual((finished["outcome"], finished["step"]), ("diverged", 17))
        self.assertIn("nan", finished["message"])

    def test_ctrl_c_cancels(self):
        self.assertEqual(events.ending(KeyboardInterrupt(), 5)["outcome"], "cancelled")

    def test_an_exception_fails_with_its_type_and_text(self):
        finished = events.ending(ValueError("bad shape"), 5, divergence=(3, math.inf))
        self.assertEqual(finished, {"outcome": "failed", "step": 5, "message": "ValueError: bad shape"})

    def test_out_of_memory_errors_are_oom_at_the_failing_step(self):
        class OutOfMemoryError(RuntimeError):  # torch.cuda.OutOfMemoryError, by name
            pass

        for error in (OutOfMemoryError("boom"), RuntimeError("CUDA out of memory. Tried to allocate 2.00 GiB"),
                      RuntimeError("DefaultCPUAllocator: can't allocate memory: you tried to allocate 8 bytes"),
                      MemoryError()):
            finished = events.ending(error, 9)
            self.assertEqual((finished["outcome"], finished["step"]), ("oom", 10), repr(error))
        self.assertEqual(events.ending(MemoryError(), None)["step"], 0)
        self.assertEqual(events.ending(RuntimeError("shape mismatch"), 9)["outcome"], "failed")

    def test_sys_exit_zero_is_a_normal_end(self):
        self.assertEqual(events.ending(SystemExit(0), 2)["outcome"], "completed")
        self.assertEqual(events.ending(SystemExit(1), 2)["outcome"], "failed")


@unittest.skipUnless(torch, "needs torch")
class MemoryTest(unittest.TestCase):
    def setUp(self):
        from optlog import memory

        self.memory = memory
        torch.manual_seed(0)

    def trained(self, model):
        optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
        model(torch.randn(4, 8)).square().mean().backward()
        optimizer.step()
        return optimizer

    def rows(self, event):
        return {row["role"]: row for row in event["rows"]}

    def test_state_after_one_adamw_step(self):
        model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.GELU(), torch.nn.Linear(16, 8))
        optimizer = self.trained(model)
        event = self.memory.memory_event(self.memory.State(model, optimizer))
        rows = self.rows(event)
        parameter_bytes = sum(p.numel() * p.element_size() for p in model.parameters())
        self.assertEqual(parameter_bytes, (8 * 16 + 16 + 16 * 8 + 8) * 4)
        self.assertEqual(rows["parameters"]["bytes"], parameter_bytes)
        self.assertEqual(rows["gradients"]["bytes"], parameter_bytes)
        # Two moments per parameter; AdamW's 0-dim step counters are left out.
        self.assertEqual(rows["optimizer_state"]["bytes"], 2 * parameter_bytes)
        self.assertNotIn("master_weights", rows)
        self.assertGreater(rows["peak_rss"]["bytes"], 0)
        self.assertEqual(event["dtypes"], {"weights": "float32", "gradients": "float32",
                                           "master_weights": "none", "optimizer_state": "float32"})

    def test_a_shared_weight_and_masters_count_once(self):
        model = torch.nn.Linear(8, 8, bias=False)
        tied = torch.nn.ModuleList([model, torch.nn.Linear(8, 8, bias=False)])
        tied[1].weight = model.weight
        masters = [model.weight.detach().float().clone(), model.weight.detach().double()]
        rows = self.rows(self.memory.memory_event(self.memory.State(tied, None, masters)))
        self.assertEqual(rows["parameters"]["bytes"], 8 * 8 * 4)
        self.assertEqual(rows["master_weights"]["bytes"], 8 * 8 * 4 + 8 * 8 * 8)
        self.assertEqual(rows["master_weights"]["dtype"], "mixed")

    def test_bfloat16_weights_are_named(self):
        model = torch.nn.Linear(4, 4).to(torch.bfloat16)
        dtypes = self.memory.memory_event(self.memory.State(model))["dtypes"]
        self.assertEqual(dtypes["weights"], "bfloat16")
        self.assertNotIn("gradients", dtypes)  # none exist yet

    def test_saved_activations_of_a_known_graph(self):
        w = torch.nn.Parameter(torch.randn(32, 16))
        x = torch.randn(32, 16)  # no gradient: the products save it for w's gradient

        def step():
            # Autograd saves only what a gradient needs, and x needs none.
            y = (x * w).exp()  # mul saves x (for w's gradient), exp its result
            z = x * w.sin()  # mul saves x again (the same storage, counted once), sin saves w (state)
            (y + z).sum().backward()

        probe = self.memory.MemoryProbe([w])
        probe.begin()
        step()
        probe.end()
        block = 32 * 16 * 4
        self.assertEqual(probe.saved.most, 2 * block)  # x and exp's result
        self.assertEqual(probe.saved.bytes, 0, "backward releases every saved tensor")
        rows = self.rows(probe.payload())
        self.assertEqual(rows["saved_activations"], {"role": "saved_activations", "bytes": 2 * block,
                                                     "dtype": "float32"})

    def test_high_water_of_allocation_deltas(self):
        self.assertEqual(self.memory.high_water([(0, 4), (1, 2), (2, -4), (3, 1), (4, -2)]), 6)
        self.assertEqual(self.memory.high_water([(0, -5), (1, 3)]), 0)

    def test_cpu_profiler_sees_a_known_high_water_mark(self):
        from torch.profiler import ProfilerActivity, profile

        with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
            a = torch.empty(1_000_000, dtype=torch.uint8)
            b = torch.empty(2_000_000, dtype=torch.uint8)
            del a
            c = torch.empty(500_000, dtype=torch.uint8)
            del b, c
        deltas = self.memory.allocation_deltas(prof)
        self.assertEqual(self.memory.high_water(deltas), 3_000_000)
        self.assertEqual(sum(d for _, d in deltas), 0)

    def measured_peak(self, zero_grad_where):
        torch.manual_seed(0)
        model = torch.nn.Sequential(torch.nn.Linear(64, 256), torch.nn.GELU(), torch.nn.Linear(256, 64))
        optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
        x = torch.randn(128, 64)

        def step():
            if zero_grad_where == "start":
                optimizer.zero_grad(set_to_none=True)
            model(x).square().mean().backward()
            optimizer.step()
            if zero_grad_where == "end":
                optimizer.zero_grad(set_to_none=True)

        step()
        step()
        probe = self.memory.MemoryProbe(model, optimizer)
        probe.begin()
        step()
        probe.end()
        return self.rows(probe.payload())

    def test_cpu_peak_does_not_depend_on_where_gradients_are_dropped(self):
        # Gradients dropped at the step's start were allocated before the profiler began, so it
        # never sees them freed; the probe must take them out of the starting state.
        at_start, at_end = self.measured_peak("start"), self.measured_peak("end")
        self.assertEqual(at_start["peak"]["bytes"], at_end["peak"]["bytes"])
        state = sum(at_start[role]["bytes"] for role in ("parameters", "gradients", "optimizer_state"))
        self.assertGreaterEqual(at_start["peak"]["bytes"], state)
        self.assertGreaterEqual(at_start["peak"]["bytes"],
                                at_start["parameters"]["bytes"] + at_start["saved_activations"]["bytes"])
        self.assertLess(at_start["peak"]["bytes"], 3 * state)

    def test_the_steps_timeline_peaks_at_the_measured_peak_with_a_phase_each_part(self):
        torch.manual_seed(0)
        model = torch.nn.Sequential(torch.nn.Linear(64, 256), torch.nn.GELU(), torch.nn.Linear(256, 64))
        optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
        x = torch.randn(128, 64)

        def step():
            optimizer.zero_grad(set_to_none=True)
            for half in x.chunk(2):  # two microbatches
                model(half).square().mean().backward()
            optimizer.step()

        probe = self.memory.MemoryProbe(model, optimizer)
        probe.begin()
        step()  # the first: AdamW's moments are made in it
        probe.end()
        peak = self.rows(probe.payload())["peak"]["bytes"]
        timeline = probe.timeline_payload(0)["timeline"]
        self.assertEqual(max(timeline["points"]["bytes"]), peak)
        self.assertTrue(timeline["first_step"])
        phases = [(p["part"], p.get("microbatch", 0)) for p in timeline["phases"]]
        self.assertEqual(phases, [("forward", 0), ("loss", 0), ("backward", 0), ("forward", 1), ("loss", 1),
                                  ("backward", 1), ("optimizer step", 0)])
        # The moments appear in the optimizer step: the step ends higher than it began by them.
        moments = timeline["states_after"]["optimizer_state"]
        self.assertNotIn("optimizer_state", timeline["states_before"])
        self.assertGreaterEqual(timeline["points"]["bytes"][-1] - timeline["phases"][-1]["start_bytes"], moments)
        # The optimizer's own step method is its own again.
        self.assertNotIn("step", optimizer.__dict__)

    def test_thinning_keeps_each_phases_highest_and_lowest_point(self):
        from optlog import timeline

        levels = [(i * 7919) % 10007 for i in range(50_000)]
        phases = [{"first_event": k * 5_000} for k in range(10)]
        events, kept = timeline.thin(phases, list(range(len(levels))), levels)
        self.assertLessEqual(len(events), timeline.MAX_POINTS)
        self.assertEqual(events, sorted(events))
        for k in range(10):
            whole = levels[k * 5_000:(k + 1) * 5_000]
            inside = [b for e, b in zip(events, kept) if k * 5_000 <= e < (k + 1) * 5_000]
            self.assertEqual((max(inside), min(inside)), (max(whole), min(whole)))

    def test_compute_dtype_is_the_narrowest_module_output(self):
        model = torch.nn.Sequential(torch.nn.LayerNorm(8), torch.nn.Linear(8, 8))
        for autocast, expected in ((False, "float32"), (True, "bfloat16")):
            probe = self.memory.MemoryProbe(model)
            probe.begin()
            with torch.autocast("cpu", dtype=torch.bfloat16, enabled=autocast):
                out = model(torch.randn(2, 8))
            out.float().sum().backward()
            probe.end()
            self.assertEqual(probe.payload()["dtypes"]["compute"], expected)


FAKE_RECORDER = """#!/bin/sh
# optlog record --db STUDY, faked: the stream goes to the file STUDY
cat > "$3"
"""


class RecordingTest(unittest.TestCase):
    """Run against a stand-in child process that writes its stdin to a file."""

    def setUp(self):
        self.folder = tempfile.TemporaryDirectory()
        self.addCleanup(self.folder.cleanup)
        fake = os.path.join(self.folder.name, "fake-optlog")
        with open(fake, "w") as f:
            f.write(FAKE_RECORDER)
        os.chmod(fake, os.stat(fake).st_mode | stat.S_IXUSR)
        self.env = {"OPTLOG": fake}
        self.dying = os.path.join(self.folder.name, "dying-optlog")
        with open(self.dying, "w") as f:
            f.write("#!/bin/sh\nexit 2\n")  # refuses the stream at once, as `optlog record` does bad input
        os.chmod(self.dying, os.stat(self.dying).st_mode | stat.S_IXUSR)
        self.study = os.path.join(self.folder.name, "study.jsonl")

    def recorded(self, body, **run_options):
        stderr = io.StringIO()
        with unittest.mock.patch.dict(os.environ, self.env), contextlib.redirect_stderr(stderr):
            try:
                with Run(self.study, "r1", config={"lr": 0.1}, steps=3, **run_options) as run:
                    body(run)
            except ZeroDivisionError:
                pass
        with open(self.study, encoding="utf-8") as f:
            return [strict_json(text) for text in f], stderr.getvalue()

    def test_a_run_streams_started_steps_and_finished(self):
        def body(run):
            for step in range(3):
                run.step(step, 5.0 - step, tokens=(step + 1) * 64, lr=0.1)
            run.validation(2.5)
            run.note("hello")

        lines, _ = self.recorded(body)
        self.assertEqual([e["event"] for e in lines], ["started", "step", "step", "step", "validation", "note",
                                                       "finished"])
        started = lines[0]
        self.assertEqual((started["format"], started["name"], started["steps"], started["config"]),
                         (1, "r1", 3, {"lr": 0.1}))
        self.assertTrue(started["recorder"].startswith("optlog Python module 1, "))
        self.assertIn("python_version", started["environment"])
        self.assertEqual(lines[4], {"event": "validation", "step": 2, "tokens": 192, "val_loss": 2.5})
        self.assertEqual(lines[-1], {"event": "finished", "outcome": "completed", "step": 2})
        self.assertEqual(lines[2]["tokens_per_second"], 64 / lines[2]["step_seconds"])

    def test_a_nan_loss_diverges_and_an_exception_fails(self):
        def diverging(run):
            run.step(0, 1.0, tokens=8)
            run.step(1, math.nan, tokens=16)
            run.step(2, math.nan, tokens=24)

        lines, _ = self.recorded(diverging)
        self.assertIsNone(lines[2]["train_loss"])
        self.assertEqual((lines[-1]["outcome"], lines[-1]["step"]), ("diverged", 1))

        lines, _ = self.recorded(lambda run: (run.step(0, 1.0, tokens=8), 1 / 0))
        self.assertEqual(lines[-1], {"event": "finished", "outcome": "failed", "step": 0,
                                     "message": "ZeroDivisionError: division by zero"})

    def test_a_recorder_that_dies_is_said_once_and_training_goes_on(self):
        self.env["OPTLOG"] = self.dying
        stderr = io.StringIO()
        with unittest.mock.patch.dict(os.environ, self.env), contextlib.redirect_stderr(stderr):
            with Run(self.study, "r1") as run:
                for step in range(3000):  # more than a pipe holds
                    run.step(step, 1.0, tokens=step + 1, step_seconds=0.0)
                    run.note("x" * 100)
                steps_done = step + 1
        self.assertEqual(steps_done, 3000)
        self.assertEqual(stderr.getvalue().count("optlog: recording stopped"), 1, stderr.getvalue())
        self.assertIn("status 2", stderr.getvalue())

    def test_without_optlog_the_run_is_not_recorded_and_says_so_once(self):
        self.env["OPTLOG"] = os.path.join(self.folder.name, "missing")
        recorder._missing_said = False
        stderr = io.StringIO()
        with unittest.mock.patch.dict(os.environ, self.env), contextlib.redirect_stderr(stderr):
            for _ in range(2):
                with self.assertRaises(KeyError):  # the script's own exception goes on
                    with Run(self.study, "r1") as run:
                        run.step(0, 1.0, tokens=1)
                        run.memory([])
                        raise KeyError("x")
        self.assertEqual(stderr.getvalue().count("not recorded"), 1, stderr.getvalue())
        self.assertFalse(os.path.exists(self.study))

    def test_a_measured_step_returns_what_the_step_returned(self):
        self.env["OPTLOG"] = os.path.join(self.folder.name, "missing")
        calls = []
        with unittest.mock.patch.dict(os.environ, self.env), contextlib.redirect_stderr(io.StringIO()):
            with Run(self.study, "r1") as run:  # recorded or not, the script's step runs and answers
                self.assertEqual(run.memory([], step=lambda: calls.append(1) or len(calls), warmup=2), 3)
        self.assertEqual(len(calls), 3)

    def test_without_optlog_on_path_the_message_says_what_to_install(self):
        recorder._missing_said = False
        stderr = io.StringIO()
        with unittest.mock.patch.dict(os.environ, {"PATH": self.folder.name}), contextlib.redirect_stderr(stderr):
            os.environ.pop("OPTLOG", None)
            with Run(self.study, "r1") as run:
                run.step(0, 1.0, tokens=1)
        self.assertEqual(stderr.getvalue(), recorder.MISSING + "\n")
        self.assertIn("sudo apt install ./optlog_*.deb", recorder.MISSING)

    def test_a_step_that_cannot_be_measured_still_runs_and_says_why(self):
        answers = []
        lines, stderr = self.recorded(lambda run: answers.append(run.memory("not a model", step=lambda: 7)))
        self.assertEqual(answers, [7])
        self.assertIn("the step's memory is not measured", stderr)
        self.assertEqual(lines[-1]["outcome"], "completed")

    def test_flops_given_are_sent_and_a_bad_number_is_said_once(self):
        def body(run):
            for bad in ("many", 0, -5, math.nan, True):
                run.flops_per_token(bad)
            run.flops_per_token(1234.5)
            run.step(0, 1.0, tokens=8)

        lines, stderr = self.recorded(body)
        self.assertIn({"event": "flops", "per_token": 1234.5, "how": "given"}, lines)
        self.assertEqual(sum(e["event"] == "flops" for e in lines), 1)
        self.assertEqual(stderr.count("give the model's FLOPs per token"), 5, stderr)

    @unittest.skipIf(torch is None, "needs torch")
    def test_the_measured_step_is_counted_where_pytorch_can_count(self):
        model = torch.nn.Linear(16, 8, bias=False)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        x = torch.randn(4, 16)

        def step():
            optimizer.zero_grad()
            loss = model(x).square().mean()
            loss.backward()
            optimizer.step()
            return loss

        def body(run):
            run.step(0, run.memory(model, optimizer, step=step), tokens=4)

        lines, stderr = self.recorded(body)
        flops = [e for e in lines if e["event"] == "flops"]
        if tuple(int(v) for v in torch.__version__.split(".")[:2]) < (2, 1):  # no torch.utils.flop_counter
            self.assertEqual(flops, [])
            return
        # The forward product (2 x 4 x 16 x 8) and the weight's gradient (the same), over 4 tokens;
        # sent before the run's end, which it precedes.
        self.assertEqual(flops, [{"event": "flops", "per_token": 512.0, "how": "counted",
                                  "counter": f"torch.utils.flop_counter (PyTorch {torch.__version__})"}])
        self.assertEqual(lines[-2]["event"], "flops")
        self.assertEqual(stderr, "")

    @unittest.skipIf(torch is None, "needs torch")
    def test_libtorchs_line_about_unknown_blocks_is_never_shown(self):
        script = ("import sys, torch\n"
                  "from optlog.memory import spend_unknown_block_warning\n"
                  "spend_unknown_block_warning()\n"
                  "print('after', file=sys.stderr)\n"
                  "x = torch.randn(1000)\n"
                  "with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU], "
                  "profile_memory=True):\n"
                  "    del x\n")
        done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120,
                              env={**os.environ, "PYTHONPATH": str(pathlib.Path(__file__).resolve().parents[2]
                                                                   / "app" / "python")})
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertNotIn("unknown size", done.stderr)
        self.assertIn("after", done.stderr)  # stderr is the user's again at once

    def test_a_name_must_be_one_line(self):
        for bad in ("", "a\nb", None, 3):
            with self.assertRaises(ValueError):
                Run(self.study, bad)


class TrainerSettingsTest(unittest.TestCase):
    """What the trainers' callbacks take from a trainer they do not own."""

    def test_settings_are_stored_plain(self):
        from optlog.steprecorder import storable

        class Precision:
            def __str__(self):
                return "bf16-mixed"

        self.assertEqual(storable({"lr": 0.1, "precision": Precision(), "_private": 1, "none": None, "sizes": (1, 2),
                                   "nested": {"beta": 0.9, "empty": {}}, "inf": math.inf, "flag": True}),
                         {"lr": 0.1, "precision": "bf16-mixed", "sizes": [1, 2], "nested": {"beta": 0.9},
                          "inf": "inf", "flag": True})

    @unittest.skipIf(torch is None, "needs torch")
    def test_tokens_are_the_first_integer_tensors_elements(self):
        from optlog.steprecorder import tokens_in

        ids = torch.zeros(4, 16, dtype=torch.long)
        self.assertEqual(tokens_in(ids), 64)
        self.assertEqual(tokens_in((torch.zeros(4, 3), ids, ids[:, :1])), 64)
        self.assertEqual(tokens_in({"attention_mask": ids[:, :8], "input_ids": ids}), 64)
        self.assertEqual(tokens_in({"pixels": torch.zeros(2, 3)}), 0)


if __name__ == "__main__":
    unittest.main()
