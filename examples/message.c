/* SPDX-License-Identifier: MIT */
/* message.c - build a length-prefixed binary message and write it to a file
 * descriptor, with bufwriter's typed writes and its zero-copy span.
 *
 * The frame (integers big-endian unless the name says le):
 *
 *   u32be      length of everything after this field
 *   u8         format version (1)
 *   u16be      message type
 *   uvarint    sequence number (unsigned LEB128: 1..10 bytes)
 *   svarint    signed delta (zig-zag, then LEB128)
 *   f64le      a reading (IEEE-754 bits, little-endian)
 *   u8 + bytes the sensor name, copied in place through bw_get_span
 *   u16be + bytes  a note, formatted in place with snprintf
 *
 * Build it from the single header (copy single_include/bufwriter.h):
 *   cc -std=c11 -Isingle_include -DBUFWRITER_IMPLEMENTATION \
 *      examples/message.c -pthread -o message
 * or against the installed library:
 *   cc -std=c11 examples/message.c $(pkg-config --cflags --libs bufwriter) -o message
 *
 * Run:  ./message frame.bin     (or ./message > frame.bin to use fd 1)
 */
#define _POSIX_C_SOURCE 200809L /* open */

#include "bufwriter.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* Write a short string as u8 length + bytes, straight into the buffer:
 * get_span returns room for at least the hint, we fill it, advance commits
 * exactly what we wrote. No temporary, no second copy. */
static void put_name(bw_writer *w, const char *name)
{
    size_t n = strlen(name) > 255 ? 255 : strlen(name);
    unsigned char *span = (unsigned char *)bw_get_span(w, 1 + n, NULL);
    if (span == NULL) return;          /* error recorded: checked at the end */
    span[0] = (unsigned char)n;
    memcpy(span + 1, name, n);
    bw_advance(w, 1 + n);
}

/* Format a note in place: u16be length, then the text. snprintf writes into
 * the span (its NUL lands in the free space, past what we commit). */
static void put_note(bw_writer *w, const char *place, int celsius)
{
    uint64_t at = bw_tell(w);          /* a position: valid across growth */
    size_t avail;
    char *span;
    int n;

    bw_put_u16be(w, 0);                /* length placeholder */
    span = (char *)bw_get_span(w, 32, &avail);
    if (span == NULL) return;
    n = snprintf(span, avail, "%s: %d C", place, celsius);
    if (n >= 0 && (size_t)n >= avail) {  /* did not fit: ask for n + 1 */
        span = (char *)bw_get_span(w, (size_t)n + 1, &avail);
        if (span == NULL) return;
        n = snprintf(span, avail, "%s: %d C", place, celsius);
    }
    if (n < 0 || n > 0xffff) return;   /* leave an empty note */
    bw_advance(w, (size_t)n);
    bw_patch_u16be(w, at, (uint16_t)n); /* back-patch the placeholder */
}

int main(int argc, char **argv)
{
    bw_writer w = BW_WRITER_INIT;      /* empty, shared pool, no allocation */
    int fd = 1, rc;

    /* A run of writes with no checks: errors are sticky, checked once. */
    bw_put_u32be(&w, 0);               /* frame length, back-patched below */
    bw_put_u8(&w, 1);                  /* version */
    bw_put_u16be(&w, 0x0102);          /* type */
    bw_put_uvarint(&w, 300);           /* ac 02 */
    bw_put_svarint(&w, -3);            /* 05 */
    bw_put_f64le(&w, 21.5);
    put_name(&w, "greenhouse-7");
    put_note(&w, "north bed", 19);

    rc = bw_error(&w);                 /* one check for the whole run */
    if (rc != BW_OK) {
        fprintf(stderr, "message: %s\n", bw_strerror(rc));
        bw_release(&w);
        return 1;
    }
    /* Back-patch the frame length: positions stay valid across growth. */
    bw_patch_u32be(&w, 0, (uint32_t)(bw_tell(&w) - 4));

    if (argc > 1) {
        fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd < 0) {
            perror(argv[1]);
            bw_release(&w);
            return 1;
        }
    }
    /* writev until everything is out (short writes and EINTR handled);
     * what went out is consumed, so bw_len counts what is left. */
    fprintf(stderr, "message: %zu bytes\n", bw_len(&w));
    rc = bw_write_fd(&w, fd, NULL);
    if (rc == BW_EIO) /* errno kept with the writer: later calls may change errno */
        fprintf(stderr, "message: write: %s\n", strerror(bw_errno(&w)));
    else if (rc != BW_OK)
        fprintf(stderr, "message: %s\n", bw_strerror(rc));
    if (fd != 1 && close(fd) != 0) rc = -1;
    bw_release(&w);                    /* the block goes back to the pool */
    return rc == 0 ? 0 : 1;
}
