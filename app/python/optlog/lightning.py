# SPDX-License-Identifier: MIT
"""optlog.lightning.OptlogCallback: a PyTorch Lightning run recorded into an optlog study.

    from optlog.lightning import OptlogCallback

    trainer = lightning.Trainer(max_steps=1000, callbacks=[OptlogCallback("runs.optlog", name="bf16 s1",
                                                                          group="bf16", seed=1)])

Each optimizer step becomes a `step` event (the microbatches' mean training loss, every token),
each validation the logged `val_loss`, and the third step is measured: memory by role from the
trainer's own model and optimizer, and its FLOPs (torch.utils.flop_counter) for the run's MFU.
The config is the module's hyperparameters (save_hyperparameters) with the trainer's settings.
An exception ends the run failed, Ctrl-C cancelled, as optlog.Run's block does.
"""
try:
    import lightning.pytorch as pl
except ImportError:  # the older package name
    import pytorch_lightning as pl

from .run import Run
from .steprecorder import StepRecorder, storable, tokens_in


class OptlogCallback(pl.Callback):
    """study, name, group, seed, config, message and engine_config: as optlog.Run's. tokens: a
    callable giving a batch's token count (default: the elements of its first integer tensor).
    val_loss: the logged metric that is the validation loss, in nats per token. measure_step: the
    step measured (0-based; after the first, whose optimizer state does not exist yet)."""

    def __init__(self, study, name, group=None, seed=None, config=None, tokens=None, val_loss="val_loss",
                 measure_step=2, message=None, engine_config=None):
        super().__init__()
        self._run_arguments = dict(study=study, name=name, group=group, seed=seed, message=message,
                                   engine_config=engine_config)
        self._config = config or {}
        self._tokens = tokens or tokens_in
        self._val_loss = val_loss
        self._measure_step = measure_step
        self.run = None
        self._steps = None
        self._step_before = 0

    def on_fit_start(self, trainer, pl_module):
        optimizer = trainer.optimizers[0] if trainer.optimizers else None
        settings = {"trainer": {"precision": str(trainer.precision), "max_steps": trainer.max_steps,
                                "accumulate_grad_batches": trainer.accumulate_grad_batches,
                                "gradient_clip_val": trainer.gradient_clip_val},
                    "optimizer": {"name": type(optimizer).__name__,
                                  **storable({k: v for k, v in optimizer.defaults.items()})} if optimizer else {}}
        config = {**storable(dict(pl_module.hparams)), **settings, **self._config}
        self.run = Run(config=config, steps=max(trainer.max_steps, 0), device=pl_module.device,
                       **self._run_arguments)
        self.run.__enter__()
        self._steps = StepRecorder(self.run, self._measure_step)

    def on_train_batch_start(self, trainer, pl_module, batch, batch_idx):
        if batch_idx % trainer.accumulate_grad_batches == 0:  # the first microbatch of a step
            self._step_before = trainer.global_step
            self._steps.begin(trainer.global_step, pl_module, trainer.optimizers[0] if trainer.optimizers else None)

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx):
        loss = outputs.get("loss") if isinstance(outputs, dict) else outputs
        # Lightning divides each microbatch's loss by accumulate_grad_batches: their sum is the mean.
        self._steps.microbatch(loss, self._tokens(batch), summed=trainer.accumulate_grad_batches > 1)
        if trainer.global_step > self._step_before:
            self._steps.optimizer_stepped(trainer.optimizers[0] if trainer.optimizers else None)
            self._steps.done(trainer.global_step - 1)

    def on_validation_end(self, trainer, pl_module):
        if trainer.sanity_checking or self.run is None or self._val_loss not in trainer.callback_metrics:
            return
        self.run.validation(trainer.callback_metrics[self._val_loss])

    def on_fit_end(self, trainer, pl_module):
        self._finish(None)

    def on_exception(self, trainer, pl_module, exception):
        self._finish(exception)

    def _finish(self, error):
        if self.run is not None:
            run, self.run = self.run, None
            run.__exit__(type(error) if error else None, error, None)
