// SPDX-License-Identifier: MIT
#pragma once

#include <cstddef>
#include <optional>
#include <string>

namespace optlog {

// A row of names of a closed set: the enumerator, the name it is stored, sent, read and written
// by, and the label tables and charts show it with where that differs. Every enum that has words
// has a table of these, read with nameIn, labelIn and valueNamed below: no switch names an enum.
template<typename Enum>
struct Named
{
    Enum value;
    const char *name;
    const char *label = nullptr; // nullptr: the name is its label
};

// The contract's closed sets are tables, one row per enumerator with its names and facts. This
// finds the row whose `column` equals `value` (an enumerator, or a name); nullptr when none does.
template<typename Row, std::size_t N, typename Column, typename Value>
const Row *findRow(const Row (&rows)[N], Column Row::*column, const Value &value)
{
    for (const Row &row : rows)
        if (row.*column == value)
            return &row;
    return nullptr;
}

// The row of an enumerator, which every table has (each table's test checks its names both ways).
template<typename Row, std::size_t N, typename Column, typename Value>
const Row &rowOf(const Row (&rows)[N], Column Row::*column, const Value &value)
{
    const Row *row = findRow(rows, column, value);
    return row ? *row : rows[0];
}

// A table of Named rows, read both ways.
template<typename Enum, std::size_t N>
const char *nameIn(const Named<Enum> (&table)[N], Enum value)
{
    return rowOf(table, &Named<Enum>::value, value).name;
}

template<typename Enum, std::size_t N>
const char *labelIn(const Named<Enum> (&table)[N], Enum value)
{
    const Named<Enum> &row = rowOf(table, &Named<Enum>::value, value);
    return row.label ? row.label : row.name;
}

template<typename Enum, std::size_t N>
std::optional<Enum> valueNamed(const Named<Enum> (&table)[N], const std::string &name)
{
    const Named<Enum> *row = findRow(table, &Named<Enum>::name, name);
    return row ? std::optional<Enum>(row->value) : std::nullopt;
}

} // namespace optlog
