"""TCP as a kernel era ran it: the sender fields (``sender.*``) that make the TCP model behave as
that era's Linux did. One place for it: the reproductions run the seeds' kernels from here, and
``bondsim run --kernel`` / ``bondsim scenario check --kernel`` put a preset in place of what the
scenario file set of these fields, before the user's own ``--set`` (which wins)."""

from __future__ import annotations

#: The seeds ran Linux 3.x (seed 003: 3.11; seed 004: CORE of 2014), before RACK (Linux 4.10): loss
#: detection by FACK (``tcp_fack``, on by default until 4.11) until the connection sees reordering,
#: then by dupthresh with the adaptive reordering degree, at most 127 (TCP_MAX_REORDERING until 3.19's
#: dca145ffaa8d made it the 300 of ``tcp_max_reordering``); TLP and early retransmit on
#: (``tcp_early_retrans`` = 3: RFC 5827 delayed by a quarter RTT, until reordering is seen), the
#: probe timeout with 3.10's 10 ms floor (``tlp_timeout``), ``tcp_time_to_recover``'s RFC 4653
#: NCR rule (``ncr``), forward retransmission in recovery (``forward_retransmit``) and 3.10-3.13's
#: undo rules (``undo``: no timeout undone after a retransmission, save by F-RTO), and TCP small
#: queues as 3.12-3.18 ran them (``small_queues``, at least ``tcp_limit_output_bytes``, then 128 KB;
#: retransmissions never held), and the slow-start threshold kept in the TCP metrics cache (3.x had no
#: ``tcp_no_ssthresh_metrics_save``, 5.6's default on). ``modern``: today's defaults (RACK-TLP).
TCP: dict[str, list[str]] = {
    "linux-3.x": [
        "sender.tcp_recovery=0",
        "sender.tcp_fack=true",
        "sender.tcp_max_reordering=127",
        'sender.tlp_timeout="linux-3.10"',
        "sender.early_retransmit=true",
        "sender.ncr=true",
        "sender.forward_retransmit=true",
        'sender.undo="linux-3.13"',
        'sender.small_queues="linux-3.12"',
        "sender.tcp_limit_output_bytes=131072",
        "sender.tcp_no_ssthresh_metrics_save=false",
    ],
    "modern": [],
}


def fields() -> list[str]:
    """The sender fields any preset sets (their names under ``sender``)."""
    names = (item.partition("=")[0].removeprefix("sender.") for preset in TCP.values() for item in preset)
    return sorted(set(names))
