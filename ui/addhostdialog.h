// SPDX-License-Identifier: MIT
#pragma once

#include <QDialog>

class QLineEdit;

namespace optlog {

// "Add a host…": the SSH destination, and optionally the Python there whose environment holds the
// torch the user trains with. With one, optlog is installed into that environment first (`optlog host
// setup`, docs/remote.md); without, the host must have optlog already (`optlog host check`).
class AddHostDialog : public QDialog
{
    Q_OBJECT
public:
    explicit AddHostDialog(QWidget *parent = nullptr);

    QString destination() const;
    QString python() const; // empty: optlog is installed there already

private:
    QLineEdit *m_destination;
    QLineEdit *m_python;
};

} // namespace optlog
