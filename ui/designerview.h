// SPDX-License-Identifier: MIT
#pragma once

#include "core/config/studyplan.h"

#include <QHash>
#include <QList>
#include <QString>
#include <QTimer>
#include <QWidget>

class QComboBox;
class QLabel;
class QLineEdit;
class QSpinBox;
class QListWidget;
class QPushButton;
class QTableWidget;

namespace optlog {

// The experiment designer: every config field grouped as in the TOML, presets, a sweep grid,
// inline validation with the CLI's own messages, and the predicted memory by role of what is
// about to run.
class DesignerView : public QWidget
{
    Q_OBJECT
public:
    explicit DesignerView(QWidget *parent = nullptr);

    void setPreset(const QString &preset); // resets every field to the preset's value
    QString preset() const;
    void setRunName(const QString &name);
    // The text of one field's editor ("train.microbatch" -> "8"); false for an unknown path.
    bool setFieldText(const QString &path, const QString &text);
    QString fieldText(const QString &path) const;
    QString fieldError(const QString &path) const; // empty when the field is valid
    QString errors() const;                        // every problem, one per line; empty when runnable

    void setSweepAxis(int axis, const QString &path, const QString &values); // axis 0 or 1
    void setRepeats(int seeds); // replicates of each run over seeds, 1 to PlannedRun::kMaxRepeats
    // The runs "Add to queue" would add: the designed run, or one per sweep combination, each
    // as its replicates over seeds. Empty when something is invalid (errors() says what).
    QList<PlannedRun> plannedRuns() const;

    // Forces the (otherwise debounced) validation and memory prediction now.
    void revalidate();

Q_SIGNALS:
    void runsRequested(const QList<optlog::PlannedRun> &runs);

private:
    struct FieldEditor
    {
        QWidget *editor = nullptr;
        QLabel *error = nullptr;
    };
    QWidget *buildFields();
    QWidget *buildSweep();
    QWidget *buildPrediction();
    PlannedRun designedRun() const;
    void showPrediction(const PlannedRun &run);

    QComboBox *m_preset;
    QLineEdit *m_name;
    QSpinBox *m_repeats; // replicates of every designed run over seeds
    QHash<QString, FieldEditor> m_fields; // by dotted path
    QComboBox *m_sweepKey[2];
    QLineEdit *m_sweepValues[2];
    QListWidget *m_sweepPreview;
    QTableWidget *m_prediction;
    QLabel *m_predictionSummary;
    QLabel *m_errors;
    QPushButton *m_add;
    QTimer m_debounce;
    QString m_errorText;
    QList<PlannedRun> m_runs;
};

} // namespace optlog
