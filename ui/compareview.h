// SPDX-License-Identifier: MIT
#pragma once

#include "core/analysis/comparison.h"
#include "ui/studysnapshot.h"

#include <QList>
#include <QWidget>
#include <memory>
#include <vector>

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QListWidget;
class QStackedWidget;
class QTableWidget;

namespace optlog {

class ComparisonCharts;
class DecisionSummary;
class NumericsTable;

// Selected runs side by side against a baseline, grouped by their group (a run's replicates over
// seeds; a run alone is a group of one): the decision summary first, pinned above the rest, then
// the verdict table in detail, the 16-bit numerics table, validation loss against tokens
// seen as a mean with its band over seeds, throughput with its spread, memory by role measured
// beside predicted, the quality-versus-speed and quality-versus-memory trade-offs, the 16-bit
// numerics, memory by role with each state's dtype, and the config diff.
class CompareView : public QWidget
{
    Q_OBJECT
public:
    explicit CompareView(QWidget *parent = nullptr);
    ~CompareView() override;

    void setStudy(const StudySnapshot &study);
    void setSelectedRuns(const QList<qint64> &runIds); // checks these runs, unchecks the others
    QList<qint64> selectedRuns() const;
    void setBaseline(qint64 runId);
    qint64 baseline() const;
    void setTolerance(double natsPerToken);
    double tolerance() const;

    const std::vector<ComparisonRow> &rows() const { return m_rows; }
    DecisionSummary *decisionSummary() const { return m_decisions; }
    QTableWidget *verdictTable() const { return m_verdicts; }
    NumericsTable *numericsTable() const { return m_numerics; }
    QTableWidget *memoryTable() const { return m_memory; }
    QTableWidget *configTable() const { return m_config; }
    const ComparisonCharts &charts() const { return *m_charts; }
    double lastUpdateMilliseconds() const { return m_lastUpdateMs; }

private:
    QWidget *buildControls();
    QWidget *buildResults();
    void rebuildRunList();
    void update();
    // The shown runs as groups, the baseline's first.
    std::vector<GroupSummary> groups() const;
    void fillVerdicts(const std::vector<GroupSummary> &groups);
    void fillCharts(const std::vector<GroupSummary> &groups);
    void fillMemory(const std::vector<GroupSummary> &groups);
    void fillConfig(const std::vector<GroupSummary> &groups);

    StudySnapshot m_study;
    QList<RunSnapshotPtr> m_shown; // what the results show now: redo nothing when it is unchanged
    qint64 m_shownBaseline = 0;
    double m_shownTolerance = -1;
    QListWidget *m_runList;
    QComboBox *m_baseline;
    QDoubleSpinBox *m_tolerance;
    QCheckBox *m_onlyDifferences;
    QStackedWidget *m_pages; // the empty state, or the results
    QLabel *m_summary;
    QLabel *m_notes; // the compared runs' notes, tags and origins, as the user wrote them
    DecisionSummary *m_decisions;
    QTableWidget *m_verdicts;
    NumericsTable *m_numerics; // what FP16 and BF16 would do, per group, under the verdicts
    QLabel *m_numericsHeading = nullptr;
    std::unique_ptr<ComparisonCharts> m_charts;
    QTableWidget *m_memory;
    QTableWidget *m_config;
    std::vector<ComparisonRow> m_rows;
    double m_lastUpdateMs = 0;
    bool m_updating = false;
};

} // namespace optlog
