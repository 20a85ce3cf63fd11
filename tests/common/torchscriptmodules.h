// SPDX-License-Identifier: MIT
#pragma once
// The TorchScript modules the engine's tests train (tests/engine/torchscript_modules.py): written
// into a folder by Debian's python3-torch at test time, with expected.json beside them.

#include "tests/common/testpaths.h"

#include <QProcess>
#include <QString>

namespace optlog::testing {

// Whether the modules were written into `folder`; a test fails with the reason when not.
inline bool writeTorchScriptModules(const QString &folder)
{
    QProcess python;
    python.setProcessChannelMode(QProcess::ForwardedChannels);
    python.start("/usr/bin/python3", {sourcePath(QStringLiteral("tests/engine/torchscript_modules.py")), folder});
    return python.waitForFinished(120000) && python.exitCode() == 0;
}

inline constexpr char kTorchScriptModulesNeed[]
    = "torchscript_modules.py failed: it needs Debian's python3-torch (packaging/setup.sh installs it)";

} // namespace optlog::testing
