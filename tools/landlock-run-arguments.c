/* SPDX-License-Identifier: MIT */
/* landlock-run's command line: the flags of the upstream launcher contract and its exact usage lines. */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/read-mask.h"
#include "core/env-scrub.h"
#include "landlock-run-arguments.h"

int fail(const char *format, ...)
{
        va_list arguments;

        fputs("landlock-run: ", stderr);
        va_start(arguments, format);
        vfprintf(stderr, format, arguments);
        va_end(arguments);
        fputc('\n', stderr);
        return LAUNCHER_FAILURE;
}

bool landlock_run_path_is_canonical_form(const char *path)
{
        return dsh_read_mask_path_well_formed(path);
}

/*
 * `--mask PATH` and `--mask-closed DIR`, beyond the upstream contract
 * (where they were unknown arguments): the read grant of "/" leaves PATH
 * out, and enumerates DIR entry by entry (core/read-mask.h), so neither is
 * readable, nor anything named there later.  A mask is compared by name
 * with what the directories hold: one not canonical in form would match
 * nothing and hold nothing, so it is refused.
 */
static int parse_mask(struct launch_request *request, int argc, const char *option, const char *path)
{
        char ***list = strcmp(option, "--mask") == 0 ? &request->masked : &request->mask_closed;
        size_t count = 0;

        if (!dsh_read_mask_path_well_formed(path))
                return fail("usage error: %s: not a canonical absolute path: %s", option, path);
        if (!*list)
                *list = calloc((size_t) argc + 1, sizeof(char *));
        if (!*list)
                return fail("landlock ruleset error: %s", strerror(ENOMEM));
        while ((*list)[count])
                count++;
        (*list)[count] = (char *) path;
        return 0;
}

/*
 * `--protect PATH`, beyond the upstream contract (where it was an unknown
 * argument): the supervisor holds PATH back (core/metadata-supervisor.h,
 * dsh_metadata_supervisor_hold_back()).  It compares the names it resolves
 * with PATH, so a name that is not canonical would never match and hold
 * nothing back: it is refused, never taken as given.
 */
static int parse_protected_path(struct launch_request *request, const char *path)
{
        if (!landlock_run_path_is_canonical_form(path))
                return fail("usage error: --protect: not a canonical absolute path: %s", path);
        request->protected_paths[request->protected_count++] = path;
        return 0;
}

/*
 * `--network on|off`, beyond the upstream contract: the policy the filter
 * and the supervisor hold (core/network-gate.h).  The allow-list is refused
 * here: its proxy and DNS stub are the library's, not a launcher's.
 */
static int parse_network(struct launch_request *request, const char *value)
{
        if (strcmp(value, "on") == 0)
                request->network = LAUNCH_NETWORK_ON;
        else if (strcmp(value, "off") == 0)
                request->network = LAUNCH_NETWORK_OFF;
        else if (strcmp(value, "allow-list") == 0)
                return fail("usage error: --network allow-list needs the network service of dsh-sandbox (run, bash, "
                            "serve or mcp); landlock-run holds on or off");
        else
                return fail("usage error: --network: expected on or off, not %s", value);
        return 0;
}

/* `--allow-local-port PORT`: a host loopback port the command may reach under `--network off`; 1..65535. */
static int parse_local_port(struct launch_request *request, const char *value)
{
        char *end;
        unsigned long port;

        errno = 0;
        port = value[0] >= '0' && value[0] <= '9' ? strtoul(value, &end, 10) : 0;
        if (port == 0 || errno != 0 || *end != '\0' || port > 65535)
                return fail("usage error: --allow-local-port: not a port (1..65535): %s", value);
        request->local_ports[request->local_port_count++] = (unsigned short) port;
        return 0;
}

/*
 * `--deny-env PATTERN` and `--allow-env NAME`, beyond the upstream contract
 * (where they were unknown arguments): the launcher removes every variable
 * a pattern matches (core/env-scrub.h) before each --setenv, so a harness
 * that spawns a confined argv with its own environment hands the command
 * none of its secrets.  A malformed one is refused, never taken as given.
 */
static int parse_environment_rule(char **list, const char *option, const char *value)
{
        bool wildcards = strcmp(option, "--deny-env") == 0;
        size_t count = 0;

        if (!dsh_env_pattern_well_formed(value, wildcards))
                return fail("usage error: %s: not a variable %s (only letters, digits and _%s): %s", option,
                            wildcards ? "pattern" : "name", wildcards ? ", * and ?" : "", value);
        while (list[count])
                count++;
        list[count] = (char *) value;
        return 0;
}

/* After the flags: --allow-local-port means OFF with those ports; with `--network on` it is a contradiction. */
static int check_network(struct launch_request *request, bool network_given)
{
        if (request->local_port_count == 0)
                return 0;
        if (network_given && request->network == LAUNCH_NETWORK_ON)
                return fail("usage error: --allow-local-port needs --network off (under on every port is reached)");
        request->network = LAUNCH_NETWORK_OFF;
        return 0;
}

int landlock_run_parse_arguments(int argc, char **argv, struct launch_request *request)
{
        bool network_given = false;

        request->grants = calloc((size_t) argc, sizeof(struct launch_grant));
        request->variables = calloc((size_t) argc, sizeof(struct launch_variable));
        request->protected_paths = calloc((size_t) argc, sizeof(const char *));
        request->local_ports = calloc((size_t) argc, sizeof(unsigned short));
        request->deny_env = calloc((size_t) argc + 1, sizeof(char *));
        request->allow_env = calloc((size_t) argc + 1, sizeof(char *));
        if (!request->grants || !request->variables || !request->protected_paths || !request->local_ports ||
            !request->deny_env || !request->allow_env)
                return fail("landlock ruleset error: %s", strerror(ENOMEM));
        /*
         * Beyond the upstream contract, where both were usage errors (125):
         * --help and --version, each alone, answer on stdout with exit 0, as
         * every program does.  Anywhere else they stay what upstream made
         * them (`unknown argument`), so no command line that meant something
         * there means something else here.
         */
        if (argc == 2 && strcmp(argv[1], "--help") == 0) {
                request->help = true;
                return 0;
        }
        if (argc == 2 && strcmp(argv[1], "--version") == 0) {
                request->version = true;
                return 0;
        }
        for (int i = 1; i < argc; i++) {
                const char *argument = argv[i];

                if (strcmp(argument, "--") == 0) {
                        if (i + 1 >= argc)
                                break;
                        request->command = &argv[i + 1];
                        return check_network(request, network_given);
                }
                if (strcmp(argument, "--ro") == 0 || strcmp(argument, "--rw") == 0) {
                        if (i + 1 >= argc)
                                return fail("usage error: %s requires a path", argument);
                        request->grants[request->grant_count].path = argv[++i];
                        request->grants[request->grant_count++].writable = argument[3] == 'w';
                } else if (strcmp(argument, "--mask") == 0 || strcmp(argument, "--mask-closed") == 0) {
                        if (i + 1 >= argc)
                                return fail("usage error: %s requires a path", argument);
                        if (parse_mask(request, argc, argument, argv[++i]) != 0)
                                return LAUNCHER_FAILURE;
                } else if (strcmp(argument, "--protect") == 0) {
                        if (i + 1 >= argc)
                                return fail("usage error: --protect requires a path");
                        if (parse_protected_path(request, argv[++i]) != 0)
                                return LAUNCHER_FAILURE;
                } else if (strcmp(argument, "--setenv") == 0) {
                        /*
                         * Beyond the upstream contract (where it was an unknown
                         * argument): a harness that spawns a confined argv
                         * itself passes its own environment, and the call's
                         * TMPDIR and cache variables ride in the argv instead.
                         */
                        if (i + 2 >= argc)
                                return fail("usage error: --setenv requires a name and a value");
                        if (argv[i + 1][0] == '\0' || strchr(argv[i + 1], '='))
                                return fail("usage error: --setenv: invalid variable name: %s", argv[i + 1]);
                        request->variables[request->variable_count].name = argv[++i];
                        request->variables[request->variable_count++].value = argv[++i];
                } else if (strcmp(argument, "--probe") == 0) {
                        if (argc != 2)
                                return fail("usage error: --probe takes no other arguments");
                        request->probe = true;
                        return 0;
                } else if (strcmp(argument, "--new-session") == 0) {
                        request->new_session = true;
                } else if (strcmp(argument, "--network") == 0) {
                        if (i + 1 >= argc)
                                return fail("usage error: --network requires on or off");
                        if (parse_network(request, argv[++i]) != 0)
                                return LAUNCHER_FAILURE;
                        network_given = true;
                } else if (strcmp(argument, "--deny-env") == 0 || strcmp(argument, "--allow-env") == 0) {
                        if (i + 1 >= argc)
                                return fail("usage error: %s requires a %s", argument,
                                            argument[2] == 'd' ? "pattern" : "name");
                        if (parse_environment_rule(argument[2] == 'd' ? request->deny_env : request->allow_env,
                                                   argument, argv[++i]) != 0)
                                return LAUNCHER_FAILURE;
                } else if (strcmp(argument, "--allow-local-port") == 0) {
                        if (i + 1 >= argc)
                                return fail("usage error: --allow-local-port requires a port");
                        if (parse_local_port(request, argv[++i]) != 0)
                                return LAUNCHER_FAILURE;
                } else {
                        return fail("usage error: unknown argument: %s", argument);
                }
        }
        return fail("usage error: missing `-- <argv>...` command");
}
