// SPDX-License-Identifier: MIT
#include "app/commands.h"

#include "core/config/configerror.h"
#include "core/engine/data/textdata.h"
#include "core/store/store.h"

#include <iostream>

namespace optlog {

int refuseBadInput(const char *command, const std::function<void()> &prepare)
{
    try {
        prepare();
        return 0;
    } catch (const ConfigError &e) {
        std::cerr << "optlog " << command << ": " << e.what() << "\n";
    } catch (const DataError &e) {
        std::cerr << "optlog " << command << ": " << e.what() << "\n";
    } catch (const StoreError &e) {
        std::cerr << "optlog " << command << ": " << e.what() << "\n";
    }
    return kExitBadInput;
}

} // namespace optlog
