/* SPDX-License-Identifier: MIT */
/* seg_check.c - the segmented mode's inspection room: bw__seg_check, every
 * invariant of a segmented writer's pieces, owned blocks, counts and
 * positions, in BW_DEBUG builds and the fuzzer's (BW_SEG_CHECK). mode_seg.c
 * runs it after every operation that changes the state. */
#include "seg_internal.h"

#ifdef BW__SEG_CHECKS
/* ---- the invariants (BW_DEBUG, and the fuzzer's build) ----
 * bw__seg_check states every rule of the segmented storage, as mimalloc's
 * mi_page_is_valid and _mi_heap_check do for theirs: the tests and the
 * fuzzer see the bytes, this sees the state behind them, after every
 * operation (the table below is wrapped). It aborts naming the rule. */
#include <stdio.h>
#include <stdlib.h>

/* _Noreturn: C11's, which the implementation needs anyway (_Thread_local,
 * <stdatomic.h>); callers then need no path after a broken rule. */
static _Noreturn void bw__seg_broken(const char *rule)
{
    fprintf(stderr, "bw__seg_check: broken invariant: %s\n", rule);
    abort();
}
#define BW__SEG_RULE(c, rule) ((c) ? (void)0 : bw__seg_broken(rule))

/* The tree t in address order: heap-ordered by priority, blocks apart,
 * each holding a piece; counted in *k, and listed in out[] if not NULL. */
static void bw__check_tree(const bw__blk *t, const bw__blk **prev, const bw__blk **out,
                           size_t *k)
{
    for (; t != NULL; t = t->right) {
        BW__SEG_RULE(t->left == NULL || bw__prio(t->left) <= bw__prio(t),
                     "the block tree is a heap by priority (left)");
        BW__SEG_RULE(t->right == NULL || bw__prio(t->right) <= bw__prio(t),
                     "the block tree is a heap by priority (right)");
        bw__check_tree(t->left, prev, out, k);
        BW__SEG_RULE((const unsigned char *)t > t->data, "a block's trailer follows its bytes");
        BW__SEG_RULE(*prev == NULL || (uintptr_t)*prev + BW__SEG_HDR <= bw__key(t),
                     "the block tree is in address order, blocks apart");
        BW__SEG_RULE(t->pieces != 0, "a block in the tree holds a closed piece");
        if (out != NULL) out[*k] = t;
        (*k)++;
        *prev = t;
    }
}

/* Closed piece pc, record i of chunk ch: its block, blks[k] (blocks in
 * address order, n of them), or n for the current block cur; its bytes
 * inside it. A reference with a done has its record's aside, and its
 * bytes lie in what the caller linked (n + 1); a reference without one
 * keeps nothing else (n + 1). */
static size_t bw__check_owner(const bw__blk *const *blks, size_t n, const bw__blk *cur,
                              bw__pchunk *ch, size_t i)
{
    const bw__piece *pc = &BW__PC(ch)[i];
    const bw__blk *b = bw__pc_blk(pc);
    const bw__aside *a = bw__pc_aside(pc);
    size_t lo = 0, hi = n;
    BW__SEG_RULE(pc->n != 0 && pc->p != NULL, "a closed piece holds bytes");
    if (a != NULL) {
        BW__SEG_RULE(a == BW__PA(ch) + i, "a reference's aside is at its record's place");
        BW__SEG_RULE(a->done != NULL, "a reference with an aside has a done");
        BW__SEG_RULE((const unsigned char *)a->orig <= pc->p &&
                         pc->p + pc->n <= (const unsigned char *)a->orig + a->orig_n,
                     "a reference's bytes lie in the memory linked");
    }
    if (b == NULL) return n + 1;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (bw__key(blks[mid]) < bw__key(b)) lo = mid + 1;
        else hi = mid;
    }
    if (lo == n || blks[lo] != b) lo = n;
    BW__SEG_RULE(lo < n || b == cur, "a piece's block is owned (current or in the tree)");
    BW__SEG_RULE(pc->p >= b->data && pc->p + pc->n <= (const unsigned char *)b,
                 "a piece's bytes lie inside its block");
    return lo;
}

/* The chunks of records: a list from head (no prev) through tail to the
 * spares, each of its rented size; held records [first, cap) in the head,
 * [0, count) in the tail ([first, count) when one chunk), every chunk
 * between full; a chunk's seq follows the last's; the head a spare only
 * when nothing is held, and the tail empty only then. */
static void bw__check_chunks(const bw_writer *w)
{
    const bw__pchunk *ch = w->m.c.head, *prev = NULL;
    int at_tail = 0;
    BW__SEG_RULE((w->m.c.head == NULL) == (w->m.c.tail == NULL),
                 "a head of the records when a tail");
    BW__SEG_RULE(w->m.c.head != NULL || (w->m.c.first == 0 && w->m.c.count == 0),
                 "no chunk of records: none held");
    for (; ch != NULL; prev = ch, ch = ch->next) {
        BW__SEG_RULE(ch->prev == prev, "the chunks of records are a list (prev)");
        BW__SEG_RULE(ch->cap != 0 && ch->cap <= UINT32_MAX / 2 &&
                         sizeof *ch + ch->cap * BW__REC <= ch->bytes,
                     "a chunk's records and their asides fit its rented size");
        if (at_tail) continue; /* a spare: nothing more to hold */
        BW__SEG_RULE(prev == NULL || ch->seq == prev->seq + prev->cap,
                     "a chunk's records are numbered after the last's");
        if (ch == w->m.c.tail) {
            at_tail = 1;
            BW__SEG_RULE(w->m.c.count <= ch->cap, "the tail's records [0, count) fit it");
            BW__SEG_RULE(ch == w->m.c.head ? w->m.c.first <= w->m.c.count : w->m.c.count != 0,
                         "the tail holds a record unless nothing is held");
        }
        if (ch == w->m.c.head && ch != w->m.c.tail)
            BW__SEG_RULE(w->m.c.first < ch->cap, "the head holds a record unless it is the tail");
    }
    BW__SEG_RULE(w->m.c.head == NULL || at_tail, "the tail follows the head");
}

/* The writer's fields: storage, the open piece, the records, lim. */
static void bw__check_fields(const bw_writer *w)
{
    BW__SEG_RULE(w->data != NULL || (w->cap == 0 && w->len == 0 && w->m.c.open == 0),
                 "no current block: no capacity, no open piece");
    BW__SEG_RULE(w->data == NULL || (w->m.c.open <= w->len && w->len <= w->cap),
                 "the open piece data[open, len) lies in the current block");
    BW__SEG_RULE(w->data == NULL || bw__cur(w)->data == w->data,
                 "the current block's trailer is at data + cap");
    BW__SEG_RULE(w->base <= bw_tell(w), "base is at or before tell");
    BW__SEG_RULE(w->err != BW_OK ? w->lim == w->len
                                 : w->lim <= w->cap &&
                                       ((w->flags & BW__LIMITED) || w->lim == w->cap),
                 "lim: cap (or the size limit's), len while an error is recorded");
}

BW__INTERNAL void bw__seg_check(const bw_writer *w)
{
    const bw__blk *prev = NULL, *cur = w->data != NULL ? bw__cur(w) : NULL, **blks;
    size_t nblk = 0, i, k, *counts, sum = 0;
    uint64_t at = w->base;
    bw__pchunk *ch = w->m.c.head;
    const bw__piece *pc;
    bw__check_fields(w);
    bw__check_chunks(w);
    bw__check_tree(w->m.c.blocks, &prev, NULL, &nblk);
    blks = (const bw__blk **)malloc((nblk + 1) * sizeof *blks);
    counts = (size_t *)calloc(nblk + 2, sizeof *counts);
    BW__SEG_RULE(blks != NULL && counts != NULL, "(the check's own memory)");
    prev = NULL;
    nblk = 0;
    bw__check_tree(w->m.c.blocks, &prev, blks, &nblk);
    for (i = w->m.c.first; (pc = bw__pc_at(w, &ch, &i)) != NULL; i++) {
        BW__SEG_RULE(bw__pc_aside(pc) == NULL || (w->flags & BW__DONES),
                     "a reference with a done is flagged (BW__DONES)");
        counts[bw__check_owner(blks, nblk, cur, ch, i)]++;
        BW__SEG_RULE(pc->end - pc->n == at, "each closed piece starts where the last ended");
        at = pc->end;
        sum += pc->n;
    }
    BW__SEG_RULE(at == w->pos + w->m.c.open,
                 "the open piece starts where the last closed piece ends (or base)");
    BW__SEG_RULE(bw_tell(w) - w->base == sum + (w->len - w->m.c.open),
                 "the held bytes are the closed pieces and the open piece");
    for (k = 0; k < nblk; k++) {
        BW__SEG_RULE(counts[k] == blks[k]->pieces, "a block's piece count");
        BW__SEG_RULE(w->m.c.head->lo <= bw__key(blks[k]) &&
                         (uintptr_t)blks[k] + BW__SEG_HDR <= w->m.c.head->hi,
                     "the tree's blocks lie in the head's range [lo, hi)");
    }
    BW__SEG_RULE(cur == NULL || counts[nblk] == cur->pieces, "the current block's piece count");
    for (k = 0; cur != NULL && k < nblk; k++)
        BW__SEG_RULE(blks[k] != cur, "the current block is not in the tree");
    free(blks);
    free(counts);
}

#else
/* ISO C wants something in every translation unit. */
typedef int bw__seg_check_unused;
#endif /* BW__SEG_CHECKS */
