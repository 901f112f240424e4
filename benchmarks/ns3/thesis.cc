// The thesis's paced bonding model on ns-3's core simulator (no network stack).
//
//     thesis PACKETS SHAPE MODE      (SHAPE: balanced | thesis; MODE: rr | lb)
//
// The same system as bondsim's paced sender + paced links (the `balanced` and
// `thesis` shapes of crates/bondsim-core/benches/engine.rs) and as
// benchmarks/simpy_model.py: 100 requests of S bytes, S = (PACKETS / 100 - 1)
// * 1024, each cut into S / 1024 + 1 packets; a scheduler tick every 20 ms
// takes 4 packets round-robin over the requests still queued and hands each
// to an interface (rr: the next one in turn; lb: the one with the fewest
// queued packets, lowest index on ties); every interface sends one queued
// packet per period (20 ms; interface 1 at 82 ms in the `thesis` shape).
// A packet is out of order when its request already delivered a later one.
//
// Every component is an event that re-schedules itself with
// Simulator::Schedule; ns-3's default scheduler runs equal-time events in
// insertion order, as bondsim and SimPy do, so the three give the same
// out-of-order count and makespan. Prints one JSON line.

#include "ns3/nstime.h"
#include "ns3/simulator.h"

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <utility>
#include <vector>

using namespace ns3;

namespace
{

struct Model
{
    bool lb = false;
    uint64_t packetsPerFile = 0;
    uint64_t total = 0;
    uint64_t delivered = 0;
    uint64_t inOrder = 0;
    size_t nextReq = 0;
    size_t nextIface = 0;
    Time tick;
    Time last;
    std::vector<Time> periods;
    std::vector<std::pair<uint32_t, uint64_t>> queue; // (request, next chunk)
    std::vector<std::deque<std::pair<uint32_t, uint64_t>>> ifaces;
    std::vector<int64_t> high; // highest chunk delivered per request, -1 if none
    std::vector<uint64_t> sent;
};

Model m;

size_t
Pick()
{
    if (!m.lb)
    {
        size_t i = m.nextIface;
        m.nextIface = (i + 1) % m.ifaces.size();
        return i;
    }
    size_t best = 0;
    for (size_t i = 1; i < m.ifaces.size(); ++i)
    {
        if (m.ifaces[i].size() < m.ifaces[best].size())
        {
            best = i;
        }
    }
    return best;
}

void
Interface(size_t i)
{
    auto& q = m.ifaces[i];
    if (!q.empty())
    {
        auto [req, seq] = q.front();
        q.pop_front();
        m.sent[i]++;
        if (static_cast<int64_t>(seq) > m.high[req])
        {
            m.high[req] = static_cast<int64_t>(seq);
            m.inOrder++;
        }
        m.delivered++;
        m.last = Simulator::Now();
        if (m.delivered == m.total)
        {
            Simulator::Stop();
            return;
        }
    }
    Simulator::Schedule(m.periods[i], &Interface, i);
}

void
Tick()
{
    for (int k = 0; k < 4 && !m.queue.empty(); ++k)
    {
        auto& entry = m.queue[m.nextReq];
        m.ifaces[Pick()].emplace_back(entry.first, entry.second);
        entry.second++;
        if (entry.second == m.packetsPerFile)
        {
            m.queue.erase(m.queue.begin() + static_cast<std::ptrdiff_t>(m.nextReq));
            if (m.queue.empty())
            {
                break;
            }
        }
        m.nextReq = (m.nextReq + 1) % m.queue.size();
    }
    if (!m.queue.empty())
    {
        Simulator::Schedule(m.tick, &Tick);
    }
}

} // namespace

int
main(int argc, char** argv)
{
    uint64_t packets = argc > 1 ? static_cast<uint64_t>(std::atof(argv[1])) : 1000000;
    const char* shape = argc > 2 ? argv[2] : "balanced";
    const char* mode = argc > 3 ? argv[3] : "rr";
    if (std::strcmp(mode, "rr") != 0 && std::strcmp(mode, "lb") != 0)
    {
        std::fprintf(stderr, "mode must be rr or lb\n");
        return 2;
    }
    if (std::strcmp(shape, "balanced") != 0 && std::strcmp(shape, "thesis") != 0)
    {
        std::fprintf(stderr, "shape must be balanced or thesis\n");
        return 2;
    }
    const uint32_t requests = 100;
    const uint64_t fileBytes = (packets / requests - 1) * 1024;
    m.lb = std::strcmp(mode, "lb") == 0;
    m.packetsPerFile = fileBytes / 1024 + 1;
    m.total = requests * m.packetsPerFile;
    m.tick = MilliSeconds(20);
    bool slow = std::strcmp(shape, "thesis") == 0;
    m.periods = {MilliSeconds(20), MilliSeconds(slow ? 82 : 20), MilliSeconds(20), MilliSeconds(20)};
    m.ifaces.resize(m.periods.size());
    m.sent.assign(m.periods.size(), 0);
    m.high.assign(requests, -1);
    for (uint32_t r = 0; r < requests; ++r)
    {
        m.queue.emplace_back(r, 0);
    }

    auto started = std::chrono::steady_clock::now();
    // Interfaces first, then the scheduler: at each instant the interfaces send
    // before the tick queues more (the order SimPy and bondsim use).
    for (size_t i = 0; i < m.periods.size(); ++i)
    {
        Simulator::Schedule(Seconds(0), &Interface, i);
    }
    Simulator::Schedule(Seconds(0), &Tick);
    Simulator::Run();
    double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    uint64_t events = Simulator::GetEventCount();
    Simulator::Destroy();

    std::printf("{\"shape\": \"%s\", \"mode\": \"%s\", \"packets\": %llu, \"events\": %llu, "
                "\"wall_s\": %.6f, \"packets_per_s\": %.0f, \"events_per_s\": %.0f, "
                "\"out_of_order\": %llu, \"makespan_s\": %.9f, \"packets_sent\": [",
                shape,
                mode,
                static_cast<unsigned long long>(m.total),
                static_cast<unsigned long long>(events),
                wall,
                m.total / wall,
                events / wall,
                static_cast<unsigned long long>(m.total - m.inOrder),
                m.last.GetSeconds());
    for (size_t i = 0; i < m.sent.size(); ++i)
    {
        std::printf("%s%llu", i ? ", " : "", static_cast<unsigned long long>(m.sent[i]));
    }
    std::printf("]}\n");
    return 0;
}
