// SPDX-License-Identifier: MIT
#include "core/remote/hostprotocol.h"

#include "core/contract/rowlookup.h"

#include <nlohmann/json.hpp>

#include <string_view>

namespace optlog {

namespace {

constexpr std::string_view kFollowerPrefix = "optlog follow: ";

std::vector<std::string> request(HostVerb verb, std::vector<std::string> arguments = {})
{
    arguments.insert(arguments.begin(), {kHostCommand, hostVerbName(verb)});
    return arguments;
}

} // namespace

const char *hostVerbName(HostVerb verb)
{
    static constexpr Named<HostVerb> names[] = {{HostVerb::Describe, "describe"}, {HostVerb::Start, "start"},
                                                {HostVerb::Stream, "stream"},     {HostVerb::Cancel, "cancel"},
                                                {HostVerb::Fetch, "fetch"},       {HostVerb::Resume, "resume"}};
    return nameIn(names, verb);
}

std::vector<std::string> describeRequest()
{
    return request(HostVerb::Describe);
}

std::vector<std::string> startRequest(const std::string &study, int64_t studySeed, const std::string &key,
                                      size_t configBytes, bool force)
{
    std::vector<std::string> words = request(HostVerb::Start, {HostOption::kStudy, study, HostOption::kStudySeed,
                                                               std::to_string(studySeed), HostOption::kKey, key,
                                                               HostOption::kConfigBytes, std::to_string(configBytes)});
    if (force)
        words.push_back(HostOption::kForce);
    return words;
}

std::vector<std::string> streamRequest(const std::string &study, int64_t runId, const CopyEnd &from)
{
    return request(HostVerb::Stream,
                   {HostOption::kStudy, study, HostOption::kRun, std::to_string(runId), HostOption::kMetricsFrom,
                    std::to_string(from.metrics), HostOption::kValidationFrom, std::to_string(from.validation),
                    HostOption::kEventsFrom, std::to_string(from.events)});
}

std::vector<std::string> cancelRequest(const std::string &study, int64_t runId)
{
    return request(HostVerb::Cancel, {HostOption::kStudy, study, HostOption::kRun, std::to_string(runId)});
}

std::vector<std::string> fetchRequest(const std::string &study, int64_t runId)
{
    return request(HostVerb::Fetch, {HostOption::kStudy, study, HostOption::kRun, std::to_string(runId)});
}

std::vector<std::string> resumeRequest(const std::string &study, int64_t runId, const std::string &key)
{
    return request(HostVerb::Resume,
                   {HostOption::kStudy, study, HostOption::kRun, std::to_string(runId), HostOption::kKey, key});
}

std::string followerLine(const std::string &text)
{
    return std::string(kFollowerPrefix) + text;
}

std::optional<std::string> followerText(const std::string &line)
{
    if (line.compare(0, kFollowerPrefix.size(), kFollowerPrefix) != 0)
        return std::nullopt;
    return line.substr(kFollowerPrefix.size());
}

std::string minutesText(std::chrono::minutes limit)
{
    return std::to_string(limit.count()) + " min";
}

std::string toJsonText(const StartReply &reply)
{
    return nlohmann::json{{"run", reply.run},
                          {"pid", reply.pid},
                          {"log", reply.log},
                          {"name", reply.name},
                          {"group", reply.group},
                          {"config_toml", reply.configToml},
                          {"machine", reply.machine},
                          {"created_at", reply.createdAt},
                          {"environment", reply.environmentJson}}
        .dump();
}

StartReply startReplyFrom(const std::string &text)
{
    const nlohmann::json answer = nlohmann::json::parse(text);
    StartReply reply;
    reply.run = answer.at("run").get<int64_t>();
    reply.pid = answer.at("pid").get<int64_t>();
    reply.log = answer.at("log").get<std::string>();
    reply.name = answer.at("name").get<std::string>();
    reply.group = answer.at("group").get<std::string>();
    reply.configToml = answer.at("config_toml").get<std::string>();
    reply.machine = answer.at("machine").get<std::string>();
    reply.createdAt = answer.at("created_at").get<std::string>();
    reply.environmentJson = answer.value("environment", std::string());
    return reply;
}

std::string toJsonText(const ResumeReply &reply)
{
    return nlohmann::json{{"key", reply.key},
                          {"pid", reply.pid},
                          {"log", reply.log},
                          {"step", reply.step},
                          {"machine", reply.machine}}
        .dump();
}

ResumeReply resumeReplyFrom(const std::string &text)
{
    const nlohmann::json answer = nlohmann::json::parse(text);
    ResumeReply reply;
    reply.key = answer.value("key", std::string());
    reply.pid = answer.at("pid").get<int64_t>();
    reply.log = answer.at("log").get<std::string>();
    reply.step = answer.at("step").get<int64_t>();
    reply.machine = answer.at("machine").get<std::string>();
    return reply;
}

std::string toJsonText(const HostFacts &facts)
{
    nlohmann::json tuned = nlohmann::json::object();
    for (const auto &[family, yes] : facts.tuned)
        tuned[family] = yes;
    return nlohmann::json{{"optlog", facts.optlog},
                          {"event_format", facts.eventFormat},
                          {"start_keys", facts.startKeys},
                          {"schema", facts.schema},
                          {"machine", facts.machine},
                          {"cpu", facts.cpu},
                          {"logical_cpus", facts.logicalCpus},
                          {"cuda_built", facts.cudaBuilt},
                          {"cuda", facts.cuda},
                          {"gpus", facts.gpus},
                          {"tuned", tuned},
                          {"hosted", facts.hosted},
                          {"free_bytes", facts.freeBytes}}
        .dump();
}

HostFacts hostFactsFrom(const std::string &text)
{
    const nlohmann::json json = nlohmann::json::parse(text);
    HostFacts facts;
    facts.eventFormat = json.at("event_format").get<int64_t>();
    facts.optlog = json.value("optlog", std::string("?"));
    facts.startKeys = json.value("start_keys", false);
    facts.schema = json.value("schema", int64_t(0));
    facts.machine = json.value("machine", std::string("?"));
    facts.cpu = json.value("cpu", std::string("?"));
    facts.logicalCpus = json.value("logical_cpus", int64_t(0));
    facts.cudaBuilt = json.value("cuda_built", false);
    facts.cuda = json.value("cuda", std::string());
    facts.gpus = json.value("gpus", std::vector<std::string>());
    const nlohmann::json tuned = json.value("tuned", nlohmann::json::object()); // kept: items() refers to it
    for (const auto &[family, yes] : tuned.items())
        facts.tuned.emplace_back(family, yes == true);
    facts.hosted = json.value("hosted", std::string());
    facts.freeBytes = json.value("free_bytes", int64_t(0));
    return facts;
}

} // namespace optlog
