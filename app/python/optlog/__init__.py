# SPDX-License-Identifier: MIT
"""optlog for PyTorch scripts: records a training run into an optlog study while it trains.

    import optlog

    with optlog.Run("runs.optlog", name="bf16 s1", group="bf16", config=args, seed=1,
                    steps=args.steps) as run:
        for step in range(args.steps):
            loss = train_one_step()
            run.step(step, loss, tokens=(step + 1) * tokens_per_step, lr=lr)
            if step == 2:
                run.memory(model, optimizer)
            if (step + 1) % 50 == 0:
                run.validation(evaluate())

The run is written by `optlog record --db STUDY` (the optlog package), started as a child process;
`optlog show`, `optlog compare` and the workbench read it like any run of the engine. How the block
ends is the run's outcome: completed, diverged (a non-finite loss was reported), failed (an
exception), cancelled (Ctrl-C) or oom. Without the optlog binary the script trains unrecorded.
The events are optlog's wire format, docs/events.md.
"""
from .config import flatten_config
from .run import MODULE_VERSION, Run

__all__ = ["Run", "flatten_config", "MODULE_VERSION"]
__version__ = str(MODULE_VERSION)
