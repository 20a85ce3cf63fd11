// SPDX-License-Identifier: MIT
// The host protocol's words and answers, as both sides build and read them: each answer read back
// is what was written, a request carries what it was given, and an answer that is not one is
// refused, not misread.
#include "core/remote/hostprotocol.h"

#include <nlohmann/json.hpp>

#include <QtTest>

using namespace optlog;

class tst_HostProtocol : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void answersReadBackAsWritten()
    {
        const StartReply start{7,
                               4242,
                               "/s.logs/a.log",
                               "fp32",
                               "g",
                               "[model]\nwidth = 64\n",
                               "gpu-box",
                               "2026-12-07T10:00:00Z",
                               "{\"threads\": 2}"};
        const StartReply read = startReplyFrom(toJsonText(start));
        QCOMPARE(read.run, start.run);
        QCOMPARE(read.pid, start.pid);
        QCOMPARE(read.log, start.log);
        QCOMPARE(read.name, start.name);
        QCOMPARE(read.group, start.group);
        QCOMPARE(read.configToml, start.configToml);
        QCOMPARE(read.machine, start.machine);
        QCOMPARE(read.createdAt, start.createdAt);
        QCOMPARE(read.environmentJson, start.environmentJson);

        const ResumeReply resume{"0123456789abcdef0123456789abcdef", 99, "/s.logs/b.log", 120, "gpu-box"};
        const ResumeReply resumed = resumeReplyFrom(toJsonText(resume));
        QCOMPARE(resumed.key, resume.key);
        QCOMPARE(resumed.pid, resume.pid);
        QCOMPARE(resumed.step, resume.step);
        QCOMPARE(resumed.machine, resume.machine);

        HostFacts facts;
        facts.optlog = "optlog 0.1.0";
        facts.eventFormat = 1;
        facts.startKeys = true;
        facts.schema = 12;
        facts.machine = "gpu-box";
        facts.logicalCpus = 16;
        facts.cudaBuilt = true;
        facts.cuda = "13.0";
        facts.gpus = {"NVIDIA H200, 139 GiB"};
        facts.tuned = {{"bf16", false}, {"fp32", true}};
        facts.hosted = "/home/u/.local/share/optlog/hosted";
        facts.freeBytes = int64_t(1) << 40;
        const HostFacts described = hostFactsFrom(toJsonText(facts));
        QCOMPARE(described.eventFormat, facts.eventFormat);
        QCOMPARE(described.startKeys, true);
        QCOMPARE(described.gpus, facts.gpus);
        QCOMPARE(described.tuned, facts.tuned);
        QCOMPARE(described.hosted, facts.hosted);
        QCOMPARE(described.freeBytes, facts.freeBytes);
    }

    void anAnswerThatIsNotOneIsRefused()
    {
        QVERIFY_THROWS_EXCEPTION(nlohmann::json::exception, startReplyFrom("{\"run\": 3}"));
        QVERIFY_THROWS_EXCEPTION(nlohmann::json::exception, startReplyFrom("started"));
        QVERIFY_THROWS_EXCEPTION(nlohmann::json::exception, resumeReplyFrom("{\"pid\": \"x\"}"));
        QVERIFY_THROWS_EXCEPTION(nlohmann::json::exception, hostFactsFrom("{\"optlog\": \"0.1\"}"));
        // An older optlog's description without the newer keys reads as unknown, not as refused.
        QCOMPARE(hostFactsFrom("{\"event_format\": 1}").startKeys, false);
    }

    void requestsCarryWhatTheyAreGiven()
    {
        const std::vector<std::string> stream = streamRequest("/h/s.sqlite", 3, CopyEnd{10, 2, 5});
        const std::vector<std::string> expected = {
            "host", "stream",        "--db", "/h/s.sqlite", "--run", "3", "--metrics-from", "10", "--validation-from",
            "2",    "--events-from", "5"};
        QCOMPARE(stream, expected);
        const std::vector<std::string> start = startRequest("/h/s.sqlite", 1234, "k", 99, true);
        QCOMPARE(start.front(), std::string(kHostCommand));
        QCOMPARE(start[1], std::string(hostVerbName(HostVerb::Start)));
        QCOMPARE(start.back(), std::string(HostOption::kForce));
        QVERIFY(std::find(start.begin(), start.end(), "99") != start.end());
        QCOMPARE(followerText(followerLine("run 3: reconnected")).value_or("none"), std::string("run 3: reconnected"));
        QVERIFY(!followerText("optlog: probing the machine").has_value());
        QCOMPARE(minutesText(kStartTimeout), std::string("30 min"));
    }
};

QTEST_APPLESS_MAIN(tst_HostProtocol)
#include "tst_hostprotocol.moc"
