// One bulk TCP transfer over one point-to-point link, with random packet loss.
//
//     tcp --rate=1Gbps --delay=50us --loss=0 --duration=2 [--cc=newreno|linuxreno]
//         [--overhead=38] [--seed=1]
//
// The peer of bondsim's single-link TCP scenario (crates/bondsim-core/tests/
// tcp.rs `lossy()`): node 0 runs a BulkSendApplication that never runs out of
// data, node 1 a PacketSink. TCP is set as bondsim's Linux defaults are where
// ns-3 has the knob (the JSON lists ns-3's own defaults of each): MSS 1448 on a 1500-byte MTU
// (20 bytes of IPv4 + 20 of TCP + 12 of the timestamp option), SACK and
// timestamps on, window scaling, initial window 10, delayed ACKs every 2
// segments with a 40 ms timer (Linux's TCP_ATO_MIN; ns-3's default is 200 ms),
// minimum RTO 200 ms (Linux's TCP_RTO_MIN; ns-3's default is RFC 6298's 1 s),
// PRR recovery, the send / receive buffers bondsim derives from tcp_wmem[2] /
// tcp_rmem[2] (half of each), a 1000-packet drop-tail transmit queue (Linux's
// txqueuelen: a FIFO queue disc of 1000 packets over a one-packet device
// queue) instead of ns-3's default FqCoDel.
//
// The loss is a RateErrorModel (ErrorUnit packet) on the receiving device of
// each direction: data frames lost at node 1, ACKs at node 0, as bondsim's
// rate link loses frames both ways (`loss`, with `reverse_loss` its own
// stream). ns-3's point-to-point framing is a 2-byte PPP header, bondsim's
// rate link charges 38 bytes of Ethernet overhead (preamble, header, FCS,
// gap) per frame: with --overhead=38 the link's bit rate is scaled by
// (1500 + 2) / (1500 + 38) so that a full-size frame occupies the link as long
// as in bondsim (--overhead=2 leaves the rate as given).
//
// Prints one JSON line: data segments sent (every Tx of a socket data packet,
// retransmissions included), retransmissions (segments that start below the
// highest sequence already sent), fast recoveries and RTOs (entries into
// CA_RECOVERY and CA_LOSS), drops (random: data frames the error model lost;
// reverse: ACKs it lost; queue: the queue disc), bytes received by the sink,
// goodput (those bytes * 8 / duration), simulator events and the wall time of
// Simulator::Run().

#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

#include <chrono>
#include <cstdio>
#include <sstream>
#include <string>

using namespace ns3;

namespace
{

uint64_t g_segments = 0;
uint64_t g_retransmits = 0;
uint64_t g_payloadBytes = 0;
uint64_t g_recoveries = 0;
uint64_t g_rtos = 0;
uint64_t g_dropsRandom[2] = {0, 0}; // at node 1 (data), at node 0 (ACKs)
uint64_t g_dropsQueue = 0;
bool g_anySent = false;
SequenceNumber32 g_highEnd(0);

void
OnTx(Ptr<const Packet> packet, const TcpHeader& header, Ptr<const TcpSocketBase>)
{
    uint32_t len = packet->GetSize();
    if (len == 0)
    {
        return; // SYN, pure ACK, FIN
    }
    g_segments++;
    g_payloadBytes += len;
    SequenceNumber32 seq = header.GetSequenceNumber();
    if (g_anySent && seq < g_highEnd)
    {
        g_retransmits++;
    }
    if (!g_anySent || g_highEnd < seq + len)
    {
        g_highEnd = seq + len;
    }
    g_anySent = true;
}

void
OnCongState(TcpSocketState::TcpCongState_t, TcpSocketState::TcpCongState_t now)
{
    if (now == TcpSocketState::CA_RECOVERY)
    {
        g_recoveries++;
    }
    else if (now == TcpSocketState::CA_LOSS)
    {
        g_rtos++;
    }
}

void
OnRandomDrop(uint32_t node, Ptr<const Packet>)
{
    g_dropsRandom[node == 1 ? 0 : 1]++;
}

void
OnQueueDrop(Ptr<const QueueDiscItem>)
{
    g_dropsQueue++;
}

void
HookSocket(Ptr<BulkSendApplication> app)
{
    Ptr<Socket> socket = app->GetSocket();
    NS_ABORT_MSG_IF(!socket, "the bulk sender has no socket yet");
    socket->TraceConnectWithoutContext("Tx", MakeCallback(&OnTx));
    socket->TraceConnectWithoutContext("CongState", MakeCallback(&OnCongState));
}

// The value an attribute has by default in this build of ns-3 (before our Config::SetDefault).
std::string
DefaultOf(const std::string& type, const std::string& name)
{
    TypeId tid = TypeId::LookupByName(type);
    TypeId::AttributeInformation info;
    if (!tid.LookupAttributeByName(name, &info))
    {
        return "?";
    }
    return info.initialValue->SerializeToString(info.checker);
}

} // namespace

int
main(int argc, char** argv)
{
    std::string rate = "1Gbps";
    std::string delay = "50us";
    double loss = 0.0;
    double duration = 2.0;
    std::string cc = "newreno";
    uint32_t overhead = 38;
    uint32_t seed = 1;
    CommandLine cmd(__FILE__);
    cmd.AddValue("rate", "link bit rate (ns-3 DataRate)", rate);
    cmd.AddValue("delay", "one-way propagation delay (ns-3 Time)", delay);
    cmd.AddValue("loss", "probability that a packet is lost, each direction", loss);
    cmd.AddValue("duration", "simulated seconds", duration);
    cmd.AddValue("cc", "newreno (TcpNewReno) or linuxreno (TcpLinuxReno)", cc);
    cmd.AddValue("overhead", "per-frame bytes on the wire to match (38: Ethernet; 2: PPP as is)", overhead);
    cmd.AddValue("seed", "ns-3 RNG seed", seed);
    cmd.Parse(argc, argv);

    const uint32_t mtu = 1500;
    const uint32_t mss = 1448;
    const uint64_t rmem2 = 6291456; // bondsim's tcp_rmem[2]
    const uint64_t wmem2 = 4194304; // bondsim's tcp_wmem[2]

    // ns-3's own defaults of what is set below, for the record.
    const char* knobs[][2] = {
        {"ns3::TcpL4Protocol", "SocketType"},
        {"ns3::TcpL4Protocol", "RecoveryType"},
        {"ns3::TcpSocket", "SegmentSize"},
        {"ns3::TcpSocket", "InitialCwnd"},
        {"ns3::TcpSocket", "DelAckCount"},
        {"ns3::TcpSocket", "DelAckTimeout"},
        {"ns3::TcpSocket", "SndBufSize"},
        {"ns3::TcpSocket", "RcvBufSize"},
        {"ns3::TcpSocketBase", "Sack"},
        {"ns3::TcpSocketBase", "Timestamp"},
        {"ns3::TcpSocketBase", "WindowScaling"},
        {"ns3::TcpSocketBase", "MinRto"},
        {"ns3::TcpSocketBase", "ClockGranularity"},
        {"ns3::TcpSocketBase", "LimitedTransmit"},
    };
    std::ostringstream defaults;
    for (auto& k : knobs)
    {
        defaults << (defaults.tellp() > 0 ? ", " : "") << "\"" << k[0] + 5 << "::" << k[1] << "\": \""
                 << DefaultOf(k[0], k[1]) << "\"";
    }

    TypeId ccType;
    if (cc == "newreno")
    {
        ccType = TcpNewReno::GetTypeId();
    }
    else if (cc == "linuxreno")
    {
        ccType = TcpLinuxReno::GetTypeId();
    }
    else
    {
        std::fprintf(stderr, "--cc must be newreno or linuxreno\n");
        return 2;
    }
    Config::SetDefault("ns3::TcpL4Protocol::SocketType", TypeIdValue(ccType));
    Config::SetDefault("ns3::TcpL4Protocol::RecoveryType", TypeIdValue(TcpPrrRecovery::GetTypeId()));
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(mss));
    Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(10));
    Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(2));
    Config::SetDefault("ns3::TcpSocket::DelAckTimeout", TimeValue(MilliSeconds(40)));
    Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(wmem2 / 2));
    Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(rmem2 / 2));
    Config::SetDefault("ns3::TcpSocketBase::Sack", BooleanValue(true));
    Config::SetDefault("ns3::TcpSocketBase::Timestamp", BooleanValue(true));
    Config::SetDefault("ns3::TcpSocketBase::WindowScaling", BooleanValue(true));
    Config::SetDefault("ns3::TcpSocketBase::MinRto", TimeValue(MilliSeconds(200)));
    RngSeedManager::SetSeed(seed);
    RngSeedManager::SetRun(1);

    DataRate given(rate);
    DataRate linkRate(static_cast<uint64_t>(given.GetBitRate() * double(mtu + 2) / double(mtu + overhead)));

    NodeContainer nodes;
    nodes.Create(2);
    PointToPointHelper p2p;
    p2p.SetDeviceAttribute("DataRate", DataRateValue(linkRate));
    p2p.SetDeviceAttribute("Mtu", UintegerValue(mtu));
    p2p.SetChannelAttribute("Delay", TimeValue(Time(delay)));
    // The NIC's own ring: one packet; the queue is the queue disc's (below).
    p2p.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize", StringValue("1p"));
    NetDeviceContainer devices = p2p.Install(nodes);

    InternetStackHelper stack;
    stack.Install(nodes);
    Ipv4AddressHelper address;
    address.SetBase("10.1.1.0", "255.255.255.0");
    // Linux's pfifo_fast with txqueuelen 1000 (bondsim's drop-tail transmit queue of
    // 1000 packets) instead of ns-3's default FqCoDel, installed before Assign so that
    // Assign does not install the default.
    TrafficControlHelper tch;
    tch.SetRootQueueDisc("ns3::FifoQueueDisc", "MaxSize", StringValue("1000p"));
    QueueDiscContainer qdiscs = tch.Install(devices);
    Ipv4InterfaceContainer ifaces = address.Assign(devices);

    if (loss > 0.0)
    {
        for (uint32_t i = 0; i < 2; ++i)
        {
            Ptr<RateErrorModel> em = CreateObject<RateErrorModel>();
            em->SetUnit(RateErrorModel::ERROR_UNIT_PACKET);
            em->SetRate(loss);
            em->AssignStreams(i);
            devices.Get(i)->SetAttribute("ReceiveErrorModel", PointerValue(em));
            devices.Get(i)->TraceConnectWithoutContext("PhyRxDrop", MakeBoundCallback(&OnRandomDrop, i));
        }
    }
    for (uint32_t i = 0; i < 2; ++i)
    {
        qdiscs.Get(i)->TraceConnectWithoutContext("Drop", MakeCallback(&OnQueueDrop));
    }

    const uint16_t port = 5001;
    BulkSendHelper source("ns3::TcpSocketFactory", InetSocketAddress(ifaces.GetAddress(1), port));
    source.SetAttribute("MaxBytes", UintegerValue(0));
    source.SetAttribute("SendSize", UintegerValue(mss * 16));
    ApplicationContainer sender = source.Install(nodes.Get(0));
    sender.Start(Seconds(0));
    PacketSinkHelper sinkHelper("ns3::TcpSocketFactory", InetSocketAddress(Ipv4Address::GetAny(), port));
    ApplicationContainer sinkApp = sinkHelper.Install(nodes.Get(1));
    sinkApp.Start(Seconds(0));
    Ptr<BulkSendApplication> bulk = DynamicCast<BulkSendApplication>(sender.Get(0));
    // The socket exists once the application has started (t = 0); no data leaves
    // before the handshake's round trip.
    Simulator::Schedule(NanoSeconds(1), &HookSocket, bulk);

    Simulator::Stop(Seconds(duration));
    auto started = std::chrono::steady_clock::now();
    Simulator::Run();
    double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    uint64_t events = Simulator::GetEventCount();
    uint64_t rx = DynamicCast<PacketSink>(sinkApp.Get(0))->GetTotalRx();
    Simulator::Destroy();

    std::printf("{\"cc\": \"%s\", \"rate\": \"%s\", \"link_rate_bps\": %llu, \"delay\": \"%s\", \"loss\": %g, "
                "\"duration_s\": %g, \"segments_sent\": %llu, \"retransmits\": %llu, \"payload_bytes_sent\": %llu, "
                "\"fast_recoveries\": %llu, \"rtos\": %llu, \"drops_random\": %llu, \"reverse_drops_random\": %llu, "
                "\"drops_queue\": %llu, "
                "\"rx_bytes\": %llu, \"goodput_bps\": %.1f, \"events\": %llu, \"wall_s\": %.6f, "
                "\"ns3_defaults\": {%s}}\n",
                cc.c_str(),
                rate.c_str(),
                static_cast<unsigned long long>(linkRate.GetBitRate()),
                delay.c_str(),
                loss,
                duration,
                static_cast<unsigned long long>(g_segments),
                static_cast<unsigned long long>(g_retransmits),
                static_cast<unsigned long long>(g_payloadBytes),
                static_cast<unsigned long long>(g_recoveries),
                static_cast<unsigned long long>(g_rtos),
                static_cast<unsigned long long>(g_dropsRandom[0]),
                static_cast<unsigned long long>(g_dropsRandom[1]),
                static_cast<unsigned long long>(g_dropsQueue),
                static_cast<unsigned long long>(rx),
                rx * 8.0 / duration,
                static_cast<unsigned long long>(events),
                wall,
                defaults.str().c_str());
    return 0;
}
