// SPDX-License-Identifier: MIT
#pragma once
// Files in a test's temporary folder: one written with the given bytes (a config, a damaged cache,
// a study file that is not one), and those a command left there.

#include <QByteArray>
#include <QDir>
#include <QDirIterator>
#include <QFile>
#include <QString>
#include <QStringList>
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

// Every file under `root` (hidden ones too), by its path there, sorted. Folders are not counted.
inline QStringList filesUnder(const QString &root)
{
    QStringList found;
    QDirIterator it(root, QDir::Files | QDir::Hidden | QDir::System, QDirIterator::Subdirectories);
    while (it.hasNext())
        found << QDir(root).relativeFilePath(it.next());
    found.sort();
    return found;
}

} // namespace optlog::testing
