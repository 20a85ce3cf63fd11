# SPDX-License-Identifier: MIT
"""optlog.transformers.OptlogCallback: a Hugging Face Trainer run recorded into an optlog study.

    from optlog.transformers import OptlogCallback

    trainer = transformers.Trainer(model=model, args=args, train_dataset=train, eval_dataset=valid,
                                   callbacks=[OptlogCallback("runs.optlog", name="bf16 s1", group="bf16")])

Each optimizer step becomes a `step` event (its mean training loss and every input token, read
from the model's own forward passes), each evaluation the `eval_loss`, and the third step is
measured: memory by role from the trainer's own model and optimizer, and its FLOPs
(torch.utils.flop_counter) for the run's MFU. The config is the training arguments that decide
the run, with the seed. A run whose training raises ends crashed: the Trainer has no hook for an
exception, and the stream ends without its finished event.
"""
import transformers

from .run import Run
from .steprecorder import StepRecorder, storable, tokens_in

# The training arguments that make one run differ from another.
_SETTINGS = ("learning_rate", "weight_decay", "adam_beta1", "adam_beta2", "adam_epsilon", "max_grad_norm",
             "max_steps", "num_train_epochs", "per_device_train_batch_size", "gradient_accumulation_steps",
             "lr_scheduler_type", "warmup_steps", "warmup_ratio", "optim", "bf16", "fp16", "tf32",
             "gradient_checkpointing", "torch_compile", "seed")


class OptlogCallback(transformers.TrainerCallback):
    """study, name, group, config, message and engine_config: as optlog.Run's (the seed is the
    training arguments'). measure_step: the step measured (0-based; after the first, whose
    optimizer state does not exist yet)."""

    def __init__(self, study, name, group=None, config=None, measure_step=2, message=None, engine_config=None):
        self._run_arguments = dict(study=study, name=name, group=group, message=message,
                                   engine_config=engine_config)
        self._config = config or {}
        self._measure_step = measure_step
        self.run = None
        self._steps = None
        self._hook = None

    def on_train_begin(self, args, state, control, model=None, **kwargs):
        arguments = args.to_dict()
        config = {"trainer": storable({key: arguments.get(key) for key in _SETTINGS}),
                  "model": storable({"class": type(model).__name__,
                                     "parameters": sum(p.numel() for p in model.parameters())}),
                  **self._config}
        self.run = Run(config=config, seed=args.seed, steps=max(state.max_steps, 0), device=model.device,
                       **self._run_arguments)
        self.run.__enter__()
        self._steps = StepRecorder(self.run, self._measure_step)
        # The model's own forward passes say each microbatch's tokens and loss.
        self._hook = model.register_forward_hook(self._forward, with_kwargs=True)

    def _forward(self, module, args, kwargs, output):
        loss = getattr(output, "loss", None) if not isinstance(output, dict) else output.get("loss")
        if not module.training or loss is None:
            return
        inputs = kwargs.get("input_ids", args[0] if args else None)
        # Given the accumulated step's token count, the model divides each microbatch's summed loss
        # by it: the microbatches' losses then sum to the step's mean.
        summed = kwargs.get("num_items_in_batch") is not None
        self._steps.microbatch(loss, tokens_in(inputs), summed=summed)

    def on_step_begin(self, args, state, control, model=None, optimizer=None, **kwargs):
        if self._steps is not None:
            self._steps.begin(state.global_step, model, optimizer)

    def on_optimizer_step(self, args, state, control, optimizer=None, **kwargs):
        if self._steps is not None:
            self._steps.optimizer_stepped(optimizer)

    def on_step_end(self, args, state, control, **kwargs):
        if self._steps is not None:
            self._steps.done(state.global_step - 1)

    def on_evaluate(self, args, state, control, metrics=None, **kwargs):
        if self.run is not None and metrics and "eval_loss" in metrics:
            self.run.validation(metrics["eval_loss"])

    def on_train_end(self, args, state, control, **kwargs):
        if self._hook is not None:
            self._hook.remove()
            self._hook = None
        if self.run is not None:
            run, self.run = self.run, None
            run.__exit__(None, None, None)
