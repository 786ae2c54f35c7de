/*
 * proxy/policy/authfail.c: failed credentials by peer address (see
 * authfail.h).
 */
#include "config.h"

#include <stdint.h>
#include <string.h>
#include <netinet/in.h>
#include <sys/random.h>

#include "proxy/policy/authfail.h"
#include "proxy/core/lock.h"

#define WAYS 4
#define SETS (PX_AUTHFAIL_SLOTS / WAYS)

struct slot {
	uint8_t key[9];       /* family (4 or 6), then the address or /64 */
	uint8_t used;
	unsigned fails;       /* within the window that began at FIRST */
	time_t first, last;
	time_t until;         /* blocked before this */
};

static pthread_mutex_t authfail_lock = PX_LOCK_INIT;
static struct slot table[SETS][WAYS];
static uint64_t seed;
static int seeded;

/* The key of SA: 0, or -1 for a family without one. */
static int
key_of(const struct sockaddr *sa, uint8_t key[9])
{
	memset(key, 0, 9);
	if (sa->sa_family == AF_INET) {
		key[0] = 4;
		memcpy(key + 1, &((const struct sockaddr_in *)(const void *)sa)->sin_addr, 4);
		return 0;
	}
	if (sa->sa_family == AF_INET6) {
		const struct in6_addr *a = &((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr;
		if (IN6_IS_ADDR_V4MAPPED(a)) {
			key[0] = 4;
			memcpy(key + 1, a->s6_addr + 12, 4);
		} else {
			key[0] = 6;
			memcpy(key + 1, a->s6_addr, 8);
		}
		return 0;
	}
	return -1;
}

/* A keyed FNV-1a: a client cannot pick addresses that share one set. */
static size_t
set_of(const uint8_t key[9])
{
	uint64_t h = 1469598103934665603ULL ^ seed;
	size_t i;

	if (!seeded) {
		if (getrandom(&seed, sizeof(seed), GRND_NONBLOCK) != (ssize_t)sizeof(seed))
			seed = (uint64_t)(uintptr_t)&seed ^ (uint64_t)time(NULL);
		seeded = 1;
		h = 1469598103934665603ULL ^ seed;
	}
	for (i = 0; i < 9; i++) {
		h ^= key[i];
		h *= 1099511628211ULL;
	}
	return (size_t)(h % SETS);
}

/* KEY's slot, or NULL; with MAKE a slot is taken for it (the set's free
 * one, else its least recently used). */
static struct slot *
find(const uint8_t key[9], int make)
{
	struct slot *set = table[set_of(key)], *victim = NULL;
	size_t i;

	for (i = 0; i < WAYS; i++)
		if (set[i].used && memcmp(set[i].key, key, 9) == 0)
			return &set[i];
	if (!make)
		return NULL;
	for (i = 0; i < WAYS; i++) {
		if (!set[i].used) {
			victim = &set[i];
			break;
		}
		if (victim == NULL || set[i].last < victim->last)
			victim = &set[i];
	}
	memset(victim, 0, sizeof(*victim));
	memcpy(victim->key, key, 9);
	victim->used = 1;
	return victim;
}

unsigned
px_authfail_blocked(const struct sockaddr *sa, time_t now)
{
	PX_LOCKED(&authfail_lock);
	uint8_t key[9];
	struct slot *s;

	if (key_of(sa, key) != 0 || (s = find(key, 0)) == NULL || s->until <= now)
		return 0;
	return (unsigned)(s->until - now);
}

int
px_authfail_failed(const struct sockaddr *sa, time_t now)
{
	PX_LOCKED(&authfail_lock);
	uint8_t key[9];
	struct slot *s;

	if (key_of(sa, key) != 0 || (s = find(key, 1)) == NULL)
		return 0;
	s->last = now;
	if (s->fails == 0 || now - s->first >= PX_AUTHFAIL_WINDOW_S) {
		s->fails = 0;
		s->first = now;
	}
	if (++s->fails < PX_AUTHFAIL_LIMIT)
		return 0;
	s->fails = 0;
	s->until = now + PX_AUTHFAIL_BLOCK_S;
	return 1;
}

void
px_authfail_passed(const struct sockaddr *sa)
{
	PX_LOCKED(&authfail_lock);
	uint8_t key[9];
	struct slot *s;

	if (key_of(sa, key) == 0 && (s = find(key, 0)) != NULL)
		memset(s, 0, sizeof(*s));
}

void
px_authfail_reset(void)
{
	PX_LOCKED(&authfail_lock);

	memset(table, 0, sizeof(table));
}
