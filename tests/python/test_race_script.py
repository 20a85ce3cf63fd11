# SPDX-License-Identifier: MIT
"""tools/cuda/race.sh, the engine against the example PyTorch trainer, as a smoke run on the CPU:
the smoke preset, a few steps, a mode the CPU cannot run among those it can. CTest sets OPTLOG (the
binary, app/optlog in the build folder race.sh is given) and OPTLOG_SOURCE_DIR; the trainer runs on
this interpreter's PyTorch (Debian's 1.13 here: no SDPA and no fused AdamW, which race.sh drops)."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

OPTLOG = os.path.abspath(os.environ.get("OPTLOG", "optlog"))
SOURCE = os.environ.get("OPTLOG_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
RACE = os.path.join(SOURCE, "tools", "cuda", "race.sh")
STEPS = 4


def table(path):
    """race.md's Markdown table as {mode: [cells after the mode]}."""
    with open(path) as f:
        rows = [[cell.strip() for cell in line.strip().strip("|").split("|")] for line in f if line.startswith("| ")]
    return {row[0]: row[1:] for row in rows}


class RaceScript(unittest.TestCase):
    def test_a_cpu_race_fills_the_table_and_skips_what_the_cpu_cannot_run(self):
        with tempfile.TemporaryDirectory() as out:
            environment = dict(os.environ, DEVICE="cpu", PRESET="smoke", STEPS=str(STEPS),
                               MODES="fp32 tf32 autocast-bf16", BUILD=os.path.dirname(os.path.dirname(OPTLOG)),
                               PYTHON=sys.executable, OUT=out)
            done = subprocess.run(["bash", RACE], env=environment, capture_output=True, text=True, timeout=600)
            self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
            self.assertRegex(done.stdout, r"tf32: skipped on the CPU: .*tensor-core")
            # The engine's memory.attention=auto is naive off CUDA: the trainer's attention follows it.
            self.assertIn("attention naive on both sides", done.stdout)

            rows = table(os.path.join(out, "race.md"))
            self.assertEqual(list(rows), ["mode", "fp32", "tf32", "autocast-bf16"])
            self.assertTrue(rows["tf32"][0].startswith("skipped on the CPU"), rows["tf32"])
            for mode in ("fp32", "autocast-bf16"):
                engine, pytorch, ratio = (float(cell.replace(",", "")) for cell in rows[mode][:3])
                self.assertGreater(engine, 0, mode)
                self.assertGreater(pytorch, 0, mode)
                self.assertAlmostEqual(ratio, engine / pytorch, delta=0.01 + 0.01 * ratio)
            self.assertEqual(rows["fp32"][3], "1.00")  # the engine's fp32 against itself
            self.assertTrue(os.path.getsize(os.path.join(out, "race-compare.txt")))

            # Like for like: the same runs on each side, the same tokens a step, the same attention.
            exported = subprocess.run([OPTLOG, "export", os.path.join(out, "race.sqlite"), "--format", "json"],
                                      capture_output=True, text=True, check=True, timeout=120)
            runs = {run["name"]: run for run in json.loads(exported.stdout)["runs"]}
            self.assertEqual(sorted(runs), sorted(f"{side} {mode} #{k}" for side in ("engine", "torch")
                                                  for mode in ("fp32", "autocast-bf16") for k in (1, 2)))
            for name, run in runs.items():
                self.assertEqual(run["outcome"], "completed", name)
                self.assertEqual(run["group"], name.split(" #")[0])
                self.assertEqual(len(run["metrics"]), STEPS, name)
                self.assertEqual(run["metrics"][-1]["tokens"], runs["engine fp32 #1"]["metrics"][-1]["tokens"], name)
                self.assertRegex(run["config_toml"], r"(?m)^attention = 'naive'$", name)


if __name__ == "__main__":
    unittest.main()
