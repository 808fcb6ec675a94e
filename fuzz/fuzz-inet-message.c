/* SPDX-License-Identifier: MIT */
/*
 * The supervisor's copy of a message a hostile command sends (sendmsg,
 * sendto, one of sendmmsg's: src/core/inet-message.h) over arbitrary
 * input, taken as the command's memory at a made-up address: the msghdr
 * is its first bytes, and every pointer in it may point anywhere in (or out
 * of) that memory.  Beyond memory errors and UB it checks what the
 * supervisor relies on: every bound holds (name, data, control), a read
 * out of the memory is an error, never a partial copy; and after the
 * SCM_RIGHTS descriptors were taken, the kernel's own walk of the control
 * data finds no descriptor that was not replaced, so none of the
 * supervisor's own can be sent for the command.
 */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>

#include "core/inet-message.h"
#include "fuzz-support.h"

#define BASE 0x10000ULL
#define TAKEN_MARK 100000

struct memory {
        const uint8_t *data;
        size_t size;
};

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
        (void) argc;
        (void) argv;
        return 0;
}

static int read_memory(void *data, uint64_t address, void *buffer, size_t size)
{
        const struct memory *memory = data;

        if (address < BASE || address - BASE > memory->size || size > memory->size - (address - BASE))
                return -EFAULT;
        memcpy(buffer, memory->data + (address - BASE), size);
        return 0;
}

static int take(void *data, int fd)
{
        (void) data;
        return fd < 0 ? -EBADF : TAKEN_MARK + (fd & 0xffff);
}

/* The kernel's walk (for_each_cmsghdr, CMSG_OK): every SCM_RIGHTS descriptor it would read is one we took. */
static void check_rights_replaced(const dsh_inet_message *message)
{
        size_t offset = 0;

        while (message->control_length - offset >= sizeof(struct cmsghdr)) {
                const struct cmsghdr *header = (const struct cmsghdr *) (const void *) (message->control + offset);

                FUZZ_CHECK(header->cmsg_len >= sizeof(struct cmsghdr) &&
                           header->cmsg_len <= message->control_length - offset);
                if (header->cmsg_level == SOL_SOCKET && header->cmsg_type == SCM_RIGHTS)
                        for (size_t i = 0; i < (header->cmsg_len - CMSG_LEN(0)) / sizeof(int); i++) {
                                int fd;

                                memcpy(&fd, CMSG_DATA(header) + i * sizeof(int), sizeof(int));
                                FUZZ_CHECK(fd >= TAKEN_MARK);
                        }
                if (CMSG_ALIGN(header->cmsg_len) > message->control_length - offset)
                        break;
                offset += CMSG_ALIGN(header->cmsg_len);
        }
}

static void check_message(dsh_inet_message *message)
{
        int taken[DSH_INET_RIGHTS_LIMIT];
        size_t count = 0;

        FUZZ_CHECK(message->name_length <= sizeof(message->name));
        FUZZ_CHECK(message->data_length <= DSH_INET_DATA_LIMIT);
        FUZZ_CHECK(message->control_length <= DSH_INET_CONTROL_LIMIT);
        FUZZ_CHECK((message->control == NULL) == (message->control_length == 0));
        if (dsh_inet_message_take_rights(message, take, NULL, taken, &count) == 0)
                check_rights_replaced(message);
        FUZZ_CHECK(count <= DSH_INET_RIGHTS_LIMIT);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        struct memory memory = { data, size };
        dsh_inet_message message;
        uint64_t words[4] = { 0 };

        if (dsh_inet_message_copy(read_memory, &memory, BASE, &message) == 0) {
                check_message(&message);
                dsh_inet_message_clear(&message);
        }
        /* sendto's registers from the input's first bytes: buffer, length, address, address length. */
        memcpy(words, data, size < sizeof(words) ? size : sizeof(words));
        if (dsh_inet_message_from_sendto(read_memory, &memory, words[0], words[1], words[2], words[3], &message) ==
            0) {
                FUZZ_CHECK(message.control == NULL);
                check_message(&message);
                dsh_inet_message_clear(&message);
        }
        return 0;
}
