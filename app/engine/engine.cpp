// SPDX-License-Identifier: MIT
// optlog-engine's side of app/enginework.h: it is the engine, so it hands nothing on.
#include "app/enginework.h"
#include "core/engine/kernels/productpaths.h"
#include "core/engine/machine/environment.h"

namespace optlog {

void handToEngine(char **) { }

int refuseWithoutEngine(const std::string &)
{
    return kExitOk;
}

std::string buildLine()
{
    return buildDescription() + "; products on " + (oneDnnGemmBuilt() ? "aten, sgemm, primitive" : "aten");
}

} // namespace optlog
