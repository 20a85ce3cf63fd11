// SPDX-License-Identifier: MIT
// The same rows read alike wherever a decision is shown: the terminal's short table and verdict
// lines (`optlog study`, `optlog compare`), the workbench's decision summary and the verdict table
// (the reports, the workbench's Compare, `--wide`). The cases sit on the judgements' bounds:
// memory 0.4%, 2% and 3.1% smaller than the baseline's (the same memory is within 3%), a group
// none of whose seeds completed, and a baseline that had instabilities.
#include "core/analysis/comparison.h"
#include "core/analysis/decisions.h"
#include "core/analysis/decisionwords.h"
#include "core/analysis/verdictcells.h"
#include "core/contract/format.h"
#include "ui/decisionsummary.h"

#include <QApplication>
#include <QtTest>

using namespace optlog;

namespace {

constexpr int64_t kBaselinePeak = 100'000'000;

RunSummary run(const std::string &name, double loss, int64_t peak, Outcome outcome = Outcome::Completed)
{
    RunSummary s;
    s.run.name = name;
    s.run.outcome = outcome;
    s.throughput.median = 1000;
    s.throughput.p10 = 990;
    s.throughput.p90 = 1010;
    s.throughput.blocks = {990, 1010, 1000, 995, 1005};
    s.peakBytes = peak;
    if (outcome == Outcome::Completed)
        s.validation = {{9, 1000, loss}};
    return s;
}

// Two seeds a group, so that every judgement has its interval.
GroupSummary group(const std::string &name, int64_t peak, Outcome outcome = Outcome::Completed)
{
    return {name, {run(name + "-s0", 3.000, peak, outcome), run(name + "-s1", 3.002, peak, outcome)}};
}

struct Expected
{
    const char *name;
    const char *memoryCell;  // the short tables' memory cell after the bytes
    const char *memoryWords; // in the verdict
    const char *action;
};

// The terminal's line of the short table for `name`, and its verdict line below the table.
QString lineStarting(const QStringList &lines, const QString &start)
{
    for (const QString &line : lines)
        if (line.startsWith(start))
            return line;
    return {};
}

} // namespace

class tst_DecisionAgreement : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void theTerminalTheWorkbenchAndTheVerdictAgree()
    {
        GroupSummary baseline = group("fp32", kBaselinePeak);
        baseline.replicates[0].instabilities[EventKind::LossSpike] = 2;
        const std::vector<GroupSummary> groups = {baseline, group("smaller0.4", kBaselinePeak * 996 / 1000),
                                                  group("smaller2", kBaselinePeak * 98 / 100),
                                                  group("smaller3.1", kBaselinePeak * 969 / 1000),
                                                  group("diverged", kBaselinePeak / 2, Outcome::Diverged)};
        const std::vector<ComparisonRow> rows = compare(baseline, groups, 0.02);
        QCOMPARE(rows.size(), groups.size());

        const QStringList terminal = QString::fromStdString(formatDecisions(rows, "fp32", 0.02)).split('\n');
        DecisionSummary workbench;
        workbench.resize(1200, 400);
        workbench.setRows(rows);
        QCOMPARE(workbench.rowCount(), int(rows.size()));

        const Expected expected[] = {
            {"smaller0.4", ", same", "same memory", "same quality, not faster here"},
            {"smaller2", ", same", "same memory", "same quality, not faster here"},
            {"smaller3.1", ", saves 3%", "saves 3% memory", "take it"},
        };
        for (const Expected &e : expected) {
            const size_t i = size_t(
                std::find_if(rows.begin(), rows.end(), [&](const ComparisonRow &r) { return r.name == e.name; })
                - rows.begin());
            const int row = int(i);
            const QString name = QString::fromLatin1(e.name);
            const QString memory = QString::fromStdString(formatBytes(rows[i].peakBytes)) + QLatin1String(e.memoryCell);
            // The terminal's table.
            const QString line = lineStarting(terminal, name + QLatin1Char(' '));
            QVERIFY2(line.contains(memory), qPrintable(line));
            QVERIFY2(line.endsWith(QLatin1String(e.action)), qPrintable(line));
            // The workbench's summary: the same cells.
            QCOMPARE(workbench.item(row, DecisionSummary::Memory)->text(), memory);
            QCOMPARE(workbench.item(row, DecisionSummary::Action)->text(), QLatin1String(e.action));
            QVERIFY2(workbench.item(row, DecisionSummary::Quality)->text().startsWith(QLatin1String("same: ")),
                     qPrintable(workbench.item(row, DecisionSummary::Quality)->text()));
            // The verdict, in the verdict table, the terminal's line and the workbench's tooltip.
            const VerdictCells cells = verdictCells(rows[i], 0.02);
            const QString verdict = QString::fromStdString(cells[VerdictColumn::Verdict]);
            QVERIFY2(verdict.contains(QLatin1String(e.memoryWords)), qPrintable(verdict));
            QVERIFY2(lineStarting(terminal, name + QLatin1String(": ")).contains(QLatin1String(e.memoryWords)),
                     qPrintable(terminal.join('\n')));
            QVERIFY(workbench.item(row, DecisionSummary::Memory)->toolTip().contains(verdict.toHtmlEscaped()));
            // The verdict table's peak shows a percentage only where the memory is not the same.
            const QString peak = QString::fromStdString(cells[VerdictColumn::PeakMemory]);
            QCOMPARE(peak.contains(QLatin1Char('%')), QLatin1String(e.memoryCell) != QLatin1String(", same"));
        }

        // None of its seeds completed: one "no verdict", the outcome once.
        const ComparisonRow &diverged = rows.back();
        QCOMPARE(diverged.action, Action::NoVerdict);
        const QString divergedVerdict = QString::fromStdString(verdictText(diverged));
        QCOMPARE(divergedVerdict, QStringLiteral("none of 2 seeds completed (diverged): no verdict"));
        QCOMPARE(QString::fromStdString(verdictCells(diverged, 0.02)[VerdictColumn::Verdict]), divergedVerdict);
        QVERIFY2(lineStarting(terminal, QStringLiteral("diverged: ")).endsWith(divergedVerdict),
                 qPrintable(terminal.join('\n')));
        const int last = workbench.rowCount() - 1;
        QCOMPARE(workbench.item(last, DecisionSummary::Action)->text(),
                 QString::fromLatin1(actionText(Action::NoVerdict)));
        QVERIFY(
            lineStarting(terminal, QStringLiteral("diverged ")).endsWith(QLatin1String(actionText(Action::NoVerdict))));
        QCOMPARE(workbench.item(last, DecisionSummary::Quality)->text(), QStringLiteral("no verdict"));

        // The baseline: one word for it everywhere, its instabilities in its verdict.
        const QString baselineVerdict = QString::fromStdString(verdictText(rows.front()));
        QCOMPARE(baselineVerdict, QStringLiteral("baseline; unstable: 2 loss spikes"));
        QCOMPARE(QString::fromStdString(verdictCells(rows.front(), 0.02)[VerdictColumn::Verdict]), baselineVerdict);
        QVERIFY2(terminal.contains(QStringLiteral("fp32: ") + baselineVerdict), qPrintable(terminal.join('\n')));
        QCOMPARE(workbench.item(0, DecisionSummary::Action)->text(), QString::fromLatin1(kBaselineWord));
        QVERIFY(lineStarting(terminal, QStringLiteral("fp32 ")).endsWith(QLatin1String(kBaselineWord)));
        QVERIFY(workbench.item(0, DecisionSummary::Quality)->text().startsWith(QLatin1String(kBaselineWord)));
        QVERIFY(workbench.item(0, DecisionSummary::Action)->toolTip().contains(baselineVerdict));
        QVERIFY(QString::fromStdString(verdictCells(rows.front(), 0.02)[VerdictColumn::Run])
                    .endsWith(QStringLiteral("(baseline)")));
    }
};

QTEST_MAIN(tst_DecisionAgreement)
#include "tst_decisionagreement.moc"
