# SPDX-License-Identifier: MIT
# Sourced by the benches that talk to a throwaway sshd on 127.0.0.1 (tests/remote/sshd_fixture.py):
# remote.bench.sh and floor.bench.sh.  Before sourcing: $tool (an absolute dsh-sandbox), $scratch
# (the bench's scratch directory) and DSH_SANDBOX_CONFIG (the config file start_server writes).
# After start_server: $host, $ssh_config, and XDG_RUNTIME_DIR=$runtime, a private directory whose
# dsh-sandbox/ssh holds the shared connections' control sockets.  The caller's EXIT trap calls
# stop_server.
fixture="$(cd "$(dirname "$0")/.." && pwd)/tests/remote/sshd_fixture.py"
host=remote-test
server_pid= ssh_config=/dev/null runtime=

# Ends the shared connections and the server of the last start_server.
stop_server() {
        for socket in "$runtime"/dsh-sandbox/ssh/*; do
                [ -S "$socket" ] && ssh -F "$ssh_config" -o "ControlPath=$socket" -O exit "$host" 2>/dev/null
        done
        [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null
        [ -n "$runtime" ] && rm -rf "$runtime"
        server_pid= runtime=
}

# start_server [clean-home]: a server, the client's config, and a private runtime directory.
start_server() {
        # Short: the control socket's path must fit a unix socket name.
        runtime=$(mktemp -d /var/tmp/dshb.XXXXXX) || return 1
        export XDG_RUNTIME_DIR="$runtime"
        python3 "$fixture" "$tool" "$@" > "$scratch/server" &
        server_pid=$!
        while ! grep -q '^ready\|^skip' "$scratch/server" 2>/dev/null; do
                kill -0 "$server_pid" 2>/dev/null || break
                sleep 0.1
        done
        read -r state server_dir ssh_config remote_program < "$scratch/server" || state=
        if [ "$state" != ready ]; then
                echo "remote: the ssh server could not start here: $server_dir $ssh_config $remote_program"
                return 1
        fi
        printf '{"sshCommand":["ssh","-F","%s"],"remoteProgram":"%s"}\n' "$ssh_config" "$remote_program" \
                > "$DSH_SANDBOX_CONFIG"
}
