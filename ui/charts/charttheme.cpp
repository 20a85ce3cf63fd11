// SPDX-License-Identifier: MIT
#include "ui/charts/charttheme.h"

#include <QCategoryAxis>
#include <QChart>
#include <QChartView>
#include <QFont>
#include <QLegend>
#include <QPalette>
#include <algorithm>
#include <cmath>

namespace optlog {

QColor runColor(int index)
{
    // Okabe-Ito: distinguishable for the common colour-vision deficiencies; its black as a mid
    // grey, which reads on a dark chart as well as on a light one.
    static const QColor palette[] = {QColor(0x00, 0x72, 0xb2), QColor(0xe6, 0x9f, 0x00), QColor(0x00, 0x9e, 0x73),
                                     QColor(0xd5, 0x5e, 0x00), QColor(0xcc, 0x79, 0xa7), QColor(0x56, 0xb4, 0xe9),
                                     QColor(0x80, 0x80, 0x80), QColor(0xf0, 0xe4, 0x42)};
    constexpr int count = int(sizeof(palette) / sizeof(palette[0]));
    return palette[((index % count) + count) % count];
}

bool isDarkPalette(const QPalette &palette)
{
    return palette.color(QPalette::Window).lightness() < 128;
}

QColor runLabelColor(int index, const QPalette &palette)
{
    return isDarkPalette(palette) ? runColor(index).lighter(140) : runColor(index).darker(160);
}

QColor riskColor(RiskLevel level)
{
    switch (level) {
    case RiskLevel::Fine: return QColor(0xcf, 0xec, 0xd5);
    case RiskLevel::Watch: return QColor(0xfb, 0xe3, 0xa6);
    case RiskLevel::Trouble: return QColor(0xf6, 0xb8, 0xb0);
    case RiskLevel::Unknown: break;
    }
    return {};
}

QChart *setUpChartView(QChartView *view, const QString &title)
{
    auto *chart = new QChart;
    // The chart follows the palette: a white plot in a dark window would glare.
    chart->setTheme(isDarkPalette(view->palette()) ? QChart::ChartThemeDark : QChart::ChartThemeLight);
    chart->setTitle(title);
    chart->setAnimationOptions(QChart::NoAnimation); // live data: animations would lag behind it
    chart->setMargins(QMargins(4, 4, 4, 4));
    chart->setBackgroundRoundness(0);
    QFont titleFont = chart->titleFont();
    titleFont.setBold(true);
    titleFont.setPointSizeF(titleFont.pointSizeF() * 1.05);
    chart->setTitleFont(titleFont);
    chart->legend()->setAlignment(Qt::AlignBottom);
    chart->legend()->setShowToolTips(true); // an entry cut short for room shows its whole name on hover
    // setChart() releases the chart the view made for itself without deleting it (LeakSanitizer
    // showed each chart view leaking one, with its connections); the view sizes the new one.
    QChart *released = view->chart();
    view->setChart(chart);
    delete released;
    view->setRenderHint(QPainter::Antialiasing);
    view->setMinimumHeight(220);
    return chart;
}

namespace {

// The scale a unit's labels are written in for values up to `largest`: k and M for counts,
// KiB to TiB for bytes.
struct UnitScale
{
    double factor = 1;
    const char *suffix = "";
};

UnitScale unitScale(double largest, AxisUnit unit)
{
    if (unit == AxisUnit::Count) {
        if (largest >= 1e9)
            return {1e9, "G"};
        if (largest >= 1e6)
            return {1e6, "M"};
        if (largest >= 1e3)
            return {1e3, "k"};
        return {};
    }
    if (unit == AxisUnit::Bytes) {
        static const char *const suffixes[] = {" B", " KiB", " MiB", " GiB", " TiB"};
        int power = 0;
        while (power < 4 && largest >= std::ldexp(1.0, 10 * (power + 1)))
            ++power;
        return {std::ldexp(1.0, 10 * power), suffixes[power]};
    }
    return {1, unit == AxisUnit::Percent ? "%" : ""};
}

bool neverNegative(AxisUnit unit)
{
    return unit != AxisUnit::Plain;
}

} // namespace

AxisTicks roundTicks(double low, double high, AxisUnit unit, int target)
{
    AxisTicks ticks;
    if (!std::isfinite(low) || !std::isfinite(high) || high <= low)
        return ticks;
    const UnitScale scale = unitScale(std::max(std::abs(low), std::abs(high)), unit);
    const double raw = (high - low) / scale.factor / std::max(1, target - 1);
    const double decade = std::pow(10.0, std::floor(std::log10(raw)));
    // The round step nearest the raw one (Heckbert's nice numbers), so that about `target` ticks show.
    const double fraction = raw / decade;
    const double step = decade * (fraction < 1.5 ? 1 : fraction < 3 ? 2 : fraction < 7 ? 5 : 10);
    // No fractions of a byte.
    ticks.step = (unit == AxisUnit::Bytes && scale.factor == 1 ? std::max(step, 1.0) : step) * scale.factor;
    for (double v = std::ceil(low / ticks.step - 1e-9) * ticks.step; v <= high + ticks.step * 1e-9; v += ticks.step)
        ticks.values.append(std::abs(v) < ticks.step * 1e-9 ? 0.0 : v);
    return ticks;
}

QString tickLabel(double value, double step, AxisUnit unit)
{
    const UnitScale scale = unitScale(std::max(std::abs(value), step), unit);
    const double scaledStep = step / scale.factor;
    // The decimals the ticks differ in: none for a whole step, one for 0.5, two for 0.05.
    const int decimals = std::clamp(int(std::ceil(-std::log10(scaledStep) - 1e-9)), 0, 6);
    return QString::number(value / scale.factor, 'f', decimals) + QLatin1String(scale.suffix);
}

QCategoryAxis *roundAxis(const QString &title)
{
    auto *axis = new QCategoryAxis;
    axis->setTitleText(title);
    axis->setLabelsPosition(QCategoryAxis::AxisLabelsPositionOnValue);
    axis->setTruncateLabels(false); // few ticks, never "2…": a label is read whole or not drawn at all
    return axis;
}

void addAxes(QChart *chart, QCategoryAxis *x, QCategoryAxis *y)
{
    chart->addAxis(x, Qt::AlignBottom);
    chart->addAxis(y, Qt::AlignLeft);
}

int ticksFor(double pixels)
{
    return std::clamp(int(pixels / 90), 2, 6);
}

void setAxisRange(QCategoryAxis *axis, double low, double high, AxisUnit unit, bool roundEnds, int target)
{
    if (neverNegative(unit))
        low = std::max(low, 0.0), high = std::max(high, 0.0);
    if (!(high > low))
        high = low + (low > 0 ? low * 0.1 : 1);
    AxisTicks ticks = roundTicks(low, high, unit, target);
    if (roundEnds && !ticks.values.isEmpty()) {
        low = std::floor(low / ticks.step + 1e-9) * ticks.step;
        high = std::ceil(high / ticks.step - 1e-9) * ticks.step;
        ticks = roundTicks(low, high, unit, target);
    }
    QStringList labels;
    for (double v : ticks.values)
        labels << tickLabel(v, ticks.step, unit);
    // A live chart redraws every second: rebuild the ticks only when they change.
    if (labels != axis->categoriesLabels()) {
        for (const QString &label : axis->categoriesLabels())
            axis->remove(label);
        axis->setStartValue(low);
        for (int i = 0; i < labels.size(); ++i)
            axis->append(labels[i], ticks.values[i]);
    }
    axis->setStartValue(low);
    axis->setRange(low, high);
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

void DataBounds::fit(QCategoryAxis *x, AxisUnit xUnit, QCategoryAxis *y, AxisUnit yUnit, int xTicks) const
{
    if (m_xMin > m_xMax) {
        setAxisRange(x, 0, 1, xUnit, false, xTicks);
        setAxisRange(y, 0, 1, yUnit);
        return;
    }
    const double yPad = std::max(1e-9, (m_yMax - m_yMin) * 0.05);
    setAxisRange(x, m_xMin, m_xMax > m_xMin ? m_xMax : m_xMin + 1, xUnit, false, xTicks);
    setAxisRange(y, m_yMin - yPad, m_yMax + yPad, yUnit);
}

} // namespace optlog
