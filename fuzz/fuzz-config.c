/* SPDX-License-Identifier: MIT */
/*
 * The config loader over arbitrary text: dsh_config_load_buffer() is the
 * file loader's own parse and checks, only fed from memory.  Beyond memory
 * errors and UB it checks the loader's promises: a failure leaves the config
 * as it was and says why on one line; a success leaves only values that
 * pass every check.
 */
#include <string.h>

#include "policy/config-internal.h"
#include "fuzz-support.h"

static void check_loaded(const dsh_config *config)
{
        FUZZ_CHECK((unsigned) config->mode < DSH_MODE_COUNT);
        FUZZ_CHECK(config->probe_timeout_ms > 0);
        FUZZ_CHECK(!config->workspace_root || config->workspace_root[0] == '/');
        for (char **root = config->additional_writable_roots; root && *root; root++)
                FUZZ_CHECK((*root)[0] == '/' && !strpbrk(*root, "\r\n"));
        for (char **backend = config->backends; backend && *backend; backend++)
                FUZZ_CHECK((*backend)[0] != '\0' && !strpbrk(*backend, "\r\n"));
        for (char **argument = config->runner_command; argument && *argument; argument++)
                FUZZ_CHECK((*argument)[0] != '\0');
        for (char **signature = config->runner_failure_signatures; signature && *signature; signature++)
                FUZZ_CHECK((*signature)[0] != '\0' && !strpbrk(*signature, "\r\n"));
        /* The network: a known mode, hosts only with the allow-list, each entry one the CLI would take too. */
        FUZZ_CHECK((unsigned) config->network.mode <= DSH_NETWORK_ALLOW_LIST);
        FUZZ_CHECK((config->network.mode == DSH_NETWORK_ALLOW_LIST) == (dsh_strv_length(config->network.allow_hosts) > 0));
        for (char **host = config->network.allow_hosts; host && *host; host++)
                FUZZ_CHECK(dsh_network_pattern_check(*host, NULL) == 0);
        for (size_t i = 0; i < config->network.allow_local_port_count; i++)
                FUZZ_CHECK(config->network.allow_local_ports[i] != 0);
        FUZZ_CHECK(!config->network.dns_upstream || dsh_network_upstream_check(config->network.dns_upstream) == 0);
        /* The operator override comes whole or not at all. */
        FUZZ_CHECK(!config->runner_failure_signatures || config->runner_command);
        FUZZ_CHECK(!config->runner_command || (dsh_strv_length(config->runner_command) > 0 &&
                                               dsh_strv_length(config->runner_failure_signatures) > 0));
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
        (void) argc;
        (void) argv;
        return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        dsh_error error = DSH_ERROR_INIT;
        dsh_config config, before;

        FUZZ_CHECK(dsh_config_init(&config, &error) == 0);
        before = config;
        if (dsh_config_load_buffer(&config, "fuzz-input", (const char *) data, size, &error) < 0) {
                FUZZ_CHECK(memcmp(&config, &before, sizeof(config)) == 0);
                FUZZ_CHECK(error.code == DSH_ERROR_INVALID_INPUT || error.code == DSH_ERROR_SYSTEM);
                FUZZ_CHECK(error.message && strncmp(error.message, "config fuzz-input: ", 19) == 0);
                fuzz_check_one_printable_line(error.message);
        } else {
                FUZZ_CHECK(error.message == NULL);
                check_loaded(&config);
        }
        dsh_config_clear(&config);
        dsh_error_clear(&error);
        return 0;
}
