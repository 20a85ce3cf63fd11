// SPDX-License-Identifier: MIT
#pragma once

#include <QChartView>
#include <QList>
#include <QString>
#include <QVector>

namespace optlog {

// One horizontal bar per category (for example "fp32 · measured" and "fp32 · predicted"),
// stacked by part (memory role), on one scale in bytes; hovering a segment shows what it is.
class StackedBarChart : public QChartView
{
    Q_OBJECT
public:
    StackedBarChart(const QString &title, const QString &valueTitle, QWidget *parent = nullptr);
    // bytes[p][c]: part p of category c; hover[p][c] what its segment says on hover ("gradients,
    // bf16"), after which its bytes follow.
    void setData(const QStringList &categories, const QStringList &parts, const QList<QVector<double>> &bytes,
                 const QList<QStringList> &hover = {});
    int categoryCount() const { return int(m_categories.size()); }
    QString segmentText(int part, int category) const; // what hovering it shows

private:
    void showSegment(bool entered, int category, int part);

    QString m_valueTitle;
    QStringList m_categories;
    QList<QVector<double>> m_bytes;
    QList<QStringList> m_hover;
};

} // namespace optlog
