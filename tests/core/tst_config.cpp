// SPDX-License-Identifier: MIT
#include "core/config/config.h"
#include "core/config/configerror.h"
#include "core/config/configfields.h"
#include "core/config/presets.h"
#include "core/config/recordedconfig.h"
#include "core/config/studyplan.h"
#include "core/memorymodel/modelshape.h"
#include "tests/common/configfuzzer.h"
#include "tests/common/files.h"
#include "tests/common/generateddocs.h"
#include "tests/common/testpaths.h"

#include <QtTest>

using namespace optlog;

class tst_Config : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void badConfigIsRefusedWithItsReason_data();
    void badConfigIsRefusedWithItsReason();
    void badOverrideIsRefused_data();
    void badOverrideIsRefused();
    void layersApplyInOrder();
    void overridesKeepTheirType();
    void serialisedConfigReadsBackIdentical();
    void presetsAreValidAndSized_data();
    void presetsAreValidAndSized();
    void shippedStudiesAreValid();
    void theGpuStudyComparesEveryTechniqueOnTheGpu();
    void tf32IsAGpuSetting();
    void autoAttentionIsSdpaOnCudaWithLibTorch2();
    void documentedFieldsAreGeneratedFromTheTable();
    void replicatesDifferOnlyInTheirSeed();
    void badRepeatsAndSeedsNameTheirField_data();
    void badRepeatsAndSeedsNameTheirField();
    void aStudyPlanRepeatsItsRuns();
    void aWrittenPlanReadsBackToTheSameConfigs();
    void aPlannedRunIsOneEngineCommandLine();
    void fuzzedConfigTextIsAcceptedOrRefusedWithConfigError();
    void aNameWithALeadByteUtf8NeverHasIsRefused();
    void aRecordedConfigIsStoredAsDottedKeys();
    void recordedAndEngineConfigsCompareKeyByKey();
};

// A trainer's own config (`optlog record`): nested objects become dotted keys, nulls are left
// out, and what TOML cannot hold is refused by its key.
void tst_Config::aRecordedConfigIsStoredAsDottedKeys()
{
    const std::string toml = recordedConfigToml(
        R"({"train":{"lr":0.001,"betas":[0.9,0.95]},"amp":"bf16","checkpoint":true,"layers":4,"resume":null,)"
        R"("data.path":"a b/c.txt"})");
    const std::vector<ConfigEntry> entries = flattenConfigToml(toml, "test");
    QStringList flat;
    for (const auto &entry : entries)
        flat << QString::fromStdString(entry.key + "=" + entry.value);
    QCOMPARE(flat.join(QLatin1Char(' ')),
             QStringLiteral("amp=bf16 checkpoint=true data.path=a b/c.txt layers=4 train.betas=[0.9, 0.95] "
                            "train.lr=0.001"));
    for (const auto &[json, said] :
         std::vector<std::pair<std::string, std::string>>{{R"([1,2])", "not a JSON object"},
                                                          {R"({"a":1,"a.b":2})",
                                                           "'a' holds a value and is also the prefix of 'a.b'"},
                                                          {R"({"a":{"b":1},"a.b.c":2})",
                                                           "'a.b' holds a value and is also the prefix of 'a.b.c'"},
                                                          {R"({"opt":{"groups":[{"lr":1}]}})",
                                                           "'opt.groups' is an array holding object"}}) {
        try {
            recordedConfigToml(json);
            QFAIL(("accepted " + json).c_str());
        } catch (const ConfigError &e) {
            QVERIFY2(std::string(e.what()).find(said) != std::string::npos, e.what());
        }
    }
}

void tst_Config::recordedAndEngineConfigsCompareKeyByKey()
{
    // Two engine runs: the engine's fields, in their order.
    const std::string a = toToml(loadRunConfig("smoke", "", {})),
                      b = toToml(loadRunConfig("smoke", "", {"precision.mode=\"autocast-bf16\""}));
    bool modeDiffers = false;
    for (const auto &field : compareStoredConfigs({a, b}))
        modeDiffers = modeDiffers || (field.path == "precision.mode" && field.differs);
    QVERIFY(modeDiffers);
    // Recorded runs: every key either has, "-" where one lacks it.
    const std::string x = recordedConfigToml(R"({"amp":"bf16","lr":0.001})"),
                      y = recordedConfigToml(R"({"lr":0.001,"checkpoint":true})");
    QStringList rows;
    for (const auto &field : compareStoredConfigs({x, y}))
        rows << QString::fromStdString(field.path + ":" + field.values[0] + "|" + field.values[1]
                                       + (field.differs ? " differs" : ""));
    QCOMPARE(rows.join(QLatin1Char(' ')),
             QStringLiteral("amp:bf16|- differs checkpoint:-|true differs lr:0.001|0.001"));
}

// The parser and the validation under random hostile text: every input either loads into a config
// that validates, or is refused with a ConfigError that says why; never another exception.
void tst_Config::fuzzedConfigTextIsAcceptedOrRefusedWithConfigError()
{
    testing::ConfigFuzzer fuzzer(20261130);
    int accepted = 0, refused = 0;
    const auto attempt = [&](const std::function<void()> &load, const std::string &input) {
        try {
            load();
            ++accepted;
        } catch (const ConfigError &e) {
            if (std::string(e.what()).empty())
                QFAIL(("a refusal without a reason for: " + input).c_str());
            ++refused;
        } catch (const std::exception &e) {
            QFAIL(("not a ConfigError (" + std::string(e.what()) + ") for: " + input).c_str());
        }
    };
    for (int i = 0; i < 20000; ++i) {
        const std::vector<std::string> overrides = {fuzzer.assignment(), fuzzer.assignment()};
        attempt([&] { loadRunConfig("smoke", "", overrides); }, overrides[0] + " | " + overrides[1]);
        const std::string document = fuzzer.document();
        attempt(
            [&] {
                RunConfig config;
                applyTomlText(config, document, "fuzz");
                validate(config);
            },
            document);
    }
    qInfo("fuzzed config text: %d accepted, %d refused with a ConfigError, 0 other outcomes", accepted, refused);
    QVERIFY(accepted > 100 && refused > 100); // both paths were exercised
}

void tst_Config::replicatesDifferOnlyInTheirSeed()
{
    PlannedRun run;
    run.name = "bf16";
    run.preset = "smoke";
    run.overrides = {"precision.mode=\"autocast-bf16\"", "train.seed=5"};
    run.repeats = 3;
    const std::vector<PlannedRun> replicates = replicatesOf(run);
    QCOMPARE(replicates.size(), size_t(3));
    std::vector<RunConfig> configs;
    for (const auto &r : replicates)
        configs.push_back(r.config());
    QCOMPARE(configs[0].name, std::string("bf16 seed 5"));
    QCOMPARE(configs[2].train.seed, int64_t(7));
    for (const auto &config : configs)
        QCOMPARE(config.group, std::string("bf16"));
    QStringList differing;
    for (const auto &field : compareConfigs(configs))
        if (field.differs)
            differing << QString::fromStdString(field.path);
    QCOMPARE(differing, QStringList({"name", "train.seed"}));

    run.repeats = 1;
    run.seeds = {11, 3};
    const std::vector<PlannedRun> chosen = replicatesOf(run);
    QCOMPARE(chosen.size(), size_t(2));
    QCOMPARE(chosen[1].config().train.seed, int64_t(3));
    run.seeds.clear();
    QCOMPARE(replicatesOf(run).front().name, std::string("bf16")); // one seed: the run itself, ungrouped
}

void tst_Config::badRepeatsAndSeedsNameTheirField_data()
{
    QTest::addColumn<int>("repeats");
    QTest::addColumn<QList<int>>("seeds");
    QTest::addColumn<QString>("field");
    QTest::addColumn<QString>("expected");
    QTest::newRow("no repeats") << 0 << QList<int>{} << "repeats"
                                << "must be from 1 to 100";
    QTest::newRow("too many") << 101 << QList<int>{} << "repeats"
                              << "must be from 1 to 100";
    QTest::newRow("a seed twice") << 1 << QList<int>{1, 2, 1} << "seeds"
                                  << "1 appears twice";
    QTest::newRow("seeds against repeats") << 3 << QList<int>{1, 2} << "seeds"
                                           << "2 seeds, but repeats = 3";
    QTest::newRow("negative seed") << 1 << QList<int>{-1, 2} << "seeds"
                                   << "is negative";
}

void tst_Config::badRepeatsAndSeedsNameTheirField()
{
    QFETCH(int, repeats);
    QFETCH(QList<int>, seeds);
    QFETCH(QString, field);
    QFETCH(QString, expected);
    PlannedRun run;
    run.name = "fp32";
    run.preset = "smoke";
    run.repeats = repeats;
    for (int seed : seeds)
        run.seeds.push_back(seed);
    try {
        replicatesOf(run);
        QFAIL("the replicates were accepted");
    } catch (const ConfigError &e) {
        QCOMPARE(QString::fromStdString(e.field()), field);
        QVERIFY2(QString(e.what()).contains(expected), e.what());
    }
}

void tst_Config::aStudyPlanRepeatsItsRuns()
{
    QTemporaryDir dir;
    const QString plan = testing::writtenFile(dir, "plan.toml",
                                              "name = \"p\"\n[[run]]\nname = \"a\"\npreset = \"smoke\"\nrepeats = 3\n"
                                              "[[run]]\nname = \"b\"\npreset = \"smoke\"\nseeds = [4, 9]\n");
    const StudyPlan loaded = loadStudyPlan(plan.toStdString());
    QCOMPARE(loaded.runs[0].repeats, int64_t(3));
    QCOMPARE(loaded.runs[1].seeds, std::vector<int64_t>({4, 9}));
    for (const QByteArray &bad :
         {QByteArray("repeats = \"three\""), QByteArray("seeds = [1, \"x\"]"), QByteArray("repeats = 0")}) {
        const QString file = testing::writtenFile(dir, "bad.toml",
                                                  "name = \"p\"\n[[run]]\nname = \"a\"\npreset = \"smoke\"\n" + bad
                                                      + "\n");
        QVERIFY_EXCEPTION_THROWN(loadStudyPlan(file.toStdString()), ConfigError);
    }
}

// The workbench's queue handed to Slurm is a plan file: each run's config must survive it, the
// runs made from a stored run or a config file included, without that run or file.
void tst_Config::aWrittenPlanReadsBackToTheSameConfigs()
{
    QTemporaryDir dir;
    StudyPlan plan;
    plan.name = "queue \"quoted\"";
    plan.tolerance = 0.05;
    PlannedRun preset;
    preset.name = "fp32";
    preset.preset = "smoke";
    preset.overrides = {"data.corpus=generated", "train.steps=7", "group=\"a \\\"quoted\\\" group\""};
    preset.seeds = {4, 9};
    preset.repeats = 2;
    PlannedRun fromStored;
    fromStored.name = "bf16 from run 3";
    fromStored.from = "elsewhere.sqlite:3";
    fromStored.fromToml = toToml(loadRunConfig("smoke", "", {"train.learning_rate=0.0007", "model.layers=3"}));
    fromStored.overrides = {"precision.mode=autocast-bf16"};
    fromStored.baseline = "fp32";
    PlannedRun fromFile;
    fromFile.name = "from a file";
    fromFile.preset = "smoke";
    fromFile.configFile = testing::writtenFile(dir, "run.toml", "[train]\nmicrobatch = 2\naccumulation = 2\n")
                              .toStdString();
    plan.runs = {preset, fromStored, fromFile};
    plan.baseline = "fp32";

    const QString file = testing::writtenFile(dir, "plan.toml", QByteArray::fromStdString(studyPlanToml(plan)));
    QFile::remove(QString::fromStdString(fromFile.configFile)); // the plan stands alone
    const StudyPlan loaded = loadStudyPlan(file.toStdString());
    QCOMPARE(loaded.name, plan.name);
    QCOMPARE(loaded.baseline, plan.baseline);
    QCOMPARE(loaded.tolerance, plan.tolerance);
    QCOMPARE(loaded.runs.size(), plan.runs.size());
    fromFile.configFile = testing::writtenFile(dir, "run.toml", "[train]\nmicrobatch = 2\naccumulation = 2\n")
                              .toStdString();
    plan.runs[2] = fromFile;
    for (size_t i = 0; i < plan.runs.size(); ++i) {
        QCOMPARE(loaded.runs[i].name, plan.runs[i].name);
        QCOMPARE(loaded.runs[i].baseline, plan.runs[i].baseline);
        QCOMPARE(loaded.runs[i].repeats, plan.runs[i].repeats);
        QCOMPARE(loaded.runs[i].seeds, plan.runs[i].seeds);
        QCOMPARE(QString::fromStdString(toToml(loaded.runs[i].config())),
                 QString::fromStdString(toToml(plan.runs[i].config())));
    }
    QCOMPARE(loaded.runs[0].preset, std::string("smoke")); // a preset's run keeps its own words
    QCOMPARE(loaded.runs[0].overrides, preset.overrides);
}

// The launcher, the workbench's queue and tune start runs with these arguments alone.
void tst_Config::aPlannedRunIsOneEngineCommandLine()
{
    PlannedRun run;
    run.name = "bf16 \"quoted\"";
    run.preset = "smoke";
    run.configFile = "mine.toml";
    run.overrides = {"train.steps=6", "precision.mode=\"autocast-bf16\""};
    const std::vector<std::string> expected = {"run",
                                               "--db",
                                               "s.sqlite",
                                               "--preset",
                                               "smoke",
                                               "--config",
                                               "mine.toml",
                                               "--set",
                                               "train.steps=6",
                                               "--set",
                                               "precision.mode=\"autocast-bf16\"",
                                               "--set",
                                               fieldAssignment(*findConfigField("name"), run.name)};
    QCOMPARE(runArguments(run, "s.sqlite"), expected);
    // The name reads back as it was, quotes and all.
    QCOMPARE(loadRunConfig("smoke", "", {expected.back()}).name, run.name);

    run.from = "other.sqlite:fp32"; // a stored run's config replaces the preset
    run.configFile.clear();
    const std::vector<std::string> derived = runArguments(run, "s.sqlite");
    QCOMPARE(std::vector<std::string>(derived.begin(), derived.begin() + 5),
             std::vector<std::string>({"run", "--db", "s.sqlite", "--from", "other.sqlite:fp32"}));
    QVERIFY(std::find(derived.begin(), derived.end(), "--preset") == derived.end());
}

// docs/configs.md shows every field as configReferenceMarkdown() writes it.
void tst_Config::documentedFieldsAreGeneratedFromTheTable()
{
    testing::expectGeneratedSection(optlog::testing::sourcePath(QStringLiteral("docs/configs.md")),
                                    QStringLiteral("configReferenceMarkdown()"),
                                    QString::fromStdString(configReferenceMarkdown()));
}

void tst_Config::badConfigIsRefusedWithItsReason_data()
{
    QTest::addColumn<QString>("toml");
    QTest::addColumn<QString>("expected");
    QTest::addColumn<QString>("field"); // the field the error names as data; empty: no one field
    QTest::newRow("unknown key") << "[model]\nwidht = 64\n"
                                 << "unknown key 'model.widht'; known keys in [model]"
                                 << "";
    QTest::newRow("unknown section") << "[modle]\nwidth = 64\n"
                                     << "unknown key 'modle'"
                                     << "";
    QTest::newRow("section not a table") << "model = 3\n"
                                         << "'model' must be a table"
                                         << "";
    QTest::newRow("string for integer") << "[train]\nsteps = \"ten\"\n"
                                        << "train.steps = \"ten\": expected an integer"
                                        << "train.steps";
    QTest::newRow("float for integer") << "[train]\nmicrobatch = 2.5\n"
                                       << "train.microbatch = 2.5: expected an integer"
                                       << "train.microbatch";
    QTest::newRow("zero microbatch") << "[train]\nmicrobatch = 0\n"
                                     << "train.microbatch = 0: must be from 1 to"
                                     << "train.microbatch";
    QTest::newRow("negative lr") << "[train]\nlearning_rate = -1.0\n"
                                 << "train.learning_rate = -1.0: must be from 1e-12 to 10"
                                 << "train.learning_rate";
    QTest::newRow("dropout one") << "[model]\ndropout = 1.0\n"
                                 << "model.dropout = 1.0: must be from 0 to below 1"
                                 << "model.dropout";
    QTest::newRow("bool as string") << "[model]\ntied_head = \"yes\"\n"
                                    << "model.tied_head = \"yes\": expected true or false"
                                    << "model.tied_head";
    QTest::newRow("unknown precision") << "[precision]\nmode = \"fp8\"\n"
                                       << "precision.mode = \"fp8\": must be one of fp32"
                                       << "precision.mode";
    QTest::newRow("fp16 on the cpu") << "[precision]\nmode = \"master-fp16\"\n"
                                     << "needs a CUDA device"
                                     << "precision.mode";
    QTest::newRow("unknown corpus") << "[data]\ncorpus = \"wiki\"\n"
                                    << "data.corpus = \"wiki\": must be one of fortunes"
                                    << "data.corpus";
    QTest::newRow("torchscript without a path") << "[model]\nsource = \"torchscript\"\n"
                                                << "model.path is empty: model.source = \"torchscript\" needs the file"
                                                << "model.path";
    QTest::newRow("a path for the built-in model") << "[model]\npath = \"mine.pt\"\n"
                                                   << "with model.source = \"builtin\": the path names a TorchScript"
                                                   << "model.path";
    QTest::newRow("chunked attention in a module")
        << "[model]\nsource = \"torchscript\"\npath = \"mine.pt\"\n[memory]\nattention = \"chunked\"\n"
        << "a TorchScript module's attention is its own code"
        << "memory.attention";
    QTest::newRow("oneDNN products in a module")
        << "[model]\nsource = \"torchscript\"\npath = \"mine.pt\"\n[runtime]\ngemm = \"onednn\"\n"
        << "a TorchScript module's products are its own LibTorch calls"
        << "runtime.gemm";
    QTest::newRow("bad size") << "[memory]\nbudget = \"lots\"\n"
                              << "memory.budget = \"lots\": expected a positive size"
                              << "memory.budget";
    QTest::newRow("heads do not divide") << "[model]\nwidth = 100\nheads = 3\n"
                                         << "model.width = 100: must be divisible by model.heads = 3"
                                         << "model.width";
    QTest::newRow("min lr above lr") << "[train]\nlearning_rate = 1e-3\nmin_learning_rate = 1e-2\n"
                                     << "train.min_learning_rate = 0.01: must not exceed train.learning_rate"
                                     << "train.min_learning_rate";
    QTest::newRow("warm-up covers run") << "[train]\nsteps = 3\n[memory]\nwarmup_steps = 3\n"
                                        << "memory.warmup_steps = 3: must be below train.steps = 3"
                                        << "memory.warmup_steps";
    QTest::newRow("text corpus without path") << "[data]\ncorpus = \"text\"\n"
                                              << "data.path is empty"
                                              << "data.path";
    QTest::newRow("small vocabulary") << "[model]\nvocab_size = 100\n"
                                      << "byte-level text needs at least 256"
                                      << "model.vocab_size";
    QTest::newRow("not toml") << "[model\nwidth = 1\n"
                              << "not valid TOML at line 1"
                              << "";
    QTest::newRow("line break in a name") << "name = \"a\\nb\"\n"
                                          << "name = \"a\\nb\": holds a line break (U+000A) at byte 1"
                                          << "name";
    QTest::newRow("right-to-left override in a name") << "name = \"run\\u202Egnp.exe\"\n"
                                                      << "holds a bidirectional text control (U+202E) at byte 3"
                                                      << "name";
    QTest::newRow("escape sequence in a group") << "group = \"\\u001b[31mred\"\n"
                                                << "group = \"\\u001B[31mred\": holds a control character (U+001B)"
                                                << "group";
    QTest::newRow("name too long") << "name = \"" + QString(201, 'x') + "\"\n"
                                   << "name is 201 bytes long: at most 200"
                                   << "name";
}

void tst_Config::badConfigIsRefusedWithItsReason()
{
    QFETCH(QString, toml);
    QFETCH(QString, expected);
    QFETCH(QString, field);
    RunConfig config;
    try {
        applyTomlText(config, toml.toStdString(), "test");
        validate(config);
        QFAIL("the config was accepted");
    } catch (const ConfigError &e) {
        QVERIFY2(QString(e.what()).contains(expected), e.what());
        QCOMPARE(QString::fromStdString(e.field()), field);
    }
}

// Found by fuzz_config: the bytes F5 to FF never start UTF-8, but were read as the start of a
// three-byte character, so such a name was accepted, and toToml then wrote it as other characters
// (U+0080 among them) that the config read back refused.
void tst_Config::aNameWithALeadByteUtf8NeverHasIsRefused()
{
    for (const char *name : {"run\xF6\xBF\x80", "run\xF5\x80\x80", "run\xFF\xBF\xBF"}) {
        RunConfig config;
        applyOverride(config, std::string("name=") + name);
        const QString expected = QString::asprintf("holds a byte that is not UTF-8 (0x%02X) at byte 3",
                                                   unsigned(uint8_t(name[3])));
        try {
            validate(config);
            QFAIL(qPrintable("accepted a name that " + expected));
        } catch (const ConfigError &e) {
            QVERIFY2(QString(e.what()).contains(expected), e.what());
        }
    }
}

void tst_Config::badOverrideIsRefused_data()
{
    QTest::addColumn<QString>("assignment");
    QTest::addColumn<QString>("expected");
    QTest::newRow("no equals") << "train.steps"
                               << "expected key=value";
    QTest::newRow("unknown key") << "train.stpes=3"
                                 << "--set train.stpes: unknown key";
    QTest::newRow("wrong type") << "train.steps=many"
                                << "train.steps = \"many\": expected an integer";
    QTest::newRow("out of range") << "model.layers=0"
                                  << "model.layers = 0: must be from 1";
}

void tst_Config::badOverrideIsRefused()
{
    QFETCH(QString, assignment);
    QFETCH(QString, expected);
    RunConfig config;
    try {
        applyOverride(config, assignment.toStdString());
        QFAIL("the override was accepted");
    } catch (const ConfigError &e) {
        QVERIFY2(QString(e.what()).contains(expected), e.what());
    }
}

void tst_Config::layersApplyInOrder()
{
    QTemporaryDir dir;
    const QString file = testing::writtenFile(dir, "run.toml", "[train]\nsteps = 17\nmicrobatch = 2\n");
    // preset, then file, then overrides
    RunConfig c = loadRunConfig("smoke", file.toStdString(), {"train.microbatch=3"});
    QCOMPARE(c.model.width, int64_t(32));     // from the preset
    QCOMPARE(c.train.steps, int64_t(17));     // the file over the preset
    QCOMPARE(c.train.microbatch, int64_t(3)); // the override over the file
    QCOMPARE(c.name, std::string("smoke"));
}

void tst_Config::overridesKeepTheirType()
{
    RunConfig c;
    applyOverride(c, "train.learning_rate=2e-3");
    applyOverride(c, "model.tied_head=false");
    applyOverride(c, "data.corpus=generated"); // a bare word reads as a string
    applyOverride(c, "train.learning_rate=1"); // an integer is accepted for a real
    QCOMPARE(c.train.learningRate, 1.0);
    QCOMPARE(c.model.tiedHead, false);
    QCOMPARE(c.data.corpus, Corpus::Generated);
}

void tst_Config::serialisedConfigReadsBackIdentical()
{
    RunConfig c = loadRunConfig("default", "", {"train.steps=7", "model.dropout=0.25", "name=\"x y\""});
    RunConfig back;
    applyTomlText(back, toToml(c), "stored");
    QCOMPARE(toToml(back), toToml(c));
    QCOMPARE(back.train.steps, int64_t(7));
    QCOMPARE(back.model.dropout, 0.25);
    QCOMPARE(back.name, std::string("x y"));
}

void tst_Config::presetsAreValidAndSized_data()
{
    QTest::addColumn<QString>("preset");
    QTest::addColumn<double>("minimumMillions");
    QTest::addColumn<double>("maximumMillions");
    QTest::newRow("smoke") << "smoke" << 0.0 << 0.1;
    QTest::newRow("default") << "default" << 3.0 << 3.6;
    QTest::newRow("seed-15m") << "seed-15m" << 14.0 << 16.0;
    QTest::newRow("gpt2-small") << "gpt2-small" << 85.0 << 87.0; // GPT-2 small's 124 M less its 50k-token embedding
}

void tst_Config::presetsAreValidAndSized()
{
    QFETCH(QString, preset);
    QFETCH(double, minimumMillions);
    QFETCH(double, maximumMillions);
    const RunConfig c = loadRunConfig(preset.toStdString(), "", {});
    const double millions = double(parameterCount(c.model)) / 1e6;
    QVERIFY2(millions >= minimumMillions && millions <= maximumMillions, qPrintable(QString::number(millions)));
}

// The study where a GPU decides: gpt2-small on CUDA, one run per technique, flash attention
// against the run it differs from by its attention only.
void tst_Config::theGpuStudyComparesEveryTechniqueOnTheGpu()
{
    const StudyPlan plan = loadStudyPlan("gpt2-small-gpu");
    QCOMPARE(plan.baseline, std::string("fp32"));
    std::map<std::string, RunConfig> runs;
    for (const auto &run : plan.runs) {
        runs[run.name] = run.config();
        QCOMPARE(runs[run.name].runtime.device, std::string("cuda"));
        QCOMPARE(runs[run.name].model.width, int64_t(768));
        QCOMPARE(runs[run.name].model.contextLength, int64_t(1024));
    }
    QVERIFY(!runs.at("fp32").precision.tf32);
    QVERIFY(runs.at("fp32-tf32").precision.tf32);
    for (const char *mode : {"autocast-bf16", "autocast-fp16", "pure-bf16"})
        QCOMPARE(runs.at(mode).precision.mode, std::string(mode));
    QCOMPARE(runs.at("microbatch6-accum2").tokensPerStep(), runs.at("fp32").tokensPerStep());
    QCOMPARE(runs.at("checkpoint-every-block").memory.checkpointEvery, int64_t(1));
    const RunConfig &flash = runs.at("autocast-bf16-flash");
    QCOMPARE(flash.memory.attention, Attention::Auto);
    QCOMPARE(resolvedAttention(flash, true), Attention::Sdpa);
    for (const auto &run : plan.runs)
        if (run.name == "autocast-bf16-flash")
            QCOMPARE(run.baseline, std::string("autocast-bf16"));
}

// TF32 is off by default, as in PyTorch, and refused where there are no tensor cores.
void tst_Config::tf32IsAGpuSetting()
{
    QVERIFY(!RunConfig().precision.tf32);
    QVERIFY(loadRunConfig("default", "", {"runtime.device=cuda", "precision.tf32=true"}).precision.tf32);
    try {
        loadRunConfig("default", "", {"precision.tf32=true"});
        QFAIL("precision.tf32 = true was accepted with runtime.device = \"cpu\"");
    } catch (const ConfigError &e) {
        QCOMPARE(e.field(), std::string("precision.tf32"));
        QVERIFY2(std::string(e.what()).find("runtime.device = \"cuda\"") != std::string::npos, e.what());
    }
}

void tst_Config::autoAttentionIsSdpaOnCudaWithLibTorch2()
{
    RunConfig config = loadRunConfig("default", "", {"memory.attention=auto"});
    QCOMPARE(resolvedAttention(config, true), Attention::Naive); // the CPU's products are optlog's own
    config.runtime.device = "cuda";
    QCOMPARE(resolvedAttention(config, true), Attention::Sdpa);
    QCOMPARE(resolvedAttention(config, false), Attention::Naive); // LibTorch 1.x has no SDPA
    config.memory.attention = Attention::Chunked;
    QCOMPARE(resolvedAttention(config, true), Attention::Chunked); // a setting other than auto is itself
}

void tst_Config::shippedStudiesAreValid()
{
    for (const auto &name : studyNames()) {
        const StudyPlan plan = loadStudyPlan(name);
        QVERIFY(!plan.runs.empty());
        bool hasBaseline = false;
        for (const auto &run : plan.runs)
            hasBaseline = hasBaseline || run.name == plan.baseline;
        QVERIFY2(hasBaseline, name.c_str());
    }
}

QTEST_APPLESS_MAIN(tst_Config)
#include "tst_config.moc"
