/* SPDX-License-Identifier: MIT */
/*
 * The secrets' defaults and the checks of their entries (dsh-sandbox/sandbox.h,
 * "secrets"; docs/secrets.md lists them with the tool each belongs to).
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "dsh-sandbox/sandbox.h"

static const char *const default_masked_paths[] = {
        /*
         * SSH private keys, whatever their names (IdentityFile names any:
         * github_ed25519, ID_RSA): every name in ~/.ssh but what ssh reads
         * and holds no secret — *.pub, known_hosts*, authorized_keys*,
         * config (masks.c: wildcard_matches())
         */
        ".ssh/*",
        /* cloud, cluster and registry credentials */
        ".aws", ".azure", ".config/gcloud", ".kube", ".docker/config.json",
        /* netrc, git's credential store, gh's tokens */
        ".netrc", ".git-credentials", ".config/gh/hosts.yml",
        /* GnuPG, pass, the desktop keyrings */
        ".gnupg", ".password-store", ".local/share/keyrings",
        /* npm's and PyPI's user files: masked whole (docs/secrets.md says why) */
        ".npmrc", ".pypirc",
        /* the agents that run us: Claude Code, Codex CLI, Gemini CLI, opencode, GitHub Copilot */
        ".claude/.credentials.json", ".codex/auth.json", ".gemini/oauth_creds.json",
        ".gemini/google_accounts.json", ".local/share/opencode/auth.json", ".config/github-copilot",
        NULL,
};

static const char *const default_environment_deny[] = {
        "*_TOKEN", "*_TOKEN_*", "*_SECRET", "*_SECRET_*", "*SECRET_KEY*", "*PASSWORD*", "*PASSWD*",
        "*_API_KEY", "*_APIKEY", "*_PRIVATE_KEY", "*_ACCESS_KEY",
        "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "GITHUB_TOKEN", "GH_TOKEN", "GITLAB_TOKEN", "NPM_TOKEN",
        "OPENAI_API_KEY", "ANTHROPIC_API_KEY", "SSH_AUTH_SOCK",
        NULL,
};

const char *const *dsh_default_masked_paths(void)
{
        return default_masked_paths;
}

const char *const *dsh_default_environment_deny(void)
{
        return default_environment_deny;
}

static bool has_wildcard(const char *text, size_t length)
{
        for (size_t i = 0; i < length; i++)
                if (text[i] == '*' || text[i] == '?' || text[i] == '[')
                        return true;
        return false;
}

/* Each component of `entry` (after the leading "/" or "~/"): non-empty, not "." or "..", wildcards last only. */
static int check_components(const char *entry, const char **reason)
{
        const char *component = entry;

        /* Loops until the last component, so that a trailing "/" meets the empty check. */
        for (;;) {
                const char *slash = strchr(component, '/');
                size_t length = slash ? (size_t) (slash - component) : strlen(component);

                if (length == 0) {
                        *reason = "an entry may not hold an empty component (\"//\" or a trailing \"/\")";
                        return -EINVAL;
                }
                if ((length == 1 && component[0] == '.') || (length == 2 && strncmp(component, "..", 2) == 0)) {
                        *reason = "an entry may not hold a \".\" or \"..\" component";
                        return -EINVAL;
                }
                if (slash && has_wildcard(component, length)) {
                        *reason = "a wildcard may only stand in the last component";
                        return -EINVAL;
                }
                if (!slash)
                        break;
                component = slash + 1;
        }
        return 0;
}

int dsh_mask_entry_check(const char *entry, const char **reason)
{
        const char *rest = entry;

        if (!entry || !*entry) {
                *reason = "an entry may not be empty";
                return -EINVAL;
        }
        for (const char *c = entry; *c; c++)
                if ((unsigned char) *c < 0x20 || *c == 0x7f) {
                        *reason = "an entry may not hold control characters";
                        return -EINVAL;
                }
        if (entry[0] == '/')
                rest = entry + 1;
        else if (strncmp(entry, "~/", 2) == 0)
                rest = entry + 2;
        else if (entry[0] == '~') {
                *reason = "only \"~/\" names the home (\"~user\" is not expanded)";
                return -EINVAL;
        }
        if (!*rest) {
                *reason = "an entry may not mask \"/\" or a whole home";
                return -EINVAL;
        }
        return check_components(rest, reason);
}

int dsh_environment_pattern_check(const char *pattern, bool allow_wildcards, const char **reason)
{
        if (!pattern || !*pattern) {
                *reason = "a variable name may not be empty";
                return -EINVAL;
        }
        for (const char *c = pattern; *c; c++) {
                bool word = (*c >= 'A' && *c <= 'Z') || (*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') ||
                            *c == '_';

                if (word)
                        continue;
                if (allow_wildcards && (*c == '*' || *c == '?'))
                        continue;
                *reason = allow_wildcards ? "a pattern may hold only letters, digits, \"_\", \"*\" and \"?\""
                                          : "a variable name may hold only letters, digits and \"_\"";
                return -EINVAL;
        }
        return 0;
}
