// SPDX-License-Identifier: MIT
// `optlog`: runs training experiments into a study file and reads them back.
#include "app/commands.h"
#include "app/launcher.h"
#include "app/manpage.h"

#include "core/config/cachefile.h"
#include "core/config/config.h"
#include "core/config/configerror.h"
#include "core/config/presets.h"
#include "core/engine/machine/environment.h"
#include "core/engine/data/textdata.h"
#include "core/store/store.h"
#include "optlog_version.h"

#include <CLI/CLI.hpp>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <functional>
#include <iostream>

namespace {

// Re-executes with the tuned variables for the run's precision (relaunchWithRuntimeVariables). A
// config that does not load is refused by the command itself, at once: no need to start again.
void relaunchFor(char **argv, const std::function<optlog::RunConfig()> &config)
{
    std::string mode;
    try {
        mode = config().precision.mode;
    } catch (const std::exception &) {
        return;
    }
    optlog::relaunchWithRuntimeVariables(argv, mode);
}

// A tolerance is a finite number of nats, 0 or more: NaN would make every verdict "can't tell",
// a negative one every verdict a difference.
CLI::Validator toleranceCheck()
{
    return CLI::Validator(
        [](std::string &text) -> std::string {
            char *end = nullptr;
            const double value = std::strtod(text.c_str(), &end);
            if (end == text.c_str() || *end != '\0' || !std::isfinite(value) || value < 0)
                return "--tolerance " + text + ": must be a finite number of nats per token, 0 or more (such as 0.02)";
            return "";
        },
        "NATS");
}

// An exception nobody catches (in a worker thread, through a noexcept function) ends the process
// with a message and exit code 1 instead of abort()'s core dump and 134.
[[noreturn]] void terminateWithMessage()
{
    std::string what = "an exception escaped where it could not be handled";
    if (const std::exception_ptr current = std::current_exception()) {
        try {
            std::rethrow_exception(current);
        } catch (const std::exception &e) {
            what = e.what();
        } catch (...) {
        }
    }
    std::fprintf(stderr, "optlog: failed: %s\n", what.c_str());
    std::_Exit(optlog::kExitFailed);
}

} // namespace

int main(int argc, char **argv)
{
    using namespace optlog;
    CLI::App app{"optlog: the optimization log of training a small transformer language model.\nExit codes: "
                 + exitCodesText() + "."};
    app.require_subcommand(1);
    app.set_version_flag("--version", buildDescription());

    RunRequest run;
    auto *runCmd = app.add_subcommand("run", "train one run into a study file");
    runCmd->add_option("--config", run.configFile, "TOML config (sections model, data, train, precision, memory, "
                                                   "runtime)");
    std::string presets;
    for (const auto &name : presetNames())
        presets += (presets.empty() ? "" : ", ") + name;
    runCmd->add_option("--preset", run.preset, "built-in preset applied before --config: " + presets)
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
    runCmd->add_option("--db", run.study, "study file (created when missing); default study.sqlite in "
                                          "$XDG_DATA_HOME/optlog (~/.local/share/optlog)");
    runCmd->add_option("--set", run.overrides, "override a field, e.g. --set train.steps=100 (repeatable)");
    runCmd->add_flag("--jsonl", run.jsonLines, "print one JSON event per line on stdout");
    runCmd->add_option("--repeats", run.repeats, "train the run this many times over seeds train.seed, +1, ... (1 to "
                                                 + std::to_string(PlannedRun::kMaxRepeats) + "), one group");
    std::string runBudget;
    runCmd->add_option("--memory-budget", runBudget, "refuse allocations past this size, e.g. 512MiB; "
                                                    "the run ends as oom (same as --set memory.budget=...)");
    runCmd->add_flag("--force", run.force, "train even when the memory model predicts the run will not fit its "
                                           "budget or the machine's available memory");
    runCmd->add_option("--from", run.from, "start from a stored run's config, STUDY:RUN (name or id), and change "
                                           "fields with --set; the new run links to it");
    std::vector<std::string> resume;
    runCmd->add_option("--resume", resume, "continue a cancelled or crashed run, STUDY RUN (name or id), from its "
                                           "last checkpoint, with its own config")
        ->expected(2);
    int64_t runRanks = 0;
    auto *runRanksOption = runCmd->add_option("--ranks", runRanks, "train data-parallel over this many engine processes on this machine "
                                            "(same as --set distributed.ranks=N)");
    runCmd->add_option("--rendezvous", run.rendezvous, "data parallel over machines: HOST:PORT where rank 0 serves "
                                                       "the rendezvous (with --rank and --world-size)");
    runCmd->add_option("--rank", run.rank, "this process's rank: 0 trains into the study, 1 and above join rank 0 "
                                           "and take its config")
        ->check(CLI::Range(int64_t(0), int64_t(63)));
    runCmd->add_option("--world-size", run.worldSize, "the ranks of the run (equal to distributed.ranks)")
        ->check(CLI::Range(int64_t(2), int64_t(64)));

    StudyRequest study;
    auto *studyCmd = app.add_subcommand("study", "run every run of a study plan (each in its own engine process) "
                                                 "and print the comparison");
    studyCmd->add_option("plan", study.plan, "built-in study name or study TOML file")->capture_default_str();
    studyCmd->add_option("--db", study.study, "study file; default <plan name>.sqlite in $XDG_DATA_HOME/optlog "
                                              "(~/.local/share/optlog)");
    studyCmd->add_option("--set", study.overrides, "override a field in every run (repeatable)");
    int64_t studyRepeats = 1;
    auto *studyRepeatsOption = studyCmd->add_option("--repeats", studyRepeats, "train every run this many times over seeds (1 to "
                                                     + std::to_string(PlannedRun::kMaxRepeats) + "); default as the plan says");
    studyCmd->add_flag("--force", study.force, "train runs predicted not to fit their budget or the machine");

    CompareRequest compare;
    auto *compareCmd = app.add_subcommand("compare", "compare runs against a baseline at matched tokens");
    compareCmd->add_option("study", compare.study, "study file")->required();
    compareCmd->add_option("--baseline", compare.comparison.baseline, "baseline run (name or id); default the first run");
    compareCmd->add_option("--runs", compare.comparison.runs, "runs to compare (names or ids); default all")->delimiter(',');
    compareCmd->add_option("--tolerance", compare.comparison.tolerance, "validation-loss difference counted as noise, "
                                                             "nats per token")
        ->capture_default_str()
        ->check(toleranceCheck());

    EstimateRequest estimate;
    auto *estimateCmd = app.add_subcommand("estimate", "predict memory by role, with dtypes, without running");
    estimateCmd->add_option("--config", estimate.configFile, "TOML config");
    estimateCmd->add_option("--preset", estimate.preset, "built-in preset applied before --config")
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
    estimateCmd->add_option("--set", estimate.overrides, "override a field (repeatable)");
    estimateCmd->add_option("--ranks", estimate.ranks, "data-parallel ranks for the ZeRO rows")->capture_default_str();
    estimateCmd->add_flag("--json", estimate.json, "print JSON");

    FitRequest fit;
    auto *fitCmd = app.add_subcommand("fit", "find the largest microbatch that fits a memory budget, verified with "
                                             "real steps, then the next levers");
    fitCmd->add_option("--config", fit.configFile, "TOML config");
    fitCmd->add_option("--preset", fit.preset, "built-in preset applied before --config")
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
    fitCmd->add_option("--set", fit.overrides, "override a field (repeatable)");
    fitCmd->add_option("--memory-budget", fit.budget, "the budget, e.g. 512MiB")->required();

    std::string studyFile, runName, format = "csv", output;
    TuneRequest tune;
    bool gemmCheck = false;
    auto *tuneCmd = app.add_subcommand("tune", "measure the fastest threads, wait policy and BLAS core type per "
                                               "precision on this machine, and keep them for optlog run");
    tuneCmd->add_option("--preset", tune.preset, "model to measure with")->capture_default_str();
    tuneCmd->add_option("--modes", tune.modes, "precision modes to tune, one per family")->delimiter(',')
        ->capture_default_str();
    tuneCmd->add_option("--steps", tune.steps, "steps per candidate run")->capture_default_str()
        ->check(CLI::Range(5, 100000));
    tuneCmd->add_option("--rounds", tune.rounds, "alternations of all candidates")->capture_default_str()
        ->check(CLI::Range(1, 100));
    tuneCmd->add_flag("--if-needed", tune.ifNeeded, "do nothing when every requested family is already tuned here");
    tuneCmd->add_flag("--gemm-check", gemmCheck, "internal: check a GEMM with this process's OpenBLAS core type")
        ->group(""); // hidden from --help and the manual
    ReportRequest report;
    auto *reportCmd = app.add_subcommand("report", "write a comparison report: verdicts, charts, per-run detail, "
                                                   "environment");
    reportCmd->add_option("study", report.study, "study file")->required();
    reportCmd->add_option("--runs", report.runs, "runs to report (names or ids); default all")->delimiter(',');
    reportCmd->add_option("--baseline", report.baseline, "baseline run (name or id); default the first run");
    reportCmd->add_option("--tolerance", report.tolerance, "validation-loss difference counted as noise, "
                                                           "nats per token")
        ->capture_default_str()
        ->check(toleranceCheck());
    reportCmd->add_option("--format", report.format, "html, pdf, md, csv or json")
        ->check(CLI::IsMember({"html", "pdf", "md", "csv", "json"}))
        ->capture_default_str();
    reportCmd->add_option("-o,--output", report.output, "output file; default <study>-report.<format>");
    RunsRequest runs;
    auto *runsCmd = app.add_subcommand("runs", "list the runs of a study");
    runsCmd->add_option("study", runs.study, "study file")->required();
    runsCmd->add_option("--filter", runs.filter, "words every listed run matches: text, tag:NAME, name:, note:, "
                                                 "group:, outcome:, is:archived, a config field (mode:pure-bf16); "
                                                 "-word leaves out");
    runsCmd->add_flag("--all", runs.all, "list archived runs too");

    CurateRequest curate;
    std::string curatedRun; // the one run of note, tag and rename
    auto *noteCmd = app.add_subcommand("note", "set a run's note (plain text, shown in lists, Compare and reports)");
    noteCmd->add_option("study", curate.study, "study file")->required();
    noteCmd->add_option("run", curatedRun, "run name or id")->required();
    noteCmd->add_option("text", curate.text, "the note (up to " + std::to_string(Store::kMaxNoteBytes) + " bytes)");
    noteCmd->add_flag("--clear", curate.clear, "remove the run's note");
    auto *tagCmd = app.add_subcommand("tag", "add (+name) and remove (-name) tags of a run");
    tagCmd->add_option("study", curate.study, "study file")->required();
    tagCmd->add_option("run", curatedRun, "run name or id")->required();
    tagCmd->add_option("tags", curate.tags, "+name adds, -name removes, a bare name adds");
    tagCmd->allow_extras(); // -name is a tag to remove, not an option
    auto *renameCmd = app.add_subcommand("rename", "rename a run; the old name stays searchable");
    renameCmd->add_option("study", curate.study, "study file")->required();
    renameCmd->add_option("run", curatedRun, "run name or id")->required();
    renameCmd->add_option("name", curate.text, "the new name")->required();
    auto *archiveCmd = app.add_subcommand("archive", "hide runs from lists and comparisons without deleting them");
    archiveCmd->add_option("study", curate.study, "study file")->required();
    archiveCmd->add_option("runs", curate.runs, "run names or ids")->required();
    archiveCmd->add_flag("--undo", curate.undo, "bring archived runs back");
    auto *deleteCmd = app.add_subcommand("delete", "delete runs and every row of them, for good");
    deleteCmd->add_option("study", curate.study, "study file")->required();
    deleteCmd->add_option("runs", curate.runs, "run names or ids")->required();
    deleteCmd->add_flag("--yes", curate.yes, "confirm: without it nothing is deleted");
    CopyRequest copy;
    std::vector<std::string> copyArguments;
    auto *copyCmd = app.add_subcommand("copy", "copy finished runs with every row into another study (created when "
                                               "missing); the source is not changed");
    copyCmd->add_option("SOURCE RUN... DESTINATION", copyArguments, "source study, run names or ids, destination "
                                                                    "study")
        ->required()
        ->expected(3, -1);
    copyCmd->add_option("--suffix", copy.suffix, "appended to each copied run's name, e.g. ' (gpu)'");
    auto *vacuumCmd = app.add_subcommand("vacuum", "compact a study file and report the bytes freed");
    vacuumCmd->add_option("study", studyFile, "study file")->required();
    QuantizeRequest quantize;
    std::vector<std::string> groups = {"64"};
    auto *quantizeCmd = app.add_subcommand("quantize", "quantize a completed run's final weights and measure what it "
                                                       "costs in loss and saves in bytes");
    quantizeCmd->add_option("study", quantize.study, "study file")->required();
    quantizeCmd->add_option("run", quantize.run, "run name or id")->required();
    quantizeCmd->add_option("--scheme", quantize.schemes, "int8 (per output channel), int4 (symmetric absmax), "
                                                          "int4-asym (min-max, zero point), nf4, mixed (int4, the "
                                                          "most sensitive tensors int8); a comma-separated list "
                                                          "quantizes each")
        ->delimiter(',');
    quantizeCmd->add_option("--group", groups, "weights per scale for the 4-bit schemes: a power of two, or a "
                                               "comma-separated list (32,64,128); default 64")
        ->delimiter(',');
    quantizeCmd->add_option("--tensors", quantize.tensors, "which weight matrices, glob patterns over their names, "
                                                           "comma-separated (embeddings: token_embedding.weight)")
        ->capture_default_str();
    quantizeCmd->add_option("--int8-tensors", quantize.int8Tensors, "mixed: the most sensitive tensors kept in int8")
        ->capture_default_str();
    std::vector<std::string> prunedRuns;
    auto *pruneCmd = app.add_subcommand("prune", "remove runs' checkpoints (final weights are kept)");
    pruneCmd->add_option("study", studyFile, "study file")->required();
    pruneCmd->add_option("runs", prunedRuns, "run names or ids; default every finished run");
    auto *showCmd = app.add_subcommand("show", "show one run: config, environment, memory by role, events");
    showCmd->add_option("study", studyFile, "study file")->required();
    showCmd->add_option("run", runName, "run name or id")->required();
    auto *exportCmd = app.add_subcommand("export", "export every run's metrics");
    exportCmd->add_option("study", studyFile, "study file")->required();
    exportCmd->add_option("--format", format, "csv or json")->check(CLI::IsMember({"csv", "json"}))
        ->capture_default_str();
    exportCmd->add_option("-o,--output", output, "output file; default standard output");

    // Internal, for the build: the manual page written from the definitions above.
    if (argc == 3 && std::string(argv[1]) == "--man-page") {
        std::cout << manPage(app, std::string(OPTLOG_VERSION) + " (" + OPTLOG_GIT_DESCRIBE + ")", argv[2]);
        return kExitOk;
    }
    // CLI11 would only say that a command is required; say which word it did not know.
    if (argc > 1 && argv[1][0] != '-') {
        std::string names;
        bool known = false;
        for (const CLI::App *command : app.get_subcommands([](const CLI::App *) { return true; })) {
            known = known || command->get_name() == argv[1];
            names += (names.empty() ? "" : ", ") + command->get_name();
        }
        if (!known) {
            std::cerr << "optlog: unknown command '" << argv[1] << "'; the commands are " << names << "\n";
            return kExitBadInput;
        }
    }
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError &e) {
        const int code = app.exit(e);
        return code == 0 ? kExitOk : kExitBadInput;
    }

    // The boundary: whatever a command did not handle still ends with a documented exit code and a
    // message, never an abort.
    const std::string command = "optlog " + app.get_subcommands().front()->get_name();
    std::set_terminate(terminateWithMessage);
    try {
        if (*runCmd) {
            if (!resume.empty()) {
                if (!run.study.empty())
                    return refuseBadInput("run", [] {
                        throw ConfigError("--resume names the study itself (--resume STUDY RUN); leave out --db");
                    });
                run.study = resume.at(0);
                run.resume = resume.at(1);
            }
            if (run.rank > 0) { // a joining rank takes everything from rank 0
                holdStopSignals();
                return runCommand(run, selfPath(argv[0]));
            }
            if (runRanksOption->count())
                run.overrides.push_back("distributed.ranks=" + std::to_string(runRanks));
            if (run.configFile.empty() && run.preset.empty() && run.from.empty() && run.resume.empty())
                run.preset = "default";
            holdStopSignals();
            relaunchFor(argv, [&] { return requestedConfig(run); });
            if (!runBudget.empty())
                run.overrides.push_back("memory.budget=\"" + runBudget + "\"");
            if (run.study.empty())
                run.study = studyFilePath("study.sqlite");
            if (const int refused = refuseBadInput("run", [&] { nameDerivedRun(run); }))
                return refused;
            return runCommand(run, selfPath(argv[0]));
        }
        if (*studyCmd) {
            if (studyRepeatsOption->count())
                study.repeats = studyRepeats;
            return studyCommand(study, selfPath(argv[0]));
        }
        if (*fitCmd) {
            if (fit.configFile.empty() && fit.preset.empty())
                fit.preset = "default";
            relaunchFor(argv, [&] { return loadRunConfig(fit.preset, fit.configFile, fit.overrides); });
            return fitCommand(fit);
        }
        if (*estimateCmd) {
            if (estimate.configFile.empty() && estimate.preset.empty())
                estimate.preset = "default";
            return estimateCommand(estimate);
        }
        if (*compareCmd)
            return compareCommand(compare);
        if (*tuneCmd) {
            if (gemmCheck)
                return gemmCheckCommand();
            return tuneCommand(tune, selfPath(argv[0]));
        }
        if (*reportCmd)
            return reportCommand(report, argc, argv);
        if (*runsCmd)
            return runsCommand(runs);
        if (!curatedRun.empty())
            curate.runs = {curatedRun};
        if (*noteCmd)
            return noteCommand(curate);
        if (*tagCmd) {
            for (const std::string &extra : tagCmd->remaining())
                curate.tags.push_back(extra);
            return tagCommand(curate);
        }
        if (*renameCmd)
            return renameCommand(curate);
        if (*archiveCmd)
            return archiveCommand(curate);
        if (*deleteCmd)
            return deleteCommand(curate);
        if (*copyCmd) {
            copy.source = copyArguments.front();
            copy.destination = copyArguments.back();
            copy.runs.assign(copyArguments.begin() + 1, copyArguments.end() - 1);
            return copyCommand(copy);
        }
        if (*vacuumCmd)
            return vacuumCommand(studyFile);
        if (*showCmd)
            return showCommand(studyFile, runName);
        if (*quantizeCmd) {
            quantize.groups.clear();
            for (const std::string &group : groups) {
                char *end = nullptr;
                const long long value = std::strtoll(group.c_str(), &end, 10);
                if (group.empty() || *end != '\0' || value <= 0)
                    return refuseBadInput("quantize", [&] {
                        throw ConfigError("--group '" + group + "' is not a group size; give a power of two such as "
                                          "32, 64 or 128");
                    });
                quantize.groups.push_back(value);
            }
            return quantizeCommand(quantize);
        }
        if (*pruneCmd)
            return pruneCommand(studyFile, prunedRuns);
        if (*exportCmd)
            return exportCommand(studyFile, format, output);
        return kExitBadInput;
    } catch (const ConfigError &e) {
        std::cerr << command << ": " << e.what() << "\n";
        return kExitBadInput;
    } catch (const DataError &e) {
        std::cerr << command << ": " << e.what() << "\n";
        return kExitBadInput;
    } catch (const StoreError &e) {
        std::cerr << command << ": " << e.what() << "\n";
        return kExitBadInput;
    } catch (const std::bad_alloc &) {
        std::cerr << command << ": out of memory (std::bad_alloc) before the run could record it; `optlog estimate` "
                                "predicts what the config needs\n";
        return kExitFailed;
    } catch (const std::exception &e) {
        std::cerr << command << ": failed: " << e.what() << "\n";
        return kExitFailed;
    }
}
