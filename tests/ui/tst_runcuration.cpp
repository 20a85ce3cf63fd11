// SPDX-License-Identifier: MIT
// Curating the open study in the workbench, offscreen: rename, delete with its confirmation, a note
// edited in its dialog and shown in Compare, the Runs list's filter (remembered per study), and
// runs imported from another study.
#include "core/config/config.h"
#include "core/config/configfields.h"
#include "core/store/curation.h"
#include "core/store/store.h"
#include "tests/common/testpaths.h"
#include "ui/compareview.h"
#include "ui/curationcontroller.h"
#include "ui/designerview.h"
#include "ui/mainwindow.h"
#include "ui/runsview.h"
#include "ui/runtablemodel.h"
#include "ui/studywatcher.h"

#include <QAbstractButton>
#include <QAction>
#include <QInputDialog>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QMimeData>
#include <QSettings>
#include <QTableView>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTimer>
#include <QtTest>
#include <functional>

using namespace optlog;

namespace {

// A finished run with a few steps and a validation point: what the Runs list and Compare show.
int64_t addRun(Store &store, const std::string &name, const std::string &mode)
{
    RunConfig config;
    config.name = name;
    config.precision.mode = mode;
    config.train.steps = 4;
    config.memory.warmupSteps = 1;
    const int64_t id = store.createRun(name, toToml(config));
    std::vector<StepMetrics> metrics;
    for (int64_t step = 0; step < 4; ++step) {
        StepMetrics m;
        m.step = step;
        m.tokens = (step + 1) * 256;
        m.trainLoss = 5.0 - 0.1 * double(step);
        m.learningRate = 1e-3;
        m.gradNorm = 0.5;
        m.stepSeconds = 0.1;
        m.tokensPerSecond = 2560;
        metrics.push_back(m);
    }
    store.appendMetrics(id, metrics);
    store.appendValidation(id, {{3, 1024, 4.5, 16, 0.2}});
    store.finishRun(id, Outcome::Completed, 3, "");
    return id;
}

// Answers the next modal dialog with `answer` once it is up (the static QInputDialog and
// QMessageBox helpers block until it is closed).
void whenDialogShows(QObject *context, std::function<void(QWidget *)> answer)
{
    auto *timer = new QTimer(context);
    timer->setInterval(20);
    QObject::connect(timer, &QTimer::timeout, context, [timer, answer] {
        if (QWidget *dialog = QApplication::activeModalWidget()) {
            timer->stop();
            timer->deleteLater();
            answer(dialog);
        }
    });
    timer->start();
}

QStringList shownNames(const RunTableModel *model)
{
    QStringList names;
    for (int row = 0; row < model->rowCount(); ++row)
        names << model->row(row).name;
    return names;
}

int rowOf(const RunTableModel *model, const QString &name)
{
    for (int row = 0; row < model->rowCount(); ++row)
        if (model->row(row).name == name)
            return row;
    return -1;
}

} // namespace

class tst_RunCuration : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        QSettings().clear();
        QVERIFY(m_dir.isValid());
    }

    void init()
    {
        m_study = m_dir.filePath(QStringLiteral("%1.sqlite").arg(QTest::currentTestFunction()));
        Store store(m_study.toStdString());
        addRun(store, "fp32", "fp32");
        addRun(store, "pure", "pure-bf16");
        addRun(store, "auto", "autocast-bf16");
        m_window = std::make_unique<MainWindow>(optlog::testing::optlogBinary());
        QVERIFY(m_window->openStudy(m_study));
        m_window->watcher()->refresh();
        QTRY_COMPARE(m_window->runModel()->rowCount(), 3);
    }

    void cleanup() { m_window.reset(); }

    void renameInItsDialog()
    {
        select(QStringLiteral("fp32"));
        whenDialogShows(this, [](QWidget *dialog) {
            auto *input = qobject_cast<QInputDialog *>(dialog);
            QVERIFY(input);
            QCOMPARE(input->textValue(), QStringLiteral("fp32"));
            input->setTextValue(QStringLiteral("baseline"));
            input->accept();
        });
        m_window->curation()->renameAction()->trigger();
        QTRY_VERIFY(shownNames(m_window->runModel()).contains(QStringLiteral("baseline")));
        const RunRecord run = *Store(m_study.toStdString(), Store::Access::ReadOnly).findRun("baseline");
        QCOMPARE(run.formerNames, std::vector<std::string>{"fp32"});

        // A name in use is refused with the store's reason, and nothing changes.
        select(QStringLiteral("baseline"));
        QString refusal;
        whenDialogShows(this, [this, &refusal](QWidget *dialog) {
            qobject_cast<QInputDialog *>(dialog)->setTextValue(QStringLiteral("pure"));
            qobject_cast<QInputDialog *>(dialog)->accept();
            whenDialogShows(this, [&refusal](QWidget *box) {
                refusal = qobject_cast<QMessageBox *>(box)->text();
                qobject_cast<QMessageBox *>(box)->accept();
            });
        });
        m_window->curation()->renameAction()->trigger();
        QTRY_VERIFY(!refusal.isEmpty());
        QVERIFY2(refusal.contains(QStringLiteral("already has a run named \"pure\"")), qPrintable(refusal));
        QVERIFY(shownNames(m_window->runModel()).contains(QStringLiteral("baseline")));
    }

    void deleteAsksFirst()
    {
        select(QStringLiteral("pure"));
        QString question;
        whenDialogShows(this, [&question](QWidget *dialog) {
            auto *box = qobject_cast<QMessageBox *>(dialog);
            question = box->text();
            box->button(QMessageBox::No)->click();
        });
        m_window->curation()->deleteAction()->trigger();
        QVERIFY2(question.contains(QStringLiteral("cannot be undone")), qPrintable(question));
        QCOMPARE(Store(m_study.toStdString(), Store::Access::ReadOnly).runs().size(), size_t(3)); // No keeps it

        select(QStringLiteral("pure"));
        whenDialogShows(this, [](QWidget *dialog) {
            qobject_cast<QMessageBox *>(dialog)->button(QMessageBox::Yes)->click();
        });
        m_window->curation()->deleteAction()->trigger();
        QTRY_COMPARE(m_window->runModel()->rowCount(), 2);
        QVERIFY(!shownNames(m_window->runModel()).contains(QStringLiteral("pure")));
        const Store store(m_study.toStdString(), Store::Access::ReadOnly);
        QCOMPARE(store.runs().size(), size_t(2));
        QVERIFY(store.metrics(2).empty());
    }

    void noteEditedInItsDialogShowsInCompare()
    {
        select(QStringLiteral("auto"));
        const QString note = QStringLiteral("spikes at step 80 <b>not bold</b>\nretry with a lower LR");
        whenDialogShows(this, [&note](QWidget *dialog) {
            auto *input = qobject_cast<QInputDialog *>(dialog);
            input->setTextValue(note);
            input->accept();
        });
        m_window->curation()->noteAction()->trigger();
        QTRY_COMPARE(QString::fromStdString(Store(m_study.toStdString(), Store::Access::ReadOnly).findRun("auto")->note),
                     note);
        QTRY_VERIFY(m_window->runModel()->row(rowOf(m_window->runModel(), QStringLiteral("auto"))).note == note);
        const QModelIndex name = m_window->runModel()->index(rowOf(m_window->runModel(), QStringLiteral("auto")),
                                                             RunTableModel::Name);
        QVERIFY(name.data(Qt::ToolTipRole).toString().contains(QStringLiteral("retry with a lower LR")));
        QVERIFY(!name.data(Qt::DecorationRole).isNull()); // the run shows that it has a note

        m_window->compareView()->setBaseline(1);
        m_window->compareView()->setSelectedRuns({1, 3});
        QLabel *notes = nullptr;
        for (QLabel *label : m_window->compareView()->findChildren<QLabel *>())
            if (label->text().contains(QStringLiteral("<b>Notes</b>")))
                notes = label;
        QVERIFY(notes);
        QVERIFY2(notes->text().contains(QStringLiteral("&lt;b&gt;not bold&lt;/b&gt;")),
                 qPrintable(notes->text())); // text, not markup
    }

    void filterKeepsWhatMatchesAndIsRememberedPerStudy()
    {
        {
            Store study(m_study.toStdString());
            changeTags(study, 3, {"long"}, {});
            setArchived(study, 1, true);
        }
        m_window->watcher()->refresh();
        QTRY_COMPARE(shownNames(m_window->runModel()), (QStringList{QStringLiteral("pure"), QStringLiteral("auto")}));
        QLineEdit *filter = m_window->runsView()->filterEdit();
        filter->setText(QStringLiteral("mode:bf16 tag:long"));
        QTRY_COMPARE(shownNames(m_window->runModel()), QStringList{QStringLiteral("auto")});
        filter->setText(QStringLiteral("colour:red"));
        QVERIFY(m_window->runsView()->filterError().contains(QStringLiteral("not a key a filter knows")));
        filter->setText(QStringLiteral("mode:fp32"));
        QTRY_VERIFY(shownNames(m_window->runModel()).isEmpty()); // fp32 is archived
        RunsView::FilterState state = m_window->runsView()->filterState();
        state.showArchived = true;
        m_window->runsView()->setFilterState(state);
        QTRY_COMPARE(shownNames(m_window->runModel()), QStringList{QStringLiteral("fp32")});

        // The next workbench on this study starts with the same filter.
        m_window = std::make_unique<MainWindow>(optlog::testing::optlogBinary());
        QVERIFY(m_window->openStudy(m_study));
        m_window->watcher()->refresh();
        QCOMPARE(m_window->runsView()->filterState().text, QStringLiteral("mode:fp32"));
        QVERIFY(m_window->runsView()->filterState().showArchived);
        QTRY_COMPARE(shownNames(m_window->runModel()), QStringList{QStringLiteral("fp32")});
    }

    void runAgainWithChangesFillsTheDesigner()
    {
        select(QStringLiteral("pure"));
        m_window->curation()->deriveAction()->trigger();
        DesignerView *designer = m_window->designer();
        QCOMPARE(designer->fieldText(QStringLiteral("precision.mode")), QStringLiteral("pure-bf16"));
        QCOMPARE(designer->fieldText(QStringLiteral("train.steps")), QStringLiteral("4"));
        designer->setFieldText(QStringLiteral("train.steps"), QStringLiteral("6"));
        designer->revalidate();
        const QList<PlannedRun> planned = designer->plannedRuns();
        QCOMPARE(planned.size(), 1);
        QCOMPARE(planned[0].name, std::string("pure v2"));
        QCOMPARE(planned[0].from, (m_window->studyPath() + QStringLiteral(":2")).toStdString());
        QCOMPARE(planned[0].overrides, std::vector<std::string>{"train.steps=6"}); // only what changed
        QCOMPARE(planned[0].config().precision.mode, std::string("pure-bf16"));

        // What the engine stores for such a run leads Compare's config diff.
        {
            Store store(m_study.toStdString());
            const int64_t id = store.createRun("pure v2", planned[0].fromToml, "",
                                               {m_window->studyPath().toStdString(), 2, "pure"});
            store.finishRun(id, Outcome::Completed, 3, "");
        }
        m_window->watcher()->refresh();
        QTRY_COMPARE(m_window->runModel()->rowCount(), 4);
        m_window->compareView()->setBaseline(2);
        m_window->compareView()->setSelectedRuns({2, 4});
        const QTableWidget *diff = m_window->compareView()->configTable();
        QCOMPARE(diff->item(0, 0)->text(), QStringLiteral("(derived from)"));
        QCOMPARE(diff->item(0, 1)->text(), QStringLiteral("-"));
        QCOMPARE(diff->item(0, 2)->text(), QStringLiteral("derived from run 2 (pure) of this study"));
    }

    void runsFromAnotherStudyAreImported()
    {
        const QString other = m_dir.filePath(QStringLiteral("colleague.sqlite"));
        {
            Store store(other.toStdString());
            addRun(store, "gpu run", "autocast-bf16");
        }
        // Dragged from another workbench's Runs list: what its model puts on the drag.
        MainWindow source(optlog::testing::optlogBinary());
        QVERIFY(source.openStudy(other));
        source.watcher()->refresh();
        QTRY_COMPARE(source.runModel()->rowCount(), 1);
        std::unique_ptr<QMimeData> dragged(source.runModel()->mimeData({source.runModel()->index(0, 0)}));
        QWidget *viewport = m_window->runsView(); // the table takes no drops itself: the view does
        const QPoint at(10, 10);
        QDragEnterEvent enter(at, Qt::CopyAction, dragged.get(), Qt::LeftButton, Qt::NoModifier);
        QApplication::sendEvent(viewport, &enter);
        QVERIFY(enter.isAccepted());
        QDropEvent drop(at, Qt::CopyAction, dragged.get(), Qt::LeftButton, Qt::NoModifier);
        QApplication::sendEvent(viewport, &drop);
        QTRY_VERIFY(shownNames(m_window->runModel()).contains(QStringLiteral("gpu run")));
        QCOMPARE(Store(other.toStdString(), Store::Access::ReadOnly).runs().size(), size_t(1)); // the source keeps it

        // Runs of the open study dropped on itself are not copies to make.
        std::unique_ptr<QMimeData> own(m_window->runModel()->mimeData({m_window->runModel()->index(0, 0)}));
        QDragEnterEvent ownEnter(at, Qt::CopyAction, own.get(), Qt::LeftButton, Qt::NoModifier);
        ownEnter.ignore();
        QApplication::sendEvent(viewport, &ownEnter);
        QVERIFY(!ownEnter.isAccepted());

        // The same run again is refused (its name is in use) and changes nothing.
        QString refusal;
        whenDialogShows(this, [&refusal](QWidget *box) {
            refusal = qobject_cast<QMessageBox *>(box)->text();
            qobject_cast<QMessageBox *>(box)->accept();
        });
        QVERIFY(!m_window->curation()->importRuns(other, {1}));
        QVERIFY2(refusal.contains(QStringLiteral("already has a run named \"gpu run\"")), qPrintable(refusal));
        QCOMPARE(Store(m_study.toStdString(), Store::Access::ReadOnly).runs().size(), size_t(4));
    }

private:
    void select(const QString &name)
    {
        const int row = rowOf(m_window->runModel(), name);
        QVERIFY(row >= 0);
        m_window->runsView()->table()->selectRow(row);
        m_window->runsView()->table()->setCurrentIndex(m_window->runModel()->index(row, 0));
    }

    QTemporaryDir m_dir;
    QString m_study;
    std::unique_ptr<MainWindow> m_window;
};

QTEST_MAIN(tst_RunCuration)
#include "tst_runcuration.moc"
