/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/netlink.h>
#include <linux/seccomp.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/kernel-abi.h"
#include "core/metadata-filter.h"

#if defined(__x86_64__)
#define FILTER_AUDIT_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define FILTER_AUDIT_ARCH AUDIT_ARCH_AARCH64
#endif

/* x32 system calls share x86_64's audit arch and set this bit in the number. */
#define X32_SYSCALL_BIT 0x40000000U

static const int metadata_syscalls[] = {
#ifdef __NR_chmod
        __NR_chmod,
#endif
        __NR_fchmod,
        __NR_fchmodat,
        __NR_fchmodat2,
#ifdef __NR_chown
        __NR_chown,
#endif
        __NR_fchown,
#ifdef __NR_lchown
        __NR_lchown,
#endif
        __NR_fchownat,
#ifdef __NR_utime
        __NR_utime,
#endif
#ifdef __NR_utimes
        __NR_utimes,
#endif
#ifdef __NR_futimesat
        __NR_futimesat,
#endif
        __NR_utimensat,
        __NR_setxattr,
        __NR_lsetxattr,
        __NR_fsetxattr,
        __NR_removexattr,
        __NR_lremovexattr,
        __NR_fremovexattr,
        __NR_setxattrat,
        __NR_removexattrat,
        __NR_file_setattr,
        -1,
};

/*
 * io_uring, refused outright under both modes (EPERM, what the kernel itself
 * answers when an administrator disables io_uring, so programs already fall
 * back on it).  Its IORING_OP_SETXATTR and IORING_OP_FSETXATTR change
 * extended attributes inside the kernel, without a system call a seccomp
 * filter could see: a ring would reach every file the command can open,
 * read-only ones included, past the filter and the supervisor alike.  Its
 * other operations (open, rename, unlink, link...) go through the same LSM
 * hooks as the system calls and stay under Landlock, but one ring cannot be
 * allowed for some operations and not others from here.  Refusing setup
 * alone would leave a ring made before the filter (none reaches the command:
 * every fd above 2 is closed before exec), so enter and register are
 * refused too.
 */
static const int refused_syscalls[] = {
        __NR_io_uring_setup,
        __NR_io_uring_enter,
        __NR_io_uring_register,
};

/*
 * Creation with a set-user-ID or set-group-ID bit, refused (EPERM) under
 * both modes, by the filter itself: the mode is a register argument, so the
 * kernel decides on the value it will use, with no pointer in between.
 * open and openat only when they create (O_CREAT, or O_TMPFILE: a nameless
 * file linked in later); creat always; mknod and mknodat (a regular file's
 * S_IFREG is a mode too).  Needed although a writer without CAP_FSETID
 * clears the set-user-ID bit on write(2): the file is planted empty, and
 * whoever fills it later with CAP_FSETID (root outside the sandbox: a
 * build, a checkout, a copy over it) keeps the bit; a set-group-ID file
 * without group execute is not cleared by a write at all.  openat2 carries
 * its flags and mode behind a pointer (struct open_how), which a filter
 * cannot read and a supervisor could only re-read after the command could
 * change it: it is refused with ENOSYS, as on a kernel before 5.6, and
 * programs fall back to openat (glibc, Python, git, node and npm on this
 * project's machines never call it).
 */
enum creation_kind {
        CREATES_OPEN,      /* open(path, flags, mode) */
        CREATES_OPENAT,    /* openat(dirfd, path, flags, mode) */
        CREATES_MODE_1,    /* creat(path, mode), mknod(path, mode, dev) */
        CREATES_MODE_2,    /* mknodat(dirfd, path, mode, dev) */
};

static const struct {
        int nr;
        enum creation_kind kind;
} creation_syscalls[] = {
#ifdef __NR_open
        { __NR_open, CREATES_OPEN },
#endif
        { __NR_openat, CREATES_OPENAT },
#ifdef __NR_creat
        { __NR_creat, CREATES_MODE_1 },
#endif
#ifdef __NR_mknod
        { __NR_mknod, CREATES_MODE_1 },
#endif
        { __NR_mknodat, CREATES_MODE_2 },
};

/*
 * Write intent (write-call.h), sent to the supervisor under both modes
 * that have one (DSH_METADATA_DENY, DSH_METADATA_SUPERVISE): Landlock can
 * only grant, so inside a writable root only the supervisor can hold a
 * protected subpath back (write-supervisor.c), and under bwrap it writes
 * down what the mounts refuse.  These calls make, remove, rename or write
 * through a name whatever their arguments, so the kernel decides them on
 * the number alone; an open is sent only with write intent in its flags,
 * and creat, mknod and mknodat after the set-id test (creation_syscalls
 * above), so that a plain read never notifies: a read-heavy command pays
 * nothing.  Where nobody supervises (DSH_METADATA_UNSUPERVISED) they are
 * allowed, as before: the mounts decide.
 */
static const int write_intent_syscalls[] = {
#ifdef __NR_mkdir
        __NR_mkdir,
#endif
        __NR_mkdirat,
#ifdef __NR_unlink
        __NR_unlink,
#endif
        __NR_unlinkat,
#ifdef __NR_rmdir
        __NR_rmdir,
#endif
#ifdef __NR_rename
        __NR_rename,
#endif
#ifdef __NR_renameat
        __NR_renameat,
#endif
        __NR_renameat2,
#ifdef __NR_link
        __NR_link,
#endif
        __NR_linkat,
#ifdef __NR_symlink
        __NR_symlink,
#endif
        __NR_symlinkat,
        __NR_truncate,
        /*
         * Not a write: umask changes the mode of what the command creates
         * next, which the supervisor applies when it creates for it
         * (write-supervisor.c keeps the command's umask and learns a change
         * here; the call itself is let through, its one argument a register).
         */
        __NR_umask,
};

#define SET_ID_BITS 06000U
/* The kernel's own O_TMPFILE bit: glibc's __O_TMPFILE also holds O_DIRECTORY, which every directory open sets. */
#define KERNEL_O_TMPFILE_BIT 020000000U
#define CREATION_FLAGS ((uint32_t) O_CREAT | KERNEL_O_TMPFILE_BIT)
/*
 * An open with write intent: it may write (an access mode of O_WRONLY,
 * O_RDWR, or 3, which has both bits), truncate, or create.  The kernel reads
 * the flags as an int: the low 32 bits of the register.  O_APPEND alone
 * writes nothing (it needs a writing access mode); O_PATH with any of these
 * is sent too (the kernel then ignores them: sending it costs a round trip,
 * never a write let through).
 */
#define WRITE_INTENT_FLAGS ((uint32_t) (O_WRONLY | O_RDWR | O_TRUNC) | CREATION_FLAGS)

static const uint32_t supervised_ioctls[] = { DSH_FS_IOC_SETFLAGS, DSH_FS_IOC32_SETFLAGS, DSH_FS_IOC_FSSETXATTR };
static const uint32_t refused_ioctls[] = { DSH_FS_IOC_SETVERSION, DSH_FS_IOC32_SETVERSION, DSH_FS_IOC_ENABLE_VERITY,
                                           DSH_FS_IOC_SET_ENCRYPTION_POLICY, DSH_EXT4_IOC_SETVERSION,
                                           DSH_EXT4_IOC32_SETVERSION, DSH_EXT4_IOC_MIGRATE };

/*
 * The socket calls (socket-call.h says why).  connect is always sent to the
 * supervisor, which performs it: its decision depends on the address, behind
 * a pointer.  socket and socketpair are decided here on their register
 * arguments alone (no pointer, so the kernel enforces it): an AF_UNIX
 * datagram socket (SOCK_DGRAM, or SOCK_RAW, which AF_UNIX makes a datagram
 * one) is refused with EACCES, because it sends to any pathname socket with
 * sendto/sendmsg, which no supervisor sees; a stream or seqpacket socket
 * ignores or refuses a sendmsg address (net/unix/af_unix.c).
 */
static const int socket_creating_syscalls[] = { __NR_socket, __NR_socketpair };

/*
 * Under a network policy (OFF, ALLOW_LIST) where a supervisor listens, the
 * calls that reach an address or make a socket reachable go to it besides
 * connect (network-gate.h holds the argument): bind and listen (it binds
 * inet sockets on loopback only and remembers them as the command's own),
 * sendmsg and sendmmsg (an address, or SCM_RIGHTS, behind a pointer; the fd
 * number may name another socket by the time the kernel looks), and sendto
 * when it names an address (args[4], tested in BPF: a NULL one is a
 * connected socket's send, whose connect was decided).  Under ON none of
 * them is sent: a command pays nothing new.
 */
static const int network_syscalls[] = { __NR_bind, __NR_listen, __NR_sendmsg, __NR_sendmmsg };

#define COUNT(array) (sizeof(array) / sizeof((array)[0]))
#define METADATA_SYSCALL_COUNT (COUNT(metadata_syscalls) - 1)
/* metadata calls, refused calls, creations, write intent, openat2, ioctl, connect, socket and socketpair */
#define BRANCH_COUNT (METADATA_SYSCALL_COUNT + COUNT(refused_syscalls) + COUNT(creation_syscalls) + \
                      COUNT(write_intent_syscalls) + 3 + COUNT(socket_creating_syscalls))
/* ... and under a network policy: bind, listen, sendmsg, sendmmsg, sendto (on its address), setsockopt. */
#define BRANCH_LIMIT (BRANCH_COUNT + COUNT(network_syscalls) + 2)
/* The type argument's low bits name the type; SOCK_NONBLOCK and SOCK_CLOEXEC ride above them (SOCK_TYPE_MASK). */
#define SOCKET_TYPE_MASK 0xfU
/* A leaf of the decision tree tests up to this many numbers one after the other. */
#define LEAF_SIZE 3
#define PROGRAM_CAPACITY 200

const int *dsh_metadata_syscalls(void)
{
        return metadata_syscalls;
}

#ifdef FILTER_AUDIT_ARCH
/* Where a system call number leads: the metadata action, the refusal, or the ioctl command tests. */
typedef enum branch_target {
        TO_ACTION,
        TO_REFUSE,
        TO_IOCTL,
        TO_OPEN,
        TO_OPENAT,
        TO_MODE_1,
        TO_MODE_2,
        TO_NO_SYSCALL,
        TO_NOTIFY,      /* connect: always the supervisor's */
        TO_SOCKET,      /* socket, socketpair: the family and type tests */
        TO_WRITE,       /* a write-intent call: the supervisor's where there is one */
        TO_SENDTO,      /* sendto under a network policy: the address test */
        TO_SETSOCKOPT,  /* setsockopt under a network policy: the routing options refused */
} branch_target;

typedef struct branch {
        uint32_t nr;
        branch_target target;
} branch;

typedef struct program_builder {
        struct sock_filter *program;
        size_t at;
        size_t allow_at, ioctl_at, socket_at, action_at, notify_at, write_at, refuse_at, eacces_at;
        size_t open_at, openat_at, mode_at[3], creation_allow_at, no_syscall_at;  /* mode_at[i]: args[i + 1] */
        size_t sendto_at, setsockopt_at;
        size_t branch_count;
        dsh_network_filter network;
        bool supervised;                /* a listener exists: the network calls can be sent */
} program_builder;

/* The answers that depend on the policy. */
typedef struct program_actions {
        uint32_t metadata;      /* a metadata call: USER_NOTIF (supervise, deny), EPERM where none can be sent */
        uint32_t connect;       /* USER_NOTIF, EACCES where nobody supervises */
        uint32_t write;         /* a write-intent call: USER_NOTIF, ALLOW where nobody supervises */
        dsh_network_filter network;
        bool supervised;        /* a listener: the network calls can go to a supervisor */
} program_actions;

/* The instructions the tree over `count` sorted numbers takes. */
static size_t tree_size(size_t count)
{
        if (count <= LEAF_SIZE)
                return count + 1;  /* one test each, then "allow" */
        return 1 + tree_size(count / 2) + tree_size(count - count / 2);
}

static void emit(program_builder *builder, struct sock_filter instruction)
{
        if (builder->at < PROGRAM_CAPACITY)
                builder->program[builder->at] = instruction;
        builder->at++;
}

/* A jump forward from the next instruction to `target`, as BPF counts it. */
static uint8_t offset_to(const program_builder *builder, size_t target)
{
        return (uint8_t) (target - builder->at - 1);
}

static size_t branch_address(const program_builder *builder, branch_target target)
{
        switch (target) {
        case TO_ACTION:
                return builder->action_at;
        case TO_REFUSE:
                return builder->refuse_at;
        case TO_OPEN:
                return builder->open_at;
        case TO_OPENAT:
                return builder->openat_at;
        case TO_MODE_1:
                return builder->mode_at[0];
        case TO_MODE_2:
                return builder->mode_at[1];
        case TO_NO_SYSCALL:
                return builder->no_syscall_at;
        case TO_NOTIFY:
                return builder->notify_at;
        case TO_SOCKET:
                return builder->socket_at;
        case TO_WRITE:
                return builder->write_at;
        case TO_SENDTO:
                return builder->sendto_at;
        case TO_SETSOCKOPT:
                return builder->setsockopt_at;
        case TO_IOCTL:
        default:
                return builder->ioctl_at;
        }
}

/*
 * A balanced decision tree over the sorted `branches`: each inner node sends
 * the numbers from its middle one up to its right half, each leaf tests its
 * few numbers for equality and allows anything else.  Every number takes a
 * handful of comparisons instead of one per metadata call, which is what
 * the kernel pays once per system call number when it builds the filter's
 * action cache at install time (calls that do not depend on an argument are
 * then allowed without running the filter at all).
 */
static void emit_tree(program_builder *builder, const branch *branches, size_t count)
{
        size_t half = count / 2;

        if (count <= LEAF_SIZE) {
                for (size_t i = 0; i < count; i++) {
                        size_t target = branch_address(builder, branches[i].target);

                        emit(builder, (struct sock_filter) BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, branches[i].nr,
                                                                    offset_to(builder, target), 0));
                }
                emit(builder, (struct sock_filter) BPF_STMT(BPF_JMP | BPF_JA,
                                                            (uint32_t) (builder->allow_at - builder->at - 1)));
                return;
        }
        emit(builder, (struct sock_filter) BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, branches[half].nr,
                                                    (uint8_t) tree_size(half), 0));
        emit_tree(builder, branches, half);
        emit_tree(builder, branches + half, count - half);
}

static branch_target creation_target(enum creation_kind kind)
{
        switch (kind) {
        case CREATES_OPEN:
                return TO_OPEN;
        case CREATES_OPENAT:
                return TO_OPENAT;
        case CREATES_MODE_1:
                return TO_MODE_1;
        case CREATES_MODE_2:
        default:
                return TO_MODE_2;
        }
}

/* The low 32 bits of argument `index` (what an int or a mode_t is; little-endian). */
static void emit_load_argument(program_builder *builder, unsigned int index)
{
        emit(builder, (struct sock_filter) BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
                                                    offsetof(struct seccomp_data, args[0]) + 8 * index));
}

/*
 * The creation and write-intent tests of the calls that depend on their
 * arguments (creation_syscalls above), every jump forward.  The set-id test
 * comes first: a set-id creation is refused by the filter itself, on the
 * mode register, whoever supervises and whatever a supervisor would decide.
 * A flags test that does not jump leaves the flags loaded for the next one.
 *   OPEN:    flags (args[1]) & CREATION_FLAGS ? MODE(1) : flags & WRITE_INTENT_FLAGS ? WRITE : ALLOW
 *   OPENAT:  flags (args[2]) & CREATION_FLAGS ? MODE(2) : flags & WRITE_INTENT_FLAGS ? WRITE : ALLOW
 *   MODE(i): args[i + 1] & 06000 ? REFUSE : WRITE, for i = 0, 1, 2 (creat and mknod; mknodat and open; openat)
 *   ALLOW
 */
static void emit_open_tests(program_builder *builder, unsigned int flags_index, size_t mode_at)
{
        emit_load_argument(builder, flags_index);
        emit(builder, (struct sock_filter) BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, CREATION_FLAGS,
                                                    offset_to(builder, mode_at), 0));
        emit(builder, (struct sock_filter) BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, WRITE_INTENT_FLAGS,
                                                    offset_to(builder, builder->write_at),
                                                    offset_to(builder, builder->creation_allow_at)));
}

static void emit_creation_tests(program_builder *builder)
{
        emit_open_tests(builder, 1, builder->mode_at[1]);
        emit_open_tests(builder, 2, builder->mode_at[2]);
        for (unsigned int i = 0; i < 3; i++) {
                emit_load_argument(builder, i + 1);
                emit(builder, (struct sock_filter) BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, SET_ID_BITS,
                                                            offset_to(builder, builder->refuse_at),
                                                            offset_to(builder, builder->write_at)));
        }
        emit(builder, (struct sock_filter) BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW));
}

static void emit_ioctl_test(program_builder *builder, uint32_t command, size_t target)
{
        emit(builder, (struct sock_filter) BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, command, offset_to(builder, target), 0));
}

#define SOCKET_TESTS_SIZE 7
#define NETWORK_SOCKET_TESTS_SIZE 24
#define SENDTO_TESTS_SIZE 5
#define SETSOCKOPT_TESTS_SIZE 16

static void emit_jump_if(program_builder *builder, uint32_t value, size_t if_equal, size_t otherwise)
{
        emit(builder, (struct sock_filter) BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, value, offset_to(builder, if_equal),
                                                    offset_to(builder, otherwise)));
}

static void emit_return_errno(program_builder *builder, int error)
{
        emit(builder, (struct sock_filter) BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ((uint32_t) error &
                                                                                          SECCOMP_RET_DATA)));
}

/* An AF_UNIX socket's type (args[1] & 0xf): datagram and raw (a datagram one for AF_UNIX) are EACCES. */
static void emit_unix_type_tests(program_builder *builder, size_t allow_at)
{
        emit_load_argument(builder, 1);
        emit(builder, (struct sock_filter) BPF_STMT(BPF_ALU | BPF_AND | BPF_K, SOCKET_TYPE_MASK));
        emit_jump_if(builder, SOCK_DGRAM, builder->eacces_at, builder->at + 1);
        emit_jump_if(builder, SOCK_RAW, builder->eacces_at, allow_at);
}

/*
 * socket(family, type, protocol) and socketpair(family, type, protocol, sv)
 * under ON: an AF_UNIX datagram socket is refused (EACCES), anything else
 * allowed.  The family and the type are ints: the low 32 bits of their
 * registers are what the kernel reads.
 */
static void emit_socket_tests(program_builder *builder)
{
        size_t allow_at = builder->at + SOCKET_TESTS_SIZE - 1;

        emit_load_argument(builder, 0);
        emit_jump_if(builder, AF_UNIX, builder->at + 1, allow_at);
        emit_unix_type_tests(builder, allow_at);
        emit(builder, (struct sock_filter) BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW));
}

/*
 * The same under a network policy (OFF, ALLOW_LIST): the families are
 * limited to what a build needs (network-gate.h), each decided on its
 * registers, so nothing here depends on a pointer:
 *   - AF_UNIX as under ON;
 *   - AF_INET and AF_INET6: TCP (SOCK_STREAM, protocol 0 or IPPROTO_TCP) and
 *     UDP (SOCK_DGRAM, protocol 0 or IPPROTO_UDP) only, whose every connect,
 *     bind and send to an address the supervisor decides; raw, ICMP
 *     ("ping") sockets, SCTP, MPTCP, UDP-Lite, seqpacket are
 *     EPROTONOSUPPORT: their addresses and sends are not ones the
 *     supervisor knows how to perform.  Where nobody supervises
 *     (DSH_METADATA_UNSUPERVISED, which only OFF may be) no inet socket is
 *     made at all (EACCES): nothing then decides its connects and sends;
 *   - AF_NETLINK with NETLINK_ROUTE (getifaddrs(), glibc's AI_ADDRCONFIG):
 *     the command holds no capability, so the route socket only reads
 *     (every change asks CAP_NET_ADMIN); another netlink protocol is
 *     EPROTONOSUPPORT;
 *   - any other family (packet, vsock, bluetooth, alg, xdp, ...) is
 *     EAFNOSUPPORT, what a kernel without it answers.
 * Layout (S = the block's start; every jump forward):
 *   S+0  family; S+1..S+4 unix -> S+6, inet, inet6 -> S+12 (or EACCES), netlink -> S+10; S+5 EAFNOSUPPORT
 *   S+6  unix types (emit_unix_type_tests) -> EACCES or ALLOW
 *   S+10 netlink: protocol NETLINK_ROUTE -> ALLOW, else EPROTONOSUPPORT
 *   S+12 inet: type STREAM -> S+16, DGRAM -> S+19, else EPROTONOSUPPORT
 *   S+16 stream: protocol 0 or TCP -> ALLOW;  S+19 datagram: protocol 0 or UDP -> ALLOW
 *   S+22 EPROTONOSUPPORT;  S+23 ALLOW
 */
static void emit_network_socket_tests(program_builder *builder)
{
        const size_t start = builder->at, unix_at = start + 6, netlink_at = start + 10, inet_at = start + 12;
        const size_t stream_at = start + 16, datagram_at = start + 19, protocol_at = start + 22, allow_at = start + 23;
        const size_t inet_target = builder->supervised ? inet_at : builder->eacces_at;

        emit_load_argument(builder, 0);
        emit_jump_if(builder, AF_UNIX, unix_at, builder->at + 1);
        emit_jump_if(builder, AF_INET, inet_target, builder->at + 1);
        emit_jump_if(builder, AF_INET6, inet_target, builder->at + 1);
        emit_jump_if(builder, AF_NETLINK, netlink_at, builder->at + 1);
        emit_return_errno(builder, EAFNOSUPPORT);
        emit_unix_type_tests(builder, allow_at);
        emit_load_argument(builder, 2);
        emit_jump_if(builder, NETLINK_ROUTE, allow_at, protocol_at);
        emit_load_argument(builder, 1);
        emit(builder, (struct sock_filter) BPF_STMT(BPF_ALU | BPF_AND | BPF_K, SOCKET_TYPE_MASK));
        emit_jump_if(builder, SOCK_STREAM, stream_at, builder->at + 1);
        emit_jump_if(builder, SOCK_DGRAM, datagram_at, protocol_at);
        emit_load_argument(builder, 2);
        emit_jump_if(builder, 0, allow_at, builder->at + 1);
        emit_jump_if(builder, IPPROTO_TCP, allow_at, protocol_at);
        emit_load_argument(builder, 2);
        emit_jump_if(builder, 0, allow_at, builder->at + 1);
        emit_jump_if(builder, IPPROTO_UDP, allow_at, protocol_at);
        emit_return_errno(builder, EPROTONOSUPPORT);
        emit(builder, (struct sock_filter) BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW));
}

/*
 * sendto(fd, buffer, length, flags, address, address_length) under a
 * network policy: sent to the supervisor when `address` (a pointer: all 64
 * bits) is not NULL; a NULL address sends on a connected socket (or fails
 * with EDESTADDRREQ), and every connect was decided.
 */
static void emit_sendto_tests(program_builder *builder)
{
        const size_t allow_at = builder->at + SENDTO_TESTS_SIZE - 1;

        emit_load_argument(builder, 4);
        emit_jump_if(builder, 0, builder->at + 1, builder->notify_at);
        emit(builder, (struct sock_filter) BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
                                                    offsetof(struct seccomp_data, args[4]) + 4));
        emit_jump_if(builder, 0, allow_at, builder->notify_at);
        emit(builder, (struct sock_filter) BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW));
}

/*
 * setsockopt(fd, level, name, value, length) under a network policy
 * (supervised or not): the options that choose a packet's next hop by
 * themselves are refused (EPERM), on the register arguments (level and name
 * are ints: their low 32 bits are what the kernel dispatches on).  With one
 * set, the kernel sends a connect or a datagram the supervisor approved for
 * one address (the command's own loopback server) to the first hop the
 * option names, any host: an IPv6 routing header (IPV6_RTHDR; a segment
 * routing header needs no capability; IPV6_2292PKTOPTIONS sets one too) and
 * IPv4 options (IP_OPTIONS: a source route).  The device a socket is bound
 * to (SO_BINDTODEVICE, SO_BINDTOIFINDEX: no capability for a socket bound
 * to none yet) sends a connect to the command's own loopback server out of
 * that device, its SYN onto the device's link; the unicast interface
 * (IP_UNICAST_IF, IPV6_UNICAST_IF: no capability either) does the same for
 * a datagram from a socket bound on the wildcard (which bind's one
 * let-through, a swapped fd, can make), and so does a sticky IPv6 packet
 * info (IPV6_PKTINFO set with setsockopt: the interface every later
 * datagram leaves by, where the supervisor refuses it in a sendmsg's
 * control data).  Anything else is allowed.
 *   S+0 level; S+1 SOL_IP -> S+9; S+2 SOL_SOCKET -> S+12; S+3 SOL_IPV6 -> S+4, else ALLOW
 *   S+4 name; S+5 IPV6_RTHDR, S+6 IPV6_2292PKTOPTIONS, S+7 IPV6_PKTINFO, S+8 IPV6_UNICAST_IF -> REFUSE,
 *             else ALLOW
 *   S+9 name; S+10 IP_OPTIONS, S+11 IP_UNICAST_IF -> REFUSE, else ALLOW
 *   S+12 name; S+13 SO_BINDTODEVICE, S+14 SO_BINDTOIFINDEX -> REFUSE, else ALLOW;  S+15 ALLOW
 */
static void emit_setsockopt_tests(program_builder *builder)
{
        const size_t start = builder->at, ipv4_at = start + 9, socket_at = start + 12, allow_at = start + 15;

        emit_load_argument(builder, 1);
        emit_jump_if(builder, SOL_IP, ipv4_at, builder->at + 1);
        emit_jump_if(builder, SOL_SOCKET, socket_at, builder->at + 1);
        emit_jump_if(builder, SOL_IPV6, builder->at + 1, allow_at);
        emit_load_argument(builder, 2);
        emit_jump_if(builder, IPV6_RTHDR, builder->refuse_at, builder->at + 1);
        emit_jump_if(builder, IPV6_2292PKTOPTIONS, builder->refuse_at, builder->at + 1);
        emit_jump_if(builder, IPV6_PKTINFO, builder->refuse_at, builder->at + 1);
        emit_jump_if(builder, IPV6_UNICAST_IF, builder->refuse_at, allow_at);
        emit_load_argument(builder, 2);
        emit_jump_if(builder, IP_OPTIONS, builder->refuse_at, builder->at + 1);
        emit_jump_if(builder, IP_UNICAST_IF, builder->refuse_at, allow_at);
        emit_load_argument(builder, 2);
        emit_jump_if(builder, SO_BINDTODEVICE, builder->refuse_at, builder->at + 1);
        emit_jump_if(builder, SO_BINDTOIFINDEX, builder->refuse_at, allow_at);
        emit(builder, (struct sock_filter) BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW));
}

static bool network_supervised(const program_builder *builder)
{
        return builder->network != DSH_NETWORK_FILTER_ON && builder->supervised;
}

/* Every number the tree tests, with where it leads, sorted by number; returns how many. */
static size_t fill_branches(const program_builder *builder, branch *branches)
{
        size_t count = 0;

        for (size_t i = 0; i < METADATA_SYSCALL_COUNT; i++)
                branches[count++] = (branch) { (uint32_t) metadata_syscalls[i], TO_ACTION };
        for (size_t i = 0; i < COUNT(refused_syscalls); i++)
                branches[count++] = (branch) { (uint32_t) refused_syscalls[i], TO_REFUSE };
        for (size_t i = 0; i < COUNT(creation_syscalls); i++)
                branches[count++] = (branch) { (uint32_t) creation_syscalls[i].nr,
                                               creation_target(creation_syscalls[i].kind) };
        for (size_t i = 0; i < COUNT(write_intent_syscalls); i++)
                branches[count++] = (branch) { (uint32_t) write_intent_syscalls[i], TO_WRITE };
        branches[count++] = (branch) { __NR_openat2, TO_NO_SYSCALL };
        branches[count++] = (branch) { __NR_ioctl, TO_IOCTL };
        branches[count++] = (branch) { __NR_connect, TO_NOTIFY };
        for (size_t i = 0; i < COUNT(socket_creating_syscalls); i++)
                branches[count++] = (branch) { (uint32_t) socket_creating_syscalls[i], TO_SOCKET };
        for (size_t i = 0; network_supervised(builder) && i < COUNT(network_syscalls); i++)
                branches[count++] = (branch) { (uint32_t) network_syscalls[i], TO_NOTIFY };
        if (network_supervised(builder))
                branches[count++] = (branch) { __NR_sendto, TO_SENDTO };
        if (builder->network != DSH_NETWORK_FILTER_ON)
                branches[count++] = (branch) { __NR_setsockopt, TO_SETSOCKOPT };
        /* Sorted by number (insertion sort: a few dozen entries, and nothing may allocate). */
        for (size_t i = 1; i < count; i++)
                for (size_t j = i; j > 0 && branches[j - 1].nr > branches[j].nr; j--) {
                        branch swap = branches[j];

                        branches[j] = branches[j - 1];
                        branches[j - 1] = swap;
                }
        return count;
}

/* Where each block of the layout below starts, before anything is emitted (every jump is forward). */
static void place_blocks(program_builder *builder, size_t ioctl_tests)
{
        builder->allow_at = 6 + tree_size(builder->branch_count);
        builder->open_at = builder->allow_at + 1;
        builder->openat_at = builder->open_at + 3;
        for (size_t i = 0; i < 3; i++)
                builder->mode_at[i] = builder->openat_at + 3 + 2 * i;
        builder->creation_allow_at = builder->mode_at[2] + 2;
        builder->ioctl_at = builder->creation_allow_at + 1;
        builder->socket_at = builder->ioctl_at + 1 + ioctl_tests + 1;
        builder->setsockopt_at = builder->socket_at +
                                 (builder->network == DSH_NETWORK_FILTER_ON ? SOCKET_TESTS_SIZE : NETWORK_SOCKET_TESTS_SIZE);
        builder->sendto_at = builder->setsockopt_at +
                             (builder->network == DSH_NETWORK_FILTER_ON ? 0 : SETSOCKOPT_TESTS_SIZE);
        builder->action_at = builder->sendto_at + (network_supervised(builder) ? SENDTO_TESTS_SIZE : 0);
        builder->notify_at = builder->action_at + 1;
        builder->write_at = builder->notify_at + 1;
        builder->refuse_at = builder->write_at + 1;
        builder->no_syscall_at = builder->refuse_at + 1;
        builder->eacces_at = builder->no_syscall_at + 1;
}

/*
 * Builds the program into `program` (on the caller's stack: nothing here
 * allocates).  Layout:
 *
 *   arch check, x32 check           kill the process on either
 *   decision tree over the numbers  a metadata call -> ACTION, io_uring -> REFUSE, ioctl -> IOCTL,
 *                                   open, openat, creat, mknod, mknodat -> their test,
 *                                   mkdir, unlink, rmdir, rename, link, symlink, truncate (and their *at) -> WRITE,
 *                                   openat2 -> NO_SYSCALL, connect -> NOTIFY,
 *                                   socket and socketpair -> SOCKET,
 *                                   a network policy, supervised: bind, listen, sendmsg, sendmmsg -> NOTIFY,
 *                                   sendto -> SENDTO; any network policy: setsockopt -> SETSOCKOPT;
 *                                   else ALLOW
 *   ALLOW
 *   creation and write-intent tests a set-id mode -> REFUSE, write intent -> WRITE, else ALLOW
 *                                   (emit_creation_tests())
 *   IOCTL: load the command (low 32 bits: what the kernel dispatches on)
 *     supervised attribute ioctls   -> ACTION
 *     refused attribute ioctls      -> REFUSE
 *     with the terminal rule: TIOCSTI, TIOCLINUX, TIOCSETD -> REFUSE
 *     supervising: TIOCGPTPEER      -> ACTION (the supervisor opens the slave)
 *     ALLOW
 *   SOCKET: AF_UNIX with type & 0xf SOCK_DGRAM or SOCK_RAW -> EACCES, else ALLOW
 *     (under a network policy: the families and protocols too, emit_network_socket_tests())
 *   SETSOCKOPT (a network policy): IPV6_RTHDR, IPV6_2292PKTOPTIONS, IPV6_UNICAST_IF, IP_OPTIONS,
 *                                   IP_UNICAST_IF, SO_BINDTODEVICE, SO_BINDTOIFINDEX -> REFUSE, else ALLOW
 *   SENDTO (a network policy, supervised): an address -> NOTIFY, else ALLOW
 *   ACTION                          USER_NOTIF (supervise; deny: the supervisor refuses it, EPERM, with
 *                                   a record), EPERM where nobody can read the command (deny kernel
 *                                   writes) or nobody supervises
 *   NOTIFY                          USER_NOTIF (both modes: the supervisor performs connect);
 *                                   EACCES where nobody supervises (DSH_METADATA_UNSUPERVISED)
 *   WRITE                           USER_NOTIF (both modes: the supervisor decides write intent);
 *                                   ALLOW where nobody supervises (the mounts decide)
 *   REFUSE                          EPERM
 *   NO_SYSCALL                      ENOSYS (openat2)
 *   EACCES                          EACCES (an AF_UNIX datagram socket)
 *
 * Returns the program's length, or 0 if it would not fit.
 */
static size_t build_program(struct sock_filter *program, const program_actions *actions, bool terminal_rule,
                            bool pty_peer_rule)
{
        static const uint32_t terminal_ioctls[] = { TIOCSTI, TIOCLINUX, TIOCSETD };
        branch branches[BRANCH_LIMIT];
        size_t ioctl_tests = COUNT(supervised_ioctls) + COUNT(refused_ioctls) +
                             (terminal_rule ? COUNT(terminal_ioctls) : 0) + (pty_peer_rule ? 1 : 0);
        program_builder builder = { .program = program, .network = actions->network,
                                    .supervised = actions->supervised };

        builder.branch_count = fill_branches(&builder, branches);
        if (builder.branch_count > BRANCH_LIMIT)
                return 0;
        place_blocks(&builder, ioctl_tests);
        if (builder.eacces_at + 1 > PROGRAM_CAPACITY || builder.eacces_at > 255)
                return 0;
        emit(&builder, (struct sock_filter) BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)));
        emit(&builder, (struct sock_filter) BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, FILTER_AUDIT_ARCH, 1, 0));
        emit(&builder, (struct sock_filter) BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS));
        emit(&builder, (struct sock_filter) BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)));
        emit(&builder, (struct sock_filter) BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, X32_SYSCALL_BIT, 0, 1));
        emit(&builder, (struct sock_filter) BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS));
        emit_tree(&builder, branches, builder.branch_count);
        emit(&builder, (struct sock_filter) BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW));
        emit_creation_tests(&builder);
        emit(&builder, (struct sock_filter) BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[1])));
        for (size_t i = 0; i < COUNT(supervised_ioctls); i++)
                emit_ioctl_test(&builder, supervised_ioctls[i], builder.action_at);
        for (size_t i = 0; i < COUNT(refused_ioctls); i++)
                emit_ioctl_test(&builder, refused_ioctls[i], builder.refuse_at);
        for (size_t i = 0; terminal_rule && i < COUNT(terminal_ioctls); i++)
                emit_ioctl_test(&builder, terminal_ioctls[i], builder.refuse_at);
        if (pty_peer_rule)
                emit_ioctl_test(&builder, DSH_TIOCGPTPEER, builder.action_at);
        emit(&builder, (struct sock_filter) BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW));
        if (builder.network == DSH_NETWORK_FILTER_ON)
                emit_socket_tests(&builder);
        else
                emit_network_socket_tests(&builder);
        if (builder.network != DSH_NETWORK_FILTER_ON)
                emit_setsockopt_tests(&builder);
        if (network_supervised(&builder))
                emit_sendto_tests(&builder);
        emit(&builder, (struct sock_filter) BPF_STMT(BPF_RET | BPF_K, actions->metadata));
        emit(&builder, (struct sock_filter) BPF_STMT(BPF_RET | BPF_K, actions->connect));
        emit(&builder, (struct sock_filter) BPF_STMT(BPF_RET | BPF_K, actions->write));
        emit(&builder, (struct sock_filter) BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA)));
        emit(&builder, (struct sock_filter) BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (ENOSYS & SECCOMP_RET_DATA)));
        emit(&builder, (struct sock_filter) BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EACCES & SECCOMP_RET_DATA)));
        return builder.at == builder.eacces_at + 1 ? builder.at : 0;
}

/* sendmsg() of one fd with SCM_RIGHTS; no allocation (the control buffer is on the stack). */
int dsh_send_fd(int socket_fd, int fd)
{
        char byte = 'L';
        struct iovec data = { &byte, 1 };
        union {
                char buffer[CMSG_SPACE(sizeof(int))];
                struct cmsghdr align;
        } control;
        struct msghdr message = { .msg_iov = &data, .msg_iovlen = 1, .msg_control = control.buffer,
                                  .msg_controllen = sizeof(control.buffer) };
        struct cmsghdr *header = CMSG_FIRSTHDR(&message);

        memset(&control, 0, sizeof(control));
        header->cmsg_level = SOL_SOCKET;
        header->cmsg_type = SCM_RIGHTS;
        header->cmsg_len = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(header), &fd, sizeof(int));
        while (sendmsg(socket_fd, &message, MSG_NOSIGNAL) < 0)
                if (errno != EINTR)
                        return -errno;
        return 0;
}

static bool known_policy(dsh_metadata_policy policy)
{
        return policy == DSH_METADATA_DENY || policy == DSH_METADATA_SUPERVISE || policy == DSH_METADATA_UNSUPERVISED ||
               policy == DSH_METADATA_DENY_KERNEL_WRITES;
}

static bool known_network(dsh_network_filter network)
{
        return network == DSH_NETWORK_FILTER_ON || network == DSH_NETWORK_FILTER_OFF ||
               network == DSH_NETWORK_FILTER_ALLOW_LIST;
}

size_t dsh_metadata_filter_program(dsh_metadata_policy policy, dsh_network_filter network, bool terminal_rule,
                                   struct sock_filter *program, size_t capacity)
{
        const bool supervised = policy != DSH_METADATA_UNSUPERVISED;
        const program_actions actions = {
                /*
                 * DENY sends them too: the supervisor refuses each (EPERM, the
                 * answer this filter gave by itself before) and writes it down,
                 * performing none (dsh_metadata_supervisor_perform_metadata()
                 * is never called for it).  Where it cannot read the command
                 * (DENY_KERNEL_WRITES) it could name nothing: EPERM here.
                 */
                .metadata = policy == DSH_METADATA_SUPERVISE || policy == DSH_METADATA_DENY
                                    ? SECCOMP_RET_USER_NOTIF
                                    : SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA),
                /* Nobody to perform a connect: refused, never let through (its decision depends on a pointer). */
                .connect = supervised ? SECCOMP_RET_USER_NOTIF : SECCOMP_RET_ERRNO | (EACCES & SECCOMP_RET_DATA),
                /*
                 * Nobody to decide write intent: only a harness-spawned bwrap
                 * argv runs so, and there its mounts refuse every write the
                 * supervisor would (and its own Landlock domain holds what
                 * they do not): the call goes on to the kernel, as before.
                 */
                .write = supervised && policy != DSH_METADATA_DENY_KERNEL_WRITES ? SECCOMP_RET_USER_NOTIF
                                                                                 : SECCOMP_RET_ALLOW,
                .network = network,
                .supervised = supervised,
        };
        struct sock_filter built[PROGRAM_CAPACITY];
        size_t length;

        if (!known_policy(policy) || !known_network(network))
                return 0;
        /* Only a supervisor can answer it: under DENY the kernel (and Landlock) decides, as without the filter. */
        length = build_program(built, &actions, terminal_rule, policy == DSH_METADATA_SUPERVISE);
        if (length == 0 || length > capacity)
                return 0;
        memcpy(program, built, length * sizeof(*built));
        return length;
}

/*
 * Under a network policy the listener cannot leave by sendmsg (SCM_RIGHTS):
 * the filter just installed sends that sendmsg to the listener itself,
 * which nobody serves yet.  So its number is offered with a plain write()
 * (never filtered) and the supervisor takes it (pidfd_getfd, from the pid
 * the kernel attests with SCM_CREDENTIALS: dsh_receive_fd()); the listener
 * stays open here until the supervisor answers that it holds it.  The
 * process must hold no capability by then (the supervisor, which has none,
 * may only take from a process that has no more than it).
 */
static int offer_listener(int socket_fd, int listener)
{
        const struct dsh_fd_offer offer = { DSH_FD_OFFER_MAGIC, listener };
        char answer = 0;
        ssize_t length;

        do
                length = write(socket_fd, &offer, sizeof(offer));
        while (length < 0 && errno == EINTR);
        if (length != (ssize_t) sizeof(offer))
                return length < 0 ? -errno : -EPIPE;
        do
                length = recv(socket_fd, &answer, 1, 0);
        while (length < 0 && errno == EINTR);
        if (length < 0)
                return -errno;
        return length == 1 ? 0 : -EPIPE;  /* end of file: the supervisor did not take it, nothing may run */
}

int dsh_install_metadata_filter(dsh_metadata_policy policy, dsh_network_filter network, int socket_fd,
                                bool terminal_rule)
{
        struct sock_filter program[PROGRAM_CAPACITY];
        struct sock_fprog fprog = { .len = 0, .filter = program };
        /* SPEC_ALLOW for the reason the terminal filter gives (process-hardening.c). */
        unsigned long flags = SECCOMP_FILTER_FLAG_SPEC_ALLOW;
        long listener;
        int result;

        if (!known_policy(policy) || !known_network(network))
                return -EINVAL;
        fprog.len = (unsigned short) dsh_metadata_filter_program(policy, network, terminal_rule, program,
                                                                 PROGRAM_CAPACITY);
        if (fprog.len == 0)
                return -E2BIG;
        if (policy == DSH_METADATA_UNSUPERVISED)
                return syscall(__NR_seccomp, SECCOMP_SET_MODE_FILTER, flags, &fprog) < 0 ? -errno : 0;
        /* Both modes have a listener now: connect is the supervisor's under read-only too. */
        if (socket_fd < 0)
                return -EBADF;
        flags |= SECCOMP_FILTER_FLAG_NEW_LISTENER | SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV;
        listener = syscall(__NR_seccomp, SECCOMP_SET_MODE_FILTER, flags, &fprog);
        if (listener < 0)
                return -errno;
        result = network == DSH_NETWORK_FILTER_ON ? dsh_send_fd(socket_fd, (int) listener)
                                                  : offer_listener(socket_fd, (int) listener);
        close((int) listener);
        return result;
}
#else
size_t dsh_metadata_filter_program(dsh_metadata_policy policy, dsh_network_filter network, bool terminal_rule,
                                   struct sock_filter *program, size_t capacity)
{
        (void) policy;
        (void) network;
        (void) terminal_rule;
        (void) program;
        (void) capacity;
        return 0;
}

int dsh_install_metadata_filter(dsh_metadata_policy policy, dsh_network_filter network, int socket_fd,
                                bool terminal_rule)
{
        (void) policy;
        (void) network;
        (void) socket_fd;
        (void) terminal_rule;
        return -ENOSYS;
}
#endif

int dsh_prepare_fd_receiver(int socket_fd)
{
        int on = 1;

        return setsockopt(socket_fd, SOL_SOCKET, SO_PASSCRED, &on, sizeof(on)) < 0 ? -errno : 0;
}

/* An offered descriptor (offer_listener()), taken from the process the kernel says wrote the offer. */
static int take_offered(const struct dsh_fd_offer *offer, const struct ucred *sender)
{
        long pidfd, fd;

        if (offer->magic != DSH_FD_OFFER_MAGIC || offer->fd < 0 || sender->pid <= 0)
                return -EPROTO;
        pidfd = syscall(__NR_pidfd_open, sender->pid, 0);
        if (pidfd < 0)
                return -errno;
        fd = syscall(__NR_pidfd_getfd, (int) pidfd, offer->fd, 0);  /* close-on-exec, as pidfd_getfd makes it */
        fd = fd < 0 ? -errno : fd;
        close((int) pidfd);
        return (int) fd;
}

int dsh_receive_fd(int socket_fd)
{
        union {
                char byte;
                struct dsh_fd_offer offer;
        } data;
        struct iovec vector = { &data, sizeof(data) };
        union {
                char buffer[CMSG_SPACE(sizeof(int)) + CMSG_SPACE(sizeof(struct ucred))];
                struct cmsghdr align;
        } control;
        struct msghdr message = { .msg_iov = &vector, .msg_iovlen = 1, .msg_control = control.buffer,
                                  .msg_controllen = sizeof(control.buffer) };
        struct ucred sender = { 0, 0, 0 };
        bool credentials = false;
        ssize_t length;
        int fd = -1, rights = 0;

        do
                length = recvmsg(socket_fd, &message, MSG_CMSG_CLOEXEC);
        while (length < 0 && errno == EINTR);
        if (length < 0)
                return -errno;
        for (struct cmsghdr *header = CMSG_FIRSTHDR(&message); header; header = CMSG_NXTHDR(&message, header)) {
                if (header->cmsg_level == SOL_SOCKET && header->cmsg_type == SCM_RIGHTS &&
                    header->cmsg_len == CMSG_LEN(sizeof(int)) && rights++ == 0) {
                        memcpy(&fd, CMSG_DATA(header), sizeof(int));
                } else if (header->cmsg_level == SOL_SOCKET && header->cmsg_type == SCM_CREDENTIALS &&
                           header->cmsg_len == CMSG_LEN(sizeof(struct ucred))) {
                        memcpy(&sender, CMSG_DATA(header), sizeof(sender));
                        credentials = true;
                } else if (header->cmsg_level == SOL_SOCKET && header->cmsg_type == SCM_RIGHTS) {
                        rights = 2;  /* more than one, or a short one: not ours */
                }
        }
        if (fd >= 0 && (rights != 1 || length != 1 || (message.msg_flags & MSG_CTRUNC))) {
                close(fd);
                return -EPROTO;
        }
        if (fd >= 0)
                return fd;
        if (length == 0)
                return -ENODATA;
        if (length == (ssize_t) sizeof(struct dsh_fd_offer) && credentials && rights == 0 &&
            !(message.msg_flags & MSG_CTRUNC))
                return take_offered(&data.offer, &sender);
        return -EPROTO;
}
