// SPDX-License-Identifier: MIT
// The memory timeline of a training step (core/engine/machine/steptimeline.h): its highest point
// is the run's measured peak to the byte, on optlog's GPT and on a TorchScript module, in every
// precision mode this build runs on the CPU; each phase's peak read at the marks (CUDA's way) is
// the highest of the allocations in it (the CPU's); the first step shows AdamW's moments appear
// in its optimizer step; checkpointing ends the forward lower.
#include "core/config/config.h"
#include "core/contract/memoryroles.h"
#include "core/contract/precisionmodes.h"
#include "core/engine/data/textdata.h"
#include "core/engine/machine/device.h"
#include "core/engine/memory/countingallocator.h"
#include "core/engine/train/trainer.h"
#include "core/memorymodel/memorymodel.h"
#include "tests/common/memorysample.h"
#include "tests/common/torchscriptmodules.h"

#include <QTemporaryDir>
#include <QtTest>
#include <algorithm>
#include <atomic>

using namespace optlog;

namespace {

// What the trainer reports of a run that matters here: its timelines.
class Timelines : public TrainingObserver
{
public:
    void memoryTimeline(const MemoryTimeline &timeline) override { kept.push_back(timeline); }
    std::vector<MemoryTimeline> kept;
};

struct Trained
{
    TrainingOutcome outcome;
    std::vector<MemoryTimeline> timelines;
};

int64_t measured(const TrainingOutcome &outcome, MemoryRole role)
{
    for (const MemoryRow &row : outcome.measuredMemory)
        if (row.role == role)
            return row.bytes;
    return -1;
}

const MemoryTimeline *timelineOf(const Trained &run, bool measuredStep)
{
    for (const MemoryTimeline &timeline : run.timelines)
        if (timeline.measuredStep == measuredStep)
            return &timeline;
    return nullptr;
}

// The phase the step's forward passes end in, and the bytes in use there: where its backward begins.
int64_t bytesWhereBackwardBegins(const MemoryTimeline &timeline)
{
    for (const TimelinePhase &phase : timeline.phases)
        if (phase.part == StepPart::Backward)
            return phase.startBytes;
    return -1;
}

const TimelinePhase *lastPhaseOf(const MemoryTimeline &timeline, StepPart part)
{
    const TimelinePhase *found = nullptr;
    for (const TimelinePhase &phase : timeline.phases)
        if (phase.part == part)
            found = &phase;
    return found;
}

// The highest point in each phase, where the points are every allocation (the CPU's timeline).
std::vector<int64_t> highestPointOfEachPhase(const MemoryTimeline &timeline)
{
    std::vector<int64_t> highest;
    for (const TimelinePhase &phase : timeline.phases)
        highest.push_back(phase.startBytes);
    for (size_t i = 0; i < timeline.eventOfPoint.size(); ++i) {
        int64_t &phaseHighest = highest[timeline.phaseOfEvent(timeline.eventOfPoint[i])];
        phaseHighest = std::max(phaseHighest, timeline.bytesOfPoint[i]);
    }
    return highest;
}

} // namespace

class tst_Timeline : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void theMeasuredStepsHighestPointIsTheRunsPeakToTheByte_data();
    void theMeasuredStepsHighestPointIsTheRunsPeakToTheByte();
    void theFirstStepShowsAdamsMomentsAppearInItsOptimizerStep();
    void checkpointingEndsTheForwardLowerAndRecomputesInTheBackward();
    void eachBlockAndMicrobatchIsAPhaseInTheOrderTheyRan();
    void theMemoryModelNamesThePhaseOfThePeakOnAHeldOutSample();

private:
    RunConfig config(const QStringList &overrides) const;
    Trained train(const RunConfig &config) const;

    QTemporaryDir m_dir;
};

void tst_Timeline::initTestCase()
{
    CountingAllocator::install(); // as the engine runs: the CPU's timeline is its allocations
    QVERIFY(m_dir.isValid());
    QVERIFY2(optlog::testing::writeTorchScriptModules(m_dir.path()), optlog::testing::kTorchScriptModulesNeed);
}

RunConfig tst_Timeline::config(const QStringList &overrides) const
{
    std::vector<std::string> all = {"data.corpus=generated", "train.steps=4",      "train.eval_interval=100",
                                    "memory.warmup_steps=2", "train.microbatch=2", "model.context_length=32",
                                    "model.width=32",        "model.layers=2",     "model.heads=2"};
    for (const QString &o : overrides)
        all.push_back(o.toStdString());
    return loadRunConfig("smoke", "", all);
}

Trained tst_Timeline::train(const RunConfig &config) const
{
    Trainer trainer(config, loadTokens(config.data, config.model.vocabSize, config.model.contextLength), 1234);
    Timelines timelines;
    std::atomic<bool> stop{false};
    Trained run;
    run.outcome = trainer.run(timelines, stop);
    run.timelines = std::move(timelines.kept);
    return run;
}

void tst_Timeline::theMeasuredStepsHighestPointIsTheRunsPeakToTheByte_data()
{
    QTest::addColumn<QString>("mode");
    QTest::addColumn<QStringList>("model");
    const QStringList torchscript = {"model.source=torchscript", "model.path=" + m_dir.filePath("rotary.pt"),
                                     "model.context_length=16"};
    for (const PrecisionMode &mode : precisionModes()) {
        if (mode.cudaOnly)
            continue;
        const QString name = QString::fromStdString(mode.name);
        QTest::addRow("GPT, %s", mode.name.c_str()) << name << QStringList();
        QTest::addRow("GPT checkpointed, %s", mode.name.c_str()) << name << QStringList{"memory.checkpoint_every=1"};
        QTest::addRow("TorchScript, %s", mode.name.c_str()) << name << torchscript;
        QTest::addRow("TorchScript through its blocks, %s", mode.name.c_str())
            << name << (torchscript + QStringList{"memory.checkpoint_every=1"});
    }
}

void tst_Timeline::theMeasuredStepsHighestPointIsTheRunsPeakToTheByte()
{
    QFETCH(QString, mode);
    QFETCH(QStringList, model);
    const Trained run = train(config(model + QStringList{"precision.mode=" + mode}));
    const TrainingOutcome &outcome = run.outcome;
    QCOMPARE(run.timelines.size(), size_t(2)); // the first step, and the first after warm-up
    const MemoryTimeline *steady = timelineOf(run, true);
    QVERIFY(steady);
    QCOMPARE(steady->step, int64_t(2));
    QCOMPARE(steady->source, std::string("allocations"));
    QVERIFY(steady->eventOfPoint.size() <= MemoryTimeline::kMaxPoints);
    QCOMPARE(steady->peakBytes(), measured(outcome, MemoryRole::Peak));
    QCOMPARE(steady->peakBytes(), *outcome.firstStepPeakBytes);
    // Each phase's peak, as the marks read it (all a GPU's timeline has), is its highest allocation.
    const std::vector<int64_t> highest = highestPointOfEachPhase(*steady);
    for (size_t i = 0; i < steady->phases.size(); ++i)
        QVERIFY2(steady->phases[i].peakBytes == highest[i],
                 qPrintable(QString("%1: marks %2, allocations %3")
                                .arg(QString::fromStdString(steady->phases[i].name()))
                                .arg(steady->phases[i].peakBytes)
                                .arg(highest[i])));
    // Its floor: the model's states as the step began.
    QCOMPARE(steady->statesBefore.at(MemoryRole::Parameters), measured(outcome, MemoryRole::Parameters));
    QCOMPARE(steady->statesBefore.at(MemoryRole::OptimizerState), measured(outcome, MemoryRole::OptimizerState));
    QVERIFY(steady->phases.front().startBytes >= steady->statesBefore.at(MemoryRole::Parameters));
    // Stored as JSON and read back whole.
    const MemoryTimeline read = timelineFromText(timelineText(*steady));
    QCOMPARE(timelineText(read), timelineText(*steady));
}

void tst_Timeline::theFirstStepShowsAdamsMomentsAppearInItsOptimizerStep()
{
    const Trained run = train(config({}));
    const TrainingOutcome &outcome = run.outcome;
    const MemoryTimeline *first = timelineOf(run, false);
    const MemoryTimeline *steady = timelineOf(run, true);
    QVERIFY(first && steady);
    QVERIFY(first->firstStep);
    QCOMPARE(first->step, int64_t(0));
    const int64_t moments = measured(outcome, MemoryRole::OptimizerState);
    QVERIFY(moments > 0);
    QCOMPARE(first->statesBefore.at(MemoryRole::OptimizerState), int64_t(0));
    QCOMPARE(first->statesAfter.at(MemoryRole::OptimizerState), moments);
    // The step ends with the moments on top of where its optimizer step began: they appear there.
    const TimelinePhase *optimizer = lastPhaseOf(*first, StepPart::OptimizerStep);
    QVERIFY(optimizer && !first->bytesOfPoint.empty() && !steady->bytesOfPoint.empty());
    const int64_t grewInFirst = first->bytesOfPoint.back() - optimizer->startBytes;
    QVERIFY2(grewInFirst >= moments, qPrintable(QString("grew %1, moments %2").arg(grewInFirst).arg(moments)));
    QVERIFY(optimizer->peakBytes >= optimizer->startBytes + moments);
    // A later step's optimizer step has them already: it ends where it began, give or take its scalars.
    const TimelinePhase *later = lastPhaseOf(*steady, StepPart::OptimizerStep);
    QVERIFY(later);
    QVERIFY(std::abs(steady->bytesOfPoint.back() - later->startBytes) < moments / 10);
}

void tst_Timeline::checkpointingEndsTheForwardLowerAndRecomputesInTheBackward()
{
    const QStringList deeper = {"model.layers=4"};
    const Trained plain = train(config(deeper));
    const Trained checkpointed = train(config(deeper + QStringList{"memory.checkpoint_every=1"}));
    const MemoryTimeline *a = timelineOf(plain, true), *b = timelineOf(checkpointed, true);
    QVERIFY(a && b);
    // The same model states under both: the forward's hill is what differs.
    QCOMPARE(a->phases.front().startBytes, b->phases.front().startBytes);
    const int64_t plainTop = bytesWhereBackwardBegins(*a), checkpointedTop = bytesWhereBackwardBegins(*b);
    QVERIFY2(checkpointedTop < plainTop,
             qPrintable(QString("forward ends at %1 checkpointed, %2 not").arg(checkpointedTop).arg(plainTop)));
    // Each block's backward recomputes its forward first: it rises above where it began.
    for (const TimelinePhase &phase : b->phases)
        if (phase.part == StepPart::Backward && phase.block >= 0)
            QVERIFY2(phase.peakBytes > phase.startBytes, qPrintable(QString::fromStdString(phase.name())));
}

void tst_Timeline::eachBlockAndMicrobatchIsAPhaseInTheOrderTheyRan()
{
    const Trained run = train(config({"train.accumulation=2", "model.layers=3"}));
    const MemoryTimeline *steady = timelineOf(run, true);
    QVERIFY(steady);
    std::vector<std::string> names;
    for (const TimelinePhase &phase : steady->phases)
        names.push_back((phase.microbatch > 0 ? "mb1 " : "") + phase.name());
    const std::vector<std::string> expected = {"forward",
                                               "forward, block 0",
                                               "forward, block 1",
                                               "forward, block 2",
                                               "loss",
                                               "backward, loss",
                                               "backward, block 2",
                                               "backward, block 1",
                                               "backward, block 0",
                                               "backward",
                                               "mb1 forward",
                                               "mb1 forward, block 0",
                                               "mb1 forward, block 1",
                                               "mb1 forward, block 2",
                                               "mb1 loss",
                                               "mb1 backward, loss",
                                               "mb1 backward, block 2",
                                               "mb1 backward, block 1",
                                               "mb1 backward, block 0",
                                               "mb1 backward",
                                               "unscale and clip",
                                               "optimizer step"};
    QCOMPARE(names, expected);
    for (size_t i = 1; i < steady->phases.size(); ++i)
        QVERIFY(steady->phases[i].firstEvent > steady->phases[i - 1].firstEvent);
}

// The memory model walks the step as the trainer runs it: the phase of its highest point is the
// measured timeline's, on configs drawn from a seed nothing was fitted or tuned on (the bounds of
// tst_memoryaccuracy, where the model's bytes hold within 10%).
void tst_Timeline::theMemoryModelNamesThePhaseOfThePeakOnAHeldOutSample()
{
    const uint64_t seed = 22; // seed 21 was looked at while writing this: 19 of 20, nothing changed after
    int agree = 0, cases = 0;
    for (const optlog::testing::MemoryCase &c :
         optlog::testing::sampleMemoryCases(seed, 20, optlog::testing::testBounds())) {
        const RunConfig config = c.config();
        at::set_num_threads(int(c.threads));
        const Trained run = train(config);
        const MemoryTimeline *steady = timelineOf(run, true);
        QVERIFY(steady && steady->peakPhase() >= 0);
        const std::string measured = steady->phases[size_t(steady->peakPhase())].name();
        const std::string predicted = estimateMemory(config, deviceTermsOf(config)).peakPhase.name();
        ++cases;
        agree += measured == predicted;
        qInfo("%s: predicted %s, measured %s%s", c.label().c_str(), predicted.c_str(), measured.c_str(),
              measured == predicted ? "" : "  <- differs");
    }
    qInfo("the predicted peak's phase is the measured one in %d of %d configs", agree, cases);
    QVERIFY2(agree * 10 >= cases * 9, qPrintable(QString("%1 of %2").arg(agree).arg(cases)));
}

QTEST_GUILESS_MAIN(tst_Timeline)
#include "tst_timeline.moc"
