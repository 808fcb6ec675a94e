/* SPDX-License-Identifier: MIT */
/* The address book and the capture table (address-book.h): two small locked tables with expiry. */
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "network/address-book.h"

enum { EXPIRY_MIN = 60, EXPIRY_MAX = 300, CAPTURE_LIFETIME = 60 };

typedef struct book_entry {
        char name[254];
        int family;
        uint8_t address[16];
        time_t expires;                 /* CLOCK_MONOTONIC seconds; 0: free */
} book_entry;

struct dsh_address_book {
        pthread_mutex_t lock;
        book_entry entries[DSH_ADDRESS_BOOK_MAX];
};

static time_t now_seconds(void)
{
        struct timespec now;

        clock_gettime(CLOCK_MONOTONIC, &now);
        return now.tv_sec + 1;          /* never 0, the mark of a free entry */
}

/* The address as the tables keep it: an IPv4-mapped IPv6 address as its IPv4 form. */
static void normalize(int *family, const void *address, uint8_t out[16])
{
        memset(out, 0, 16);
        if (*family == AF_INET6 && IN6_IS_ADDR_V4MAPPED((const struct in6_addr *) address)) {
                memcpy(out, (const uint8_t *) address + 12, 4);
                *family = AF_INET;
                return;
        }
        memcpy(out, address, *family == AF_INET ? 4 : 16);
}

dsh_address_book *dsh_address_book_new(void)
{
        dsh_address_book *book = calloc(1, sizeof(*book));

        if (book && pthread_mutex_init(&book->lock, NULL) != 0) {
                free(book);
                return NULL;
        }
        return book;
}

void dsh_address_book_free(dsh_address_book *book)
{
        if (book == NULL)
                return;
        pthread_mutex_destroy(&book->lock);
        free(book);
}

static bool entry_is(const book_entry *entry, const char *name, int family, const uint8_t address[16], time_t now)
{
        return entry->expires > now && entry->family == family && memcmp(entry->address, address, 16) == 0 &&
               (name == NULL || strcmp(entry->name, name) == 0);
}

void dsh_address_book_add(dsh_address_book *book, const char *name, int family, const void *address, uint32_t ttl)
{
        uint32_t lifetime = ttl < EXPIRY_MIN ? EXPIRY_MIN : ttl > EXPIRY_MAX ? EXPIRY_MAX : ttl;
        uint8_t key[16];
        book_entry *slot = NULL;
        time_t now = now_seconds();

        if (strlen(name) >= sizeof(slot->name))
                return;
        normalize(&family, address, key);
        pthread_mutex_lock(&book->lock);
        for (size_t i = 0; i < DSH_ADDRESS_BOOK_MAX; i++) {
                book_entry *entry = &book->entries[i];
                if (entry_is(entry, name, family, key, now)) {
                        slot = entry;
                        break;
                }
                if (slot == NULL || entry->expires < slot->expires)
                        slot = entry;   /* a free or expired entry, else the one closest to expiry */
        }
        strcpy(slot->name, name);
        slot->family = family;
        memcpy(slot->address, key, 16);
        if (slot->expires < now + (time_t) lifetime)
                slot->expires = now + (time_t) lifetime;
        pthread_mutex_unlock(&book->lock);
}

static bool book_find(dsh_address_book *book, const char *name, int family, const void *address)
{
        uint8_t key[16];
        time_t now = now_seconds();
        bool found = false;

        normalize(&family, address, key);
        pthread_mutex_lock(&book->lock);
        for (size_t i = 0; i < DSH_ADDRESS_BOOK_MAX && !found; i++)
                found = entry_is(&book->entries[i], name, family, key, now);
        pthread_mutex_unlock(&book->lock);
        return found;
}

bool dsh_address_book_has(dsh_address_book *book, const char *name, int family, const void *address)
{
        return book_find(book, name, family, address);
}

bool dsh_address_book_find(dsh_address_book *book, const char *name, int *family, uint8_t address[16])
{
        const book_entry *best = NULL;
        time_t now = now_seconds();

        pthread_mutex_lock(&book->lock);
        for (size_t i = 0; i < DSH_ADDRESS_BOOK_MAX; i++) {
                const book_entry *entry = &book->entries[i];
                if (entry->expires > now && strcmp(entry->name, name) == 0 &&
                    (best == NULL || entry->expires > best->expires))
                        best = entry;
        }
        if (best) {
                *family = best->family;
                memcpy(address, best->address, 16);
        }
        pthread_mutex_unlock(&book->lock);
        return best != NULL;
}

bool dsh_address_book_knows(dsh_address_book *book, int family, const void *address)
{
        return book_find(book, NULL, family, address);
}

typedef struct capture {
        struct sockaddr_storage source;
        struct sockaddr_storage destination;
        socklen_t destination_length;
        time_t expires;                 /* 0: free */
} capture;

struct dsh_captures {
        pthread_mutex_t lock;
        capture entries[DSH_CAPTURES_MAX];
};

dsh_captures *dsh_captures_new(void)
{
        dsh_captures *captures = calloc(1, sizeof(*captures));

        if (captures && pthread_mutex_init(&captures->lock, NULL) != 0) {
                free(captures);
                return NULL;
        }
        return captures;
}

void dsh_captures_free(dsh_captures *captures)
{
        if (captures == NULL)
                return;
        pthread_mutex_destroy(&captures->lock);
        free(captures);
}

/* A source as the key: the family, address and port only (an IPv4-mapped address as IPv4). */
static bool source_key(const struct sockaddr *source, socklen_t length, struct sockaddr_storage *key)
{
        struct sockaddr_storage copy;   /* aligned: `source` may point anywhere */
        struct sockaddr_in *out = (struct sockaddr_in *) key;

        memset(key, 0, sizeof(*key));
        memset(&copy, 0, sizeof(copy));
        memcpy(&copy, source, length < sizeof(copy) ? length : sizeof(copy));
        if (copy.ss_family == AF_INET && length >= sizeof(struct sockaddr_in)) {
                const struct sockaddr_in *in = (const struct sockaddr_in *) &copy;
                out->sin_family = AF_INET;
                out->sin_port = in->sin_port;
                out->sin_addr = in->sin_addr;
                return true;
        }
        if (copy.ss_family != AF_INET6 || length < sizeof(struct sockaddr_in6))
                return false;
        const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *) &copy;
        if (IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr)) {
                out->sin_family = AF_INET;
                out->sin_port = in6->sin6_port;
                memcpy(&out->sin_addr, in6->sin6_addr.s6_addr + 12, 4);
                return true;
        }
        struct sockaddr_in6 *out6 = (struct sockaddr_in6 *) key;
        out6->sin6_family = AF_INET6;
        out6->sin6_port = in6->sin6_port;
        out6->sin6_addr = in6->sin6_addr;
        return true;
}

static capture *capture_find(dsh_captures *captures, const struct sockaddr_storage *key, time_t now)
{
        for (size_t i = 0; i < DSH_CAPTURES_MAX; i++) {
                capture *entry = &captures->entries[i];
                if (entry->expires > now && memcmp(&entry->source, key, sizeof(*key)) == 0)
                        return entry;
        }
        return NULL;
}

int dsh_captures_add(dsh_captures *captures, const struct sockaddr *source, socklen_t source_length,
                     const struct sockaddr *destination, socklen_t destination_length)
{
        struct sockaddr_storage key;
        time_t now = now_seconds();
        capture *slot;
        int result = -ENOSPC;

        if (!source_key(source, source_length, &key) || destination_length > sizeof(struct sockaddr_storage))
                return -EINVAL;
        pthread_mutex_lock(&captures->lock);
        slot = capture_find(captures, &key, now);
        for (size_t i = 0; i < DSH_CAPTURES_MAX && slot == NULL; i++)
                if (captures->entries[i].expires <= now)
                        slot = &captures->entries[i];
        if (slot) {
                slot->source = key;
                memset(&slot->destination, 0, sizeof(slot->destination));
                memcpy(&slot->destination, destination, destination_length);
                slot->destination_length = destination_length;
                slot->expires = now + CAPTURE_LIFETIME;
                result = 0;
        }
        pthread_mutex_unlock(&captures->lock);
        return result;
}

void dsh_captures_remove(dsh_captures *captures, const struct sockaddr *source, socklen_t length)
{
        struct sockaddr_storage key, ignored;
        socklen_t ignored_length;

        if (source_key(source, length, &key))
                dsh_captures_take(captures, (const struct sockaddr *) &key, sizeof(key), &ignored, &ignored_length);
}

bool dsh_captures_take(dsh_captures *captures, const struct sockaddr *source, socklen_t length,
                       struct sockaddr_storage *destination, socklen_t *destination_length)
{
        struct sockaddr_storage key;
        capture *entry;

        if (!source_key(source, length, &key))
                return false;
        pthread_mutex_lock(&captures->lock);
        entry = capture_find(captures, &key, now_seconds());
        if (entry) {
                *destination = entry->destination;
                *destination_length = entry->destination_length;
                entry->expires = 0;
        }
        pthread_mutex_unlock(&captures->lock);
        return entry != NULL;
}
