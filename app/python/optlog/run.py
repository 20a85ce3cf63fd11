# SPDX-License-Identifier: MIT
"""One recorded training run: the events of a PyTorch script, written to `optlog record`."""
import os
import sys
import time

from . import events
from .config import flatten_config
from .environment import capture_environment
from .flops import StepFlops, counter_name
from .memory import MemoryProbe, State, memory_event
from .recorder import say, start_recorder

MODULE_VERSION = 1


class Run:
    """A training run recorded into a study while it trains; use it as a context manager.

    The study is written by a child process, `optlog record --db STUDY`. Logging never stops
    training: without the optlog binary, or once writing to it failed (said once on stderr),
    every call is a no-op. A bad config, name or group is the one error Run raises (TypeError or
    ValueError, at creation, before training): the study could not store it.
    """

    def __init__(self, study, name, config=None, group=None, seed=None, steps=0, device=None, message=None,
                 engine_config=None):
        for what, text in (("name", name), ("group", group if group is not None else "-")):
            if not isinstance(text, str) or not text.strip() or "\n" in text:
                raise ValueError(f"optlog: the run's {what} must be one line of text, not {text!r}")
        self.study = os.fspath(study)
        self.name = name
        self.group = group
        self.steps = int(steps or 0)
        self.config = flatten_config(config, seed)
        self.device = device
        self.message = message
        # The GPT this run trains in optlog's engine config keys ({"model.width": 256, ...}), when
        # it is one optlog's memory model knows: the study then keeps its prediction beside the
        # measurement. Checked like the config: it must be storable.
        self.engine_config = flatten_config(engine_config) if engine_config is not None else None
        self._recorder = None
        self._last_step = None
        self._last_tokens = 0
        self._divergence = None  # (step, loss) of the first non-finite training loss
        self._clock = None
        self._said = set()
        self._step_tokens = 0  # tokens of the last step reported: what one counted step trained on
        self._flops_given = False
        self._step_flops = None  # FLOPs counted over one step
        self._flops_sent = False

    @property
    def recording(self):
        return self._recorder is not None and self._recorder.recording

    def __enter__(self):
        self._recorder = start_recorder(self.study)
        script = os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else "python"
        if self.recording:
            self._send("started", format=events.FORMAT, name=self.name, group=self.group, steps=self.steps,
                       config=self.config, environment=self._environment(),
                       recorder=f"optlog Python module {MODULE_VERSION}, {script}", message=self.message,
                       engine_config=self.engine_config)
        self._clock = time.perf_counter()
        return self

    def __exit__(self, error_type, error, traceback):
        self._send_counted_flops(self._step_tokens)
        finished = events.ending(error, self._last_step, self._divergence)
        self._send("finished", **finished)
        if self._recorder is not None:
            self._recorder.close(finished["outcome"])
        return False  # the script's exception goes on as it would without optlog

    def step(self, step, loss, tokens, lr=None, grad_norm=None, loss_scale=None, skipped=False,
             step_seconds=None):
        """One optimizer step finished. loss: the step's mean loss in nats per token (a float or a
        0-dim tensor, read only here); tokens: training tokens seen so far, every microbatch
        counted. step_seconds defaults to the wall time since the previous step or validation
        call (since the run began, for the first)."""
        now = time.perf_counter()
        if step_seconds is None and self._clock is not None:
            step_seconds = now - self._clock
        self._clock = now
        if not self.recording:
            return  # and no .item(): a host sync on CUDA
        step, tokens = int(step), int(events.number(tokens))
        loss_value = events.number(loss)
        if loss_value is None and self._divergence is None:
            raw = loss.item() if hasattr(loss, "item") else loss
            self._divergence = (step, raw)
        rate = None
        if step_seconds and step_seconds > 0:
            rate = (tokens - self._last_tokens) / step_seconds
        self._step_tokens = tokens - self._last_tokens
        self._last_step, self._last_tokens = step, tokens
        self._send("step", flush=False, step=step, tokens=tokens, train_loss=loss_value, lr=events.number(lr),
                   grad_norm=events.number(grad_norm), step_seconds=step_seconds, tokens_per_second=rate,
                   loss_scale=events.number(loss_scale), skipped=True if skipped else None)

    def validation(self, loss, tokens=None, step=None, sequences=None, sequence_sd=None):
        """A validation loss in nats per token, by default at the last step's step and tokens.
        sequences and sequence_sd (the standard deviation of the sequences' own mean losses) give
        the validation set's sampling error."""
        self._clock = time.perf_counter()  # the next step's time leaves validation out
        if not self.recording:
            return
        step = self._last_step if step is None else int(step)
        tokens = self._last_tokens if tokens is None else int(tokens)
        if step is None:
            return self._logging_failed("validation before any step: give step= and tokens=")
        self._send("validation", step=step, tokens=tokens, val_loss=events.number(loss),
                   sequences=None if sequences is None else int(sequences), sequence_sd=events.number(sequence_sd))

    def note(self, message, step=None):
        self._send("note", message=str(message), step=step)

    def warning(self, message, step=None):
        self._send("warning", message=str(message), step=step)

    def flops_per_token(self, flops):
        """The model's FLOPs per training token (forward and backward; 6 x parameters for a dense
        transformer, plus attention's), for the run's MFU. Without it, run.memory's step is counted
        by torch.utils.flop_counter where the installed PyTorch has it (2.1 and later)."""
        try:
            value = None if isinstance(flops, bool) else events.number(flops)
        except (TypeError, ValueError):
            value = None
        if value is None or value <= 0:
            return self._logging_failed(f"flops_per_token({flops!r}): give the model's FLOPs per token, a number "
                                        f"above 0; the run has no MFU")
        self._flops_given = True
        self._send("flops", per_token=value, how="given")

    def memory(self, model, optimizer=None, step=None, masters=None, warmup=0):
        """Sends the run's memory by role. model: a module (or its parameters); masters: master
        weights, if kept apart from the parameters. step: a callable running one complete
        training step (forward, backward, optimizer step); it runs `warmup` times, then once
        measured: saved activations, temporaries and the peak. It always runs warmup + 1 times,
        recorded or not, so it may be the script's own training step (then give run.step its
        step_seconds: the default counts memory()'s whole time), and it returns what the measured
        call returned (the step's loss, say); its exceptions are the script's and go on. Its first
        call is also counted by torch.utils.flop_counter, for the run's MFU, unless
        run.flops_per_token gave the FLOPs."""
        counting = self._begin_count() if step is not None else None
        for _ in range(warmup if step is not None else 0):
            self._call(step, counting)
            counting = None
        probe = self._begin_measure(model, optimizer, masters) if step is not None else None
        result = None
        try:
            if step is not None:
                result = self._call(step, counting)
        finally:
            if probe is not None:
                probe = self._end_measure(probe)
        if self.recording:
            if probe is not None:  # numbered as the step run.step reports next
                self._send_measured(probe, self._last_step + 1 if self._last_step is not None else 0)
            else:
                try:
                    self._send("memory", **memory_event(State(model, optimizer, masters)))
                except Exception as e:  # noqa: BLE001
                    self._logging_failed(f"memory could not be counted ({type(e).__name__}: {e})")
        return result

    # What memory() and the trainers' callbacks (lightning.py, transformers.py) measure a step with:
    # a MemoryProbe and a FLOP count around it, each begun before the step and ended after it.

    def _begin_measure(self, model, optimizer=None, masters=None):
        """A begun MemoryProbe, or None when not recording or when it could not begin (said)."""
        if not self.recording:
            return None
        probe = None
        try:
            probe = MemoryProbe(model, optimizer, masters)
            probe.begin()
            return probe
        except Exception as e:  # noqa: BLE001 - a failure to measure must not stop training
            return self._end_probe(probe, e)

    def _end_measure(self, probe):
        """Ends a probe; the probe, or None when it failed (said)."""
        try:
            probe.end()
            return probe
        except Exception as e:  # noqa: BLE001
            return self._end_probe(None, e)

    def _send_measured(self, probe, step):
        """Sends what an ended probe measured: the memory by role, then the step's timeline."""
        try:
            self._send("memory", **probe.payload())
            timeline = probe.timeline_payload(step)
            if timeline is not None:
                self._send("memory_timeline", **timeline)
        except Exception as e:  # noqa: BLE001 - a failure to measure must not stop training
            self._logging_failed(f"memory could not be counted ({type(e).__name__}: {e})")

    def _end_probe(self, probe, error):
        if probe is not None:
            try:
                probe.end()
            except Exception:  # noqa: BLE001 - already failing; the first error is the one to say
                pass
        say(f"optlog: the step's memory is not measured ({type(error).__name__}: {error}); "
            f"the state's is, and training goes on")
        return None

    def _begin_count(self):
        """A StepFlops counting from now, or None: FLOPs given, not recording, no counter."""
        if self._flops_given or self._step_flops is not None or not self.recording or counter_name() is None:
            return None
        try:
            counting = StepFlops()
            counting.begin()
            return counting
        except Exception as e:  # noqa: BLE001 - counting must not stop training
            self._logging_failed(f"the step's FLOPs are not counted ({type(e).__name__}: {e})")
            return None

    def _end_count(self, counting, tokens=None):
        """Ends a count. With the step's tokens the run's FLOPs per token are sent now; without, at
        the run's end, over the tokens of its last step."""
        try:
            counting.end()
        except Exception as e:  # noqa: BLE001
            return self._logging_failed(f"the step's FLOPs are not counted ({type(e).__name__}: {e})")
        self._step_flops = counting.flops
        if counting.flops <= 0:
            return self._logging_failed(f"{counter_name()} counted no FLOPs in the step (it counts matrix products "
                                        f"and convolutions, not fused kernels such as a CPU's LSTM): give "
                                        f"run.flops_per_token(n) for the run's MFU")
        if tokens:
            self._send_counted_flops(tokens)

    def _send_counted_flops(self, tokens):
        if self._step_flops and tokens and tokens > 0 and not self._flops_sent:
            self._flops_sent = True
            self._send("flops", per_token=self._step_flops / tokens, how="counted", counter=counter_name())

    def _call(self, step, counting):
        if counting is None:
            return step()
        try:
            return step()
        finally:
            self._end_count(counting)

    def _environment(self):
        try:
            return capture_environment(self.device)
        except Exception as e:  # noqa: BLE001 - the run is worth recording without it
            return {"error": f"not captured: {type(e).__name__}: {e}"}

    def _send(self, event, flush=True, **fields):
        """Writes one event; encodes it only when something records it."""
        if not self.recording:
            return
        try:
            text = events.line(event, **fields)
        except (TypeError, ValueError) as e:  # a value JSON cannot hold: that event is lost, not the run
            return self._logging_failed(f"the {event} event could not be written ({e})")
        self._recorder.write(text, flush)

    def _logging_failed(self, why):
        """Says why an event is lost, once per reason: a mistake repeated every step says it once."""
        if why not in self._said:
            self._said.add(why)
            say(f"optlog: {why}")
