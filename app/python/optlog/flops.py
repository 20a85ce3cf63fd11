# SPDX-License-Identifier: MIT
"""A recorded run's model FLOPs per token, the numerator of its MFU: given by the trainer
(run.flops_per_token), or counted by PyTorch's own counter, torch.utils.flop_counter (PyTorch 2.1
and later), over one training step and divided by that step's tokens."""


def counter_name():
    """"torch.utils.flop_counter (PyTorch 2.11.0)", or None where the installed PyTorch has none."""
    try:
        import torch
        from torch.utils.flop_counter import FlopCounterMode  # noqa: F401 - only whether it exists
    except ImportError:
        return None
    return f"torch.utils.flop_counter (PyTorch {torch.__version__})"


class StepFlops:
    """Counts what one step computes: begin() before it, end() after it (also when it raised),
    then `flops`: 0 where the counter knows none of the step's operators (an LSTM on a CPU runs as
    one fused kernel it does not count)."""

    def __init__(self):
        from torch.utils.flop_counter import FlopCounterMode

        self._mode = FlopCounterMode(display=False)
        self.flops = 0

    def begin(self):
        self._mode.__enter__()

    def end(self):
        self._mode.__exit__(None, None, None)
        self.flops = int(self._mode.get_total_flops())
