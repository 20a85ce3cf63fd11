// SPDX-License-Identifier: MIT
#include "ui/addhostdialog.h"

#include <QDialogButtonBox>
#include <QFormLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QVBoxLayout>

namespace optlog {

AddHostDialog::AddHostDialog(QWidget *parent)
    : QDialog(parent)
    , m_destination(new QLineEdit)
    , m_python(new QLineEdit)
{
    setWindowTitle(tr("Add a host"));
    m_destination->setObjectName(QStringLiteral("hostDestination"));
    m_destination->setPlaceholderText(tr("an alias from ~/.ssh/config, or user@host"));
    m_python->setObjectName(QStringLiteral("hostPython"));
    m_python->setPlaceholderText(tr("e.g. ~/venv/bin/python; empty if optlog is installed there"));
    auto *form = new QFormLayout;
    form->addRow(tr("SSH destination:"), m_destination);
    form->addRow(tr("Python with torch there:"), m_python);
    auto *note = new QLabel(tr("With a Python, optlog is installed into its environment first, its engine built "
                               "for that torch (optlog host setup). Then the host is checked and remembered."));
    note->setWordWrap(true);
    auto *buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel);
    buttons->button(QDialogButtonBox::Ok)->setEnabled(false);
    connect(m_destination, &QLineEdit::textChanged, this,
            [this, buttons] { buttons->button(QDialogButtonBox::Ok)->setEnabled(!destination().isEmpty()); });
    connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    auto *layout = new QVBoxLayout(this);
    layout->addLayout(form);
    layout->addWidget(note);
    layout->addWidget(buttons);
}

QString AddHostDialog::destination() const
{
    return m_destination->text().trimmed();
}

QString AddHostDialog::python() const
{
    return m_python->text().trimmed();
}

} // namespace optlog
