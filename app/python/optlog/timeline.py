# SPDX-License-Identifier: MIT
"""The memory timeline of the measured step: the bytes in use over it, phase by phase, as the
`memory_timeline` event carries it (docs/events.md).

The phases are those a trainer's hooks can see: `forward` from the step's start (the batch, the
model's forward), `loss` from the model's output (the loss, and its backward until the gradient
reaches that output), `backward` from there, and `optimizer step` from the optimizer's step (its
step pre-hook, or before PyTorch 2.0 its step method wrapped while the step is measured; an
optimizer stepped with a closure that runs the passes, as Lightning's is, updates unseen at the
end of the backward phase). The model called forward again after a backward (gradient
accumulation) begins the next microbatch.

On the CPU the points are torch.profiler's allocation events, the ones the step's peak is
measured from, each in the phase its time falls in ("allocations"). On CUDA it is the caching
allocator read at each phase's start: the bytes in use, and its high-water mark since the phase
before ("phase marks": two points a phase), as optlog's engine reads it there.
"""
import bisect
import time

# At most this many points are sent, as optlog keeps them (core/contract/memorytimeline.h).
MAX_POINTS = 2000


def first_tensor(output, wanted):
    """The first tensor of a module's output (a tensor, or dicts, lists and tuples of them) for
    which wanted(tensor) holds; None when there is none."""
    if hasattr(output, "is_floating_point"):
        return output if wanted(output) else None
    items = output.values() if isinstance(output, dict) else output if isinstance(output, (list, tuple)) else ()
    for item in items:
        found = first_tensor(item, wanted)
        if found is not None:
            return found
    return None


class PhaseMarks:
    """Where the step is: (time ns, part, microbatch) at each phase's start, from the hooks of
    `model` and `optimizer`. `on_mark`, when given, is called at each mark (CUDA's reading)."""

    def __init__(self, model, optimizer=None, on_mark=None):
        self.model, self.optimizer, self.on_mark = model, optimizer, on_mark
        self.marks = []
        self._handles = []

    def begin(self):
        self._mark("forward", 0)
        if hasattr(self.model, "register_forward_pre_hook"):
            self._handles.append(self.model.register_forward_pre_hook(self._forward_begins))
            self._handles.append(self.model.register_forward_hook(self._forward_ends))
        if self.optimizer is None:
            return
        try:
            self._handles.append(self.optimizer.register_step_pre_hook(self._optimizer_begins))
        except (AttributeError, TypeError, RuntimeError):
            # PyTorch 1.x, or a wrapper that forwards the method but not its hooks' state
            # (Accelerate's AcceleratedOptimizer): the step method, wrapped on the instance.
            if hasattr(self.optimizer, "step"):
                self._wrap_step()

    def end(self):
        for handle in self._handles:
            handle.remove()
        self._handles = []

    def _wrap_step(self):
        """PyTorch 1.x: the optimizer's step, wrapped on the instance until end() puts back what
        the instance had (a learning-rate scheduler wraps it there too)."""
        optimizer = self.optimizer
        had = optimizer.__dict__.get("step")
        inner = optimizer.step

        def step(*args, **kwargs):
            self._optimizer_begins(optimizer, args, kwargs)
            return inner(*args, **kwargs)

        optimizer.step = step

        class Unwrap:
            @staticmethod
            def remove():
                if had is None:
                    optimizer.__dict__.pop("step", None)
                else:
                    optimizer.step = had

        self._handles.append(Unwrap())

    def _forward_begins(self, module, inputs):
        _, part, microbatch = self.marks[-1]
        if part != "forward":  # a forward after a backward: the next microbatch
            self._mark("forward", microbatch + 1)

    def _forward_ends(self, module, inputs, output):
        self._mark("loss", self.marks[-1][2])
        tensor = first_tensor(output, lambda t: t.requires_grad)  # where the model's backward begins
        if tensor is not None:
            tensor.register_hook(self._backward_begins)

    def _backward_begins(self, gradient):
        self._mark("backward", self.marks[-1][2])  # returns None: the gradient goes on unchanged

    def _optimizer_begins(self, optimizer, args, kwargs):
        # Before any backward, the optimizer is given a closure that runs the passes (Lightning):
        # its update comes after them, unseen, in the backward phase.
        if any(part == "backward" for _, part, _ in self.marks):
            self._mark("optimizer step", 0)

    def _mark(self, part, microbatch):
        if self.marks and self.marks[-1][1:] == (part, microbatch):
            return
        self.marks.append((time.time_ns(), part, microbatch))
        if self.on_mark is not None:
            self.on_mark()


class CudaMarks:
    """CUDA's phase marks: at each, the bytes in use and the high-water mark since the mark before,
    taken through the peak meter so that the step's own peak is kept (memory.PeakMeter)."""

    def __init__(self, device, meter):
        self.device, self.meter = device, meter
        self.readings = []  # per mark: [bytes in use at it, the phase's peak so far]

    def read(self):
        import torch

        if self.readings:
            self.readings[-1][1] = max(self.readings[-1][0], self.meter.take_phase_peak())
        in_use = torch.cuda.memory_allocated(self.device)
        self.readings.append([in_use, in_use])

    def close(self):
        if self.readings:
            self.readings[-1][1] = max(self.readings[-1][0], self.meter.take_phase_peak())


def _phase(part, microbatch, first_event, start_bytes, peak_bytes):
    phase = {"part": part, "first_event": first_event, "start_bytes": int(start_bytes),
             "peak_bytes": int(max(start_bytes, peak_bytes))}
    if microbatch:
        phase["microbatch"] = microbatch
    return phase


def cpu_timeline(marks, start_bytes, deltas):
    """Phases and points from the marks and the profiler's (time ns, bytes) allocation deltas."""
    times = [t for t, _, _ in marks]
    levels, phase_of = [], []
    level = start_bytes
    for when, nbytes in deltas:
        level += nbytes
        levels.append(level)
        phase_of.append(max(0, bisect.bisect_right(times, when) - 1))
    phases = []
    for k, (_, part, microbatch) in enumerate(marks):
        first = bisect.bisect_left(phase_of, k)
        last = bisect.bisect_left(phase_of, k + 1)
        start = levels[first - 1] if first > 0 else start_bytes
        phases.append(_phase(part, microbatch, first, start, max(levels[first:last], default=start)))
    return "allocations", phases, list(range(len(levels))), levels, len(levels)


def cuda_timeline(marks, readings):
    phases, events, levels = [], [], []
    for k, ((_, part, microbatch), (start, peak)) in enumerate(zip(marks, readings)):
        phases.append(_phase(part, microbatch, 2 * k, start, peak))
        events += [2 * k, 2 * k + 1]
        levels += [int(start), int(max(start, peak))]
    return "phase marks", phases, events, levels, len(events)


def thin(phases, events, levels, max_points=MAX_POINTS):
    """At most max_points of the points (two a phase where there are more phases), keeping each
    phase's highest and lowest: each phase gets a share by its points, and each stretch of it
    keeps its lowest and highest, in order. As optlog's engine thins its own (thinPoints)."""
    total = len(events)
    if total <= max_points or not phases:
        return events, levels
    begins = [bisect.bisect_left(events, p["first_event"]) for p in phases] + [total]
    stretches = max(max_points // 2, len(phases))
    spare = stretches - len(phases)
    kept_events, kept_levels = [], []
    for k in range(len(phases)):
        begin, count = begins[k], begins[k + 1] - begins[k]
        own = 1 + spare * count // total
        for s in range(own if count else 0):
            lo, hi = begin + count * s // own, begin + count * (s + 1) // own
            if lo == hi:
                continue
            low = min(range(lo, hi), key=levels.__getitem__)
            high = max(range(lo, hi), key=levels.__getitem__)
            for i in sorted({low, high}):
                kept_events.append(events[i])
                kept_levels.append(levels[i])
    return kept_events, kept_levels


def timeline_event(source, phases, events, levels, total_events, step, first_step, states_before, states_after):
    """The `memory_timeline` event's fields."""
    events, levels = thin(phases, events, levels)
    return {"timeline": {"source": source, "step": int(step), "first_step": bool(first_step), "measured_step": True,
                         "events": int(total_events), "phases": phases,
                         "points": {"event": events, "bytes": [int(b) for b in levels]},
                         "states_before": states_before, "states_after": states_after}}
