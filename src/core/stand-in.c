/* SPDX-License-Identifier: MIT */
#include <signal.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include "core/stand-in.h"

int dsh_stand_in_end_like(int wait_status)
{
        struct sigaction fallback = { 0 };
        sigset_t only;
        int signal_number;

        if (WIFEXITED(wait_status))
                return WEXITSTATUS(wait_status);
        if (!WIFSIGNALED(wait_status))
                return 125;
        signal_number = WTERMSIG(wait_status);
        fflush(NULL);
        /* A core of this process would be a core of the wrong program. */
        (void) prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
        fallback.sa_handler = SIG_DFL;
        sigemptyset(&fallback.sa_mask);
        sigaction(signal_number, &fallback, NULL);
        sigemptyset(&only);
        sigaddset(&only, signal_number);
        sigprocmask(SIG_UNBLOCK, &only, NULL);
        raise(signal_number);
        return 128 + signal_number;
}
