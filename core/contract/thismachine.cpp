// SPDX-License-Identifier: MIT
#include "core/contract/thismachine.h"

#include <unistd.h>

namespace optlog {

std::string thisMachine()
{
    char name[256] = {}; // gethostname may leave a name of the buffer's size unterminated
    if (::gethostname(name, sizeof name - 1) != 0 || name[0] == '\0')
        return "localhost";
    return name;
}

} // namespace optlog
