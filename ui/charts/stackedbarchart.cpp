// SPDX-License-Identifier: MIT
#include "ui/charts/stackedbarchart.h"

#include "ui/charts/charttheme.h"

#include <QBarCategoryAxis>
#include <QBarSet>
#include <QHorizontalStackedBarSeries>
#include <QValueAxis>
#include <algorithm>

namespace optlog {

StackedBarChart::StackedBarChart(const QString &title, const QString &valueTitle, QWidget *parent)
    : QChartView(parent)
    , m_valueTitle(valueTitle)
{
    setUpChartView(this, title);
    setData({}, {}, {});
}

void StackedBarChart::setData(const QStringList &categories, const QStringList &parts,
                              const QList<QVector<double>> &values)
{
    m_categories = categories;
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
    }
    series->setBarWidth(0.7);
    c->addSeries(series);
    auto *names = new QBarCategoryAxis;
    names->append(categories.isEmpty() ? QStringList{QString()} : categories);
    auto *axis = new QValueAxis;
    axis->setTitleText(m_valueTitle);
    const double top = totals.isEmpty() ? 0 : *std::max_element(totals.begin(), totals.end());
    setAxisRange(axis, 0, top > 0 ? top * 1.05 : 1);
    c->addAxis(names, Qt::AlignLeft);
    c->addAxis(axis, Qt::AlignBottom);
    series->attachAxis(names);
    series->attachAxis(axis);
}

} // namespace optlog
