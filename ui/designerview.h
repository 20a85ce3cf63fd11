// SPDX-License-Identifier: MIT
#pragma once

#include "core/config/configfields.h"
#include "core/config/studyplan.h"

#include <QHash>
#include <QList>
#include <QString>
#include <QStringList>
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

class ModuleProbe;

// The experiment designer: every config field grouped as in the TOML, presets, a sweep grid,
// inline validation with the CLI's own messages, and the predicted memory by role of what is
// about to run (a TorchScript module's from its probes, which the engine binary runs on request).
class DesignerView : public QWidget
{
    Q_OBJECT
public:
    // Without an engine binary a module's prediction comes only from probes already cached.
    explicit DesignerView(const QString &optlogBinary = {}, QWidget *parent = nullptr);

    void setPreset(const QString &preset); // resets every field to the preset's value; forgets a derivation
    // "Run again with changes": every field as the stored run `from` ("STUDY:ID") had it, named
    // `name`; the runs it queues start from that config and link to it. `label` says which run.
    void deriveFrom(const QString &from, const std::string &configToml, const QString &label, const QString &name);
    QString derivedFrom() const { return m_origin.from; }
    QString preset() const;
    void setRunName(const QString &name);
    // The text of one field's editor ("train.microbatch" -> "8"); false for an unknown path.
    bool setFieldText(const QString &path, const QString &text);
    QString fieldText(const QString &path) const;
    QString fieldError(const QString &path) const; // empty when the field is valid
    QString errors() const;                        // every problem, one per line; empty when runnable
    QString predictionSummary() const;             // the line under the predicted memory: peak, batch, tokens per step
    QStringList predictedRoles() const;            // the prediction's rows, "role: bytes" (empty: no prediction)
    // A TorchScript module not yet probed in the designed setting: probes it through the engine
    // (a few short runs), then predicts. False where it cannot (no engine binary, probing already).
    bool probeModule();
    bool isProbingModule() const;

    void setSweepAxis(int axis, const QString &path, const QString &values); // axis 0 or 1
    void setRepeats(int seeds); // replicates of each run over seeds, 1 to PlannedRun::kMaxRepeats
    // The runs "Add to queue" would add: the designed run, or one per sweep combination, each
    // as its replicates over seeds. Empty when something is invalid (errors() says what).
    QList<PlannedRun> plannedRuns() const;

    // Forces the (otherwise debounced) validation and memory prediction now.
    void revalidate();

Q_SIGNALS:
    void runsRequested(const QList<optlog::PlannedRun> &runs);
    void moduleProbed(); // a probe the designer started ended; predictionSummary() says how

private:
    struct FieldEditor
    {
        QWidget *editor = nullptr;
        QLabel *error = nullptr;
    };
    void buildLayout();
    QWidget *buildFields();
    QWidget *buildSweep();
    QWidget *buildPrediction();
    PlannedRun designedRun() const;
    void showPrediction(const PlannedRun &run);

    // The stored run the designed run is made from; empty `from`: designed from the preset.
    struct Origin
    {
        QString from;
        std::string configToml;
    };
    Origin m_origin;
    QLabel *m_originLabel;
    QComboBox *m_preset;
    QLineEdit *m_name;
    QSpinBox *m_repeats;                  // replicates of every designed run over seeds
    QHash<QString, FieldEditor> m_fields; // by dotted path
    QComboBox *m_sweepKey[2];
    QLineEdit *m_sweepValues[2];
    QListWidget *m_sweepPreview;
    QTableWidget *m_prediction;
    QLabel *m_predictionSummary;
    ModuleProbe *m_moduleProbe;
    QPushButton *m_probe; // "Probe the module", shown where a module's setting has no probes
    QLabel *m_errors;
    QPushButton *m_add;
    QTimer m_debounce;
    QString m_errorText;
    QList<PlannedRun> m_runs;
};

} // namespace optlog
