// SPDX-License-Identifier: MIT
#pragma once

#include <QChartView>
#include <QList>
#include <QString>
#include <QVector>

namespace optlog {

// One horizontal bar per category (for example "fp32 · measured" and "fp32 · predicted"),
// stacked by part (memory role), in the unit the caller names.
class StackedBarChart : public QChartView
{
    Q_OBJECT
public:
    StackedBarChart(const QString &title, const QString &valueTitle, QWidget *parent = nullptr);
    // values[p][c]: part p of category c.
    void setData(const QStringList &categories, const QStringList &parts, const QList<QVector<double>> &values);
    int categoryCount() const { return int(m_categories.size()); }

private:
    QString m_valueTitle;
    QStringList m_categories;
};

} // namespace optlog
