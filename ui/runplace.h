// SPDX-License-Identifier: MIT
#pragma once

#include <QString>

namespace optlog {

// Where the queue's runs train (the workbench's "Run on", docs/workbench.md).
struct RunPlace
{
    enum class Kind {
        Here,  // engines on this machine, one run at a time
        Host,  // another machine over SSH, followed back (docs/remote.md)
        Slurm, // the whole queue handed to Slurm as one job array (docs/cluster.md)
    };
    Kind kind = Kind::Here;
    QString host; // Kind::Host: the SSH destination

    static RunPlace here() { return {}; }
    static RunPlace onHost(const QString &destination) { return {Kind::Host, destination}; }
    static RunPlace onSlurm() { return {Kind::Slurm, {}}; }
    bool operator==(const RunPlace &other) const { return kind == other.kind && host == other.host; }
};

} // namespace optlog
