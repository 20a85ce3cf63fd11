#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# Where a build folder's time went: each target's compile time (from ninja's .ninja_log), each
# test's time (from CTest's LastTest.log) and how busy the machine's cores were over the suite.
#   tools/where_time_went.py BUILD...                  the report, one section per build folder
#   tools/where_time_went.py busy BUILD -- COMMAND...  runs COMMAND (ctest, say), sampling the cores
#                                                       each second into BUILD/Testing/busy.tsv
# packaging/setup.sh test runs its suites through `busy` and prints the report at its end;
# docs/building.md holds a cold and a warm one.
import os
import re
import subprocess
import sys
import time
from collections import defaultdict

TOP = 12  # rows per table: the long tail says little


def ninja_runs(build):
    """The .ninja_log's edges, one list per ninja run (an edge is (start ms, end ms, an output))."""
    try:
        lines = open(os.path.join(build, '.ninja_log')).read().splitlines()
    except FileNotFoundError:
        return []
    latest = {}
    for line in lines:
        if not line.startswith('#'):
            start, end, mtime, output, command = line.split('\t')
            latest[output] = (int(start), int(end), int(mtime), output, command)  # a later line wins
    # Times are milliseconds since the run's own start, and ninja rewrites the log in no order
    # when it compacts it; the output's time of writing less the edge's end is when its run
    # started, the same for every edge of one run (an output ninja did not rewrite keeps an older
    # time, and so falls in a run of its own).
    by_origin = sorted(latest.values(), key=lambda edge: edge[2] / 1e6 - edge[1])
    runs, origin = [], None
    for start, end, mtime, output, command in by_origin:
        started = mtime / 1e6 - end
        if origin is None or started - origin > 10000:
            runs.append({})
            origin = started
        # An edge with several outputs (moc's, a library and its stamp) has a line for each: once.
        runs[-1].setdefault((start, end, command), (start, end, output))
    return [list(run.values()) for run in runs]


def target_of(output):
    """The CMake target an output belongs to: objects lie in CMakeFiles/TARGET.dir/, moc's in TARGET_autogen/."""
    match = re.search(r'CMakeFiles/([^/]+)\.dir/', output) or re.search(r'([^/]+)_autogen/', output)
    if match:
        return match.group(1)
    return os.path.basename(output)


def compile_report(build):
    runs = ninja_runs(build)
    if not runs:
        return ['  no .ninja_log: not built with Ninja here']
    # The last run that compiled something: a run with nothing to do still regenerates a header or two.
    run = next((run for run in reversed(runs) if any(output.endswith('.o') for _, _, output in run)), runs[-1])
    span = max(end for _, end, _ in run) - min(start for start, _, _ in run)
    per_target, objects = defaultdict(int), defaultdict(int)
    for start, end, output in run:
        target = target_of(output)
        per_target[target] += end - start
        objects[target] += output.endswith('.o')
    total = sum(per_target.values())
    lines = [f'  last ninja run that compiled: {len(run)} steps, span {span / 60000:.1f} min, '
             f'summed over targets {total / 60000:.1f} min (compile and link, both cores)']
    for target, ms in sorted(per_target.items(), key=lambda item: -item[1])[:TOP]:
        lines.append(f'    {ms / 1000:8.1f} s  {target} ({objects[target]} objects)')
    return lines


def test_times(build):
    """(name, seconds, passed) of each test of CTest's last run in BUILD."""
    try:
        log = open(os.path.join(build, 'Testing', 'Temporary', 'LastTest.log'), errors='replace').read()
    except FileNotFoundError:
        return []
    tests = []
    for block in re.split(r'\n(?=\d+/\d+ Testing: )', log):
        name = re.search(r'^\d+/\d+ Test: (\S+)', block, re.M)
        seconds = re.search(r'^Test time = +([0-9.]+) sec', block, re.M)
        if name and seconds:
            passed = 'Test Passed.' in block or 'Test Pass Reason:' in block
            tests.append((name.group(1), float(seconds.group(1)), passed))
    return tests


def test_report(build):
    tests = test_times(build)
    if not tests:
        return ['  no CTest log: no suite ran here']
    total = sum(seconds for _, seconds, _ in tests)
    failed = [name for name, _, passed in tests if not passed]
    lines = [f'  {len(tests)} tests, {total / 60:.1f} min summed'
             + (f', not passed: {" ".join(failed)}' if failed else '')]
    for name, seconds, _ in sorted(tests, key=lambda test: -test[1])[:TOP]:
        lines.append(f'    {seconds:8.1f} s  {name}')
    return lines


def busy_file(build):
    return os.path.join(build, 'Testing', 'busy.tsv')


def busy_report(build):
    try:
        rows = [line.split('\t') for line in open(busy_file(build)).read().splitlines()[1:]]
    except FileNotFoundError:
        return ['  no busy.tsv: the suite ran without `where_time_went.py busy`']
    if not rows:
        return ['  busy.tsv is empty: the suite ended within a second']
    cores = int(rows[0][2])
    busy = [float(row[1]) for row in rows]
    wall = float(rows[-1][0])
    # Per minute, so that a tail where one test runs alone beside an idle core shows.
    minutes = [busy[i:i + 60] for i in range(0, len(busy), 60)]
    per_minute = ' '.join(f'{sum(m) / len(m):.1f}' for m in minutes)
    below = sum(1 for b in busy if b < cores - 0.5)
    return [f'  suite wall {wall / 60:.1f} min, {sum(busy) / len(busy):.2f} of {cores} cores busy on average, '
            f'a core idle {100 * below / len(busy):.0f}% of the time',
            f'  busy cores per minute: {per_minute}']


def cpu_times():
    """(busy, total) jiffies of all cores together, from /proc/stat."""
    fields = [int(x) for x in open('/proc/stat').readline().split()[1:]]
    idle = fields[3] + fields[4]  # idle and iowait
    return sum(fields) - idle, sum(fields)


def busy(build, command):
    os.makedirs(os.path.dirname(busy_file(build)), exist_ok=True)
    cores = os.cpu_count()
    started = time.monotonic()
    try:
        process = subprocess.Popen(command)
    except OSError as error:
        print(f'where_time_went.py: cannot run {command[0]} ({error.strerror}); name a command on the PATH, ctest say',
              file=sys.stderr)
        return 2
    with open(busy_file(build), 'w') as out:
        out.write('seconds\tbusy_cores\tcores\n')
        previous = cpu_times()
        # Bounded by the command: the loop ends when it does.
        while process.poll() is None:
            try:
                process.wait(timeout=1)
            except subprocess.TimeoutExpired:
                pass
            now = cpu_times()
            elapsed = now[1] - previous[1]
            if elapsed > 0:
                out.write(f'{time.monotonic() - started:.1f}\t{cores * (now[0] - previous[0]) / elapsed:.2f}\t{cores}\n')
            previous = now
    return process.returncode


def main(argv):
    if len(argv) >= 4 and argv[0] == 'busy' and argv[2] == '--':
        return busy(argv[1], argv[3:])
    if not argv or argv[0].startswith('-') or argv[0] == 'busy':
        print('usage: where_time_went.py BUILD...  |  where_time_went.py busy BUILD -- COMMAND...', file=sys.stderr)
        return 2
    for build in argv:
        if not os.path.isdir(build):
            print(f'where_time_went.py: {build} is not a folder; name a build folder (build, build-pytorch)',
                  file=sys.stderr)
            return 2
        print(f'{build}:')
        print('\n'.join([' build'] + compile_report(build) + [' tests'] + test_report(build) + [' cores']
                        + busy_report(build)))
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
