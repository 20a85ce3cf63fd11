// SPDX-License-Identifier: MIT
// The experiment designer: the CLI's own messages inline, sweeps, and what it queues.
#include "core/config/config.h"
#include "core/config/configfields.h"
#include "core/contract/format.h"
#include "core/memorymodel/memorymodel.h"
#include "tests/common/testpaths.h"
#include "ui/designerview.h"

#include <QListWidget>
#include <QPushButton>
#include <QSignalSpy>
#include <QtTest>

using namespace optlog;

namespace {

// What `optlog run --preset default --set <assignment>` says about the same value.
QString cliMessage(const QStringList &assignments)
{
    std::vector<std::string> overrides;
    for (const QString &a : assignments)
        overrides.push_back(a.toStdString());
    try {
        loadRunConfig("default", "", overrides);
    } catch (const ConfigError &e) {
        return QString::fromUtf8(e.what());
    }
    return {};
}

// A folder of its own for optlog's caches while it lives, so that the probes a test writes or reads
// are its own; the engine the designer starts inherits it.
class OwnCache
{
public:
    OwnCache()
        : m_before(qgetenv("XDG_CACHE_HOME"))
    {
        qputenv("XDG_CACHE_HOME", m_dir.path().toUtf8());
    }
    ~OwnCache() { qputenv("XDG_CACHE_HOME", m_before); }
    QString path() const { return m_dir.path(); }

private:
    QTemporaryDir m_dir;
    QByteArray m_before;
};

// The designer set to train the TorchScript module at `path`, at the tiny size of the test modules
// (tests/engine/torchscript_modules.py: vocabulary 256, contexts up to 16).
void designModule(DesignerView &designer, const QString &path, const QString &mode)
{
    designer.setPreset(QStringLiteral("smoke"));
    QVERIFY(designer.setFieldText(QStringLiteral("model.source"), QStringLiteral("torchscript")));
    QVERIFY(designer.setFieldText(QStringLiteral("model.path"), path));
    QVERIFY(designer.setFieldText(QStringLiteral("model.context_length"), QStringLiteral("16")));
    QVERIFY(designer.setFieldText(QStringLiteral("train.microbatch"), QStringLiteral("4")));
    QVERIFY(designer.setFieldText(QStringLiteral("data.corpus"), QStringLiteral("generated")));
    QVERIFY(designer.setFieldText(QStringLiteral("precision.mode"), mode));
    designer.revalidate();
    QVERIFY2(designer.errors().isEmpty(), qPrintable(designer.errors()));
}

// A file where a module would be: the designer reads its bytes (for their SHA-256), never its code.
bool writeStandInModule(const QString &path)
{
    QFile file(path);
    return file.open(QIODevice::WriteOnly) && file.write("bytes standing in for a module") > 0;
}

QPushButton *probeButton(DesignerView &designer)
{
    for (auto *button : designer.findChildren<QPushButton *>())
        if (button->text() == QStringLiteral("Probe the module"))
            return button;
    return nullptr;
}

} // namespace

class tst_Designer : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void presetFillsEveryField()
    {
        DesignerView designer;
        designer.setPreset(QStringLiteral("smoke"));
        QCOMPARE(designer.fieldText(QStringLiteral("model.width")), QStringLiteral("32"));
        QCOMPARE(designer.fieldText(QStringLiteral("precision.mode")), QStringLiteral("fp32"));
        QCOMPARE(designer.fieldText(QStringLiteral("model.tied_head")), QStringLiteral("true"));
        QVERIFY(designer.errors().isEmpty());
        QCOMPARE(designer.plannedRuns().size(), 1);
        QVERIFY(designer.plannedRuns().front().overrides.empty()); // nothing differs from the preset
    }

    void invalidFieldIsRefusedWithTheCliMessage_data()
    {
        QTest::addColumn<QString>("path");
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("markedAt"); // the field the message belongs to
        QTest::addColumn<QStringList>("cli");  // the same mistake on the command line
        QTest::newRow("zero steps") << "train.steps"
                                    << "0"
                                    << "train.steps" << QStringList{"train.steps=0"};
        QTest::newRow("not a number") << "train.learning_rate"
                                      << "fast"
                                      << "train.learning_rate" << QStringList{"train.learning_rate=\"fast\""};
        QTest::newRow("fractional microbatch") << "train.microbatch"
                                               << "2.5"
                                               << "train.microbatch" << QStringList{"train.microbatch=2.5"};
        QTest::newRow("dropout of one") << "model.dropout"
                                        << "1"
                                        << "model.dropout" << QStringList{"model.dropout=1"};
        QTest::newRow("heads do not divide width") << "model.heads"
                                                   << "3"
                                                   << "model.width" << QStringList{"model.heads=3"};
        QTest::newRow("bad budget") << "memory.budget"
                                    << "lots"
                                    << "memory.budget" << QStringList{"memory.budget=\"lots\""};
        QTest::newRow("fp16 on the cpu") << "precision.mode"
                                         << "master-fp16"
                                         << "precision.mode" << QStringList{"precision.mode=\"master-fp16\""};
    }

    void invalidFieldIsRefusedWithTheCliMessage()
    {
        QFETCH(QString, path);
        QFETCH(QString, text);
        QFETCH(QString, markedAt);
        QFETCH(QStringList, cli);
        DesignerView designer;
        QSignalSpy requested(&designer, &DesignerView::runsRequested);
        QVERIFY(designer.setFieldText(path, text));
        designer.revalidate();
        const QString expected = cliMessage(cli);
        QVERIFY2(!expected.isEmpty(), "the CLI refuses it too");
        QCOMPARE(designer.fieldError(markedAt), expected);
        QCOMPARE(designer.errors(), expected);
        QVERIFY(designer.plannedRuns().isEmpty()); // nothing can be queued
    }

    void everyBadFieldIsMarkedAtOnce()
    {
        DesignerView designer;
        designer.setFieldText(QStringLiteral("train.steps"), QStringLiteral("0"));
        designer.setFieldText(QStringLiteral("train.microbatch"), QStringLiteral("-1"));
        designer.revalidate();
        QVERIFY(!designer.fieldError(QStringLiteral("train.steps")).isEmpty());
        QVERIFY(!designer.fieldError(QStringLiteral("train.microbatch")).isEmpty());
        QCOMPARE(designer.errors().count(QLatin1Char('\n')), 1);
        // Fixing both clears both.
        designer.setFieldText(QStringLiteral("train.steps"), QStringLiteral("100"));
        designer.setFieldText(QStringLiteral("train.microbatch"), QStringLiteral("4"));
        designer.revalidate();
        QVERIFY(designer.errors().isEmpty());
        QVERIFY(designer.fieldError(QStringLiteral("train.steps")).isEmpty());
    }

    void changedFieldsBecomeOverrides()
    {
        DesignerView designer;
        designer.setRunName(QStringLiteral("small batch"));
        designer.setFieldText(QStringLiteral("train.microbatch"), QStringLiteral("4"));
        designer.setFieldText(QStringLiteral("train.accumulation"), QStringLiteral("2"));
        designer.setFieldText(QStringLiteral("precision.mode"), QStringLiteral("autocast-bf16"));
        designer.revalidate();
        const QList<PlannedRun> runs = designer.plannedRuns();
        QCOMPARE(runs.size(), 1);
        QCOMPARE(runs[0].name, std::string("small batch"));
        QCOMPARE(runs[0].preset, std::string("default"));
        const std::vector<std::string> expected = {"train.microbatch=4", "train.accumulation=2",
                                                   "precision.mode=\"autocast-bf16\""};
        QCOMPARE(runs[0].overrides, expected);
        const RunConfig config = runs[0].config();
        QCOMPARE(config.tokensPerStep(), int64_t(4 * 2 * 128));
        QCOMPARE(config.precision.mode, std::string("autocast-bf16"));
    }

    // The ranks are fields like any other; the prediction is per rank and the batch says so.
    void ranksAndZeroAreFieldsAndTheBatchSaysSo()
    {
        DesignerView designer;
        designer.setRunName(QStringLiteral("two ranks"));
        QVERIFY(designer.setFieldText(QStringLiteral("distributed.ranks"), QStringLiteral("2")));
        QVERIFY(designer.setFieldText(QStringLiteral("distributed.zero_stage"), QStringLiteral("1")));
        designer.revalidate();
        QVERIFY(designer.errors().isEmpty());
        const QList<PlannedRun> runs = designer.plannedRuns();
        QCOMPARE(runs.size(), 1);
        const std::vector<std::string> expected = {"distributed.ranks=2", "distributed.zero_stage=1"};
        QCOMPARE(runs[0].overrides, expected);
        QCOMPARE(runs[0].config().tokensPerStep(), int64_t(2 * 8 * 128));
        QVERIFY2(designer.predictionSummary().contains(
                     QStringLiteral("2 ranks x microbatch 8 x accumulation 1 = 16 sequences per step")),
                 qPrintable(designer.predictionSummary()));
        QVERIFY(designer.predictionSummary().contains(QStringLiteral("per rank")));
        // Where in the step the peak falls, as the run's memory timeline will name it.
        const std::string phase = estimateMemory(runs[0].config()).peakPhase.name();
        QVERIFY2(designer.predictionSummary().contains(QString::fromStdString(", at " + phase)),
                 qPrintable(designer.predictionSummary()));
        // ZeRO without ranks is refused with the CLI's message.
        QVERIFY(designer.setFieldText(QStringLiteral("distributed.ranks"), QStringLiteral("1")));
        designer.revalidate();
        QVERIFY(designer.errors().contains(QStringLiteral("shards over ranks")));
    }

    void sweepExpandsIntoEveryCombination()
    {
        DesignerView designer;
        designer.setPreset(QStringLiteral("smoke"));
        designer.setRunName(QStringLiteral("grid"));
        designer.setSweepAxis(0, QStringLiteral("train.microbatch"), QStringLiteral("2, 4,8"));
        designer.setSweepAxis(1, QStringLiteral("precision.mode"), QStringLiteral("fp32, autocast-bf16"));
        designer.revalidate();
        const QList<PlannedRun> runs = designer.plannedRuns();
        QCOMPARE(runs.size(), 6);
        QStringList names;
        for (const auto &run : runs)
            names << QString::fromStdString(run.name);
        QCOMPARE(names, (QStringList{"grid microbatch=2 mode=fp32", "grid microbatch=2 mode=autocast-bf16",
                                     "grid microbatch=4 mode=fp32", "grid microbatch=4 mode=autocast-bf16",
                                     "grid microbatch=8 mode=fp32", "grid microbatch=8 mode=autocast-bf16"}));
        const RunConfig last = runs.back().config();
        QCOMPARE(last.train.microbatch, int64_t(8));
        QCOMPARE(last.precision.mode, std::string("autocast-bf16"));
        QCOMPARE(last.model.width, int64_t(32)); // the preset underneath is kept

        QSignalSpy requested(&designer, &DesignerView::runsRequested);
        designer.show();
        QVERIFY(QTest::qWaitForWindowActive(&designer));
        QTest::keyClick(designer.windowHandle(), Qt::Key_Return, Qt::ControlModifier); // the add button's shortcut
        QCOMPARE(requested.count(), 1);
        QCOMPARE(requested.first().first().value<QList<PlannedRun>>().size(), 6);
    }

    void aBadSweepValueNamesItsRun()
    {
        DesignerView designer;
        designer.setRunName(QStringLiteral("grid"));
        designer.setSweepAxis(0, QStringLiteral("train.microbatch"), QStringLiteral("4, 0"));
        designer.revalidate();
        QVERIFY(designer.plannedRuns().isEmpty());
        QVERIFY2(designer.errors().startsWith(
                     QStringLiteral("sweep run 'grid microbatch=0': config: train.microbatch = 0")),
                 qPrintable(designer.errors()));
    }

    void seedsRepeatEachRunAsOneGroup()
    {
        DesignerView designer;
        designer.setRunName(QStringLiteral("bf16"));
        designer.setFieldText(QStringLiteral("train.seed"), QStringLiteral("7"));
        designer.setSweepAxis(0, QStringLiteral("train.microbatch"), QStringLiteral("4, 8"));
        designer.setRepeats(3);
        designer.revalidate();
        const QList<PlannedRun> runs = designer.plannedRuns();
        QCOMPARE(runs.size(), 6);
        QCOMPARE(QString::fromStdString(runs[0].name), QStringLiteral("bf16 microbatch=4 seed 7"));
        QCOMPARE(QString::fromStdString(runs[2].name), QStringLiteral("bf16 microbatch=4 seed 9"));
        const RunConfig third = runs[2].config();
        QCOMPARE(third.train.seed, int64_t(9));
        QCOMPARE(third.group, std::string("bf16 microbatch=4"));
        QCOMPARE(third.train.microbatch, int64_t(4));
        QCOMPARE(runs[3].config().group, std::string("bf16 microbatch=8"));
    }

    // A sweep point a TorchScript module cannot take by the config's rules is left out, as `optlog
    // study` leaves it, and the runs list says so, with the reason as its tooltip (planRuns).
    void aSweepPointTheModuleCannotTakeIsSkipped()
    {
        const OwnCache cache;
        const QString module = cache.path() + QStringLiteral("/mine.pt");
        QVERIFY(writeStandInModule(module));
        DesignerView designer;
        designModule(designer, module, QStringLiteral("fp32"));
        designer.setSweepAxis(0, QStringLiteral("memory.attention"), QStringLiteral("naive, chunked"));
        designer.revalidate();
        QVERIFY2(designer.errors().isEmpty(), qPrintable(designer.errors()));
        const QList<PlannedRun> runs = designer.plannedRuns();
        QCOMPARE(runs.size(), 1);
        QVERIFY(runs[0].config().memory.attention == Attention::Naive);
        const auto *list = designer.findChild<QListWidget *>(QStringLiteral("sweepPreview"));
        QVERIFY(list);
        QCOMPARE(list->count(), 2);
        const QListWidgetItem *skipped = list->item(1);
        QVERIFY2(skipped->text().contains(QStringLiteral("chunked"))
                     && skipped->text().contains(QStringLiteral("skipped, the model cannot take it")),
                 qPrintable(skipped->text()));
        QVERIFY2(skipped->toolTip().contains(QStringLiteral("memory.attention = \"chunked\" with model.source")),
                 qPrintable(skipped->toolTip()));
        QCOMPARE(skipped->flags(), Qt::NoItemFlags);
    }

    // A TorchScript module is predicted from the probes the engine cached for its file's SHA-256
    // (here a cache written by hand, the digest taken by sha256sum): the designer links no LibTorch.
    void moduleIsPredictedFromItsCachedProbes()
    {
        const OwnCache cache;
        const QString module = cache.path() + QStringLiteral("/mine.pt");
        QVERIFY(writeStandInModule(module));
        QProcess sha256sum;
        sha256sum.start(QStringLiteral("sha256sum"), {module});
        QVERIFY(sha256sum.waitForFinished(10000) && sha256sum.exitCode() == 0);
        const QString sha = QString::fromLatin1(sha256sum.readAllStandardOutput()).section(u' ', 0, 0);
        QCOMPARE(sha.size(), 64);
        // A probe as the cache names its fields; the fit's terms below, not the probes, predict here.
        const auto probe = [](int microbatch, int context) {
            return QStringLiteral(R"({"microbatch": %1, "context": %2, "saved_activations": 0, "temporaries": 0,
                "peak": 0, "pass_temporaries": 0, "step_temporaries": 0})")
                .arg(microbatch)
                .arg(context);
        };
        // Saved activations 100·B·T bytes, the passes' temporaries 5000 + 10·B·T² bytes.
        const QByteArray probes = QStringLiteral(R"({"%1": {"parameter_sizes": [1000, 24], "settings": {
            "fp32, checkpoint_every 0, cpu": {"probes": [%2, %3], "replicates": [], "held_out": %4,
                "saved_activations": [0, 0, 0, 100, 0], "pass_temporaries": [5000, 0, 0, 0, 10],
                "step_temporaries": 0}}}})")
                                      .arg(sha, probe(1, 4), probe(2, 16), probe(4, 16))
                                      .toUtf8();
        QVERIFY(QDir().mkpath(cache.path() + QStringLiteral("/optlog")));
        QFile cached(cache.path() + QStringLiteral("/optlog/torchscript-probes.json"));
        QVERIFY(cached.open(QIODevice::WriteOnly) && cached.write(probes) == probes.size());
        cached.close();

        DesignerView designer;
        designModule(designer, module, QStringLiteral("fp32"));
        const int64_t B = 4, T = 16, parameters = 1024;
        const int64_t saved = 100 * B * T, temporaries = 5000 + 10 * B * T * T;
        // FP32 AdamW: the weights, their gradients and two moments, 4 bytes each.
        const int64_t peak = 4 * 4 * parameters + saved + temporaries;
        const auto bytes = [](int64_t n) { return QString::fromStdString(formatBytes(n)); };
        QVERIFY2(designer.predictedRoles().contains(QStringLiteral("parameters: ") + bytes(4 * parameters)),
                 qPrintable(designer.predictedRoles().join(u'\n')));
        QVERIFY(designer.predictedRoles().contains(QStringLiteral("saved activations: ") + bytes(saved)));
        QVERIFY(designer.predictedRoles().contains(QStringLiteral("temporaries: ") + bytes(temporaries)));
        QVERIFY2(designer.predictionSummary().contains(bytes(peak)), qPrintable(designer.predictionSummary()));
        QVERIFY(designer.predictionSummary().contains(QStringLiteral("probes of the TorchScript module (sha256 ")
                                                      + sha.left(16)));
        QVERIFY(probeButton(designer)->isHidden());

        // Another precision mode was never probed: no numbers, and says so. Without an engine
        // binary there is nothing to probe with.
        QVERIFY(designer.setFieldText(QStringLiteral("precision.mode"), QStringLiteral("autocast-bf16")));
        designer.revalidate();
        QVERIFY(designer.predictedRoles().isEmpty());
        QVERIFY2(designer.predictionSummary().contains(
                     QStringLiteral("not probed yet in this setting (autocast-bf16, checkpoint_every 0, cpu)")),
                 qPrintable(designer.predictionSummary()));
        QVERIFY(probeButton(designer)->isHidden());

        // A changed file is another module: its old probes are not taken for it.
        QVERIFY(designer.setFieldText(QStringLiteral("precision.mode"), QStringLiteral("fp32")));
        QFile file(module);
        QVERIFY(file.open(QIODevice::Append) && file.write("!") == 1);
        file.close();
        designer.revalidate();
        QVERIFY(designer.predictedRoles().isEmpty());
        QVERIFY(designer.predictionSummary().contains(QStringLiteral("not probed yet")));

        QVERIFY(designer.setFieldText(QStringLiteral("model.path"), cache.path() + QStringLiteral("/missing.pt")));
        designer.revalidate();
        QVERIFY2(designer.predictionSummary().contains(QStringLiteral("is not a file")),
                 qPrintable(designer.predictionSummary()));

        // Back to the built-in GPT: its shape is editable again.
        QVERIFY(designer.setFieldText(QStringLiteral("model.source"), QStringLiteral("builtin")));
        QVERIFY(designer.setFieldText(QStringLiteral("model.path"), QString()));
        designer.revalidate();
        QVERIFY(designer.findChild<QWidget *>(QStringLiteral("model.width"))->isEnabled());
        QVERIFY2(designer.errors().isEmpty(), qPrintable(designer.errors()));
    }

    // Where a module has no probes, the designer has the engine probe it (a real engine process on
    // a module written by Debian's python3-torch), then shows what `optlog estimate` prints; a
    // module that breaks the contract gets the engine's reason.
    void moduleIsProbedByTheEngine()
    {
        const OwnCache cache;
        QProcess python;
        python.setProcessChannelMode(QProcess::ForwardedChannels);
        python.start(QStringLiteral("/usr/bin/python3"),
                     {optlog::testing::sourcePath(QStringLiteral("tests/engine/torchscript_modules.py")), cache.path()});
        QVERIFY2(python.waitForFinished(120000) && python.exitCode() == 0,
                 "torchscript_modules.py failed: it needs Debian's python3-torch (packaging/setup.sh installs it)");

        DesignerView designer{optlog::testing::optlogBinary()};
        QSignalSpy probed(&designer, &DesignerView::moduleProbed);
        designModule(designer, cache.path() + QStringLiteral("/rotary.pt"), QStringLiteral("autocast-bf16"));
        // The built-in GPT's shape does not apply to a module: greyed, kept for going back.
        for (const auto &path : builtinShapeFields())
            QVERIFY2(!designer.findChild<QWidget *>(QString::fromStdString(path))->isEnabled(), path.c_str());
        QVERIFY(designer.findChild<QWidget *>(QStringLiteral("model.context_length"))->isEnabled());
        QVERIFY(designer.predictedRoles().isEmpty());
        QVERIFY(!probeButton(designer)->isHidden());
        probeButton(designer)->click();
        QVERIFY(designer.isProbingModule());
        QVERIFY(designer.predictionSummary().contains(QStringLiteral("Probing the module")));
        QVERIFY(probed.wait(120000));
        // autocast-bf16: parameters, gradients, optimizer state, saved activations, temporaries.
        QVERIFY2(designer.predictedRoles().size() == 5, qPrintable(designer.predictedRoles().join(u',')));

        // The same figures as the engine's own estimate, which now reads the same probes.
        QProcess estimate;
        estimate.start(optlog::testing::optlogBinary(),
                       {QStringLiteral("estimate"), QStringLiteral("--preset"), QStringLiteral("smoke"),
                        QStringLiteral("--set"), QStringLiteral("model.source=torchscript"), QStringLiteral("--set"),
                        QStringLiteral("model.path=") + cache.path() + QStringLiteral("/rotary.pt"),
                        QStringLiteral("--set"), QStringLiteral("model.context_length=16"), QStringLiteral("--set"),
                        QStringLiteral("train.microbatch=4"), QStringLiteral("--set"),
                        QStringLiteral("data.corpus=generated"), QStringLiteral("--set"),
                        QStringLiteral("precision.mode=autocast-bf16"), QStringLiteral("--json")});
        QVERIFY(estimate.waitForFinished(120000) && estimate.exitCode() == 0);
        const QJsonObject json = QJsonDocument::fromJson(estimate.readAllStandardOutput()).object();
        QVERIFY2(json.value(QStringLiteral("activations_from")).toString().contains(QStringLiteral("; cached")),
                 "the estimate probed again: the designer's probes were not cached");
        const QString peak = QString::fromStdString(formatBytes(json.value(QStringLiteral("peak_bytes")).toInteger()));
        QVERIFY2(designer.predictionSummary().contains(QStringLiteral("<b>") + peak + QStringLiteral("</b>")),
                 qPrintable(designer.predictionSummary() + QStringLiteral(" vs the CLI's ") + peak));

        designModule(designer, cache.path() + QStringLiteral("/bad/two_arguments.pt"), QStringLiteral("fp32"));
        QVERIFY(designer.probeModule());
        QVERIFY(probed.wait(120000));
        QVERIFY(designer.predictedRoles().isEmpty());
        QVERIFY2(designer.predictionSummary().contains(QStringLiteral("The last probe failed: "))
                     && designer.predictionSummary().contains(QStringLiteral("forward")),
                 qPrintable(designer.predictionSummary()));
    }
};

QTEST_MAIN(tst_Designer)
#include "tst_designer.moc"
