# SPDX-License-Identifier: MIT
"""What a recorded run ran on, for the `started` event's `environment`."""
import os
import platform
import socket
import sys


def cpu_model():
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as info:
            for row in info:
                if row.startswith("model name"):
                    return row.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _cuda_index(device):
    """A CUDA device's index, the current one for a bare "cuda"."""
    import torch

    return device.index if device.index is not None else torch.cuda.current_device()


def describe_device(device):
    """"cpu", "cuda:0 (NVIDIA H100 80GB HBM3)" or "mps", as the engine names its own device."""
    import torch

    device = torch.device(device)
    if device.type == "cuda":
        index = _cuda_index(device)
        return f"cuda:{index} ({torch.cuda.get_device_name(index)})"
    return str(device)


def nvidia_driver_version(path="/proc/driver/nvidia/version"):
    """The NVIDIA driver's version ("580.95.05") as optlog's engine reads it: the first word of
    digits and dots in the kernel module's version line; "" without the driver."""
    try:
        with open(path, encoding="utf-8", errors="replace") as version:
            for word in version.read().split():
                if word[0].isdigit() and "." in word and all(c.isdigit() or c == "." for c in word):
                    return word
    except OSError:
        pass
    return ""


def device_identity(device):
    """The device keys of the machine identity optlog compares speeds by (docs/events.md):
    device_name, "cpu" or the GPU as CUDA names it, and on a GPU the driver's version."""
    import torch

    device = torch.device(device)
    if device.type != "cuda":
        return {"device_name": device.type}
    return {"device_name": torch.cuda.get_device_name(_cuda_index(device)), "driver": nvidia_driver_version()}


def capture_environment(device=None):
    """Under the keys the engine uses for its own runs (cpu_model, intra_op_threads, ...), so
    that reports set a recorded run's environment beside an engine run's, and a run recorded on
    the machine of an engine run is on the same machine (cpu_model, logical_cpus, device_name,
    driver, libtorch_version)."""
    env = {"python_version": platform.python_version(), "cpu_model": cpu_model(), "logical_cpus": os.cpu_count(),
           "host": socket.gethostname(), "platform": platform.platform(),
           "variables": {name: os.environ.get(name) for name in
                         ("OPENBLAS_CORETYPE", "OMP_WAIT_POLICY", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS",
                          # what sizes cuBLAS's workspaces, which the memory model counts on CUDA
                          "CUBLAS_WORKSPACE_CONFIG", "CUBLASLT_WORKSPACE_SIZE", "TORCH_CUBLASLT_UNIFIED_WORKSPACE")}}
    try:
        import torch  # already in sys.modules in a PyTorch script: no import cost
    except ImportError:
        return env
    env["torch_version"] = torch.__version__
    env["libtorch_version"] = torch.__version__  # PyTorch's LibTorch: the machine identity's library
    env["intra_op_threads"] = torch.get_num_threads()
    # What memory.attention = "auto" resolves with, asked of the module rather than of its version.
    env["has_sdpa"] = hasattr(torch.nn.functional, "scaled_dot_product_attention")
    try:
        env["device"] = describe_device(device if device is not None else "cpu")
        env.update(device_identity(device if device is not None else "cpu"))
        if torch.device(device if device is not None else "cpu").type == "cuda":
            # The chip's compute capability: the memory model's cuBLAS workspace depends on it.
            env["cuda_capability"] = "%d.%d" % torch.cuda.get_device_capability(torch.device(device))
    except (RuntimeError, AssertionError, ValueError) as e:  # a CUDA device asked for without CUDA
        env["device"] = f"{device} (not described: {e})"
    return env


def script_name():
    return (sys.argv[0].rsplit("/", 1)[-1] if sys.argv and sys.argv[0] else "") or "python"
