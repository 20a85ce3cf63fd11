// SPDX-License-Identifier: MIT
#include "ui/compareview.h"

#include "core/analysis/runtables.h"
#include "core/analysis/runtext.h"
#include "core/analysis/verdictcells.h"
#include "core/config/config.h"
#include "core/config/configfields.h"
#include "core/config/recordedconfig.h"
#include "core/contract/dtype.h"
#include "core/contract/format.h"
#include "ui/charts/comparisoncharts.h"
#include "ui/charts/linechart.h"
#include "ui/charts/scatterchart.h"
#include "ui/charts/spreadchart.h"
#include "ui/charts/stackedbarchart.h"
#include "ui/decisionsummary.h"
#include "ui/numericstable.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QElapsedTimer>
#include <QFormLayout>
#include <QGridLayout>
#include <QHeaderView>
#include <QLabel>
#include <QListWidget>
#include <QScrollArea>
#include <QScrollBar>
#include <QStackedWidget>
#include <QTableWidget>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>
#include <iterator>

namespace optlog {

namespace {

constexpr int kVerdictColumn = int(VerdictColumn::Verdict);

QTableWidgetItem *cell(const QString &text, Qt::Alignment alignment = Qt::AlignLeft | Qt::AlignVCenter)
{
    auto *item = new QTableWidgetItem(text);
    item->setTextAlignment(alignment);
    return item;
}

QTableWidget *readOnlyTable(int columns)
{
    auto *table = new QTableWidget(0, columns);
    table->verticalHeader()->hide();
    table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    table->setSelectionBehavior(QAbstractItemView::SelectRows);
    table->setAlternatingRowColors(true);
    table->setWordWrap(true);
    return table;
}

// Rows sized to their text, and the table as tall as all of them: it never scrolls vertically
// inside the page, which scrolls instead.
void fitHeightToRows(QTableWidget *table)
{
    table->resizeRowsToContents();
    int height = table->horizontalHeader()->height() + 2 * table->frameWidth()
                 + table->horizontalScrollBar()->sizeHint().height();
    for (int row = 0; row < table->rowCount(); ++row)
        height += table->rowHeight(row);
    table->setFixedHeight(height);
}

} // namespace

CompareView::CompareView(QWidget *parent)
    : QWidget(parent)
    , m_runList(new QListWidget)
    , m_baseline(new QComboBox)
    , m_tolerance(new QDoubleSpinBox)
    , m_onlyDifferences(new QCheckBox(tr("Only differences")))
    , m_pages(new QStackedWidget)
    , m_summary(new QLabel)
    , m_notes(new QLabel)
    , m_decisions(new DecisionSummary)
    , m_verdicts(readOnlyTable(int(verdictColumnTitles().size())))
    , m_numerics(new NumericsTable)
    , m_charts(std::make_unique<ComparisonCharts>())
    , m_memory(readOnlyTable(1))
    , m_config(readOnlyTable(1))
{
    auto *empty = new QLabel(tr("<h3>Nothing to compare yet</h3>"
                                "<p>Tick two or more runs on the left, or select them in the runs table and "
                                "press Ctrl+D. The first ticked run is the baseline unless you pick another.</p>"));
    empty->setAlignment(Qt::AlignCenter);
    empty->setWordWrap(true);
    m_pages->addWidget(empty);
    m_pages->addWidget(buildResults());

    auto *layout = new QHBoxLayout(this);
    layout->addWidget(buildControls());
    layout->addWidget(m_pages, 1);
}

CompareView::~CompareView() = default;

QWidget *CompareView::buildControls()
{
    auto *panel = new QWidget;
    panel->setMaximumWidth(200);
    m_runList->setToolTip(tr("Runs to compare"));
    m_tolerance->setDecimals(3);
    m_tolerance->setRange(0.0, 1.0);
    m_tolerance->setSingleStep(0.005);
    m_tolerance->setValue(0.02);
    m_onlyDifferences->setChecked(true); // thirty equal rows would hide the two that matter
    m_tolerance->setSuffix(tr(" nats"));
    m_tolerance->setToolTip(tr("Validation-loss difference that counts as no difference: same quality needs "
                               "the whole 95% interval within it (with one seed, the difference itself)"));
    m_baseline->setToolTip(tr("Every other group is judged against this run's group"));
    auto *form = new QFormLayout;
    form->addRow(tr("Baseline"), m_baseline);
    form->addRow(tr("Tolerance"), m_tolerance);
    form->addRow(m_onlyDifferences);
    auto *layout = new QVBoxLayout(panel);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(new QLabel(tr("<b>Runs</b>")));
    layout->addWidget(m_runList, 1);
    layout->addLayout(form);

    connect(m_runList, &QListWidget::itemChanged, this, [this] {
        if (!m_updating)
            update();
    });
    connect(m_baseline, &QComboBox::currentIndexChanged, this, [this] {
        if (!m_updating)
            update();
    });
    connect(m_tolerance, &QDoubleSpinBox::valueChanged, this, [this] { update(); });
    connect(m_onlyDifferences, &QCheckBox::toggled, this, [this] { fillConfig(groups()); });
    return panel;
}

QWidget *CompareView::buildResults()
{
    QStringList titles;
    for (const std::string &title : verdictColumnTitles())
        titles << QString::fromStdString(title);
    m_verdicts->setHorizontalHeaderLabels(titles);
    m_verdicts->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    // The verdict wraps in a column of its own width instead of squeezing the numbers.
    m_verdicts->horizontalHeader()->setSectionResizeMode(kVerdictColumn, QHeaderView::Interactive);
    m_verdicts->setColumnWidth(kVerdictColumn, 340);
    m_verdicts->horizontalHeaderItem(3)->setToolTip(
        tr("Mean over seeds, with the standard deviation between seeds when there are several"));
    m_verdicts->horizontalHeaderItem(4)->setToolTip(
        tr("Difference of the mean validation losses, with Welch's 95% interval where both sides have two seeds "
           "or more"));
    m_verdicts->horizontalHeaderItem(6)->setToolTip(
        tr("Median over seeds of each run's steady-state median, with the range over seeds; one seed: p10–p90 of "
           "its steps"));
    m_verdicts->horizontalHeaderItem(7)->setToolTip(
        tr("Model FLOP utilisation: model FLOPs per token (6N + 12·L·T·C) × steady tokens/s, over the matmul peak "
           "measured on this machine for the run's compute dtype"));
    m_config->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_config->setMinimumHeight(260);
    m_memory->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_memory->setSelectionBehavior(QAbstractItemView::SelectItems);
    m_summary->setWordWrap(true);
    m_notes->setWordWrap(true);
    // The run's name stands in the rows' header, where it stays when the wide table scrolls sideways.
    m_verdicts->setColumnHidden(int(VerdictColumn::Run), true);
    m_verdicts->verticalHeader()->show();
    m_notes->setTextInteractionFlags(Qt::TextSelectableByMouse);

    auto *content = new QWidget;
    auto *grid = new QGridLayout(content);
    // One column: beside the runs dock, two charts side by side would each be too narrow to read
    // at 1280 pixels; the page scrolls instead.
    int row = 0;
    grid->addWidget(new QLabel(tr("<b>Every measure</b>")), row++, 0);
    grid->addWidget(m_verdicts, row++, 0);
    m_numericsHeading = new QLabel(tr("<b>16-bit numerics</b>, measured on each group's own tensors at its last "
                                      "measured step: green is fine, amber close to trouble, red trouble; hover "
                                      "a cell for its worst tensor"));
    m_numericsHeading->setWordWrap(true);
    grid->addWidget(m_numericsHeading, row++, 0);
    grid->addWidget(m_numerics, row++, 0);
    grid->addWidget(m_notes, row++, 0);
    for (QWidget *chart : m_charts->charts()) {
        chart->setMinimumHeight(std::max(chart->minimumHeight(), 320));
        grid->addWidget(chart, row++, 0);
    }
    auto *memoryHeading = new QLabel(tr("<b>Memory by role</b>: measured, with the dtype read from each state's "
                                        "tensors, and the memory model's prediction beside it"));
    memoryHeading->setWordWrap(true);
    grid->addWidget(memoryHeading, row++, 0);
    grid->addWidget(m_memory, row++, 0);
    grid->addWidget(new QLabel(tr("<b>Config</b>")), row++, 0);
    grid->addWidget(m_config, row++, 0);
    auto *scroll = new QScrollArea;
    scroll->setWidget(content);
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    // The decision stays in view, above the details that scroll.
    auto *page = new QWidget;
    auto *layout = new QVBoxLayout(page);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_summary);
    layout->addWidget(m_decisions);
    layout->addWidget(scroll, 1);
    return page;
}

void CompareView::setStudy(const StudySnapshot &study)
{
    m_study = study;
    rebuildRunList();
    update();
}

void CompareView::rebuildRunList()
{
    m_updating = true;
    QHash<qint64, Qt::CheckState> checked;
    for (int i = 0; i < m_runList->count(); ++i)
        checked.insert(m_runList->item(i)->data(Qt::UserRole).toLongLong(), m_runList->item(i)->checkState());
    const qint64 baselineId = baseline();
    m_runList->clear();
    m_baseline->clear();
    for (const auto &run : m_study.runs) {
        const RunRecord &record = run->run();
        if (record.archived && checked.value(record.id, Qt::Unchecked) != Qt::Checked)
            continue; // archived: hidden unless already being compared
        const QString label = QStringLiteral("%1  (%2)")
                                  .arg(QString::fromStdString(record.name),
                                       QString::fromLatin1(outcomeName(record.outcome)));
        auto *item = new QListWidgetItem(label, m_runList);
        item->setData(Qt::UserRole, qint64(record.id));
        item->setFlags(Qt::ItemIsUserCheckable | Qt::ItemIsEnabled | Qt::ItemIsSelectable);
        item->setCheckState(checked.value(record.id, Qt::Unchecked));
        m_baseline->addItem(QString::fromStdString(record.name), qint64(record.id));
    }
    const int index = m_baseline->findData(baselineId);
    m_baseline->setCurrentIndex(index >= 0 ? index : 0);
    m_updating = false;
}

void CompareView::setSelectedRuns(const QList<qint64> &runIds)
{
    m_updating = true;
    for (int i = 0; i < m_runList->count(); ++i) {
        QListWidgetItem *item = m_runList->item(i);
        item->setCheckState(runIds.contains(item->data(Qt::UserRole).toLongLong()) ? Qt::Checked : Qt::Unchecked);
    }
    if (!runIds.isEmpty() && !runIds.contains(baseline()))
        m_baseline->setCurrentIndex(m_baseline->findData(runIds.first()));
    m_updating = false;
    update();
}

QList<qint64> CompareView::selectedRuns() const
{
    QList<qint64> ids;
    for (int i = 0; i < m_runList->count(); ++i)
        if (m_runList->item(i)->checkState() == Qt::Checked)
            ids << m_runList->item(i)->data(Qt::UserRole).toLongLong();
    return ids;
}

void CompareView::setBaseline(qint64 runId)
{
    const int index = m_baseline->findData(runId);
    if (index >= 0)
        m_baseline->setCurrentIndex(index);
}

qint64 CompareView::baseline() const
{
    return m_baseline->currentData().toLongLong();
}

void CompareView::setTolerance(double natsPerToken)
{
    m_tolerance->setValue(natsPerToken);
}

double CompareView::tolerance() const
{
    return m_tolerance->value();
}

void CompareView::update()
{
    QList<RunSnapshotPtr> runs;
    const RunSnapshotPtr base = m_study.find(baseline());
    if (base)
        runs << base; // the baseline leads every table and chart
    for (qint64 id : selectedRuns())
        if (const RunSnapshotPtr run = m_study.find(id); run && run != base)
            runs << run;
    if (runs.size() < 2 || !base) {
        m_pages->setCurrentIndex(0);
        m_shown.clear();
        m_rows.clear();
        return;
    }
    m_pages->setCurrentIndex(1);
    // Snapshots of unchanged runs are shared, so pointer equality means nothing new to draw.
    if (runs == m_shown && m_shownBaseline == base->run().id && m_shownTolerance == m_tolerance->value())
        return;
    QElapsedTimer timer;
    timer.start();
    m_shown = runs;
    m_shownBaseline = base->run().id;
    m_shownTolerance = m_tolerance->value();
    const std::vector<GroupSummary> shown = groups();
    fillVerdicts(shown);
    fillCharts(shown);
    fillMemory(shown);
    fillConfig(shown);
    m_lastUpdateMs = double(timer.nsecsElapsed()) / 1e6;
}

std::vector<GroupSummary> CompareView::groups() const
{
    std::vector<RunSummary> summaries;
    for (const auto &run : m_shown)
        summaries.push_back(run->summary);
    return groupRuns(summaries); // m_shown leads with the baseline, so its group comes first
}

void CompareView::fillVerdicts(const std::vector<GroupSummary> &groups)
{
    const double tolerance = m_tolerance->value();
    m_rows = compare(groups.front(), groups, tolerance);
    QStringList untuned; // by group: a group's replicates share their settings
    for (const auto &group : groups)
        if (std::any_of(group.replicates.begin(), group.replicates.end(),
                        [](const RunSummary &r) { return r.untunedSettings; }))
            untuned << QString::fromStdString(group.name).toHtmlEscaped();
    m_summary->setText(tr("Against <b>%1</b>, validation loss compared at matched tokens seen: the difference of the "
                          "means over seeds with Welch's 95% interval; same quality when it lies within ±%2 nats per "
                          "token.%3")
                           .arg(QString::fromStdString(groups.front().name).toHtmlEscaped())
                           .arg(tolerance)
                           .arg(untuned.isEmpty() ? QString()
                                                  : tr(" <i>Untuned runtime settings</i> (no <tt>optlog tune</tt> for "
                                                       "this machine and precision): %1.")
                                                        .arg(untuned.join(QStringLiteral(", ")))));
    m_decisions->setRows(m_rows);
    m_numerics->setRows(m_rows);
    m_numericsHeading->setVisible(m_numerics->rowCount() > 0);
    // The user's own words about each compared run: shown as text, never as markup.
    QStringList notes;
    for (const auto &run : m_shown) {
        const RunRecord &record = run->run();
        QStringList about;
        if (!record.tags.empty())
            about << tr("tags: %1").arg(QString::fromStdString(tagsText(record)).toHtmlEscaped());
        if (const std::string origin = originText(record, m_study.path); !origin.empty())
            about << QString::fromStdString(origin).toHtmlEscaped();
        if (record.note.empty() && about.isEmpty())
            continue;
        QString line = QStringLiteral("<b>%1</b>").arg(QString::fromStdString(record.name).toHtmlEscaped());
        if (!about.isEmpty())
            line += QStringLiteral(" — ") + about.join(QStringLiteral("; "));
        if (!record.note.empty())
            line += QStringLiteral("<br><span style=\"white-space: pre-wrap\">%1</span>")
                        .arg(QString::fromStdString(record.note).toHtmlEscaped());
        notes << line;
    }
    m_notes->setText(notes.isEmpty() ? QString() : tr("<b>Notes</b><br>") + notes.join(QStringLiteral("<br><br>")));
    m_notes->setVisible(!notes.isEmpty());
    m_verdicts->setRowCount(0);
    const Qt::Alignment right = Qt::AlignRight | Qt::AlignVCenter;
    for (const ComparisonRow &r : m_rows) {
        const VerdictCells cells = verdictCells(r, tolerance);
        const int row = m_verdicts->rowCount();
        m_verdicts->insertRow(row);
        for (size_t column = 0; column < cells.text.size(); ++column) {
            // Words to the left, figures to the right.
            const bool words = column == size_t(VerdictColumn::Run) || column == size_t(VerdictColumn::Outcome)
                               || column == size_t(VerdictColumn::Verdict);
            m_verdicts->setItem(row, int(column),
                                cell(QString::fromStdString(cells.text[column]),
                                     words ? Qt::AlignLeft | Qt::AlignVCenter : right));
        }
        m_verdicts->setVerticalHeaderItem(row, new QTableWidgetItem(m_verdicts->item(row, 0)->text()));
        m_verdicts->item(row, int(VerdictColumn::Outcome))->setToolTip(QString::fromStdString(cells.outcomeNote));
        m_verdicts->item(row, int(VerdictColumn::Mfu))->setToolTip(QString::fromStdString(cells.mfuNote));
        // The column may be narrower than the sentence.
        m_verdicts->item(row, kVerdictColumn)->setToolTip(m_verdicts->item(row, kVerdictColumn)->text());
    }
    // Every verdict in view at once: the table is the answer, it should not scroll.
    fitHeightToRows(m_verdicts);
}

void CompareView::fillCharts(const std::vector<GroupSummary> &groups)
{
    QList<ChartGroup> chartGroups;
    for (size_t i = 0; i < groups.size(); ++i)
        chartGroups << chartGroup(m_rows[i], groups[i]);
    m_charts->fill(chartGroups);
}

void CompareView::fillMemory(const std::vector<GroupSummary> &groups)
{
    // Roles as rows in their usual order (the peak's parts, then the peaks), a column per group,
    // of its first seed: memory by role hardly moves between seeds.
    std::vector<std::vector<RoleMemory>> lines;
    QStringList headers = {tr("Role")};
    for (const auto &group : groups) {
        lines.push_back(memoryByRole(group.representative().memory));
        headers << QString::fromStdString(group.name);
    }
    const auto anyRunHas = [&lines](MemoryRole role) {
        for (const auto &runLines : lines)
            for (const auto &line : runLines)
                if (line.role == role)
                    return true;
        return false;
    };

    m_memory->setRowCount(0);
    m_memory->setColumnCount(int(headers.size()));
    m_memory->setHorizontalHeaderLabels(headers);
    const Qt::Alignment right = Qt::AlignRight | Qt::AlignVCenter;
    for (MemoryRole role : kMemoryRoles) {
        if (!anyRunHas(role))
            continue;
        // A dtype belongs to a state; the peaks (the allocator's, the process's) are sums of many.
        const bool isState = isPeakPart(role);
        const int row = m_memory->rowCount();
        m_memory->insertRow(row);
        m_memory->setItem(row, 0, cell(QString::fromLatin1(memoryRoleLabel(role))));
        for (size_t r = 0; r < lines.size(); ++r) {
            QStringList text;
            for (const auto &line : lines[r]) {
                if (line.role != role)
                    continue;
                const QString dtype = isState ? QString::fromStdString(shortDtype(line.dtype)) : QString();
                text << (line.measured >= 0 ? QString::fromStdString(formatBytes(line.measured)) : tr("not measured"))
                            + (dtype.isEmpty() ? QString() : QStringLiteral(" · ") + dtype);
                if (line.predicted >= 0) {
                    const QString residual = QString::fromStdString(residualText(line));
                    text << tr("predicted %1").arg(QString::fromStdString(formatBytes(line.predicted)))
                                + (residual.isEmpty() ? QString() : QStringLiteral(" (%1)").arg(residual));
                } else if (isState && !groups[r].representative().recorder.empty()) {
                    text << tr("not predicted: recorded run"); // the memory model knows only the engine's GPT
                }
            }
            // No such state in this run (master weights outside the master modes).
            m_memory->setItem(row, int(r) + 1,
                              cell(text.isEmpty() ? QStringLiteral("–") : text.join(QLatin1Char('\n')), right));
        }
    }
    fitHeightToRows(m_memory); // nine roles at most
}

void CompareView::fillConfig(const std::vector<GroupSummary> &groups)
{
    if (groups.empty())
        return;
    std::vector<std::string> configs;
    QStringList headers = {tr("Field")};
    for (const auto &group : groups) {
        // The replicates of a group differ only in their seed: the first speaks for them. A
        // recorded run's keys are its trainer's, compared key by key.
        configs.push_back(group.representative().run.configToml);
        headers << QString::fromStdString(group.name);
    }
    const std::vector<FieldComparison> fields = compareStoredConfigs(configs);
    m_config->setRowCount(0);
    m_config->setColumnCount(int(headers.size()));
    m_config->setHorizontalHeaderLabels(headers);
    // Where a run's config came from ("run again with changes") leads the diff when any has one.
    QStringList origins;
    for (const auto &group : groups)
        origins << QString::fromStdString(originText(group.representative().run, m_study.path));
    if (std::any_of(origins.begin(), origins.end(), [](const QString &o) { return !o.isEmpty(); })) {
        m_config->insertRow(0);
        m_config->setItem(0, 0, cell(tr("(derived from)")));
        for (int i = 0; i < origins.size(); ++i)
            m_config->setItem(0, i + 1, cell(origins[i].isEmpty() ? QStringLiteral("-") : origins[i]));
    }
    for (const auto &field : fields) {
        if (field.path == "name" || field.path == "group" || (m_onlyDifferences->isChecked() && !field.differs))
            continue;
        const int row = m_config->rowCount();
        m_config->insertRow(row);
        m_config->setItem(row, 0, cell(QString::fromStdString(field.path)));
        for (size_t i = 0; i < field.values.size(); ++i) {
            auto *item = cell(QString::fromStdString(field.values[i]));
            if (field.differs && field.values[i] != field.values.front()) {
                QFont bold = item->font();
                bold.setBold(true);
                item->setFont(bold);
            }
            m_config->setItem(row, int(i) + 1, item);
        }
    }
}

} // namespace optlog
