# Sourced by the test scripts that start servers on loopback.
# free_port: prints a loopback port nobody listens on (bash's /dev/tcp connect fails), from a
# random start.
free_port() {
  local port
  for _ in $(seq 1 200); do
    port=$((20000 + RANDOM % 30000))
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
      echo "$port"
      return
    fi
  done
  echo "no free loopback port found" >&2
  exit 1
}
