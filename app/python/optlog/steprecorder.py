# SPDX-License-Identifier: MIT
"""What optlog's callbacks for the trainers people already use (lightning.py, transformers.py) do
around each optimizer step of a trainer they do not own: the microbatches' tokens and losses
summed into one `step` event, and one step measured, memory by role and FLOPs, as run.memory
measures one."""
import math
import numbers


def storable(mapping):
    """A trainer's settings as a run's config can hold them: plain values kept, objects named by
    their text ("torch.bfloat16"), private keys ("_...") and empty values left out."""
    out = {}
    for key, value in (mapping or {}).items():
        key = str(key)
        if not key or key.startswith("_") or value is None:
            continue
        if isinstance(value, dict):
            nested = storable(value)
            if nested:
                out[key] = nested
        elif isinstance(value, (bool, str)) or (isinstance(value, numbers.Real) and math.isfinite(value)):
            out[key] = value.item() if hasattr(value, "item") else value
        elif isinstance(value, (list, tuple)) and all(isinstance(v, (bool, int, float, str)) for v in value):
            if value:
                out[key] = list(value)
        else:
            out[key] = str(value)
    return out


def tokens_in(batch):
    """Tokens a microbatch trains on: the elements of its first integer tensor (the token ids of
    a language model's batch: a tensor, a tuple or list starting with one, or a dict of them with
    `input_ids` first looked for); 0 when it holds none."""
    if hasattr(batch, "dtype") and hasattr(batch, "numel"):
        return int(batch.numel()) if not batch.dtype.is_floating_point else 0
    if isinstance(batch, dict) or hasattr(batch, "keys"):
        if "input_ids" in batch:
            return tokens_in(batch["input_ids"])
        batch = [batch[k] for k in batch.keys()]
    if isinstance(batch, (list, tuple)):
        for item in batch:
            found = tokens_in(item)
            if found:
                return found
    return 0


class StepRecorder:
    """Turns a trainer's microbatches into the run's steps. A step: begin() when it starts,
    microbatch() after each forward, optimizer_stepped() right after the optimizer's step (its
    gradients and state still there), then done() with its index, when the trainer has counted
    it. The step whose index is `measure_step` is measured."""

    def __init__(self, run, measure_step=2):
        self.run = run
        self.measure_step = measure_step
        self.tokens = 0  # every microbatch's, so far
        self._losses = []
        self._step_tokens = 0
        self._summed = False
        self._probe = self._counting = None
        self._lr = None

    def begin(self, index, model, optimizer):
        self._losses, self._step_tokens, self._summed = [], 0, False
        if index == self.measure_step:
            self._probe = self.run._begin_measure(model, optimizer)
            self._counting = self.run._begin_count()

    def microbatch(self, loss, tokens, summed=False):
        """loss: the microbatch's (a tensor, read at the step's end); summed: the trainer scaled
        each microbatch's loss so that their sum is the step's mean loss, rather than each being
        its own microbatch's mean."""
        if loss is not None:
            self._losses.append(loss.detach() if hasattr(loss, "detach") else loss)
        self._summed = self._summed or summed
        self._step_tokens += int(tokens)
        self.tokens += int(tokens)

    def optimizer_stepped(self, optimizer):
        if optimizer is not None and getattr(optimizer, "param_groups", None):
            self._lr = optimizer.param_groups[0].get("lr")
        if self._probe is not None:
            probe, self._probe = self.run._end_measure(self._probe), None
            if probe is not None:
                self.run._send_measured(probe, self.measure_step)
        if self._counting is not None:
            counting, self._counting = self._counting, None
            self.run._end_count(counting, self._step_tokens)

    def done(self, index):
        if not self._losses:
            return self.run._logging_failed("the trainer gave no training loss for its steps: they are not recorded")
        total = sum(self._losses)
        loss = total if self._summed else total / len(self._losses)
        self.run.step(index, loss, tokens=self.tokens, lr=self._lr)
