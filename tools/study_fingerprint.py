#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# A study's losses and memory bytes, exactly, one line each: what a change that must not change
# training (a refactor) leaves the same. Diff two fingerprints:
#   build/app/optlog study default --db before.sqlite --set runtime.threads=2
#   build/app/optlog export before.sqlite --format json -o before.json
#   python3 tools/study_fingerprint.py before.json > before.txt   (the same for after; diff them)
# Step times, tokens/s and the process's peak RSS are left out: they are the machine's, not the run's.
import json
import sys


def main(path):
    study = json.load(open(path))
    for run in study['runs']:
        print('run', run['name'], run['outcome'], run['outcome_step'])
        for m in run['metrics']:
            print('  step', m['step'], repr(m['train_loss']), repr(m['grad_norm']), repr(m['learning_rate']),
                  m['tokens'])
        for v in run['validation']:
            print('  val', v['step'], repr(v['loss']), repr(v['sequence_sd']))
        for m in run['memory']:
            if m['role'] != 'peak_rss':
                print('  mem', m['role'], m['source'], m['dtype'], m['bytes'])


if __name__ == '__main__':
    if len(sys.argv) != 2:
        sys.exit('usage: study_fingerprint.py STUDY.json (from optlog export --format json)')
    main(sys.argv[1])
