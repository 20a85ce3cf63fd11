# SPDX-License-Identifier: MIT
"""A training run's memory by role, measured in the process: the `memory` event's rows.

State (parameters, gradients, optimizer state, master weights) is counted from the tensors
themselves, in bytes of their storages, each storage once: a tied head or a view of a flat
buffer is not counted twice. With a step to run, one training step is measured: how many bytes
autograd held saved at once (saved-tensor hooks), the peak the allocator reached, and the
narrowest dtype a module computed in.
"""
import resource
import sys
import weakref

from .recorder import say
from .timeline import CudaMarks, PhaseMarks, cpu_timeline, cuda_timeline, first_tensor, timeline_event


def dtype_name(dtype):
    return str(dtype).replace("torch.", "")  # "float32", "bfloat16", ...


def storage_of(tensor):
    """(key, bytes) of the tensor's storage; the key tells storages apart across devices."""
    if hasattr(tensor, "untyped_storage"):  # PyTorch 2.x; TypedStorage is deprecated there
        storage = tensor.untyped_storage()
    else:  # PyTorch 1.13: a TypedStorage, whose nbytes() is the whole storage's
        storage = tensor.storage()
    return (str(tensor.device), storage.data_ptr()), storage.nbytes()


class Tensors:
    """Bytes and dtypes over unique storages."""

    def __init__(self, tensors=()):
        self.bytes_of = {}  # storage key -> bytes
        self.dtypes = []
        for t in tensors:
            self.add(t)

    def add(self, tensor):
        key, nbytes = storage_of(tensor)
        self.bytes_of[key] = nbytes
        if tensor.dtype not in self.dtypes:
            self.dtypes.append(tensor.dtype)

    @property
    def bytes(self):
        return sum(self.bytes_of.values())

    @property
    def dtype(self):
        """One dtype's name, "mixed" when several, None when empty."""
        if not self.dtypes:
            return None
        return dtype_name(self.dtypes[0]) if len(self.dtypes) == 1 else "mixed"


def parameters_of(model):
    """Unique parameters of a module, or of an iterable of tensors."""
    tensors = model.parameters() if hasattr(model, "parameters") else model
    unique, seen = [], set()
    for t in tensors:
        if id(t) not in seen:
            seen.add(id(t))
            unique.append(t)
    return unique


def optimizer_state_of(optimizer):
    # Only tensors with a dimension: PyTorch's AdamW keeps its `step` counter as a 0-dim tensor,
    # LibTorch's as a plain integer. Leaving it out makes a recorded run and an optlog engine run
    # of the same shape agree exactly (2 moments per parameter, nothing else).
    if optimizer is None:
        return []
    return [v for state in optimizer.state.values() for v in state.values()
            if hasattr(v, "dim") and v.dim() >= 1]


class State:
    """The model state's tensors by role, as they are now."""

    def __init__(self, model, optimizer=None, masters=None):
        params = parameters_of(model)
        self.parameters = Tensors(params)
        self.gradients = Tensors(p.grad for p in params if p.grad is not None)
        self.optimizer_state = Tensors(optimizer_state_of(optimizer))
        self.master_weights = Tensors(masters or ())

    def roles(self):
        return [("parameters", self.parameters), ("gradients", self.gradients),
                ("master_weights", self.master_weights), ("optimizer_state", self.optimizer_state)]

    def bytes(self):
        return sum(tensors.bytes for _, tensors in self.roles())

    def role_bytes(self):
        """{role: bytes} of the roles it holds: a memory timeline's floor."""
        return {role: tensors.bytes for role, tensors in self.roles() if tensors.dtypes}


def peak_rss_bytes():
    maxrss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return maxrss if sys.platform == "darwin" else maxrss * 1024  # macOS says bytes, Linux KiB


class SavedActivations:
    """The most bytes autograd held saved at once, by storage, leaving out the storages of
    parameters and master weights (saved for backward, but counted as state)."""

    def __init__(self, excluded_keys):
        self.excluded = excluded_keys
        self.held = {}  # storage key -> [saved tensors holding it, bytes]
        self.bytes = 0
        self.most = 0
        self.dtypes = Tensors()

    class _Held:
        __slots__ = ("tensor", "key", "counter")

        def __init__(self, tensor, key, counter):
            self.tensor, self.key, self.counter = tensor, key, counter

        def __del__(self):  # autograd released the saved tensor (after its backward)
            self.counter._release(self.key)

    def pack(self, tensor):
        try:
            key, nbytes = storage_of(tensor)
        except Exception:  # noqa: BLE001 - a tensor without a plain storage: uncounted, the step must go on
            return tensor
        if key in self.excluded:
            return tensor
        entry = self.held.setdefault(key, [0, nbytes])
        entry[0] += 1
        if entry[0] == 1:
            self.bytes += nbytes
            self.most = max(self.most, self.bytes)
            # Token ids, masks and a Python number's 0-dim float64 say nothing of the precision.
            if tensor.is_floating_point() and tensor.dim() > 0 and tensor.dtype not in self.dtypes.dtypes:
                self.dtypes.dtypes.append(tensor.dtype)
        return SavedActivations._Held(tensor, key, self)

    @staticmethod
    def unpack(packed):
        return packed.tensor if isinstance(packed, SavedActivations._Held) else packed

    def _release(self, key):
        entry = self.held.get(key)
        if entry is None:
            return
        entry[0] -= 1
        if entry[0] == 0:
            self.bytes -= entry[1]
            del self.held[key]


def _first_floating(output):
    tensor = first_tensor(output, lambda t: t.is_floating_point())
    return tensor.dtype if tensor is not None else None


class ComputeDtype:
    """The narrowest floating dtype any module's output had: under autocast, the matmuls' dtype,
    though embeddings, norms and a model's float32 loss stay in float32."""

    def __init__(self, model):
        self.seen = []
        modules = model.modules() if hasattr(model, "modules") else ()
        self.handles = [m.register_forward_hook(self._hook) for m in modules]

    def _hook(self, module, inputs, output):
        dtype = _first_floating(output)
        if dtype is not None and dtype not in self.seen:
            self.seen.append(dtype)

    def remove(self):
        for handle in self.handles:
            handle.remove()
        self.handles = []

    @property
    def name(self):
        if not self.seen:
            return None
        narrowest = min(_itemsize(d) for d in self.seen)
        names = [dtype_name(d) for d in self.seen if _itemsize(d) == narrowest]
        return names[0] if len(names) == 1 else "mixed"


def _itemsize(dtype):
    if hasattr(dtype, "itemsize"):  # PyTorch 2.1 and later
        return dtype.itemsize
    import torch

    return torch.empty((), dtype=dtype).element_size()


def allocation_deltas(prof):
    """[(time ns, bytes)] of the CPU allocator's allocations (+) and frees (-) a torch.profiler
    session with profile_memory=True saw, in time order. Blocks allocated before the session
    began are freed unseen: LibTorch knows no size for them (and logs so once a process)."""
    results = prof.profiler.kineto_results
    deltas = []
    if hasattr(results, "experimental_event_tree"):
        # Nanosecond times, so an allocation and a free on two threads within a microsecond
        # still come in their order.
        stack = list(results.experimental_event_tree())
        while stack:
            node = stack.pop()
            fields = getattr(node, "extra_fields", None)
            if hasattr(fields, "alloc_size") and getattr(fields.device, "type", "cpu") == "cpu":
                deltas.append((node.start_time_ns, fields.alloc_size))
            stack.extend(node.children)
    else:  # microseconds only
        for e in results.events():
            if e.name() == "[memory]" and str(e.device_type()).endswith("CPU"):
                deltas.append((e.start_us() * 1000, e.nbytes()))
    deltas.sort(key=lambda d: d[0])
    return deltas


def high_water(deltas):
    """The most the running sum of deltas reached above its start (0 when it never rose)."""
    level = most = 0
    for _, nbytes in deltas:
        level += nbytes
        most = max(most, level)
    return most


_unknown_block_warning_spent = False


def spend_unknown_block_warning():
    """LibTorch logs one line per process on stderr when a profiled step frees a block allocated
    before profiling began ("Memory block of unknown size was allocated before the profiling
    started"), and the measured step always does: it frees what it found. The line is spent here,
    once, on a block of our own, with stderr sent nowhere for that moment, so the user's terminal
    never shows it; with it go the profiler's other first-use lines (a CUDA build without a GPU
    says so). Nothing of the step's own is silenced."""
    global _unknown_block_warning_spent
    if _unknown_block_warning_spent:
        return
    _unknown_block_warning_spent = True
    import os
    import warnings

    import torch

    block = torch.empty(16)
    sys.stderr.flush()
    saved = os.dup(2)
    try:
        nowhere = os.open(os.devnull, os.O_WRONLY)
        os.dup2(nowhere, 2)
        os.close(nowhere)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU], profile_memory=True):
                del block
    finally:
        os.dup2(saved, 2)
        os.close(saved)


class PeakMeter:
    """The allocator's peak over one step, in bytes, on the model's device."""

    def __init__(self, device):
        self.device = device
        self.peak = self.peak_reserved = None
        self.measure = None
        self.start_bytes, self.deltas = 0, []  # the CPU's: the state at the start, the allocations after
        self._carried = self._carried_reserved = 0  # CUDA: the peaks take_phase_peak read before it reset them

    def take_phase_peak(self):
        """CUDA: the high-water mark since the last call (or start), which then starts anew; the
        step's peak still counts it (the allocator has one high-water mark)."""
        import torch

        peak = torch.cuda.max_memory_allocated(self.device)
        self._carried = max(self._carried, peak)
        self._carried_reserved = max(self._carried_reserved, torch.cuda.max_memory_reserved(self.device))
        torch.cuda.reset_peak_memory_stats(self.device)
        return peak

    def start(self, state_bytes, state_refs):
        """state_refs: [(bytes, [weak references to its tensors])] per storage of the state."""
        import torch

        if self.device.type == "cuda":
            torch.cuda.synchronize(self.device)
            torch.cuda.reset_peak_memory_stats(self.device)
        elif self.device.type == "cpu":
            spend_unknown_block_warning()
            self._state_bytes = state_bytes
            self._state = state_refs
            self._profile = torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU],
                                                   profile_memory=True)
            self._profile.start()
        elif self.device.type == "mps" and hasattr(getattr(torch, "mps", None), "current_allocated_memory"):
            self.peak = torch.mps.current_allocated_memory()

    def sample(self):
        """MPS has no peak counter: the step samples the current allocation as it goes."""
        if self.device.type == "mps" and self.peak is not None:
            import torch

            self.peak = max(self.peak, torch.mps.current_allocated_memory())

    def stop(self):
        import torch

        if self.device.type == "cuda":
            torch.cuda.synchronize(self.device)
            self.peak = max(self._carried, torch.cuda.max_memory_allocated(self.device))
            self.peak_reserved = max(self._carried_reserved, torch.cuda.max_memory_reserved(self.device))
            self.measure = "CUDA: torch.cuda.max_memory_allocated over one step"
        elif self.device.type == "cpu":
            self._profile.stop()
            # The state the step started with, less what it freed unseen: a gradient that
            # zero_grad(set_to_none=True) dropped is taken as freed at the step's start, where
            # zero_grad stands; its new gradient is then among the profiler's allocations.
            self.start_bytes = self._state_bytes - sum(nbytes for nbytes, refs in self._state
                                                       if all(r() is None for r in refs))
            self.deltas = allocation_deltas(self._profile)
            self.peak = self.start_bytes + high_water(self.deltas)
            self._profile = None
            self.measure = ("CPU: the parameters, gradients, optimizer state and master weights live at the "
                            "step's start, plus the high-water mark of torch.profiler's allocation events over "
                            "one step")
        elif self.device.type == "mps" and self.peak is not None:
            self.sample()
            self.measure = ("MPS: torch.mps.current_allocated_memory sampled at each module's output and each "
                            "saved tensor over one step (a lower bound of the peak)")
        else:
            self.measure = f"{self.device.type}: the peak is not measured"


def _weak_state(model, optimizer, masters):
    """[(bytes, [weak references to its tensors])] per storage of the state: the meter tells from
    them which storages the step freed, without keeping any alive."""
    by_storage = {}
    params = parameters_of(model)
    tensors = params + [p.grad for p in params if p.grad is not None]
    for t in tensors + optimizer_state_of(optimizer) + (masters or []):
        by_storage.setdefault(storage_of(t), []).append(weakref.ref(t))
    return [(nbytes, refs) for (_, nbytes), refs in by_storage.items()]


class MemoryProbe:
    """Measures one step: begin() before it, end() after it (also when it raised), then
    payload() gives the `memory` event's fields."""

    def __init__(self, model, optimizer=None, masters=None):
        self.model, self.optimizer = model, optimizer
        self.masters = list(masters) if masters is not None else None
        self.saved = self.compute = self.meter = self._hooks = None
        self.marks = self._cuda_marks = None
        self.states_before, self.first_step = {}, False

    def begin(self):
        import torch

        params = parameters_of(self.model)
        device = params[0].device if params else torch.device("cpu")
        start = State(self.model, self.optimizer, self.masters)
        excluded = set(start.parameters.bytes_of) | set(start.master_weights.bytes_of)
        self.saved = SavedActivations(excluded)
        self.compute = ComputeDtype(self.model)
        self.meter = PeakMeter(device)
        if device.type == "mps":
            self.compute.handles += [m.register_forward_hook(lambda *_: self.meter.sample())
                                     for m in self.model.modules()]
        pack, unpack = self.saved.pack, SavedActivations.unpack
        if device.type == "mps":
            def pack(tensor, inner=pack):
                self.meter.sample()
                return inner(tensor)
        self._hooks = torch.autograd.graph.saved_tensors_hooks(pack, unpack)
        self._hooks.__enter__()
        del params  # no strong reference may outlive this: it would keep alive what the step frees
        self.meter.start(start.bytes(), _weak_state(self.model, self.optimizer, self.masters))
        # The step's timeline (timeline.py): its phases from the hooks; on CUDA read at each.
        self.states_before = start.role_bytes()
        self.first_step = self.optimizer is not None and not optimizer_state_of(self.optimizer)
        if device.type == "cuda":
            self._cuda_marks = CudaMarks(device, self.meter)
        if device.type in ("cpu", "cuda"):
            try:
                self.marks = PhaseMarks(self.model, self.optimizer,
                                        self._cuda_marks.read if self._cuda_marks is not None else None)
                self.marks.begin()
            except Exception as e:  # noqa: BLE001 - the memory by role is measured without it
                if self.marks is not None:
                    self.marks.end()
                self.marks = self._cuda_marks = None
                say(f"optlog: the step's memory timeline is not recorded ({type(e).__name__}: {e})")

    def end(self):
        try:
            if self.marks is not None:
                self.marks.end()
            if self._cuda_marks is not None:
                self._cuda_marks.close()
            if self.meter is not None:
                self.meter.stop()
        finally:
            if self._hooks is not None:
                self._hooks.__exit__(None, None, None)
                self._hooks = None
            if self.compute is not None:
                self.compute.remove()

    def payload(self):
        return memory_event(State(self.model, self.optimizer, self.masters), self)

    def timeline_payload(self, step):
        """The `memory_timeline` event's fields for the measured step, numbered `step`; None where
        the device has none (MPS)."""
        if self.marks is None or not self.marks.marks:
            return None
        if self._cuda_marks is not None:
            parts = cuda_timeline(self.marks.marks, self._cuda_marks.readings)
        else:
            parts = cpu_timeline(self.marks.marks, self.meter.start_bytes, self.meter.deltas)
        after = State(self.model, self.optimizer, self.masters).role_bytes()
        return timeline_event(*parts, step=step, first_step=self.first_step, states_before=self.states_before,
                              states_after=after)


def memory_event(state, probe=None):
    """The `memory` event's fields: rows by role, dtypes and how the peak was measured."""
    rows = []

    def row(role, nbytes, dtype=None):
        rows.append({"role": role, "bytes": int(max(0, nbytes)), **({"dtype": dtype} if dtype else {})})

    row("parameters", state.parameters.bytes, state.parameters.dtype)
    row("gradients", state.gradients.bytes, state.gradients.dtype)
    if state.master_weights.dtypes:
        row("master_weights", state.master_weights.bytes, state.master_weights.dtype)
    row("optimizer_state", state.optimizer_state.bytes, state.optimizer_state.dtype)
    dtypes = {"weights": state.parameters.dtype, "gradients": state.gradients.dtype,
              "master_weights": state.master_weights.dtype or "none",
              "optimizer_state": state.optimizer_state.dtype}
    event = {"rows": rows}
    if probe is not None:
        row("saved_activations", probe.saved.most, probe.saved.dtypes.dtype)
        meter = probe.meter
        if meter.peak is not None:
            row("temporaries", meter.peak - state.bytes() - probe.saved.most)
            row("peak", meter.peak)
        if meter.peak_reserved is not None:
            row("peak_reserved", meter.peak_reserved)
        event["peak_measure"] = meter.measure
        dtypes["compute"] = probe.compute.name
    row("peak_rss", peak_rss_bytes())
    event["dtypes"] = {k: v for k, v in dtypes.items() if v is not None}
    return event
