#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Runs on another machine over SSH, measured (docs/remote.md, docs/benchmarks.md).

On a second host made by tests/remote/sshhost.sh on the loopback (the same disk, so both studies
can be read here):

1. The delay from a step on the host to its row in the laptop's study, at runtime.metrics_every = 1:
   both studies are polled every 5 ms. A step's end on the host is reconstructed from the batch
   its engine stored it in (the engine stores rows about once a second): the batch appeared at
   time T, and a step ended T minus the step times of the later steps of its batch. Printed: the
   median and 95th percentile of (row here - step's end there).
2. What following costs the host's training: runs of the same config, followed (`optlog run
   --host` until the run ends) and not followed (the same command interrupted once the run has
   started there, as a laptop closed: the run goes on alone), alternated ABBA. A run's speed is
   the median tokens/s of its steps after the first tenth, read from the host's study. On the
   loopback the laptop's side (ssh, the follower) shares the host's CPUs, so this is an upper
   bound of what a real host pays (there: `optlog host stream` and sshd only).

  tests/bench/remote_follow.py [OPTLOG] [--steps N] [--cost-steps N] [--pairs N]
                               (default build/app/optlog 600 300 4; --pairs 0 skips part 2)
"""
import argparse
import os
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SSHHOST = os.path.join(HERE, "..", "remote", "sshhost.sh")
HOST = "optlog-test-host"


def query(study, sql, parameters=()):
    try:
        with sqlite3.connect(f"file:{study}?mode=ro", uri=True, timeout=1) as db:
            return db.execute(sql, parameters).fetchall()
    except sqlite3.Error:
        return []


def rows(study, after_step):
    """(step, step_seconds, tokens_per_second) of the newest run's steps after `after_step`."""
    try:
        with sqlite3.connect(f"file:{study}?mode=ro", uri=True, timeout=1) as db:
            return db.execute("SELECT step, step_seconds, tokens_per_second FROM metrics "
                              "WHERE run_id = (SELECT max(id) FROM runs) AND step > ? ORDER BY step",
                              (after_step,)).fetchall()
    except sqlite3.Error:
        return []


def hosted_study(folder, study):
    """The study on the host that the laptop's `study` trains into (hostplaces.h names it)."""
    hosted = os.path.join(folder, "host", "data", "optlog", "hosted")
    stem = os.path.splitext(os.path.basename(study))[0]
    found = [f for f in os.listdir(hosted) if f.endswith(".sqlite") and f"-{stem}-" in f] if os.path.isdir(hosted) else []
    return os.path.join(hosted, found[0]) if found else None


def run_on_host(optlog, env, study, steps, name):
    args = [optlog, "run", "--host", HOST, "--db", study, "--preset", "smoke", "--set",
            "data.corpus=generated", "--set", f"train.steps={steps}", "--set", "runtime.metrics_every=1",
            "--set", f"name={name}"]
    return subprocess.Popen(args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


def hosted_run_speed(folder, study, steps, timeout=900):
    """Waits until the newest run of `study`'s hosted study has ended; its median tokens/s past the first tenth."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        there = hosted_study(folder, study)
        ended = there and query(there, "SELECT outcome FROM runs WHERE id = (SELECT max(id) FROM runs) "
                                       "AND status = 'finished'")
        if ended:
            if ended[0][0] != "completed":
                raise RuntimeError(f"the host's run in {there} ended {ended[0][0]}, not completed")
            speeds = [r[0] for r in query(there, "SELECT tokens_per_second FROM metrics WHERE run_id = "
                                                 "(SELECT max(id) FROM runs) AND step > ? AND tokens_per_second "
                                                 "IS NOT NULL", (steps // 10,))]
            return statistics.median(speeds)
        time.sleep(0.2)
    raise RuntimeError(f"the host's run for {study} did not end within {timeout} s")


def measure_run(optlog, env, folder, work, steps, followed, index):
    """One run's speed on the host, followed to its end from here or left alone once it started."""
    study = os.path.join(work, f"cost-{index}.sqlite")
    process = run_on_host(optlog, env, study, steps, f"cost-{index}")
    if not followed:
        # Started there once this study names its place on the host; then the laptop goes away.
        deadline = time.monotonic() + 300
        while not query(study, "SELECT 1 FROM remote_runs") and process.poll() is None:
            if time.monotonic() > deadline:
                raise RuntimeError("the run did not start on the host within 300 s")
            time.sleep(0.05)
        process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=900)
    if followed and process.returncode != 0:
        raise RuntimeError(f"optlog run --host failed ({process.returncode}): {err}")
    return hosted_run_speed(folder, study, steps)


def measure_cost(optlog, env, folder, work, steps, pairs):
    """Tokens/s (followed, not followed) over `pairs` ABBA quartets: A followed, B not."""
    speeds = {True: [], False: []}
    index = 0
    for _ in range(pairs):
        for followed in (True, False, False, True):
            speed = measure_run(optlog, env, folder, work, steps, followed, index)
            print(f"  run {index}: {'followed' if followed else 'not followed'}, {speed:.0f} tokens/s", flush=True)
            speeds[followed].append(speed)
            index += 1
    return speeds


def measure_delay(optlog, env, folder, work, steps):
    study = os.path.join(work, "delay.sqlite")
    process = run_on_host(optlog, env, study, steps, "delay")
    seen_there, seen_here = {}, {}
    last_there = last_here = -1
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline:
        now = time.monotonic()
        there = hosted_study(folder, study)
        batch = rows(there, last_there) if there else []
        # A step ended before the batch was stored by the time its later steps took.
        later = 0.0
        for step, seconds, _ in reversed(batch):
            seen_there[step] = now - later
            later += seconds or 0.0
        if batch:
            last_there = batch[-1][0]
        for step, _, _ in rows(study, last_here):
            seen_here[step] = now
            last_here = step
        if process.poll() is not None and last_here >= last_there >= 0:
            break
        time.sleep(0.005)
    process.wait()
    common = sorted(set(seen_there) & set(seen_here))
    delays = [seen_here[s] - seen_there[s] for s in common]
    return delays, len(common)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("optlog", nargs="?", default=os.path.join(HERE, "..", "..", "build", "app", "optlog"))
    parser.add_argument("--steps", type=int, default=600)
    parser.add_argument("--cost-steps", type=int, default=300)
    parser.add_argument("--pairs", type=int, default=4)
    options = parser.parse_args()
    optlog = os.path.abspath(options.optlog)
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
    print(f"CPU: {cpu}, {os.cpu_count()} logical CPUs; host: sshd on the loopback (tests/remote/sshhost.sh)")
    with tempfile.TemporaryDirectory() as work:
        folder = os.path.join(work, "host")
        start_env = dict(os.environ, OPTLOG_SSHHOST_SETENV="OPTLOG_PROBE_UNTUNED=0")
        subprocess.run(["bash", SSHHOST, "start", folder], check=True, env=start_env, stdout=subprocess.DEVNULL)
        try:
            env = dict(os.environ, OPTLOG_SSH_CONFIG=os.path.join(folder, "ssh_config"),
                       XDG_CONFIG_HOME=os.path.join(work, "config"))
            subprocess.run([optlog, "host", "check", HOST, "--optlog", optlog], check=True, env=env,
                           stdout=subprocess.DEVNULL)
            delays, count = measure_delay(optlog, env, folder, work, options.steps)
            q = statistics.quantiles(delays, n=20)
            print(f"delay from a step's end on the host to its row here, over {count} steps: "
                  f"median {statistics.median(delays):.2f} s, 95th percentile {q[18]:.2f} s, "
                  f"max {max(delays):.2f} s", flush=True)
            if options.pairs > 0:
                speeds = measure_cost(optlog, env, folder, work, options.cost_steps, options.pairs)
                followed, alone = statistics.median(speeds[True]), statistics.median(speeds[False])
                print(f"host's tokens/s over {options.pairs} ABBA quartets of {options.cost_steps} steps: "
                      f"followed {followed:.0f}, not followed {alone:.0f} (medians): following costs "
                      f"{100 * (1 - followed / alone):.1f}%")
        finally:
            subprocess.run(["bash", SSHHOST, "stop", folder], stdout=subprocess.DEVNULL)


if __name__ == "__main__":
    sys.exit(main())
