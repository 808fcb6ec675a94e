# SPDX-License-Identifier: MIT
# Bash completion for dsh-sandbox(1): commands, options, modes, backends, and session ids from
# `dsh-sandbox session list`.  Self-contained: it uses bash-completion's _command_offset for the
# confined program when bash-completion is loaded, and plain compgen otherwise.

_dsh_sandbox_modes="read-only workspace-write danger-full-access"
_dsh_sandbox_backends="auto bwrap landlock"
_dsh_sandbox_policy_options="-m --mode -r --root -w --allow-write --allow-unix-socket --network --allow-host"
_dsh_sandbox_policy_options+=" --allow-local-port --dns-upstream -s --session -b --backend -c --config"
_dsh_sandbox_policy_options+=" --mask --allow-env"
_dsh_sandbox_network_words="on off"
# The named sets an --allow-host may give instead of a pattern (docs/network.md).
_dsh_sandbox_named_sets="@npm @pypi @github @gitlab @crates @go @debian"
# `fs` takes no backend, and in `fs rm` the letter -r is --recursive's (--root is spelt out there).
_dsh_sandbox_fs_options="-m --mode --root -w --allow-write -s --session -c --config --json -h --help"

# The session ids the store holds, as the completed command itself lists them (first column).
_dsh_sandbox_session_ids()
{
        local program=$1
        "$program" session list 2>/dev/null | cut -f1
}

# Completes the value of option $1 into COMPREPLY; returns 1 when $1 takes no value.
_dsh_sandbox_option_value()
{
        local option=$1 cur=$2 program=$3
        case $option in
        -m | --mode | --sandbox-permissions)
                mapfile -t COMPREPLY < <(compgen -W "$_dsh_sandbox_modes" -- "$cur") ;;
        -b | --backend)
                mapfile -t COMPREPLY < <(compgen -W "$_dsh_sandbox_backends" -- "$cur") ;;
        -s | --session | --parent)
                mapfile -t COMPREPLY < <(compgen -W "$(_dsh_sandbox_session_ids "$program")" -- "$cur") ;;
        -r | --root | -w | --allow-write | --cwd | --additional-write)
                compopt -o filenames 2>/dev/null
                mapfile -t COMPREPLY < <(compgen -d -- "$cur") ;;
        -c | --config | --allow-unix-socket | --mask)
                compopt -o filenames 2>/dev/null
                mapfile -t COMPREPLY < <(compgen -f -- "$cur") ;;
        --remote)
                mapfile -t COMPREPLY < <(compgen -A hostname -- "$cur") ;;
        --network)
                mapfile -t COMPREPLY < <(compgen -W "$_dsh_sandbox_network_words" -- "$cur") ;;
        --allow-host)
                mapfile -t COMPREPLY < <(compgen -W "$_dsh_sandbox_named_sets" -- "$cur") ;;
        --op)
                mapfile -t COMPREPLY < <(compgen -W "write read metadata connect" -- "$cur") ;;
        --allow-local-port | --dns-upstream | --allow-env)
                ;;  # a number, an address, a variable's name: nothing to offer, and no file name either
        *)
                return 1 ;;
        esac
        return 0
}

# The program and its arguments, from word $1 on (after `--` or the first non-option).
_dsh_sandbox_program()
{
        local start=$1 cur=$2
        if declare -F _command_offset >/dev/null; then
                _command_offset "$start"
        elif [[ $COMP_CWORD -eq $start ]]; then
                mapfile -t COMPREPLY < <(compgen -c -- "$cur")
        else
                compopt -o filenames 2>/dev/null
                mapfile -t COMPREPLY < <(compgen -f -- "$cur")
        fi
}

_dsh_sandbox()
{
        local program=${COMP_WORDS[0]} cur=${COMP_WORDS[COMP_CWORD]} option=
        local command=${COMP_WORDS[1]} action= first=2 options= i word
        COMPREPLY=()

        # `--mode=VALUE`: bash splits the word at '=' (COMP_WORDBREAKS).
        if [[ $cur == "=" ]]; then
                option=${COMP_WORDS[COMP_CWORD - 1]}
                cur=
        elif [[ $COMP_CWORD -ge 2 && ${COMP_WORDS[COMP_CWORD - 1]} == "=" ]]; then
                option=${COMP_WORDS[COMP_CWORD - 2]}
        elif [[ $COMP_CWORD -ge 2 ]]; then
                option=${COMP_WORDS[COMP_CWORD - 1]}
        fi

        if [[ $COMP_CWORD -eq 1 && $cur == -* ]]; then
                mapfile -t COMPREPLY < <(compgen -W "-h --help --version" -- "$cur")
                return
        elif [[ $COMP_CWORD -eq 1 ]]; then
                mapfile -t COMPREPLY < <(compgen -W "run bash confine probe session policy why fs mcp serve" -- "$cur")
                return
        fi

        case $command in
        run | confine)
                options="$_dsh_sandbox_policy_options --remote -h --help --" ;;
        bash)
                options="$_dsh_sandbox_policy_options --remote --timeout --sandbox-permissions --justification"
                options+=" --approval-command --approval-timeout --output-limit --cwd --json -h --help --"
                options+=" --additional-write --additional-host" ;;
        probe)
                options="--json -c --config -b --backend --remote -h --help" ;;
        mcp)
                options="$_dsh_sandbox_policy_options -h --help" ;;
        why)
                options="$_dsh_sandbox_policy_options --op --json -h --help" ;;
        serve)
                options="-c --config --approval-timeout -h --help" ;;
        session | policy | fs)
                action=${COMP_WORDS[2]}
                first=3
                if [[ $COMP_CWORD -eq 2 ]]; then
                        if [[ $cur == -* ]]; then
                                mapfile -t COMPREPLY < <(compgen -W "-h --help" -- "$cur")
                        elif [[ $command == session ]]; then
                                mapfile -t COMPREPLY < <(compgen -W "new mode show list denials" -- "$cur")
                        elif [[ $command == fs ]]; then
                                mapfile -t COMPREPLY < <(compgen -W "write edit mkdir rm mv read" -- "$cur")
                        else
                                mapfile -t COMPREPLY < <(compgen -W "resolve context" -- "$cur")
                        fi
                        return
                fi
                case $command/$action in
                session/new) options="--cwd --parent -h --help" ;;
                session/show) options="--json -c --config -h --help" ;;
                session/list) options="--json -c --config -h --help" ;;
                session/denials) options="--json -c --config -h --help" ;;
                session/mode) options="-h --help" ;;
                policy/resolve) options="$_dsh_sandbox_policy_options --json -h --help" ;;
                policy/context) options="-s --session -c --config -h --help" ;;
                fs/write) options="$_dsh_sandbox_fs_options -r --create-only" ;;
                fs/edit) options="$_dsh_sandbox_fs_options -r --old --new --all" ;;
                fs/mkdir) options="$_dsh_sandbox_fs_options -r -p --parents" ;;
                fs/rm) options="$_dsh_sandbox_fs_options -r --recursive" ;;
                fs/mv) options="$_dsh_sandbox_fs_options -r --no-replace" ;;
                fs/read) options="$_dsh_sandbox_fs_options -r --offset --length" ;;
                *) return ;;
                esac ;;
        *)
                return ;;
        esac

        # Walk the words before the cursor: an option's separate value is skipped; for run and
        # confine, `--` or the first non-option starts the program, and options end there; for
        # bash it starts COMMAND, one shell command line, which nothing here completes.
        local positionals=0
        for ((i = first; i < COMP_CWORD; i++)); do
                word=${COMP_WORDS[i]}
                if [[ $word == "=" ]]; then
                        ((i++))
                elif [[ $word == "--" && ($command == run || $command == confine) ]]; then
                        _dsh_sandbox_program $((i + 1)) "$cur"
                        return
                elif [[ $word == -r && $command/$action == fs/rm ]]; then
                        :  # --recursive, no value
                elif [[ $word == "--" && $command == bash ]]; then
                        return
                elif [[ $word == -* ]]; then
                        case $word in
                        -m | --mode | -r | --root | -w | --allow-write | --allow-unix-socket | -s | --session | \
                                -b | --backend | --network | --allow-host | --allow-local-port | --dns-upstream | \
                                --mask | --allow-env | --op | \
                                -c | --config | --remote | --cwd | --parent | --old | --new | --timeout | \
                                --sandbox-permissions | --additional-write | --additional-host | \
                                --justification | --approval-command | --approval-timeout | --output-limit)
                                [[ ${COMP_WORDS[i + 1]} != "=" ]] && ((i++)) ;;
                        esac
                elif [[ $command == run || $command == confine ]]; then
                        _dsh_sandbox_program "$i" "$cur"
                        return
                elif [[ $command == bash ]]; then
                        return
                else
                        ((positionals++))
                fi
        done

        [[ $option == -r && $command/$action == fs/rm ]] && option=
        [[ $option ]] && _dsh_sandbox_option_value "$option" "$cur" "$program" && return
        if [[ $cur == -* ]]; then
                mapfile -t COMPREPLY < <(compgen -W "$options" -- "$cur")
                return
        fi
        case $command/$action in
        run/* | confine/*)
                _dsh_sandbox_program "$COMP_CWORD" "$cur" ;;
        bash/*) ;;
        session/mode)
                if ((positionals == 0)); then
                        mapfile -t COMPREPLY < <(compgen -W "$(_dsh_sandbox_session_ids "$program")" -- "$cur")
                elif ((positionals == 1)); then
                        mapfile -t COMPREPLY < <(compgen -W "$_dsh_sandbox_modes" -- "$cur")
                fi ;;
        session/show | session/denials)
                ((positionals == 0)) &&
                        mapfile -t COMPREPLY < <(compgen -W "$(_dsh_sandbox_session_ids "$program")" -- "$cur") ;;
        fs/* | why/*)
                compopt -o filenames 2>/dev/null
                mapfile -t COMPREPLY < <(compgen -f -- "$cur") ;;
        *)
                mapfile -t COMPREPLY < <(compgen -W "$options" -- "$cur") ;;
        esac
}

complete -F _dsh_sandbox dsh-sandbox
