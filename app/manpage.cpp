// SPDX-License-Identifier: MIT
#include "app/manpage.h"

#include "core/contract/format.h"

#include <CLI/CLI.hpp>

#include <sstream>

namespace optlog {

namespace {

// "--memory-budget SIZE" or "study": how the option is written, with its value's type.
std::string synopsisOf(const CLI::Option &option)
{
    if (option.get_positional())
        return option.get_name(true);
    std::string text = option.get_name();
    if (option.get_expected_max() != 0 && !option.get_type_name().empty())
        text += " " + option.get_type_name();
    return text;
}

void writeOptions(std::ostringstream &out, const CLI::App &command)
{
    for (const CLI::Option *option : command.get_options()) {
        if (option->get_name() == "--help" || option->get_group().empty())
            continue; // help is everywhere; an option without a group is internal
        out << ".TP\n.B " << roffText(synopsisOf(*option)) << "\n" << roffText(option->get_description());
        if (!option->get_default_str().empty())
            out << " (default: " << roffText(option->get_default_str()) << ")";
        out << "\n";
    }
}

} // namespace

std::string manPage(const CLI::App &app, const std::string &version, const std::string &date)
{
    std::ostringstream out;
    out << ".TH OPTLOG 1 \"" << date << "\" \"optlog " << roffText(version) << "\" \"User Commands\"\n";
    out << ".SH NAME\noptlog \\- the optimization log of training a transformer language model\n";
    out << ".SH SYNOPSIS\n";
    const auto commands = app.get_subcommands([](const CLI::App *) { return true; });
    for (const CLI::App *command : commands) {
        out << ".B optlog " << roffText(command->get_name()) << "\n";
        for (const CLI::Option *option : command->get_options())
            if (option->get_name() != "--help" && !option->get_group().empty())
                out << (option->get_required() ? "" : "[") << roffText(synopsisOf(*option))
                    << (option->get_required() ? "" : "]") << "\n";
        out << ".br\n";
    }
    out << ".B optlog \\-\\-version\n";
    out << ".SH DESCRIPTION\n" << roffText(app.get_description()) << "\n";
    out << ".SH COMMANDS\n";
    for (const CLI::App *command : commands) {
        out << ".SS " << roffText(command->get_name()) << "\n" << roffText(command->get_description()) << "\n";
        writeOptions(out, *command);
    }
    out << ".SH FILES\nA study is one SQLite file (the \\fB\\-\\-db\\fR option). Caches (the matmul peak, the runtime "
           "tuning) live in \\fI$XDG_CACHE_HOME/optlog\\fR, by default \\fI~/.cache/optlog\\fR.\n";
    out << ".SH SEE ALSO\n.BR optlog-workbench (1)\n";
    return out.str();
}

} // namespace optlog
