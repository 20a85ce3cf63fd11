# SPDX-License-Identifier: MIT
"""Event lines of optlog's wire format (docs/events.md, format 1) and how a run's end reads.

Pure functions: nothing here writes or imports torch, so the format can be tested alone.
"""
import json
import math

FORMAT = 1


def number(value):
    """A float or int for JSON, or None when it is not finite (JSON has no NaN: `null` reads as
    NaN). Accepts a 0-dim tensor or numpy scalar, read with .item() only here, where it is due."""
    if value is None:
        return None
    if hasattr(value, "item") and not isinstance(value, (int, float)):
        value = value.item()
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        return value
    value = float(value)
    return value if math.isfinite(value) else None


def _finite(value):
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


def line(event, **fields):
    """One event as a JSON line ending in a newline. Fields that are None are left out (an absent
    number is unknown), except `train_loss` and `val_loss`, which are required and null when not
    finite. Never emits NaN or Infinity."""
    required_nullable = ("train_loss", "val_loss")
    body = {"event": event}
    for key, value in fields.items():
        if value is not None or key in required_nullable:
            body[key] = _finite(value)
    return json.dumps(body, allow_nan=False, ensure_ascii=False, separators=(",", ":")) + "\n"


_OOM_TEXTS = ("out of memory", "can't allocate memory")  # CUDA and MPS; LibTorch's CPU allocator


def is_out_of_memory(error):
    if type(error).__name__ == "OutOfMemoryError":  # torch.cuda.OutOfMemoryError, without importing torch
        return True
    if isinstance(error, (MemoryError, RuntimeError)):
        text = str(error).lower()
        return isinstance(error, MemoryError) or any(t in text for t in _OOM_TEXTS)
    return False


def ending(error, last_step, divergence=None):
    """The `finished` event's fields for a run whose block ended with `error` (None: normally).

    last_step: the last step reported, or None. divergence: (step, loss) of the first non-finite
    training loss, or None. An exception says how the run ended even after a divergence: it is
    what stopped the script."""
    def describe(e):
        text = str(e)
        return f"{type(e).__name__}: {text}" if text else type(e).__name__

    if isinstance(error, SystemExit) and error.code in (None, 0):
        error = None  # sys.exit(0) inside the block is a normal end
    if error is None:
        if divergence is not None:
            step, loss = divergence
            return {"outcome": "diverged", "step": step,
                    "message": f"training loss became {loss} at step {step}"}
        return {"outcome": "completed", "step": last_step}
    if isinstance(error, KeyboardInterrupt):
        return {"outcome": "cancelled", "step": last_step, "message": "interrupted (KeyboardInterrupt)"}
    if is_out_of_memory(error):
        # The step that failed is the one after the last reported.
        return {"outcome": "oom", "step": 0 if last_step is None else last_step + 1, "message": describe(error)}
    return {"outcome": "failed", "step": last_step, "message": describe(error)}


# `optlog record` exits as `optlog run` does; any other status means it refused the stream.
EXIT_STATUS = {"completed": 0, "failed": 1, "crashed": 1, "diverged": 3, "cancelled": 4, "oom": 5}
