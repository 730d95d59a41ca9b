/* SPDX-License-Identifier: MIT */
/* profile_driver.c - small drivers for valgrind --tool=callgrind (see the
 * `profile` and `callgrind` targets): one workload per run, no
 * google-benchmark around it.
 *   profile_driver rent N SIZE      N rent+return pairs of SIZE on the shared pool
 *   profile_driver malloc N SIZE    N malloc+free pairs
 *   profile_driver write N MIB POOL N writers of MIB MiB in 8 KiB chunks;
 *                                   POOL = shared | big (threshold 16 MiB)
 *   profile_driver put N MODE       N bw_put_u32le in put_loop*, the block
 *                                   present (room for all N made before the
 *                                   loop): MODE = raw (plain stores, the
 *                                   floor) | contig | chain | fd | fixed |
 *                                   fd64k (streaming to /dev/null with a
 *                                   64 KiB buffer: a send every 16384 puts).
 *                                   Exit 3 for a mode this version lacks.
 *   profile_driver msg N SIZE KIND  N small messages in msg_loop*: a u32
 *                                   length and SIZE payload bytes, read, then
 *                                   dropped; KIND = pooled (bw_init on the
 *                                   shared pool, bw_release) | buffer
 *                                   (bw_init_buffer over a stack array)
 *   profile_driver rec N KIND       N records of u32 + uvarint + u64 + f64 in
 *                                   rec_loop*: KIND = hand (stores through a
 *                                   bumped pointer, the floor) | cursor (a
 *                                   span, the bw_enc_* encoders,
 *                                   bw_advance_to) | put (the bw_put_*)
 *   profile_driver handoff N KIND   N documents of 200 bytes (10 pieces of
 *                                   20) in handoff_loop*, each given to the
 *                                   caller as malloc'd memory and free()d:
 *                                   KIND = pooled (bw_init on the shared
 *                                   pool, bw_write, bw_detach_malloc) |
 *                                   malloc (cJSON's print: malloc(256),
 *                                   memcpy, realloc to 201 bytes). Exit 3
 *                                   where bw_detach_malloc is missing.
 *   profile_driver textoff N LEN KIND  N texts of LEN bytes (256-byte
 *                                   pieces) built on the shared pool and
 *                                   given to free() in textoff_loop*:
 *                                   KIND = detach (bw_detach_malloc) | copy
 *                                   (malloc(LEN + 1), memcpy, bw_release)
 *   profile_driver free N           N bw_free_capacity calls in free_loop*
 *                                   on a contiguous writer holding bytes,
 *                                   each read again from memory (the ports
 *                                   that ask before every write)
 *   profile_driver refs N BODY KIND N records of a 10-byte header and a
 *                                   BODY-byte body in ref_loop* (10 warm
 *                                   jobs): KIND = linked (bw_append_ref) |
 *                                   copied (bw_write) | iovec (a plain
 *                                   iovec-array writer, no library)
 *   profile_driver job N KIB KIND   N jobs of KIB KiB (a multiple of 8) in
 *                                   8 KiB writes in job_loop*, after 16
 *                                   uncounted: KIND = pooled (J's bufwriter
 *                                   row: a default writer, bw_release) |
 *                                   memcpy (the same chunks into one warm
 *                                   buffer, the limit)
 *   profile_driver version          the linked library's version
 * Count one with callgrind, only the measured loop:
 *   valgrind --tool=callgrind --toggle-collect='msg_loop*' profile_driver msg 1000000 64 pooled
 * (put_loop* for put, rec_loop* for rec); the totals line / N is per call.
 * `make callgrind` runs every put mode, record kind and message size so.
 * Builds against 0.1's header too (make callgrind LIBDIR=...): there the
 * chain is a bw_chain and fixed is bw_init_buffer over the caller's buffer;
 * there is no streaming mode. */
#include "bufwriter.h"

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if BW_VERSION_MAJOR == 0 && BW_VERSION_MINOR < 2
#  define BW_V01 1
#endif
/* The cursor (bw_enc_*, bw_advance_to) came with the encoders generated
 * from the type list (0.3); without it, rec cursor exits 3. */
#ifdef BW__DEFINE_ENC
#  define DRV_CURSOR 1
#endif
/* bw_detach_malloc came in 0.3; before it, handoff pooled exits 3. */
#if BW_VERSION_MAJOR > 0 || BW_VERSION_MINOR >= 3
#  define DRV_HANDOFF 1
#endif

/* The measured loops: external, not inlined, not cloned, so callgrind's
 * --toggle-collect=put_loop* counts exactly them. */
#if defined(__GNUC__) && !defined(__clang__)
#  define PUT_LOOP __attribute__((noinline, noipa))
#else
#  define PUT_LOOP __attribute__((noinline))
#endif
PUT_LOOP void put_loop(bw_writer *w, uint32_t n, uint32_t key);
PUT_LOOP void put_loop_raw(unsigned char *p, uint32_t n, uint32_t key);
PUT_LOOP unsigned long msg_loop_pooled(uint32_t n, size_t size, const unsigned char *src);
PUT_LOOP unsigned long msg_loop_buffer(uint32_t n, size_t size, const unsigned char *src);
PUT_LOOP unsigned long handoff_loop_pooled(uint32_t n);
PUT_LOOP unsigned long handoff_loop_malloc(uint32_t n);
PUT_LOOP void rec_loop_hand(unsigned char *p, uint32_t n, uint32_t key);
PUT_LOOP void rec_loop_put(bw_writer *w, uint32_t n, uint32_t key);
#ifdef DRV_CURSOR
PUT_LOOP void rec_loop_cursor(bw_writer *w, uint32_t n, uint32_t key);
#endif
PUT_LOOP unsigned long free_loop(bw_writer *w, uint32_t n);
#ifdef DRV_HANDOFF
PUT_LOOP unsigned long textoff_loop(uint32_t n, size_t len, int detach);

/* K's rows (bench_handoff.cpp) for callgrind: the text built in a writer,
 * then handed over (bw_detach_malloc) or copied (malloc + memcpy, the
 * writer released); the caller reads a byte and frees it. */
unsigned long textoff_loop(uint32_t n, size_t len, int detach)
{
    static unsigned char text[4096 + 256];
    unsigned long sum = 0;
    for (uint32_t i = 0; i < n; i++) {
        bw_writer w;
        size_t got = len;
        char *s;
        bw_init(&w, NULL, 0);
        for (size_t k = 0; k < len; k += 256)
            bw_write(&w, text + k % 4096, len - k < 256 ? len - k : 256);
        if (detach) {
            s = (char *)bw_detach_malloc(&w, &got);
        } else {
            s = (char *)malloc(len + 1);
            if (s != NULL) {
                memcpy(s, bw_data(&w), len);
                s[len] = 0;
            }
            bw_release(&w);
        }
        if (s == NULL) return 0;
        sum += (unsigned char)s[got / 2];
        free(s);
    }
    return sum;
}
#endif

/* The empty asm with a memory clobber makes each call load the writer's
 * fields again, as a call between writes must. */
unsigned long free_loop(bw_writer *w, uint32_t n)
{
    unsigned long sum = 0;
    for (uint32_t i = 0; i < n; i++) {
        sum += bw_free_capacity(w);
        __asm__ volatile("" : : : "memory");
    }
    return sum;
}

void put_loop(bw_writer *w, uint32_t n, uint32_t key)
{
    for (uint32_t i = 0; i < n; i++) bw_put_u32le(w, (i * 2654435761u) ^ key);
}

/* The floor: the same stores through a bumped pointer, kept scalar (the
 * empty asm stops gcc -O2 from vectorising it, as a put can never be). */
void put_loop_raw(unsigned char *p, uint32_t n, uint32_t key)
{
    for (uint32_t i = 0; i < n; i++) {
        uint32_t v = (i * 2654435761u) ^ key;
        p[0] = (unsigned char)v;
        p[1] = (unsigned char)(v >> 8);
        p[2] = (unsigned char)(v >> 16);
        p[3] = (unsigned char)(v >> 24);
        p += 4;
        __asm__("" : "+r"(p));
    }
}

/* Small messages: what bench_messages.cpp's bufwriter and bw_inline_init
 * rows do per message. */
unsigned long msg_loop_pooled(uint32_t n, size_t size, const unsigned char *src)
{
    unsigned long sum = 0;
    for (uint32_t i = 0; i < n; i++) {
        bw_writer w;
        bw_init(&w, NULL, 0);
        bw_put_u32le(&w, (uint32_t)size);
        bw_write(&w, src, size);
        sum += bw_data(&w)[bw_len(&w) - 1];
        bw_release(&w);
    }
    return sum;
}

unsigned long msg_loop_buffer(uint32_t n, size_t size, const unsigned char *src)
{
    unsigned char buf[512];
    unsigned long sum = 0;
    for (uint32_t i = 0; i < n; i++) {
        bw_writer w;
        bw_init_buffer(&w, NULL, buf, sizeof buf);
        bw_put_u32le(&w, (uint32_t)size);
        bw_write(&w, src, size);
        sum += bw_data(&w)[bw_len(&w) - 1];
        bw_release(&w);
    }
    return sum;
}

/* A cJSON-like hand-off: a 200-byte document built from 10 pieces of 20
 * bytes and handed to the caller, who reads it and free()s it. The malloc
 * loop is what cJSON_PrintUnformatted does with the default hooks: a
 * 256-byte buffer, the pieces copied in (cJSON's ensure() checks room
 * before each), then realloc to the length + 1 for the NUL. */
#define HANDOFF_PIECES 10
static const char handoff_piece[] = "\"key\":\"value--\",0123";

#ifdef DRV_HANDOFF
unsigned long handoff_loop_pooled(uint32_t n)
{
    unsigned long sum = 0;
    size_t piece = sizeof handoff_piece - 1;
    for (uint32_t i = 0; i < n; i++) {
        bw_writer w;
        size_t len;
        char *s;
        bw_init(&w, NULL, 0);
        for (int k = 0; k < HANDOFF_PIECES; k++) bw_write(&w, handoff_piece, piece);
        s = (char *)bw_detach_malloc(&w, &len);
        if (s == NULL) return 0;
        sum += (unsigned char)s[len - 1];
        free(s);
    }
    return sum;
}
#endif

unsigned long handoff_loop_malloc(uint32_t n)
{
    unsigned long sum = 0;
    size_t piece = sizeof handoff_piece - 1;
    for (uint32_t i = 0; i < n; i++) {
        size_t cap = 256, len = 0;
        char *b = (char *)malloc(cap), *s;
        if (b == NULL) return 0;
        for (int k = 0; k < HANDOFF_PIECES; k++) {
            if (len + piece + 1 > cap) { /* cJSON's ensure(): never taken here */
                char *nb = (char *)realloc(b, cap * 2);
                if (nb == NULL) break;
                b = nb;
                cap *= 2;
            }
            memcpy(b + len, handoff_piece, piece);
            len += piece;
        }
        b[len] = 0;
        s = (char *)realloc(b, len + 1);
        if (s == NULL) s = b;
        sum += (unsigned char)s[len - 1];
        free(s);
    }
    return sum;
}

/* A record: u32 + uvarint + u64 + f64, the same values in each loop. The
 * hand-written floor stores the fixed widths with memcpy, one mov each on a
 * little-endian host (byte-by-byte shifts there lead gcc 12's store merging
 * into a worse sequence: 114 instructions a record instead of 47). */
#define REC_U32(i, key) (((i) * 2654435761u) ^ (key))
#define REC_VAR(i) ((uint64_t)(i) * 37u)
#define REC_U64(i, key) ((uint64_t)(i) << 32 | (key))
#define REC_F64(i) ((double)(i) * 0.5)

void rec_loop_hand(unsigned char *p, uint32_t n, uint32_t key)
{
    for (uint32_t i = 0; i < n; i++) {
        uint64_t v = REC_VAR(i), u = REC_U64(i, key);
        double d = REC_F64(i);
        uint32_t x = REC_U32(i, key);
        memcpy(p, &x, 4);
        p += 4;
        while (v >= 0x80) {
            *p++ = (unsigned char)(v | 0x80);
            v >>= 7;
        }
        *p++ = (unsigned char)v;
        memcpy(p, &u, 8);
        p += 8;
        memcpy(p, &d, 8);
        p += 8;
        __asm__("" : "+r"(p));
    }
}

void rec_loop_put(bw_writer *w, uint32_t n, uint32_t key)
{
    for (uint32_t i = 0; i < n; i++) {
        bw_put_u32le(w, REC_U32(i, key));
        bw_put_uvarint(w, REC_VAR(i));
        bw_put_u64le(w, REC_U64(i, key));
        bw_put_f64le(w, REC_F64(i));
    }
}

#ifdef DRV_CURSOR
/* One span per record, as a serializer that does not know how many
 * records follow would take it. */
void rec_loop_cursor(bw_writer *w, uint32_t n, uint32_t key)
{
    for (uint32_t i = 0; i < n; i++) {
        unsigned char *p = (unsigned char *)bw_get_span(w, 30, NULL);
        if (p == NULL) return;
        p = bw_enc_u32le(p, REC_U32(i, key));
        p = bw_enc_uvarint(p, REC_VAR(i));
        p = bw_enc_u64le(p, REC_U64(i, key));
        p = bw_enc_f64le(p, REC_F64(i));
        bw_advance_to(w, p);
    }
}
#endif

#ifdef BW_V01
PUT_LOOP void put_loop_chain(bw_chain *c, uint32_t n, uint32_t key);
void put_loop_chain(bw_chain *c, uint32_t n, uint32_t key)
{
    for (uint32_t i = 0; i < n; i++) bw_chain_put_u32le(c, (i * 2654435761u) ^ key);
}
#endif

/* N puts in MODE; returns 0, 1 on a failure, 3 for a mode not in this version. */
static int put_main(uint32_t n, const char *mode, volatile unsigned long *sink)
{
    size_t bytes = (size_t)n * 4;
    uint32_t key = (uint32_t)(uintptr_t)sink & 0x5bd1e995u;
    unsigned char *buf = malloc(bytes ? bytes : 1);
    bw_writer w;
    int rc = 0;
    if (buf == NULL) return 1;
    memset(buf, 1, bytes); /* touched: no page faults in the loop */
    if (strcmp(mode, "raw") == 0) {
        put_loop_raw(buf, n, key);
        *sink += buf[bytes ? bytes - 1 : 0];
    } else if (strcmp(mode, "contig") == 0) {
        if (bw_init(&w, NULL, bytes) != BW_OK || bw_data(&w) == NULL) return 1;
        memset((void *)bw_data(&w), 1, bytes);
        put_loop(&w, n, key);
        rc = bw_error(&w) != BW_OK || bw_len(&w) != bytes;
        bw_release(&w);
    } else if (strcmp(mode, "fixed") == 0) {
#ifdef BW_V01
        bw_init_buffer(&w, NULL, buf, bytes);
#else
        bw_init_fixed(&w, buf, bytes);
#endif
        put_loop(&w, n, key);
        rc = bw_error(&w) != BW_OK || bw_len(&w) != bytes;
        bw_release(&w);
    } else if (strcmp(mode, "chain") == 0) {
#ifdef BW_V01
        bw_chain c;
        bw_chain_init(&c, NULL);
        if (bw_chain_get_span(&c, bytes, NULL) == NULL) return 1;
        put_loop_chain(&c, n, key);
        rc = bw_chain_error(&c) != BW_OK || bw_chain_len(&c) != bytes;
        bw_chain_release(&c);
#else
        bw_init_chain(&w, NULL);
        if (bw_reserve(&w, bytes) != BW_OK) return 1;
        put_loop(&w, n, key);
        rc = bw_error(&w) != BW_OK || bw_len(&w) != bytes;
        bw_release(&w);
#endif
    } else if (strcmp(mode, "fd") == 0 || strcmp(mode, "fd64k") == 0) {
#ifdef BW_V01
        rc = 3;
#else
        int fd = open("/dev/null", O_WRONLY);
        size_t bsize = strcmp(mode, "fd") == 0 ? bytes : 64 * 1024;
        if (fd < 0 || bw_init_fd(&w, NULL, bsize, fd) != BW_OK) return 1;
        if (bw_reserve(&w, bsize < bytes ? bsize : bytes) != BW_OK) return 1;
        put_loop(&w, n, key);
        rc = bw_flush(&w) != BW_OK || bw_tell(&w) != bytes || bw_len(&w) != 0;
        bw_release(&w);
        close(fd);
#endif
    } else {
        rc = 2;
    }
    free(buf);
    return rc;
}

static unsigned char src[8192];

static int rec_main(uint32_t n, const char *kind, volatile unsigned long *sink)
{
    size_t bytes = (size_t)n * 30;
    uint32_t key = (uint32_t)(uintptr_t)sink & 0x5bd1e995u;
    bw_writer w;
    int rc = 0;
    if (strcmp(kind, "hand") == 0) {
        unsigned char *buf = malloc(bytes ? bytes : 1);
        if (buf == NULL) return 1;
        memset(buf, 1, bytes);
        rec_loop_hand(buf, n, key);
        *sink += buf[0];
        free(buf);
        return 0;
    }
    if (bw_init(&w, NULL, bytes) != BW_OK || bw_data(&w) == NULL) return 1;
    memset((void *)bw_data(&w), 1, bytes);
    if (strcmp(kind, "put") == 0) {
        rec_loop_put(&w, n, key);
#ifdef DRV_CURSOR
    } else if (strcmp(kind, "cursor") == 0) {
        rec_loop_cursor(&w, n, key);
#endif
    } else {
        rc = 3;
    }
    if (rc == 0) rc = bw_error(&w) != BW_OK;
    bw_release(&w);
    return rc;
}

/* A vrefbuffer-like job, repeated `jobs` times: n records of a 10-byte
 * header written and a body linked (bw_append_ref) or copied, on the
 * shared pool (the first job warms it). ref_loop is what callgrind counts;
 * the figure per record is its Ir / (jobs x n). */
static unsigned char bodies[16][65536];
__attribute__((noinline)) static unsigned long ref_loop(uint32_t jobs, uint32_t n, size_t body,
                                                        int link)
{
    unsigned long s = 0;
    uint32_t j, i;
    for (j = 0; j < jobs; j++) {
        bw_writer w;
        bw_init_chain(&w, NULL);
        for (i = 0; i < n; i++) {
            bw_write(&w, "0123456789", 10);
            if (link) bw_append_ref(&w, bodies[i % 16], body, NULL, NULL);
            else bw_write(&w, bodies[i % 16], body);
        }
        s += bw_iovec(&w, NULL, 0) + bw_len(&w);
        bw_release(&w);
    }
    return s;
}

/* J's job (bench_append.cpp, bufwriter row), repeated `jobs` times: a
 * writer with nothing configured (the shared pool) takes `size` bytes in
 * 8 KiB writes, reads its last byte and is released; KIND memcpy is the
 * limit, the same chunks copied into one warm buffer. job_loop is what
 * callgrind counts (after 16 warm-up jobs, uncounted); the figure per job
 * is its Ir / jobs, and pooled / memcpy is the pool's and writer's cost
 * over the copies. */
static unsigned long job_run(uint32_t jobs, size_t size, unsigned char *warm)
{
    unsigned long s = 0;
    uint32_t j;
    for (j = 0; j < jobs; j++) {
        size_t off;
        if (warm != NULL) {
            for (off = 0; off < size; off += sizeof src) memcpy(warm + off, src, sizeof src);
            __asm__ __volatile__("" : : "r"(warm) : "memory");
            s += warm[size - 1];
        } else {
            bw_writer w = BW_WRITER_INIT;
            for (off = 0; off < size; off += sizeof src) bw_write(&w, src, sizeof src);
            s += bw_data(&w)[bw_len(&w) - 1];
            bw_release(&w);
        }
    }
    return s;
}
PUT_LOOP unsigned long job_loop(uint32_t jobs, size_t size, unsigned char *warm);
unsigned long job_loop(uint32_t jobs, size_t size, unsigned char *warm)
{
    return job_run(jobs, size, warm);
}

/* The same job on a plain iovec-array writer, the shape msgpack's
 * vrefbuffer has: a malloc'd struct iovec array that doubles by realloc,
 * the headers copied into 4 KiB side chunks (a list, so the iovecs into
 * them stay valid), every body one iovec. The floor a linked record is
 * measured against (the target: <= 1.0x at 1,000 and 5,000 records). */
struct drv_iov {
    void *base;
    size_t len;
};
struct drv_chunk {
    struct drv_chunk *next;
    size_t used;
    unsigned char b[4096 - 2 * sizeof(void *)];
};
static struct drv_iov *drv_push(struct drv_iov **v, size_t *n, size_t *cap, const void *p,
                                size_t len)
{
    if (*n == *cap) {
        size_t c = *cap ? 2 * *cap : 16;
        struct drv_iov *nv = realloc(*v, c * sizeof **v);
        if (nv == NULL) abort();
        *v = nv;
        *cap = c;
    }
    (*v)[*n].base = (void *)(uintptr_t)p;
    (*v)[*n].len = len;
    return &(*v)[(*n)++];
}
__attribute__((noinline)) static unsigned long ref_loop_iovec(uint32_t jobs, uint32_t n,
                                                              size_t body)
{
    unsigned long s = 0;
    uint32_t j, i;
    for (j = 0; j < jobs; j++) {
        struct drv_iov *v = NULL;
        struct drv_chunk *c = NULL, *t;
        size_t nv = 0, cap = 0, k;
        for (i = 0; i < n; i++) {
            if (c == NULL || c->used + 10 > sizeof c->b) {
                t = malloc(sizeof *t);
                if (t == NULL) abort();
                t->next = c;
                t->used = 0;
                c = t;
            }
            memcpy(c->b + c->used, "0123456789", 10);
            drv_push(&v, &nv, &cap, c->b + c->used, 10);
            c->used += 10;
            drv_push(&v, &nv, &cap, bodies[i % 16], body);
        }
        for (k = 0; k < nv; k++) s += v[k].len; /* what bw_len and the count read */
        s += nv;
        free(v);
        while ((t = c) != NULL) {
            c = c->next;
            free(t);
        }
    }
    return s;
}

int main(int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "version") == 0) {
        printf("bufwriter %s\n", bw_version());
        return 0;
    }
    if (argc < 4) {
        fprintf(stderr, "usage: %s rent|malloc|write N SIZE|MIB [shared|big]\n"
                        "       %s put N raw|contig|chain|fd|fixed|fd64k\n"
                        "       %s msg N SIZE pooled|buffer\n"
                        "       %s rec N hand|cursor|put\n"
                        "       %s refs N BODY linked|copied|iovec\n"
                        "       %s handoff N pooled|malloc\n"
                        "       %s textoff N LEN detach|copy\n"
                        "       %s free N x\n"
                        "       %s job N KIB pooled|memcpy\n"
                        "       %s version\n", argv[0], argv[0], argv[0], argv[0], argv[0],
                argv[0], argv[0], argv[0], argv[0], argv[0]);
        return 2;
    }
    long n = atol(argv[2]);
    size_t size = (size_t)atol(argv[3]);
    volatile unsigned long sink = 0;
    if (strcmp(argv[1], "msg") == 0 && argc > 4) {
        memset(src, 7, sizeof src);
        if (size > sizeof src) return 2;
        sink += strcmp(argv[4], "pooled") == 0 ? msg_loop_pooled((uint32_t)n, size, src)
                                              : msg_loop_buffer((uint32_t)n, size, src);
        return 0;
    }
    if (strcmp(argv[1], "handoff") == 0) {
        if (strcmp(argv[3], "malloc") == 0) {
            sink += handoff_loop_malloc((uint32_t)n);
            return 0;
        }
#ifdef DRV_HANDOFF
        if (strcmp(argv[3], "pooled") == 0) {
            sink += handoff_loop_pooled((uint32_t)n);
            return 0;
        }
        return 2;
#else
        return 3;
#endif
    }
    if (strcmp(argv[1], "textoff") == 0 && argc > 4) {
#ifdef DRV_HANDOFF
        sink += textoff_loop((uint32_t)n, size, strcmp(argv[4], "detach") == 0);
        return 0;
#else
        return 3;
#endif
    }
    if (strcmp(argv[1], "free") == 0) {
        bw_writer w;
        if (bw_init(&w, NULL, 4096) != BW_OK || bw_write(&w, "0123456789", 10) != BW_OK) return 1;
        sink += free_loop(&w, (uint32_t)n);
        bw_release(&w);
        return 0;
    }
    if (strcmp(argv[1], "rec") == 0) return rec_main((uint32_t)n, argv[3], &sink);
    if (strcmp(argv[1], "refs") == 0 && argc > 4 && size <= sizeof bodies[0]) {
        int link = strcmp(argv[4], "linked") == 0;
        if (strcmp(argv[4], "iovec") == 0) {
            sink += ref_loop_iovec(1, (uint32_t)n, size); /* warm malloc */
            sink += ref_loop_iovec(10, (uint32_t)n, size);
            return 0;
        }
        sink += ref_loop(1, (uint32_t)n, size, link); /* warm the pool */
        sink += ref_loop(10, (uint32_t)n, size, link);
        return 0;
    }
    if (strcmp(argv[1], "job") == 0 && argc > 4 && size >= 8 && size % 8 == 0) {
        /* SIZE in KiB, a multiple of the 8 KiB chunk. */
        unsigned char *warm = NULL;
        memset(src, 7, sizeof src);
        if (strcmp(argv[4], "memcpy") == 0) {
            warm = malloc(size << 10);
            if (warm == NULL) return 1;
            memset(warm, 1, size << 10);
        } else if (strcmp(argv[4], "pooled") != 0) {
            return 2;
        }
        sink += job_run(16, size << 10, warm);
        sink += job_loop((uint32_t)n, size << 10, warm);
        free(warm);
        return 0;
    }
    if (strcmp(argv[1], "put") == 0) {
        int rc = put_main((uint32_t)n, argv[3], &sink);
        if (rc == 2) fprintf(stderr, "unknown mode %s\n", argv[3]);
        return rc;
    }
    if (strcmp(argv[1], "rent") == 0) {
        bw_pool *p = bw_pool_shared();
        for (long i = 0; i < n; i++) {
            size_t cap;
            void *b = bw_pool_rent(p, size, &cap);
            sink += (unsigned long)(uintptr_t)b;
            bw_pool_return(p, b, cap);
        }
    } else if (strcmp(argv[1], "malloc") == 0) {
        for (long i = 0; i < n; i++) {
            void *b = malloc(size);
            sink += (unsigned long)(uintptr_t)b;
            free(b);
        }
    } else {
        bw_pool *p = NULL;
        if (argc > 4 && strcmp(argv[4], "big") == 0) {
            bw_pool_options o;
            memset(&o, 0, sizeof o);
            o.max_pooled_size = 16u << 20;
            o.max_retained_bytes = 64u << 20;
            if (bw_pool_create(&p, &o) != BW_OK) return 1;
        }
        memset(src, 7, sizeof src);
        for (long i = 0; i < n; i++) {
            bw_writer w;
            bw_init(&w, p, 0);
            for (size_t off = 0; off < (size << 20); off += sizeof src) bw_write(&w, src, sizeof src);
            sink += bw_data(&w)[bw_len(&w) - 1];
            bw_release(&w);
        }
        bw_pool_stats st;
        bw_pool_get_stats(p ? p : bw_pool_shared(), &st);
        fprintf(stderr, "backing_allocs=%llu hits=%llu rents=%llu\n",
                (unsigned long long)st.backing_allocs, (unsigned long long)st.hits,
                (unsigned long long)st.rents);
        if (p) bw_pool_destroy(p);
    }
    return (int)(sink & 0);
}
