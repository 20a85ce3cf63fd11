// SPDX-License-Identifier: MIT
#include "ui/charts/bandchart.h"

#include "ui/charts/charttheme.h"

#include <QAreaSeries>
#include <QCategoryAxis>
#include <QLegendMarker>
#include <QLineSeries>
#include <QScatterSeries>
#include <algorithm>
#include <cmath>
#include <optional>

namespace optlog {

namespace {

// y at x on a curve ascending in x, linearly interpolated; nothing outside it.
std::optional<double> valueAt(const QVector<QPointF> &curve, double x)
{
    for (qsizetype i = 0; i < curve.size(); ++i) {
        if (curve[i].x() == x)
            return curve[i].y();
        if (i > 0 && curve[i - 1].x() < x && x < curve[i].x()) {
            const double w = (x - curve[i - 1].x()) / (curve[i].x() - curve[i - 1].x());
            return curve[i - 1].y() * (1 - w) + curve[i].y() * w;
        }
    }
    return std::nullopt;
}

QColor withAlpha(QColor color, int alpha)
{
    color.setAlpha(alpha);
    return color;
}

} // namespace

BandChart::BandChart(const QString &title, const QString &xTitle, const QString &yTitle, AxisUnit yUnit, QWidget *parent)
    : CurveChart(title, xTitle, yTitle, yUnit, parent)
{ }

Band BandChart::band(const QList<QVector<QPointF>> &replicates)
{
    Band out;
    if (replicates.isEmpty())
        return out;
    for (const QPointF &p : replicates.front()) {
        double sum = 0, low = INFINITY, high = -INFINITY;
        bool everyOne = true;
        for (const auto &curve : replicates) {
            const auto y = valueAt(curve, p.x());
            if (!y || !std::isfinite(*y)) {
                everyOne = false;
                break;
            }
            sum += *y;
            low = std::min(low, *y);
            high = std::max(high, *y);
        }
        if (!everyOne)
            continue;
        out.mean.append({p.x(), sum / double(replicates.size())});
        out.low.append({p.x(), low});
        out.high.append({p.x(), high});
    }
    return out;
}

void BandChart::setGroups(const QList<BandGroupData> &groups)
{
    QChart *c = chart();
    c->removeAllSeries(); // a comparison redraws rarely: rebuilding is simpler than reconciling
    m_legendNames.clear();
    DataBounds bounds;
    const auto attach = [&](QAbstractSeries *series, bool inLegend) {
        addOnAxes(series);
        for (QLegendMarker *marker : c->legend()->markers(series))
            marker->setVisible(inLegend);
        if (inLegend)
            m_legendNames << series->name();
    };
    for (int g = 0; g < groups.size(); ++g) {
        const BandGroupData &group = groups[g];
        if (group.replicates.isEmpty())
            continue;
        const QColor color = runColor(g);
        const qsizetype seeds = group.replicates.size();
        const Band b = band(group.replicates);
        if (seeds > 1) {
            // Beneath the mean: the band, then each seed faint.
            auto *upper = new QLineSeries;
            auto *lower = new QLineSeries;
            upper->replace(b.high);
            lower->replace(b.low);
            auto *area = new QAreaSeries(upper, lower);
            upper->setParent(area);
            lower->setParent(area);
            area->setName(group.name + tr(" band"));
            area->setBrush(withAlpha(color, 45));
            area->setPen(Qt::NoPen);
            attach(area, false);
            for (const auto &curve : group.replicates) {
                auto *seed = new QLineSeries;
                seed->setName(group.name + tr(" seed"));
                QPen pen(withAlpha(color, 70));
                pen.setWidthF(0.8);
                seed->setPen(pen);
                seed->replace(curve);
                attach(seed, false);
                bounds.addAll(curve);
            }
        }
        auto *mean = new QLineSeries;
        mean->setName(seeds > 1 ? tr("%1 · mean of %2 seeds, band min–max").arg(group.name).arg(seeds)
                                : tr("%1 · 1 seed").arg(group.name));
        QPen pen(color);
        pen.setWidthF(1.8);
        mean->setPen(pen);
        mean->replace(seeds > 1 ? b.mean : group.replicates.front());
        attach(mean, true);
        bounds.addAll(mean->points());

        QVector<QPointF> marked;
        for (double x : group.markerX)
            if (const auto y = valueAt(mean->points(), x))
                marked.append({x, *y});
        if (!marked.isEmpty()) {
            auto *markers = newInstabilityMarkers(color);
            markers->setName(tr("%1 · instabilities").arg(group.name));
            markers->replace(marked);
            attach(markers, true);
        }
    }
    c->legend()->setAlignment(groups.size() > 3 ? Qt::AlignRight : Qt::AlignBottom);
    fitAxes(bounds);
}

QStringList BandChart::legendNames() const
{
    return m_legendNames;
}

} // namespace optlog
