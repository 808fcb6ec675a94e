/* SPDX-License-Identifier: MIT */
/*
 * The supervisor under ALLOW_LIST with a gate of the test's own
 * (src/core/network-gate.h), on the real kernel: a command (python3,
 * tests/reach/network_core_probe.py "gate") behind the metadata filter with
 * the allow-list's rules connects to addresses nobody routes (TEST-NET-1);
 * the gate redirects a TCP port to a "proxy" the test listens on, with the
 * original destination attached, port 53 to a "stub", and refuses the rest.
 * Judged on the test's own sockets: the proxy accepted exactly the
 * connections the gate was told of, from the very source address attached
 * (so the proxy can read the original back), with the command's bytes; the
 * stub got the query; a refused destination reached nothing and left the
 * gate's record.  IPv6 sockets reach the IPv4 proxy through its mapped form.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/inet-address.h"
#include "core/metadata-filter.h"
#include "core/metadata-supervisor.h"
#include "core/process-hardening.h"

#define ATTACH_LIMIT 8

struct test_gate {
        struct sockaddr_in proxy, stub;
        pthread_mutex_t lock;
        struct { struct sockaddr_storage source, original; bool detached; } attached[ATTACH_LIMIT];
        size_t attached_count;
        dsh_network_refusals *refusals;
};

static uint16_t port_of(const struct sockaddr *address)
{
        dsh_inet_endpoint endpoint;

        dsh_inet_classify((const struct sockaddr_storage *) address,
                          address->sa_family == AF_INET ? sizeof(struct sockaddr_in) : sizeof(struct sockaddr_in6),
                          &endpoint);
        return endpoint.port;
}

static void route(void *data, int type, const struct sockaddr *destination, socklen_t length, dsh_network_route *out)
{
        struct test_gate *gate = data;
        uint16_t port = port_of(destination);
        dsh_inet_endpoint endpoint;
        char text[INET6_ADDRSTRLEN];

        memset(out, 0, sizeof(*out));
        if (port == ntohs(gate->proxy.sin_port) || port == ntohs(gate->stub.sin_port)) {
                out->verdict = DSH_NETWORK_DIRECT;
        } else if (type == SOCK_STREAM && port == 4444) {
                out->verdict = DSH_NETWORK_REDIRECT;
                memcpy(&out->address, &gate->proxy, sizeof(gate->proxy));
                out->length = sizeof(gate->proxy);
                out->attach = true;
        } else if (type == SOCK_DGRAM && port == 53) {
                out->verdict = DSH_NETWORK_REDIRECT;
                memcpy(&out->address, &gate->stub, sizeof(gate->stub));
                out->length = sizeof(gate->stub);
        } else {
                out->verdict = DSH_NETWORK_REFUSE;
                out->error = EACCES;
                dsh_inet_classify((const struct sockaddr_storage *) destination, length, &endpoint);
                dsh_inet_endpoint_text(&endpoint, text, sizeof(text));
                dsh_network_refusals_add(gate->refusals, DSH_NETWORK_SOURCE_SUPERVISOR, DSH_NETWORK_OP_CONNECT, text,
                                         port,
                                         type == SOCK_STREAM ? DSH_NETWORK_RULE_ADDRESS_NOT_RESOLVED
                                                             : DSH_NETWORK_RULE_PROTOCOL_NOT_ALLOWED);
        }
}

static int attach(void *data, const struct sockaddr *source, socklen_t source_length,
                  const struct sockaddr *destination, socklen_t destination_length)
{
        struct test_gate *gate = data;
        int result = -ENOSPC;

        pthread_mutex_lock(&gate->lock);
        if (gate->attached_count < ATTACH_LIMIT) {
                memcpy(&gate->attached[gate->attached_count].source, source, source_length);
                memcpy(&gate->attached[gate->attached_count].original, destination, destination_length);
                gate->attached_count++;
                result = 0;
        }
        pthread_mutex_unlock(&gate->lock);
        return result;
}

static void detach(void *data, const struct sockaddr *source, socklen_t source_length)
{
        struct test_gate *gate = data;

        pthread_mutex_lock(&gate->lock);
        for (size_t i = 0; i < gate->attached_count; i++)
                if (memcmp(&gate->attached[i].source, source, source_length) == 0)
                        gate->attached[i].detached = true;
        pthread_mutex_unlock(&gate->lock);
}

static int loopback_socket(int type, struct sockaddr_in *address)
{
        socklen_t length = sizeof(*address);
        int fd = socket(AF_INET, type | SOCK_CLOEXEC, 0);

        assert_true(fd >= 0);
        *address = (struct sockaddr_in) { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
        assert_int_equal(bind(fd, (struct sockaddr *) address, sizeof(*address)), 0);
        if (type == SOCK_STREAM)
                assert_int_equal(listen(fd, 16), 0);
        assert_int_equal(getsockname(fd, (struct sockaddr *) address, &length), 0);
        return fd;
}

/* The system's python3 where there is one: a version manager's shim is a shell script that writes to /dev/null. */
static const char *python_path(void)
{
        return access("/usr/bin/python3", X_OK) == 0 ? "/usr/bin/python3" : "python3";
}

/* The command: capabilities dropped, then the filter (read-only metadata, ALLOW_LIST), then python. */
static void run_command(int socket_fd, int output_fd, dsh_network_filter network)
{
        const char *root = getenv("DSH_SOURCE_ROOT");
        char probe[4096];

        snprintf(probe, sizeof(probe), "%s/tests/reach/network_core_probe.py", root ? root : ".");
        if (dup2(output_fd, STDOUT_FILENO) < 0 || prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
            dsh_drop_capabilities() < 0 ||
            dsh_install_metadata_filter(DSH_METADATA_DENY_KERNEL_WRITES, network, socket_fd, false) < 0)
                _exit(120);
        close(socket_fd);
        execlp(python_path(), "python3", probe, "gate", (char *) NULL);
        _exit(127);
}

/* Every connection the proxy has queued: its peer must be one the gate was told of, with its bytes. */
static size_t accept_all(int proxy, struct test_gate *gate, char received[][16])
{
        size_t count = 0;

        (void) fcntl(proxy, F_SETFL, O_NONBLOCK);
        for (;;) {
                struct sockaddr_storage peer;
                socklen_t length = sizeof(peer);
                int client = accept(proxy, (struct sockaddr *) &peer, &length);
                bool known = false;
                ssize_t got;

                if (client < 0)
                        return count;
                for (size_t i = 0; i < gate->attached_count; i++)
                        known |= memcmp(&gate->attached[i].source, &peer, length) == 0;
                assert_true(known);
                memset(received[count], 0, 16);
                got = recv(client, received[count], 15, MSG_DONTWAIT);
                assert_true(got >= 0 || errno == EAGAIN);
                close(client);
                count++;
        }
}

static char *read_all(int fd)
{
        static char buffer[8192];
        size_t used = 0;
        ssize_t got;

        while ((got = read(fd, buffer + used, sizeof(buffer) - 1 - used)) > 0)
                used += (size_t) got;
        buffer[used] = '\0';
        return buffer;
}

/* Runs the probe's "gate" case under `settings` (the filter's mode is theirs); the command's JSON line. */
static const char *run_probe(const dsh_network_settings *settings)
{
        dsh_metadata_supervisor *supervisor = dsh_metadata_supervisor_new();
        int sockets[2], output[2], status = 0;
        const char *text;
        pid_t pid;

        assert_non_null(supervisor);
        assert_int_equal(dsh_metadata_supervisor_set_network(supervisor, settings), 0);
        assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sockets), 0);
        assert_int_equal(pipe2(output, O_CLOEXEC), 0);
        assert_int_equal(dsh_metadata_supervisor_start(supervisor, sockets[0]), 0);
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0)
                run_command(sockets[1], output[1], settings->filter);
        close(sockets[1]);
        close(output[1]);
        text = read_all(output[0]);
        close(output[0]);
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFEXITED(status));
        assert_int_equal(WEXITSTATUS(status), 0);
        dsh_metadata_supervisor_stop(supervisor, NULL);
        printf("# the command saw: %s", text);
        return text;
}

static void test_allow_list_through_a_gate(void **state)
{
        struct test_gate gate = { .lock = PTHREAD_MUTEX_INITIALIZER };
        dsh_network_gate interface = { &gate, route, attach, detach };
        dsh_network_refusals refusals;
        dsh_network_settings settings = { .filter = DSH_NETWORK_FILTER_ALLOW_LIST, .gate = &interface,
                                          .refusals = &refusals };
        int proxy = loopback_socket(SOCK_STREAM, &gate.proxy), stub = loopback_socket(SOCK_DGRAM, &gate.stub);
        char received[ATTACH_LIMIT][16], query[16] = { 0 };
        size_t accepted;
        const char *text;

        (void) state;
        assert_int_equal(dsh_network_refusals_init(&refusals), 0);
        gate.refusals = &refusals;
        text = run_probe(&settings);
        assert_non_null(strstr(text, "\"redirected\": {\"ok\": true, \"value\": \"connected\"}"));
        assert_non_null(strstr(text, "\"refused\": {\"ok\": false, \"errno\": \"EACCES\"}"));
        assert_non_null(strstr(text, "\"dns\": {\"ok\": true, \"value\": 5}"));
        assert_non_null(strstr(text, "\"udp-refused\": {\"ok\": false, \"errno\": \"EACCES\"}"));
        assert_non_null(strstr(text, "\"redirected6\": {\"ok\": true, \"value\": \"connected\"}"));
        assert_non_null(strstr(text, "\"fast-open\": {\"ok\": true, \"value\": 8}"));
        /* Three redirected connects, each attached with its original destination, each from its source. */
        assert_int_equal(gate.attached_count, 3);
        for (size_t i = 0; i < gate.attached_count; i++) {
                assert_int_equal(port_of((struct sockaddr *) &gate.attached[i].original), 4444);
                assert_false(gate.attached[i].detached);
        }
        accepted = accept_all(proxy, &gate, received);
        assert_int_equal(accepted, 3);
        assert_string_equal(received[0], "reached");
        assert_string_equal(received[2], "fastopen");
        assert_int_equal(recv(stub, query, sizeof(query) - 1, MSG_DONTWAIT), 5);
        assert_string_equal(query, "query");
        assert_int_equal(refusals.count, 2);
        assert_string_equal(refusals.items[0].host, "192.0.2.1");
        assert_int_equal(refusals.items[0].port, 5555);
        assert_int_equal(refusals.items[0].rule, DSH_NETWORK_RULE_ADDRESS_NOT_RESOLVED);
        assert_int_equal(refusals.items[1].port, 54);
        assert_int_equal(refusals.items[1].rule, DSH_NETWORK_RULE_PROTOCOL_NOT_ALLOWED);
        dsh_network_refusals_destroy(&refusals);
        close(proxy);
        close(stub);
}

/*
 * OFF, no gate: every destination refused by core/ itself, each with its
 * record (network-off; a host loopback port, local-port), and nothing
 * reached the test's own loopback server.
 */
static void test_off_records_each_refusal(void **state)
{
        dsh_network_refusals refusals;
        struct sockaddr_in address;
        int server = loopback_socket(SOCK_STREAM, &address);
        unsigned short allowed = 1;
        dsh_network_settings settings = { .filter = DSH_NETWORK_FILTER_OFF, .refusals = &refusals,
                                          .local_ports = &allowed, .local_port_count = 1 };
        const char *text;
        char port[16];
        bool saw_local = false;

        (void) state;
        assert_int_equal(dsh_network_refusals_init(&refusals), 0);
        snprintf(port, sizeof(port), "%u", ntohs(address.sin_port));
        setenv("NETWORK_CORE_LOCAL_PORT", port, 1);
        text = run_probe(&settings);
        unsetenv("NETWORK_CORE_LOCAL_PORT");
        assert_non_null(strstr(text, "\"redirected\": {\"ok\": false, \"errno\": \"EACCES\"}"));
        assert_non_null(strstr(text, "\"dns\": {\"ok\": false, \"errno\": \"EACCES\"}"));
        assert_non_null(strstr(text, "\"local\": {\"ok\": false, \"errno\": \"EACCES\"}"));
        assert_true(refusals.count >= 6);
        for (size_t i = 0; i < refusals.count; i++) {
                assert_int_equal(refusals.items[i].op, DSH_NETWORK_OP_CONNECT);
                if (strcmp(refusals.items[i].host, "127.0.0.1") == 0) {
                        assert_int_equal(refusals.items[i].port, ntohs(address.sin_port));
                        assert_int_equal(refusals.items[i].rule, DSH_NETWORK_RULE_LOCAL_PORT);
                        saw_local = true;
                } else {
                        assert_string_equal(refusals.items[i].host, "192.0.2.1");
                        assert_int_equal(refusals.items[i].rule, DSH_NETWORK_RULE_NETWORK_OFF);
                }
        }
        assert_true(saw_local);
        (void) fcntl(server, F_SETFL, O_NONBLOCK);
        assert_true(accept(server, NULL, NULL) < 0 && errno == EAGAIN);
        dsh_network_refusals_destroy(&refusals);
        close(server);
}

/*
 * The bwrap path: dsh-sandbox-exec inside bwrap's pid namespace offers the
 * listener (--network off), after sending the read-only call's /tmp first
 * (--temp-root); the supervisor outside takes both (the offer's pid is the
 * kernel's, translated into the supervisor's namespace), and the command's
 * connects are then decided as under Landlock: the test's server refused
 * and never reached, the command's own server reached on loopback.
 */
#define BWRAP_PROBE_PATH "/tmp/network_core_probe.py"

static void run_in_bwrap(int socket_fd, int output_fd, const char *exec_helper, const char *probe, const char *case_name,
                         const char *argument)
{
        char listener[16];

        snprintf(listener, sizeof(listener), "%d", socket_fd);
        if (dup2(output_fd, STDOUT_FILENO) < 0 || fcntl(socket_fd, F_SETFD, 0) < 0)
                _exit(120);
        /* The probe bound into the sandbox's own /tmp: a source tree under the host's /tmp is hidden there. */
        execlp("bwrap", "bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--unshare-pid", "--proc", "/proc",
               "--tmpfs", "/tmp", "--ro-bind", probe, BWRAP_PROBE_PATH, "--die-with-parent", "--cap-drop", "ALL",
               "--", exec_helper, "--listener-fd", listener, "--temp-root", "--network", "off", "--", python_path(),
               BWRAP_PROBE_PATH, case_name, argument, (char *) NULL);
        _exit(127);
}

static const char *probe_in_bwrap(dsh_network_refusals *refusals, const char *case_name, const char *argument)
{
        const char *binary = getenv("DSH_SANDBOX_BIN"), *root = getenv("DSH_SOURCE_ROOT");
        static char exec_helper[4096], probe[4096];
        dsh_network_settings settings = { .filter = DSH_NETWORK_FILTER_OFF, .refusals = refusals };
        dsh_metadata_supervisor *supervisor = dsh_metadata_supervisor_new();
        int sockets[2], output[2], status = 0;
        const char *text;
        char *slash;
        pid_t pid;

        snprintf(exec_helper, sizeof(exec_helper), "%s", binary ? binary : "");
        slash = strrchr(exec_helper, '/');
        if (slash)
                snprintf(slash + 1, sizeof(exec_helper) - (size_t) (slash + 1 - exec_helper), "dsh-sandbox-exec");
        snprintf(probe, sizeof(probe), "%s/tests/reach/network_core_probe.py", root ? root : ".");
        assert_non_null(supervisor);
        assert_int_equal(dsh_metadata_supervisor_expect_root(supervisor, "/tmp"), 0);
        assert_int_equal(dsh_metadata_supervisor_set_network(supervisor, &settings), 0);
        assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sockets), 0);
        assert_int_equal(pipe2(output, O_CLOEXEC), 0);
        assert_int_equal(dsh_metadata_supervisor_start(supervisor, sockets[0]), 0);
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0)
                run_in_bwrap(sockets[1], output[1], exec_helper, probe, case_name, argument);
        close(sockets[1]);
        close(output[1]);
        text = read_all(output[0]);
        close(output[0]);
        assert_int_equal(waitpid(pid, &status, 0), pid);
        dsh_metadata_supervisor_stop(supervisor, NULL);
        printf("# the command saw: %s", text);
        assert_true(WIFEXITED(status));
        assert_int_equal(WEXITSTATUS(status), 0);
        return text;
}

static void test_off_through_bwrap(void **state)
{
        struct sockaddr_in address;
        int server = loopback_socket(SOCK_STREAM, &address);
        dsh_network_refusals refusals;
        char port[16];

        (void) state;
        if (system("bwrap --ro-bind / / --dev /dev --unshare-pid --proc /proc -- true >/dev/null 2>&1") != 0) {
                printf("# SKIP: bwrap cannot make a sandbox on this host\n");
                close(server);
                skip();
        }
        assert_int_equal(dsh_network_refusals_init(&refusals), 0);
        snprintf(port, sizeof(port), "%u", ntohs(address.sin_port));
        assert_non_null(strstr(probe_in_bwrap(&refusals, "tcp", port), "{\"ok\": false, \"errno\": \"EACCES\"}"));
        assert_non_null(strstr(probe_in_bwrap(&refusals, "own-server", "0.0.0.0"),
                               "{\"ok\": true, \"value\": {\"bound\": \"127.0.0.1\", \"received\": \"ping\"}}"));
        assert_int_equal(refusals.count, 1);
        assert_string_equal(refusals.items[0].host, "127.0.0.1");
        assert_int_equal(refusals.items[0].port, ntohs(address.sin_port));
        assert_int_equal(refusals.items[0].rule, DSH_NETWORK_RULE_LOCAL_PORT);
        (void) fcntl(server, F_SETFL, O_NONBLOCK);
        assert_true(accept(server, NULL, NULL) < 0 && errno == EAGAIN);
        dsh_network_refusals_destroy(&refusals);
        close(server);
}

/* Settings that cannot be held are refused: ALLOW_LIST needs a gate, OFF a refusal list. */
static void test_settings_that_cannot_be_held(void **state)
{
        dsh_metadata_supervisor *supervisor = dsh_metadata_supervisor_new();
        dsh_network_refusals refusals;
        dsh_network_settings settings = { .filter = DSH_NETWORK_FILTER_ALLOW_LIST, .refusals = &refusals };

        (void) state;
        assert_int_equal(dsh_metadata_supervisor_set_network(supervisor, &settings), -EINVAL);
        settings = (dsh_network_settings) { .filter = DSH_NETWORK_FILTER_OFF };
        assert_int_equal(dsh_metadata_supervisor_set_network(supervisor, &settings), -EINVAL);
        settings = (dsh_network_settings) { .filter = (dsh_network_filter) 9, .refusals = &refusals };
        assert_int_equal(dsh_metadata_supervisor_set_network(supervisor, &settings), -EINVAL);
        settings = (dsh_network_settings) { .filter = DSH_NETWORK_FILTER_OFF, .refusals = &refusals };
        assert_int_equal(dsh_metadata_supervisor_set_network(supervisor, &settings), 0);
        dsh_metadata_supervisor_free(supervisor);
}

static void count_release(void *data)
{
        (*(int *) data)++;
}

/*
 * The settings' pointers are the caller's until the supervisor lets go: the
 * release comes once, when the supervisor is freed (after a started one's
 * thread is done), never at set_network() and never from a refused one.
 */
static void test_settings_released_once_when_the_supervisor_is_freed(void **state)
{
        dsh_metadata_supervisor *supervisor = dsh_metadata_supervisor_new();
        dsh_network_refusals refusals;
        int released = 0;
        dsh_network_settings settings = { .filter = DSH_NETWORK_FILTER_OFF, .refusals = &refusals,
                                          .release = count_release, .release_data = &released };

        (void) state;
        assert_non_null(supervisor);
        assert_int_equal(dsh_network_refusals_init(&refusals), 0);
        settings.filter = DSH_NETWORK_FILTER_ALLOW_LIST;   /* no gate: refused, so never released */
        assert_int_equal(dsh_metadata_supervisor_set_network(supervisor, &settings), -EINVAL);
        settings.filter = DSH_NETWORK_FILTER_OFF;
        assert_int_equal(dsh_metadata_supervisor_set_network(supervisor, &settings), 0);
        assert_int_equal(released, 0);
        dsh_metadata_supervisor_free(supervisor);
        assert_int_equal(released, 1);
        dsh_network_refusals_destroy(&refusals);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_allow_list_through_a_gate),
                cmocka_unit_test(test_off_records_each_refusal),
                cmocka_unit_test(test_off_through_bwrap),
                cmocka_unit_test(test_settings_that_cannot_be_held),
                cmocka_unit_test(test_settings_released_once_when_the_supervisor_is_freed),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
