// SPDX-License-Identifier: MIT
// The engine's JSON-lines events, which any trainer may write (`optlog record`): one line in,
// never an exception out. An event that parses must be written by toJsonLine as a line that
// parses to the same event, since the recorder and the workbench pass events on as they read them.
#include "core/contract/engineevents.h"
#include "tests/fuzz/fuzzinput.h"

using namespace optlog;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const ParsedEvent parsed = parseEngineEvent(fuzz::textOf(data, size));
    if (!parsed.event) {
        if (parsed.error.empty())
            fuzz::broken("a line that holds no event gives no reason");
        return 0;
    }
    const std::string written = toJsonLine(*parsed.event);
    const ParsedEvent again = parseEngineEvent(written);
    if (!again.event)
        fuzz::broken("an event written by toJsonLine does not parse: " + again.error + "\n" + written);
    if (toJsonLine(*again.event) != written)
        fuzz::broken("an event reads back as another:\n" + written + "\n" + toJsonLine(*again.event));
    return 0;
}
