// SPDX-License-Identifier: MIT
#include "core/engine/kernels/gemm.h"

#include "core/engine/compat/torchcompat.h"

#include <ATen/Parallel.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/linear.h>
#include <ATen/ops/matmul.h>
#include <ATen/record_function.h>
#include <torch/csrc/autograd/custom_function.h>

#ifdef OPTLOG_HAVE_ONEDNN
#include "core/engine/kernels/matmulprimitive.h"

#include <oneapi/dnnl/dnnl.h>
#endif

#include <algorithm>
#include <atomic>
#include <optional>
#include <stdexcept>
#include <vector>

namespace optlog {

namespace {

// Products oneDNN's path has computed in this process: FP32 ones on padded copies, and BF16 ones.
std::atomic<int64_t> paddedProducts{0}, bf16Products{0};

#ifdef OPTLOG_HAVE_ONEDNN

bool floatOrBf16(const at::Tensor &t)
{
    return t.scalar_type() == at::kFloat || t.scalar_type() == at::kBFloat16;
}

// One product as oneDNN's paths take it: the dtype it is computed in, and the path.
struct OneDnnProduct
{
    at::ScalarType dtype;
    ProductPath path;
};

// How oneDNN's paths compute a product of `a` and `b`, if one takes it: FP32 or BF16 operands
// outside autocast, and either kind under BF16 autocast, which casts both; on the run's path for
// that dtype, unless it is ATen's.
std::optional<OneDnnProduct> oneDnnTakes(ProductPaths paths, const at::Tensor &a, const at::Tensor &b)
{
    if (!a.device().is_cpu() || !b.device().is_cpu() || a.numel() == 0 || b.numel() == 0)
        return std::nullopt;
    std::optional<at::ScalarType> dtype;
    if (compat::autocastEnabled(c10::DeviceType::CPU)) {
        if (compat::autocastDtype(c10::DeviceType::CPU) == at::kBFloat16 && floatOrBf16(a) && floatOrBf16(b))
            dtype = at::kBFloat16;
    } else if (b.scalar_type() == a.scalar_type()
               && (a.scalar_type() == at::kFloat || a.scalar_type() == at::kBFloat16)) {
        dtype = a.scalar_type();
    }
    // The paths say which products oneDNN takes (productpaths.cpp: BF16 ones only on x86-64).
    if (!dtype || paths.of(*dtype) == ProductPath::ATen)
        return std::nullopt;
    return OneDnnProduct{*dtype, paths.of(*dtype)};
}

// `t` in the product's dtype: under autocast through its cast, cached for the step as at::linear's
// is, and differentiable, so a gradient returns in `t`'s own dtype.
at::Tensor inProductDtype(const at::Tensor &t, at::ScalarType dtype)
{
    if (!t.defined() || t.scalar_type() == dtype || !compat::autocastEnabled(c10::DeviceType::CPU))
        return t;
    return compat::autocastCachedCast(dtype, t, c10::DeviceType::CPU);
}

// One matrix as sgemm reads it in place: row-major, or row-major after a transpose, with the
// distance between its stored rows.
struct StoredMatrix
{
    bool transposed;
    int64_t leading;
};

// How `t`'s last two dimensions are stored, if sgemm can read them without a copy.
std::optional<StoredMatrix> storedMatrix(const at::Tensor &t)
{
    const int64_t rows = t.size(-2), cols = t.size(-1);
    const int64_t rowStride = t.stride(-2), colStride = t.stride(-1);
    if (colStride == 1 && (rows == 1 || rowStride >= std::max<int64_t>(1, cols)))
        return StoredMatrix{false, rows == 1 ? std::max<int64_t>(1, cols) : rowStride};
    if (rowStride == 1 && (cols == 1 || colStride >= std::max<int64_t>(1, rows)))
        return StoredMatrix{true, cols == 1 ? std::max<int64_t>(1, rows) : colStride};
    return std::nullopt;
}

// C (M×N, row-major, row distance ldc) = alpha·op(A)·op(B) + beta·C.
void sgemm(const StoredMatrix &a, const float *aData, const StoredMatrix &b, const float *bData, int64_t m, int64_t n,
           int64_t k, float alpha, float beta, float *c, int64_t ldc)
{
    const dnnl_status_t status = dnnl_sgemm(a.transposed ? 'T' : 'N', b.transposed ? 'T' : 'N', m, n, k, alpha, aData,
                                            a.leading, bData, b.leading, beta, c, ldc);
    TORCH_CHECK(status == dnnl_success, "oneDNN's sgemm failed (status ", int(status), ") for ", m, "x", k, " by ", k,
                "x", n);
}

// oneDNN's sgemm reads an operand across its stored rows (A stored transposed, B as stored) at
// half speed or worse when those rows lie a multiple of 4 KiB apart and there are many of them:
// at the default preset the MLP's weight gradients, whose hidden operand has rows of 1024 floats,
// took 5.9 and 6.5 ms against 3.0 and 3.2 with rows 16 floats longer (`bench_gemm`; rows 4.5 or
// 6 KiB apart are not slow). Such a product can run a chunk of its depth at a time, each chunk of
// such an operand first copied into rows 16 floats longer. The copies take scratch, from
// LibTorch's allocator like every temporary, so a caller offers only what will not raise the
// step's peak; chunks of 256 rows, or 128 or 64 where that is all the offer covers (about 1.1x
// slower), or no padding.
constexpr int64_t rowPadding = 16;
constexpr int64_t paddedDepths[] = {256, 128, 64};

// Whether sgemm reads the A operand (`isA`) or the B operand stored as `stored` across rows that lie
// a multiple of 4 KiB apart.
bool rowsFourKiBApart(const StoredMatrix &stored, bool isA)
{
    return stored.transposed == isA && stored.leading * int64_t(sizeof(float)) % 4096 == 0;
}

// The rows of depth a padded FP32 product of a (m × k) by b (k × n) copies at a time within
// `scratchBytes`, or 0 where it should read its operands in place.
int64_t paddedDepthFor(const StoredMatrix &sa, const StoredMatrix &sb, int64_t m, int64_t n, int64_t k,
                       int64_t scratchBytes)
{
    const bool padA = rowsFourKiBApart(sa, true), padB = rowsFourKiBApart(sb, false);
    const int64_t bytesPerRow = ((padA ? m + rowPadding : 0) + (padB ? n + rowPadding : 0)) * int64_t(sizeof(float));
    if (bytesPerRow == 0)
        return 0;
    for (const int64_t depth : paddedDepths)
        if (k > depth && depth * bytesPerRow <= scratchBytes)
            return depth;
    return 0;
}

// alpha·a·b for FP32 matrices a (m × k) and b (k × n) into `out`, `chunk` rows of depth at a
// time, the rows of an operand stored 4 KiB apart read from a padded copy of the chunk.
void paddedProduct(const at::Tensor &a, const StoredMatrix &sa, const at::Tensor &b, const StoredMatrix &sb,
                   int64_t chunk, float alpha, at::Tensor &out)
{
    const int64_t m = a.size(0), k = a.size(1), n = b.size(1);
    const bool padA = rowsFourKiBApart(sa, true), padB = rowsFourKiBApart(sb, false);
    // The operands' chunks as stored: A's stored rows are its columns, B's its rows.
    const at::Tensor aScratch = padA ? at::empty({chunk, m + rowPadding}, a.options()) : at::Tensor();
    const at::Tensor bScratch = padB ? at::empty({chunk, n + rowPadding}, b.options()) : at::Tensor();
    paddedProducts.fetch_add(1, std::memory_order_relaxed);
    for (int64_t depth = 0; depth < k; depth += chunk) {
        const int64_t deep = std::min(chunk, k - depth);
        at::Tensor aPart = a.narrow(1, depth, deep), bPart = b.narrow(0, depth, deep);
        StoredMatrix aStored = sa, bStored = sb;
        if (padA) {
            aScratch.narrow(0, 0, deep).narrow(1, 0, m).copy_(aPart.t());
            aPart = aScratch;
            aStored.leading = m + rowPadding;
        }
        if (padB) {
            bScratch.narrow(0, 0, deep).narrow(1, 0, n).copy_(bPart);
            bPart = bScratch;
            bStored.leading = n + rowPadding;
        }
        sgemm(aStored, aPart.data_ptr<float>(), bStored, bPart.data_ptr<float>(), m, n, deep, alpha,
              depth > 0 ? 1.0f : 0.0f, out.data_ptr<float>(), n);
    }
}

// Each matrix's offset in `t`, over its batch dimensions (all but the last two) in order.
std::vector<int64_t> batchOffsets(const at::Tensor &t)
{
    std::vector<int64_t> offsets{0};
    for (int64_t d = t.dim() - 3; d >= 0; --d) {
        std::vector<int64_t> grown;
        grown.reserve(offsets.size() * size_t(t.size(d)));
        for (int64_t i = 0; i < t.size(d); ++i)
            for (const int64_t o : offsets)
                grown.push_back(i * t.stride(d) + o);
        offsets = std::move(grown);
    }
    return offsets;
}

// BF16 products in FP32 arithmetic, a tile at a time: per thread, a tile of each operand widened to
// FP32 and one of FP32 sums (192 KiB at most), so that a budget rehearsed here pays for no FP32
// copy of a whole operand or output, which a BF16 kernel would not make. At the default preset,
// tiles of 64 made the step 1.3x slower than 128, tiles of 256 (512 KiB) 1.15x faster.
constexpr int64_t tileRows = 128, tileColumns = 128, tileDepth = 128;

// `rows` × `columns` of a stored BF16 matrix from (`row`, `column`), widened into `tile` in the
// same layout (row-major, or row-major after a transpose); returns the tile's row distance.
int64_t widenTile(const c10::BFloat16 *data, const StoredMatrix &stored, int64_t row, int64_t column, int64_t rows,
                  int64_t columns, float *tile)
{
    // Stored transposed, the tile's lines are the matrix's columns.
    const int64_t lines = stored.transposed ? columns : rows, length = stored.transposed ? rows : columns;
    const c10::BFloat16 *first = data
                                 + (stored.transposed ? column * stored.leading + row : row * stored.leading + column);
    for (int64_t line = 0; line < lines; ++line) {
        const c10::BFloat16 *from = first + line * stored.leading;
        float *to = tile + line * length;
        for (int64_t i = 0; i < length; ++i)
            to[i] = float(from[i]); // exact: BF16 is FP32 without its low 16 bits
    }
    return length;
}

// alpha·a·b (+ bias on every row when defined) over the last two dimensions of BF16 operands,
// stored as `sa` and `sb`, into `out` (BF16, contiguous).
void widenedProduct(const at::Tensor &a, const StoredMatrix &sa, const at::Tensor &b, const StoredMatrix &sb,
                    float alpha, const at::Tensor &bias, at::Tensor &out)
{
    const int64_t m = a.size(-2), k = a.size(-1), n = b.size(-1);
    const std::vector<int64_t> aOffsets = batchOffsets(a), bOffsets = batchOffsets(b);
    const int64_t rowTiles = (m + tileRows - 1) / tileRows, columnTiles = (n + tileColumns - 1) / tileColumns;
    const int64_t tiles = int64_t(aOffsets.size()) * rowTiles * columnTiles;
    // Tiles no larger than the operands, and scratch for the threads that will have a tile.
    const int64_t rowsAtMost = std::min(tileRows, m), columnsAtMost = std::min(tileColumns, n);
    const int64_t depthAtMost = std::min(tileDepth, k);
    const int64_t tileFloats = rowsAtMost * depthAtMost + depthAtMost * columnsAtMost + rowsAtMost * columnsAtMost;
    // (Called inside a parallel region, it runs on the calling thread, whose number may be any.)
    const int64_t threads = at::in_parallel_region() ? at::get_num_threads()
                                                     : std::min<int64_t>(at::get_num_threads(), tiles);
    const at::Tensor scratch = at::empty({threads * tileFloats}, a.options().dtype(at::kFloat));
    const auto *aData = a.data_ptr<c10::BFloat16>(), *bData = b.data_ptr<c10::BFloat16>();
    const c10::BFloat16 *biasData = bias.defined() ? bias.data_ptr<c10::BFloat16>() : nullptr;
    auto *outData = out.data_ptr<c10::BFloat16>();
    // One tile per step of a thread, each sgemm on that thread (oneDNN runs serially inside a
    // parallel region).
    at::parallel_for(0, tiles, 1, [&](int64_t begin, int64_t end) {
        float *aTile = scratch.data_ptr<float>() + at::get_thread_num() * tileFloats;
        float *bTile = aTile + rowsAtMost * depthAtMost, *sums = bTile + depthAtMost * columnsAtMost;
        for (int64_t t = begin; t < end; ++t) {
            const int64_t matrix = t / (rowTiles * columnTiles);
            const int64_t row = (t / columnTiles) % rowTiles * tileRows, column = t % columnTiles * tileColumns;
            const int64_t rows = std::min(tileRows, m - row), columns = std::min(tileColumns, n - column);
            if (biasData)
                for (int64_t i = 0; i < rows; ++i)
                    for (int64_t j = 0; j < columns; ++j)
                        sums[i * columns + j] = float(biasData[column + j]);
            const c10::BFloat16 *aMatrix = aData + aOffsets[size_t(matrix)];
            const c10::BFloat16 *bMatrix = bData + bOffsets[size_t(matrix)];
            for (int64_t depth = 0; depth < k; depth += tileDepth) {
                const int64_t deep = std::min(tileDepth, k - depth);
                const int64_t lda = widenTile(aMatrix, sa, row, depth, rows, deep, aTile);
                const int64_t ldb = widenTile(bMatrix, sb, depth, column, deep, columns, bTile);
                const float beta = depth > 0 || biasData ? 1.0f : 0.0f;
                sgemm({sa.transposed, lda}, aTile, {sb.transposed, ldb}, bTile, rows, columns, deep, alpha, beta, sums,
                      columns);
            }
            c10::BFloat16 *to = outData + matrix * m * n + row * n + column;
            for (int64_t i = 0; i < rows; ++i)
                for (int64_t j = 0; j < columns; ++j)
                    to[i * n + j] = c10::BFloat16(sums[i * columns + j]); // rounded to nearest even
        }
    });
}

// How `t`'s last two dimensions are stored, `t` first made contiguous where sgemm cannot read it.
StoredMatrix readAsStored(at::Tensor &t)
{
    if (const std::optional<StoredMatrix> stored = storedMatrix(t))
        return *stored;
    t = t.contiguous();
    return *storedMatrix(t);
}

// alpha·a·b (+ bias on every row when defined) for BF16 operands of the same batch shape into
// `out`: on the matmul primitive, which reads any strides, or widened on sgemm, which reads stored
// matrices.
void bf16Product(at::Tensor a, at::Tensor b, float alpha, const at::Tensor &bias, at::Tensor &out, ProductPath path)
{
    bf16Products.fetch_add(1, std::memory_order_relaxed);
    if (path == ProductPath::Primitive) {
        primitiveMatmul(a, b, bias, alpha, out);
        return;
    }
    const StoredMatrix sa = readAsStored(a), sb = readAsStored(b);
    widenedProduct(a, sa, b, sb, alpha, bias.defined() ? bias.contiguous() : bias, out);
}

// alpha·a·b over the last two dimensions into a new contiguous tensor on `path`; batch shapes
// equal. `scratchBytes`: what the product may allocate besides its output without raising the peak.
at::Tensor product(at::Tensor a, at::Tensor b, ProductPath path, float alpha = 1.0f, int64_t scratchBytes = 0)
{
    std::vector<int64_t> shape(a.sizes().begin(), a.sizes().end());
    shape.back() = b.size(-1);
    at::Tensor out = at::empty(shape, a.options());
    RECORD_FUNCTION("optlog::gemm", std::vector<c10::IValue>()); // a GEMM for bench_profile
    if (a.scalar_type() == at::kBFloat16) {
        bf16Product(a, b, alpha, {}, out, path);
        return out;
    }
    if (path == ProductPath::Primitive) {
        primitiveMatmul(a, b, {}, alpha, out);
        return out;
    }
    const StoredMatrix sa = readAsStored(a), sb = readAsStored(b);
    const int64_t m = a.size(-2), k = a.size(-1), n = b.size(-1);
    if (const int64_t chunk = a.dim() == 2 ? paddedDepthFor(sa, sb, m, n, k, scratchBytes) : 0) {
        paddedProduct(a, sa, b, sb, chunk, alpha, out);
        return out;
    }
    const std::vector<int64_t> aOffsets = batchOffsets(a), bOffsets = batchOffsets(b);
    const float *aData = a.data_ptr<float>();
    const float *bData = b.data_ptr<float>();
    float *outData = out.data_ptr<float>();
    const auto one = [&](int64_t i) {
        sgemm(sa, aData + aOffsets[size_t(i)], sb, bData + bOffsets[size_t(i)], m, n, k, alpha, 0.0f,
              outData + i * m * n, n);
    };
    const auto batch = int64_t(aOffsets.size());
    // Many small products (attention's heads): one per thread, each on one thread (oneDNN runs
    // serially inside a parallel region). Few: one after another, each on every thread.
    if (batch >= at::get_num_threads() && batch > 1)
        at::parallel_for(0, batch, 1, [&](int64_t begin, int64_t end) {
            for (int64_t i = begin; i < end; ++i)
                one(i);
        });
    else
        for (int64_t i = 0; i < batch; ++i)
            one(i);
    return out;
}

// y = x·Wᵀ + b with x flattened to rows: the primitive adds the bias; for sgemm it is written
// first and sgemm adds onto it.
at::Tensor linearForward(const at::Tensor &x, const at::Tensor &weight, const at::Tensor &bias, ProductPath path)
{
    const int64_t k = x.size(-1), n = weight.size(0);
    const at::Tensor rows = x.reshape({-1, k}).contiguous();
    const at::Tensor w = weight.contiguous();
    const int64_t m = rows.size(0);
    RECORD_FUNCTION("optlog::gemm", std::vector<c10::IValue>()); // the bias copy counts as the GEMM's
    at::Tensor out = at::empty({m, n}, x.options());
    if (x.scalar_type() == at::kBFloat16) {
        bf16Product(rows, w.t(), 1.0f, bias, out, path);
    } else if (path == ProductPath::Primitive) {
        primitiveMatmul(rows, w.t(), bias.contiguous(), 1.0f, out);
    } else {
        out.copy_(bias.expand({m, n}));
        sgemm({false, k}, rows.data_ptr<float>(), {true, k}, w.data_ptr<float>(), m, n, k, 1.0f, 1.0f,
              out.data_ptr<float>(), n);
    }
    std::vector<int64_t> shape(x.sizes().begin(), x.sizes().end());
    shape.back() = n;
    return out.view(shape);
}

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

struct OneDnnLinear : public torch::autograd::Function<OneDnnLinear>
{
    static at::Tensor forward(AutogradContext *ctx, const at::Tensor &x, const at::Tensor &weight,
                              const at::Tensor &bias, int64_t path)
    {
        ctx->save_for_backward({x, weight});
        ctx->saved_data["path"] = path;
        return linearForward(x, weight, bias, ProductPath(path));
    }

    static variable_list backward(AutogradContext *ctx, variable_list gradients)
    {
        const variable_list saved = ctx->get_saved_variables();
        const at::Tensor &x = saved[0], &weight = saved[1];
        const auto path = ProductPath(ctx->saved_data["path"].toInt());
        const int64_t k = x.size(-1), n = weight.size(0);
        const at::Tensor g = gradients[0].reshape({-1, n}).contiguous();
        at::Tensor dx, dw, db;
        // The weight's gradient first, with scratch up to the size of the input's gradient that
        // follows: the step's peak does not rise.
        if (ctx->needs_input_grad(1)) {
            const int64_t inputGradientBytes = ctx->needs_input_grad(0) ? x.numel() * int64_t(x.element_size()) : 0;
            dw = product(g.t(), x.reshape({-1, k}), path, 1.0f, inputGradientBytes); // (n × rows)·(rows × k)
        }
        if (ctx->needs_input_grad(0))
            dx = product(g, weight, path).view(x.sizes()); // (rows × n)·(n × k)
        if (ctx->needs_input_grad(2))
            db = g.sum(0);
        return {dx, dw, db, at::Tensor()};
    }
};

// alpha·a·b, alpha (attention's 1/√D) applied inside the products in both directions: no pass of
// its own.
struct OneDnnMatmul : public torch::autograd::Function<OneDnnMatmul>
{
    static at::Tensor forward(AutogradContext *ctx, const at::Tensor &a, const at::Tensor &b, double alpha, int64_t path)
    {
        ctx->save_for_backward({a, b});
        ctx->saved_data["alpha"] = alpha;
        ctx->saved_data["path"] = path;
        return product(a, b, ProductPath(path), float(alpha));
    }

    static variable_list backward(AutogradContext *ctx, variable_list gradients)
    {
        const variable_list saved = ctx->get_saved_variables();
        const at::Tensor &a = saved[0], &b = saved[1], &g = gradients[0];
        const auto alpha = float(ctx->saved_data["alpha"].toDouble());
        const auto path = ProductPath(ctx->saved_data["path"].toInt());
        at::Tensor da, db;
        // b's gradient first (the head's weight's: its depth is the rows), with scratch up to the
        // size of a's gradient that follows, as in OneDnnLinear.
        if (ctx->needs_input_grad(1)) {
            const int64_t aGradientBytes = ctx->needs_input_grad(0) ? a.numel() * int64_t(a.element_size()) : 0;
            db = product(a.transpose(-2, -1), g, path, alpha, aGradientBytes);
        }
        if (ctx->needs_input_grad(0))
            da = product(g, b.transpose(-2, -1), path, alpha);
        return {da, db, at::Tensor(), at::Tensor()};
    }
};

#endif // OPTLOG_HAVE_ONEDNN

} // namespace

at::Tensor gemmLinear(const at::Tensor &x, const at::Tensor &weight, const at::Tensor &bias, ProductPaths paths)
{
#ifdef OPTLOG_HAVE_ONEDNN
    // Shapes at::linear would refuse go to it, for its error message.
    const std::optional<OneDnnProduct> taken = oneDnnTakes(paths, x, weight);
    if (taken && x.dim() >= 2 && weight.dim() == 2 && x.size(-1) == weight.size(1)) {
        const at::Tensor rows = inProductDtype(x, taken->dtype), w = inProductDtype(weight, taken->dtype);
        const auto path = int64_t(taken->path);
        if (!bias.defined()) { // the head: one product of the rows with Wᵀ
            std::vector<int64_t> shape(x.sizes().begin(), x.sizes().end());
            shape.back() = weight.size(0);
            return OneDnnMatmul::apply(rows.reshape({-1, x.size(-1)}), w.t(), 1.0, path).view(shape);
        }
        // Autocast casts the bias too; outside it, a bias of another dtype is at::linear's to refuse.
        const bool biasCast = compat::autocastEnabled(c10::DeviceType::CPU) && floatOrBf16(bias);
        if ((bias.scalar_type() == taken->dtype || biasCast) && bias.dim() == 1 && bias.size(0) == weight.size(0))
            return OneDnnLinear::apply(rows, w, inProductDtype(bias, taken->dtype), path);
    }
#else
    (void) paths;
#endif
    return at::linear(x, weight, bias);
}

int64_t paddedProductCount()
{
    return paddedProducts.load(std::memory_order_relaxed);
}

int64_t bf16ProductCount()
{
    return bf16Products.load(std::memory_order_relaxed);
}

at::Tensor gemmMatmul(const at::Tensor &a, const at::Tensor &b, ProductPaths paths, double alpha)
{
#ifdef OPTLOG_HAVE_ONEDNN
    const std::optional<OneDnnProduct> taken = oneDnnTakes(paths, a, b);
    if (taken && a.dim() >= 2 && a.dim() == b.dim()
        && a.sizes().slice(0, a.dim() - 2) == b.sizes().slice(0, b.dim() - 2) && a.size(-1) == b.size(-2))
        return OneDnnMatmul::apply(inProductDtype(a, taken->dtype), inProductDtype(b, taken->dtype), alpha,
                                   int64_t(taken->path));
#else
    (void) paths;
#endif
    // In place on the product ATen just made: one pass, no second tensor of its size.
    return alpha == 1.0 ? at::matmul(a, b) : at::matmul(a, b).mul_(alpha);
}

} // namespace optlog
