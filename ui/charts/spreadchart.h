// SPDX-License-Identifier: MIT
#pragma once

#include <QChartView>
#include <QList>
#include <QString>

namespace optlog {

struct SpreadData
{
    QString name;
    double low = 0; // 10th percentile
    double median = 0;
    double high = 0; // 90th percentile
};

// A median with its spread per run, as box plots: steady-state tokens/s, where the spread is
// how far a shared machine's noise reaches.
class SpreadChart : public QChartView
{
    Q_OBJECT
public:
    SpreadChart(const QString &title, const QString &yTitle, QWidget *parent = nullptr);
    void setData(const QList<SpreadData> &data);
    int boxCount() const;

private:
    QString m_yTitle;
};

} // namespace optlog
