// SPDX-License-Identifier: MIT
#include "core/engine/model/recompute.h"

#include "core/engine/compat/torchcompat.h"
#include "core/engine/precision/precision.h"

#include <ATen/Context.h>
#include <ATen/core/ivalue.h>
#include <torch/csrc/autograd/autograd.h>
#include <torch/csrc/autograd/custom_function.h>
#include <torch/csrc/autograd/grad_mode.h>

#include <mutex>

namespace optlog {

namespace {

// What the backward pass needs besides the saved inputs, carried through the autograd context.
struct Recomputation : torch::CustomClassHolder
{
    TensorFunction function;
    c10::Device device{c10::DeviceType::CPU}; // whose generator and autocast state the forward used
    at::Tensor generatorState;
    bool autocast = false;
    c10::ScalarType autocastDtype = c10::kBFloat16;
};

// The default generator of the device the block runs on: dropout on CUDA tensors draws from
// the GPU's generator, on CPU tensors from the CPU's.
at::Tensor generatorState(c10::Device device)
{
    auto generator = at::globalContext().defaultGenerator(device);
    std::lock_guard<std::mutex> lock(generator.mutex());
    return generator.get_state();
}

void setGeneratorState(c10::Device device, const at::Tensor &state)
{
    auto generator = at::globalContext().defaultGenerator(device);
    std::lock_guard<std::mutex> lock(generator.mutex());
    generator.set_state(state);
}

struct CheckpointFunction : torch::autograd::Function<CheckpointFunction>
{
    static at::Tensor forward(torch::autograd::AutogradContext *ctx, c10::IValue recomputation, at::TensorList inputs)
    {
        ctx->save_for_backward(inputs.vec());
        ctx->saved_data["recomputation"] = recomputation;
        auto *r = static_cast<Recomputation *>(recomputation.toCapsule().get());
        // Autograd already runs forward() without recording a graph: nothing inside is kept.
        return r->function(inputs.vec());
    }

    static torch::autograd::variable_list backward(torch::autograd::AutogradContext *ctx,
                                                   torch::autograd::variable_list gradOutputs)
    {
        auto holder = ctx->saved_data["recomputation"].toCapsule();
        auto *r = static_cast<Recomputation *>(holder.get());
        std::vector<at::Tensor> inputs;
        for (const auto &saved : ctx->get_saved_variables())
            inputs.push_back(saved.detach().requires_grad_(saved.requires_grad()));

        // Replay the forward's random draws, then put the generator back where backward found it.
        const at::Tensor stateNow = generatorState(r->device);
        setGeneratorState(r->device, r->generatorState);
        at::Tensor output;
        {
            compat::GradModeGuard enableGrad(true);
            AutocastGuard autocast(r->device.type(), r->autocastDtype, r->autocast);
            output = r->function(inputs);
        }
        setGeneratorState(r->device, stateNow);

        torch::autograd::backward({output}, {gradOutputs[0]});

        torch::autograd::variable_list grads = {at::Tensor()}; // for the recomputation argument
        for (const auto &input : inputs)
            grads.push_back(input.requires_grad() ? input.grad() : at::Tensor());
        return grads;
    }
};

} // namespace

at::Tensor checkpointed(const TensorFunction &function, const std::vector<at::Tensor> &inputs)
{
    auto r = c10::make_intrusive<Recomputation>();
    r->function = function;
    r->device = inputs.front().device();
    r->generatorState = generatorState(r->device);
    r->autocast = compat::autocastEnabled(r->device.type());
    r->autocastDtype = compat::autocastDtype(r->device.type());
    return CheckpointFunction::apply(c10::IValue::make_capsule(std::move(r)), at::TensorList(inputs));
}

} // namespace optlog
