// SPDX-License-Identifier: MIT
#pragma once
// A file with the given bytes in a test's temporary folder: a config, a damaged cache, a study
// file that is not one.

#include <QByteArray>
#include <QFile>
#include <QString>
#include <QTemporaryDir>

namespace optlog::testing {

inline QString writtenFile(const QTemporaryDir &dir, const QString &name, const QByteArray &bytes)
{
    const QString path = dir.filePath(name);
    QFile file(path);
    if (!file.open(QIODevice::WriteOnly) || file.write(bytes) != bytes.size())
        qFatal("cannot write the test file %s", qPrintable(path));
    return path;
}

} // namespace optlog::testing
