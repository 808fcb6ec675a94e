/* SPDX-License-Identifier: MIT */
/*
 * landlock-run's command line, apart from the launch so that a fuzz target
 * can drive it alone.  libc only, like the launcher.
 */
#ifndef DSH_SANDBOX_LANDLOCK_RUN_ARGUMENTS_H
#define DSH_SANDBOX_LANDLOCK_RUN_ARGUMENTS_H

#include <stdbool.h>
#include <stddef.h>

/* Every launcher failure, usage errors included, exits with this status (the upstream contract). */
#define LAUNCHER_FAILURE 125

struct launch_grant {
        const char *path;        /* points into argv */
        bool writable;
};

/* `--setenv NAME VALUE`: set in the command's environment before exec. */
struct launch_variable {
        const char *name;        /* points into argv */
        const char *value;
};

/* `--network on|off`: the filter's and the supervisor's network policy (no allow-list: no gate here). */
enum launch_network {
        LAUNCH_NETWORK_ON = 0,
        LAUNCH_NETWORK_OFF,
};

struct launch_request {
        struct launch_grant *grants;   /* owned: free() it, also after a failed parse */
        size_t grant_count;
        /* `--protect PATH`: held back inside the --rw directories; each points into argv. */
        const char **protected_paths;  /* owned: free() it, also after a failed parse */
        size_t protected_count;
        /*
         * `--mask PATH`, `--mask-closed DIR`: left out of the read grant of
         * "/" (core/read-mask.h); NULL-terminated, each pointing into argv;
         * owned vectors (free() them, also after a failed parse), NULL: none.
         */
        char **masked;
        char **mask_closed;
        struct launch_variable *variables;   /* owned: free() it, also after a failed parse */
        size_t variable_count;
        enum launch_network network;
        unsigned short *local_ports;   /* `--allow-local-port PORT`: owned, free() it, also after a failed parse */
        size_t local_port_count;
        /* `--deny-env PATTERN`, `--allow-env NAME` (core/env-scrub.h): NULL-terminated, owned, free() them;
         * each entry points into argv. */
        char **deny_env;
        char **allow_env;
        char **command;                /* points into argv; NULL for --probe */
        bool probe;
        bool new_session;
        bool help;                     /* `--help` alone: print the usage on stdout, exit 0 */
        bool version;                  /* `--version` alone: print the version on stdout, exit 0 */
};

/* The launcher's one diagnostic printer: "landlock-run: <message>" as one stderr line; returns LAUNCHER_FAILURE. */
int fail(const char *format, ...) __attribute__((format(printf, 1, 2)));

/*
 * Parses `[--ro PATH]... [--rw PATH]... [--protect PATH]... [--setenv NAME VALUE]... [--new-session]
 * [--network on|off] [--allow-local-port PORT]... [--deny-env PATTERN]... [--allow-env NAME]... -- ARGV...`, `--probe`, `--help` or `--version` into
 * `request` (zeroed by
 * the caller).  The last two, like --probe, come alone.  `--network allow-list` is
 * a usage error (the allow-list needs the library's network service), and so is
 * --allow-local-port with `--network on` (a port allowed where all is).  A --protect path
 * must be absolute and canonical in form (no empty, `.` or `..` component,
 * no trailing slash): only its form is checked here, its symlinks by the
 * launch.  Returns 0, or LAUNCHER_FAILURE after printing the usage line.
 */
int landlock_run_parse_arguments(int argc, char **argv, struct launch_request *request);

/* Whether `path` is absolute with no empty, `.` or `..` component and no trailing slash ("/" is). */
/* (dsh_read_mask_path_well_formed(): the one rule for both launchers.) */
bool landlock_run_path_is_canonical_form(const char *path);

#endif
