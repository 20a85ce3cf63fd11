// SPDX-License-Identifier: MIT
#include "ui/charts/charttheme.h"

#include <QChart>
#include <QChartView>
#include <QFont>
#include <QLegend>
#include <QValueAxis>
#include <algorithm>
#include <cmath>

namespace optlog {

QColor runColor(int index)
{
    // Okabe-Ito: distinguishable for the common colour-vision deficiencies.
    static const QColor palette[] = {QColor(0x00, 0x72, 0xb2), QColor(0xe6, 0x9f, 0x00), QColor(0x00, 0x9e, 0x73),
                                     QColor(0xd5, 0x5e, 0x00), QColor(0xcc, 0x79, 0xa7), QColor(0x56, 0xb4, 0xe9),
                                     QColor(0x33, 0x33, 0x33), QColor(0xf0, 0xe4, 0x42)};
    constexpr int count = int(sizeof(palette) / sizeof(palette[0]));
    return palette[((index % count) + count) % count];
}

QChart *setUpChartView(QChartView *view, const QString &title)
{
    auto *chart = new QChart;
    chart->setTitle(title);
    chart->setAnimationOptions(QChart::NoAnimation); // live data: animations would lag behind it
    chart->setMargins(QMargins(4, 4, 4, 4));
    chart->setBackgroundRoundness(0);
    QFont titleFont = chart->titleFont();
    titleFont.setBold(true);
    titleFont.setPointSizeF(titleFont.pointSizeF() * 1.05);
    chart->setTitleFont(titleFont);
    chart->legend()->setAlignment(Qt::AlignBottom);
    view->setChart(chart);
    view->setRenderHint(QPainter::Antialiasing);
    view->setMinimumHeight(220);
    return chart;
}

void addValueAxes(QChart *chart, QValueAxis *x, const QString &xTitle, QValueAxis *y, const QString &yTitle)
{
    x->setTitleText(xTitle);
    y->setTitleText(yTitle);
    chart->addAxis(x, Qt::AlignBottom);
    chart->addAxis(y, Qt::AlignLeft);
}

void setAxisRange(QValueAxis *axis, double low, double high, bool roundEnds)
{
    axis->setRange(low, high);
    axis->setTickCount(5);
    if (roundEnds)
        axis->applyNiceNumbers();
    const double largest = std::max(std::abs(axis->min()), std::abs(axis->max()));
    const double step = (axis->max() - axis->min()) / std::max(1, axis->tickCount() - 1);
    // Tokens and bytes read best whole; losses need the decimals their ticks differ in.
    const int decimals = largest >= 100 || step >= 1 ? 0 : std::clamp(int(std::ceil(-std::log10(step))), 1, 4);
    axis->setLabelFormat(QStringLiteral("%.") + QString::number(decimals) + QStringLiteral("f"));
}

void DataBounds::add(const QPointF &p)
{
    if (!std::isfinite(p.y()))
        return;
    m_xMin = std::min(m_xMin, p.x());
    m_xMax = std::max(m_xMax, p.x());
    m_yMin = std::min(m_yMin, p.y());
    m_yMax = std::max(m_yMax, p.y());
}

void DataBounds::fit(QValueAxis *x, QValueAxis *y) const
{
    if (m_xMin > m_xMax) {
        x->setRange(0, 1);
        y->setRange(0, 1);
        return;
    }
    const double yPad = std::max(1e-9, (m_yMax - m_yMin) * 0.05);
    setAxisRange(x, m_xMin, m_xMax > m_xMin ? m_xMax : m_xMin + 1, false);
    setAxisRange(y, m_yMin - yPad, m_yMax + yPad);
}

} // namespace optlog
