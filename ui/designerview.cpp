// SPDX-License-Identifier: MIT
#include "ui/designerview.h"

#include "core/analysis/planruns.h"
#include "core/config/config.h"
#include "core/config/configfields.h"
#include "core/config/presets.h"
#include "core/config/sweep.h"
#include "ui/moduleprobe.h"
#include "ui/tradeoffs.h"

#include <QCheckBox>
#include <QComboBox>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QPushButton>
#include <QScrollArea>
#include <QShortcut>
#include <QSpinBox>
#include <QTableWidget>
#include <QVBoxLayout>

namespace optlog {

namespace {

QString editorText(QWidget *editor)
{
    if (auto *line = qobject_cast<QLineEdit *>(editor))
        return line->text().trimmed();
    if (auto *combo = qobject_cast<QComboBox *>(editor))
        return combo->currentText();
    if (auto *check = qobject_cast<QCheckBox *>(editor))
        return check->isChecked() ? QStringLiteral("true") : QStringLiteral("false");
    return {};
}

void setEditorText(QWidget *editor, const QString &text)
{
    if (auto *line = qobject_cast<QLineEdit *>(editor))
        line->setText(text);
    else if (auto *combo = qobject_cast<QComboBox *>(editor))
        combo->setCurrentText(text);
    else if (auto *check = qobject_cast<QCheckBox *>(editor))
        check->setChecked(text == QLatin1String("true"));
}

} // namespace

DesignerView::DesignerView(const QString &optlogBinary, QWidget *parent)
    : QWidget(parent)
    , m_originLabel(new QLabel)
    , m_preset(new QComboBox)
    , m_name(new QLineEdit)
    , m_repeats(new QSpinBox)
    , m_sweepPreview(new QListWidget)
    , m_prediction(new QTableWidget(0, 3))
    , m_predictionSummary(new QLabel)
    , m_moduleProbe(new ModuleProbe(optlogBinary, this))
    , m_probe(new QPushButton(tr("Probe the module")))
    , m_errors(new QLabel)
    , m_add(new QPushButton(tr("Add to queue")))
{
    for (const auto &name : presetNames())
        m_preset->addItem(QString::fromStdString(name));
    m_preset->setToolTip(tr("Built-in starting points; every field below can then be changed."));
    m_name->setPlaceholderText(tr("run name (default: the preset's name)"));
    m_repeats->setRange(1, int(PlannedRun::kMaxRepeats));
    m_repeats->setToolTip(tr("Train each run this many times, over seeds train.seed, +1, ...: the verdicts then "
                             "know the seed noise. The replicates form one group named after the run."));
    m_errors->setWordWrap(true);
    m_errors->setStyleSheet(QStringLiteral("color: #c62828;"));
    m_add->setDefault(true);
    m_add->setToolTip(tr("Queue the designed run, or every run of the sweep (Ctrl+Return)"));
    // Not the button's own shortcut: setText() replaces that with the text's mnemonic.
    auto *addShortcut = new QShortcut(QKeySequence(Qt::CTRL | Qt::Key_Return), this);
    connect(addShortcut, &QShortcut::activated, m_add, &QPushButton::click);

    buildLayout();

    m_debounce.setSingleShot(true);
    m_debounce.setInterval(150); // validate once typing pauses, not per keystroke
    connect(&m_debounce, &QTimer::timeout, this, &DesignerView::revalidate);
    connect(m_preset, &QComboBox::currentTextChanged, this, &DesignerView::setPreset);
    connect(m_name, &QLineEdit::textChanged, this, [this] { m_debounce.start(); });
    connect(m_repeats, &QSpinBox::valueChanged, this, [this] { m_debounce.start(); });
    connect(m_probe, &QPushButton::clicked, this, &DesignerView::probeModule);
    connect(m_moduleProbe, &ModuleProbe::finished, this, [this] {
        revalidate(); // the probes are in the cache now, or lastError() says why not
        Q_EMIT moduleProbed();
    });
    connect(m_add, &QPushButton::clicked, this, [this] {
        revalidate();
        if (!m_runs.isEmpty())
            Q_EMIT runsRequested(m_runs);
    });

    const int defaultIndex = m_preset->findText(QStringLiteral("default"));
    m_preset->setCurrentIndex(defaultIndex >= 0 ? defaultIndex : 0);
    setPreset(m_preset->currentText());
}

// The run's name and seeds above; its fields on the left, the prediction, the sweep and the
// button that queues them on the right.
void DesignerView::buildLayout()
{
    auto *top = new QHBoxLayout;
    top->addWidget(new QLabel(tr("Preset")));
    top->addWidget(m_preset);
    top->addSpacing(12);
    top->addWidget(new QLabel(tr("Name")));
    top->addWidget(m_name, 1);
    top->addSpacing(12);
    top->addWidget(new QLabel(tr("Seeds")));
    top->addWidget(m_repeats);

    m_originLabel->setWordWrap(true);
    m_originLabel->hide();

    auto *fieldsScroll = new QScrollArea;
    fieldsScroll->setWidget(buildFields());
    fieldsScroll->setWidgetResizable(true);
    fieldsScroll->setFrameShape(QFrame::NoFrame);

    auto *side = new QVBoxLayout;
    side->addWidget(buildPrediction(), 3);
    side->addWidget(buildSweep(), 2);
    side->addWidget(m_errors);
    side->addWidget(m_add);

    auto *body = new QHBoxLayout;
    body->addWidget(fieldsScroll, 3);
    body->addLayout(side, 2);

    auto *layout = new QVBoxLayout(this);
    layout->addLayout(top);
    layout->addWidget(m_originLabel);
    layout->addLayout(body, 1);
}

QWidget *DesignerView::buildFields()
{
    auto *container = new QWidget;
    auto *grid = new QGridLayout(container);
    int slot = 0;
    for (const std::string &section : configSections()) {
        auto *group = new QGroupBox(QString::fromStdString(section));
        auto *form = new QFormLayout(group);
        form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
        for (const auto &field : configFields()) {
            if (field.section != section)
                continue;
            const QString path = QString::fromStdString(field.path());
            RunConfig probe;
            const auto ref = field.ref(probe);
            QWidget *editor;
            if (std::holds_alternative<bool *>(ref)) {
                auto *check = new QCheckBox;
                connect(check, &QCheckBox::toggled, this, [this] { m_debounce.start(); });
                editor = check;
            } else if (!field.choices.empty()) {
                auto *combo = new QComboBox;
                for (const auto &choice : field.choices)
                    combo->addItem(QString::fromStdString(choice));
                connect(combo, &QComboBox::currentTextChanged, this, [this] { m_debounce.start(); });
                editor = combo;
            } else {
                auto *line = new QLineEdit;
                connect(line, &QLineEdit::textChanged, this, [this] { m_debounce.start(); });
                editor = line;
            }
            editor->setObjectName(path); // found by it in tests and by accessibility tools
            const QString tradeoff = techniqueTradeoff(path);
            const QString help = QString::fromStdString(field.help);
            editor->setToolTip(tradeoff.isEmpty() ? help : help + QStringLiteral("\n\n") + tradeoff);
            auto *error = new QLabel;
            error->setWordWrap(true);
            error->setStyleSheet(QStringLiteral("color: #c62828;"));
            error->hide();
            auto *cell = new QWidget;
            auto *cellLayout = new QVBoxLayout(cell);
            cellLayout->setContentsMargins(0, 0, 0, 0);
            cellLayout->setSpacing(2);
            cellLayout->addWidget(editor);
            cellLayout->addWidget(error);
            auto *label = new QLabel(QString::fromStdString(field.key));
            label->setToolTip(editor->toolTip());
            form->addRow(label, cell);
            m_fields.insert(path, {editor, error});
        }
        grid->addWidget(group, slot / 2, slot % 2);
        ++slot;
    }
    grid->setRowStretch(grid->rowCount(), 1);
    return container;
}

QWidget *DesignerView::buildSweep()
{
    auto *group = new QGroupBox(tr("Sweep"));
    group->setToolTip(tr("Each axis takes comma-separated values; the sweep queues every combination."));
    auto *form = new QFormLayout(group);
    for (int axis = 0; axis < 2; ++axis) {
        m_sweepKey[axis] = new QComboBox;
        m_sweepKey[axis]->addItem(tr("(none)"));
        for (const auto &field : configFields())
            if (!field.section.empty())
                m_sweepKey[axis]->addItem(QString::fromStdString(field.path()));
        m_sweepValues[axis] = new QLineEdit;
        m_sweepValues[axis]->setPlaceholderText(axis == 0 ? tr("e.g. 2, 4, 8") : tr("e.g. fp32, autocast-bf16"));
        auto *row = new QHBoxLayout;
        row->addWidget(m_sweepKey[axis], 1);
        row->addWidget(m_sweepValues[axis], 2);
        form->addRow(axis == 0 ? tr("Axis 1") : tr("Axis 2"), row);
        connect(m_sweepKey[axis], &QComboBox::currentTextChanged, this, [this] { m_debounce.start(); });
        connect(m_sweepValues[axis], &QLineEdit::textChanged, this, [this] { m_debounce.start(); });
    }
    m_sweepPreview->setObjectName(QStringLiteral("sweepPreview"));
    m_sweepPreview->setMaximumHeight(120);
    form->addRow(tr("Runs"), m_sweepPreview);
    return group;
}

void DesignerView::setPreset(const QString &preset)
{
    if (m_preset->currentText() != preset)
        return m_preset->setCurrentText(preset); // re-enters through currentTextChanged
    m_origin = {};
    m_originLabel->hide();
    RunConfig config = loadRunConfig(preset.toStdString(), "", {});
    for (const auto &field : configFields()) {
        const auto it = m_fields.constFind(QString::fromStdString(field.path()));
        if (it != m_fields.constEnd())
            setEditorText(it->editor, QString::fromStdString(optlog::fieldText(field, config)));
    }
    revalidate();
}

void DesignerView::deriveFrom(const QString &from, const std::string &configToml, const QString &label,
                              const QString &name)
{
    const RunConfig config = loadDerivedConfig(configToml, label.toStdString(), {});
    for (const auto &field : configFields()) {
        const auto it = m_fields.constFind(QString::fromStdString(field.path()));
        if (it != m_fields.constEnd())
            setEditorText(it->editor, QString::fromStdString(optlog::fieldText(field, config)));
    }
    m_origin = {from, configToml};
    m_name->setText(name);
    m_originLabel->setText(tr("<b>Derived from %1.</b> Every field is as that run had it: change what you want "
                              "to try; the new run links to it. Choosing a preset starts afresh.")
                               .arg(label.toHtmlEscaped()));
    m_originLabel->show();
    revalidate();
}

QString DesignerView::preset() const
{
    return m_preset->currentText();
}

void DesignerView::setRunName(const QString &name)
{
    m_name->setText(name);
}

bool DesignerView::setFieldText(const QString &path, const QString &text)
{
    const auto it = m_fields.constFind(path);
    if (it == m_fields.constEnd())
        return false;
    setEditorText(it->editor, text);
    return editorText(it->editor) == text;
}

QString DesignerView::fieldText(const QString &path) const
{
    const auto it = m_fields.constFind(path);
    return it == m_fields.constEnd() ? QString() : editorText(it->editor);
}

QString DesignerView::fieldError(const QString &path) const
{
    const auto it = m_fields.constFind(path);
    return it == m_fields.constEnd() || it->error->isHidden() ? QString() : it->error->text();
}

QString DesignerView::errors() const
{
    return m_errorText;
}

void DesignerView::setSweepAxis(int axis, const QString &path, const QString &values)
{
    m_sweepKey[axis]->setCurrentText(path.isEmpty() ? tr("(none)") : path);
    m_sweepValues[axis]->setText(values);
}

void DesignerView::setRepeats(int seeds)
{
    m_repeats->setValue(seeds);
}

QList<PlannedRun> DesignerView::plannedRuns() const
{
    return m_runs;
}

PlannedRun DesignerView::designedRun() const
{
    PlannedRun run;
    run.preset = m_preset->currentText().toStdString();
    run.name = m_name->text().trimmed().isEmpty() ? run.preset : m_name->text().trimmed().toStdString();
    if (!m_origin.from.isEmpty()) {
        run.preset.clear();
        run.from = m_origin.from.toStdString();
        run.fromToml = m_origin.configToml;
    }
    // Only what differs from the preset (or the stored run) becomes an override, so a queued run
    // reads like the CLI's.
    const RunConfig base = run.from.empty() ? loadRunConfig(run.preset, "", {})
                                            : loadDerivedConfig(run.fromToml, run.from, {});
    run.overrides = overridesFrom(base, [this](const ConfigField &field) -> std::optional<std::string> {
        const auto it = m_fields.constFind(QString::fromStdString(field.path()));
        // The name and group are the run's, not settings.
        if (field.section.empty() || it == m_fields.constEnd())
            return std::nullopt;
        return editorText(it->editor).toStdString();
    });
    return run;
}

void DesignerView::revalidate()
{
    m_debounce.stop();
    QStringList problems;
    for (auto it = m_fields.begin(); it != m_fields.end(); ++it)
        it->error->hide();
    auto showAt = [this, &problems](const ConfigError &error) {
        const QString message = QString::fromStdString(error.what());
        problems << message;
        const auto it = m_fields.constFind(QString::fromStdString(error.field()));
        if (it != m_fields.constEnd()) {
            it->error->setText(message);
            it->error->show();
        }
    };

    // A TorchScript module's own code is its shape: the built-in GPT's fields are kept, greyed
    // (model.source's help says why).
    const bool ownModule = fieldText(QStringLiteral("model.source"))
                           == QString::fromStdString(nameOf(ModelSource::TorchScript));
    for (const auto &path : builtinShapeFields())
        if (const auto it = m_fields.constFind(QString::fromStdString(path)); it != m_fields.constEnd())
            it->editor->setEnabled(!ownModule);

    const PlannedRun run = designedRun();
    // Each field alone first, so that every bad field is marked, not only the first one.
    const RunConfig base = loadRunConfig(run.preset, "", {});
    for (const auto &assignment : run.overrides) {
        RunConfig probe = base;
        try {
            applyOverride(probe, assignment);
        } catch (const ConfigError &e) {
            showAt(e);
        }
    }
    m_runs.clear();
    std::vector<SkippedRun> skipped;
    if (problems.isEmpty()) {
        try {
            run.config(); // the rules that involve several fields, with the CLI's messages
            std::vector<SweepAxis> axes;
            for (int axis = 0; axis < 2; ++axis)
                if (m_sweepKey[axis]->currentIndex() > 0)
                    axes.push_back({m_sweepKey[axis]->currentText().toStdString(),
                                    splitSweepValues(m_sweepValues[axis]->text().toStdString())});
            StudyPlan sweep;
            for (PlannedRun planned : expandSweep(run, axes)) {
                planned.repeats = m_repeats->value();
                sweep.runs.push_back(std::move(planned));
            }
            // As designed, each time: a run the study completed before is queued again. The sweep's
            // points a TorchScript module cannot take by the config's rules are left out, as
            // `optlog study` leaves them; its code is checked when the engine starts the run.
            PlanRuns runs = planRuns(std::move(sweep), {});
            m_runs = QList<PlannedRun>(runs.replicates.begin(), runs.replicates.end());
            skipped = std::move(runs.skipped);
        } catch (const ConfigError &e) {
            showAt(e);
        }
    }
    m_errorText = problems.join(QLatin1Char('\n'));
    m_errors->setText(m_errorText);
    m_errors->setVisible(!problems.isEmpty());
    m_add->setEnabled(!m_runs.isEmpty());
    m_add->setText(m_runs.size() > 1 ? tr("Add %1 runs to queue").arg(m_runs.size()) : tr("Add to queue"));
    m_sweepPreview->clear();
    for (const auto &planned : m_runs)
        m_sweepPreview->addItem(QString::fromStdString(planned.name));
    for (const auto &left : skipped) {
        auto *item
            = new QListWidgetItem(tr("%1: skipped, the model cannot take it").arg(QString::fromStdString(left.name)),
                                  m_sweepPreview);
        item->setToolTip(QString::fromStdString(left.reason));
        item->setFlags(Qt::NoItemFlags);
    }
    showPrediction(m_runs.isEmpty() ? run : m_runs.front());
}

} // namespace optlog
