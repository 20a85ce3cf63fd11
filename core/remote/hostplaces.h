// SPDX-License-Identifier: MIT
#pragma once

#include "core/config/config.h"

#include <string>
#include <vector>

namespace optlog {

// Where a host keeps the runs that other machines start on it, all on its own disk, in one folder
// of its data folder ($XDG_DATA_HOME/optlog/hosted):
//   <study name>.sqlite                  the study that one study elsewhere trains its runs into here
//   <study name>.sqlite.logs/<time>.log  each engine's output
//   files/<name>                         the files configs name (a TorchScript module, data)
// Called on the host.
std::string hostedFolder();

// The name of the study on a host for the study at `study` here: this machine's name, the file's
// stem and a hash of its absolute path, so that two studies of one name on two laptops, or in two
// folders of one, never share a study there.
std::string hostedStudyName(const std::string &study);

// A file or folder a config names, and its name in the host's files folder: its own name with its
// size and modification time, so that a file sent once is not sent again, and a changed one is.
struct SentFile
{
    std::string local; // absolute, here
    std::string name;  // in <hosted folder>/files on the host
    bool folder = false;
};

// The files `config` names (model.path of a TorchScript module; data.path of a text file or a
// tokens folder), with the config's paths changed to where they will be on the host, under
// `hostFolder` (the host's hostedFolder()). Throws ConfigError for a path that does not exist here.
std::vector<SentFile> filesToSend(RunConfig &config, const std::string &hostFolder);

} // namespace optlog
