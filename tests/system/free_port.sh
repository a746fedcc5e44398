# Sourced by the test scripts that start servers on loopback.
# free_port: prints a loopback port nobody listens on (bash's /dev/tcp connect fails), from a
# random start below the kernel's ephemeral range (ip_local_port_range): a port inside it can be
# the local end of any outgoing connection on the machine (a Prometheus scrape, a curl of a test
# running beside this one), and a server's bind to it then fails with EADDRINUSE.
free_port() {
  local port low=32768 high
  read -r low high </proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || true
  local lowest=10000 span=$((low - 10000))
  ((span >= 1000)) || { lowest=$((high + 1)); span=$((65535 - high)); }
  for _ in $(seq 1 200); do
    port=$((lowest + RANDOM % span))
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
      echo "$port"
      return
    fi
  done
  echo "no free loopback port found" >&2
  exit 1
}
