/* SPDX-License-Identifier: MIT */
/* The metadata supervisor of one call, started for either backend: see supervision.h. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/error.h"
#include "provider/call-network.h"
#include "provider/supervision.h"

int dsh_supervision_check_host(dsh_mode mode, const char *consequence, dsh_error *error)
{
        const char *problem = NULL;
        char detail[512];

        if (dsh_metadata_supervisor_check_host(&problem) == 0)
                return 0;
        snprintf(detail, sizeof(detail), "%s; %s", problem, consequence);
        return dsh_error_set_unavailable(error, mode, detail);
}

int dsh_supervision_start(dsh_metadata_supervisor *supervisor, dsh_mode mode, dsh_call_network *network,
                          bool loopback_private, int *socket_out, dsh_error *error)
{
        char detail[512];
        int sockets[2] = { -1, -1 }, result = 0;

        *socket_out = -1;
        result = dsh_call_network_supervise(network, supervisor, loopback_private);
        if (result < 0) {
                dsh_metadata_supervisor_free(supervisor);
                snprintf(detail, sizeof(detail), "the supervisor cannot hold the network policy: %s",
                         strerror(-result));
                return dsh_error_set_unavailable(error, mode, detail);
        }
        /* SEQPACKET: one message, one fd; the other end is close-on-exec, and handed over only where kept. */
        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sockets) < 0)
                result = -errno;
        if (result == 0)
                result = dsh_metadata_supervisor_start(supervisor, sockets[0]);
        if (result < 0) {
                if (sockets[0] >= 0) {
                        close(sockets[0]);
                        close(sockets[1]);
                }
                dsh_metadata_supervisor_free(supervisor);
                snprintf(detail, sizeof(detail), "cannot start the metadata supervisor: %s", strerror(-result));
                return dsh_error_set_unavailable(error, mode, detail);
        }
        *socket_out = sockets[1];
        return 0;
}
