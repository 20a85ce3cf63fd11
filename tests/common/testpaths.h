// SPDX-License-Identifier: MIT
#pragma once
// Where a test finds the `optlog` binary and the source tree: in the environment CTest gives it
// (tests/CMakeLists.txt), not in compile definitions. An absolute path on a test's command line
// makes its object file differ per checkout, and ccache then misses every test file in a fresh clone.

#include <QString>
#include <cstdio>
#include <cstdlib>

namespace optlog::testing {

inline QString requiredEnvironmentPath(const char *name)
{
    const QString path = qEnvironmentVariable(name);
    if (path.isEmpty()) {
        std::fprintf(stderr, "%s is not set: run the tests with ctest, which sets it (tests/CMakeLists.txt)\n", name);
        std::exit(2);
    }
    return path;
}

// The `optlog` binary of this build.
inline QString optlogBinary()
{
    return requiredEnvironmentPath("OPTLOG_BINARY");
}

// A path in the source tree, given relative to its root; the root itself, ending in '/', for none.
inline QString sourcePath(const QString &relative = {})
{
    return requiredEnvironmentPath("OPTLOG_SOURCE_DIR") + '/' + relative;
}

} // namespace optlog::testing
