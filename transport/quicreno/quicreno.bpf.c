//go:build ignore

// SPDX-License-Identifier: GPL-2.0
//
// quicreno: a TCP congestion control (BPF struct_ops) that does what
// quic-go v0.65's controller does. Regenerate quicreno.bpf.o with
// `go generate ./transport/quicreno` (needs clang and bpftool).

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

char _license[] SEC("license") = "GPL";

#define SK_PACING_NEEDED_ 1
#define TCP_CA_LOSS_ 4

// Parameters, rewritten by the loader before the program is loaded.
volatile const __u32 init_cwnd = 32;     // packets
volatile const __u32 beta_pct = 70;      // window kept on a loss, percent
volatile const __u32 min_cwnd = 2;       // packets
volatile const __u32 hystart = 1;        // delay-based slow-start exit
volatile const __u32 pacing = 1;         // ask the kernel to pace
volatile const __u32 keep_on_rto = 1;    // an RTO cuts once by beta, no collapse to 1
volatile const __u32 undo = 1;           // restore the window on a spurious loss

// quic-go's HybridSlowStart constants.
#define HS_LOW_WINDOW 16
#define HS_MIN_SAMPLES 8
#define HS_MIN_US 4000
#define HS_MAX_US 16000

struct qr {
	__u32 round_end; // snd_nxt when the slow-start round started
	__u32 cur_min_us; // lowest RTT among the round's first samples
	__u32 samples;    // RTT samples in this round
	__u8 started;
	__u8 found;
};

static __always_inline struct tcp_sock *tcp_sk(const struct sock *sk)
{
	return (struct tcp_sock *)sk;
}

static __always_inline struct qr *qr_of(const struct sock *sk)
{
	return (void *)((struct inet_connection_sock *)sk)->icsk_ca_priv;
}

static __always_inline bool before32(__u32 a, __u32 b)
{
	return (__s32)(a - b) < 0;
}

static __always_inline bool in_slow_start(const struct tcp_sock *tp)
{
	return tp->snd_cwnd < tp->snd_ssthresh;
}

static __always_inline bool cwnd_limited(const struct tcp_sock *tp)
{
	if (in_slow_start(tp))
		return tp->snd_cwnd < 2 * tp->max_packets_out;
	return BPF_CORE_READ_BITFIELD(tp, is_cwnd_limited);
}

SEC("struct_ops")
void BPF_PROG(qr_init, struct sock *sk)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct qr *c = qr_of(sk);

	c->round_end = 0;
	c->cur_min_us = 0;
	c->samples = 0;
	c->started = 0;
	c->found = 0;
	// Only at the start of a connection: a controller chosen mid-flow
	// keeps the window it finds.
	if (tp->data_segs_out == 0 && init_cwnd > 0)
		tp->snd_cwnd = init_cwnd;
	if (pacing)
		sk->sk_pacing_status = SK_PACING_NEEDED_;
}

SEC("struct_ops")
__u32 BPF_PROG(qr_ssthresh, struct sock *sk)
{
	const struct tcp_sock *tp = tcp_sk(sk);
	// Rounded to the nearest packet: quic-go counts its window in bytes,
	// and truncating would cut by more than beta on small windows.
	__u32 w = (tp->snd_cwnd * beta_pct + 50) / 100;

	return w < min_cwnd ? min_cwnd : w;
}

SEC("struct_ops")
void BPF_PROG(qr_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	struct tcp_sock *tp = tcp_sk(sk);
	__u32 cwnd, w;

	if (!cwnd_limited(tp))
		return;
	cwnd = tp->snd_cwnd;
	if (cwnd < tp->snd_ssthresh) {
		// Slow start: one packet per packet acked, up to ssthresh.
		__u32 next = cwnd + acked;

		if (next > tp->snd_ssthresh)
			next = tp->snd_ssthresh;
		acked -= next - cwnd;
		cwnd = next;
		tp->snd_cwnd = cwnd;
		if (!acked)
			return;
	}
	// Congestion avoidance: one packet per window acked.
	w = cwnd;
	if (w == 0)
		return;
	if (tp->snd_cwnd_cnt >= w) {
		tp->snd_cwnd_cnt = 0;
		cwnd++;
	}
	tp->snd_cwnd_cnt += acked;
	if (tp->snd_cwnd_cnt >= w) {
		__u32 delta = tp->snd_cwnd_cnt / w;

		tp->snd_cwnd_cnt -= delta * w;
		cwnd += delta;
	}
	if (cwnd > tp->snd_cwnd_clamp)
		cwnd = tp->snd_cwnd_clamp;
	tp->snd_cwnd = cwnd;
}

SEC("struct_ops")
void BPF_PROG(qr_pkts_acked, struct sock *sk, const struct ack_sample *sample)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct qr *c = qr_of(sk);
	__s32 rtt = sample->rtt_us;

	if (!hystart || !in_slow_start(tp))
		return;
	if (rtt > 0 && !c->found) {
		if (!c->started) {
			c->round_end = tp->snd_nxt;
			c->cur_min_us = 0;
			c->samples = 0;
			c->started = 1;
		}
		c->samples++;
		if (c->samples <= HS_MIN_SAMPLES && (c->cur_min_us == 0 || c->cur_min_us > (__u32)rtt))
			c->cur_min_us = rtt;
		if (c->samples == HS_MIN_SAMPLES) {
			__u32 min_rtt = tp->rtt_min.s[0].v;
			__u32 thr = min_rtt >> 3;

			if (thr > HS_MAX_US)
				thr = HS_MAX_US;
			if (thr < HS_MIN_US)
				thr = HS_MIN_US;
			if (min_rtt != ~0U && c->cur_min_us > min_rtt + thr)
				c->found = 1;
		}
	}
	if (c->found && tp->snd_cwnd >= HS_LOW_WINDOW)
		tp->snd_ssthresh = tp->snd_cwnd;
	if (c->started && before32(c->round_end, tp->snd_una))
		c->started = 0;
}

SEC("struct_ops")
void BPF_PROG(qr_set_state, struct sock *sk, __u8 new_state)
{
	struct tcp_sock *tp = tcp_sk(sk);

	// The kernel has just set the window to what is in flight plus one
	// after a retransmission timeout; quic-go keeps its window on a probe
	// timeout and cuts it once by beta when the losses are declared, which
	// ssthresh (set by qr_ssthresh on entering Loss) already holds.
	if (keep_on_rto && new_state == TCP_CA_LOSS_) {
		__u32 w = tp->snd_ssthresh;

		if (w < min_cwnd)
			w = min_cwnd;
		if (w > tp->snd_cwnd_clamp)
			w = tp->snd_cwnd_clamp;
		tp->snd_cwnd = w;
		tp->snd_cwnd_cnt = 0;
	}
}

SEC("struct_ops")
__u32 BPF_PROG(qr_undo_cwnd, struct sock *sk)
{
	const struct tcp_sock *tp = tcp_sk(sk);

	if (undo && tp->prior_cwnd > tp->snd_cwnd)
		return tp->prior_cwnd;
	return tp->snd_cwnd;
}

SEC(".struct_ops.link")
struct tcp_congestion_ops quicreno = {
	.init = (void *)qr_init,
	.ssthresh = (void *)qr_ssthresh,
	.cong_avoid = (void *)qr_cong_avoid,
	.pkts_acked = (void *)qr_pkts_acked,
	.set_state = (void *)qr_set_state,
	.undo_cwnd = (void *)qr_undo_cwnd,
	.name = "quicreno",
};
