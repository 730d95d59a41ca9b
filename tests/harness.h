/* SPDX-License-Identifier: MIT */
/* harness.h - the one test harness, shared by every tests/test_*.c and
 * built from two files by topic: harness.c (the allocator, the modes, the
 * test sink, the per-mode writer, several writers on one pool) and
 * harness_pool.c (pools, failing the Nth call, scripted output).
 *
 *   - test_alloc: a counting, failure-injecting backing allocator. Every
 *     block carries a 16-byte header with its size, so a free or realloc
 *     with a size other than the one handed out is counted as a size error
 *     (the pool must always give back exactly what it got, as sdallocx
 *     needs). fail_at = N makes the Nth call (alloc or realloc, counting
 *     from 1) fail; with fail_sticky, every call from the Nth on fails.
 *   - The modes (M_CONTIG ... M_FIXED), FOR_EACH_MODE, and `harness`: a
 *     writer of a given mode on a fresh counting pool, with the test sink
 *     (sink, test_sink) for streaming and a guarded fixed buffer.
 *   - fail_each_call: run a piece of work with backing call N failing, for
 *     N = 1, 2, ... until a run makes fewer than N calls.
 *   - Byte helpers: pat, pattern, ref (the expected output), expect_output. */
#ifndef BW_TEST_HARNESS_H
#define BW_TEST_HARNESS_H

#include "bufwriter.h"

#ifdef BW_MINI_CRITERION
#  include "mini_criterion.h"
#else
#  include <criterion/criterion.h>
#endif
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#ifdef _WIN32
/* The C runtime's pipes stand in for POSIX's where the tests need one (a
 * pipe is what bw_write_fd and bw_init_fd write to there): binary, 64 KiB
 * of buffer as a Linux pipe has. */
#  include <fcntl.h>
#  include <io.h>
static inline int pipe(int fds[2]) { return _pipe(fds, 65536, _O_BINARY); }
#endif

/* ---- The counting, failure-injecting backing allocator ----------------- */

typedef struct test_alloc {
    bw_allocator hook;
    _Atomic long calls;        /* alloc + realloc calls, failed ones too */
    _Atomic long live_blocks;
    _Atomic long long live_bytes;
    _Atomic long allocs, frees, reallocs;
    _Atomic long size_errors;  /* free/realloc with a size that does not match */
    _Atomic long fail_at;      /* 0 = never */
    _Atomic int fail_sticky;
    _Atomic int no_realloc;
} test_alloc;

void *ta_alloc(void *ctx, size_t size);
void *ta_realloc(void *ctx, void *block, size_t old_size, size_t new_size);
void ta_free(void *ctx, void *block, size_t size);

/* Set up ta as a fresh counting allocator; with_realloc = 0 leaves the
 * realloc hook NULL (the pool then copies). */
void ta_init(test_alloc *ta, int with_realloc);

/* Make every backing call from ta's next one on fail (or stop failing). */
void ta_fail_from_next(test_alloc *ta);
void ta_fail_never(test_alloc *ta);

/* A pool over ta with the given threshold (0 = default) and flags, with
 * 0.1's mechanics, so tests can count exactly: first blocks are the class
 * of the first write, nothing above the threshold is kept or learned, and
 * nothing decays. ta_pool_defaults keeps every default. */
bw_pool *ta_pool(test_alloc *ta, size_t threshold, unsigned flags);
bw_pool *ta_pool_defaults(test_alloc *ta);

/* The same over a fresh counting allocator ta (ta_init(ta, 1) first). */
bw_pool *fresh_pool(test_alloc *ta, size_t threshold, unsigned flags);
bw_pool *fresh_pool_defaults(test_alloc *ta);

/* Destroy the pool and check the allocator balances to zero. */
void ta_finish(test_alloc *ta, bw_pool *p);

/* One writer on its own fresh counting pool, the set-up most pool and
 * growth tests share: wp_open makes the pool (fresh_pool's threshold and
 * flags) and leaves the writer BW_WRITER_INIT for the test to open;
 * wp_close releases the writer, then ta_finish. */
typedef struct wpool {
    test_alloc ta;
    bw_pool *p;
    bw_writer w;
} wpool;
void wp_open(wpool *f, size_t threshold, unsigned flags);
/* The same on fresh_learn_pool's pool. */
void wp_open_learn(wpool *f, unsigned flags, size_t max_learned);
void wp_close(wpool *f);

/* How many of b[0, n) differ from pat(from + i, seed). */
size_t pat_mismatches(const unsigned char *b, size_t n, size_t from, unsigned seed);
/* pat(i, seed) for i in [0, n), one bw_put_u8 each: the one-byte path. */
void put_pat_bytes(bw_writer *w, size_t n, unsigned seed);

/* A byte pattern that depends on the position: catches shifted copies.
 * Inline: the big jobs call it for every byte of tens of MiB, which as a
 * call into harness.c was most of their time under valgrind and qemu. */
static inline unsigned char pat(size_t i, unsigned seed)
{
    return (unsigned char)((i * 131u + (i >> 8) * 7u + seed) & 0xff);
}

/* ---- Modes, the test sink, the per-mode writer ------------------------ */

enum { M_CONTIG, M_BUFFER, M_CHAIN, M_SINK, M_FIXED, M_COUNT };
extern const char *const mode_name[M_COUNT];
#define FOR_EACH_MODE(m) for ((m) = 0; (m) < M_COUNT; (m)++)

#define SINK_BUF 64           /* streaming buffer size in most tests      */
#define IBUF_SIZE 64          /* bw_init_buffer's first buffer            */
#define FIXED_SIZE (1u << 16) /* fixed buffer size in most tests          */
#define GUARD 64              /* guard bytes on each side of a fixed buffer */
#define GUARD_BYTE 0xEE

/* An "impossible" request: more than the harness allocator ever grants (it
 * refuses any single request above ALLOC_LIMIT without calling malloc, so
 * sanitizers never see a huge allocation), yet representable. */
#if SIZE_MAX > 0xFFFFFFFFu
#  define HUGE_REQ ((size_t)1 << 40) /* 1 TiB */
#  define ALLOC_LIMIT ((size_t)1 << 30)
#else
#  define HUGE_REQ ((size_t)768 << 20)
#  define ALLOC_LIMIT ((size_t)256 << 20)
#endif
#define LIVE_LIMIT (512LL << 20)

/* A growable byte array: the reference and the sink's output. */
typedef struct bytes {
    unsigned char *d;
    size_t len, cap;
} bytes;
void by_add(bytes *b, const void *src, size_t n);
void by_free(bytes *b);

/* The test sink, for every streaming writer in the tests: it appends what
 * it takes to out and counts its calls; the other fields script how much it
 * takes and how it fails. A call with n == 0 or data NULL is counted in
 * bad_args and fails (-1, EINVAL): the writer must never make one. */
enum { SF_ERRNO, SF_ZERO, SF_TOO_MANY, SF_BELOW }; /* -1 with fail_errno; 0; n + 1; -2 */
enum { EINTR_NEVER, EINTR_ONCE, EINTR_ODD };
typedef struct sink {
    bytes out;        /* every byte taken, in order                        */
    long calls;       /* every call, failed ones included                  */
    long bad_args;    /* calls with n == 0 or data NULL                    */
    int wrong_thread; /* called on another thread than sink_init's         */
    pthread_t thread;
    int eintr;        /* EINTR_ONCE: the next call is -1 with EINTR (then
                       * EINTR_NEVER); EINTR_ODD: every odd call is        */
    size_t take;      /* take at most this much per call; 0 = all offered */
    int random;       /* take a random count 1..that, from seed            */
    unsigned seed;
    size_t budget;    /* take this much in all, then fail; SIZE_MAX = never */
    long fail_at;     /* this call (from 1) fails; 0 = never               */
    int fail_sticky;  /* ... and every later one                           */
    int fail_kind;    /* how it fails (SF_*); SF_BELOW leaves errno EPERM  */
    int fail_errno;   /* errno for SF_ERRNO                                */
} sink;

ptrdiff_t test_sink(void *ctx, const void *data, size_t n);

/* sink_init: a sink that takes everything, expected on this thread, never
 * failing (and, once told to fail, failing with EPIPE). sink_init_random:
 * the same, taking random counts from seed. sink_fail: every call from now
 * on fails the way kind says (SF_ERRNO: -1 with errno err); sink_heal: it
 * takes everything again. sink_free: frees the output. */
void sink_init(sink *s);
void sink_init_random(sink *s, unsigned seed);
void sink_fail(sink *s, int kind, int err);
void sink_heal(sink *s);
void sink_free(sink *s);

typedef struct harness {
    int mode;
    test_alloc ta;
    bw_allocator hook; /* ta, refusing huge requests without calling malloc */
    bw_pool *p;
    bw_writer w;
    sink s;
    unsigned char *fmem; /* GUARD | fixed buffer | GUARD */
    unsigned char *fbuf;
    size_t fsize;
    unsigned char ibuf[IBUF_SIZE];
} harness;

/* The mode's usual parameter: see h_open_ex. */
size_t default_param(int mode);

/* Open a writer of `mode` on a fresh counting pool. param is the contiguous
 * initial capacity, the first buffer's size, the streaming buffer_size or the
 * fixed buffer's size. The harness must not move while open. */
void h_open_ex(harness *h, int mode, size_t param, size_t threshold, unsigned flags);
void h_open(harness *h, int mode);
/* h_open, then the writer takes the string s (its bytes, no NUL). */
void h_open_holding(harness *h, int mode, const char *s);

/* h_open_ex on a pool with flags, streaming and fixed writers with a
 * STALE_BUF-byte buffer; a fixed buffer starts with stale bytes ("SSSS..."),
 * which no output (bw_cstr's included) may show. */
#define STALE_BUF 4096
void h_open_stale(harness *h, int mode, unsigned flags);

/* A malloc'd string of n letters that depend on the position, then a NUL. */
char *letters(size_t n, unsigned seed);

/* Release, check the fixed buffer's guards, destroy the pool and check the
 * allocator balances to zero. */
void h_close(harness *h);

bw_pool_stats h_stats(harness *h);
long h_calls(harness *h);

/* ta_fail_from_next and ta_fail_never on the harness's allocator. */
void h_fail_from_next(harness *h);
void h_fail_never(harness *h);

/* A position-dependent byte pattern to write from. */
#define PATTERN_SIZE (1u << 18)
const unsigned char *pattern(void);

/* Everything the writer produced: what the sink took, then what is held. */
unsigned char *h_output(const harness *h, size_t *n);

/* bw_iovec, bw_copy_out and bw_data agree on the held bytes. */
void expect_views_agree(const harness *h);

/* The writer produced exactly want[0, n). Returns 1 when it did. */
int expect_output(const harness *h, const void *want, size_t n, const char *what);

/* A growable byte array: the expected output. */
typedef struct ref {
    unsigned char *d;
    size_t len, cap;
} ref;

void ref_add(ref *r, const void *src, size_t n);
void ref_str(ref *r, const char *s);
void ref_double(ref *r); /* append a second copy of everything in r */
void ref_free(ref *r);
void ref_from(ref *r, const harness *h); /* start r as the output so far */

/* Free r and h_close. h_close_expecting: first, the writer produced
 * exactly r. */
void h_close_ref(harness *h, ref *r);
void h_close_expecting(harness *h, ref *r, const char *what);
/* h_close_expecting with the expected output a string. */
void h_close_expecting_str(harness *h, const char *want, const char *what);

/* Write pattern bytes until the writer's current block holds `tail` (tn
 * bytes) at its end with exactly `slack` bytes free after it. */
void fill_tight(harness *h, const void *tail, size_t tn, size_t slack);

/* Write n pattern bytes (from offset `from` of the pattern). */
void put_pattern(harness *h, size_t from, size_t n);
/* ... and add them to the expected output r. */
void put_pattern_ref(harness *h, ref *r, size_t from, size_t n);
/* h_open, then the writer takes the first n pattern bytes; r (when not
 * NULL) expects them. */
void h_open_pattern(harness *h, int mode, size_t n, ref *r);
/* A per-mode test: for every mode, h_open_pattern on a fresh harness with
 * r expecting the n bytes, then body (h->mode is the mode), which closes
 * the harness (r is freed after it). */
typedef void mode_body(harness *h, ref *r);
void each_mode_pattern(size_t n, mode_body *body);

/* Sizes and widths the compiler cannot see through (so -Werror does not
 * reject the deliberately impossible calls at compile time). */
size_t opaque(size_t n);
int opaque_int(int n);

/* bw_vprintf through a variadic call. */
int vp(bw_writer *w, const char *fmt, ...);

/* Every typed put (bw_put_u8 .. bw_put_dec_i64) on a NULL writer is
 * BW_EINVAL. */
void expect_typed_puts_refuse_null(void);

/* bw_flush fails with BW_EIO, leaves errno at err, and records BW_EIO. */
void expect_flush_eio(bw_writer *w, int err, const char *where);

/* Record an error (BW_EINVAL: an advance beyond the free space). */
void record_einval(harness *h);

/* Read exactly n bytes from fd (a pipe); whether a pipe holds nothing. */
void read_exact(int fd, unsigned char *dst, size_t n);
int pipe_is_empty(int fd);
void close_pair(const int fds[2]); /* both ends of a pipe or socket pair */

/* A segmented writer holding bytes in at least `blocks` blocks. */
void chain_blocks(harness *h, size_t blocks, ref *r);
/* h_open(h, M_CHAIN), then chain_blocks. */
void h_open_chain(harness *h, size_t blocks, ref *r);
/* h_open_chain(h, 2, r); iov[0] and iov[1] get the writer's two blocks. */
void h_open_two_blocks(harness *h, ref *r, struct iovec *iov);

/* ---- Several writers on one pool --------------------------------------- */
/* env: a counting pool with 0.1's mechanics (ta_pool, threshold 4096), one
 * test sink, a first buffer and a fixed buffer, for tests that put several
 * writers of any mode on one pool (moves, references, detach). */

#define CLIENT_SINK_BUF 256 /* an env streaming writer's buffer */

typedef struct env {
    test_alloc ta;
    bw_pool *pool;
    sink sink;
    unsigned char ibuf[IBUF_SIZE];
    unsigned char fixed[FIXED_SIZE];
} env;

env *env_new(void);
void env_free(env *e); /* checks the allocator balances to zero */
void mk(env *e, bw_writer *w, int mode); /* a writer of mode on e's pool */

/* Everything the writer produced: what the sink took, then what is held. */
size_t produced(env *e, const bw_writer *w, unsigned char *dst);

/* A done callback's record: how often, with what. */
typedef struct donec {
    int calls;
    const void *data;
    size_t n;
} donec;
void on_done(void *ctx, const void *data, size_t n);

void fill(unsigned char *p, size_t n, unsigned seed); /* pat(i, seed) */

/* The held bytes as one malloc'd copy, through bw_iovec. */
unsigned char *held_by_iovec(const bw_writer *w, size_t *n);
uint64_t outstanding(bw_pool *p); /* the pool's outstanding_bytes */

/* ---- Pools: options, stats, renting, time, big jobs -------------------- */

#define KiB ((size_t)1 << 10)
#define MiB ((size_t)1 << 20)
#define TH (64 * KiB) /* a small threshold keeps the large-job tests fast */

uint64_t mono_ms(void); /* CLOCK_MONOTONIC in ms */
void sleep_ms(uint64_t ms);
void sleep_until(uint64_t t);

/* Zeroed options over ta (NULL: the default allocator); a pool from o. */
bw_pool_options opts_for(test_alloc *ta);
bw_pool *mkpool(const bw_pool_options *o);
/* opts_for over a fresh counting allocator ta (ta_init(ta, 1) first). */
bw_pool_options fresh_opts(test_alloc *ta);
/* A pool from fresh_opts with flags and decay_ms (0: the default) set. */
bw_pool *fresh_flags_pool(test_alloc *ta, unsigned flags, uint32_t decay_ms);
/* The capacity a contiguous writer on p has after its first 4 bytes;
 * first_write_block: after its first write, of src[0, n). */
size_t first_block(bw_pool *p);
size_t first_write_block(bw_pool *p, const void *src, size_t n);
bw_pool_stats stats_of(bw_pool *p);
/* BW_CHECKED=1 or BW_BYPASS=1 in the environment change every pool (a
 * canary after each block, copies and never a hand-off; or exact sizes):
 * env_set tells one, plain_env that neither is set; maps_large, whether a
 * libc pool's blocks from 2 MiB up are huge-page mappings it widens in
 * place (Linux, a plain environment), which stops a fresh climb at 128 KiB. */
int env_set(const char *name);
int plain_env(void);
int maps_large(void);
#ifndef _WIN32
/* A backing allocator of fresh anonymous mappings, never touched, so which
 * pages of a block are in memory (resident_pages) is what the pool and the
 * writer touched; the last block it gave goes to *ctx unless ctx is NULL.
 * A failing munmap aborts. */
void *map_alloc(void *ctx, size_t size);
void map_free(void *ctx, void *block, size_t size);
/* How many of the pages of [b, b + n) are in memory (mincore). */
size_t resident_pages(const void *b, size_t n);
#endif
void *rent_ok(bw_pool *p, size_t n, size_t *cap); /* a rent that must succeed */
/* Rent b[0..n) (sizes[i], or size when sizes is NULL), each must succeed;
 * return them all, each must be BW_OK. */
void rent_each(bw_pool *p, size_t n, const size_t *sizes, size_t size, void **b, size_t *cap);
void return_each(bw_pool *p, size_t n, void *const *b, const size_t *cap);
int all_bytes(const void *b, size_t n, unsigned char v); /* every byte is v */

/* An allocator whose new memory holds garbage (0xAB), as reused malloc
 * memory may: a block that reads as zeros was zeroed by the pool. */
void garbage_init(test_alloc *ta);

/* A pool over ta with threshold TH, no decay, the jump floor at the
 * threshold (these tests pin the jump's mechanics; test_jump.c tests the
 * default floor), everything else default. */
bw_pool *learn_pool(test_alloc *ta, unsigned flags, size_t max_learned);
/* The same over a fresh counting allocator ta (ta_init(ta, 1) first). */
bw_pool *fresh_learn_pool(test_alloc *ta, unsigned flags, size_t max_learned);

/* A sink that takes everything and keeps nothing. */
ptrdiff_t discard_sink(void *ctx, const void *data, size_t n);

/* 8 KiB of pat(i, seed), for the big jobs. */
extern unsigned char chunk[8192];
void fill_chunk(unsigned seed);
/* Whole chunks into w, 8 KiB a write, until n bytes or more are written;
 * every write must succeed. */
void write_chunks(bw_writer *w, size_t n);

/* `jobs` contiguous writers on p, one after the other, each write n bytes
 * of chunk (n <= 8 KiB) and are released: what a learning pool learns
 * from. */
void small_jobs(bw_pool *p, int jobs, size_t n);

/* A contiguous writer on p writes `total` bytes of chunk in 8 KiB pieces,
 * checks they all arrived and is released. caps[] (if given) gets every
 * capacity it had (at most 32), *ncaps their number; returns the last. */
size_t write_job(bw_pool *p, size_t total, size_t *caps, size_t *ncaps);

/* ---- Fail the Nth backing call ----------------------------------------- */

/* In the spirit of mpack's test_system_fail_until_ok: for N = 1, 2, ...
 * (below limit), run(ctx, N, sticky) does the work with backing call N
 * failing (alone, or with sticky from N on) and returns 1 when the failure
 * was reached. Stops at the first N a run did not reach, and returns it. */
long fail_each_call(int (*run)(void *ctx, long n, int sticky), void *ctx, int sticky,
                    long limit);

/* ---- Scripted output: a scripted stream of writes ---------------------- */
/* Used by the output tests (sink, fd, file, failinj, model), with the test
 * sink above taking random short counts. */

unsigned rnd(unsigned *s); /* a small LCG: 24 random bits */

void st_le(unsigned char *p, uint64_t v, int n);
void st_be(unsigned char *p, uint64_t v, int n);
size_t uvar_enc(unsigned char *p, uint64_t v);
size_t hex_enc(char *out, const unsigned char *src, size_t n);
void set_nonblock(int fd);
int closed_fd(void); /* a descriptor number that is not open */
void drain(int fd, bytes *b); /* everything available from a non-blocking fd */

/* The held bytes are exactly exp[0..n), seen through bw_copy_out, bw_iovec
 * and (when not NULL) bw_data. */
void held_is(const bw_writer *w, const unsigned char *exp, size_t n, const char *where);

/* For a streaming writer that never consumed: what the sink got, then what
 * is held, is exactly exp[0..bw_tell). */
void sent_then_held(const bw_writer *w, const sink *s, const unsigned char *exp,
                    const char *where);

/* A scripted stream of writes: every op writes exactly s[off, off + len). */
enum {
    K_WRITE, K_PUTS, K_PRINTF_S, K_PRINTF_N, K_U32LE, K_U64BE, K_UVAR, K_DEC,
    K_HEX, K_SPAN, K_RESERVE, K_NKINDS
};
typedef struct op {
    int kind, width;
    size_t off, len, hint;
    uint64_t v;
} op;
typedef struct work {
    bytes s;
    op *ops;
    size_t nops, cap;
} work;
void work_make(work *wk, unsigned seed, size_t target, const size_t *sizes, size_t nsizes);
void work_free(work *wk);
int do_op(bw_writer *w, const work *wk, const op *o); /* BW_OK and its bytes, or an error */

extern const size_t small_sizes[10];
#define NSMALL (sizeof small_sizes / sizeof small_sizes[0])

/* A writer of a mode over the test sink, which takes random short counts.
 * room: the streaming buffer size or the fixed buffer size. */
typedef struct mw {
    bw_writer w;
    int mode;
    sink s;
    unsigned char *buf; /* fixed: the buffer; M_BUFFER: the first buffer */
    size_t room;
} mw;
void mw_init(mw *m, int mode, bw_pool *p, size_t room);
void mw_done(mw *m);
/* Write n pattern bytes in varied chunks; exp gets them too. */
void fill_pattern(bw_writer *w, unsigned char *exp, size_t n, unsigned seed);

#endif /* BW_TEST_HARNESS_H */
