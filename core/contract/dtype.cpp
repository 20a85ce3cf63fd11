// SPDX-License-Identifier: MIT
#include "core/contract/dtype.h"

#include "core/contract/rowlookup.h"

namespace optlog {

namespace {

struct DtypeFacts
{
    Dtype dtype;
    const char *name;
    const char *shortName;
    int bytes;
};

constexpr DtypeFacts kDtypes[] = {
    {Dtype::Float32, "float32", "fp32", 4},
    {Dtype::BFloat16, "bfloat16", "bf16", 2},
    {Dtype::Float16, "float16", "fp16", 2},
};

const DtypeFacts &factsOf(Dtype dtype)
{
    return rowOf(kDtypes, &DtypeFacts::dtype, dtype);
}

} // namespace

const char *dtypeName(Dtype dtype)
{
    return factsOf(dtype).name;
}
const char *shortDtypeName(Dtype dtype)
{
    return factsOf(dtype).shortName;
}
int dtypeBytes(Dtype dtype)
{
    return factsOf(dtype).bytes;
}

std::string shortDtype(const std::string &name)
{
    const DtypeFacts *facts = findRow(kDtypes, &DtypeFacts::name, name);
    return facts ? facts->shortName : name;
}

} // namespace optlog
