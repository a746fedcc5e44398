#!/usr/bin/env bash
# Multi-host data-parallel for real (issue 20): a 2-rank Gloo job across two network namespaces
# joined by a veth pair, as two machines on one link are. Rank 0 serves the c10d TCPStore on its
# namespace's address, rank 1 reaches it across the link from the other address; Gloo binds each
# rank's veth end (GLOO_SOCKET_IFNAME). Both ranks must finish with identical parameters.
#
# The 10.x addresses exist only inside the namespaces this test creates (no route leaves them:
# the namespaces hold nothing but the veth pair and their own loopback), so no traffic can leave
# the machine. Skipped (77), with the reason, where the container forbids network namespaces.
# Usage: netns_multihost.sh path/to/recompdiag
set -euo pipefail
bin=$1
skip() { echo "SKIP: $*"; exit 77; }
command -v ip >/dev/null || skip "ip (iproute2) is not installed"
[[ $(id -u) -eq 0 ]] || skip "creating network namespaces needs root"

tag=$$
ns_a=recompdiag-a-$tag ns_b=recompdiag-b-$tag
veth_a=rdga$tag veth_b=rdgb$tag  # interface names: 15 characters at most
net=10.213.$((tag % 250))
addr_a=$net.1 addr_b=$net.2
dir=$(mktemp -d)
cleanup() {
  ip netns del "$ns_a" 2>/dev/null || true  # deleting a namespace deletes its veth end
  ip netns del "$ns_b" 2>/dev/null || true
  rm -rf "$dir"
}
trap cleanup EXIT

ip netns add "$ns_a" 2>"$dir/err" || skip "cannot create a network namespace here: $(head -1 "$dir/err")"
ip netns add "$ns_b" 2>"$dir/err" || skip "cannot create a network namespace here: $(head -1 "$dir/err")"
# Created inside namespace a and its peer moved to b: the pair never exists in the host's own
# namespace, so nothing of this test can be routed to the machine's network.
ip -n "$ns_a" link add "$veth_a" type veth peer name "$veth_b" 2>"$dir/err" ||
  skip "cannot create a veth pair here: $(head -1 "$dir/err")"
ip -n "$ns_a" link set "$veth_b" netns "$ns_b"
ip -n "$ns_a" addr add "$addr_a/30" dev "$veth_a"
ip -n "$ns_b" addr add "$addr_b/30" dev "$veth_b"
for ns in "$ns_a" "$ns_b"; do ip -n "$ns" link set lo up; done
ip -n "$ns_a" link set "$veth_a" up
ip -n "$ns_b" link set "$veth_b" up

train=(train --epochs 2,1 --steps-per-epoch 4 --batch-size 8 --hidden 8 --quiet
       --rendezvous-timeout 60 --collective-timeout 60)
# Both ranks name rank 0's address; each namespace has its own ports, so 29500 is free in both.
ip netns exec "$ns_a" env RANK=0 WORLD_SIZE=2 MASTER_ADDR="$addr_a" MASTER_PORT=29500 \
  GLOO_SOCKET_IFNAME="$veth_a" "$bin" "${train[@]}" --out "$dir/job.jsonl" 2>"$dir/err0" &
rank0=$!
ip netns exec "$ns_b" env RANK=1 WORLD_SIZE=2 MASTER_ADDR="$addr_a" MASTER_PORT=29500 \
  GLOO_SOCKET_IFNAME="$veth_b" "$bin" "${train[@]}" --out "$dir/job.jsonl" 2>"$dir/err1" &
rank1=$!
set +e
wait "$rank0"; code0=$?
wait "$rank1"; code1=$?
set -e
cat "$dir/err0" "$dir/err1"
fail() { echo "FAIL: $*"; exit 1; }
if grep -q "data-parallel training unavailable" "$dir/err0"; then
  skip "$(grep -m1 unavailable "$dir/err0")"
fi
[[ $code0 -eq 0 && $code1 -eq 0 ]] || fail "rank exit codes $code0 and $code1, expected 0 and 0"
ls "$dir"
python3 - "$dir" "$addr_a" <<'PY'
import json, sys, os
d, master = sys.argv[1], sys.argv[2]
digests = []
for rank in (0, 1):
    path = os.path.join(d, f"job.rank{rank}.jsonl")
    if not os.path.exists(path):
        path = os.path.join(d, "job.jsonl") if rank == 0 else path
    recs = [json.loads(l) for l in open(path)]
    summary = [r for r in recs if r["type"] == "summary"]
    steps = [r for r in recs if r["type"] == "step"]
    assert summary, f"{path}: no summary"
    assert len(steps) == 12, f"{path}: {len(steps)} steps, expected 12"
    digests.append(summary[0]["parameters_digest"])
    print(f"rank {rank}: {len(steps)} steps, digest {digests[-1]}")
assert digests[0] == digests[1], f"ranks differ: {digests}"
print(f"PASS: 2 ranks across two network namespaces (store at {master}), identical parameters")
PY
