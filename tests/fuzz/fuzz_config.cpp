// SPDX-License-Identifier: MIT
// The run config as a user hands it in: a TOML file, then `--set key=value` overrides, one per
// line after a line "%set". A refusal must be a ConfigError (the CLI's exit 2 with its message); a
// config that passes must be written by toToml as text that reads back to the same config, since
// that text is what the study stores and what a resumed or copied run is rebuilt from.
#include "core/config/config.h"
#include "tests/fuzz/fuzzinput.h"

#include <sstream>

using namespace optlog;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const std::string input = fuzz::textOf(data, size);
    const size_t split = input.find("\n%set\n");
    RunConfig config;
    try {
        applyTomlText(config, input.substr(0, split), "fuzz.toml");
        if (split != std::string::npos) {
            std::istringstream overrides(input.substr(split + 6));
            for (std::string line; std::getline(overrides, line);)
                applyOverride(config, line);
        }
        validate(config);
    } catch (const ConfigError &) {
        return 0;
    }
    const std::string written = toToml(config);
    RunConfig reread;
    try {
        applyTomlText(reread, written, "written.toml");
        validate(reread);
    } catch (const ConfigError &e) {
        fuzz::broken("a valid config, written by toToml, is refused when read back: " + std::string(e.what()) + "\n"
                     + written);
    }
    if (toToml(reread) != written)
        fuzz::broken("a valid config reads back as another:\n" + written + "\n---\n" + toToml(reread));
    return 0;
}
