/* SPDX-License-Identifier: MIT */
/*
 * The metadata filter (src/core/metadata-filter.h): its program run over
 * every system call number by a small interpreter of the instructions it
 * uses — each metadata call gets the mode's action, the attribute and
 * terminal ioctls theirs, everything else is allowed, and a foreign
 * architecture or an x32 number kills, each write-intent call goes to the
 * supervisor where there is one and a plain read never does — then
 * installed for real in a child, where each metadata call fails with EPERM,
 * each write-intent call fails once its listener is gone, and nothing else
 * does.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <unistd.h>

#include <cmocka.h>
#include <linux/netlink.h>
#include <netinet/in.h>

#include "core/metadata-filter.h"

#define CAPACITY 256
#define X32_SYSCALL_BIT 0x40000000U

/* Runs `program` over `data` as the kernel would (the instructions build_program() emits, nothing more). */
static uint32_t run(const struct sock_filter *program, size_t length, const struct seccomp_data *data)
{
        uint32_t accumulator = 0;

        for (size_t pc = 0; pc < length; pc++) {
                const struct sock_filter *instruction = &program[pc];

                switch (instruction->code) {
                case BPF_LD | BPF_W | BPF_ABS:
                        assert_true(instruction->k + 4 <= sizeof(*data));
                        memcpy(&accumulator, (const char *) data + instruction->k, 4);
                        break;
                case BPF_JMP | BPF_JEQ | BPF_K:
                        pc += accumulator == instruction->k ? instruction->jt : instruction->jf;
                        break;
                case BPF_JMP | BPF_JSET | BPF_K:
                        pc += (accumulator & instruction->k) ? instruction->jt : instruction->jf;
                        break;
                case BPF_JMP | BPF_JGE | BPF_K:
                        pc += accumulator >= instruction->k ? instruction->jt : instruction->jf;
                        break;
                case BPF_JMP | BPF_JA:
                        pc += instruction->k;
                        break;
                case BPF_ALU | BPF_AND | BPF_K:
                        accumulator &= instruction->k;
                        break;
                case BPF_RET | BPF_K:
                        return instruction->k;
                default:
                        fail_msg("instruction %#x at %zu is not one the filter should use", instruction->code, pc);
                }
        }
        fail_msg("the program ran off its end");
        return 0;
}

static bool is_metadata_call(int nr)
{
        for (const int *call = dsh_metadata_syscalls(); *call >= 0; call++)
                if (*call == nr)
                        return true;
        return false;
}

static bool is_io_uring_call(int nr)
{
        return nr == __NR_io_uring_setup || nr == __NR_io_uring_enter || nr == __NR_io_uring_register;
}

/* The calls that create a file with a mode: open and openat (with O_CREAT or O_TMPFILE), creat, mknod, mknodat. */
struct creation_call {
        int nr;
        int flags_argument;     /* -1: always creates */
        int mode_argument;
};

static const struct creation_call creation_calls[] = {
        { __NR_open, 1, 2 }, { __NR_openat, 2, 3 }, { __NR_creat, -1, 1 }, { __NR_mknod, -1, 1 },
        { __NR_mknodat, -1, 2 },
};

/* The calls sent to the supervisor whatever their arguments (write-call.h): they make, remove, rename or truncate. */
static const int write_intent_calls[] = {
        __NR_mkdir,  __NR_mkdirat, __NR_unlink, __NR_unlinkat, __NR_rmdir,   __NR_rename,    __NR_renameat,
        __NR_renameat2, __NR_link, __NR_linkat, __NR_symlink, __NR_symlinkat, __NR_truncate,
        __NR_umask, /* not a write: the supervisor learns the mask of what it creates next */
};

static bool is_write_intent_call(int nr)
{
        for (size_t i = 0; i < sizeof(write_intent_calls) / sizeof(write_intent_calls[0]); i++)
                if (write_intent_calls[i] == nr)
                        return true;
        return false;
}

/*
 * Where a write-intent call goes: the supervisor, or the kernel where nobody
 * supervises or the supervisor cannot read the command (read-only's
 * DSH_METADATA_DENY_KERNEL_WRITES: Landlock refuses them there).
 */
static uint32_t write_action_of(dsh_metadata_policy policy)
{
        return policy == DSH_METADATA_UNSUPERVISED || policy == DSH_METADATA_DENY_KERNEL_WRITES ? SECCOMP_RET_ALLOW
                                                                                                : SECCOMP_RET_USER_NOTIF;
}

static bool is_creation_call(int nr)
{
        for (size_t i = 0; i < sizeof(creation_calls) / sizeof(creation_calls[0]); i++)
                if (creation_calls[i].nr == nr)
                        return true;
        return nr == __NR_openat2;
}

/*
 * Set-id creation refused (EPERM) whatever the mode, before anything is
 * sent: open and openat only when they create; every other mode is write
 * intent (the supervisor's, or allowed where nobody supervises); high bits
 * of the registers ignored as the kernel ignores them; openat2 ENOSYS (its
 * flags and mode are behind a pointer).
 */
static void check_creation(const struct sock_filter *program, size_t length, uint32_t write_action)
{
        const uint32_t eperm = SECCOMP_RET_ERRNO | EPERM;
        const unsigned int set_id_modes[] = { 04755, 02755, 06000, 04000 | S_IFREG };
        const unsigned long creating[] = { O_CREAT | O_WRONLY, O_TMPFILE | O_RDWR, O_CREAT | O_EXCL | O_CLOEXEC };

        for (size_t c = 0; c < sizeof(creation_calls) / sizeof(creation_calls[0]); c++) {
                const struct creation_call *call = &creation_calls[c];
                struct seccomp_data data = { .arch = AUDIT_ARCH_X86_64, .nr = call->nr };

                for (size_t f = 0; f < sizeof(creating) / sizeof(creating[0]); f++) {
                        if (call->flags_argument >= 0)
                                data.args[call->flags_argument] = creating[f];
                        for (size_t m = 0; m < sizeof(set_id_modes) / sizeof(set_id_modes[0]); m++) {
                                data.args[call->mode_argument] = set_id_modes[m];
                                assert_int_equal(run(program, length, &data), eperm);
                                data.args[call->mode_argument] = 0xffffffff00000000ULL | set_id_modes[m];
                                assert_int_equal(run(program, length, &data), eperm);
                        }
                        data.args[call->mode_argument] = 0755 | S_ISVTX;
                        assert_int_equal(run(program, length, &data), write_action);
                        data.args[call->mode_argument] = 0;
                        assert_int_equal(run(program, length, &data), write_action);
                }
                if (call->flags_argument < 0)
                        continue;
                /* Not creating: the mode argument is garbage the kernel never reads. */
                data.args[call->flags_argument] = O_RDONLY | O_DIRECTORY;
                data.args[call->mode_argument] = 04755;
                assert_int_equal(run(program, length, &data), SECCOMP_RET_ALLOW);
        }
        {
                struct seccomp_data data = { .arch = AUDIT_ARCH_X86_64, .nr = __NR_openat2 };

                assert_int_equal(run(program, length, &data), SECCOMP_RET_ERRNO | ENOSYS);
        }
}

/*
 * open and openat: a plain read is allowed by the program itself (no
 * notification: a read-heavy command pays nothing), every flag of write
 * intent goes to `write_action`, alone or with the read-side flags, and
 * the kernel's int is the low 32 bits of the register.
 */
static void check_open_intent(const struct sock_filter *program, size_t length, uint32_t write_action)
{
        /* O_LARGEFILE as the kernel spells it on x86_64 (glibc's is 0 there). */
        static const uint64_t reads[] = {
                O_RDONLY, O_RDONLY | O_CLOEXEC, O_RDONLY | O_CLOEXEC | O_DIRECTORY | O_NOFOLLOW,
                O_PATH | O_CLOEXEC, O_PATH | O_NOFOLLOW | O_DIRECTORY, O_RDONLY | O_NONBLOCK | O_NOCTTY | 0100000,
                O_RDONLY | O_APPEND, O_RDONLY | O_EXCL | O_NOATIME | O_DIRECT | O_SYNC | O_ASYNC,
                0xffffffff00000000ULL | O_RDONLY | O_CLOEXEC, 0xffffffff00000000ULL | O_DIRECTORY,
        };
        static const uint64_t writes[] = {
                O_WRONLY, O_RDWR, O_ACCMODE, O_CREAT, O_TRUNC, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
                O_RDWR | O_CREAT | O_EXCL, O_WRONLY | O_APPEND, O_RDONLY | O_TRUNC, O_TMPFILE | O_WRONLY,
                020000000 | O_RDONLY, O_PATH | O_WRONLY, 0xffffffff00000000ULL | O_WRONLY,
                0xffffffff00000000ULL | O_TRUNC, 0xffffffff00000000ULL | O_CREAT,
        };
        static const struct {
                int nr;
                int flags_argument;
        } opens[] = { { __NR_open, 1 }, { __NR_openat, 2 } };

        for (size_t o = 0; o < sizeof(opens) / sizeof(opens[0]); o++) {
                struct seccomp_data data = { .arch = AUDIT_ARCH_X86_64, .nr = opens[o].nr };

                /* The mode register of a call that does not create is never read: garbage in it changes nothing. */
                data.args[opens[o].flags_argument + 1] = 06777;
                for (size_t i = 0; i < sizeof(reads) / sizeof(reads[0]); i++) {
                        data.args[opens[o].flags_argument] = reads[i];
                        if (run(program, length, &data) != SECCOMP_RET_ALLOW)
                                fail_msg("system call %d with flags %#llx (a read) is not allowed by the program",
                                         opens[o].nr, (unsigned long long) reads[i]);
                }
                data.args[opens[o].flags_argument + 1] = 0644;
                for (size_t i = 0; i < sizeof(writes) / sizeof(writes[0]); i++) {
                        data.args[opens[o].flags_argument] = writes[i];
                        if (run(program, length, &data) != write_action)
                                fail_msg("system call %d with flags %#llx (write intent) gives %#x, not %#x",
                                         opens[o].nr, (unsigned long long) writes[i],
                                         run(program, length, &data), write_action);
                }
        }
}

static bool is_socket_creating_call(int nr)
{
        return nr == __NR_socket || nr == __NR_socketpair;
}

/*
 * socket and socketpair: an AF_UNIX datagram socket is refused (EACCES)
 * whatever flags ride in the type and whatever the high bits say; every
 * other family and type is allowed.
 */
static void check_socket_rules(const struct sock_filter *program, size_t length, int nr)
{
        const uint32_t eacces = SECCOMP_RET_ERRNO | EACCES;
        static const uint64_t refused_types[] = { SOCK_DGRAM, SOCK_RAW, SOCK_DGRAM | SOCK_CLOEXEC,
                                                  SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, SOCK_RAW | SOCK_NONBLOCK,
                                                  0xffffffff00000000ULL | SOCK_DGRAM };
        static const uint64_t allowed_types[] = { SOCK_STREAM, SOCK_SEQPACKET, SOCK_STREAM | SOCK_CLOEXEC,
                                                  SOCK_SEQPACKET | SOCK_NONBLOCK };
        struct seccomp_data data = { .arch = AUDIT_ARCH_X86_64, .nr = nr };

        for (size_t i = 0; i < sizeof(refused_types) / sizeof(refused_types[0]); i++) {
                data.args[0] = AF_UNIX;
                data.args[1] = refused_types[i];
                assert_int_equal(run(program, length, &data), eacces);
                data.args[0] = 0xffffffff00000000ULL | AF_UNIX;  /* an int: the kernel reads the low 32 bits */
                assert_int_equal(run(program, length, &data), eacces);
                data.args[0] = AF_INET;
                assert_int_equal(run(program, length, &data), SECCOMP_RET_ALLOW);
                data.args[0] = AF_NETLINK;
                assert_int_equal(run(program, length, &data), SECCOMP_RET_ALLOW);
        }
        for (size_t i = 0; i < sizeof(allowed_types) / sizeof(allowed_types[0]); i++) {
                data.args[0] = AF_UNIX;
                data.args[1] = allowed_types[i];
                assert_int_equal(run(program, length, &data), SECCOMP_RET_ALLOW);
        }
}

/* The calls a network policy sends to a supervisor besides connect (sendto on its address: check_sendto()). */
static bool is_network_call(int nr)
{
        return nr == __NR_bind || nr == __NR_listen || nr == __NR_sendmsg || nr == __NR_sendmmsg;
}

/*
 * socket and socketpair under a network policy: unix as under ON; TCP and
 * UDP over inet and inet6 (none at all where nobody supervises: EACCES);
 * netlink's route protocol; every other family EAFNOSUPPORT, every other
 * inet type or protocol and netlink protocol EPROTONOSUPPORT.  High bits of
 * the int registers change nothing.
 */
static void check_network_socket_rules(const struct sock_filter *program, size_t length, int nr, bool supervised)
{
        const uint32_t eacces = SECCOMP_RET_ERRNO | EACCES, eproto = SECCOMP_RET_ERRNO | EPROTONOSUPPORT;
        const uint32_t eafnosupport = SECCOMP_RET_ERRNO | EAFNOSUPPORT;
        const uint32_t inet_allowed = supervised ? SECCOMP_RET_ALLOW : eacces;
        const uint32_t inet_refused = supervised ? eproto : eacces;
        static const int families[] = { AF_INET, AF_INET6 };
        static const int refused_families[] = { AF_PACKET, AF_VSOCK, AF_BLUETOOTH, AF_ALG, AF_XDP, AF_CAN, AF_TIPC,
                                                AF_KEY, AF_RDS, AF_APPLETALK, 0, 200 };
        static const struct { uint64_t type, protocol; bool allowed; } inet_cases[] = {
                { SOCK_STREAM, 0, true }, { SOCK_STREAM, IPPROTO_TCP, true },
                { SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, true },
                { 0xffffffff00000000ULL | SOCK_STREAM, 0xffffffff00000000ULL | IPPROTO_TCP, true },
                { SOCK_DGRAM, 0, true }, { SOCK_DGRAM, IPPROTO_UDP, true }, { SOCK_DGRAM | SOCK_CLOEXEC, 0, true },
                { SOCK_RAW, IPPROTO_RAW, false }, { SOCK_RAW, IPPROTO_ICMP, false }, { SOCK_RAW, 0, false },
                { SOCK_DGRAM, IPPROTO_ICMP, false }, { SOCK_DGRAM, IPPROTO_ICMPV6, false },
                { SOCK_DGRAM, IPPROTO_UDPLITE, false }, { SOCK_STREAM, IPPROTO_SCTP, false },
                { SOCK_SEQPACKET, IPPROTO_SCTP, false }, { SOCK_SEQPACKET, 0, false }, { SOCK_STREAM, 262, false },
                { SOCK_STREAM, IPPROTO_UDP, false }, { SOCK_DGRAM, IPPROTO_TCP, false }, { SOCK_PACKET, 0, false },
        };
        struct seccomp_data data = { .arch = AUDIT_ARCH_X86_64, .nr = nr };

        for (size_t f = 0; f < sizeof(families) / sizeof(families[0]); f++)
                for (size_t i = 0; i < sizeof(inet_cases) / sizeof(inet_cases[0]); i++) {
                        data.args[0] = (uint64_t) families[f];
                        data.args[1] = inet_cases[i].type;
                        data.args[2] = inet_cases[i].protocol;
                        if (run(program, length, &data) != (inet_cases[i].allowed ? inet_allowed : inet_refused))
                                fail_msg("socket(%d, %#llx, %#llx): %#x", families[f],
                                         (unsigned long long) inet_cases[i].type,
                                         (unsigned long long) inet_cases[i].protocol, run(program, length, &data));
                        data.args[0] |= 0xffffffff00000000ULL;
                        assert_int_equal(run(program, length, &data),
                                         inet_cases[i].allowed ? inet_allowed : inet_refused);
                }
        for (size_t f = 0; f < sizeof(refused_families) / sizeof(refused_families[0]); f++) {
                data.args[0] = (uint64_t) refused_families[f];
                data.args[1] = SOCK_DGRAM;
                data.args[2] = 0;
                assert_int_equal(run(program, length, &data), eafnosupport);
        }
        data.args[0] = AF_NETLINK;
        data.args[1] = SOCK_RAW | SOCK_CLOEXEC;
        data.args[2] = NETLINK_ROUTE;
        assert_int_equal(run(program, length, &data), SECCOMP_RET_ALLOW);
        data.args[1] = SOCK_DGRAM;
        assert_int_equal(run(program, length, &data), SECCOMP_RET_ALLOW);
        data.args[2] = NETLINK_AUDIT;
        assert_int_equal(run(program, length, &data), eproto);
        data.args[2] = NETLINK_KOBJECT_UEVENT;
        assert_int_equal(run(program, length, &data), eproto);
        data.args[0] = AF_UNIX;
        data.args[2] = 0;
        data.args[1] = SOCK_DGRAM;
        assert_int_equal(run(program, length, &data), eacces);
        data.args[1] = SOCK_RAW;
        assert_int_equal(run(program, length, &data), eacces);
        data.args[1] = SOCK_STREAM | SOCK_CLOEXEC;
        assert_int_equal(run(program, length, &data), SECCOMP_RET_ALLOW);
        data.args[1] = SOCK_SEQPACKET;
        assert_int_equal(run(program, length, &data), SECCOMP_RET_ALLOW);
}

/* sendto: to the supervisor when its address (all 64 bits of args[4]) is not NULL. */
static void check_sendto(const struct sock_filter *program, size_t length, bool supervised)
{
        static const uint64_t addresses[] = { 0x7f0000001000ULL, 1, 0x100000000ULL, 0xffffffff00000000ULL };
        struct seccomp_data data = { .arch = AUDIT_ARCH_X86_64, .nr = __NR_sendto };

        data.args[5] = 16;
        assert_int_equal(run(program, length, &data), SECCOMP_RET_ALLOW);
        for (size_t i = 0; i < sizeof(addresses) / sizeof(addresses[0]); i++) {
                data.args[4] = addresses[i];
                assert_int_equal(run(program, length, &data), supervised ? SECCOMP_RET_USER_NOTIF : SECCOMP_RET_ALLOW);
        }
}

/*
 * setsockopt under a network policy: the options that pick a packet's next hop or device are EPERM
 * (on the low 32 bits of level and name, as the kernel dispatches), every other allowed.
 */
static void check_setsockopt(const struct sock_filter *program, size_t length, bool network_policy)
{
        static const int refused[][2] = { { SOL_IPV6, IPV6_RTHDR }, { SOL_IPV6, IPV6_2292PKTOPTIONS },
                                          { SOL_IPV6, IPV6_PKTINFO }, { SOL_IPV6, IPV6_UNICAST_IF },
                                          { SOL_IP, IP_OPTIONS }, { SOL_IP, IP_UNICAST_IF },
                                          { SOL_SOCKET, SO_BINDTODEVICE }, { SOL_SOCKET, SO_BINDTOIFINDEX } };
        static const int allowed[][2] = { { SOL_SOCKET, SO_REUSEADDR }, { SOL_IPV6, IPV6_V6ONLY },
                                          { SOL_IPV6, IPV6_RECVPKTINFO }, { SOL_IP, IP_TOS },
                                          { SOL_IP, IP_PKTINFO }, { IPPROTO_TCP, TCP_NODELAY },
                                          { IPPROTO_TCP, IPV6_RTHDR } };
        struct seccomp_data data = { .arch = AUDIT_ARCH_X86_64, .nr = __NR_setsockopt };

        for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
                data.args[1] = 0xffffffff00000000ULL | (uint32_t) refused[i][0];
                data.args[2] = 0xffffffff00000000ULL | (uint32_t) refused[i][1];
                assert_int_equal(run(program, length, &data),
                                 network_policy ? (SECCOMP_RET_ERRNO | EPERM) : SECCOMP_RET_ALLOW);
        }
        for (size_t i = 0; i < sizeof(allowed) / sizeof(allowed[0]); i++) {
                data.args[1] = (uint32_t) allowed[i][0];
                data.args[2] = (uint32_t) allowed[i][1];
                assert_int_equal(run(program, length, &data), SECCOMP_RET_ALLOW);
        }
}

static void check_program(dsh_metadata_policy policy, dsh_network_filter network, bool terminal_rule,
                          uint32_t action)
{
        const bool network_policy = network != DSH_NETWORK_FILTER_ON;
        const bool listening = policy != DSH_METADATA_UNSUPERVISED;
        static const uint32_t supervised[] = { DSH_FS_IOC_SETFLAGS, DSH_FS_IOC32_SETFLAGS, DSH_FS_IOC_FSSETXATTR };
        static const uint32_t refused[] = { DSH_FS_IOC_SETVERSION, DSH_FS_IOC32_SETVERSION, DSH_FS_IOC_ENABLE_VERITY,
                                            DSH_FS_IOC_SET_ENCRYPTION_POLICY, DSH_EXT4_IOC_SETVERSION,
                                            DSH_EXT4_IOC32_SETVERSION, DSH_EXT4_IOC_MIGRATE };
        const uint32_t eperm = SECCOMP_RET_ERRNO | EPERM;
        struct sock_filter program[CAPACITY];
        size_t length = dsh_metadata_filter_program(policy, network, terminal_rule, program, CAPACITY);
        struct seccomp_data data = { .arch = AUDIT_ARCH_X86_64 };

        assert_true(length > 0);
        for (int nr = 0; nr < 1024; nr++) {
                data.nr = nr;
                data.args[1] = TIOCSTI;
                if (nr == __NR_ioctl)
                        assert_int_equal(run(program, length, &data), terminal_rule ? eperm : SECCOMP_RET_ALLOW);
                else if (is_metadata_call(nr))
                        assert_int_equal(run(program, length, &data), action);
                else if (is_io_uring_call(nr))
                        assert_int_equal(run(program, length, &data), eperm);  /* under both modes */
                else if (is_creation_call(nr))
                        continue;  /* check_creation(), check_open_intent() */
                else if (is_write_intent_call(nr))
                        assert_int_equal(run(program, length, &data), write_action_of(policy));
                else if (nr == __NR_connect)  /* the supervisor's under both modes; refused where nobody supervises */
                        assert_int_equal(run(program, length, &data), policy == DSH_METADATA_UNSUPERVISED
                                                                              ? SECCOMP_RET_ERRNO | EACCES
                                                                              : SECCOMP_RET_USER_NOTIF);
                else if (is_socket_creating_call(nr) && network_policy)
                        check_network_socket_rules(program, length, nr, listening);
                else if (is_socket_creating_call(nr))
                        check_socket_rules(program, length, nr);
                else if (nr == __NR_sendto && network_policy)
                        check_sendto(program, length, listening);
                else if (is_network_call(nr) && network_policy && listening)
                        assert_int_equal(run(program, length, &data), SECCOMP_RET_USER_NOTIF);
                else if (run(program, length, &data) != SECCOMP_RET_ALLOW)
                        fail_msg("system call %d is neither a metadata call, a write-intent call, a socket call nor "
                                 "io_uring, yet the filter does not allow it", nr);
        }
        check_creation(program, length, write_action_of(policy));
        check_open_intent(program, length, write_action_of(policy));
        check_setsockopt(program, length, network_policy);
        data.nr = __NR_ioctl;
        for (size_t i = 0; i < sizeof(supervised) / sizeof(supervised[0]); i++) {
                data.args[1] = supervised[i];
                assert_int_equal(run(program, length, &data), action);
                /* The kernel dispatches on the low 32 bits: high bits change nothing. */
                data.args[1] = 0xffffffff00000000ULL | supervised[i];
                assert_int_equal(run(program, length, &data), action);
        }
        for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
                data.args[1] = refused[i];
                assert_int_equal(run(program, length, &data), eperm);
        }
        data.args[1] = FIONREAD;
        assert_int_equal(run(program, length, &data), SECCOMP_RET_ALLOW);
        /* A pty's slave: the supervisor's to open; without one, the kernel's (and Landlock's) to decide. */
        data.args[1] = DSH_TIOCGPTPEER;
        assert_int_equal(run(program, length, &data),
                         policy == DSH_METADATA_SUPERVISE ? SECCOMP_RET_USER_NOTIF : SECCOMP_RET_ALLOW);
        data.args[1] = 0xffffffff00000000ULL | DSH_TIOCGPTPEER;
        assert_int_equal(run(program, length, &data),
                         policy == DSH_METADATA_SUPERVISE ? SECCOMP_RET_USER_NOTIF : SECCOMP_RET_ALLOW);
        data.args[1] = TIOCLINUX;
        assert_int_equal(run(program, length, &data), terminal_rule ? eperm : SECCOMP_RET_ALLOW);
        /* x32 numbers and a foreign architecture never reach the kernel. */
        data.nr = (int) (X32_SYSCALL_BIT | (uint32_t) __NR_chmod);
        assert_int_equal(run(program, length, &data), SECCOMP_RET_KILL_PROCESS);
        data.nr = (int) (X32_SYSCALL_BIT | (uint32_t) __NR_getpid);
        assert_int_equal(run(program, length, &data), SECCOMP_RET_KILL_PROCESS);
        data.nr = __NR_getpid;
        data.arch = AUDIT_ARCH_I386;
        assert_int_equal(run(program, length, &data), SECCOMP_RET_KILL_PROCESS);
}

static void test_program_over_every_number(void **state)
{
        (void) state;
#ifdef TIOCGPTPEER
        assert_int_equal(DSH_TIOCGPTPEER, TIOCGPTPEER);
#endif
#if defined(__x86_64__)
        /* Under ON, bind, listen and the sends are allowed (the catch-all branch) and the families unlimited. */
        for (int n = DSH_NETWORK_FILTER_ON; n <= DSH_NETWORK_FILTER_ALLOW_LIST; n++) {
                dsh_network_filter network = (dsh_network_filter) n;

                /* Read-only: sent to the supervisor, which refuses each (EPERM) and writes it down. */
                check_program(DSH_METADATA_DENY, network, false, SECCOMP_RET_USER_NOTIF);
                check_program(DSH_METADATA_DENY, network, true, SECCOMP_RET_USER_NOTIF);
                check_program(DSH_METADATA_SUPERVISE, network, false, SECCOMP_RET_USER_NOTIF);
                check_program(DSH_METADATA_SUPERVISE, network, true, SECCOMP_RET_USER_NOTIF);
                /* A harness-spawned bwrap argv: nobody answers, so metadata and connect are the kernel's refusals. */
                check_program(DSH_METADATA_UNSUPERVISED, network, true, SECCOMP_RET_ERRNO | EPERM);
                /* Read-only where the supervisor cannot read the command: metadata refused, connect its, writes the kernel's. */
                check_program(DSH_METADATA_DENY_KERNEL_WRITES, network, true, SECCOMP_RET_ERRNO | EPERM);
                check_program(DSH_METADATA_DENY_KERNEL_WRITES, network, false, SECCOMP_RET_ERRNO | EPERM);
        }
        /* A network mode the filter does not know builds nothing (the install then fails: never unfiltered). */
        {
                struct sock_filter program[CAPACITY];

                assert_int_equal(dsh_metadata_filter_program(DSH_METADATA_SUPERVISE, (dsh_network_filter) 7, true,
                                                             program, CAPACITY), 0);
        }
#else
        skip();
#endif
}

/* Every call x86_64 has for the job, and the newest ones by number. */
static void test_every_metadata_call_is_listed(void **state)
{
        const int expected[] = { __NR_chmod, __NR_fchmod, __NR_fchmodat, __NR_fchmodat2, __NR_chown, __NR_fchown,
                                 __NR_lchown, __NR_fchownat, __NR_utime, __NR_utimes, __NR_futimesat, __NR_utimensat,
                                 __NR_setxattr, __NR_lsetxattr, __NR_fsetxattr, __NR_removexattr, __NR_lremovexattr,
                                 __NR_fremovexattr, __NR_setxattrat, __NR_removexattrat, __NR_file_setattr };

        (void) state;
#if defined(__x86_64__)
        for (size_t i = 0; i < sizeof(expected) / sizeof(expected[0]); i++)
                if (!is_metadata_call(expected[i]))
                        fail_msg("system call %d is missing from the metadata filter", expected[i]);
        assert_int_equal(__NR_fchmodat2, 452);
        assert_int_equal(__NR_setxattrat, 463);
        assert_int_equal(__NR_removexattrat, 466);
        assert_int_equal(__NR_file_setattr, 469);
#else
        skip();
#endif
}

/*
 * Installed for real (read-only): each metadata call goes to the supervisor
 * (which refuses it with EPERM and a record) and never to the kernel.  The
 * listener is gone at once (nobody serves it here): so each metadata and
 * each write-intent call fails with ENOSYS, even one the kernel would allow
 * (a supervisor gone never lets a change through), the set-id creations and
 * the refused ioctls still get the filter's own EPERM, and every plain read
 * still reaches the kernel (it never notifies).
 */
static void test_deny_filter_on_the_kernel(void **state)
{
        int status = 0;
        pid_t pid;

        (void) state;
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                int failures = 0;

                int sockets[2];

                /*
                 * The listener leaves at once (connect and write intent are the
                 * supervisor's), and both ends of its socket are closed: the
                 * listener in flight is released, and nobody serves the filter.
                 */
                if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sockets) < 0 ||
                    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
                    dsh_install_metadata_filter(DSH_METADATA_DENY, DSH_NETWORK_FILTER_ON, sockets[1], true) < 0)
                        _exit(100);
                close(sockets[0]);
                close(sockets[1]);
                /* Arguments the kernel would reject (a missing file, a bad fd): the kernel never sees them. */
                failures += chmod("/nonexistent", 0) == 0 || errno != ENOSYS;
                failures += fchmod(-1, 0) == 0 || errno != ENOSYS;
                failures += syscall(__NR_fchmodat2, -1, "", 0, 0) == 0 || errno != ENOSYS;
                failures += lchown("/nonexistent", 0, 0) == 0 || errno != ENOSYS;
                failures += syscall(__NR_utimensat, -1, NULL, NULL, 0) == 0 || errno != ENOSYS;
                failures += setxattr("/nonexistent", "user.x", "", 0, 0) == 0 || errno != ENOSYS;
                failures += fremovexattr(-1, "user.x") == 0 || errno != ENOSYS;
                failures += syscall(__NR_file_setattr, -1, "", NULL, 0, 0) == 0 || errno != ENOSYS;
                failures += ioctl(-1, DSH_FS_IOC_SETFLAGS, NULL) == 0 || errno != ENOSYS;
                failures += ioctl(-1, TIOCSTI, "x") == 0 || errno != EPERM;
                /* Creation with a set-id bit: EPERM before the kernel finds the directory missing. */
                failures += open("/nonexistent/x", O_CREAT | O_WRONLY, 04755) >= 0 || errno != EPERM;
                failures += openat(AT_FDCWD, "/nonexistent/x", O_TMPFILE | O_RDWR, 02700) >= 0 || errno != EPERM;
                failures += creat("/nonexistent/x", 06755) >= 0 || errno != EPERM;
                failures += mknod("/nonexistent/x", S_IFREG | 04755, 0) == 0 || errno != EPERM;
                failures += syscall(__NR_openat2, AT_FDCWD, "/", NULL, 0) >= 0 || errno != ENOSYS;
                /* Write intent with its supervisor gone: ENOSYS, even where the kernel would have allowed it. */
                failures += open("/nonexistent/x", O_CREAT | O_WRONLY, 0755) >= 0 || errno != ENOSYS;
                failures += open("/dev/null", O_WRONLY | O_CLOEXEC) >= 0 || errno != ENOSYS;
                failures += openat(AT_FDCWD, "/dev/null", O_RDWR | O_CLOEXEC) >= 0 || errno != ENOSYS;
                failures += openat(AT_FDCWD, "/dev/null", O_RDONLY | O_TRUNC | O_CLOEXEC) >= 0 || errno != ENOSYS;
                failures += creat("/nonexistent/x", 0644) >= 0 || errno != ENOSYS;
                failures += mkdir("/nonexistent/x", 0755) == 0 || errno != ENOSYS;
                failures += syscall(__NR_mkdirat, AT_FDCWD, "/nonexistent/x", 0755) == 0 || errno != ENOSYS;
                failures += unlink("/nonexistent") == 0 || errno != ENOSYS;
                failures += rmdir("/nonexistent") == 0 || errno != ENOSYS;
                failures += rename("/nonexistent", "/nonexistent2") == 0 || errno != ENOSYS;
                failures += syscall(__NR_renameat2, AT_FDCWD, "/a", AT_FDCWD, "/b", 0) == 0 || errno != ENOSYS;
                failures += link("/nonexistent", "/nonexistent2") == 0 || errno != ENOSYS;
                failures += symlink("/nonexistent", "/nonexistent2") == 0 || errno != ENOSYS;
                failures += truncate("/nonexistent", 0) == 0 || errno != ENOSYS;
                failures += mknod("/nonexistent/x", S_IFIFO | 0644, 0) == 0 || errno != ENOSYS;
                /* A plain read is not write intent: the kernel's own answer. */
                failures += open("/nonexistent", O_RDONLY, 04755) >= 0 || errno != ENOENT;
                failures += openat(AT_FDCWD, "/nonexistent", O_RDONLY | O_DIRECTORY | O_CLOEXEC) >= 0 ||
                            errno != ENOENT;
                {
                        int null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
                        int path_fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);

                        failures += null_fd < 0 || path_fd < 0;
                        if (null_fd >= 0)
                                close(null_fd);
                        if (path_fd >= 0)
                                close(path_fd);
                }
                failures += ioctl(-1, FIONREAD, NULL) == 0 || errno != EBADF;
                failures += ioctl(-1, DSH_TIOCGPTPEER, O_RDWR) == 0 || errno != EBADF;
                failures += fstat(-1, &(struct stat) { 0 }) == 0 || errno != EBADF;
                failures += getppid() <= 0;
                /* An AF_UNIX datagram socket cannot be made; a stream one can. */
                failures += socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0) >= 0 || errno != EACCES;
                failures += socketpair(AF_UNIX, SOCK_RAW, 0, (int[2]) { 0 }) == 0 || errno != EACCES;
                failures += socket(AF_UNIX, SOCK_STREAM, 0) < 0;
                _exit(failures);
        }
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFEXITED(status));
        assert_int_equal(WEXITSTATUS(status), 0);
}

/*
 * Installed for real where nobody supervises (a harness-spawned bwrap argv):
 * no listener, write intent goes on to the kernel (its own answer, here
 * ENOENT), set-id creation is still EPERM, metadata EPERM, connect EACCES.
 */
static void test_unsupervised_filter_on_the_kernel(void **state)
{
        int status = 0;
        pid_t pid;

        (void) state;
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                struct sockaddr_un address = { .sun_family = AF_UNIX, .sun_path = "/nonexistent/socket" };
                int failures = 0, fd;

                if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
                    dsh_install_metadata_filter(DSH_METADATA_UNSUPERVISED, DSH_NETWORK_FILTER_ON, -1, true) < 0)
                        _exit(100);
                failures += open("/nonexistent/x", O_CREAT | O_WRONLY, 0644) >= 0 || errno != ENOENT;
                failures += mkdir("/nonexistent/x", 0755) == 0 || errno != ENOENT;
                failures += rename("/nonexistent", "/nonexistent2") == 0 || errno != ENOENT;
                failures += truncate("/nonexistent", 0) == 0 || errno != ENOENT;
                failures += open("/nonexistent/x", O_CREAT | O_WRONLY, 04755) >= 0 || errno != EPERM;
                failures += chmod("/nonexistent", 0) == 0 || errno != EPERM;
                fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
                failures += fd < 0 || write(fd, "x", 1) != 1;
                if (fd >= 0)
                        close(fd);
                fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
                failures += fd < 0 || connect(fd, (struct sockaddr *) &address, sizeof(address)) == 0 ||
                            errno != EACCES;
                _exit(failures);
        }
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFEXITED(status));
        assert_int_equal(WEXITSTATUS(status), 0);
}

/*
 * Installed for real under DSH_METADATA_DENY_KERNEL_WRITES with its
 * listener gone at once: write intent is the kernel's own answer (never
 * sent, so never ENOSYS), set-id creation and metadata still EPERM, and
 * connect, the supervisor's, fails (ENOSYS) rather than passes.
 */
static void test_deny_kernel_writes_filter_on_the_kernel(void **state)
{
        int status = 0;
        pid_t pid;

        (void) state;
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                struct sockaddr_un address = { .sun_family = AF_UNIX, .sun_path = "/nonexistent/socket" };
                int failures = 0, fd, sockets[2];

                if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sockets) < 0 ||
                    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
                    dsh_install_metadata_filter(DSH_METADATA_DENY_KERNEL_WRITES, DSH_NETWORK_FILTER_ON, sockets[1], true) < 0)
                        _exit(100);
                close(sockets[0]);
                close(sockets[1]);
                failures += open("/nonexistent/x", O_CREAT | O_WRONLY, 0644) >= 0 || errno != ENOENT;
                failures += mkdir("/nonexistent/x", 0755) == 0 || errno != ENOENT;
                failures += unlink("/nonexistent") == 0 || errno != ENOENT;
                failures += open("/nonexistent/x", O_CREAT | O_WRONLY, 04755) >= 0 || errno != EPERM;
                failures += chmod("/nonexistent", 0) == 0 || errno != EPERM;
                fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
                failures += fd < 0 || write(fd, "x", 1) != 1;
                if (fd >= 0)
                        close(fd);
                fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
                failures += fd < 0 || connect(fd, (struct sockaddr *) &address, sizeof(address)) == 0 ||
                            errno != ENOSYS;
                _exit(failures);
        }
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFEXITED(status));
        assert_int_equal(WEXITSTATUS(status), 0);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_program_over_every_number),
                cmocka_unit_test(test_every_metadata_call_is_listed),
                cmocka_unit_test(test_deny_filter_on_the_kernel),
                cmocka_unit_test(test_unsupervised_filter_on_the_kernel),
                cmocka_unit_test(test_deny_kernel_writes_filter_on_the_kernel),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
