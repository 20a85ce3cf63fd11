// SPDX-License-Identifier: MIT
#include "core/config/config.h"
#include "core/engine/data/textdata.h"

#include <ATen/ATen.h>

#include <QtTest>

using namespace optlog;

namespace {

void writeFile(const QString &path, const QByteArray &bytes)
{
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(bytes);
}

QByteArray tokenBytes(const std::vector<uint16_t> &ids)
{
    return QByteArray(reinterpret_cast<const char *>(ids.data()), int(ids.size() * 2));
}

QString refusal(const DataConfig &config, int64_t vocab, int64_t context)
{
    try {
        loadTokens(config, vocab, context);
    } catch (const DataError &e) {
        return e.what();
    }
    return "accepted";
}

} // namespace

class tst_TextData : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void fortunesLoseTheirSeparators();
    void textIsSplitDeterministically();
    void tokenFilesLoad();
    void badDataIsRefused();
    void generatedTextIsDeterministic();
    void batchesFollowTheSeed();
    void validationSetIsFixedAndIndependentOfBatchSize();
};

void tst_TextData::fortunesLoseTheirSeparators()
{
    QTemporaryDir dir;
    writeFile(dir.filePath("computers"), "First fortune.\n%\nSecond, with 100% certainty.\n%\n");
    writeFile(dir.filePath("computers.dat"), QByteArray("\x00\x01\x02", 3)); // an index, not text
    QCOMPARE(fortunesText(dir.path().toStdString()), std::string("First fortune.\nSecond, with 100% certainty.\n"));
    QVERIFY(fortunesText(dir.filePath("nowhere").toStdString()).empty());
}

void tst_TextData::textIsSplitDeterministically()
{
    QTemporaryDir dir;
    QByteArray text;
    for (int i = 0; i < 100; ++i)
        text += "abcdefghij";
    writeFile(dir.filePath("corpus.txt"), text);
    DataConfig config;
    config.corpus = Corpus::Text;
    config.path = dir.filePath("corpus.txt").toStdString();
    config.validationFraction = 0.1;
    const TokenSplit split = loadTokens(config, 256, 8);
    QCOMPARE(split.train.size(), size_t(900));
    QCOMPARE(split.validation.size(), size_t(100));
    QCOMPARE(split.train.front(), uint16_t('a'));
    QCOMPARE(split.validation.back(), uint16_t('j'));
}

void tst_TextData::tokenFilesLoad()
{
    QTemporaryDir dir;
    std::vector<uint16_t> train(100), validation(40);
    for (size_t i = 0; i < train.size(); ++i)
        train[i] = uint16_t(i * 7 % 1000);
    for (size_t i = 0; i < validation.size(); ++i)
        validation[i] = uint16_t(999 - i);
    writeFile(dir.filePath("train.bin"), tokenBytes(train));
    writeFile(dir.filePath("val.bin"), tokenBytes(validation));
    DataConfig config;
    config.corpus = Corpus::Tokens;
    config.path = dir.path().toStdString();
    const TokenSplit split = loadTokens(config, 1000, 16);
    QVERIFY(split.train == train);
    QVERIFY(split.validation == validation);
}

void tst_TextData::badDataIsRefused()
{
    QTemporaryDir dir;
    DataConfig tokens;
    tokens.corpus = Corpus::Tokens;
    tokens.path = dir.path().toStdString();
    QVERIFY(refusal(tokens, 256, 8).contains("train.bin' does not exist"));

    writeFile(dir.filePath("train.bin"), tokenBytes(std::vector<uint16_t>(50, 300)));
    writeFile(dir.filePath("val.bin"), tokenBytes(std::vector<uint16_t>(50, 1)));
    QVERIFY2(refusal(tokens, 256, 8)
                 .contains("holds id 300 at position 0, not below model.vocab_size = 256; set "
                           "model.vocab_size to at least 301"),
             qPrintable(refusal(tokens, 256, 8)));

    writeFile(dir.filePath("train.bin"), QByteArray(51, 'x'));
    QVERIFY(refusal(tokens, 256, 8).contains("odd size"));

    // Found by fuzz_tokens: an empty token file was copied from a null pointer (undefined
    // behaviour, which UBSan stops at) and then refused only for its length.
    writeFile(dir.filePath("train.bin"), QByteArray());
    QVERIFY2(refusal(tokens, 256, 8).contains("train.bin' is empty; expected uint16 token ids"),
             qPrintable(refusal(tokens, 256, 8)));

    writeFile(dir.filePath("short.txt"), QByteArray(50, 'x'));
    DataConfig text;
    text.corpus = Corpus::Text;
    text.path = dir.filePath("short.txt").toStdString();
    QVERIFY2(refusal(text, 256, 128).contains("fewer than model.context_length + 1 = 129"),
             qPrintable(refusal(text, 256, 128)));

    writeFile(dir.filePath("empty.txt"), QByteArray());
    text.path = dir.filePath("empty.txt").toStdString();
    QVERIFY(refusal(text, 256, 8).contains("is empty"));

    text.path = dir.filePath("missing.txt").toStdString();
    QVERIFY(refusal(text, 256, 8).contains("does not exist"));

    // A file that opens but cannot be read is refused with the system's reason, never taken for
    // empty text or all-zero tokens (/proc/self/mem opens, and reading its address 0 fails).
    text.path = "/proc/self/mem";
    QVERIFY2(refusal(text, 256, 8).contains("cannot read '/proc/self/mem' after 0 bytes"),
             qPrintable(refusal(text, 256, 8)));
    // A directory where a token file should be: refused, not an exception from the file system.
    QVERIFY(QDir(dir.path()).mkpath("folder/train.bin"));
    writeFile(dir.filePath("folder/val.bin"), tokenBytes(std::vector<uint16_t>(50, 1)));
    tokens.path = dir.filePath("folder").toStdString();
    QVERIFY2(refusal(tokens, 256, 8).contains("train.bin' is not a regular file"), qPrintable(refusal(tokens, 256, 8)));
}

void tst_TextData::generatedTextIsDeterministic()
{
    const std::string a = generatedText(10000), b = generatedText(10000);
    QCOMPARE(a, b);
    QVERIFY(a.size() >= 10000);
    QVERIFY(a.find(". ") != std::string::npos);
}

void tst_TextData::batchesFollowTheSeed()
{
    std::vector<uint16_t> tokens(5000);
    for (size_t i = 0; i < tokens.size(); ++i)
        tokens[i] = uint16_t(i % 256);
    BatchSampler a(tokens, 32, 7), b(tokens, 32, 7), c(tokens, 32, 8);
    const Batch x = a.next(4), y = b.next(4), z = c.next(4);
    QVERIFY(at::equal(x.inputs, y.inputs));
    QVERIFY(!at::equal(x.inputs, z.inputs));
    // Targets are the inputs shifted by one token.
    QVERIFY(at::equal(x.inputs.slice(1, 1), x.targets.slice(1, 0, 31)));
}

void tst_TextData::validationSetIsFixedAndIndependentOfBatchSize()
{
    std::vector<uint16_t> tokens(5000);
    for (size_t i = 0; i < tokens.size(); ++i)
        tokens[i] = uint16_t((i * 31) % 256);
    const auto byFour = validationBatches(tokens, 16, 12, 4, 1234);
    const auto byFive = validationBatches(tokens, 16, 12, 5, 1234);
    QCOMPARE(byFour.size(), size_t(3));
    QCOMPARE(byFive.size(), size_t(3)); // 5 + 5 + 2
    at::Tensor four = at::cat({byFour[0].inputs, byFour[1].inputs, byFour[2].inputs});
    at::Tensor five = at::cat({byFive[0].inputs, byFive[1].inputs, byFive[2].inputs});
    QVERIFY(at::equal(four, five));
    const auto otherStudy = validationBatches(tokens, 16, 12, 4, 99);
    QVERIFY(!at::equal(byFour[0].inputs, otherStudy[0].inputs));
}

QTEST_APPLESS_MAIN(tst_TextData)
#include "tst_textdata.moc"
