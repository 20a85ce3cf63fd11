// SPDX-License-Identifier: MIT
#include "ui/charts/stackedbarchart.h"

#include "core/contract/format.h"
#include "ui/charts/charttheme.h"

#include <QBarCategoryAxis>
#include <QBarSet>
#include <QCategoryAxis>
#include <QCursor>
#include <QHorizontalStackedBarSeries>
#include <QToolTip>
#include <algorithm>

namespace optlog {

StackedBarChart::StackedBarChart(const QString &title, const QString &valueTitle, QWidget *parent)
    : QChartView(parent)
    , m_valueTitle(valueTitle)
{
    setUpChartView(this, title);
    setData({}, {}, {});
}

QString StackedBarChart::segmentText(int part, int category) const
{
    if (part < 0 || part >= m_bytes.size() || category < 0 || category >= m_bytes[part].size())
        return {};
    const QString what = part < m_hover.size() && category < m_hover[part].size() ? m_hover[part][category] : QString();
    return QStringLiteral("%1: %2 — %3")
        .arg(m_categories.value(category), what, QString::fromStdString(formatBytes(int64_t(m_bytes[part][category]))));
}

void StackedBarChart::showSegment(bool entered, int category, int part)
{
    if (entered)
        QToolTip::showText(QCursor::pos(), segmentText(part, category), this);
    else
        QToolTip::hideText();
}

void StackedBarChart::setData(const QStringList &categories, const QStringList &parts,
                              const QList<QVector<double>> &values, const QList<QStringList> &hover)
{
    m_categories = categories;
    m_bytes = values;
    m_hover = hover;
    QChart *c = chart();
    c->removeAllSeries();
    for (QAbstractAxis *axis : c->axes())
        c->removeAxis(axis), delete axis;
    auto *series = new QHorizontalStackedBarSeries;
    QVector<double> totals(categories.size(), 0.0);
    for (int p = 0; p < parts.size() && p < values.size(); ++p) {
        auto *set = new QBarSet(parts[p]);
        set->setColor(runColor(p + 1)); // parts, not runs, carry the colours here
        for (int i = 0; i < categories.size(); ++i) {
            const double v = i < values[p].size() ? values[p][i] : 0.0;
            set->append(v);
            totals[i] += v;
        }
        series->append(set);
        connect(set, &QBarSet::hovered, this, [this, p](bool entered, int index) { showSegment(entered, index, p); });
    }
    series->setBarWidth(0.7);
    c->addSeries(series);
    auto *names = new QBarCategoryAxis;
    names->setTruncateLabels(false);
    names->append(categories.isEmpty() ? QStringList{QString()} : categories);
    auto *axis = roundAxis(m_valueTitle);
    const double top = totals.isEmpty() ? 0 : *std::max_element(totals.begin(), totals.end());
    setAxisRange(axis, 0, top > 0 ? top * 1.05 : 1, AxisUnit::Bytes);
    c->addAxis(names, Qt::AlignLeft);
    c->addAxis(axis, Qt::AlignBottom);
    series->attachAxis(names);
    series->attachAxis(axis);
}

} // namespace optlog
