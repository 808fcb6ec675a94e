/* SPDX-License-Identifier: MIT */
/*
 * The CLI's command-line parsers (cli/options.c), linked without main.c:
 * the shared policy options long, short and with `=`; options ending at the
 * first operand and at `--`; the usage errors, each one line naming the
 * option; --help and --version on every subcommand's path; and the warnings
 * for options without effect.  What a parse prints is captured from the
 * real stdout and stderr and compared whole.
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>

#include "cli.h"
#include "config.h"
#include "options.h"

#define VERSION_LINE "dsh-sandbox " DSH_SANDBOX_VERSION "\n"

/* ------------------------------------------------------------ argv -- */

/* A writable argv of copies, as main() gets it; argv[argc] is NULL. */
static char **argv_new(int *argc, ...)
{
        char **argv = calloc(64, sizeof(char *));
        const char *argument;
        va_list arguments;
        int count = 0;

        assert_non_null(argv);
        va_start(arguments, argc);
        while ((argument = va_arg(arguments, const char *)) && count < 63)
                argv[count++] = strdup(argument);
        va_end(arguments);
        *argc = count;
        return argv;
}

#define ARGV(argc, ...) argv_new((argc), __VA_ARGS__, (const char *) NULL)

static void argv_free(char **argv)
{
        for (char **argument = argv; *argument; argument++)
                free(*argument);
        free(argv);
}

/* ------------------------------------------------------- capturing -- */

/* stdout and stderr, redirected to memory files while a parser runs. */
typedef struct capture {
        int saved_stdout, saved_stderr;
        int stdout_file, stderr_file;
        char *stdout_text, *stderr_text;   /* after capture_stop(); owned */
} capture;

static void capture_start(capture *c)
{
        fflush(stdout);
        fflush(stderr);
        c->stdout_file = memfd_create("stdout", MFD_CLOEXEC);
        c->stderr_file = memfd_create("stderr", MFD_CLOEXEC);
        c->saved_stdout = dup(1);
        c->saved_stderr = dup(2);
        assert_true(c->stdout_file >= 0 && c->stderr_file >= 0 && c->saved_stdout >= 0 && c->saved_stderr >= 0);
        assert_true(dup2(c->stdout_file, 1) == 1 && dup2(c->stderr_file, 2) == 2);
}

static char *read_all(int fd)
{
        off_t size = lseek(fd, 0, SEEK_END);
        char *text = calloc((size_t) size + 1, 1);

        assert_non_null(text);
        assert_int_equal(pread(fd, text, (size_t) size, 0), size);
        close(fd);
        return text;
}

static void capture_stop(capture *c)
{
        fflush(stdout);
        fflush(stderr);
        dup2(c->saved_stdout, 1);
        dup2(c->saved_stderr, 2);
        close(c->saved_stdout);
        close(c->saved_stderr);
        c->stdout_text = read_all(c->stdout_file);
        c->stderr_text = read_all(c->stderr_file);
}

static void capture_clear(capture *c)
{
        free(c->stdout_text);
        free(c->stderr_text);
}

/* ----------------------------------------------------------- parses -- */

/* cli_parse_policy_and_command() over argv, as run and confine call it; what it printed goes to `c`. */
static int parse_run(int argc, char **argv, cli_policy_options *options, char ***command, capture *c)
{
        int result;

        *command = NULL;
        capture_start(c);
        result = cli_parse_policy_and_command(argc, argv, "run's help\n", options, command);
        capture_stop(c);
        return result;
}

/* --help and --version leave the parse done (CLI_PARSE_DONE), which cli_command_status() makes exit 0. */
static void test_parse_done_is_exit_zero(void **state)
{
        static const char *const flags[] = { "--help", "--version" };

        (void) state;
        for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++) {
                cli_policy_options options = CLI_POLICY_OPTIONS_INIT;
                char *argv[] = { (char *) "run", (char *) flags[i], NULL };
                char **command;
                capture c;
                int result = parse_run(2, argv, &options, &command, &c);

                assert_int_equal(result, CLI_PARSE_DONE);
                assert_int_equal(cli_command_status(result), CLI_EXIT_SUCCESS);
                assert_non_null(c.stdout_text);
                assert_true(c.stdout_text[0] != '\0');
                assert_null(command);
                capture_clear(&c);
                cli_policy_options_clear(&options);
        }
        assert_int_equal(cli_command_status(CLI_EXIT_USAGE), CLI_EXIT_USAGE);
        assert_int_equal(cli_command_status(CLI_EXIT_SUCCESS), CLI_EXIT_SUCCESS);
}

/* A run-style parse that must fail with exactly `expected` on stderr and nothing on stdout. */
static void expect_run_usage_error(const char *expected, ...)
{
        cli_policy_options options = CLI_POLICY_OPTIONS_INIT;
        const char *arguments[16] = { "run" };
        char **argv, **command;
        int argc = 1, result;
        va_list list;
        capture c;

        va_start(list, expected);
        while (argc < 15 && (arguments[argc] = va_arg(list, const char *)))
                argc++;
        va_end(list);
        argv = calloc((size_t) argc + 1, sizeof(char *));
        for (int i = 0; i < argc; i++)
                argv[i] = strdup(arguments[i]);
        result = parse_run(argc, argv, &options, &command, &c);
        if (result != CLI_EXIT_USAGE || strcmp(c.stderr_text, expected) != 0)
                fail_msg("result %d, stderr \"%s\"; expected 2 and \"%s\"", result, c.stderr_text, expected);
        assert_string_equal(c.stdout_text, "");
        capture_clear(&c);
        cli_policy_options_clear(&options);
        argv_free(argv);
}

static void assert_strv(char *const *strv, const char *const *expected)
{
        size_t i = 0;

        for (; expected[i]; i++) {
                assert_non_null(strv);
                assert_non_null(strv[i]);
                assert_string_equal(strv[i], expected[i]);
        }
        assert_true(!strv || !strv[i]);
}

/* Every shared option, as `form` spells them, lands in its field and the command follows. */
static void expect_every_policy_option(int argc, char **argv)
{
        static const char *const roots[] = { "extra", NULL };
        cli_policy_options options = CLI_POLICY_OPTIONS_INIT;
        char **command;
        capture c;

        assert_int_equal(parse_run(argc, argv, &options, &command, &c), 0);
        assert_string_equal(c.stderr_text, "");
        assert_string_equal(options.mode, "workspace-write");
        assert_string_equal(options.root, "/ws");
        assert_strv(options.allow_write, roots);
        assert_string_equal(options.session, "s1");
        assert_string_equal(options.backend, "landlock");
        assert_string_equal(options.config_path, "c.json");
        assert_non_null(command);
        assert_string_equal(command[0], "true");
        assert_null(command[1]);
        capture_clear(&c);
        cli_policy_options_clear(&options);
}

static void test_long_options(void **state)
{
        int argc;
        char **argv = ARGV(&argc, "run", "--mode", "workspace-write", "--root", "/ws", "--allow-write", "extra",
                           "--session", "s1", "--backend", "landlock", "--config", "c.json", "--", "true");

        (void) state;
        expect_every_policy_option(argc, argv);
        argv_free(argv);
}

static void test_short_options(void **state)
{
        int argc;
        char **argv = ARGV(&argc, "run", "-m", "workspace-write", "-r", "/ws", "-w", "extra", "-s", "s1", "-b",
                           "landlock", "-c", "c.json", "true");

        (void) state;
        expect_every_policy_option(argc, argv);
        argv_free(argv);
}

static void test_values_joined(void **state)
{
        int argc, attached_argc;
        char **argv = ARGV(&argc, "run", "--mode=workspace-write", "--root=/ws", "--allow-write=extra",
                           "--session=s1", "--backend=landlock", "--config=c.json", "true");
        char **attached = ARGV(&attached_argc, "run", "-mworkspace-write", "-r/ws", "-wextra", "-ss1", "-blandlock",
                               "-cc.json", "true");

        (void) state;
        expect_every_policy_option(argc, argv);
        expect_every_policy_option(attached_argc, attached);
        argv_free(argv);
        argv_free(attached);
}

/* `dsh-sandbox run make -j4`: the first operand is the program, and everything after it is its own. */
static void test_first_operand_ends_options(void **state)
{
        cli_policy_options options = CLI_POLICY_OPTIONS_INIT;
        int argc;
        char **argv = ARGV(&argc, "run", "-m", "read-only", "make", "-j4", "--mode", "danger-full-access", "--",
                           "-w", "x");
        char **command;
        capture c;

        (void) state;
        assert_int_equal(parse_run(argc, argv, &options, &command, &c), 0);
        assert_string_equal(c.stderr_text, "");
        assert_ptr_equal(command, &argv[3]);
        assert_string_equal(options.mode, "read-only");
        assert_null(options.allow_write);
        capture_clear(&c);
        cli_policy_options_clear(&options);
        argv_free(argv);
}

/* POSIXLY_CORRECT or not, options end at the first operand; with it unset getopt_long would permute. */
static void test_first_operand_ends_options_whatever_the_environment(void **state)
{
        cli_policy_options options = CLI_POLICY_OPTIONS_INIT;
        int argc;
        char **argv = ARGV(&argc, "run", "make", "--mode", "danger-full-access");
        char **command;
        capture c;

        (void) state;
        unsetenv("POSIXLY_CORRECT");
        assert_int_equal(parse_run(argc, argv, &options, &command, &c), 0);
        assert_ptr_equal(command, &argv[1]);
        assert_null(options.mode);
        assert_string_equal(argv[2], "--mode");   /* not moved */
        capture_clear(&c);
        argv_free(argv);
}

/* `--` ends the options too, and what follows may look like an option. */
static void test_double_dash(void **state)
{
        cli_policy_options options = CLI_POLICY_OPTIONS_INIT;
        int argc, only_dash_argc;
        char **argv = ARGV(&argc, "run", "-b", "auto", "--", "--mode", "x");
        char **only_dash = ARGV(&only_dash_argc, "run", "--", "--");
        char **command;
        capture c;

        (void) state;
        assert_int_equal(parse_run(argc, argv, &options, &command, &c), 0);
        assert_ptr_equal(command, &argv[4]);
        assert_null(options.mode);
        assert_string_equal(options.backend, "auto");
        capture_clear(&c);
        cli_policy_options_clear(&options);
        /* The program may be named `--` itself, after the first one. */
        assert_int_equal(parse_run(only_dash_argc, only_dash, &options, &command, &c), 0);
        assert_ptr_equal(command, &only_dash[2]);
        capture_clear(&c);
        argv_free(argv);
        argv_free(only_dash);
}

static void test_missing_program(void **state)
{
        (void) state;
        expect_run_usage_error("dsh-sandbox: usage error: run: missing PROGRAM [ARG...] (see --help)\n", NULL);
        expect_run_usage_error("dsh-sandbox: usage error: run: missing PROGRAM [ARG...] (see --help)\n", "-m",
                               "read-only", "--", NULL);
}

static void test_unknown_option(void **state)
{
        (void) state;
        expect_run_usage_error("dsh-sandbox: usage error: run: unknown option \"--frobnicate\" (see --help)\n",
                               "--frobnicate", "--", "true", NULL);
        expect_run_usage_error("dsh-sandbox: usage error: run: unknown option \"--frobnicate\" (see --help)\n",
                               "--frobnicate=1", "true", NULL);
        expect_run_usage_error("dsh-sandbox: usage error: run: unknown option \"-x\" (see --help)\n", "-m",
                               "read-only", "-x", "true", NULL);
        /* In a cluster, the letter that is not an option is the one named. */
        expect_run_usage_error("dsh-sandbox: usage error: run: unknown option \"-q\" (see --help)\n", "-qh", NULL);
}

/* getopt_long would take `--allow-w` for `--allow-write` (and took `--allow` until --allow-unix-socket came); a script that relied on it breaks when an option is added. */
static void test_abbreviation_refused(void **state)
{
        (void) state;
        expect_run_usage_error("dsh-sandbox: usage error: run: unknown option \"--allow-w\" (options are not "
                               "abbreviated: --allow-write) (see --help)\n",
                               "--allow-w", "/x", "true", NULL);
        /* Since --allow-unix-socket, a prefix of two options: unknown all the same. */
        expect_run_usage_error("dsh-sandbox: usage error: run: unknown option \"--allow\" (see --help)\n",
                               "--allow", "/x", "true", NULL);
        expect_run_usage_error("dsh-sandbox: usage error: run: unknown option \"--mo\" (options are not "
                               "abbreviated: --mode) (see --help)\n",
                               "--mo=read-only", "true", NULL);
        expect_run_usage_error("dsh-sandbox: usage error: run: unknown option \"--vers\" (options are not "
                               "abbreviated: --version) (see --help)\n",
                               "--vers", NULL);
}

static void test_missing_value(void **state)
{
        (void) state;
        expect_run_usage_error("dsh-sandbox: usage error: run: --mode requires a value (see --help)\n", "--mode",
                               NULL);
        expect_run_usage_error("dsh-sandbox: usage error: run: -r requires a value (see --help)\n", "-r", NULL);
        expect_run_usage_error("dsh-sandbox: usage error: run: -w requires a value (see --help)\n", "-m",
                               "read-only", "-w", NULL);
        expect_run_usage_error("dsh-sandbox: usage error: run: --root requires a non-empty value (see --help)\n",
                               "--root=", "true", NULL);
        expect_run_usage_error("dsh-sandbox: usage error: run: -s requires a non-empty value (see --help)\n", "-s",
                               "", "true", NULL);
        expect_run_usage_error("dsh-sandbox: usage error: run: --help takes no value (see --help)\n", "--help=yes",
                               NULL);
}

static void test_bad_backend(void **state)
{
        (void) state;
        expect_run_usage_error("dsh-sandbox: usage error: --backend must be auto or a backend: unknown backend "
                               "\"chroot\" (known: bwrap, landlock) (see --help)\n",
                               "-b", "chroot", "true", NULL);
}

/* Repeated: --allow-write adds, in order, in every spelling; the other options keep the last. */
static void test_repeated_options(void **state)
{
        static const char *const roots[] = { "a", "b", "c", "d", NULL };
        cli_policy_options options = CLI_POLICY_OPTIONS_INIT;
        int argc;
        char **argv = ARGV(&argc, "run", "--allow-write", "a", "-w", "b", "--allow-write=c", "-wd", "-m", "read-only",
                           "--mode", "workspace-write", "true");
        char **command;
        capture c;

        (void) state;
        assert_int_equal(parse_run(argc, argv, &options, &command, &c), 0);
        assert_strv(options.allow_write, roots);
        assert_string_equal(options.mode, "workspace-write");
        capture_clear(&c);
        cli_policy_options_clear(&options);
        argv_free(argv);
}

/* ----------------------------------------------------------- network -- */

/* A run-style parse that succeeds; `options` is the caller's to clear. */
static void parse_network(cli_policy_options *options, ...)
{
        const char *arguments[24] = { "run" };
        char **argv, **command;
        int argc = 1, result;
        va_list list;
        capture c;

        va_start(list, options);
        while (argc < 22 && (arguments[argc] = va_arg(list, const char *)))
                argc++;
        va_end(list);
        arguments[argc++] = "true";
        argv = calloc((size_t) argc + 1, sizeof(char *));
        for (int i = 0; i < argc; i++)
                argv[i] = strdup(arguments[i]);
        result = parse_run(argc, argv, options, &command, &c);
        if (result != 0)
                fail_msg("result %d, stderr \"%s\"", result, c.stderr_text);
        assert_string_equal(c.stderr_text, "");
        assert_string_equal(command[0], "true");
        capture_clear(&c);
        argv_free(argv);
}

/* Each flag lands in the call's network, the mode set by what was given; the request carries it. */
static void test_network_options(void **state)
{
        static const char *const hosts[] = { "@npm", "*.example.com:443", "[::1]:8080", NULL };
        cli_policy_options options = CLI_POLICY_OPTIONS_INIT;
        dsh_policy_request request;

        (void) state;
        parse_network(&options, NULL);
        assert_false(options.network_given);
        assert_int_equal(cli_policy_request(&options, &request), 0);
        assert_null(request.network);   /* none given: the config's */
        cli_policy_options_clear(&options);

        parse_network(&options, "--allow-host", "@npm", "--allow-host=*.example.com:443", "--allow-local-port", "5432",
                      "--allow-host", "[::1]:8080", "--allow-local-port=6379", "--dns-upstream", "127.0.0.1:5353", NULL);
        assert_true(options.network_given);
        assert_int_equal(options.network.mode, DSH_NETWORK_ALLOW_LIST);
        assert_strv(options.network.allow_hosts, hosts);
        assert_int_equal(options.network.allow_local_port_count, 2);
        assert_int_equal(options.network.allow_local_ports[0], 5432);
        assert_int_equal(options.network.allow_local_ports[1], 6379);
        assert_string_equal(options.network.dns_upstream, "127.0.0.1:5353");
        assert_int_equal(cli_policy_request(&options, &request), 0);
        assert_ptr_equal(request.network, &options.network);
        cli_policy_options_clear(&options);

        parse_network(&options, "--network", "off", NULL);
        assert_int_equal(options.network.mode, DSH_NETWORK_OFF);
        cli_policy_options_clear(&options);
        parse_network(&options, "--network", "on", NULL);
        assert_true(options.network_given);     /* an explicit on replaces a config's off */
        assert_int_equal(options.network.mode, DSH_NETWORK_ON);
        cli_policy_options_clear(&options);
        /* --allow-local-port alone: off but for those ports; with --network off the same. */
        parse_network(&options, "--allow-local-port", "8080", NULL);
        assert_int_equal(options.network.mode, DSH_NETWORK_OFF);
        assert_int_equal(options.network.allow_local_port_count, 1);
        cli_policy_options_clear(&options);
        parse_network(&options, "--network", "off", "--allow-local-port", "8080", NULL);
        assert_int_equal(options.network.mode, DSH_NETWORK_OFF);
        cli_policy_options_clear(&options);
}

/* --mask and --allow-env: repeatable, in order, carried by the request into the call's policy. */
static void test_secrets_options(void **state)
{
        static const char *const masks[] = { ".aws", "~/.ssh/id_*", "/srv/keys/*.pem", NULL };
        static const char *const names[] = { "GITHUB_TOKEN", "npm_config__auth", NULL };
        cli_policy_options options = CLI_POLICY_OPTIONS_INIT;
        dsh_policy_request request;

        (void) state;
        parse_network(&options, NULL);
        assert_int_equal(cli_policy_request(&options, &request), 0);
        assert_null(request.masked_paths);
        assert_null(request.allowed_environment);
        cli_policy_options_clear(&options);

        parse_network(&options, "--mask", ".aws", "--mask=~/.ssh/id_*", "--allow-env", "GITHUB_TOKEN", "--mask",
                      "/srv/keys/*.pem", "--allow-env=npm_config__auth", NULL);
        assert_strv(options.mask, masks);
        assert_strv(options.allow_env, names);
        assert_int_equal(cli_policy_request(&options, &request), 0);
        assert_ptr_equal(request.masked_paths, options.mask);
        assert_ptr_equal(request.allowed_environment, options.allow_env);
        cli_policy_options_clear(&options);
}

/* Every bad --mask and --allow-env: exit 2, one line naming the value and the library's reason. */
static void test_secrets_usage_errors(void **state)
{
        (void) state;
        expect_run_usage_error("dsh-sandbox: usage error: --mask \"a/../b\": an entry may not hold a \".\" or \"..\" "
                               "component (see --help)\n",
                               "--mask", "a/../b", "true", NULL);
        expect_run_usage_error("dsh-sandbox: usage error: --mask \".ssh/*/id\": a wildcard may only stand in the last "
                               "component (see --help)\n",
                               "--mask", ".ssh/*/id", "true", NULL);
        expect_run_usage_error("dsh-sandbox: usage error: --mask \"~\": only \"~/\" names the home (\"~user\" is not "
                               "expanded) (see --help)\n",
                               "--mask", "~", "true", NULL);
        expect_run_usage_error("dsh-sandbox: usage error: --mask \"/\": an entry may not mask \"/\" or a whole home "
                               "(see --help)\n",
                               "--mask", "/", "true", NULL);
        expect_run_usage_error("dsh-sandbox: usage error: run: --mask requires a non-empty value (see --help)\n",
                               "--mask", "", "true", NULL);
        expect_run_usage_error("dsh-sandbox: usage error: --allow-env \"*_TOKEN\": a variable name may hold only "
                               "letters, digits and \"_\" (see --help)\n",
                               "--allow-env", "*_TOKEN", "true", NULL);
        expect_run_usage_error("dsh-sandbox: usage error: --allow-env \"A=B\": a variable name may hold only "
                               "letters, digits and \"_\" (see --help)\n",
                               "--allow-env", "A=B", "true", NULL);
}

/* Every exit-2 case of the network flags: one line naming what was wrong, nothing run. */
static void test_network_usage_errors(void **state)
{
        (void) state;
        expect_run_usage_error("dsh-sandbox: usage error: --allow-host \"*\": a pattern must name a domain (\"*\" "
                               "alone allows everything) (see --help)\n",
                               "--allow-host", "*", "true", NULL);
        expect_run_usage_error("dsh-sandbox: usage error: --allow-host \"com\": a pattern names a host beneath a "
                               "domain, not a bare top-level name (see --help)\n",
                               "--allow-host", "com", "true", NULL);
        expect_run_usage_error("dsh-sandbox: usage error: --allow-host \"*.com\": a wildcard names subdomains of a "
                               "domain, not of a top-level name (\"*.com\") (see --help)\n",
                               "--allow-host", "*.com", "true", NULL);
        expect_run_usage_error("dsh-sandbox: usage error: --allow-host \"https://example.com\": a pattern names a "
                               "host, not a URL: no scheme (\"https://\") (see --help)\n",
                               "--allow-host", "https://example.com", "true", NULL);
        expect_run_usage_error("dsh-sandbox: usage error: --allow-host \"example.com/x\": a pattern names a host, "
                               "not a URL: no path (see --help)\n",
                               "--allow-host", "example.com/x", "true", NULL);
        expect_run_usage_error("dsh-sandbox: usage error: --allow-host \"@nope\": an unknown named set (@npm, "
                               "@pypi, @github, @gitlab, @crates, @go and @debian are known) (see --help)\n",
                               "--allow-host", "@nope", "true", NULL);
        expect_run_usage_error("dsh-sandbox: usage error: --allow-host \"example.com:0\": a port is a number from "
                               "1 to 65535 (see --help)\n",
                               "--allow-host", "example.com:0", "true", NULL);
        expect_run_usage_error("dsh-sandbox: usage error: run: --allow-host requires a non-empty value (see --help)\n",
                               "--allow-host", "", "true", NULL);
        expect_run_usage_error("dsh-sandbox: usage error: --network expects on or off, not \"allow-list\" "
                               "(--allow-host selects the allow-list) (see --help)\n",
                               "--network", "allow-list", "true", NULL);
        expect_run_usage_error("dsh-sandbox: usage error: --allow-host selects the allow-list; it cannot be combined "
                               "with --network on|off (see --help)\n",
                               "--network", "off", "--allow-host", "example.com", "true", NULL);
        expect_run_usage_error("dsh-sandbox: usage error: --allow-host selects the allow-list; it cannot be combined "
                               "with --network on|off (see --help)\n",
                               "--allow-host", "example.com", "--network", "on", "true", NULL);
        expect_run_usage_error("dsh-sandbox: usage error: --allow-local-port limits the network to those ports; it "
                               "cannot be combined with --network on (see --help)\n",
                               "--allow-local-port", "80", "--network", "on", "true", NULL);
        static const char *const bad_ports[] = { "0", "65536", "-1", "80x", "99999999999999999999", "+80" };
        for (size_t i = 0; i < sizeof(bad_ports) / sizeof(bad_ports[0]); i++) {
                char expected[200];

                snprintf(expected, sizeof(expected),
                         "dsh-sandbox: usage error: --allow-local-port expects a port, a whole number from 1 to "
                         "65535, not \"%s\" (see --help)\n",
                         bad_ports[i]);
                expect_run_usage_error(expected, "--allow-local-port", bad_ports[i], "true", NULL);
        }
        expect_run_usage_error("dsh-sandbox: usage error: --dns-upstream names the allow-list's resolver; it needs "
                               "--allow-host (see --help)\n",
                               "--dns-upstream", "127.0.0.1:53", "true", NULL);
        expect_run_usage_error("dsh-sandbox: usage error: --dns-upstream names the allow-list's resolver; it needs "
                               "--allow-host (see --help)\n",
                               "--network", "off", "--dns-upstream", "127.0.0.1:53", "true", NULL);
        expect_run_usage_error("dsh-sandbox: usage error: --dns-upstream \"dns.example:53\": expected IPV4:PORT or "
                               "[IPV6]:PORT (a resolver's address, not its name) (see --help)\n",
                               "--allow-host", "example.com", "--dns-upstream", "dns.example:53", "true", NULL);
        expect_run_usage_error("dsh-sandbox: usage error: --dns-upstream \"127.0.0.1\": expected IPV4:PORT or "
                               "[IPV6]:PORT (a resolver's address, not its name) (see --help)\n",
                               "--allow-host", "example.com", "--dns-upstream", "127.0.0.1", "true", NULL);
}

/* --help and --version print on stdout and stop the parse (CLI_PARSE_DONE: exit 0), whatever came before. */
static void test_help_and_version(void **state)
{
        cli_policy_options options = CLI_POLICY_OPTIONS_INIT;
        int version_argc, help_argc;
        char **version = ARGV(&version_argc, "run", "-m", "read-only", "--version", "--frobnicate");
        char **help = ARGV(&help_argc, "run", "-h", "--frobnicate");
        char **command;
        capture c;

        (void) state;
        assert_int_equal(parse_run(version_argc, version, &options, &command, &c), CLI_PARSE_DONE);
        assert_string_equal(c.stdout_text, VERSION_LINE);
        assert_string_equal(c.stderr_text, "");
        capture_clear(&c);
        cli_policy_options_clear(&options);
        assert_int_equal(parse_run(help_argc, help, &options, &command, &c), CLI_PARSE_DONE);
        assert_true(strncmp(c.stdout_text, "run's help\nPolicy options:\n", 27) == 0);
        assert_non_null(strstr(c.stdout_text, "  -w, --allow-write DIR"));
        assert_string_equal(c.stderr_text, "");
        capture_clear(&c);
        argv_free(version);
        argv_free(help);
}

/*
 * A subcommand ends with cli_command_status() of its outcome: --help's and
 * --version's CLI_PARSE_DONE is 0, an exit status is itself, and a
 * negative number (an errno that came too far) or any other value out of
 * range is a failure, never success.  CLI_PARSE_DONE is no exit status
 * itself, and returned as one by mistake it would not end as 0 either.
 */
static void test_exit_status_of_an_outcome(void **state)
{
        static const int statuses[] = { CLI_EXIT_SUCCESS, CLI_EXIT_FAILURE, CLI_EXIT_USAGE, CLI_EXIT_SANDBOX,
                                        CLI_EXIT_CANNOT_EXECUTE, CLI_EXIT_NOT_FOUND, 128 + 9, 255 };
        static const int failures[] = { -1, -ENOMEM, -EPERM, 256, CLI_PARSE_DONE + 1, INT_MIN, INT_MAX };

        (void) state;
        assert_int_equal(cli_command_status(CLI_PARSE_DONE), CLI_EXIT_SUCCESS);
        assert_true(CLI_PARSE_DONE > 255 && (CLI_PARSE_DONE & 0xff) != 0);
        for (size_t i = 0; i < sizeof(statuses) / sizeof(statuses[0]); i++)
                assert_int_equal(cli_command_status(statuses[i]), statuses[i]);
        for (size_t i = 0; i < sizeof(failures) / sizeof(failures[0]); i++)
                assert_int_equal(cli_command_status(failures[i]), CLI_EXIT_FAILURE);
}

/* The subcommands, each by the argv that reaches its own parser. */
static const struct subcommand_path {
        int (*command)(int argc, char **argv);
        const char *arguments[3];
} subcommand_paths[] = {
                { cli_command_run, { "run", NULL } },
                { cli_command_bash, { "bash", NULL } },
                { cli_command_confine, { "confine", NULL } },
                { cli_command_probe, { "probe", NULL } },
                { cli_command_session, { "session", NULL } },
                { cli_command_session, { "session", "new", NULL } },
                { cli_command_session, { "session", "mode", NULL } },
                { cli_command_session, { "session", "show", NULL } },
                { cli_command_session, { "session", "list", NULL } },
                { cli_command_policy, { "policy", NULL } },
                { cli_command_policy, { "policy", "resolve", NULL } },
                { cli_command_policy, { "policy", "context", NULL } },
                { cli_command_fs, { "fs", NULL } },
                { cli_command_fs, { "fs", "write", NULL } },
                { cli_command_fs, { "fs", "edit", NULL } },
                { cli_command_fs, { "fs", "mkdir", NULL } },
                { cli_command_fs, { "fs", "rm", NULL } },
                { cli_command_fs, { "fs", "mv", NULL } },
                { cli_command_fs, { "fs", "read", NULL } },
                { cli_command_serve, { "serve", NULL } },
                { cli_command_mcp, { "mcp", NULL } },
                { cli_command_remote_helper, { "remote-helper", NULL } },
};
#define SUBCOMMAND_PATH_COUNT (sizeof(subcommand_paths) / sizeof(subcommand_paths[0]))

/* Every subcommand's own path answers --version and --help with exit 0, and refuses an unknown option with 2. */
static void test_every_subcommand(void **state)
{
        static const struct subcommand_path *const paths = subcommand_paths;
        static const char *const options[] = { "--version", "--help", "-h", "--frobnicate" };

        (void) state;
        for (size_t i = 0; i < SUBCOMMAND_PATH_COUNT; i++)
                for (size_t o = 0; o < sizeof(options) / sizeof(options[0]); o++) {
                        const char *const *path = paths[i].arguments;
                        int argc;
                        char **argv = path[1] ? ARGV(&argc, path[0], path[1], options[o])
                                              : ARGV(&argc, path[0], options[o]);
                        bool refused = strcmp(options[o], "--frobnicate") == 0;
                        capture c;
                        int result;

                        capture_start(&c);
                        result = paths[i].command(argc, argv);
                        capture_stop(&c);
                        if (result != (refused ? CLI_EXIT_USAGE : 0))
                                fail_msg("%s %s %s: %d: %s", path[0], path[1] ? path[1] : "", options[o], result,
                                         c.stderr_text);
                        if (strcmp(options[o], "--version") == 0)
                                assert_string_equal(c.stdout_text, VERSION_LINE);
                        else if (!refused)
                                assert_true(strncmp(c.stdout_text, "Usage: dsh-sandbox ", 19) == 0);
                        else
                                assert_non_null(strstr(c.stderr_text, "unknown option \"--frobnicate\""));
                        capture_clear(&c);
                        argv_free(argv);
                }
}

/*
 * A subcommand's --help lists only options it takes: each long option named at
 * the start of a help line is given to that subcommand alone, and must not be
 * refused as unknown or as not applying there (it may still want a value or
 * an operand: that is a different usage error).
 */
static void test_help_lists_only_taken_options(void **state)
{
        (void) state;
        for (size_t i = 0; i < SUBCOMMAND_PATH_COUNT; i++) {
                const char *const *path = subcommand_paths[i].arguments;
                char **argv = NULL;
                char *help, *line, *saved = NULL;
                int argc;
                capture c;

                argv = path[1] ? ARGV(&argc, path[0], path[1], "--help") : ARGV(&argc, path[0], "--help");
                capture_start(&c);
                assert_int_equal(subcommand_paths[i].command(argc, argv), 0);
                capture_stop(&c);
                argv_free(argv);
                help = strdup(c.stdout_text);
                capture_clear(&c);
                for (line = strtok_r(help, "\n", &saved); line; line = strtok_r(NULL, "\n", &saved)) {
                        char option[64];

                        /* "  -m, --mode MODE ..." or "      --json ...": the option a help line starts with. */
                        if (sscanf(line, " -%*1[a-zA-Z], %63[-a-z]", option) != 1 && sscanf(line, " %63[-a-z]", option) != 1)
                                continue;
                        if (strncmp(option, "--", 2) != 0 || strlen(option) < 3)
                                continue;
                        argv = path[1] ? ARGV(&argc, path[0], path[1], option) : ARGV(&argc, path[0], option);
                        capture_start(&c);
                        subcommand_paths[i].command(argc, argv);
                        capture_stop(&c);
                        if (strstr(c.stderr_text, "unknown option") || strstr(c.stderr_text, "does not apply here"))
                                fail_msg("%s %s lists %s but refuses it: %s", path[0], path[1] ? path[1] : "", option,
                                         c.stderr_text);
                        capture_clear(&c);
                        argv_free(argv);
                }
                free(help);
        }
}

/* probe takes no option that could not change its report: a mode, a root, extra roots, a session. */
static void test_probe_refuses_policy_options(void **state)
{
        static const char *const refused[] = { "--mode", "--root", "--allow-write", "--session" };

        (void) state;
        for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
                char expected[128];
                int argc;
                char **argv = ARGV(&argc, "probe", refused[i], "x");
                capture c;

                capture_start(&c);
                assert_int_equal(cli_command_probe(argc, argv), CLI_EXIT_USAGE);
                capture_stop(&c);
                snprintf(expected, sizeof(expected), "dsh-sandbox: usage error: probe: %s does not apply here (see --help)\n",
                         refused[i]);
                assert_string_equal(c.stderr_text, expected);
                assert_string_equal(c.stdout_text, "");
                capture_clear(&c);
                argv_free(argv);
        }
}

/* bash: one COMMAND, whole positive numbers, each refusal one line and exit 2, nothing run. */
static void test_bash_usage_errors(void **state)
{
        static const struct {
                const char *arguments[6];
                const char *message;
        } cases[] = {
                { { "bash", NULL }, "dsh-sandbox: usage error: bash: missing COMMAND (see --help)\n" },
                { { "bash", "echo", "hi", NULL },
                  "dsh-sandbox: usage error: bash: COMMAND is one argument (quote it), not 2: \"hi\" follows it "
                  "(see --help)\n" },
                { { "bash", "--timeout", "0", "true", NULL },
                  "dsh-sandbox: usage error: bash: --timeout expects a whole number from 1 to 2147483647, not \"0\" "
                  "(see --help)\n" },
                { { "bash", "--timeout", "5s", "true", NULL },
                  "dsh-sandbox: usage error: bash: --timeout expects a whole number from 1 to 2147483647, not \"5s\" "
                  "(see --help)\n" },
                { { "bash", "--output-limit", "-1", "true", NULL },
                  "dsh-sandbox: usage error: bash: --output-limit expects a whole number from 1 to 1073741824, not "
                  "\"-1\" (see --help)\n" },
                { { "bash", "--sandbox-permissions", "", "true", NULL },
                  "dsh-sandbox: usage error: bash: --sandbox-permissions requires a non-empty value (see --help)\n" },
        };

        (void) state;
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                const char *const *a = cases[i].arguments;
                int argc;
                char **argv = ARGV(&argc, a[0], a[1], a[2], a[3], a[4]);
                capture c;
                int result;

                capture_start(&c);
                result = cli_command_bash(argc, argv);
                capture_stop(&c);
                assert_int_equal(result, CLI_EXIT_USAGE);
                assert_string_equal(c.stderr_text, cases[i].message);
                assert_string_equal(c.stdout_text, "");
                capture_clear(&c);
                argv_free(argv);
        }
}

/* A shared option that a subcommand does not take is named as such. */
static void test_option_that_does_not_apply(void **state)
{
        int argc;
        char **argv = ARGV(&argc, "policy", "context", "--session", "s", "-m", "read-only");
        capture c;
        int result;

        (void) state;
        capture_start(&c);
        result = cli_command_policy(argc, argv);
        capture_stop(&c);
        assert_int_equal(result, CLI_EXIT_USAGE);
        assert_string_equal(c.stderr_text, "dsh-sandbox: usage error: policy context: -m does not apply here "
                                           "(see --help)\n");
        capture_clear(&c);
        argv_free(argv);
}

/* `session show ID --json`: where operands may come anywhere, options still parse after them, `--` included. */
static int collect(int key, const char *value, void *data)
{
        char ***collected = data;

        if (key == CLI_OPTION_OPERAND)
                assert_int_equal(dsh_strv_append(collected, value), 0);
        else
                assert_int_equal(dsh_strv_append(collected, "(json)"), 0);
        return 0;
}

static void test_operands_anywhere(void **state)
{
        static const char *const expected[] = { "id", "(json)", "two", "-x", "--json", NULL };
        cli_policy_options options = CLI_POLICY_OPTIONS_INIT;
        char **collected = NULL;
        const cli_command_line line = {
                .name = "show", .help = "", .policy_options = CLI_POLICY_CONFIG, .own_options = cli_json_option,
                .own_option = collect, .data = &collected, .operands_anywhere = true,
        };
        int argc, operands = -1;
        char **argv = ARGV(&argc, "show", "id", "--json", "-c", "f", "two", "--", "-x", "--json");
        capture c;

        (void) state;
        /* With POSIXLY_CORRECT set, getopt_long stops at the first operand unless told otherwise. */
        setenv("POSIXLY_CORRECT", "1", 1);
        capture_start(&c);
        assert_int_equal(cli_options_parse(&line, argc, argv, &options, &operands), 0);
        capture_stop(&c);
        unsetenv("POSIXLY_CORRECT");
        assert_string_equal(c.stderr_text, "");
        assert_int_equal(operands, argc);
        assert_strv(collected, expected);
        assert_string_equal(options.config_path, "f");
        capture_clear(&c);
        dsh_strv_free(collected);
        argv_free(argv);
}

/*
 * `fs rm -r`: a shared option may give its short form up to the
 * subcommand's own (--root is spelt out there, -r is --recursive), and a
 * subcommand's own long options may take an empty text (`fs edit --new ''`)
 * while the shared ones still refuse one.
 */
static int collect_keys(int key, const char *value, void *data)
{
        char ***collected = data;
        char *entry = NULL;

        assert_true(asprintf(&entry, "%d=%s", key, value ? value : "(none)") > 0);
        assert_int_equal(dsh_strv_append(collected, entry), 0);
        free(entry);
        return 0;
}

static void test_short_form_given_up_and_empty_texts(void **state)
{
        enum { OWN_TEXT = CLI_OPTION_OWN };
        static const struct option own[] = {
                { "recursive", no_argument, NULL, 'r' },
                { "new", required_argument, NULL, OWN_TEXT },
                { NULL, 0, NULL, 0 },
        };
        char *expected[] = { NULL, NULL, NULL, NULL, NULL };
        cli_policy_options options = CLI_POLICY_OPTIONS_INIT;
        char **collected = NULL;
        cli_command_line line = {
                .name = "fs rm", .help = "", .policy_options = CLI_POLICY_ROOT | CLI_POLICY_MODE, .own_options = own,
                .own_option = collect_keys, .data = &collected, .operands_anywhere = true,
                .own_values_may_be_empty = true, .policy_long_only = CLI_POLICY_ROOT,
        };
        int argc, operands = -1;
        char **argv = ARGV(&argc, "rm", "-r", "path", "--root", "/ws", "--new=", "-m", "read-only", "--recursive");
        capture c;

        (void) state;
        assert_true(asprintf(&expected[0], "%d=(none)", 'r') > 0);
        assert_true(asprintf(&expected[1], "%d=path", CLI_OPTION_OPERAND) > 0);
        assert_true(asprintf(&expected[2], "%d=", OWN_TEXT) > 0);
        assert_true(asprintf(&expected[3], "%d=(none)", 'r') > 0);
        capture_start(&c);
        assert_int_equal(cli_options_parse(&line, argc, argv, &options, &operands), 0);
        capture_stop(&c);
        assert_string_equal(c.stderr_text, "");
        assert_strv(collected, (const char *const *) expected);
        assert_string_equal(options.root, "/ws");
        assert_string_equal(options.mode, "read-only");
        capture_clear(&c);
        cli_policy_options_clear(&options);
        dsh_strv_free(collected);
        collected = NULL;
        argv_free(argv);
        /* A shared option's empty value is still refused. */
        argv = ARGV(&argc, "rm", "--root=", "path");
        capture_start(&c);
        assert_int_equal(cli_options_parse(&line, argc, argv, &options, &operands), CLI_EXIT_USAGE);
        capture_stop(&c);
        assert_string_equal(c.stderr_text, "dsh-sandbox: usage error: fs rm: --root requires a non-empty value "
                                           "(see --help)\n");
        capture_clear(&c);
        cli_policy_options_clear(&options);
        dsh_strv_free(collected);
        argv_free(argv);
        for (size_t i = 0; i < 4; i++)
                free(expected[i]);
}

/* ---------------------------------------------------------- warnings -- */

static void expect_warnings(const cli_policy_options *options, dsh_mode mode, const char *expected)
{
        capture c;
        int count;

        capture_start(&c);
        count = cli_policy_options_warn_without_effect(options, mode);
        capture_stop(&c);
        assert_string_equal(c.stderr_text, expected);
        assert_string_equal(c.stdout_text, "");
        /* One line per warning. */
        for (const char *line = c.stderr_text; *line; line = strchr(line, '\n') + 1)
                count--;
        assert_int_equal(count, 0);
        capture_clear(&c);
}

static void test_warnings_for_options_without_effect(void **state)
{
        char *roots[] = { strdup("/x"), NULL };
        cli_policy_options options = { "read-only", "/ws", roots, NULL, "landlock", NULL };
        cli_policy_options none = CLI_POLICY_OPTIONS_INIT;

        (void) state;
        expect_warnings(&options, DSH_MODE_READ_ONLY,
                        "dsh-sandbox: warning: --allow-write has no effect under read-only, where nothing is "
                        "writable\n");
        expect_warnings(&options, DSH_MODE_DANGER_FULL_ACCESS,
                        "dsh-sandbox: warning: --root has no effect under danger-full-access, where nothing is "
                        "confined\n"
                        "dsh-sandbox: warning: --allow-write has no effect under danger-full-access, where nothing "
                        "is confined\n"
                        "dsh-sandbox: warning: --backend has no effect under danger-full-access, where no backend "
                        "runs the command\n");
        expect_warnings(&options, DSH_MODE_WORKSPACE_WRITE, "");
        /* --root under read-only is not warned about: the root is still checked, and reported (policy resolve). */
        options.allow_write = NULL;
        expect_warnings(&options, DSH_MODE_READ_ONLY, "");
        expect_warnings(&none, DSH_MODE_DANGER_FULL_ACCESS, "");
        free(roots[0]);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_long_options),
                cmocka_unit_test(test_parse_done_is_exit_zero),
                cmocka_unit_test(test_short_options),
                cmocka_unit_test(test_values_joined),
                cmocka_unit_test(test_first_operand_ends_options),
                cmocka_unit_test(test_first_operand_ends_options_whatever_the_environment),
                cmocka_unit_test(test_double_dash),
                cmocka_unit_test(test_missing_program),
                cmocka_unit_test(test_unknown_option),
                cmocka_unit_test(test_abbreviation_refused),
                cmocka_unit_test(test_missing_value),
                cmocka_unit_test(test_bad_backend),
                cmocka_unit_test(test_repeated_options),
                cmocka_unit_test(test_help_and_version),
                cmocka_unit_test(test_exit_status_of_an_outcome),
                cmocka_unit_test(test_every_subcommand),
                cmocka_unit_test(test_bash_usage_errors),
                cmocka_unit_test(test_option_that_does_not_apply),
                cmocka_unit_test(test_operands_anywhere),
                cmocka_unit_test(test_short_form_given_up_and_empty_texts),
                cmocka_unit_test(test_warnings_for_options_without_effect),
                cmocka_unit_test(test_probe_refuses_policy_options),
                cmocka_unit_test(test_help_lists_only_taken_options),
                cmocka_unit_test(test_network_options),
                cmocka_unit_test(test_network_usage_errors),
                cmocka_unit_test(test_secrets_options),
                cmocka_unit_test(test_secrets_usage_errors),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
