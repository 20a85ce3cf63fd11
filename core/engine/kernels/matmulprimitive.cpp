// SPDX-License-Identifier: MIT
#include "core/engine/kernels/matmulprimitive.h"

#include "core/engine/kernels/onednncpu.h"

#include <ATen/Parallel.h>
#include <ATen/ops/empty.h>
#include <c10/util/Exception.h>
#include <oneapi/dnnl/dnnl.hpp>

#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace optlog {

namespace {

const dnnl::engine &cpuEngine()
{
    allowOneDnnAmx(); // before oneDNN first chooses its kernels
    static const dnnl::engine engine(dnnl::engine::kind::cpu, 0);
    return engine;
}

dnnl::memory::data_type dataType(at::ScalarType dtype)
{
    return dtype == at::kBFloat16 ? dnnl::memory::data_type::bf16 : dnnl::memory::data_type::f32;
}

// A tensor as oneDNN reads it in place: its own sizes and strides. A dimension of one element may
// carry any stride in LibTorch; oneDNN is given the one a dense layout would have.
dnnl::memory::desc describeTensor(const at::Tensor &t)
{
    dnnl::memory::dims sizes(t.sizes().begin(), t.sizes().end()), strides(t.strides().begin(), t.strides().end());
    dnnl::memory::dim dense = 1;
    for (size_t d = sizes.size(); d-- > 0;) {
        if (sizes[d] == 1)
            strides[d] = dense;
        dense *= sizes[d];
    }
    return {sizes, dataType(t.scalar_type()), strides};
}

// The bias as a row the product adds to every output row: ones in the batch dimensions.
dnnl::memory::desc describeBias(int64_t dimensions, int64_t columns, at::ScalarType dtype)
{
    dnnl::memory::dims sizes(size_t(dimensions), 1), strides(size_t(dimensions), columns);
    sizes.back() = columns;
    strides.back() = 1;
    return {sizes, dataType(dtype), strides};
}

struct Primitive
{
    dnnl::matmul::primitive_desc description;
    dnnl::matmul matmul;
};

std::shared_ptr<const Primitive> makePrimitive(const dnnl::memory::desc &a, const dnnl::memory::desc &b,
                                               const dnnl::memory::desc &bias, float alpha,
                                               const dnnl::memory::desc &out)
{
    dnnl::primitive_attr attributes;
    // The scratchpad comes with each call, from LibTorch's allocator: counted in the peak.
    attributes.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    if (alpha != 1.0f)
        attributes.set_output_scales(0, {alpha});
    dnnl::matmul::primitive_desc description(dnnl::matmul::desc(a, b, bias, out), attributes, cpuEngine());
    auto primitive = std::make_shared<Primitive>();
    primitive->matmul = dnnl::matmul(description);
    primitive->description = std::move(description);
    return primitive;
}

// A primitive for every layout, bias and alpha a process has asked for (a training run asks for
// some twenty), kept for the process: oneDNN's own cache would still rebuild each descriptor and
// look it up per product.
class PrimitiveCache
{
public:
    std::shared_ptr<const Primitive> find(const at::Tensor &a, const at::Tensor &b, bool bias, float alpha,
                                          const at::Tensor &out)
    {
        uint32_t alphaBits = 0;
        std::memcpy(&alphaBits, &alpha, sizeof(alpha));
        // oneDNN sizes a primitive's parallel work and scratchpad for the threads set when it is
        // made: a run on one thread after one on two (tests, `optlog tune`'s candidates) must not
        // take the two-thread primitive (twice the scratchpad, and two threads at work).
        std::vector<int64_t> key{a.dim(), int64_t(a.scalar_type()), bias ? 1 : 0, int64_t(alphaBits),
                                 int64_t(at::get_num_threads())};
        for (const at::Tensor *t : {&a, &b, &out}) {
            key.insert(key.end(), t->sizes().begin(), t->sizes().end());
            key.insert(key.end(), t->strides().begin(), t->strides().end());
        }
        const std::lock_guard<std::mutex> lock(m_mutex);
        auto &entry = m_primitives[key];
        if (!entry) {
            entry = makePrimitive(describeTensor(a), describeTensor(b),
                                  bias ? describeBias(out.dim(), out.size(-1), a.scalar_type()) : dnnl::memory::desc(),
                                  alpha, describeTensor(out));
            ++m_implementations[entry->description.impl_info_str()];
        }
        return entry;
    }

    std::map<std::string, int64_t> implementations()
    {
        const std::lock_guard<std::mutex> lock(m_mutex);
        return m_implementations;
    }

private:
    struct KeyHash
    {
        size_t operator()(const std::vector<int64_t> &key) const
        {
            size_t h = key.size();
            for (const int64_t v : key)
                h = h * 1000003u ^ std::hash<int64_t>()(v);
            return h;
        }
    };

    std::mutex m_mutex;
    std::unordered_map<std::vector<int64_t>, std::shared_ptr<const Primitive>, KeyHash> m_primitives;
    std::map<std::string, int64_t> m_implementations; // the kernels of the primitives made, by name
};

PrimitiveCache &primitives()
{
    static PrimitiveCache cache;
    return cache;
}

// Whether oneDNN can read `t` in place: a zero stride over several elements (an expanded tensor)
// is LibTorch's broadcast, which the primitive's descriptor cannot state.
bool readableInPlace(const at::Tensor &t)
{
    for (int64_t d = 0; d < t.dim(); ++d)
        if (t.size(d) > 1 && t.stride(d) == 0)
            return false;
    return true;
}

} // namespace

std::string matmulPrimitiveImplementation(at::ScalarType dtype)
{
    // Described, not run: no tensor is made, so asking allocates nothing a run would count. A
    // product of 256 in each direction: oneDNN may turn tiles too small for a kernel (AMX's take
    // 32 BF16 values of depth) to another, and so misname what a model's products run on.
    try {
        const dnnl::memory::desc square({256, 256}, dataType(dtype), dnnl::memory::dims{256, 1});
        return makePrimitive(square, square, {}, 1.0f, square)->description.impl_info_str();
    } catch (const dnnl::error &e) {
        return std::string("none (") + e.what() + ")";
    }
}

std::map<std::string, int64_t> matmulPrimitivesMade()
{
    return primitives().implementations();
}

void primitiveMatmul(const at::Tensor &a, const at::Tensor &b, const at::Tensor &bias, float alpha, at::Tensor &out)
{
    const at::Tensor aRead = readableInPlace(a) ? a : a.contiguous(), bRead = readableInPlace(b) ? b : b.contiguous();
    const at::Tensor biasRow = bias.defined() ? bias.contiguous() : bias;
    std::shared_ptr<const Primitive> primitive;
    try {
        primitive = primitives().find(aRead, bRead, bias.defined(), alpha, out);
    } catch (const dnnl::error &e) {
        TORCH_CHECK(false, "oneDNN has no ", a.scalar_type(), " matmul for ", aRead.sizes(), " (strides ",
                    aRead.strides(), ") by ", bRead.sizes(), " (strides ", bRead.strides(), "): ", e.what());
    }
    const dnnl::engine &engine = cpuEngine();
    const dnnl::memory::desc scratchDescription = primitive->description.scratchpad_desc();
    const at::Tensor scratch = at::empty({int64_t(scratchDescription.get_size())}, a.options().dtype(at::kByte));
    // oneDNN writes nothing through its sources; its memory objects take non-const pointers.
    std::unordered_map<int, dnnl::memory>
        arguments{{DNNL_ARG_SRC,
                   dnnl::memory(primitive->description.src_desc(), engine, const_cast<void *>(aRead.data_ptr()))},
                  {DNNL_ARG_WEIGHTS,
                   dnnl::memory(primitive->description.weights_desc(), engine, const_cast<void *>(bRead.data_ptr()))},
                  {DNNL_ARG_DST, dnnl::memory(primitive->description.dst_desc(), engine, out.data_ptr())},
                  {DNNL_ARG_SCRATCHPAD, dnnl::memory(scratchDescription, engine, scratch.data_ptr())}};
    if (bias.defined())
        arguments.emplace(DNNL_ARG_BIAS, dnnl::memory(primitive->description.bias_desc(), engine,
                                                      const_cast<void *>(biasRow.data_ptr())));
    // One stream per thread: a stream is not shared between threads, and on the CPU it is cheap.
    thread_local dnnl::stream stream(engine);
    primitive->matmul.execute(stream, arguments);
    stream.wait();
}

} // namespace optlog
