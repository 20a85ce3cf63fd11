// SPDX-License-Identifier: MIT
#include "ui/charts/spreadchart.h"

#include "ui/charts/charttheme.h"

#include <QBarCategoryAxis>
#include <QBoxPlotSeries>
#include <QBoxSet>
#include <QCategoryAxis>
#include <algorithm>

namespace optlog {

SpreadChart::SpreadChart(const QString &title, const QString &yTitle, QWidget *parent)
    : QChartView(parent)
    , m_yTitle(yTitle)
{
    setUpChartView(this, title)->legend()->hide();
    setData({});
}

void SpreadChart::setData(const QList<SpreadData> &data)
{
    // Few boxes and rare updates (a selection change): rebuilding is simpler than patching.
    QChart *c = chart();
    c->removeAllSeries();
    for (QAbstractAxis *axis : c->axes())
        c->removeAxis(axis), delete axis;
    auto *series = new QBoxPlotSeries;
    QStringList names;
    double top = 0;
    for (int i = 0; i < data.size(); ++i) {
        const SpreadData &d = data[i];
        auto *box = new QBoxSet(d.low, d.low, d.median, d.high, d.high, d.name);
        box->setBrush(runColor(i).lighter(140));
        box->setPen(QPen(runColor(i).darker(120), 1.5));
        series->append(box);
        names << d.name;
        top = std::max(top, d.high);
    }
    c->addSeries(series);
    auto *x = new QBarCategoryAxis;
    x->append(names.isEmpty() ? QStringList{QString()} : names);
    // Many long names: upright, each in its own column, where slanted ones would collide and Qt
    // would drop some; and whole, never cut, since a cut name could be any of several runs.
    x->setLabelsAngle(names.size() > 4 ? -90 : 0);
    x->setTruncateLabels(false);
    auto *y = roundAxis(m_yTitle);
    setAxisRange(y, 0, top > 0 ? top * 1.1 : 1, AxisUnit::Count);
    c->addAxis(x, Qt::AlignBottom);
    c->addAxis(y, Qt::AlignLeft);
    series->attachAxis(x);
    series->attachAxis(y);
}

int SpreadChart::boxCount() const
{
    const auto series = chart()->series();
    return series.isEmpty() ? 0 : int(static_cast<QBoxPlotSeries *>(series.first())->count());
}

} // namespace optlog
