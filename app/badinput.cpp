// SPDX-License-Identifier: MIT
#include "app/commands.h"
#include "core/contract/inputerror.h"

#include <iostream>

namespace optlog {

int refuseBadInput(const char *command, const std::function<void()> &prepare)
{
    try {
        prepare();
        return 0;
    } catch (const InputError &e) {
        std::cerr << "optlog " << command << ": " << e.what() << "\n";
    }
    return kExitBadInput;
}

} // namespace optlog
