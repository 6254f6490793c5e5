# Sourced by the load drivers' scripts here: the shell's counterpart of
# componentbase/freeport, for servers a script starts by port number.

# free_port picks a port on 127.0.0.1 that nothing listens on.
free_port() {
	local port
	for _ in $(seq 50); do
		port=$((20000 + RANDOM % 40000))
		if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
			echo "$port"
			return 0
		fi
	done
	echo "$(basename "$0"): no free port found" >&2
	return 1
}
